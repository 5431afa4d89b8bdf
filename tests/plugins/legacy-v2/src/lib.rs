//! A plugin built against the frozen `warden:tool@0.2.0`, without the SDK:
//! a host that speaks 0.2.1 must still run it, with 0.2.0's error kinds.

wit_bindgen::generate!({ path: "../../../wit/0.2.0", world: "tool-plugin" });

use exports::warden::tool::plugin::Guest;
use warden::tool::types::{Annotations, CallContext, ErrorKind, ToolError, ToolOutput, ToolSpec};

struct LegacyV2;

impl Guest for LegacyV2 {
    fn tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "legacy_v2_echo".into(),
            description:
                "Echo the input; an input holding `limit` fails with limit-exceeded (a 0.2.0 kind)."
                    .into(),
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
        if input.contains("limit") {
            return Err(ToolError {
                kind: ErrorKind::LimitExceeded,
                message: "over the limit".into(),
            });
        }
        Ok(ToolOutput {
            text: input,
            structured: None,
        })
    }
}

export!(LegacyV2);

#[used]
#[unsafe(link_section = "warden:manifest")]
static MANIFEST: [u8; 34] = *b"name = \"legacy-v2\"\nversion = \"1\"\n\n";
