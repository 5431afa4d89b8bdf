//! Host bindings for `warden:tool@0.1.0`, generated from `wit/0.1.0`.

wasmtime::component::bindgen!({
    path: "../wit/0.1.0",
    world: "tool-plugin",
});

pub use self::exports::warden::tool::plugin as guest;
pub use self::warden::tool::host;
pub use self::warden::tool::types;
