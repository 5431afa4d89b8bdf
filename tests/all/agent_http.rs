//! `warden run` against a model served over real HTTP on 127.0.0.1, in each
//! wire format: what the model is sent back, retries, keys, interrupts.

use std::time::Duration;

use serde_json::Value;
use warden::provider::WireFormat;

use crate::mock_model::{MockModel, Reply, Script};
use crate::support::{Sandbox, shared_home, warden};

pub(crate) const KEY: &str = "sk-test-0123456789abcdefSECRET";

pub(crate) fn provider_flag(format: WireFormat) -> &'static str {
    match format {
        WireFormat::OpenAiChat => "openai",
        WireFormat::OpenAiResponses => "openai-responses",
        WireFormat::Anthropic => "anthropic",
    }
}

pub(crate) fn key_var(format: WireFormat) -> &'static str {
    match format {
        WireFormat::OpenAiChat | WireFormat::OpenAiResponses => "OPENAI_API_KEY",
        WireFormat::Anthropic => "ANTHROPIC_API_KEY",
    }
}

#[test]
fn results_go_back_to_the_model_paired_in_order_and_the_key_goes_nowhere_else() {
    for format in [
        WireFormat::OpenAiChat,
        WireFormat::OpenAiResponses,
        WireFormat::Anthropic,
    ] {
        let sb = Sandbox::new();
        sb.write("a.txt", "alpha\n");
        let server = MockModel::start(format);
        server.push(Reply::status(429, r#"{"error":{"message":"slow down"}}"#).retry_after("0"));
        server.push(
            Script::tool_calls(&[
                ("call_w", "write_file", r#"{"path":"x.txt","content":"no"}"#),
                (
                    "call_r",
                    "read_file",
                    r#"{"path":"a.txt","rationale":"see a"}"#,
                ),
            ])
            .with_text("Looking."),
        );
        server.push(Script::text("Read it; writing was denied."));
        let out = warden(shared_home())
            .env(key_var(format), KEY)
            .args([
                "run",
                "--json",
                "--policy",
                "read-only",
                "--provider",
                provider_flag(format),
            ])
            .args([
                "--base-url",
                &server.base_url(),
                "--model",
                "test-model",
                "-w",
            ])
            .arg(sb.ws())
            .arg("read a.txt")
            .output()
            .unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(0), "{format:?}: {stderr}\n{stdout}");
        assert!(!sb.exists("x.txt"));

        let requests = server.requests();
        assert_eq!(requests.len(), 3, "{format:?}: one 429, then two turns");
        for r in &requests {
            let auth = r.header("authorization").or(r.header("x-api-key")).unwrap();
            assert!(auth.contains(KEY), "{format:?}");
            assert_eq!(r.body["model"], "test-model");
        }
        let tools = requests[1].body["tools"].to_string();
        assert!(
            tools.contains("read_file") && tools.contains("rationale"),
            "{tools}"
        );
        assert!(
            !tools.contains("\"write_file\""),
            "read-only offers no write tool: {tools}"
        );
        let second = requests[2].body.to_string();
        let w = second.find("call_w").unwrap();
        let r = second.rfind("call_r").unwrap();
        assert!(w < r, "results in call order");
        assert!(second.contains("denied: "), "{format:?}: {second}");
        assert!(
            second.contains("alpha"),
            "{format:?}: the read result went back"
        );

        let events: Vec<Value> = stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(events.iter().any(|e| e["type"] == "retrying"), "{format:?}");
        let id = events[0]["session_id"].as_str().unwrap();
        let session =
            std::fs::read_to_string(shared_home().join(format!("sessions/{id}.jsonl"))).unwrap();
        for (what, text) in [
            ("stdout", &stdout),
            ("stderr", &stderr),
            ("session", &session),
        ] {
            assert!(
                !text.contains("SECRET"),
                "{format:?}: the key leaked into {what}"
            );
        }
        let audit = std::fs::read_to_string(shared_home().join("audit/audit.jsonl")).unwrap();
        assert!(!audit.contains("SECRET"));
    }
}

#[test]
fn a_model_that_keeps_failing_ends_the_run_with_its_reason() {
    let sb = Sandbox::new();
    let server = MockModel::start(WireFormat::OpenAiChat);
    server.push(Reply::status(401, r#"{"error":{"message":"bad key"}}"#));
    let out = warden(shared_home())
        .env("OPENAI_API_KEY", KEY)
        .args(["run", "-p", "--base-url", &server.base_url(), "-w"])
        .arg(sb.ws())
        .arg("x")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("credentials"), "{stderr}");
    assert!(!stderr.contains("SECRET"));
}

#[test]
fn a_base_url_where_nothing_listens_fails_the_run_at_once_saying_so() {
    let sb = Sandbox::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base = format!("http://127.0.0.1:{port}/v1");
    let out = warden(shared_home())
        .env("OPENAI_API_KEY", KEY)
        .args(["run", "--json", "--base-url", &base, "-w"])
        .arg(sb.ws())
        .arg("x")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let events: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        !events.iter().any(|e| e["type"] == "retrying"),
        "no retries: {stdout}"
    );
    let finished = events.iter().find(|e| e["type"] == "finished").unwrap();
    assert_eq!(finished["reason"]["kind"], "provider_failed");
    let message = finished["reason"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("nothing is listening at {base}/chat/completions")),
        "{message}"
    );
}

#[test]
fn no_call_runs_after_an_interrupt_in_the_middle_of_a_stream() {
    let sb = Sandbox::new();
    let server = MockModel::start(WireFormat::OpenAiChat);
    server.push(
        Reply::turn(Script::tool_calls(&[
            ("early", "glob", r#"{"pattern":"*"}"#),
            (
                "late",
                "write_file",
                r#"{"path":"late.txt","content":"no"}"#,
            ),
        ]))
        .delay(Duration::from_millis(150)),
    );
    let policy = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        policy.path(),
        "name = \"t\"\ndescription = \"t\"\nmode = \"auto\"\n[grants.default]\nworkspace = \"read-write\"\nnetwork = []\n",
    )
    .unwrap();
    let mut child = warden(shared_home())
        .env("OPENAI_API_KEY", KEY)
        .args([
            "run",
            "--json",
            "--base-url",
            &server.base_url(),
            "--policy",
        ])
        .arg(policy.path())
        .arg("-w")
        .arg(sb.ws())
        .arg("x")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stdout));
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let ev: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let first_call = ev["type"] == "tool_call";
        seen.push(ev);
        if first_call {
            break;
        }
    }
    let pid = child.id().to_string();
    assert!(
        std::process::Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    for line in lines {
        seen.push(serde_json::from_str(&line.unwrap()).unwrap());
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(4), "{seen:#?}");
    assert!(!sb.exists("late.txt"));
    let calls: Vec<&str> = seen
        .iter()
        .filter(|e| e["type"] == "tool_call")
        .map(|e| e["call_id"].as_str().unwrap())
        .collect();
    let results: Vec<&str> = seen
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .map(|e| e["call_id"].as_str().unwrap())
        .collect();
    assert_eq!(calls, ["early"], "{seen:#?}");
    assert_eq!(results, ["early"], "every call that arrived has its result");
}
