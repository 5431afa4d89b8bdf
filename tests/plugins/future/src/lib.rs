//! A plugin built against `warden:tool@0.3.0`, which no host supports yet:
//! the host must refuse it with a clear message.

wit_bindgen::generate!({ path: "wit", world: "tool-plugin" });

use exports::warden::tool::plugin::Guest;
use warden::tool::types::{CallContext, ToolError, ToolOutput, ToolSpec};

struct Future;

impl Guest for Future {
    fn tools() -> Vec<ToolSpec> {
        Vec::new()
    }

    fn call(_name: String, _input: String, _context: CallContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput {
            text: String::new(),
            structured: None,
        })
    }
}

export!(Future);

#[used]
#[unsafe(link_section = "warden:manifest")]
static MANIFEST: [u8; 31] = *b"name = \"future\"\nversion = \"2\"\n\n";
