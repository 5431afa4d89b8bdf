//! Per-call cost of the sandbox.
//!
//! - `noop_fresh_instance`: a no-op tool (echo, no capabilities), fresh
//!   store and instance per call from the cached `InstancePre`.
//! - `read_file_fresh_instance`: a small read with the workspace preopened.
//! - `naive_linker_per_call`: for reference, a new linker and instantiate
//!   per call (what the pooled `InstancePre` avoids).
//! - `cold_process_read_file`: `warden tool call read_file` from process
//!   start to result, compile cache warm.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::process::Command;

use criterion::{Criterion, criterion_group, criterion_main};
use warden::capability::{FsAccess, FsGrant, Grant, LinkProfile, linker_for};
use warden::home::Home;
use warden::plugin::Catalog;
use warden::runtime::{CallRequest, CancelToken, Limits};

fn bench(c: &mut Criterion) {
    let home = tempfile::tempdir().unwrap();
    let catalog = Catalog::open(&Home::at(home.path().to_path_buf())).unwrap();
    let echo = catalog
        .runtime()
        .load(&std::fs::read(warden::test_plugins::ECHO).unwrap(), None)
        .unwrap();
    let (fs_entry, _) = catalog.find_tool("read_file").unwrap();
    let fs = catalog.load(fs_entry).unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("small.txt"), "one\ntwo\nthree\n").unwrap();
    let ws_path = std::fs::canonicalize(ws.path()).unwrap();
    let limits = Limits::default();

    let none = Grant::none();
    let input = r#"{"text":""}"#;
    c.bench_function("noop_fresh_instance", |b| {
        b.iter(|| {
            let r = echo.call(CallRequest {
                call_id: "b".into(),
                tool: "echo",
                input,
                grant: &none,
                limits: &limits,
                cancel: CancelToken::new(),
                progress: None,
            });
            black_box(r.outcome)
        })
    });

    let ro = Grant {
        filesystem: Some(FsGrant {
            host_dir: ws_path.clone(),
            access: FsAccess::ReadOnly,
            protected: None,
        }),
    };
    let read_input = r#"{"path":"small.txt"}"#;
    c.bench_function("read_file_fresh_instance", |b| {
        b.iter(|| {
            let r = fs.call(CallRequest {
                call_id: "b".into(),
                tool: "read_file",
                input: read_input,
                grant: &ro,
                limits: &limits,
                cancel: CancelToken::new(),
                progress: None,
            });
            black_box(r.outcome)
        })
    });

    c.bench_function("naive_linker_per_call", |b| {
        let engine = catalog.runtime().engine();
        let component = wasmtime::component::Component::new(
            engine,
            std::fs::read(warden::test_plugins::ECHO).unwrap(),
        )
        .unwrap();
        b.iter(|| {
            let linker = linker_for(engine, &component, LinkProfile { filesystem: false }).unwrap();
            black_box(linker)
        })
    });

    let exe = env!("CARGO_BIN_EXE_warden");
    let mut group = c.benchmark_group("cold_process");
    group.sample_size(30);
    group.bench_function("read_file", |b| {
        b.iter(|| {
            let o = Command::new(exe)
                .args(["tool", "call", "read_file", "--input", read_input, "-w"])
                .arg(&ws_path)
                .env("WARDEN_HOME", home.path())
                .output()
                .unwrap();
            assert!(o.status.success());
            black_box(o.stdout)
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
