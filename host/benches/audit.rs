//! What auditing adds to a tool call.
//!
//! - `audit/noop_call`: the no-op echo call (fresh store and instance), as
//!   `noop_fresh_instance` in the runtime benchmark.
//! - `audit/noop_call_audited`: the same call, then its record appended to
//!   a hash-chained log (synced in the background by group commit).
//! - `audit/record_only/*`: appending one record alone: the no-op call's,
//!   and a call with a workspace grant and ten file uses.
//!
//! The overhead per call is `noop_call_audited − noop_call`; the goal is at
//! most 10% of `noop_call`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use warden::approval::Approval;
use warden::audit::AuditLog;
use warden::base::{CancelToken, Limits};
use warden::capability::{FileOp, FileUse, FsAccess, FsGrant, Grant, PathGuard};
use warden::home::Home;
use warden::pipeline::{CallResult, Stage};
use warden::plugin::Catalog;
use warden::policy::{CallFacts, Policy};
use warden::runtime::{CallReport, CallRequest, LoadedPlugin};

const INPUT: &str = r#"{"text":""}"#;

fn noop(echo: &LoadedPlugin, grant: &Grant, limits: &Limits) -> CallReport {
    echo.call(CallRequest {
        call_id: "b".into(),
        tool: "echo",
        input: INPUT,
        grant,
        limits,
        cancel: CancelToken::new(),
        progress: None,
    })
}

/// The result the pipeline would make of `report` under `policy`.
fn result_of(report: CallReport, grant: Grant, policy: &Policy) -> CallResult {
    let empty = serde_json::json!({});
    let decision = policy.decide(&CallFacts {
        tool: "echo",
        plugin: "echo",
        annotations: Default::default(),
        input: &empty,
    });
    CallResult {
        call_id: "call_0123456789abcdef_1".into(),
        tool: "echo".into(),
        plugin: Some("echo".into()),
        origin: None,
        stage: Stage::Executed,
        outcome: report.outcome.clone(),
        grant: Some(grant),
        decision: Some(decision),
        approval: Some(Approval::Policy),
        grant_cuts: Vec::new(),
        report: Some(report),
    }
}

fn bench(c: &mut Criterion) {
    let home = tempfile::tempdir().unwrap();
    let catalog = Catalog::open(&Home::at(home.path().to_path_buf())).unwrap();
    let echo = catalog
        .runtime()
        .load(&std::fs::read(warden::test_plugins::ECHO).unwrap(), None)
        .unwrap();
    let policy = Policy::parse(
        "name = \"bench\"\ndescription = \"x\"\nmode = \"auto\"\n",
        "bench.toml",
    )
    .unwrap();
    let limits = Limits::default();
    let none = Grant::none();
    let log = AuditLog::open(&home.path().join("audit/audit.jsonl")).unwrap();

    let mut group = c.benchmark_group("audit");
    group.bench_function("noop_call", |b| {
        b.iter(|| black_box(noop(&echo, &none, &limits).outcome))
    });
    group.bench_function("noop_call_audited", |b| {
        b.iter(|| {
            let report = noop(&echo, &none, &limits);
            let result = result_of(report, none.clone(), &policy);
            log.record_call(&result, INPUT, Some("s1")).unwrap()
        })
    });

    let result = result_of(noop(&echo, &none, &limits), none.clone(), &policy);
    group.bench_function("record_only/noop", |b| {
        b.iter(|| log.record_call(&result, INPUT, Some("s1")).unwrap())
    });
    let ws = Grant {
        filesystem: Some(FsGrant {
            host_dir: home.path().to_path_buf(),
            access: FsAccess::ReadWrite,
            protected: Some(PathGuard::defaults()),
        }),
        extra_dirs: Vec::new(),
        network: None,
        process: None,
        interaction: None,
    };
    let mut report = noop(&echo, &none, &limits);
    report.exercised.files = (0..10)
        .map(|i| FileUse {
            op: FileOp::Read,
            path: format!("src/module_{i}.rs"),
            to: None,
        })
        .collect();
    let busy = result_of(report, ws, &policy);
    group.bench_function("record_only/fs_grant_10_files", |b| {
        b.iter(|| log.record_call(&busy, INPUT, Some("s1")).unwrap())
    });
    group.finish();
    log.flush().unwrap();
}

criterion_group!(benches, bench);
criterion_main!(benches);
