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
mod agent_stalls;
mod agent_watchdog;
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
mod hard_links;
mod host_memory;
mod layering;
mod limit_ceilings;
mod limits;
mod mock_model;
mod oversized;
mod plugin_refusals;
mod plugin_trust;
mod plugins;
mod policy_cli;
mod process_sandbox;
mod protected_metadata;
mod protected_paths;
mod providers;
mod search_tools;
mod shell_tool;
mod smoke;
mod startup_layout;
mod support;
mod terminal_output;
mod web_fetch;
mod web_tools;
mod write_quota;
