//! Tools that push the WASI host-call limits: one huge host call, too many
//! open handles, an oversized request for random bytes, and progress
//! reports as fast as the guest can send them.

use warden_sdk::serde_json::{Value, json};
use warden_sdk::{Context, LogLevel, Output, Tool, ToolError};

use crate::{io_error, mib_to_bytes};

/// Sends one log message of `mib` MiB: a single host call with that much data.
pub struct BigLog;

#[derive(serde::Deserialize)]
pub struct BigLogInput {
    mib: usize,
}

impl Tool for BigLog {
    type Input = BigLogInput;
    const NAME: &'static str = "big_log";
    const DESCRIPTION: &'static str = "Log one message of `mib` MiB.";

    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"mib": {"type": "integer", "minimum": 0}}, "required": ["mib"]})
    }

    fn call(&self, input: BigLogInput, _cx: &Context) -> Result<Output, ToolError> {
        let message = "x".repeat(mib_to_bytes(input.mib)?);
        warden_sdk::log(LogLevel::Info, &message);
        Ok(Output::text("logged"))
    }
}

/// Opens `path` `count` times (for writing if asked) and keeps every handle open.
pub struct OpenMany;

#[derive(serde::Deserialize)]
pub struct OpenManyInput {
    path: String,
    count: usize,
    #[serde(default)]
    write: bool,
}

impl Tool for OpenMany {
    type Input = OpenManyInput;
    const NAME: &'static str = "open_many";
    const DESCRIPTION: &'static str = "Open an existing file `count` times, for writing (no truncation) when `write` is true, keeping every handle.";

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "count": {"type": "integer", "minimum": 0},
                "write": {"type": "boolean", "default": false}
            },
            "required": ["path", "count"]
        })
    }

    fn call(&self, input: OpenManyInput, _cx: &Context) -> Result<Output, ToolError> {
        let mut files = Vec::with_capacity(input.count);
        let mut options = std::fs::OpenOptions::new();
        options.read(!input.write).write(input.write);
        for _ in 0..input.count {
            files.push(
                options
                    .open(&input.path)
                    .map_err(|e| io_error("open", &input.path, &e))?,
            );
        }
        Ok(Output::text(format!("opened {}", files.len())))
    }
}

/// Asks the host for `len` random bytes in one `wasi:random` call.
pub struct RandomBytes;

#[derive(serde::Deserialize)]
pub struct RandomBytesInput {
    len: u64,
}

impl Tool for RandomBytes {
    type Input = RandomBytesInput;
    const NAME: &'static str = "random_bytes";
    const DESCRIPTION: &'static str =
        "Request `len` random bytes from wasi:random in a single call.";

    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"len": {"type": "integer", "minimum": 0}}, "required": ["len"]})
    }

    fn call(&self, input: RandomBytesInput, _cx: &Context) -> Result<Output, ToolError> {
        let bytes = crate::wasi_libc::random_bytes(input.len);
        Ok(Output::text(format!("got {} random bytes", bytes.len())))
    }
}

/// Reports progress `count` times, `interval_ms` apart, then waits `then_ms`.
pub struct Progress;

#[derive(serde::Deserialize)]
pub struct ProgressInput {
    count: u32,
    #[serde(default)]
    interval_ms: u64,
    #[serde(default)]
    then_ms: u64,
}

impl Tool for Progress {
    type Input = ProgressInput;
    const NAME: &'static str = "progress";
    const DESCRIPTION: &'static str = "Report progress `count` times (\"step i of count\", with the fraction), \
         `interval_ms` apart, then wait `then_ms` before returning.";

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "count": {"type": "integer", "minimum": 0},
                "interval_ms": {"type": "integer", "minimum": 0, "default": 0},
                "then_ms": {"type": "integer", "minimum": 0, "default": 0}
            },
            "required": ["count"]
        })
    }

    fn call(&self, input: ProgressInput, _cx: &Context) -> Result<Output, ToolError> {
        let pause = std::time::Duration::from_millis(input.interval_ms);
        for i in 1..=input.count {
            let fraction = i as f32 / input.count as f32;
            warden_sdk::progress(&format!("step {i} of {}", input.count), Some(fraction));
            if !pause.is_zero() && i < input.count {
                std::thread::sleep(pause);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(input.then_ms));
        Ok(Output::text(format!("reported {}", input.count)))
    }
}
