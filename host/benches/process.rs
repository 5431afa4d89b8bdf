//! The cost of a confined process against a plain one, same run:
//!
//! - `plain_spawn_true`: `std::process::Command` running `true`, waited for.
//! - `confined_true_read_only`: `capability::process::run` of `true` under
//!   a read-only grant (no protected-path scan: Landlock alone keeps the
//!   workspace unchanged).
//! - `confined_true_read_write_20k`: the same under a read-write grant on a
//!   workspace of 20,000 files in 400 directories with a `.git`, `.env`
//!   and `*.pem` files: the protected-path scan before the call and the
//!   sweep after it are included. The tree is unchanged between calls, so
//!   the scan is the cached one, checked by one `stat` per directory.
//! - `confined_true_read_write_20k_changed`: the same, after a file was
//!   created in (or removed from) the workspace's root before each call
//!   (not timed): the whole tree is walked again, as every call did before
//!   the scan was cached.
//!
//! - `shell_call_true`: a whole `shell` tool call of `true` through the
//!   pipeline (schema check, the policy's decision over the command, a
//!   fresh instance of the `shell` plugin, the confined process), in a
//!   small read-write workspace.
//!
//! The goal for a whole `shell` call is ≤ 2 ms median; the confined spawn
//! should be well under it. Figures are in `docs/sandbox.md`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use warden::base::{CancelToken, Limits};
use warden::capability::process::{self, ProcessGrant, ProcessRequest};
use warden::capability::{FsAccess, WriteMode};
use warden::home::Home;
use warden::pipeline::{self, Invocation};
use warden::plugin::Catalog;
use warden::policy::{LimitOverrides, Policy};
use warden::protocol::ToolOutcome;

/// A policy that lets `true` run, with processes granted.
const SHELL_POLICY: &str = r#"
name = "bench"
mode = "ask"
[grants.default]
workspace = "read-write"
[grants.default.process]
enabled = true
[[rule]]
name = "true-runs"
decision = "allow"
commands = ["true"]
"#;

fn big_workspace(root: &Path) {
    for d in 0..400 {
        let dir = root.join(format!("src/m{d}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..50 {
            std::fs::write(dir.join(format!("f{f}.rs")), "x").unwrap();
        }
    }
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(root.join(".env"), "K=V\n").unwrap();
    std::fs::write(root.join("src/m1/server.pem"), "pem").unwrap();
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(base).unwrap();
    let small = tempfile::tempdir_in(base).unwrap();
    let big = tempfile::tempdir_in(base).unwrap();
    big_workspace(big.path());
    let read_only = ProcessGrant::new(small.path(), FsAccess::ReadOnly).unwrap();
    let read_write = ProcessGrant::new(big.path(), FsAccess::ReadWrite).unwrap();
    let request = || {
        ProcessRequest::new(
            vec!["true".into()],
            Instant::now() + Duration::from_secs(10),
        )
    };

    let mut group = c.benchmark_group("process");
    group.bench_function("plain_spawn_true", |b| {
        b.iter(|| {
            let status = std::process::Command::new("true").status().unwrap();
            assert!(status.success());
        })
    });
    group.bench_function("confined_true_read_only", |b| {
        b.iter(|| {
            let r = rt.block_on(process::run(&read_only, &request())).unwrap();
            assert!(r.exit.success());
        })
    });
    let home = tempfile::tempdir_in(base).unwrap();
    let catalog = Catalog::open(&Home::at(home.path().to_path_buf())).unwrap();
    let policy = Policy::parse(SHELL_POLICY, "bench.toml").unwrap();
    let shell_ws = tempfile::tempdir_in(base).unwrap();
    let shell_call = || {
        pipeline::run(
            &catalog,
            Invocation {
                tool: "shell",
                input: r#"{"command":"true"}"#,
                workspace: shell_ws.path(),
                write: WriteMode::ReadOnly,
                limits: Limits::default(),
                limit_requests: LimitOverrides::default(),
                cancel: CancelToken::new(),
                progress: None,
                policy: Some(&policy),
                approval: None,
                rationale: None,
                interaction: None,
            },
        )
    };
    let first = shell_call();
    assert!(
        first.outcome.model_text().starts_with("exit code 0"),
        "{:?}",
        first.outcome
    );
    group.bench_function("shell_call_true", |b| {
        b.iter(|| {
            let r = shell_call();
            assert!(matches!(r.outcome, ToolOutcome::Success(_)));
        })
    });
    group.bench_function("confined_true_read_write_20k", |b| {
        b.iter(|| {
            let r = rt.block_on(process::run(&read_write, &request())).unwrap();
            assert!(r.exit.success());
        })
    });
    let root = big.path().to_path_buf();
    let mut flip = false;
    group.bench_function("confined_true_read_write_20k_changed", |b| {
        b.iter_batched(
            || {
                flip = !flip;
                match flip {
                    true => std::fs::write(root.join("changed.txt"), "x").unwrap(),
                    false => std::fs::remove_file(root.join("changed.txt")).unwrap(),
                }
            },
            |()| {
                let r = rt.block_on(process::run(&read_write, &request())).unwrap();
                assert!(r.exit.success());
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50).measurement_time(Duration::from_secs(5));
    targets = bench
}
criterion_main!(benches);
