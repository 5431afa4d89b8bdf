//! Warden's integration tests: one binary, one module per concern, all
//! against real wasmtime and real components built from `plugins/` and
//! `tests/plugins/`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agent;
mod agent_http;
mod approvals;
mod audit;
mod cli;
mod containment;
mod exercised;
mod fixtures;
mod fs_tools;
mod guest_units;
mod limits;
mod mock_model;
mod plugin_trust;
mod plugins;
mod policy_cli;
mod protected_paths;
mod providers;
mod search_tools;
mod smoke;
mod support;
