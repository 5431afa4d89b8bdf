//! Unit tests of the policy engine: decisions, validation, shipped policies.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod command_rules;
mod commands;
mod interaction;
mod paths;
mod precedence;
mod process;
mod shipped;
mod validation;

use serde_json::{Value, json};

use super::{CallFacts, Decision, Policy};
use crate::protocol::Annotations;

pub(super) const READ_ONLY: Annotations = Annotations {
    read_only: true,
    destructive: false,
    idempotent: true,
    open_world: false,
};
pub(super) const WRITES: Annotations = Annotations {
    read_only: false,
    destructive: true,
    idempotent: false,
    open_world: false,
};
pub(super) const NETWORK: Annotations = Annotations {
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: true,
};

/// The built-in tools, as the catalog would report them.
pub(super) fn builtin_lookup(tool: &str) -> Option<(String, Annotations)> {
    let (plugin, a) = match tool {
        "read_file" | "list_dir" | "glob" => ("fs", READ_ONLY),
        "write_file" | "edit_file" => ("fs", WRITES),
        "grep" => ("search", READ_ONLY),
        "http_fetch" => ("web", NETWORK),
        _ => return None,
    };
    Some((plugin.to_string(), a))
}

pub(super) fn policy(text: &str) -> Policy {
    match Policy::parse(text, "test.toml") {
        Ok(p) => p,
        Err(e) => panic!("policy should parse: {e}"),
    }
}

pub(super) fn error(text: &str) -> String {
    match Policy::parse(text, "test.toml") {
        Ok(_) => panic!("policy should not parse:\n{text}"),
        Err(e) => e.to_string(),
    }
}

pub(super) fn decide(p: &Policy, tool: &str, annotations: Annotations, input: Value) -> Decision {
    p.decide(&CallFacts {
        tool,
        plugin: "fs",
        annotations,
        input: &input,
    })
}

pub(super) fn empty() -> Value {
    json!({})
}
