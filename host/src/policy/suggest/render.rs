//! A [`Plan`] as policy TOML: a header saying where it came from, the
//! mode, grants, one allow rule per tool, the calls left out, and the
//! test cases.
//!
//! Invariant: every recorded string reaches the file through TOML quoting
//! or a JSON rendering on a comment line, so no recorded text can add a
//! key, a table or a line.

use std::collections::BTreeSet;
use std::net::IpAddr;

use serde_json::Value;

use super::SuggestRequest;
use super::plan::{Case, PATH_ARGUMENT, Plan, URL_ARGUMENT};
use crate::policy::command::SHELL_TOOL;

pub(super) fn render(req: &SuggestRequest, plan: &Plan) -> String {
    let mut out = String::new();
    let line = |out: &mut String, text: &str| {
        out.push_str(text);
        out.push('\n');
    };
    line(
        &mut out,
        &format!(
            "# Suggested by `warden policy suggest` from {}",
            comment(&req.source)
        ),
    );
    line(
        &mut out,
        &format!(
            "# on {} by warden {}. REVIEW IT before use: it allows what that run did,",
            comment(&req.generated_at),
            comment(&req.version)
        ),
    );
    out.push_str(
        "# generalised to directories and globs where it touched several files\n\
         # (docs/policies.md, \"Learning a policy from a run\").\n\
         #\n\
         # mode = \"allow-list\": only what a rule below allows runs; every other call,\n\
         # read-only tools and unused hosts and commands included, is denied.\n\
         # non_interactive = true: meant for unattended runs, nothing waits for an answer.\n\
         # Protected paths keep the defaults: never writable, whatever a glob says.\n",
    );
    line(&mut out, &format!("name = {}", quote(&req.name)));
    line(
        &mut out,
        &format!(
            "description = {}",
            quote(&format!("Suggested from {}: only what it did", req.source))
        ),
    );
    out.push_str("mode = \"allow-list\"\nnon_interactive = true\n\n");

    out.push_str("# Limits keep the runtime defaults (never tighter than what the run used).\n");
    for (tool, t) in &plan.tools {
        line(
            &mut out,
            &format!(
                "#   {}: longest call {} ms, most output {} bytes",
                comment(tool),
                t.max_duration_ms,
                t.max_output_bytes
            ),
        );
    }
    out.push_str(
        "# Workspace read-only unless a tool wrote; network for no tool but those\n\
         # that reached a host, and only that scheme, host and port.\n\
         [grants.default]\nworkspace = \"read-only\"\nnetwork = []\n",
    );
    for (tool, t) in &plan.tools {
        let mut table = String::new();
        if t.wrote {
            table.push_str("workspace = \"read-write\"\n");
        }
        if !t.network.is_empty() {
            let rules: Vec<String> = t.network.iter().map(|d| net_rule(d)).collect();
            table.push_str(&format!("network = [{}]\n", rules.join(", ")));
        }
        if !table.is_empty() {
            out.push_str(&format!("\n[grants.tool.{}]\n{table}", quote(tool)));
        }
        if tool == SHELL_TOOL {
            out.push_str(&format!(
                "\n[grants.tool.{}.process]\nenabled = true\ntoolchains = {}\nenv = {}\n",
                quote(tool),
                list(&t.toolchains),
                list(&t.process_env)
            ));
        }
    }

    for (tool, t) in &plan.tools {
        out.push_str(&format!(
            "\n[[rule]]\nname = {}\ntools = [{}]\n",
            quote(&format!("run-{tool}")),
            quote(tool)
        ));
        if let Some(plugin) = &t.plugin {
            line(&mut out, &format!("plugin = {}", quote(plugin)));
        }
        line(&mut out, "decision = \"allow\"");
        if tool == SHELL_TOOL {
            let prefixes: BTreeSet<&str> = t.commands.iter().map(|c| c.prefix.as_str()).collect();
            let env: BTreeSet<&String> = t.commands.iter().flat_map(|c| &c.env).collect();
            let writes: BTreeSet<&String> = t.commands.iter().flat_map(|c| &c.writes).collect();
            line(&mut out, &format!("commands = {}", list(prefixes)));
            if !env.is_empty() {
                line(&mut out, &format!("env = {}", list(env)));
            }
            if !writes.is_empty() {
                line(&mut out, &format!("writes = {}", list(writes)));
            }
            continue;
        }
        let globs = t.globs();
        let origins = t.origins.as_ref().filter(|o| !o.is_empty());
        if globs.is_empty() && origins.is_none() {
            continue;
        }
        out.push_str("[rule.args]\n");
        if !globs.is_empty() {
            line(
                &mut out,
                &format!("{PATH_ARGUMENT} = {{ glob = {} }}", list(&globs)),
            );
        }
        if let Some(origins) = origins {
            let alts: Vec<String> = origins.iter().map(|o| regex::escape(o)).collect();
            let re = format!("^({})([/?#]|$)", alts.join("|"));
            line(
                &mut out,
                &format!("{URL_ARGUMENT} = {{ regex = {} }}", quote(&re)),
            );
        }
    }

    if !plan.not_allowed.is_empty() {
        out.push_str("\n# Calls of the run this policy does NOT allow:\n");
        for n in &plan.not_allowed {
            line(
                &mut out,
                &format!(
                    "#   {} {}: {}",
                    comment(&n.tool),
                    comment(&n.arguments.to_string()),
                    comment(&n.reason)
                ),
            );
        }
    }

    out.push_str("\n# Every call the run made, allowed again.\n");
    for case in &plan.allow_tests {
        test(&mut out, case, "allow");
    }
    out.push_str("\n# Calls just outside what the run did.\n");
    for case in &plan.probes {
        test(&mut out, case, "deny");
    }
    out
}

fn test(out: &mut String, case: &Case, expect: &str) {
    let Some(input) = inline(&case.input) else {
        out.push_str(&format!(
            "# (no test for {}: its input has no TOML form)\n",
            comment(&case.name)
        ));
        return;
    };
    out.push_str(&format!(
        "\n[[test]]\nname = {}\ntool = {}\ninput = {input}\nexpect = \"{expect}\"\n",
        quote(&case.name),
        quote(&case.tool)
    ));
}

/// A JSON object as an inline TOML table (`None` if it holds a null).
fn inline(input: &Value) -> Option<String> {
    let value = toml::Value::try_from(input).ok()?;
    Some(value.to_string())
}

/// One egress rule: the destination, and for a private address literal
/// (a loopback test server, a LAN host) that address alone opened.
fn net_rule(destination: &str) -> String {
    let host = destination
        .split_once("://")
        .map(|(_, rest)| rest)
        .and_then(|rest| rest.rsplit_once(':'))
        .map(|(host, _)| host.trim_start_matches('[').trim_end_matches(']'));
    let private = host
        .and_then(|h| h.parse::<IpAddr>().ok())
        .filter(|ip| match ip {
            IpAddr::V4(v4) => v4.is_loopback() || v4.is_private() || v4.is_link_local(),
            IpAddr::V6(v6) => v6.is_loopback(),
        });
    match private {
        Some(ip) => {
            let bits = if ip.is_ipv4() { 32 } else { 128 };
            format!(
                "{{ url = {}, allow_private = [{}] }}",
                quote(destination),
                quote(&format!("{ip}/{bits}"))
            )
        }
        None => quote(destination),
    }
}

fn quote(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn list<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    let quoted: Vec<String> = items.into_iter().map(|s| quote(s.as_ref())).collect();
    format!("[{}]", quoted.join(", "))
}

/// Text for a comment line: one line, no control characters.
fn comment(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}
