//! The real `warden` binary with a policy file: a request reaches a
//! loopback server the policy names, with the credential from the
//! environment, and a private address is refused with a readable reason.

use std::sync::OnceLock;

use serde_json::{Value, json};

use super::server::{Loopback, Seen, respond};
use super::*;

const SECRET: &str = "cli-s3cr3t-9876543210";

fn home() -> &'static Path {
    static HOME: OnceLock<std::path::PathBuf> = OnceLock::new();
    HOME.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("warden-egress-home-")
            .tempdir()
            .unwrap()
            .keep();
        let out = warden(&dir)
            .args(["plugin", "install", warden::test_plugins::NETPROBE])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir
    })
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

    let (code, stdout, stderr) = run(get("http", &format!("127.0.0.1:{port}"), "/"), true);
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
}
