//! Generated guest bindings for `warden:tool@0.2.2`, kept out of the public
//! surface: plugin authors see [`crate::Tool`], never these types. The
//! `wasi:` types are `wasip2`'s, so a descriptor the SDK opened can be
//! passed to `prefilter`.

wit_bindgen::generate!({
    path: "../../wit/0.2.2",
    world: "tool-plugin",
    with: {
        "wasi:io/error@0.2.12": wasip2::io::error,
        "wasi:io/poll@0.2.12": wasip2::io::poll,
        "wasi:io/streams@0.2.12": wasip2::io::streams,
        "wasi:clocks/wall-clock@0.2.12": wasip2::clocks::wall_clock,
        "wasi:filesystem/types@0.2.12": wasip2::filesystem::types,
    },
    export_macro_name: "__export_bindings",
    pub_export_macro: true,
    default_bindings_module: "warden_sdk::bindings",
    runtime_path: "warden_sdk::__private::wit_bindgen::rt",
});

pub use exports::warden::tool::plugin::Guest;
pub use warden::tool::host;
pub use warden::tool::interaction;
pub use warden::tool::prefilter;
pub use warden::tool::process;
pub use warden::tool::types::{
    Annotations, CallContext, ErrorKind, ToolError, ToolOutput, ToolSpec,
};

use crate::{Context, Registry};

impl<R: Registry> Guest for R {
    fn tools() -> Vec<ToolSpec> {
        R::tools().iter().map(|t| t.spec()).collect()
    }

    fn call(name: String, input: String, context: CallContext) -> Result<ToolOutput, ToolError> {
        let Some(tool) = R::tools().iter().find(|t| t.name() == name) else {
            return Err(ToolError {
                kind: ErrorKind::InvalidInput,
                message: format!("unknown tool: {name}"),
            });
        };
        let cx = Context::from_wit(context);
        let result = if host::is_worker() {
            tool.work(&input, &cx)
        } else {
            tool.call_json(&input, &cx)
        };
        match result {
            Ok(out) => Ok(ToolOutput {
                text: out.text,
                structured: out.structured.map(|v| v.to_string()),
            }),
            Err(e) => Err(e.into_wit()),
        }
    }
}
