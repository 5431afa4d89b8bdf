//! What `warden policy explain` adds for commands and network tools: the
//! decision of each part of a `shell` command line, the process grant, and
//! the destinations an approval may add to the network grant.

use crate::capability::egress::{NetPattern, NetRule};
use crate::capability::process::ConfinementMode;
use crate::policy::command::SHELL_TOOL;
use crate::policy::{DecidedBy, Decision, ProcessSpec, Verdict};

/// Whether to show the process grant: for the `shell` tool, and for any
/// tool the grant lets start processes.
pub fn shows_process(tool: &str, process: &ProcessSpec) -> bool {
    tool == SHELL_TOOL || process.enabled
}

/// The policy's `network_ask` rules an approval of this call could use: none
/// unless the policy asks, and only those reaching a destination the
/// plugin declares (the pipeline grants nothing else on approval).
pub fn approvable(verdict: Verdict, declared: &[NetPattern], ask: &[NetRule]) -> Vec<NetRule> {
    match verdict {
        Verdict::Ask => ask
            .iter()
            .filter(|r| declared.iter().any(|d| d.overlaps(&r.target)))
            .cloned()
            .collect(),
        Verdict::Allow | Verdict::Deny => Vec::new(),
    }
}

/// The network grant, then the destinations the user may approve beyond
/// it: `none; may be approved: https://*, http://*`.
pub fn network_line(network: &[NetRule], network_ask: &[NetRule]) -> String {
    let list = |rules: &[NetRule]| {
        rules
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut line = if network.is_empty() {
        "none".to_string()
    } else {
        list(network)
    };
    if !network_ask.is_empty() {
        line.push_str("; may be approved: ");
        line.push_str(&list(network_ask));
    }
    line
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
