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
//! - `write_file_review/*`: `write_file` of 64 KiB, and over an existing
//!   1 MiB file (a copy-up under the overlay), into a workspace written
//!   directly and into one overlaid as `warden run --review` does it (the
//!   mount is made in `main`, before criterion starts a thread).
//! - `hard_link_walk/*`: one read under unreadable protected paths in a
//!   workspace of 10,000 files, of a file with one name and of one with
//!   two: the difference is the walk that finds the protected files' links.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::process::Command;

use criterion::{Criterion, criterion_group};
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
    bench_write_file_review(c, catalog);
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

/// The two workspaces of `write_file_review`: written directly, and
/// overlaid (when the machine can).
struct ReviewWorkspaces {
    direct: tempfile::TempDir,
    overlaid: Option<tempfile::TempDir>,
    _home: tempfile::TempDir,
}

static REVIEW: std::sync::OnceLock<ReviewWorkspaces> = std::sync::OnceLock::new();

/// Overlay one workspace for this whole process, as `warden run --review`
/// does: while it has one thread.
fn overlay_workspaces() -> ReviewWorkspaces {
    let home = tempfile::tempdir().unwrap();
    let direct = tempfile::tempdir().unwrap();
    let overlaid = tempfile::tempdir().unwrap();
    for ws in [&direct, &overlaid] {
        std::fs::write(ws.path().join("big.txt"), vec![b'x'; 1 << 20]).unwrap();
    }
    let ws = std::fs::canonicalize(overlaid.path()).unwrap();
    let home_at = Home::at(std::fs::canonicalize(home.path()).unwrap());
    let overlay = warden::overlay::Overlay::create(&home_at, &ws, "bench").unwrap();
    let overlaid = match warden::overlay::mount_over(&overlay, &ws, home_at.root()) {
        Ok(()) => Some(overlaid),
        Err(e) => {
            eprintln!("write_file_review: no overlay on this machine ({e}); only the direct case");
            None
        }
    };
    ReviewWorkspaces {
        direct,
        overlaid,
        _home: home,
    }
}

/// `write_file` into a direct and an overlaid workspace, same process:
/// 64 KiB into a file, and 1 MiB over the existing `big.txt`, whose first
/// overwrite under the overlay copies it up.
fn bench_write_file_review(c: &mut Criterion, catalog: &Catalog) {
    let Some(review) = REVIEW.get() else { return };
    let (entry, _) = catalog.find_tool("write_file").unwrap();
    let fs = catalog.load(entry).unwrap();
    let limits = Limits::default();
    let small =
        serde_json::json!({"path": "written.txt", "content": "x".repeat(64 << 10)}).to_string();
    let big = serde_json::json!({"path": "big.txt", "content": "y".repeat(1 << 20)}).to_string();
    let mut group = c.benchmark_group("write_file_review");
    group.sample_size(50);
    let mut cases = vec![("direct", review.direct.path())];
    cases.extend(review.overlaid.as_ref().map(|o| ("overlaid", o.path())));
    for (name, ws) in cases {
        let grant = Grant {
            network: None,
            filesystem: Some(FsGrant {
                host_dir: std::fs::canonicalize(ws).unwrap(),
                access: FsAccess::ReadWrite,
                protected: Some(PathGuard::defaults()),
            }),
            extra_dirs: Vec::new(),
            process: None,
            interaction: None,
        };
        for (size, input) in [("64kib", &small), ("overwrite_1mib", &big)] {
            group.bench_function(format!("{name}/{size}"), |b| {
                b.iter(|| {
                    let r = fs.call(CallRequest {
                        call_id: "b".into(),
                        tool: "write_file",
                        input,
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
    }
    group.finish();
}

criterion_group!(benches, bench);

fn main() {
    // Before criterion (or anything) starts a thread.
    let _ = REVIEW.set(overlay_workspaces());
    benches();
    Criterion::default().configure_from_args().final_summary();
}
