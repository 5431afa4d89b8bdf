//! Host bindings for `warden:tool@0.1.1`, generated from `wit/0.1.1`.
//!
//! 0.1.1 only adds to 0.1.0, and wasmtime matches `0.1.x` names as
//! semver-compatible, so these bindings run 0.1.0 components as well.

wasmtime::component::bindgen!({
    path: "../wit/0.1.1",
    world: "tool-plugin",
});

pub use self::exports::warden::tool::plugin as guest;
pub use self::warden::tool::host;
pub use self::warden::tool::types;
