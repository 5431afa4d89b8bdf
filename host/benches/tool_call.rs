//! Per-call cost of the sandbox.
//!
//! - `noop_fresh_instance`: a no-op tool (echo, no capabilities), fresh
//!   store and instance per call from the cached `InstancePre`.
//! - `read_file_fresh_instance`: a small read with the workspace preopened.
//! - `naive_linker_per_call`: for reference, a new linker and instantiate
//!   per call (what the pooled `InstancePre` avoids).
//! - `cold_process_read_file`: `warden tool call read_file` from process
//!   start to result, compile cache warm.
//! - `protected_paths/*`: one call opening a small file 1,000 times (hostile
//!   `open_many`), with no protected paths, with the defaults, and with
//!   protected paths unreadable; for reading and for writing. The per-open
//!   cost of the filesystem boundary is the difference divided by 1,000.
//!   Through a symlink, the careful path: the kernel says where it led.
//!   A file with two names: each call also finds the protected files' links
//!   (one walk of the small workspace) before its first such open.
//! - `write_file/64kib`: the built-in `write_file` truncating a file and
//!   writing 64 KiB through a stream (what the write quota adds).
//! - `hard_link_walk/*`: one read under unreadable protected paths in a
//!   workspace of 10,000 files, of a file with one name and of one with
//!   two: the difference is the walk that finds the protected files' links.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::process::Command;

use criterion::{Criterion, criterion_group, criterion_main};
use warden::base::{CancelToken, Limits};
use warden::capability::{FsAccess, FsGrant, Grant, PathGuard, ProtectedReads};
use warden::home::Home;
use warden::plugin::Catalog;
use warden::protocol::ToolOutcome;
use warden::runtime::{CallRequest, LoadedPlugin};
use warden::runtime::{LinkProfile, WitVersion, linker_for};

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
        network: None,
        filesystem: Some(FsGrant {
            host_dir: ws_path.clone(),
            access: FsAccess::ReadOnly,
            protected: None,
        }),
        extra_dirs: Vec::new(),
        process: None,
        interaction: None,
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
            let linker = linker_for(
                engine,
                &component,
                WitVersion::V0_1,
                LinkProfile {
                    filesystem: false,
                    http: false,
                    process: false,
                    interaction: false,
                },
            )
            .unwrap();
            black_box(linker)
        })
    });

    bench_protected_paths(c, &catalog, &ws_path);

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

/// Opens per call in the `protected_paths` group.
const OPENS: usize = 1000;

fn bench_protected_paths(c: &mut Criterion, catalog: &Catalog, ws: &std::path::Path) {
    let hostile = catalog
        .runtime()
        .load(&std::fs::read(warden::test_plugins::HOSTILE).unwrap(), None)
        .unwrap();
    std::os::unix::fs::symlink("small.txt", ws.join("alias")).unwrap();
    std::fs::write(ws.join("linked.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::hard_link(ws.join("linked.txt"), ws.join("linked-too.txt")).unwrap();
    let limits = Limits::default();
    let grant = |protected: Option<PathGuard>| Grant {
        network: None,
        filesystem: Some(FsGrant {
            host_dir: ws.to_path_buf(),
            access: FsAccess::ReadWrite,
            protected,
        }),
        extra_dirs: Vec::new(),
        process: None,
        interaction: None,
    };
    let unreadable = PathGuard::new(
        PathGuard::defaults().globs().to_vec(),
        ProtectedReads::Refused,
    )
    .unwrap();
    let cases = [
        ("read/unprotected", "small.txt", false, grant(None)),
        (
            "read/protected",
            "small.txt",
            false,
            grant(Some(PathGuard::defaults())),
        ),
        (
            "read/protected_unreadable",
            "small.txt",
            false,
            grant(Some(unreadable.clone())),
        ),
        (
            "read/protected_unreadable_two_names",
            "linked.txt",
            false,
            grant(Some(unreadable.clone())),
        ),
        ("write/unprotected", "small.txt", true, grant(None)),
        (
            "write/protected",
            "small.txt",
            true,
            grant(Some(PathGuard::defaults())),
        ),
        (
            "write/protected_two_names",
            "linked.txt",
            true,
            grant(Some(PathGuard::defaults())),
        ),
        ("write_via_symlink/unprotected", "alias", true, grant(None)),
        (
            "write_via_symlink/protected",
            "alias",
            true,
            grant(Some(PathGuard::defaults())),
        ),
    ];
    let mut group = c.benchmark_group("protected_paths");
    group
        .sample_size(20)
        .measurement_time(std::time::Duration::from_secs(10));
    for (name, file, write, grant) in &cases {
        let input = serde_json::json!({
            "path": format!("/workspace/{file}"),
            "count": OPENS,
            "write": write,
        })
        .to_string();
        group.bench_function(*name, |b| {
            b.iter(|| {
                let r = hostile.call(CallRequest {
                    call_id: "b".into(),
                    tool: "open_many",
                    input: &input,
                    grant,
                    limits: &limits,
                    cancel: CancelToken::new(),
                    progress: None,
                });
                assert!(
                    matches!(r.outcome, ToolOutcome::Success(_)),
                    "{:?}",
                    r.outcome
                );
                black_box(r.outcome)
            })
        });
    }
    group.finish();
    bench_write_file(c, catalog, &grant(Some(PathGuard::defaults())));
    bench_hard_link_walk(c, &hostile, unreadable);
}

/// The built-in `write_file` writing 64 KiB into the bench workspace.
fn bench_write_file(c: &mut Criterion, catalog: &Catalog, grant: &Grant) {
    let (entry, _) = catalog.find_tool("write_file").unwrap();
    let fs = catalog.load(entry).unwrap();
    let limits = Limits::default();
    let content = "x".repeat(64 << 10);
    let input = serde_json::json!({"path": "written.txt", "content": content}).to_string();
    let mut group = c.benchmark_group("write_file");
    group.sample_size(50);
    group.bench_function("64kib", |b| {
        b.iter(|| {
            let r = fs.call(CallRequest {
                call_id: "b".into(),
                tool: "write_file",
                input: &input,
                grant,
                limits: &limits,
                cancel: CancelToken::new(),
                progress: None,
            });
            assert!(
                matches!(r.outcome, ToolOutcome::Success(_)),
                "{:?}",
                r.outcome
            );
            black_box(r.outcome)
        })
    });
    group.finish();
}

/// One read of a file with one name and of one with two, in a workspace
/// of 10,000 files (100 directories of 100), protected paths unreadable.
fn bench_hard_link_walk(c: &mut Criterion, hostile: &LoadedPlugin, guard: PathGuard) {
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    for d in 0..100 {
        let dir = root.join(format!("d{d}"));
        std::fs::create_dir(&dir).unwrap();
        for f in 0..100 {
            std::fs::write(dir.join(format!("f{f}.txt")), "x\n").unwrap();
        }
    }
    std::fs::write(root.join(".env"), "SECRET=1\n").unwrap();
    std::fs::hard_link(root.join("d0/f0.txt"), root.join("d0/twin.txt")).unwrap();
    let grant = Grant {
        network: None,
        filesystem: Some(FsGrant {
            host_dir: root,
            access: FsAccess::ReadOnly,
            protected: Some(guard),
        }),
        extra_dirs: Vec::new(),
        process: None,
        interaction: None,
    };
    let limits = Limits::default();
    let mut group = c.benchmark_group("hard_link_walk");
    group.sample_size(30);
    for (name, file) in [("one_name", "d0/f1.txt"), ("two_names", "d0/f0.txt")] {
        let input = serde_json::json!({"path": format!("/workspace/{file}")}).to_string();
        group.bench_function(name, |b| {
            b.iter(|| {
                let r = hostile.call(CallRequest {
                    call_id: "b".into(),
                    tool: "read_path",
                    input: &input,
                    grant: &grant,
                    limits: &limits,
                    cancel: CancelToken::new(),
                    progress: None,
                });
                assert!(
                    matches!(r.outcome, ToolOutcome::Success(_)),
                    "{:?}",
                    r.outcome
                );
                black_box(r.outcome)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
