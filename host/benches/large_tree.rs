//! `grep`, `glob` and `list_dir` on a large tree, against `rg` and
//! `rg --files` in the same run, interleaved round by round so a noisy
//! machine slows both alike (goals: grep ≤ 1.3×, glob ≤ 2×, list_dir depth
//! 3 ≤ 2× `rg --files --max-depth 3`; see docs/performance.md).
//!
//! The tree is generated once under the target directory
//! (`target/large-tree`, ~17,400 files, ~210 MiB: deep and wide source
//! directories, a few large files, `.gitignore`d build directories, binary
//! files, symlinks). `WARDEN_LARGE_TREE=DIR` times a tree of your own
//! instead; `WARDEN_BENCH_ROUNDS` sets the rounds (default 11). When `rg`
//! is missing, setup installs it: `apt-get install ripgrep` as root on
//! Debian-like systems, otherwise `cargo install ripgrep` into the target
//! directory.
//!
//! Run: `cargo bench -p warden --bench large_tree`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use warden::base::{CancelToken, Limits};
use warden::capability::WriteMode;
use warden::home::Home;
use warden::pipeline::{Invocation, run};
use warden::plugin::Catalog;
use warden::protocol::ToolOutcome;

/// Bumped whenever the generated tree changes shape, so an old one is rebuilt.
const TREE_VERSION: &str = "v2";

/// One comparison: a Warden tool call and the `rg` command doing the same.
struct Case {
    name: &'static str,
    tool: &'static str,
    input: &'static str,
    rg: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        name: "grep rare literal",
        tool: "grep",
        input: r#"{"pattern":"compatibility_hash","fixed_strings":true,"max_matches":5000}"#,
        rg: &["-n", "-F", "compatibility_hash"],
    },
    Case {
        name: "grep common word",
        tool: "grep",
        input: r#"{"pattern":"unreachable","fixed_strings":true,"max_matches":5000}"#,
        rg: &["-n", "-F", "unreachable"],
    },
    Case {
        name: "grep regex -C2",
        tool: "grep",
        input: r#"{"pattern":"fn \\w+_unchecked\\(","context":2,"max_matches":5000}"#,
        rg: &["-n", "-C2", r"fn \w+_unchecked\("],
    },
    Case {
        name: "glob **/*.toml",
        tool: "glob",
        input: r#"{"pattern":"**/*.toml"}"#,
        rg: &["--files", "-g", "*.toml"],
    },
    Case {
        name: "glob src/**/mod.rs",
        tool: "glob",
        input: r#"{"pattern":"src/**/mod.rs"}"#,
        rg: &["--files", "-g", "/src/**/mod.rs"],
    },
    Case {
        name: "list_dir depth 3",
        tool: "list_dir",
        input: r#"{"depth":3}"#,
        rg: &["--files", "--max-depth", "3"],
    },
];

fn main() {
    // `cargo bench` passes `--bench`; anything else is a filter on case names.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let target = target_dir();
    let tree = match std::env::var_os("WARDEN_LARGE_TREE") {
        Some(dir) => PathBuf::from(dir),
        None => generated_tree(&target),
    };
    let rg = ripgrep(&target);
    let rounds: usize = std::env::var("WARDEN_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(11);
    let home = tempfile::tempdir().unwrap();
    let catalog = Catalog::open(&Home::at(home.path().to_path_buf())).unwrap();
    let call = |case: &Case| {
        let r = run(
            &catalog,
            Invocation {
                tool: case.tool,
                input: case.input,
                workspace: &tree,
                write: WriteMode::ReadOnly,
                limits: Limits::default(),
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
            ToolOutcome::Success(out) => out,
            other => panic!("{} failed: {other:?}", case.name),
        }
    };
    let rg_run = |case: &Case| {
        // Like Warden's tools, honour .gitignore outside a git repository.
        let out = Command::new(&rg)
            .arg("--no-require-git")
            .args(case.rg)
            .current_dir(&tree)
            .output()
            .unwrap();
        assert!(out.status.code() != Some(2), "{}: rg failed", case.name);
        out.stdout
    };
    let cases: Vec<&Case> = CASES
        .iter()
        .filter(|c| filter.is_empty() || filter.iter().any(|f| c.name.contains(f.as_str())))
        .collect();
    eprintln!(
        "tree {}, rg {}, {rounds} rounds",
        tree.display(),
        rg.display()
    );
    for case in &cases {
        // One untimed run of each: warms the caches and checks that they agree.
        let out = call(case);
        let rg_out = rg_run(case);
        let rg_lines = rg_out.split(|&b| b == b'\n').filter(|l| !l.is_empty());
        // rg lists hidden files its `-g` names; `glob` skips them unless asked.
        let visible = rg_lines
            .clone()
            .filter(|l| !l.starts_with(b".") && memchr::memmem::find(l, b"/.").is_none())
            .count();
        let rg_lines = rg_lines.count();
        let warden = out.structured.map(|s| s.to_string()).unwrap_or_default();
        eprintln!("  {:<20} warden {warden}; rg {rg_lines} lines", case.name);
        if case.tool == "glob" {
            let matches = out_matches(&warden);
            assert_eq!(
                matches,
                Some(visible),
                "{}: glob and rg disagree",
                case.name
            );
        }
    }
    let mut times: Vec<(Vec<f64>, Vec<f64>)> = vec![(Vec::new(), Vec::new()); cases.len()];
    let ms = |f: &dyn Fn()| {
        let started = Instant::now();
        f();
        started.elapsed().as_secs_f64() * 1000.0
    };
    for round in 0..rounds {
        for (case, (w, r)) in cases.iter().zip(&mut times) {
            // Alternate which goes first, so neither always finds warm caches.
            if round % 2 == 0 {
                w.push(ms(&|| drop(call(case))));
                r.push(ms(&|| drop(rg_run(case))));
            } else {
                r.push(ms(&|| drop(rg_run(case))));
                w.push(ms(&|| drop(call(case))));
            }
        }
    }
    println!("| case | warden ms | rg ms | ratio (median per round) | interquartile |");
    println!("|---|---|---|---|---|");
    for (case, (w, r)) in cases.iter().zip(&times) {
        let mut ratio: Vec<f64> = w.iter().zip(r).map(|(a, b)| a / b).collect();
        let (mut w, mut r) = (w.clone(), r.clone());
        println!(
            "| {} | {:.1} | {:.1} | {:.2}× | {:.2}–{:.2}× |",
            case.name,
            median(&mut w),
            median(&mut r),
            median(&mut ratio),
            quantile(&ratio, 0.25),
            quantile(&ratio, 0.75),
        );
    }
}

/// The `matches` field of glob's structured output.
fn out_matches(structured: &str) -> Option<usize> {
    let v: serde_json::Value = serde_json::from_str(structured).ok()?;
    usize::try_from(v.get("matches")?.as_u64()?).ok()
}

/// The workspace's target directory (`CARGO_TARGET_DIR` when set).
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"))
}

/// `rg` from PATH, or installed: with apt as root, else with cargo into
/// `target/large-tree-tools`.
fn ripgrep(target: &Path) -> PathBuf {
    let works = |rg: &Path| {
        Command::new(rg)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let local = target.join("large-tree-tools/bin/rg");
    for rg in [PathBuf::from("rg"), local.clone()] {
        if works(&rg) {
            return rg;
        }
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    if root && works(Path::new("apt-get")) {
        eprintln!("rg is missing: apt-get install -y ripgrep");
        let _ = Command::new("apt-get").arg("update").status();
        let _ = Command::new("apt-get")
            .args(["install", "-y", "ripgrep"])
            .status();
        if works(Path::new("rg")) {
            return PathBuf::from("rg");
        }
    }
    eprintln!("rg is missing: cargo install ripgrep (a few minutes)");
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["install", "--locked", "ripgrep", "--root"])
        .arg(target.join("large-tree-tools"))
        .status()
        .unwrap();
    assert!(status.success() && works(&local), "could not install rg");
    local
}

/// The generated tree, made on first use (under `target/`, nowhere else).
fn generated_tree(target: &Path) -> PathBuf {
    let base = target.join("large-tree");
    let tree = base.join(TREE_VERSION);
    let done = base.join(format!("{TREE_VERSION}.complete"));
    if done.exists() {
        return tree;
    }
    if base.exists() {
        std::fs::remove_dir_all(&base).unwrap();
    }
    eprintln!("generating {} (once)", tree.display());
    let started = Instant::now();
    let (files, bytes) = Generator::new(&tree).generate();
    std::fs::write(&done, format!("{files} files, {bytes} bytes\n")).unwrap();
    eprintln!(
        "  {files} files, {} MiB in {:.1} s",
        bytes >> 20,
        started.elapsed().as_secs_f64()
    );
    tree
}

/// Writes a deterministic tree shaped like a Rust monorepo with vendored C
/// and JavaScript, docs, assets and build output.
struct Generator {
    root: PathBuf,
    seed: u64,
    files: usize,
    bytes: u64,
}

const WORDS: &[&str] = &[
    "let", "mut", "self", "match", "return", "impl", "struct", "value", "config", "error",
    "result", "buffer", "index", "len", "iter", "map", "into", "from", "parse", "write", "read",
    "state", "handle", "request", "response", "token", "cache", "entry", "node", "tree", "path",
    "name",
];

impl Generator {
    fn new(root: &Path) -> Self {
        Generator {
            root: root.to_path_buf(),
            seed: 0x9e37_79b9_7f4a_7c15,
            files: 0,
            bytes: 0,
        }
    }

    fn next(&mut self) -> u64 {
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        self.seed
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn generate(mut self) -> (usize, u64) {
        self.text(".gitignore", 0);
        std::fs::write(self.root.join(".gitignore"), "target/\nbuild/\n*.log\n").unwrap();
        self.text("Cargo.toml", 2_000);
        self.text("README.md", 6_000);
        // The root crate: src/ nested five levels deep, a mod.rs per module.
        self.modules("src", 0, 5);
        // 48 workspace crates, each with its own sources, tests and build output.
        for c in 0..48 {
            let krate = format!("crates/crate{c:02}");
            self.text(&format!("{krate}/Cargo.toml"), 1_500);
            self.text(&format!("{krate}/src/lib.rs"), 12_000);
            self.modules(&format!("{krate}/src"), 2, 3);
            for t in 0..6 {
                self.text(&format!("{krate}/tests/t{t}.rs"), 6_000);
            }
            // Ignored: build output, mostly binary.
            for o in 0..30 {
                self.binary(&format!("{krate}/target/debug/deps/obj{o:02}.o"), 24_000);
                self.text(&format!("{krate}/target/debug/deps/obj{o:02}.d"), 1_000);
            }
            self.symlink("../../docs/guide/page000.md", &format!("{krate}/GUIDE.md"));
        }
        // Vendored C and JavaScript: wide directories of small files.
        for v in 0..12 {
            for f in 0..350 {
                let ext = if f % 3 == 0 { "h" } else { "c" };
                self.text(&format!("vendor/lib{v:02}/src/f{f:03}.{ext}"), 5_000);
            }
        }
        for p in 0..40 {
            for f in 0..60 {
                self.text(&format!("web/node_modules/pkg{p:02}/lib/m{f:02}.js"), 3_000);
            }
            self.text(&format!("web/node_modules/pkg{p:02}/package.json"), 800);
        }
        for d in 0..600 {
            self.text(&format!("docs/guide/page{d:03}.md"), 5_000);
        }
        // Binary assets, and a few large text files.
        for a in 0..250 {
            self.binary(&format!("assets/img/a{a:03}.png"), 80_000);
        }
        for l in 0..8 {
            self.text(&format!("data/fixtures/large{l}.json"), 8 << 20);
        }
        self.text("src/generated/bindings.rs", 6 << 20);
        self.text("build/gen/huge.log", 2 << 20);
        self.symlink("src", "src_link");
        self.symlink("does/not/exist", "dangling");
        self.symlink(".", "crates/loop");
        (self.files, self.bytes)
    }

    /// A module tree under `dir`: source files, and submodules down to `levels`.
    fn modules(&mut self, dir: &str, level: usize, levels: usize) {
        self.text(&format!("{dir}/mod.rs"), 4_000);
        let files = 4 + self.below(8);
        for f in 0..files {
            let size = 1_000 + self.below(14_000) as usize;
            self.text(&format!("{dir}/item{f}.rs"), size);
        }
        if level < levels {
            let subs = if level < 2 { 5 } else { 2 + self.below(2) };
            for s in 0..subs {
                self.modules(&format!("{dir}/m{s}"), level + 1, levels);
            }
        }
    }

    fn create(&mut self, rel: &str) -> std::io::BufWriter<std::fs::File> {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        self.files += 1;
        std::io::BufWriter::new(std::fs::File::create(path).unwrap())
    }

    /// A text file of about `size` bytes of code-like lines, with the
    /// searches' needles at fixed rates: `unreachable` in one line of 800,
    /// `fn …_unchecked(` in one of 5,000, `compatibility_hash` in one
    /// file of 3,000.
    fn text(&mut self, rel: &str, size: usize) {
        let rare = self.files % 3_000 == 1_234;
        let mut f = self.create(rel);
        let mut written = 0;
        let mut line = String::new();
        while written < size {
            line.clear();
            line.push_str("    ");
            let r = self.below(20_000);
            if r.is_multiple_of(5_000) {
                line.push_str("pub fn get_unchecked(&self, index: usize) -> &T {");
            } else {
                for _ in 0..(3 + self.below(9)) {
                    line.push_str(WORDS[self.below(WORDS.len() as u64) as usize]);
                    line.push(' ');
                }
                if r % 800 == 3 {
                    line.push_str("unreachable!()");
                }
            }
            if rare && written == 0 {
                line.push_str(" compatibility_hash");
            }
            line.push('\n');
            written += line.len();
            f.write_all(line.as_bytes()).unwrap();
        }
        self.bytes += written as u64;
    }

    /// A binary file (NULs throughout) of `size` bytes.
    fn binary(&mut self, rel: &str, size: usize) {
        let mut bytes = Vec::with_capacity(size);
        while bytes.len() < size {
            let v = self.next();
            bytes.extend_from_slice(&(v & 0x00ff_00ff_00ff_00ff).to_le_bytes());
        }
        bytes.truncate(size);
        self.create(rel).write_all(&bytes).unwrap();
        self.bytes += size as u64;
    }

    fn symlink(&self, target: &str, rel: &str) {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, path).unwrap();
    }
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
