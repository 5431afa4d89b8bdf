//! Warden's integration tests: one binary, one module per concern, all
//! against real wasmtime and real components built from `plugins/` and
//! `tests/plugins/`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agent;
mod agent_config;
mod agent_context;
mod agent_http;
mod agent_progress;
mod agent_reasoning;
mod approvals;
mod audit;
mod cli;
mod containment;
mod egress;
mod exercised;
mod fan_out;
mod fixtures;
mod fs_tools;
mod guest_units;
mod layering;
mod limit_ceilings;
mod limits;
mod mcp;
mod mock_model;
mod plugin_refusals;
mod plugin_trust;
mod plugins;
mod policy_cli;
mod protected_metadata;
mod protected_paths;
mod providers;
mod search_tools;
mod smoke;
mod startup_layout;
mod support;
mod web_fetch;
mod web_tools;
