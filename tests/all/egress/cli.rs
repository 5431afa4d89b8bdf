//! The real `warden` binary with a policy file: a request reaches a
//! loopback server the policy names, with the credential from the
//! environment, and a private address is refused with a readable reason.
//! The audit log records both exactly: destination, address, bytes each
//! way and the credential's name, and the refusal with its reason.

use std::sync::OnceLock;

use serde_json::{Value, json};

use super::server::{Loopback, Seen, respond};
use super::*;

const SECRET: &str = "cli-s3cr3t-9876543210";

fn home() -> &'static Path {
    static HOME: OnceLock<std::path::PathBuf> = OnceLock::new();
    HOME.get_or_init(|| home_with_installed("warden-egress-home-", warden::test_plugins::NETPROBE))
}

fn echo_auth(req: &Seen, out: &mut dyn std::io::Write) {
    respond(
        out,
        200,
        &[],
        req.header("authorization").join(",").as_bytes(),
    );
}

#[test]
fn warden_tool_call_reaches_what_the_policy_names_and_no_more() {
    let server = Loopback::http(echo_auth);
    let port = server.port();
    let sb = Sandbox::new();
    let policy_file = sb.parent().join("egress.toml");
    std::fs::write(
        &policy_file,
        format!(
            "name = \"egress-cli\"\nmode = \"auto\"\n\
             [[credential]]\nname = \"svc\"\naudience = \"http://127.0.0.1:{port}\"\n\
             header = \"authorization\"\nprefix = \"Bearer \"\nenv = \"WARDEN_EGRESS_TEST_TOKEN\"\n\
             [grants.plugin.netprobe]\nnetwork = [\"http://127.0.0.1:{port}\", \"http://*\"]\n\
             credentials = [\"svc\"]\n"
        ),
    )
    .unwrap();
    let run = |input: Value, json_out: bool| {
        let mut cmd = warden(home());
        cmd.args(["tool", "call", "http_raw", "--policy"])
            .arg(&policy_file)
            .arg("-w")
            .arg(sb.ws())
            .args(["--input", &input.to_string()])
            .env("WARDEN_EGRESS_TEST_TOKEN", SECRET);
        if json_out {
            cmd.arg("--json");
        }
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            !stdout.contains(SECRET) && !stderr.contains(SECRET),
            "leak: {stdout}{stderr}"
        );
        (out.status.code(), stdout, stderr)
    };

    let mut post = get("http", &format!("127.0.0.1:{port}"), "/upload");
    post["method"] = json!("POST");
    post["body_bytes"] = json!(1000);
    let (code, stdout, stderr) = run(post, true);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["outcome"]["structured"]["status"], 200, "{doc}");
    assert_eq!(
        doc["outcome"]["structured"]["body"],
        "Bearer [REDACTED:svc]"
    );
    assert_eq!(doc["network"][0]["status"], 200);
    assert_eq!(doc["network"][0]["credential"], "svc");
    assert_eq!(
        server.requests()[0].header("authorization"),
        [format!("Bearer {SECRET}")]
    );

    let (code, stdout, stderr) = run(
        json!({"method": "GET", "scheme": "http", "authority": "10.0.0.1", "path": "/"}),
        false,
    );
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("DestinationIpProhibited"), "{stdout}");
    assert!(
        stdout.contains(
            "[host: network access to 10.0.0.1:80 denied: 10.0.0.1 is a private address]"
        ),
        "{stdout}"
    );
    assert_eq!(server.requests().len(), 1);
    assert_eq!(server.requests()[0].body.len(), 1000);

    let (calls, shown) = audited_calls(home(), "http_raw");
    assert_eq!(calls.len(), 2, "{shown}");
    let sent = &calls[0]["exercised"];
    let body_len = "Bearer ".len() + SECRET.len();
    assert_eq!(
        sent["network"],
        json!([{
            "scheme": "http", "host": "127.0.0.1", "port": port, "address": "127.0.0.1",
            "method": "POST", "path": "/upload", "status": 200,
            "bytes_out": 1000, "bytes_in": body_len, "credential": "svc", "error": null,
        }]),
        "{sent}"
    );
    let refused = &calls[1]["exercised"];
    assert!(refused.get("network").is_none(), "{refused}");
    let denial = &refused["network_denials"][0];
    assert_eq!(denial["destination"], "10.0.0.1:80", "{refused}");
    assert_eq!(denial["method"], "GET", "{refused}");
    assert_eq!(
        denial["message"],
        "network access to 10.0.0.1:80 denied: 10.0.0.1 is a private address"
    );
    assert_eq!(refused["network_denials"].as_array().unwrap().len(), 1);
    let log = std::fs::read_to_string(home().join("audit/audit.jsonl")).unwrap();
    assert!(
        !log.contains(SECRET),
        "the credential reached the audit log"
    );
}
