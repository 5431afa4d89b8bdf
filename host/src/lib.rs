//! Warden: an AI agent runtime whose every tool is a WebAssembly component,
//! run by wasmtime with only the capabilities its grant allows.
//!
//! Layers, each in its own module: [`protocol`] (pure types), [`runtime`]
//! (engine, components, limits), [`capability`] (grants to WASI),
//! [`plugin`] (manifests, built-ins, installation), [`policy`] (rules,
//! modes, grants, protected paths), [`approval`] (asking the user, session
//! grants), [`pipeline`] (one decided, validated, sandboxed call),
//! [`provider`] (model APIs), [`agent`] (the turn loop, sessions),
//! [`audit`] (the hash-chained log), [`config`] (the user's settings file),
//! [`cli`] (the `warden` command).

pub mod agent;
pub mod approval;
pub mod audit;
pub mod base;
pub mod capability;
pub mod cli;
pub mod config;
pub mod home;
pub mod pipeline;
pub mod plugin;
pub mod policy;
pub mod protocol;
pub mod provider;
pub mod runtime;

/// Paths of the guests built by the build script, for tests and benchmarks.
#[doc(hidden)]
pub mod test_plugins {
    include!(concat!(env!("OUT_DIR"), "/test_plugins.rs"));
}
