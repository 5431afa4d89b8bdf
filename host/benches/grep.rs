//! `grep` over a generated tree of 2,000 files / 20 MiB, against `rg` on
//! the same tree when ripgrep is installed (the goal is ≤ 1.5× rg).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use warden::base::{CancelToken, Limits};
use warden::capability::WriteMode;
use warden::home::Home;
use warden::pipeline::{Invocation, run};
use warden::plugin::Catalog;
use warden::protocol::ToolOutcome;

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
    let call_with = |limits: Limits| {
        let r = run(
            &catalog,
            Invocation {
                tool: "grep",
                input,
                workspace: tree.path(),
                write: WriteMode::ReadOnly,
                limits,
                limit_requests: Default::default(),
                cancel: CancelToken::new(),
                progress: None,
                policy: None,
                approval: None,
                rationale: None,
                interaction: None,
            },
        );
        match r.outcome {
            ToolOutcome::Success(out) => out.text,
            other => panic!("grep failed: {other:?}"),
        }
    };
    let call = || call_with(Limits::default());
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
    let ripgrep = |args: &[&str]| {
        let o = Command::new("rg")
            .args(args)
            .current_dir(tree.path())
            .output()
            .unwrap();
        black_box(o.stdout)
    };
    if rg {
        group.bench_function("ripgrep", |b| b.iter(|| ripgrep(&["-n", "needle_\\w+"])));
        group.bench_function("ripgrep_one_thread", |b| {
            b.iter(|| ripgrep(&["-j1", "-n", "needle_\\w+"]))
        });
    } else {
        eprintln!("ripgrep (rg) is not installed: skipping the comparison");
    }
    group.finish();
    if rg {
        side_by_side(&call, &|| call_with(one_walk()), &|| {
            ripgrep(&["-n", "needle_\\w+"])
        });
    }
}

/// Limits under which `grep` is not split: one worker at a time.
fn one_walk() -> Limits {
    Limits {
        workers: 1,
        ..Limits::default()
    }
}

/// The three runs interleaved, so a noisy machine slows each alike: the
/// medians and the median of the per-round ratios to `rg`.
fn side_by_side<A, B, C>(split: &dyn Fn() -> A, single: &dyn Fn() -> B, rg: &dyn Fn() -> C) {
    const ROUNDS: usize = 60;
    let time = |f: &dyn Fn()| {
        let started = Instant::now();
        f();
        started.elapsed().as_secs_f64() * 1000.0
    };
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        a.push(time(&|| drop(black_box(split()))));
        b.push(time(&|| drop(black_box(single()))));
        c.push(time(&|| drop(black_box(rg()))));
    }
    let mut split_ratio: Vec<f64> = a.iter().zip(&c).map(|(x, r)| x / r).collect();
    let mut single_ratio: Vec<f64> = b.iter().zip(&c).map(|(x, r)| x / r).collect();
    eprintln!(
        "side by side, {ROUNDS} rounds (median ms): warden split {:.1}, one walk {:.1}, rg {:.1}; \
         ratio to rg per round: split {:.2}x (interquartile {:.2}-{:.2}), one walk {:.2}x",
        median(&mut a),
        median(&mut b),
        median(&mut c),
        median(&mut split_ratio),
        quantile(&split_ratio, 0.25),
        quantile(&split_ratio, 0.75),
        median(&mut single_ratio),
    );
}

/// The median of `v` (sorted in place).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    quantile(v, 0.5)
}

/// The `q` quantile of sorted `v`.
fn quantile(v: &[f64], q: f64) -> f64 {
    v[((v.len() - 1) as f64 * q).round() as usize]
}

criterion_group!(benches, bench);
criterion_main!(benches);
