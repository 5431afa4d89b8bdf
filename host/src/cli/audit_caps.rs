//! `warden audit caps`: per tool, what its plugin declares, what its
//! imports allow, what calls were granted and what they actually used,
//! over the whole log — and the least-privilege grants that would have
//! sufficed. Tool and plugin names and hosts come from the log as calls
//! recorded them: each line is shown inert for a terminal.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::json;

use super::Exit;
use crate::audit::{AuditEvent, AuditRecord, CallAudit};
use crate::base::{terminal_line, terminal_text};
use crate::capability::DeclaredCapabilities;
use crate::capability::FileOp;
use crate::capability::egress::NetworkUse;
use crate::plugin::{Catalog, Reach};

/// One tool's capabilities over the log.
#[derive(Debug, Default, Serialize)]
struct ToolCaps {
    plugin: Option<String>,
    calls: u64,
    /// Calls that ran in the sandbox (the others say nothing about use).
    ran: u64,
    outcomes: BTreeMap<String, u64>,
    /// From the plugin as installed now; absent if it is gone.
    declared: Option<DeclaredCapabilities>,
    imports: Option<Reach>,
    /// Workspace access calls ran with: `none`, `read-only`, `read-write`.
    granted_workspace: BTreeSet<String>,
    granted_network: BTreeSet<String>,
    /// How files were used, and how many distinct paths.
    used_files: BTreeSet<FileOp>,
    used_paths: u64,
    /// Destinations reached, `host:port`.
    used_network: BTreeSet<String>,
    /// Whether calls ran with processes granted.
    granted_processes: bool,
    /// Commands run, and how many times each.
    used_commands: BTreeMap<String, u64>,
    /// Operations refused at the boundary.
    refused: u64,
    /// Grants never used.
    unused: Vec<String>,
    /// The least the calls seen needed.
    suggested_workspace: Option<&'static str>,
    suggested_network: Vec<String>,
}

/// Summarize `records`; `catalog` adds what plugins declare and import.
fn summarize(records: &[AuditRecord], catalog: Option<&Catalog>) -> BTreeMap<String, ToolCaps> {
    let mut tools: BTreeMap<String, ToolCaps> = BTreeMap::new();
    let mut paths: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for r in records {
        let AuditEvent::ToolCall(c) = &r.event else {
            continue;
        };
        let t = tools.entry(c.tool.clone()).or_default();
        add_call(t, c, paths.entry(c.tool.clone()).or_default());
    }
    for (name, t) in &mut tools {
        t.used_paths = paths.get(name).map_or(0, |p| p.len() as u64);
        if let Some((entry, _)) = catalog.and_then(|c| c.find_tool(name)) {
            t.declared = Some(entry.meta.manifest.capabilities.clone());
            t.imports = Some(Reach::of(&entry.meta.imports));
        }
        judge(t);
    }
    tools
}

fn add_call(t: &mut ToolCaps, c: &CallAudit, paths: &mut BTreeSet<String>) {
    t.calls += 1;
    *t.outcomes.entry(c.outcome.clone()).or_default() += 1;
    t.plugin.clone_from(&c.plugin);
    let Some(ex) = &c.exercised else {
        return;
    };
    t.ran += 1;
    if let Some(g) = &c.grant {
        let ws = g["filesystem"]["access"].as_str().unwrap_or("none");
        t.granted_workspace.insert(ws.to_string());
        for rule in g["network"]["rules"].as_array().into_iter().flatten() {
            // A plain rule is its URL pattern; one with methods, paths or
            // private networks is a table with the pattern under `url`.
            let url = rule.as_str().or_else(|| rule["url"].as_str());
            t.granted_network.extend(url.map(str::to_string));
        }
        t.granted_processes |= !g["process"].is_null();
    }
    for p in &ex.processes {
        *t.used_commands.entry(p.command.clone()).or_default() += 1;
    }
    for f in &ex.files {
        t.used_files.insert(f.op);
        paths.insert(f.path.clone());
        paths.extend(f.to.clone());
    }
    for n in &ex.network {
        t.used_network.insert(destination(n));
    }
    t.refused += ex.denials.len() as u64 + ex.denials_dropped;
    t.refused += ex.network_denials.len() as u64 + ex.network_denials_dropped;
}

/// Flag grants never used, and suggest the least that would do.
fn judge(t: &mut ToolCaps) {
    if t.ran == 0 {
        return;
    }
    let changes = t.used_files.iter().any(|op| op.changes());
    let granted_rw = t.granted_workspace.contains("read-write");
    let granted_fs = granted_rw || t.granted_workspace.contains("read-only");
    if granted_fs && t.used_files.is_empty() {
        t.unused
            .push("filesystem granted but never used".to_string());
    } else if granted_rw && !changes {
        t.unused
            .push("write granted but only reads seen".to_string());
    }
    if !t.granted_network.is_empty() && t.used_network.is_empty() {
        t.unused.push("network granted but never used".to_string());
    }
    if t.granted_processes && t.used_commands.is_empty() {
        t.unused
            .push("processes granted but no command run".to_string());
    }
    t.suggested_workspace = Some(if changes {
        "read-write"
    } else if t.used_files.is_empty() {
        "none"
    } else {
        "read-only"
    });
    t.suggested_network = t.used_network.iter().cloned().collect();
}

/// A request the egress layer recorded, as the rule that allows exactly its
/// destination: `scheme://host:port` (the recorded host already has an IPv6
/// address in brackets).
pub(super) fn destination(n: &NetworkUse) -> String {
    format!("{}://{}:{}", n.scheme.as_str(), n.host, n.port)
}

/// The `[grants.tool.*]` tables the calls seen needed, as policy TOML.
fn snippet(tools: &BTreeMap<String, ToolCaps>) -> String {
    let mut out = String::from("# Least privilege for the calls in the audit log:\n");
    for (name, t) in tools {
        let Some(ws) = t.suggested_workspace else {
            out.push_str(&format!("\n# {name}: no call ran, nothing to go by\n"));
            continue;
        };
        out.push_str(&format!("\n[grants.tool.{name}]\nworkspace = \"{ws}\"\n"));
        let rules: Vec<String> = t
            .suggested_network
            .iter()
            .map(|r| format!("\"{r}\""))
            .collect();
        out.push_str(&format!("network = [{}]\n", rules.join(", ")));
        if !t.used_commands.is_empty() {
            out.push_str(&format!("\n[grants.tool.{name}.process]\nenabled = true\n"));
        }
    }
    out
}

/// The commands a tool ran, most frequent first, at most ten named.
fn commands(used: &BTreeMap<String, u64>) -> String {
    const SHOWN: usize = 10;
    let mut by_count: Vec<(&String, &u64)> = used.iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    let mut named: Vec<String> = by_count
        .iter()
        .take(SHOWN)
        .map(|(c, n)| format!("`{c}` ×{n}"))
        .collect();
    if used.len() > SHOWN {
        named.push(format!("and {} more", used.len() - SHOWN));
    }
    named.join(", ")
}

fn plural(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn list<T: AsRef<str>>(items: impl IntoIterator<Item = T>) -> String {
    let v: Vec<String> = items.into_iter().map(|s| s.as_ref().to_string()).collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

pub fn caps(records: &[AuditRecord], catalog: Option<&Catalog>, json: bool) -> Exit {
    let tools = summarize(records, catalog);
    let policy = snippet(&tools);
    if json {
        outln!("{}", json!({ "tools": tools, "least_privilege": policy }));
        return Exit::Success;
    }
    if tools.is_empty() {
        outln!("no tool calls recorded yet");
        return Exit::Success;
    }
    let show = |line: String| outln!("{}", terminal_line(&line));
    for (name, t) in &tools {
        let outcomes = list(t.outcomes.iter().map(|(o, n)| format!("{n} {o}")));
        show(format!(
            "{name} (plugin {}): {}: {outcomes}",
            t.plugin.as_deref().unwrap_or("?"),
            plural(t.calls, "call")
        ));
        let declared = t
            .declared
            .as_ref()
            .map_or("? (plugin not installed)".into(), |d| {
                format!(
                    "filesystem {}, network {}",
                    d.filesystem.as_str(),
                    list(d.network.iter().map(ToString::to_string))
                )
            });
        show(format!("  declared:       {declared}"));
        if let Some(r) = &t.imports {
            let mut allow = Vec::new();
            for (on, what) in [
                (r.filesystem, "filesystem"),
                (r.http, "http"),
                (r.sockets, "raw sockets (never linked)"),
            ] {
                if on {
                    allow.push(what);
                }
            }
            show(format!("  imports allow:  {}", list(allow)));
        }
        show(format!(
            "  granted:        workspace {}, network {}",
            list(&t.granted_workspace),
            list(&t.granted_network)
        ));
        let files = list(t.used_files.iter().map(|op| op.as_str()));
        show(format!(
            "  used:           files {files} ({}), network {}",
            plural(t.used_paths, "path"),
            list(&t.used_network)
        ));
        if !t.used_commands.is_empty() {
            show(format!("  commands:       {}", commands(&t.used_commands)));
        }
        if t.refused > 0 {
            outln!("  refused:        {} operations at the boundary", t.refused);
        }
        for u in &t.unused {
            show(format!("  ! {u}"));
        }
    }
    outln!();
    out!("{}", terminal_text(&policy));
    Exit::Success
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(tool: &str, grant: serde_json::Value, exercised: serde_json::Value) -> AuditRecord {
        serde_json::from_value(json!({
            "seq": 1, "time": "2026-11-22T10:00:00.000000Z", "prev": "0",
            "event": {
                "type": "tool_call", "call_id": "c", "tool": tool, "plugin": "web",
                "args_sha256": "0", "arguments": {}, "outcome": "success",
                "duration_ms": 0, "output_bytes": 0,
                "grant": grant, "exercised": exercised,
            }
        }))
        .unwrap()
    }

    #[test]
    fn network_use_is_summarized_once_the_egress_layer_reports_it() {
        let net = json!({"filesystem": null, "network": {
            "rules": ["https://api.example.com:443", {"url": "https://b.example:443", "methods": ["GET"]}],
            "declared": ["https://*"],
        }});
        let records = [
            call(
                "fetch",
                net.clone(),
                json!({"network": [
                    {"scheme": "https", "host": "api.example.com", "port": 443, "method": "GET",
                     "path": "/", "bytes_out": 10, "bytes_in": 0},
                    {"scheme": "http", "host": "[::1]", "port": 8080, "method": "GET",
                     "path": "/", "bytes_out": 0, "bytes_in": 0},
                ]}),
            ),
            call("idle", net, json!({})),
        ];
        let tools = summarize(&records, None);
        let fetch = &tools["fetch"];
        assert_eq!(
            fetch.granted_network.iter().collect::<Vec<_>>(),
            ["https://api.example.com:443", "https://b.example:443"]
        );
        assert_eq!(
            fetch.suggested_network,
            ["http://[::1]:8080", "https://api.example.com:443"]
        );
        assert_eq!(fetch.suggested_workspace, Some("none"));
        assert!(fetch.unused.is_empty(), "{:?}", fetch.unused);
        assert_eq!(tools["idle"].unused, ["network granted but never used"]);
        assert!(
            snippet(&tools)
                .contains("network = [\"http://[::1]:8080\", \"https://api.example.com:443\"]"),
            "{}",
            snippet(&tools)
        );
    }

    #[test]
    fn commands_a_tool_ran_are_listed_and_unused_processes_flagged() {
        let grant = json!({"filesystem": {"access": "read-write"}, "process": {"mode": "full"}});
        let ran = |command: &str| {
            json!({"processes": [{
                "command": command, "cwd": "", "exit": {"type": "code", "code": 0},
                "duration_ms": 3, "stdout_bytes": 0, "stderr_bytes": 0,
                "confinement": {"mode": "full", "landlock_abi": 6, "namespaces": ["user"],
                    "seccomp": true, "process_bound": "cgroup", "protected_mounts": 0},
            }]})
        };
        let records = [
            call("shell", grant.clone(), ran("cargo test")),
            call("shell", grant.clone(), ran("cargo test")),
            call("shell", grant.clone(), ran("git status")),
            call("quiet", grant, json!({})),
        ];
        let tools = summarize(&records, None);
        let shell = &tools["shell"];
        assert_eq!(shell.used_commands["cargo test"], 2);
        assert_eq!(
            commands(&shell.used_commands),
            "`cargo test` ×2, `git status` ×1"
        );
        assert!(
            snippet(&tools).contains("[grants.tool.shell.process]\nenabled = true"),
            "{}",
            snippet(&tools)
        );
        assert!(
            tools["quiet"]
                .unused
                .contains(&"processes granted but no command run".to_string())
        );
    }
}
