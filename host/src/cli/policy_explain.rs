//! What `warden policy explain` adds for commands: the decision of each
//! part of a `shell` command line, and the process grant.

use crate::capability::process::ConfinementMode;
use crate::policy::command::SHELL_TOOL;
use crate::policy::{DecidedBy, Decision, ProcessSpec};

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
        outln!(
            "{label:<9} {:<5} {} — {by}{reason}",
            part.verdict.as_str(),
            part.command.replace('\n', "⏎")
        );
    }
}

/// The process grant, in lines.
pub fn print_process(process: &ProcessSpec) {
    if !process.enabled {
        outln!("process:  none (no grant layer enables processes)");
        return;
    }
    outln!(
        "process:  enabled, confinement {}",
        process.confinement.as_str()
    );
    let toolchains = if process.toolchains.is_empty() {
        "none".to_string()
    } else {
        process
            .toolchains
            .iter()
            .map(|t| match &t.path {
                None => format!("{} (left out: $HOME is not set)", t.written),
                Some(p) if p.as_os_str() == t.written.as_str() => t.written.clone(),
                Some(p) => format!("{} ({})", t.written, p.display()),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    outln!("          toolchains (read-only) {toolchains}");
    let env = if process.env.is_empty() {
        "none".to_string()
    } else {
        process.env.join(", ")
    };
    outln!("          environment passed through: {env}");
    let l = &process.limits;
    let address_space = match l.address_space {
        Some(bytes) => format!("{} MiB", bytes >> 20),
        None => "unbounded".to_string(),
    };
    outln!(
        "          cpu {} s, file size {} MiB, open files {}, address space {address_space}, \
         processes {}, output {} bytes per stream",
        l.cpu_seconds,
        l.file_size >> 20,
        l.open_files,
        l.processes,
        l.output_bytes
    );
    match process.confinement {
        ConfinementMode::Full => {}
        ConfinementMode::UnboundedProcesses => outln!(
            "warning:  confinement unbounded-processes: where no pids cgroup or RLIMIT_NPROC can \
             bound the number of processes (a host running as root without a writable pids \
             cgroup), commands run without that bound"
        ),
    }
}
