//! Host bindings for `warden:tool@0.1.0`, generated from `wit/0.1.0`.

wasmtime::component::bindgen!({
    path: "../wit/0.1.0",
    world: "tool-plugin",
});

pub use exports::warden::tool::plugin as guest;
pub use warden::tool::host;
pub use warden::tool::types;
