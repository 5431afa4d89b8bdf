//! What a plugin costs by language: the Python example
//! (`plugins/examples/python-wordcount`, componentize-py) next to the Rust
//! plugins `echo`, `fs` and `search`.
//!
//! Printed once per plugin, from an empty compile cache: the `.wasm` size,
//! the compiled (cached) size, the load time (compile, then list the tools)
//! and the first call after it. Then criterion measures a warm call
//! (compiled, `InstancePre` cached, fresh instance per call) of each:
//! `per_call/echo` (no capabilities), `per_call/fs_read_file`,
//! `per_call/search_grep` and `per_call/python_word_count` on the same
//! small file, the workspace read-only.
//!
//! The Python cases run only when `target/py-plugin/python-wordcount.wasm`
//! exists: run `plugins/examples/python-wordcount/build.sh` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use warden::base::{CancelToken, Limits, sha256_hex};
use warden::capability::{FsAccess, FsGrant, Grant};
use warden::plugin::BUILTIN;
use warden::protocol::ToolOutcome;
use warden::runtime::{CallRequest, LoadedPlugin, Runtime};

/// One plugin and the call measured on it.
struct Case {
    label: &'static str,
    wasm: Vec<u8>,
    tool: &'static str,
    input: &'static str,
    needs_workspace: bool,
}

fn python_component() -> Option<Vec<u8>> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/py-plugin/python-wordcount.wasm");
    match std::fs::read(&path) {
        Ok(wasm) => Some(wasm),
        Err(_) => {
            eprintln!(
                "plugin_languages: {} is not built; run \
                 plugins/examples/python-wordcount/build.sh for the Python cases",
                path.display()
            );
            None
        }
    }
}

fn builtin(name: &str) -> Vec<u8> {
    BUILTIN
        .iter()
        .find(|b| b.name == name)
        .unwrap()
        .wasm
        .to_vec()
}

fn cases() -> Vec<Case> {
    let mut cases = vec![
        Case {
            label: "echo",
            wasm: std::fs::read(warden::test_plugins::ECHO).unwrap(),
            tool: "echo",
            input: r#"{"text":""}"#,
            needs_workspace: false,
        },
        Case {
            label: "fs_read_file",
            wasm: builtin("fs"),
            tool: "read_file",
            input: r#"{"path":"small.txt"}"#,
            needs_workspace: true,
        },
        Case {
            label: "search_grep",
            wasm: builtin("search"),
            tool: "grep",
            input: r#"{"pattern":"two","path":"small.txt"}"#,
            needs_workspace: true,
        },
    ];
    if let Some(wasm) = python_component() {
        cases.push(Case {
            label: "python_word_count",
            wasm,
            tool: "word_count",
            input: r#"{"path":"small.txt"}"#,
            needs_workspace: true,
        });
    }
    cases
}

fn call(plugin: &LoadedPlugin, case: &Case, grant: &Grant, limits: &Limits) -> ToolOutcome {
    plugin
        .call(CallRequest {
            call_id: "b".into(),
            tool: case.tool,
            input: case.input,
            grant,
            limits,
            cancel: CancelToken::new(),
            progress: None,
        })
        .outcome
}

/// The size of the compiled entry for `sha` in `cache`.
fn compiled_size(cache: &Path, sha: &str) -> u64 {
    std::fs::read_dir(cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with(sha) && name.ends_with(".cwasm")
        })
        .map(|p| std::fs::metadata(p).unwrap().len())
        .unwrap_or(0)
}

/// Load `case` into `runtime` from an empty cache and print its figures.
fn load_and_report(
    runtime: &Runtime,
    cache: &Path,
    case: &Case,
    grant: &Grant,
    limits: &Limits,
) -> Arc<LoadedPlugin> {
    let sha = sha256_hex(&case.wasm);
    let start = Instant::now();
    let plugin = runtime.load(&case.wasm, Some(&sha)).unwrap();
    let loaded = start.elapsed();
    let start = Instant::now();
    let outcome = call(&plugin, case, grant, limits);
    let first = start.elapsed();
    assert!(
        matches!(outcome, ToolOutcome::Success(_)),
        "{}: {outcome:?}",
        case.label
    );
    eprintln!(
        "plugin_languages: {:<18} wasm {:>6} KiB  compiled {:>6} KiB  load (compile + list tools) {:>8.1} ms  first call {:>7.2} ms",
        case.label,
        case.wasm.len() >> 10,
        compiled_size(cache, &sha) >> 10,
        loaded.as_secs_f64() * 1e3,
        first.as_secs_f64() * 1e3,
    );
    plugin
}

fn bench(c: &mut Criterion) {
    let cache = tempfile::tempdir().unwrap();
    let runtime = Runtime::new(cache.path().to_path_buf()).unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("small.txt"), "one\ntwo\nthree\n").unwrap();
    let ws_path: PathBuf = std::fs::canonicalize(ws.path()).unwrap();
    let limits = Limits::default();
    let none = Grant::none();
    let ro = Grant {
        network: None,
        filesystem: Some(FsGrant {
            host_dir: ws_path,
            access: FsAccess::ReadOnly,
            protected: None,
        }),
        extra_dirs: Vec::new(),
        process: None,
        interaction: None,
    };

    let mut group = c.benchmark_group("per_call");
    for case in cases() {
        let grant = if case.needs_workspace { &ro } else { &none };
        let plugin = load_and_report(&runtime, cache.path(), &case, grant, &limits);
        group.bench_function(case.label, |b| {
            b.iter(|| black_box(call(&plugin, &case, grant, &limits)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
