//! The capability difference between two versions of a plugin: what an
//! upgrade (or re-approval) would let it do that it could not before.

use serde::{Deserialize, Serialize};

use super::bom::Reach;
use crate::capability::FsNeed;
use crate::runtime::PluginMeta;

/// One capability that differs between the installed version and the new one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapChange {
    /// What changed: `declared filesystem`, `declared network`, `imports
    /// wasi:http`, `tool write_file`, …
    pub capability: String,
    /// Before, `-` for nothing.
    pub from: String,
    /// After, `-` for nothing.
    pub to: String,
    /// Whether the new version may do more.
    pub grows: bool,
}

fn fs_rank(need: FsNeed) -> u8 {
    match need {
        FsNeed::None => 0,
        FsNeed::Read => 1,
        FsNeed::ReadWrite => 2,
    }
}

/// Everything `new` may do that `old` could not, and the reverse.
pub fn diff(old: &PluginMeta, new: &PluginMeta) -> Vec<CapChange> {
    let mut out = Vec::new();
    let mut change = |capability: String, from: String, to: String, grows: bool| {
        out.push(CapChange {
            capability,
            from,
            to,
            grows,
        })
    };
    let (a, b) = (&old.manifest.capabilities, &new.manifest.capabilities);
    if a.filesystem != b.filesystem {
        change(
            "declared filesystem".into(),
            a.filesystem.as_str().into(),
            b.filesystem.as_str().into(),
            fs_rank(b.filesystem) > fs_rank(a.filesystem),
        );
    }
    for rule in b.network.iter().filter(|r| !a.network.contains(r)) {
        change(
            "declared network".into(),
            "-".into(),
            rule.to_string(),
            true,
        );
    }
    for rule in a.network.iter().filter(|r| !b.network.contains(r)) {
        change(
            "declared network".into(),
            rule.to_string(),
            "-".into(),
            false,
        );
    }
    let (ra, rb) = (Reach::of(&old.imports), Reach::of(&new.imports));
    let flags = [
        ("imports wasi:filesystem", ra.filesystem, rb.filesystem),
        ("imports wasi:http", ra.http, rb.http),
        ("imports wasi:sockets", ra.sockets, rb.sockets),
        (
            "imports wasi:cli/environment",
            ra.environment,
            rb.environment,
        ),
    ];
    for (what, before, after) in flags {
        if before != after {
            change(what.into(), yes_no(before), yes_no(after), after);
        }
    }
    for name in rb.unknown.iter().filter(|n| !ra.unknown.contains(n)) {
        change(format!("imports {name}"), "no".into(), "yes".into(), true);
    }
    for tool in &new.tools {
        let before = old.tools.iter().find(|t| t.name == tool.name);
        let access = |read_only: bool| if read_only { "read-only" } else { "writes" };
        match before {
            None => change(
                format!("tool {}", tool.name),
                "-".into(),
                access(tool.annotations.read_only).into(),
                !tool.annotations.read_only,
            ),
            Some(t) if t.annotations.read_only != tool.annotations.read_only => change(
                format!("tool {}", tool.name),
                access(t.annotations.read_only).into(),
                access(tool.annotations.read_only).into(),
                !tool.annotations.read_only,
            ),
            Some(_) => {}
        }
    }
    for tool in old
        .tools
        .iter()
        .filter(|t| !new.tools.iter().any(|n| n.name == t.name))
    {
        change(
            format!("tool {}", tool.name),
            "present".into(),
            "-".into(),
            false,
        );
    }
    out
}

fn yes_no(b: bool) -> String {
    if b { "yes" } else { "no" }.into()
}

/// Whether any change lets the new version do more.
pub fn grows(changes: &[CapChange]) -> bool {
    changes.iter().any(|c| c.grows)
}
