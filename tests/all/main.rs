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
mod audit_fail_closed;
mod cli;
mod containment;
mod egress;
mod exercised;
mod fan_out;
mod fixtures;
mod fs_tools;
mod guest_units;
mod limit_ceilings;
mod limits;
mod mock_model;
mod plugin_refusals;
mod plugin_trust;
mod plugins;
mod policy_cli;
mod private_state;
mod protected_metadata;
mod protected_paths;
mod providers;
mod search_tools;
mod secret_redaction;
mod smoke;
mod startup_layout;
mod support;
mod tool_call_cancel;
mod web_fetch;
mod web_tools;
