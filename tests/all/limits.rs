//! Hostile guests against per-call limits: each ends cleanly with a typed
//! outcome, and the next ordinary call still succeeds.

use std::time::{Duration, Instant};

use serde_json::json;
use warden::base::{CancelToken, Limits};
use warden::capability::Grant;
use warden::protocol::{ErrorKind, ToolOutcome};
use warden::runtime::{CallReport, CallRequest, LoadedPlugin};

use crate::support::*;

fn hostile_call(tool: &str, input: serde_json::Value, limits: &Limits) -> CallReport {
    call_plugin(&hostile(), tool, input, &Grant::none(), limits)
}

/// The host keeps serving: an ordinary call right after succeeds.
#[track_caller]
fn assert_still_serving() {
    assert_still_serving_on(&hostile());
}

/// [`assert_still_serving`], for `p` (a hostile fixture's runtime).
#[track_caller]
fn assert_still_serving_on(p: &LoadedPlugin) {
    let r = call_plugin(p, "ok", json!({}), &Grant::none(), &Limits::default());
    assert_eq!(
        r.outcome,
        ToolOutcome::Success(warden::protocol::ToolOutput {
            text: "ok".into(),
            structured: None,
            truncated: false
        })
    );
}

#[test]
fn infinite_loop_stops_at_the_deadline() {
    let _quiet = exclusive();
    assert_spin_stops_at_the_deadline(&hostile());
}

/// `p`'s infinite loop ends with a deadline error within the deadline plus
/// 100 ms, and the next call succeeds.
#[track_caller]
fn assert_spin_stops_at_the_deadline(p: &LoadedPlugin) {
    let limits = Limits {
        deadline: Duration::from_millis(300),
        ..Limits::default()
    };
    let _ = call_plugin(p, "ok", json!({}), &Grant::none(), &limits); // warm the instance_pre
    let started = Instant::now();
    let r = call_plugin(p, "spin", json!({}), &Grant::none(), &limits);
    let elapsed = started.elapsed();
    let msg = outcome_err(&r.outcome, ErrorKind::Timeout);
    assert!(msg.contains("300ms deadline"), "{msg}");
    assert!(
        elapsed >= Duration::from_millis(300),
        "stopped early: {elapsed:?}"
    );
    assert!(
        elapsed <= Duration::from_millis(400),
        "deadline overshot by more than 100 ms: {elapsed:?}"
    );
    assert_still_serving_on(p);
}

#[test]
fn memory_bomb_ends_with_a_memory_error() {
    assert_memory_bomb_is_stopped(&hostile());
}

/// `p`'s memory bomb ends with a memory error, and the next call succeeds.
#[track_caller]
fn assert_memory_bomb_is_stopped(p: &LoadedPlugin) {
    let limits = Limits {
        memory_bytes: 64 << 20,
        ..Limits::default()
    };
    let r = call_plugin(
        p,
        "alloc_bomb",
        json!({"chunk_mib": 4}),
        &Grant::none(),
        &limits,
    );
    let msg = outcome_err(&r.outcome, ErrorKind::MemoryLimit);
    assert!(msg.contains("64 MiB"), "{msg}");
    assert_still_serving_on(p);
}

#[test]
fn stdout_flood_is_capped() {
    assert_stdout_flood_is_capped(&hostile());
}

/// `p`'s flood of stdout is capped, and the next call succeeds.
#[track_caller]
fn assert_stdout_flood_is_capped(p: &LoadedPlugin) {
    let limits = Limits {
        stdio_bytes: 4096,
        ..Limits::default()
    };
    let r = call_plugin(
        p,
        "flood_stdout",
        json!({"mib": 8}),
        &Grant::none(),
        &limits,
    );
    assert!(
        matches!(&r.outcome, ToolOutcome::Success(o) if o.text == "done"),
        "{:?}",
        r.outcome
    );
    assert_eq!(r.stdout.len(), 4096);
    assert_eq!(r.stdout_dropped, (8u64 << 20) - 4096);
    assert_still_serving_on(p);
}

#[test]
fn output_flood_is_truncated_with_a_marker() {
    let limits = Limits {
        output_bytes: 1000,
        ..Limits::default()
    };
    let r = hostile_call("flood_output", json!({"mib": 4}), &limits);
    let ToolOutcome::Success(out) = &r.outcome else {
        panic!("{:?}", r.outcome)
    };
    assert!(out.truncated);
    let (kept, marker) = out.text.split_at(1000);
    assert!(!kept.contains("[output truncated"));
    assert_eq!(
        marker,
        format!(
            "\n[output truncated by the host: {} bytes exceeded the 1000-byte cap]",
            4 << 20
        )
    );
    assert_still_serving();
}

#[test]
fn log_flood_is_capped() {
    let limits = Limits {
        log_lines: 50,
        log_bytes: 1 << 20,
        ..Limits::default()
    };
    let r = hostile_call("flood_log", json!({"count": 5000}), &limits);
    assert!(
        matches!(r.outcome, ToolOutcome::Success(_)),
        "{:?}",
        r.outcome
    );
    assert_eq!(r.logs.len(), 50);
    assert_eq!(r.logs_dropped, 4950);

    let limits = Limits {
        log_lines: 10_000,
        log_bytes: 8 << 10,
        ..Limits::default()
    };
    let r = hostile_call("flood_log", json!({"count": 100}), &limits);
    assert!(r.logs.iter().map(|l| l.message.len()).sum::<usize>() <= 8 << 10);
    assert!(r.logs_dropped > 0);
    assert_still_serving();
}

#[test]
fn environment_and_arguments_are_empty() {
    let sb = Sandbox::new();
    let grant = ws_grant(&sb.ws(), warden::capability::FsAccess::ReadOnly);
    let r = call_plugin(
        &hostile(),
        "read_env",
        json!({}),
        &grant,
        &Limits::default(),
    );
    let ToolOutcome::Success(out) = &r.outcome else {
        panic!("{:?}", r.outcome)
    };
    let v: serde_json::Value = serde_json::from_str(&out.text).unwrap();
    assert_eq!(v["vars"], json!([]), "{v}");
    assert_eq!(v["args"], json!([]), "{v}");
    assert_still_serving();
}

#[test]
fn a_panic_is_a_crash_with_the_panic_message() {
    let r = hostile_call("panic", json!({}), &Limits::default());
    let msg = outcome_err(&r.outcome, ErrorKind::Crashed);
    assert!(
        msg.starts_with("the plugin panicked: hostile panic ("),
        "{msg}"
    );
    assert_still_serving();
}

#[test]
fn every_call_gets_a_fresh_instance() {
    for _ in 0..3 {
        let r = hostile_call("counter", json!({}), &Limits::default());
        assert!(
            matches!(&r.outcome, ToolOutcome::Success(o) if o.text == "1"),
            "{:?}",
            r.outcome
        );
    }
}

#[test]
fn cancellation_interrupts_a_running_guest() {
    let _quiet = exclusive();
    let p = hostile();
    let cancel = CancelToken::new();
    let trigger = cancel.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        trigger.cancel();
    });
    let started = Instant::now();
    let input = json!({}).to_string();
    let r = p.call(CallRequest {
        call_id: "c".into(),
        tool: "spin",
        input: &input,
        grant: &Grant::none(),
        limits: &Limits::default(),
        cancel,
        progress: None,
    });
    canceller.join().unwrap();
    assert_eq!(r.outcome, ToolOutcome::Cancelled);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_still_serving();
}

#[test]
fn a_guest_asleep_in_the_host_stops_soon_after_cancel() {
    // Epoch checks never see a guest blocked in a host wait; the bounded
    // `wasi:io` must end the wait itself, a grace period after the cancel,
    // long before the 30 s deadline.
    let _quiet = exclusive();
    let cancel = CancelToken::new();
    let trigger = cancel.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        trigger.cancel();
        Instant::now()
    });
    let input = json!({"ms": 60_000}).to_string();
    let r = hostile().call(CallRequest {
        call_id: "c".into(),
        tool: "sleep_ms",
        input: &input,
        grant: &Grant::none(),
        limits: &Limits {
            deadline: Duration::from_secs(30),
            ..Limits::default()
        },
        cancel,
        progress: None,
    });
    let ended = Instant::now();
    let cancelled_at = canceller.join().unwrap();
    assert_eq!(r.outcome, ToolOutcome::Cancelled);
    let after = ended - cancelled_at;
    assert!(
        after >= warden::base::CANCEL_GRACE,
        "the guest gets its grace to return on its own: {after:?}"
    );
    assert!(after < Duration::from_secs(5), "waited {after:?}");
    assert_still_serving();
}

#[test]
fn a_call_cancelled_before_it_starts_never_runs() {
    let cancel = CancelToken::new();
    cancel.cancel();
    let input = json!({}).to_string();
    let r = hostile().call(CallRequest {
        call_id: "c".into(),
        tool: "counter",
        input: &input,
        grant: &Grant::none(),
        limits: &Limits::default(),
        cancel,
        progress: None,
    });
    assert_eq!(r.outcome, ToolOutcome::Cancelled);
    assert!(r.logs.is_empty() && r.stdout.is_empty());
}

#[test]
fn one_oversized_host_call_runs_out_of_host_call_fuel() {
    let limits = Limits {
        hostcall_fuel: 1 << 20,
        log_bytes: 64 << 20,
        ..Limits::default()
    };
    let r = hostile_call("big_log", json!({"mib": 2}), &limits);
    let msg = outcome_err(&r.outcome, ErrorKind::LimitExceeded);
    assert!(
        msg.contains("more than 1048576 bytes to the host in a single call"),
        "{msg}"
    );
    assert!(r.logs.is_empty());
    // Under the fuel, the same call goes through.
    let r = hostile_call("big_log", json!({"mib": 0}), &limits);
    assert!(
        matches!(r.outcome, ToolOutcome::Success(_)),
        "{:?}",
        r.outcome
    );
    assert_still_serving();
}

#[test]
fn too_many_open_handles_hit_the_resource_table_cap() {
    let sb = Sandbox::new();
    sb.write("a.txt", "a");
    let grant = ws_grant(&sb.ws(), warden::capability::FsAccess::ReadOnly);
    let limits = Limits {
        resource_handles: 64,
        ..Limits::default()
    };
    let r = call_plugin(
        &hostile(),
        "open_many",
        json!({"path": "/workspace/a.txt", "count": 200}),
        &grant,
        &limits,
    );
    let msg = outcome_err(&r.outcome, ErrorKind::LimitExceeded);
    assert!(msg.contains("more than 64 open handles"), "{msg}");
    let r = call_plugin(
        &hostile(),
        "open_many",
        json!({"path": "/workspace/a.txt", "count": 20}),
        &grant,
        &limits,
    );
    assert!(
        matches!(&r.outcome, ToolOutcome::Success(o) if o.text == "opened 20"),
        "{:?}",
        r.outcome
    );
    assert_still_serving();
}

#[test]
fn random_bytes_per_call_are_capped() {
    let limits = Limits {
        random_bytes: 1024,
        ..Limits::default()
    };
    let r = hostile_call("random_bytes", json!({"len": 1_000_000}), &limits);
    let msg = outcome_err(&r.outcome, ErrorKind::LimitExceeded);
    assert!(msg.contains("more than 1024 random bytes"), "{msg}");
    let r = hostile_call("random_bytes", json!({"len": 512}), &limits);
    assert!(
        matches!(&r.outcome, ToolOutcome::Success(o) if o.text == "got 512 random bytes"),
        "{:?}",
        r.outcome
    );
    assert_still_serving();
}

#[test]
fn a_guest_blocked_in_a_host_sleep_still_stops_at_the_deadline() {
    let _quiet = exclusive();
    let limits = Limits {
        deadline: Duration::from_millis(300),
        ..Limits::default()
    };
    let _ = hostile_call("ok", json!({}), &limits);
    let started = Instant::now();
    let r = hostile_call("sleep_ms", json!({"ms": 60_000}), &limits);
    let elapsed = started.elapsed();
    outcome_err(&r.outcome, ErrorKind::Timeout);
    assert!(
        elapsed <= Duration::from_millis(400),
        "slept past the deadline: {elapsed:?}"
    );
    let r = hostile_call("sleep_ms", json!({"ms": 20}), &limits);
    assert!(
        matches!(&r.outcome, ToolOutcome::Success(o) if o.text == "slept"),
        "{:?}",
        r.outcome
    );
}

#[test]
fn a_fifo_in_the_workspace_never_blocks_a_builtin_tool() {
    let sb = Sandbox::new();
    sb.write("dir/a.txt", "needle\n");
    let fifo = sb.ws().join("dir/pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let started = Instant::now();
    let ro = warden::capability::WriteMode::ReadOnly;
    let r = call("read_file", json!({"path": "dir/pipe"}), &sb.ws(), ro);
    assert!(err(&r, ErrorKind::InvalidInput).contains("dir/pipe: not a regular file"));
    let r = call(
        "grep",
        json!({"pattern": "needle", "path": "dir/pipe"}),
        &sb.ws(),
        ro,
    );
    assert!(err(&r, ErrorKind::InvalidInput).contains("not a regular file"));
    let r = call("grep", json!({"pattern": "needle"}), &sb.ws(), ro);
    assert!(
        ok(&r).text.starts_with("dir/a.txt:1:needle\n"),
        "{}",
        ok(&r).text
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_cooperative_guest_sees_the_cancellation_and_returns_within_the_grace() {
    let _quiet = exclusive();
    let p = hostile();
    let _ = hostile_call("ok", json!({}), &Limits::default());
    let cancel = CancelToken::new();
    let trigger = cancel.clone();
    let cancelled_at = std::sync::Arc::new(std::sync::Mutex::new(None));
    let at = cancelled_at.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        *at.lock().unwrap() = Some(Instant::now());
        trigger.cancel();
    });
    let input = json!({}).to_string();
    let r = p.call(CallRequest {
        call_id: "c".into(),
        tool: "is_cancelled_spin",
        input: &input,
        grant: &Grant::none(),
        limits: &Limits::default(),
        cancel,
        progress: None,
    });
    let ended = Instant::now();
    t.join().unwrap();
    assert_eq!(r.outcome, ToolOutcome::Cancelled);
    let after_cancel = ended - cancelled_at.lock().unwrap().unwrap();
    // A guest forced out would take the whole grace; this one noticed first.
    assert!(
        after_cancel < warden::base::CANCEL_GRACE / 2,
        "{after_cancel:?}"
    );
}

/// The hostile fixture in a runtime whose instances are mapped on demand,
/// as a one-shot `warden tool call` runs them.
fn hostile_on_demand() -> std::sync::Arc<LoadedPlugin> {
    let home = warden::home::Home::at(shared_home().to_path_buf());
    let runtime = warden::runtime::Runtime::with_instances(
        home.cache_dir(),
        warden::runtime::Instances::OnDemand,
    )
    .unwrap();
    let wasm = std::fs::read(warden::test_plugins::HOSTILE).unwrap();
    runtime.load(&wasm, None).unwrap()
}

#[test]
fn instances_mapped_on_demand_keep_every_limit() {
    let _quiet = exclusive();
    let p = hostile_on_demand();
    assert_still_serving_on(&p);
    assert_memory_bomb_is_stopped(&p);
    assert_spin_stops_at_the_deadline(&p);
    assert_stdout_flood_is_capped(&p);
}
