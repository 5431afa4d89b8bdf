//! `fan-out`: a call's workers are part of the call. Each runs in a fresh
//! instance under the call's grant, deadline and memory limit; results come
//! back in task order; the workers' logs, file uses and refusals are the
//! call's; a worker cannot fan out again.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use warden::base::{CancelToken, Limits};
use warden::capability::{FsAccess, FsOp, Grant, PathGuard, ProtectedReads};
use warden::protocol::{ErrorKind, ToolOutcome};
use warden::runtime::{CallReport, CallRequest, MAX_TASKS, parallelism};

use crate::support::*;

fn fan(tasks: Value, grant: &Grant, limits: &Limits) -> CallReport {
    call_plugin(
        &hostile(),
        "fan_out",
        json!({ "tasks": tasks }),
        grant,
        limits,
    )
}

/// The structured result of a call that must have succeeded.
#[track_caller]
fn structured(r: &CallReport) -> Value {
    match &r.outcome {
        ToolOutcome::Success(out) => out.structured.clone().expect("structured output"),
        other => panic!("expected success, got {other:?}"),
    }
}

#[test]
fn results_come_back_in_task_order_from_workers() {
    let tasks: Vec<Value> = (0..12)
        .map(|i| json!({"op": "echo", "text": format!("task {i}")}))
        .chain([json!({"op": "is_worker"}), json!({"op": "fail"})])
        .collect();
    let r = fan(json!(tasks), &Grant::none(), &Limits::default());
    let v = structured(&r);
    assert_eq!(v["parallelism"], parallelism());
    assert_eq!(v["is_worker"], false, "the calling instance is no worker");
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 14);
    for (i, result) in results.iter().take(12).enumerate() {
        assert_eq!(result["ok"], format!("task {i}"));
    }
    assert_eq!(results[12]["ok"], "true", "a worker knows it is one");
    assert_eq!(results[13]["error"], "NotFound");
    assert_eq!(results[13]["message"], "the worker found nothing");
    assert_eq!(r.workers, 14, "the report counts the workers");
}

#[test]
fn the_workers_limit_sets_parallelism() {
    let limits = Limits {
        workers: 1,
        ..Limits::default()
    };
    let r = fan(
        json!([{"op": "echo", "text": "a"}]),
        &Grant::none(),
        &limits,
    );
    let v = structured(&r);
    assert_eq!(v["parallelism"], 1);
    assert_eq!(v["results"][0]["ok"], "a", "one at a time still runs them");
}

#[test]
fn a_worker_cannot_fan_out_again() {
    let r = fan(
        json!([{"op": "nested"}]),
        &Grant::none(),
        &Limits::default(),
    );
    assert_eq!(structured(&r)["results"][0]["ok"], "Nested");
}

#[test]
fn more_tasks_than_the_host_accepts_are_refused_whole() {
    let echo = json!({"op": "echo", "text": "x"});
    let r = fan(
        json!(vec![echo.clone(); MAX_TASKS + 1]),
        &Grant::none(),
        &Limits::default(),
    );
    assert_eq!(structured(&r)["refused"], "TooManyTasks");
    let r = fan(
        json!(vec![echo; MAX_TASKS]),
        &Grant::none(),
        &Limits::default(),
    );
    let v = structured(&r);
    assert_eq!(v["results"].as_array().unwrap().len(), MAX_TASKS);
}

#[test]
fn workers_count_against_the_calls_memory_limit() {
    // Two workers at once whatever the machine, so the sums below hold.
    let limits = Limits {
        memory_bytes: 64 << 20,
        workers: 2,
        ..Limits::default()
    };
    let call = |parent_mib: usize, worker_mib: usize| {
        let input = json!({
            "tasks": [{"op": "alloc", "mib": worker_mib}],
            "parent_mib": parent_mib,
        });
        structured(&call_plugin(
            &hostile(),
            "fan_out",
            input,
            &Grant::none(),
            &limits,
        ))
    };
    // Alone, a worker may take 30 MiB of the call's 64.
    assert_eq!(call(0, 30)["results"][0]["ok"], "allocated 30 MiB");
    // Not while the calling instance holds 40: the limit is one budget for
    // the call, not one per instance.
    let v = call(40, 30);
    assert_eq!(v["results"][0]["error"], "LimitExceeded", "{v}");
    assert!(
        v["results"][0]["message"]
            .as_str()
            .unwrap()
            .contains("more than its 64 MiB memory limit"),
        "{v}"
    );
    // What is left still serves a smaller worker, and memory a finished
    // worker held is given back to the call.
    assert_eq!(call(30, 8)["results"][0]["ok"], "allocated 8 MiB");
    let tasks: Vec<Value> = (0..6).map(|_| json!({"op": "alloc", "mib": 8})).collect();
    let input = json!({"tasks": tasks, "parent_mib": 20});
    let v = structured(&call_plugin(
        &hostile(),
        "fan_out",
        input,
        &Grant::none(),
        &limits,
    ));
    let ok = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["ok"] == "allocated 8 MiB")
        .count();
    assert_eq!(ok, 6, "six 8 MiB workers, at most two at once: {v}");
}

#[test]
fn a_spinning_worker_ends_at_the_calls_deadline() {
    let _quiet = exclusive();
    let limits = Limits {
        deadline: Duration::from_millis(300),
        ..Limits::default()
    };
    let _ = fan(json!([]), &Grant::none(), &limits); // warm the instance_pre
    let started = Instant::now();
    let r = fan(
        json!([{"op": "spin"}, {"op": "echo", "text": "quick"}]),
        &Grant::none(),
        &limits,
    );
    let elapsed = started.elapsed();
    let msg = outcome_err(&r.outcome, ErrorKind::Timeout);
    assert!(msg.contains("300ms deadline"), "{msg}");
    assert!(
        elapsed <= Duration::from_millis(400),
        "deadline overshot by more than 100 ms: {elapsed:?}"
    );
    let r = fan(
        json!([{"op": "echo", "text": "after"}]),
        &Grant::none(),
        &Limits::default(),
    );
    assert_eq!(structured(&r)["results"][0]["ok"], "after");
}

#[test]
fn cancelling_the_call_stops_its_spinning_workers() {
    let _quiet = exclusive();
    let cancel = CancelToken::new();
    let trigger = cancel.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(150));
        trigger.cancel();
        Instant::now()
    });
    let input = json!({"tasks": [{"op": "spin"}, {"op": "spin"}]}).to_string();
    let r = hostile().call(CallRequest {
        call_id: "c".into(),
        tool: "fan_out",
        input: &input,
        grant: &Grant::none(),
        limits: &Limits {
            deadline: Duration::from_secs(30),
            ..Limits::default()
        },
        cancel,
        progress: None,
    });
    let after = canceller.join().unwrap().elapsed();
    assert_eq!(r.outcome, ToolOutcome::Cancelled);
    assert_eq!(r.workers, 2);
    assert!(
        after < Duration::from_secs(2),
        "stopped {after:?} after the cancel"
    );
    let r = fan(
        json!([{"op": "echo", "text": "after"}]),
        &Grant::none(),
        &Limits::default(),
    );
    assert_eq!(structured(&r)["results"][0]["ok"], "after");
}

#[test]
fn worker_output_past_the_cap_is_refused_or_cut() {
    let limits = Limits {
        output_bytes: 1000,
        ..Limits::default()
    };
    let r = fan(
        json!([{"op": "structured", "bytes": 5000}, {"op": "echo", "text": "y".repeat(3000)}]),
        &Grant::none(),
        &limits,
    );
    let v = structured(&r);
    assert_eq!(
        v["results"][0]["message"],
        "the worker's structured output passed the 1000-byte output cap"
    );
    let cut = v["results"][1]["ok"].as_str().unwrap();
    assert!(cut.starts_with(&"y".repeat(1000)), "{cut}");
    assert!(
        cut.ends_with("[output truncated by the host: 3000 bytes exceeded the 1000-byte cap]"),
        "{cut}"
    );
}

#[test]
fn worker_logs_file_uses_and_refusals_are_the_calls() {
    let sb = Sandbox::new();
    sb.write("notes.txt", "visible");
    sb.write(".env", "SECRET=1");
    let guard = PathGuard::new(vec![".env".into()], ProtectedReads::Refused).unwrap();
    let grant = guarded_grant(&sb.ws(), FsAccess::ReadOnly, Some(guard));
    let r = fan(
        json!([
            {"op": "log", "message": "from a worker"},
            {"op": "read", "path": "notes.txt"},
            {"op": "read", "path": ".env"},
            {"op": "read", "path": "../outside/canary.txt"},
        ]),
        &grant,
        &Limits::default(),
    );
    let v = structured(&r);
    assert_eq!(v["results"][1]["ok"], "visible");
    assert_eq!(v["results"][2]["error"], "PermissionDenied");
    assert!(v["results"][3].get("error").is_some(), "{v}");
    let all = serde_json::to_string(&r).unwrap();
    assert!(!all.contains("SECRET"), "{all}");
    assert!(
        !all.contains(sb.ws().to_str().unwrap()),
        "host path shown: {all}"
    );
    assert!(
        r.logs.iter().any(|l| l.message == "from a worker"),
        "{:?}",
        r.logs
    );
    assert!(
        r.exercised.files.iter().any(|f| f.path == "notes.txt"),
        "{:?}",
        r.exercised.files
    );
    assert_eq!(
        r.boundary_denials
            .iter()
            .filter(|d| d.op == FsOp::Open && d.path == ".env")
            .count(),
        1,
        "{:?}",
        r.boundary_denials
    );
    sb.assert_canaries_intact();
}

#[test]
fn a_plugin_built_against_0_1_0_still_runs() {
    let legacy = load_legacy();
    assert_eq!(legacy.meta.wit_version, "0.1.0");
    let r = call_plugin(
        &legacy,
        "legacy_echo",
        json!({"text": "old"}),
        &Grant::none(),
        &Limits::default(),
    );
    match &r.outcome {
        ToolOutcome::Success(out) => assert_eq!(out.text, r#"{"text":"old"}"#),
        other => panic!("{other:?}"),
    }
    assert_eq!(r.logs[0].message, r#"{"text":"old"}"#);
}

fn load_legacy() -> std::sync::Arc<warden::runtime::LoadedPlugin> {
    let wasm = std::fs::read(warden::test_plugins::LEGACY).unwrap();
    catalog().runtime().load(&wasm, None).unwrap()
}

#[test]
fn a_plugin_built_against_0_1_1_still_fans_out_in_its_own_types() {
    let wasm = std::fs::read(warden::test_plugins::LEGACY_FAN).unwrap();
    let plugin = catalog().runtime().load(&wasm, None).unwrap();
    assert_eq!(plugin.meta.wit_version, "0.1.1");
    let r = call_plugin(
        &plugin,
        "legacy_fan",
        json!({"text": "a fail b"}),
        &Grant::none(),
        &Limits::default(),
    );
    let ToolOutcome::Success(out) = &r.outcome else {
        panic!("{:?}", r.outcome);
    };
    let parts: Vec<&str> = out.text.split(' ').collect();
    assert_eq!(parts[0], "A");
    assert!(
        parts[1].contains("NotFound") && out.text.contains("worker failed"),
        "the worker's 0.1.1 error comes back with its kind: {}",
        out.text
    );
    assert_eq!(parts.last(), Some(&"B"));
    assert_eq!(r.workers, 3);
}

#[test]
fn results_held_for_the_caller_count_against_the_calls_memory_limit() {
    // Ten workers, one at a time, each returning 3 MiB of text under a
    // 4 MiB output cap: 30 MiB of results for a call limited to 24 MiB.
    let limits = Limits {
        memory_bytes: 24 << 20,
        output_bytes: 4 << 20,
        workers: 1,
        ..Limits::default()
    };
    let tasks: Vec<Value> = (0..10)
        .map(|_| json!({"op": "text", "bytes": 3 << 20}))
        .collect();
    let input = json!({"tasks": tasks, "lengths": true});
    let r = call_plugin(&hostile(), "fan_out", input, &Grant::none(), &limits);
    let v = structured(&r);
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 10);
    let kept: Vec<u64> = results
        .iter()
        .filter_map(|r| r["ok_len"].as_u64())
        .collect();
    assert!(
        kept.len() >= 3 && kept.iter().all(|n| *n == 3 << 20),
        "the first results fit: {results:?}"
    );
    assert!(
        kept.iter().sum::<u64>() < 24 << 20,
        "the results held stay under the limit: {results:?}"
    );
    let refused: Vec<&str> = results
        .iter()
        .filter_map(|r| r["message"].as_str())
        .collect();
    assert_eq!(kept.len() + refused.len(), 10, "{results:?}");
    // One worker at a time: each later worker finds the budget taken by the
    // results held and stops at the limit (the refusal of a result that
    // does not fit is unit-tested next to `hold`).
    assert!(
        refused.iter().all(|m| m.contains("24 MiB memory limit")),
        "{refused:?}"
    );
}
