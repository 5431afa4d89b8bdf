//! What authority each import of a component stands for.

use serde::Serialize;

/// The kind of authority an import stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ImportClass {
    /// The Warden host interface (log, progress, is-cancelled).
    Host,
    /// Commands run in the host's process sandbox.
    Process,
    /// The plan, questions to the user and memory notes.
    Interaction,
    /// Files in the directories a grant preopens.
    Filesystem,
    /// HTTP requests through the host's egress layer.
    Http,
    /// Raw sockets and name lookups: never linked by Warden.
    Sockets,
    /// Environment variables and arguments: always empty in Warden.
    Environment,
    /// Clocks, randomness, streams, captured stdio, exit.
    Baseline,
    /// Anything else: not linked, traps if called.
    Unknown,
}

impl ImportClass {
    /// What this class of import lets a component do, for humans.
    pub fn describe(self) -> &'static str {
        match self {
            ImportClass::Host => "warden host interface: log, progress, cancellation, fan-out",
            ImportClass::Process => "can run commands (in the host's process sandbox)",
            ImportClass::Interaction => {
                "can show a plan, ask the user, and keep memory notes (as granted)"
            }
            ImportClass::Filesystem => "can touch the directories it is granted",
            ImportClass::Http => "can send HTTP requests (through host egress checks)",
            ImportClass::Sockets => "raw network sockets: never linked, calls trap",
            ImportClass::Environment => "environment and arguments: always empty",
            ImportClass::Baseline => "baseline: clocks, random, streams, captured stdio",
            ImportClass::Unknown => "unknown interface: not linked, calls trap",
        }
    }
}

/// Classify an import name such as `wasi:filesystem/types@0.2.6`.
pub fn classify_import(name: &str) -> ImportClass {
    let iface = name.split('@').next().unwrap_or(name);
    match iface {
        "warden:tool/host" | "warden:tool/types" => ImportClass::Host,
        "warden:tool/process" => ImportClass::Process,
        "warden:tool/interaction" => ImportClass::Interaction,
        "wasi:filesystem/types" | "wasi:filesystem/preopens" | "warden:tool/prefilter" => {
            ImportClass::Filesystem
        }
        "wasi:cli/environment" => ImportClass::Environment,
        i if i.starts_with("wasi:http/") => ImportClass::Http,
        i if i.starts_with("wasi:sockets/") => ImportClass::Sockets,
        i if i.starts_with("wasi:clocks/")
            || i.starts_with("wasi:random/")
            || i.starts_with("wasi:io/")
            || i.starts_with("wasi:cli/") =>
        {
            ImportClass::Baseline
        }
        _ => ImportClass::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_imports() {
        assert_eq!(
            classify_import("wasi:filesystem/types@0.2.6"),
            ImportClass::Filesystem
        );
        assert_eq!(
            classify_import("wasi:sockets/tcp@0.2.0"),
            ImportClass::Sockets
        );
        assert_eq!(
            classify_import("wasi:http/outgoing-handler@0.2.0"),
            ImportClass::Http
        );
        assert_eq!(
            classify_import("wasi:cli/stdout@0.2.6"),
            ImportClass::Baseline
        );
        assert_eq!(
            classify_import("wasi:cli/environment@0.2.6"),
            ImportClass::Environment
        );
        assert_eq!(classify_import("warden:tool/host@0.1.0"), ImportClass::Host);
        assert_eq!(
            classify_import("warden:tool/process@0.2.0"),
            ImportClass::Process
        );
        assert_eq!(
            classify_import("warden:tool/interaction@0.2.1"),
            ImportClass::Interaction
        );
        assert_eq!(classify_import("evil:thing/x"), ImportClass::Unknown);
    }
}
