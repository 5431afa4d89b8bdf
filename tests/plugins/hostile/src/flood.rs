//! A tool that floods the host with data through every channel that hands
//! guest data to the host: progress, log lines, an error message and
//! structured output. The host must keep only bounded copies.

use warden_sdk::serde_json::{Value, json};
use warden_sdk::{Context, LogLevel, Output, Tool, ToolError};

use crate::mib_to_bytes;

/// Sends `count` messages of `mib` MiB each through `channel`.
pub struct FloodHost;

#[derive(serde::Deserialize)]
pub struct FloodHostInput {
    channel: String,
    mib: usize,
    #[serde(default = "one")]
    count: u32,
}

fn one() -> u32 {
    1
}

impl Tool for FloodHost {
    type Input = FloodHostInput;
    const NAME: &'static str = "flood_host";
    const DESCRIPTION: &'static str = "Send `count` messages of `mib` MiB through `channel`: \
        progress, log, error (one error message) or structured (one structured result).";

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "channel": {"enum": ["progress", "log", "error", "structured"]},
                "mib": {"type": "integer", "minimum": 1},
                "count": {"type": "integer", "minimum": 1}
            },
            "required": ["channel", "mib"]
        })
    }

    fn call(&self, input: FloodHostInput, _cx: &Context) -> Result<Output, ToolError> {
        let big = "x".repeat(mib_to_bytes(input.mib)?);
        match input.channel.as_str() {
            "progress" => {
                for _ in 0..input.count {
                    warden_sdk::progress(&big, Some(0.5));
                }
                Ok(Output::text("flooded progress"))
            }
            "log" => {
                for _ in 0..input.count {
                    warden_sdk::log(LogLevel::Info, &big);
                }
                Ok(Output::text("flooded the log"))
            }
            "error" => Err(ToolError::io(big)),
            "structured" => {
                Ok(Output::text("flooded structured output").with_structured(json!(big)))
            }
            other => Err(ToolError::invalid_input(format!("no channel {other}"))),
        }
    }
}
