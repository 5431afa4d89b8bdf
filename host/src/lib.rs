//! Warden: an AI agent runtime whose every tool is a WebAssembly component,
//! run by wasmtime with only the capabilities its grant allows.
//!
//! The modules form layers. Each uses only the modules listed before it;
//! `tests/all/layering.rs` reads every `crate::` path and fails on one that
//! points later in this list, or on a cycle between the files of a module.
//!
//! 1. [`base`]: shared value types and infrastructure (cancellation,
//!    limits, what a guest reports, hashing, durable files).
//! 2. [`home`]: where Warden keeps its state.
//! 3. [`protocol`]: the tool protocol's pure types.
//! 4. [`capability`]: what a plugin declares, what a call is granted, and
//!    how a grant becomes WASI, egress and processes.
//! 5. [`overlay`]: a run's copy-on-write layer over the workspace:
//!    how it is mounted and what it changed (`warden run --review`,
//!    `warden review`).
//! 6. [`policy`]: policy files, decisions, and a call's grant (the
//!    declared needs intersected with the policy's).
//! 7. [`runtime`]: the engine, components, linkers, one call in a fresh
//!    instance, fan-out.
//! 8. [`plugin`]: built-ins, the catalog, installation, inspection.
//! 9. [`approval`]: asking the user; session grants.
//! 10. [`pipeline`]: one call end to end: validate, decide, approve, run.
//! 11. [`audit`]: the hash-chained log of every decision and call.
//! 12. [`provider`]: model APIs.
//! 13. [`agent`]: the turn loop, its scheduler and sessions.
//! 14. [`config`]: the user's settings file.
//! 15. [`mcp`]: the tools served over the Model Context Protocol.
//! 16. [`cli`]: the `warden` command.

pub mod agent;
pub mod approval;
pub mod audit;
pub mod base;
pub mod capability;
pub mod cli;
pub mod config;
pub mod home;
pub mod mcp;
pub mod overlay;
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
