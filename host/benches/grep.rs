//! `grep` over a generated tree of 2,000 files / 20 MiB, against `rg` on
//! the same tree when ripgrep is installed (the goal is ≤ 1.5× rg).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::io::Write;
use std::path::Path;
use std::process::Command;

use criterion::{Criterion, criterion_group, criterion_main};
use warden::capability::WriteMode;
use warden::home::Home;
use warden::pipeline::{Invocation, run};
use warden::plugin::Catalog;
use warden::protocol::ToolOutcome;
use warden::runtime::{CancelToken, Limits};

const FILES: usize = 2_000;
const FILE_BYTES: usize = 10 * 1024;

/// Deterministic text: 2,000 files of ~10 KiB in 40 directories, with a
/// rare needle every few files.
fn generate(root: &Path) {
    let words = [
        "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "kappa", "lambda", "sigma",
    ];
    let mut seed: u64 = 0x9e3779b97f4a7c15;
    for i in 0..FILES {
        let dir = root.join(format!("dir{:02}", i % 40));
        std::fs::create_dir_all(&dir).unwrap();
        let mut f = std::io::BufWriter::new(
            std::fs::File::create(dir.join(format!("file{i:04}.txt"))).unwrap(),
        );
        let mut written = 0;
        let mut line = 0;
        while written < FILE_BYTES {
            let mut s = String::new();
            for _ in 0..10 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                s.push_str(words[(seed % words.len() as u64) as usize]);
                s.push(' ');
            }
            if i % 7 == 0 && line == 40 {
                s.push_str("needle_found_here");
            }
            s.push('\n');
            written += s.len();
            line += 1;
            f.write_all(s.as_bytes()).unwrap();
        }
    }
}

fn bench(c: &mut Criterion) {
    let home = tempfile::tempdir().unwrap();
    let tree = tempfile::tempdir().unwrap();
    generate(tree.path());
    let catalog = Catalog::open(&Home::at(home.path().to_path_buf())).unwrap();
    let input = r#"{"pattern":"needle_\\w+","max_matches":5000}"#;
    let call = || {
        let r = run(
            &catalog,
            Invocation {
                tool: "grep",
                input,
                workspace: tree.path(),
                write: WriteMode::ReadOnly,
                limits: Limits::default(),
                limit_requests: Default::default(),
                cancel: CancelToken::new(),
                progress: None,
                policy: None,
                approval: None,
                rationale: None,
            },
        );
        match r.outcome {
            ToolOutcome::Success(out) => out.text,
            other => panic!("grep failed: {other:?}"),
        }
    };
    let matches = call()
        .lines()
        .filter(|l| l.contains("needle_found_here"))
        .count();
    assert_eq!(matches, FILES.div_ceil(7));

    let mut group = c.benchmark_group("grep_2000_files_20mib");
    group.sample_size(20);
    group.bench_function("warden_grep", |b| b.iter(|| black_box(call())));
    let rg = Command::new("rg")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if rg {
        group.bench_function("ripgrep", |b| {
            b.iter(|| {
                let o = Command::new("rg")
                    .args(["-n", "needle_\\w+"])
                    .current_dir(tree.path())
                    .output()
                    .unwrap();
                black_box(o.stdout)
            })
        });
        group.bench_function("ripgrep_one_thread", |b| {
            b.iter(|| {
                let o = Command::new("rg")
                    .args(["-j1", "-n", "needle_\\w+"])
                    .current_dir(tree.path())
                    .output()
                    .unwrap();
                black_box(o.stdout)
            })
        });
    } else {
        eprintln!("ripgrep (rg) is not installed: skipping the comparison");
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
