//! `warden mcp` against clients that are not ours: the official Python
//! SDK (`client.py`, installed into `target/mcp-venv` on first use) over
//! stdio and Streamable HTTP, and raw JSON-RPC lines and HTTP requests
//! for the input no well-behaved client sends.

mod audit_room;
mod http;
mod raw;
mod stdio;
mod stdio_io;
mod try_it;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

/// The Python SDK release the tests drive the server with.
const MCP_SDK: &str = "mcp==2.3.0";

/// The virtual environment's python, with the SDK installed (once per
/// target directory; a failed install fails the test, it never skips it).
pub(crate) fn python() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    static SETUP: Mutex<()> = Mutex::new(());
    PYTHON
        .get_or_init(|| {
            let _one = SETUP.lock().unwrap_or_else(|e| e.into_inner());
            let venv = Path::new(env!("CARGO_TARGET_TMPDIR"))
                .parent()
                .unwrap()
                .join("mcp-venv");
            let python = venv.join("bin/python");
            let stamp = venv.join("installed");
            if std::fs::read_to_string(&stamp).ok().as_deref() == Some(MCP_SDK) {
                return python;
            }
            let run = |cmd: &mut Command, what: &str| {
                let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
                assert!(
                    out.status.success(),
                    "{what} failed (the MCP tests need python3 with venv and pip, and PyPI):\n{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            };
            run(
                Command::new("python3").args(["-m", "venv"]).arg(&venv),
                "python3 -m venv target/mcp-venv",
            );
            run(
                Command::new(&python).args(["-m", "pip", "install", "--quiet", MCP_SDK]),
                &format!("pip install {MCP_SDK}"),
            );
            std::fs::write(&stamp, MCP_SDK).unwrap();
            python
        })
        .clone()
}

/// Run `client.py SCENARIO CONFIG` and return what it printed last.
pub(crate) fn client(scenario: &str, config: Value) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("tests/all/mcp/client.py");
    let mut child = Command::new(python())
        .arg(script)
        .arg(scenario)
        .arg(config.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_for(&mut child, Duration::from_secs(120));
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        status.is_some_and(|s| s.success()),
        "client.py {scenario} failed ({status:?}):\n{stdout}\n{stderr}"
    );
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"))
}

/// Wait up to `limit` for `child`, killing it past that.
pub(crate) fn wait_for(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    None
}

/// A data directory with the hostile fixture installed, shared by the
/// tests that do not change its plugins.
pub(crate) fn home() -> &'static Path {
    static HOME: OnceLock<PathBuf> = OnceLock::new();
    HOME.get_or_init(|| home_with_installed("warden-mcp-home-", warden::test_plugins::HOSTILE))
}

/// The policy of these tests: everything runs, except writes under
/// `locked/` and every `http_fetch` (so it is not listed); protected paths
/// as shipped. With `ask`, calls that are not read-only ask first.
pub(crate) fn policy(dir: &Path, mode: &str) -> PathBuf {
    let path = dir.join(format!("mcp-{mode}.toml"));
    std::fs::write(
        &path,
        format!(
            r#"name = "mcp-test"
mode = "{mode}"

[grants.default]
workspace = "read-write"
network = []

[[rule]]
name = "no-locked"
tools = ["write_file"]
decision = "deny"
reason = "locked/ is read-only here"
[rule.args]
path = {{ glob = "locked/**" }}

[[rule]]
name = "offline"
tools = ["http_fetch"]
decision = "deny"
reason = "no network in these tests"
"#
        ),
    )
    .unwrap();
    path
}

/// A workspace with `hello.txt`, and the policy file in a directory of its own.
pub(crate) struct Setup {
    pub(crate) sandbox: Sandbox,
    pub(crate) policy: PathBuf,
    _policy_dir: tempfile::TempDir,
}

impl Setup {
    pub(crate) fn new(mode: &str) -> Setup {
        let sandbox = Sandbox::new();
        sandbox.write("hello.txt", "hello from the workspace\n");
        let dir = tempfile::tempdir().unwrap();
        let policy = policy(dir.path(), mode);
        Setup {
            sandbox,
            policy,
            _policy_dir: dir,
        }
    }

    /// The arguments of `warden mcp` for this setup, then `extra`.
    pub(crate) fn args(&self, extra: &[&str]) -> Vec<String> {
        let mut args = vec![
            "mcp".to_string(),
            "--policy".into(),
            self.policy.display().to_string(),
            "-w".into(),
            self.sandbox.ws().display().to_string(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    }

    /// The client configuration starting `warden mcp` over stdio.
    pub(crate) fn stdio(&self, home: &Path, extra: &[&str]) -> Value {
        json!({
            "stdio": {
                "command": env!("CARGO_BIN_EXE_warden"),
                "args": self.args(extra),
                "env": {"WARDEN_HOME": home.display().to_string()},
            }
        })
    }
}

/// `config` with the fields of `more` added.
pub(crate) fn with(mut config: Value, more: Value) -> Value {
    if let (Some(c), Some(m)) = (config.as_object_mut(), more.as_object()) {
        c.extend(m.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    config
}

/// The `tool_call` records of `tool` in `home`'s audit log.
pub(crate) fn records(home: &Path, tool: &str) -> Vec<Value> {
    audited_calls(home, tool).0
}

/// A `warden mcp --http` server on a free loopback port.
pub(crate) struct HttpServer {
    pub(crate) child: Child,
    pub(crate) url: String,
    pub(crate) token: String,
}

impl HttpServer {
    /// Start `warden mcp --http 127.0.0.1:0 ARGS` with `home`; the token
    /// is the one it generates and prints.
    pub(crate) fn start(home: &Path, args: Vec<String>) -> HttpServer {
        let mut cmd = warden(home);
        cmd.args(args)
            .args(["--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let (mut url, mut token) = (None, None);
        let mut line = String::new();
        while url.is_none() || token.is_none() {
            line.clear();
            assert!(
                stderr.read_line(&mut line).unwrap() > 0,
                "warden mcp --http ended before it said where it listens"
            );
            if let Some(u) = line.trim().strip_prefix("warden mcp: serving MCP at ") {
                url = Some(u.to_string());
            }
            if let Some(t) = line
                .trim()
                .strip_prefix("warden mcp: bearer token (shown once): ")
            {
                token = Some(t.to_string());
            }
        }
        // Keep draining stderr so the server never blocks on it.
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        HttpServer {
            child,
            url: url.unwrap(),
            token: token.unwrap(),
        }
    }

    /// The client configuration reaching this server.
    pub(crate) fn config(&self) -> Value {
        json!({"http": {"url": self.url, "token": self.token}})
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
