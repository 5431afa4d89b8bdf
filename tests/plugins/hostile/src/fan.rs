//! Fan-out from a guest: each task tells a worker what to do (misbehave,
//! mostly), so tests can check that a call's limits, refusals and records
//! cover the workers it starts.

use std::hint::black_box;

use warden_sdk::serde_json::{Value, json};
use warden_sdk::{Context, LogLevel, Output, Tool, ToolError};

use crate::{io_error, mib_to_bytes};

/// Passes its tasks to `fan-out` and reports every result.
pub struct FanOut;

#[derive(serde::Deserialize)]
pub struct FanOutInput {
    /// One task per worker (see [`Task`]).
    tasks: Vec<Value>,
    /// MiB the calling instance allocates and holds while its workers run.
    #[serde(default)]
    parent_mib: usize,
    /// Report each result's text length instead of its text.
    #[serde(default)]
    lengths: bool,
}

/// What a worker does.
#[derive(serde::Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
enum Task {
    /// Return `text`.
    Echo { text: String },
    /// Log `message`, then return.
    Log { message: String },
    /// Read a workspace file and return its text.
    Read { path: String },
    /// Allocate and touch `mib` MiB, then return.
    Alloc { mib: usize },
    /// Spin until the host stops it.
    Spin,
    /// Try to fan out again.
    Nested,
    /// Say whether the host calls this instance a worker.
    IsWorker,
    /// Fail with a not-found error.
    Fail,
    /// Return structured output of about `bytes` bytes.
    Structured { bytes: usize },
    /// Return `bytes` bytes of text.
    Text { bytes: usize },
    /// Write into a workspace file as `write_flood` does.
    Flood(crate::disk_flood::FloodInput),
}

impl Tool for FanOut {
    type Input = FanOutInput;
    const NAME: &'static str = "fan_out";
    const DESCRIPTION: &'static str =
        "Run each task in a worker through the host's fan-out and report every result.";

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "tasks": {"type": "array", "items": {"type": "object"}},
                "parent_mib": {"type": "integer", "minimum": 0},
                "lengths": {"type": "boolean"}
            },
            "required": ["tasks"]
        })
    }

    fn call(&self, input: FanOutInput, _cx: &Context) -> Result<Output, ToolError> {
        let tasks: Vec<String> = input.tasks.iter().map(Value::to_string).collect();
        let parallelism = warden_sdk::parallelism();
        let held = touched(mib_to_bytes(input.parent_mib)?);
        let results = warden_sdk::fan_out(&tasks);
        black_box(&held);
        let results = match results {
            Err(e) => {
                return Ok(Output::text(format!("refused: {e}"))
                    .with_structured(json!({"refused": format!("{e:?}")})));
            }
            Ok(results) => results,
        };
        let shown: Vec<Value> = results
            .into_iter()
            .map(|r| match r {
                Ok(out) if input.lengths => json!({"ok_len": out.text.len()}),
                Ok(out) => json!({"ok": out.text, "structured": out.structured}),
                Err(e) => json!({"error": format!("{:?}", e.kind), "message": e.message}),
            })
            .collect();
        Ok(
            Output::text(format!("{} results", shown.len())).with_structured(json!({
                "parallelism": parallelism,
                "is_worker": warden_sdk::is_worker(),
                "results": shown,
            })),
        )
    }

    fn work(&self, task: &str, _cx: &Context) -> Result<Output, ToolError> {
        let task: Task = warden_sdk::serde_json::from_str(task)
            .map_err(|e| ToolError::invalid_input(format!("bad task: {e}")))?;
        match task {
            Task::Echo { text } => Ok(Output::text(text)),
            Task::Log { message } => {
                warden_sdk::log(LogLevel::Info, &message);
                Ok(Output::text("logged"))
            }
            Task::Read { path } => std::fs::read_to_string(format!("/workspace/{path}"))
                .map(Output::text)
                .map_err(|e| io_error("read", &path, &e)),
            Task::Alloc { mib } => {
                black_box(touched(mib_to_bytes(mib)?));
                Ok(Output::text(format!("allocated {mib} MiB")))
            }
            Task::Spin => {
                let mut n = 0u64;
                loop {
                    n = black_box(n.wrapping_add(1));
                }
            }
            Task::Nested => match warden_sdk::fan_out(&["{}".to_string()]) {
                Err(e) => Ok(Output::text(format!("{e:?}"))),
                Ok(_) => Ok(Output::text("nested fan-out ran")),
            },
            Task::IsWorker => Ok(Output::text(warden_sdk::is_worker().to_string())),
            Task::Fail => Err(ToolError::not_found("the worker found nothing")),
            Task::Text { bytes } => Ok(Output::text("x".repeat(bytes))),
            Task::Flood(flood) => match crate::disk_flood::flood(&flood)? {
                (done, None) => Ok(Output::text(format!("wrote {done} bytes"))),
                (done, Some(why)) => {
                    Err(ToolError::io(format!("stopped after {done} bytes: {why}")))
                }
            },
            Task::Structured { bytes } => {
                Ok(Output::text("big").with_structured(json!({"pad": "x".repeat(bytes)})))
            }
        }
    }
}

/// `bytes` of memory, every page written so it is really committed.
fn touched(bytes: usize) -> Vec<u8> {
    let mut block = vec![0u8; bytes];
    for byte in block.iter_mut().step_by(4096) {
        *byte = 1;
    }
    black_box(block)
}
