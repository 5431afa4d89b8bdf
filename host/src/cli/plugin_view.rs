//! How `warden plugin inspect` and `install` show a plugin: its capability
//! bill of materials as a table, its imports, its tools and their grants.
//! Every line is made inert for a terminal: names, versions, descriptions,
//! import names and network rules come from the component.

use crate::base::terminal_line;
use crate::capability::FsAccess;
use crate::plugin::{Bom, CapChange, Inspection, Severity, ToolGrant};

fn access(a: Option<FsAccess>) -> &'static str {
    match a {
        None => "none",
        Some(FsAccess::ReadOnly) => "read-only",
        Some(FsAccess::ReadWrite) => "read-write",
    }
}

fn yes(reach: bool, what: &str) -> String {
    if reach {
        format!("yes: {what}")
    } else {
        "no".to_string()
    }
}

/// The workspace access the tools get, grouped: `read-write (3 tools), read-only (1 tool)`.
fn fs_granted(tools: &[ToolGrant]) -> String {
    let mut groups: Vec<(Option<FsAccess>, usize)> = Vec::new();
    for t in tools {
        match groups.iter_mut().find(|(a, _)| *a == t.workspace) {
            Some((_, n)) => *n += 1,
            None => groups.push((t.workspace, 1)),
        }
    }
    match groups.as_slice() {
        [] => "none".to_string(),
        [(a, _)] => access(*a).to_string(),
        many => many
            .iter()
            .map(|(a, n)| {
                let s = if *n == 1 { "" } else { "s" };
                format!("{} ({n} tool{s})", access(*a))
            })
            .collect::<Vec<_>>()
            .join(", "),
    }
}

fn net_granted(tools: &[ToolGrant]) -> String {
    let mut rules: Vec<&str> = tools
        .iter()
        .flat_map(|t| t.network.iter().map(String::as_str))
        .collect();
    rules.sort_unstable();
    rules.dedup();
    if !rules.is_empty() {
        return rules.join(", ");
    }
    let cut = tools
        .iter()
        .flat_map(|t| &t.cuts)
        .find(|c| c.declared.starts_with("network"));
    match cut {
        Some(c) => c.granted.clone(),
        None => "none".to_string(),
    }
}

/// The bill of materials: declared, reachable from imports, granted.
pub fn print_bom(bom: &Bom) {
    let d = &bom.declared;
    let r = &bom.imports;
    let network = if d.network.is_empty() {
        "none".to_string()
    } else {
        let rules: Vec<String> = d.network.iter().map(ToString::to_string).collect();
        rules.join(", ")
    };
    let baseline = if r.baseline.is_empty() {
        "none".to_string()
    } else {
        r.baseline.join(", ")
    };
    let rows = [
        (
            "filesystem",
            d.filesystem.as_str().to_string(),
            yes(r.filesystem, "the directories it is granted"),
            fs_granted(&bom.granted),
        ),
        (
            "network",
            network,
            yes(r.http, "HTTP requests, through egress checks"),
            net_granted(&bom.granted),
        ),
        (
            "raw sockets",
            "-".into(),
            yes(r.sockets, "never linked, calls trap"),
            "never".into(),
        ),
        (
            "environment",
            "-".into(),
            yes(r.environment, "always empty"),
            "empty".into(),
        ),
        ("baseline", "-".into(), baseline, "yes".into()),
    ];
    outln!(
        "capabilities (granted under policy {}):",
        terminal_line(&bom.policy)
    );
    outln!(
        "  {:<12} {:<12} {:<44} GRANTED",
        "CAPABILITY",
        "DECLARED",
        "IMPORTS ALLOW (the most it could do)"
    );
    for (name, declared, could, granted) in rows {
        let (declared, granted) = (terminal_line(&declared), terminal_line(&granted));
        outln!("  {name:<12} {declared:<12} {could:<44} {granted}");
    }
    for u in &r.unknown {
        let u = terminal_line(u);
        outln!("  {:<12} {:<12} {:<44} never", "unknown", "-", u);
    }
    for f in &bom.findings {
        let tag = match f.severity {
            Severity::Warning => "warning",
            Severity::Note => "note",
        };
        outln!("  {tag}: {}", terminal_line(&f.message));
    }
}

/// How an upgrade's capabilities differ: `+` more than before, `-` less.
pub fn print_changes(changes: &[CapChange]) {
    if changes.is_empty() {
        return;
    }
    outln!("capability changes from the installed version:");
    for c in changes {
        let mark = if c.grows { '+' } else { '-' };
        let line = format!("{}: {} → {}", c.capability, c.from, c.to);
        outln!("  {mark} {}", terminal_line(&line));
    }
}

/// Everything `warden plugin inspect` shows, for humans.
pub fn print_inspection(ins: &Inspection) {
    let m = &ins.manifest;
    outln!("{} {}", terminal_line(&m.name), terminal_line(&m.version));
    if !m.description.is_empty() {
        outln!("  {}", terminal_line(&m.description));
    }
    outln!("sha256:       {}", ins.sha256);
    outln!("size:         {} bytes", ins.size);
    outln!("wit version:  warden:tool@{}", ins.wit_version);
    if let Some(why) = &ins.refused {
        outln!("REFUSED:      {}", terminal_line(why));
    }
    if let Some(bom) = &ins.capabilities {
        outln!();
        print_bom(bom);
    }
    outln!();
    outln!("imports:");
    for i in &ins.imports {
        outln!("  {:<44} {}", terminal_line(&i.name), i.class.describe());
    }
    outln!();
    outln!("tools:");
    let grants = ins.capabilities.as_ref().map(|b| b.granted.as_slice());
    outln!("  {:<18} {:<10} {:<7} GRANTED", "TOOL", "ACCESS", "POLICY");
    for t in &ins.tools {
        let kind = if t.annotations.read_only {
            "read-only"
        } else {
            "writes"
        };
        let g = grants
            .and_then(|g| g.iter().find(|g| g.tool == t.name.as_str()))
            .map(|g| {
                (
                    g.verdict.to_string(),
                    format!("workspace {}", access(g.workspace)),
                )
            })
            .unwrap_or_default();
        outln!(
            "  {:<18} {kind:<10} {:<7} {}",
            terminal_line(t.name.as_str()),
            g.0,
            terminal_line(&g.1)
        );
    }
}
