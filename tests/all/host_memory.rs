//! The host keeps only bounded copies of what a guest hands it: a flood
//! through any host call leaves the host's peak RSS under a stated bound,
//! and what a call's report keeps stays small.
//!
//! Each flood runs in a process of its own (this test binary, run again for
//! just that test), which resets its peak RSS before the call and reads it
//! after, so other tests running in parallel cannot blur the figure.

use std::process::Command;

use serde_json::{Value, json};
use warden::base::Limits;
use warden::capability::Grant;
use warden::protocol::ToolOutcome;

use crate::support::*;

/// Set in the child process that runs one flood.
const CHILD: &str = "WARDEN_TEST_FLOOD_CHILD";

/// The guest's memory limit in these calls.
const GUEST_MEMORY: usize = 64 << 20;

/// How far the host's peak RSS may rise during one flood: the guest's own
/// memory (which lives in the host process), one message in flight as the
/// host lifts it, and slack for the allocator.
const PEAK_BOUND: usize = GUEST_MEMORY + 3 * FLOOD_MIB * (1 << 20) + (48 << 20);

/// Each message of a flood, in MiB; 200 of them would be 2.4 GiB if the
/// host kept them.
const FLOOD_MIB: usize = 12;

fn kib_of(field: &str) -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with(field))
        .unwrap_or_else(|| panic!("{field} in /proc/self/status"));
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Run `input` through the hostile plugin's `flood_host` in this process
/// and check the host's memory: the peak while it ran, and what stays.
fn measure(input: Value, check: impl Fn(&ToolOutcome)) {
    let plugin = hostile();
    let limits = Limits {
        memory_bytes: GUEST_MEMORY,
        ..Limits::default()
    };
    // Warm up: the first call maps the component and the instance machinery.
    call_plugin(&plugin, "ok", json!({}), &Grant::none(), &limits);
    let before = kib_of("VmRSS:") << 10;
    // "5" resets the peak (VmHWM) to the current RSS.
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    let report = call_plugin(&plugin, "flood_host", input, &Grant::none(), &limits);
    let peak = kib_of("VmHWM:") << 10;
    let kept: usize = report
        .progress
        .iter()
        .map(|p| p.message.capacity())
        .sum::<usize>()
        + report
            .logs
            .iter()
            .map(|l| l.message.capacity())
            .sum::<usize>();
    eprintln!(
        "rss before {} MiB, peak {} MiB (+{} MiB), kept in the report {kept} bytes",
        before >> 20,
        peak >> 20,
        peak.saturating_sub(before) >> 20
    );
    assert!(
        peak.saturating_sub(before) < PEAK_BOUND,
        "the host's peak RSS rose by {} MiB, more than the {} MiB bound",
        peak.saturating_sub(before) >> 20,
        PEAK_BOUND >> 20
    );
    assert!(
        kept <= 1 << 20,
        "the report keeps {kept} bytes of guest messages"
    );
    check(&report.outcome);
}

/// Run test `name` alone in a child process, which runs the flood.
fn in_own_process(name: &str) -> bool {
    if std::env::var_os(CHILD).is_some() {
        return false;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &format!("host_memory::{name}"),
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 passed"), "the child ran the test: {text}");
    true
}

#[test]
fn a_progress_flood_keeps_host_memory_bounded() {
    if in_own_process("a_progress_flood_keeps_host_memory_bounded") {
        return;
    }
    measure(
        json!({"channel": "progress", "mib": FLOOD_MIB, "count": 200}),
        |o| assert!(matches!(o, ToolOutcome::Success(_)), "{o:?}"),
    );
}

#[test]
fn a_log_flood_keeps_host_memory_bounded() {
    if in_own_process("a_log_flood_keeps_host_memory_bounded") {
        return;
    }
    measure(
        json!({"channel": "log", "mib": FLOOD_MIB, "count": 200}),
        |o| assert!(matches!(o, ToolOutcome::Success(_)), "{o:?}"),
    );
}

#[test]
fn a_huge_error_message_is_kept_as_a_bounded_copy() {
    if in_own_process("a_huge_error_message_is_kept_as_a_bounded_copy") {
        return;
    }
    measure(json!({"channel": "error", "mib": FLOOD_MIB}), |o| {
        let ToolOutcome::Error(e) = o else {
            panic!("{o:?}")
        };
        assert!(e.message.len() < 80 << 10, "{} bytes kept", e.message.len());
        assert!(e.message.capacity() < 80 << 10);
        assert!(e.message.ends_with("bytes cut]"), "the cut is marked");
    });
}

#[test]
fn huge_structured_output_is_dropped_unparsed() {
    if in_own_process("huge_structured_output_is_dropped_unparsed") {
        return;
    }
    measure(json!({"channel": "structured", "mib": FLOOD_MIB}), |o| {
        let ToolOutcome::Success(out) = o else {
            panic!("{o:?}")
        };
        assert!(out.structured.is_none());
        assert!(out.truncated);
        assert!(
            out.text.contains("structured output dropped by the host"),
            "{}",
            out.text
        );
    });
}
