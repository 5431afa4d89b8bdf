//! A plugin built against the frozen `warden:tool@0.1.0`, without the SDK:
//! a host that speaks a later 0.1.x must still load and run it.

wit_bindgen::generate!({ path: "../../../wit/0.1.0", world: "tool-plugin" });

use exports::warden::tool::plugin::Guest;
use warden::tool::host;
use warden::tool::types::{Annotations, CallContext, ToolError, ToolOutput, ToolSpec};

struct Legacy;

impl Guest for Legacy {
    fn tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "legacy_echo".into(),
            description: "Return the input text, and log it.".into(),
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
        host::log(host::LogLevel::Info, &input);
        Ok(ToolOutput {
            text: input,
            structured: None,
        })
    }
}

export!(Legacy);

#[used]
#[unsafe(link_section = "warden:manifest")]
static MANIFEST: [u8; 31] = *b"name = \"legacy\"\nversion = \"1\"\n\n";
