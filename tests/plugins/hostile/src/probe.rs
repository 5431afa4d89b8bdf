//! Tools that look around the sandbox: environment, network, and the
//! liveness check the host is expected to keep answering.

use std::net::TcpStream;

use warden_sdk::serde_json::{Value, json};
use warden_sdk::{Annotations, Context, Output, Tool, ToolError};

use crate::{NoInput, io_error, no_input_schema};

/// Answers "ok"; called after each hostile call to check the host still serves.
pub struct Ping;

impl Tool for Ping {
    type Input = NoInput;
    const NAME: &'static str = "ok";
    const DESCRIPTION: &'static str = "Return \"ok\".";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn input_schema(&self) -> Value {
        no_input_schema()
    }

    fn call(&self, _input: NoInput, _cx: &Context) -> Result<Output, ToolError> {
        Ok(Output::text("ok"))
    }
}

/// Reports the environment, arguments, working directory and a listing of `/`.
pub struct ReadEnv;

impl Tool for ReadEnv {
    type Input = NoInput;
    const NAME: &'static str = "read_env";
    const DESCRIPTION: &'static str = "Return, as JSON text, the environment variables ([name, value] pairs), \
         the arguments, the current directory (or \"error: ...\") and the entries of \"/\" \
         (or the error text).";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn input_schema(&self) -> Value {
        no_input_schema()
    }

    fn call(&self, _input: NoInput, _cx: &Context) -> Result<Output, ToolError> {
        let vars: Vec<(String, String)> = std::env::vars_os()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.to_string_lossy().into_owned(),
                )
            })
            .collect();
        let args: Vec<String> = std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let cwd = match std::env::current_dir() {
            Ok(dir) => dir.display().to_string(),
            Err(e) => format!("error: {e}"),
        };
        let root = match std::fs::read_dir("/") {
            Ok(entries) => Value::from(
                entries
                    .map(|entry| match entry {
                        Ok(entry) => entry.file_name().to_string_lossy().into_owned(),
                        Err(e) => format!("error: {e}"),
                    })
                    .collect::<Vec<_>>(),
            ),
            Err(e) => Value::from(e.to_string()),
        };
        let report = json!({
            "vars": vars,
            "args": args,
            "cwd": cwd,
            "preopens_root_listing": root,
        });
        Ok(Output::text(report.to_string()))
    }
}

/// Opens a TCP connection, which a plugin with no network grant must not get.
pub struct Connect;

#[derive(serde::Deserialize)]
pub struct ConnectInput {
    addr: String,
}

impl Tool for Connect {
    type Input = ConnectInput;
    const NAME: &'static str = "connect";
    const DESCRIPTION: &'static str =
        "Open a TCP connection to addr (host:port) with std::net::TcpStream.";
    const ANNOTATIONS: Annotations = Annotations {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: true,
    };

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"addr": {"type": "string", "description": "host:port"}},
            "required": ["addr"]
        })
    }

    fn call(&self, input: ConnectInput, _cx: &Context) -> Result<Output, ToolError> {
        let stream =
            TcpStream::connect(&input.addr).map_err(|e| io_error("connect", &input.addr, &e))?;
        let peer = match stream.peer_addr() {
            Ok(peer) => peer.to_string(),
            Err(e) => format!("unknown peer ({e})"),
        };
        Ok(Output::text(format!("connected to {peer}")))
    }
}

/// Panics; with the release profile's `panic = "abort"` this traps.
pub struct Panic;

impl Tool for Panic {
    type Input = NoInput;
    const NAME: &'static str = "panic";
    const DESCRIPTION: &'static str = "Panic with the message \"hostile panic\".";

    fn input_schema(&self) -> Value {
        no_input_schema()
    }

    fn call(&self, _input: NoInput, _cx: &Context) -> Result<Output, ToolError> {
        panic!("hostile panic")
    }
}

/// Increments a process-global counter and returns it: in a fresh instance
/// per call the answer is always 1.
pub struct Counter;

static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Tool for Counter {
    type Input = NoInput;
    const NAME: &'static str = "counter";
    const DESCRIPTION: &'static str = "Increment a global counter and return its value.";

    fn input_schema(&self) -> Value {
        no_input_schema()
    }

    fn call(&self, _input: NoInput, _cx: &Context) -> Result<Output, ToolError> {
        let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        Ok(Output::text(n.to_string()))
    }
}
