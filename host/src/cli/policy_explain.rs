//! What `warden policy explain` adds for commands: the decision of each
//! part of a `shell` command line, and the process grant.

use crate::capability::{DeclaredCapabilities, FsNeed};
use crate::policy::command::SHELL_TOOL;
use crate::policy::{Confinement, DecidedBy, Decision, ProcessSpec};

/// What a built-in plugin that is not installed yet (the `shell` plugin)
/// is taken to declare: the workspace read-write, no network.
pub fn builtin_declared() -> DeclaredCapabilities {
    DeclaredCapabilities {
        filesystem: FsNeed::ReadWrite,
        network: Vec::new(),
        processes: true,
    }
}

/// Whether to show the process grant: for the `shell` tool, and for any
/// tool the grant lets start processes.
pub fn shows_process(tool: &str, process: &ProcessSpec) -> bool {
    tool == SHELL_TOOL || process.enabled
}

/// Each part's verdict, command, and the rule or mode that decided it.
pub fn print_parts(decision: &Decision) {
    for (i, part) in decision.parts.iter().enumerate() {
        let label = if i == 0 { "parts:" } else { "" };
        let by = match &part.by {
            DecidedBy::Rule { name, .. } => format!("rule {name}"),
            DecidedBy::Mode(mode) => format!("mode {mode}"),
        };
        let reason = part
            .reason
            .as_deref()
            .map(|r| format!(": {r}"))
            .unwrap_or_default();
        println!(
            "{label:<9} {:<5} {} — {by}{reason}",
            part.verdict.as_str(),
            part.command.replace('\n', "⏎")
        );
    }
}

/// The process grant, in lines.
pub fn print_process(process: &ProcessSpec) {
    if !process.enabled {
        println!("process:  none (no grant layer enables processes)");
        return;
    }
    println!(
        "process:  enabled, confinement {}",
        process.confinement.as_str()
    );
    let toolchains = if process.toolchains.is_empty() {
        "none".to_string()
    } else {
        process
            .toolchains
            .iter()
            .map(|t| {
                let path = t.path.display().to_string();
                if path == t.written {
                    path
                } else {
                    format!("{} ({path})", t.written)
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!("          toolchains (read-only) {toolchains}");
    let env = if process.env.is_empty() {
        "none".to_string()
    } else {
        process.env.join(", ")
    };
    println!("          environment passed through: {env}");
    let l = &process.limits;
    println!(
        "          cpu {} s, file size {} MiB, open files {}, address space {} MiB, \
         processes {}, output {} bytes",
        l.cpu_seconds,
        l.file_size_bytes >> 20,
        l.open_files,
        l.address_space_bytes >> 20,
        l.max_processes,
        l.output_bytes
    );
    match process.confinement {
        Confinement::Full => {}
        Confinement::BestEffort => println!(
            "warning:  confinement best-effort: processes run with the confinement layers the \
             kernel offers, and a missing layer is reported, not refused"
        ),
    }
}
