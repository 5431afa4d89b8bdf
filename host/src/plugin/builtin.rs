//! The plugins embedded in the `warden` binary, built from `plugins/` by
//! the build script, so Warden works standalone.

/// A plugin compiled into the binary.
#[derive(Debug, Clone, Copy)]
pub struct BuiltinPlugin {
    pub name: &'static str,
    pub wasm: &'static [u8],
    /// sha256 of `wasm`, computed at build time.
    pub sha256: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/builtin.rs"));
