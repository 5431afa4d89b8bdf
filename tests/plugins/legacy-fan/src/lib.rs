//! A plugin built against the frozen `warden:tool@0.1.1`, without the SDK,
//! that fans out: a host that speaks 0.2 must still run it, workers and
//! errors in 0.1.1's types included.

wit_bindgen::generate!({ path: "../../../wit/0.1.1", world: "tool-plugin" });

use exports::warden::tool::plugin::Guest;
use warden::tool::host;
use warden::tool::types::{Annotations, CallContext, ErrorKind, ToolError, ToolOutput, ToolSpec};

struct LegacyFan;

impl Guest for LegacyFan {
    fn tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "legacy_fan".into(),
            description: "Run each word of `text` in a worker: a word that is `fail` fails, others come back upper-cased.".into(),
            input_schema:
                r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#
                    .into(),
            annotations: Annotations {
                read_only: true,
                destructive: false,
                idempotent: true,
                open_world: false,
            },
        }]
    }

    fn call(_name: String, input: String, _context: CallContext) -> Result<ToolOutput, ToolError> {
        if host::is_worker() {
            return if input == "fail" {
                Err(ToolError {
                    kind: ErrorKind::NotFound,
                    message: "worker failed".into(),
                })
            } else {
                Ok(ToolOutput {
                    text: input.to_uppercase(),
                    structured: None,
                })
            };
        }
        // The input is `{"text":"..."}`; take the words between the quotes.
        let text = input
            .split("\"text\":\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or_default();
        let tasks: Vec<String> = text.split(' ').map(str::to_string).collect();
        let results = host::fan_out(&tasks).map_err(|e| ToolError {
            kind: ErrorKind::Internal,
            message: format!("fan-out refused: {e:?}"),
        })?;
        let parts: Vec<String> = results
            .into_iter()
            .map(|r| match r {
                Ok(out) => out.text,
                Err(e) => format!("{:?}:{}", e.kind, e.message),
            })
            .collect();
        Ok(ToolOutput {
            text: parts.join(" "),
            structured: None,
        })
    }
}

export!(LegacyFan);

#[used]
#[unsafe(link_section = "warden:manifest")]
static MANIFEST: [u8; 35] = *b"name = \"legacy-fan\"\nversion = \"1\"\n\n";
