//! `warden plugin new` and `warden plugin build`, with real cargo builds:
//! a new crate builds outside this repository (offline, from the vendored
//! SDK and lockfile), its component counts a workspace file when tried and
//! when installed under a policy, its own unit test passes natively, and
//! every refusal is clear and writes nothing.
//!
//! The builds share one target directory under the repository's `target/`,
//! so the SDK's dependencies compile once for all these tests.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::json_schemas::assert_valid;
use crate::support::*;

/// The target directory every build here shares.
fn shared_target() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
        .join("plugin-authoring")
}

/// `warden ARGS` in `cwd` with the shared target directory, offline: the
/// vendored lockfile pins crates the guest workspace already fetched.
pub(crate) fn author(home: &Path, cwd: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let o = authoring_env(warden(home))
        .current_dir(cwd)
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
    )
}

fn authoring_env(mut cmd: Command) -> Command {
    cmd.env("CARGO_TARGET_DIR", shared_target())
        .env("CARGO_NET_OFFLINE", "true")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS");
    cmd
}

/// A directory outside the system temporary directory (which a confined
/// `tool call` may read anyway), so the component is let through by name.
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// One crate made by `plugin new wc` and built by `plugin build --json`:
/// (the crate's parent, kept for the run; the build's JSON document).
pub(crate) fn built() -> &'static (PathBuf, Value) {
    static BUILT: OnceLock<(PathBuf, Value)> = OnceLock::new();
    BUILT.get_or_init(|| {
        let _heavy = exclusive();
        let home = fresh_home();
        let parent = scratch().keep();
        let (code, out, err) = author(home.path(), &parent, &["plugin", "new", "wc"]);
        assert_eq!(code, Some(0), "{out}{err}");
        assert!(
            out.contains("target/wasm32-wasip2/release/wc.wasm"),
            "{out}"
        );
        let (code, out, err) = author(home.path(), &parent, &["plugin", "build", "wc", "--json"]);
        assert_eq!(code, Some(0), "{out}{err}");
        let doc = assert_valid("plugin-build.schema.json", &out).remove(0);
        (parent, doc)
    })
}

fn wasm() -> String {
    built().1["wasm"].as_str().unwrap().to_string()
}

#[test]
fn a_new_plugin_builds_into_a_component_that_counts_a_workspace_file() {
    let doc = &built().1;
    assert!(wasm().ends_with("/wasm32-wasip2/release/wc.wasm"), "{doc}");
    assert!(
        wasm().starts_with(shared_target().to_str().unwrap()),
        "{doc}"
    );
    assert_eq!(doc["meta"]["manifest"]["name"], "wc");
    assert_eq!(doc["meta"]["tools"][0]["name"], "word_count", "{doc}");
    // Least privilege: it declares reading the workspace, and no more.
    let declared = &doc["capabilities"]["declared"];
    assert_eq!(declared["filesystem"], "read", "{doc}");
    assert_eq!(declared["network"], json!([]), "{doc}");
    assert_eq!(doc["capabilities"]["imports"]["http"], false, "{doc}");
    // The initial memory `plugin build` sets: 4 MiB, 64 pages.
    let bytes = std::fs::read(wasm()).unwrap();
    assert!(
        initial_pages(&bytes).contains(&64),
        "{:?}",
        initial_pages(&bytes)
    );

    let home = fresh_home();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "one two\nthree\n").unwrap();
    let (code, out, err) = cli(
        home.path(),
        &[
            "tool",
            "call",
            "--plugin",
            &wasm(),
            "word_count",
            "-w",
            ws.path().to_str().unwrap(),
            "--input",
            r#"{"path":"notes.txt"}"#,
            "--non-interactive",
            "--json",
        ],
    );
    assert_eq!(code, Some(0), "{out}{err}");
    let call = &assert_valid("tool-call.schema.json", &out)[0];
    let counts = json!({"lines": 2, "words": 3, "bytes": 14});
    assert_eq!(call["outcome"]["structured"], counts, "{call}");
    assert_eq!(call["origin"]["type"], "uninstalled", "{call}");
}

/// The initial page counts of the memories a component's core modules define.
fn initial_pages(wasm: &[u8]) -> Vec<u64> {
    let mut pages = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        if let Ok(wasmparser::Payload::MemorySection(reader)) = payload {
            pages.extend(reader.into_iter().map(|m| m.unwrap().initial));
        }
    }
    pages
}

#[test]
fn the_human_build_report_shows_the_capabilities_and_ends_with_the_path() {
    let (parent, _) = built();
    let home = fresh_home();
    let (code, out, err) = author(home.path(), &parent.join("wc"), &["plugin", "build"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("built wc 0.1.0"), "{out}");
    assert!(out.contains("filesystem"), "{out}");
    assert_eq!(out.lines().last(), Some(wasm().as_str()), "{out}");
}

#[test]
fn the_new_crate_unit_test_passes_natively() {
    let (parent, _) = built();
    let _heavy = exclusive();
    let o = authoring_env(Command::new(env!("CARGO")))
        .current_dir(parent.join("wc"))
        .args(["test", "--locked"])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{text}");
    assert!(text.contains("test result: ok. 1 passed"), "{text}");
}

#[test]
fn an_installed_new_plugin_counts_under_a_policy_and_reads_nothing_outside() {
    let home = fresh_home();
    let (code, out, err) = cli(home.path(), &["plugin", "install", &wasm()]);
    assert_eq!(code, Some(0), "{out}{err}");
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "top secret words\n").unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "a b\n").unwrap();
    std::os::unix::fs::symlink(&secret, ws.path().join("link.txt")).unwrap();

    let count = |path: &str| {
        let input = json!({ "path": path }).to_string();
        let (code, out, err) = cli(
            home.path(),
            &[
                "tool",
                "call",
                "word_count",
                "--policy",
                "read-only",
                "-w",
                ws.path().to_str().unwrap(),
                "--input",
                &input,
                "--non-interactive",
                "--json",
            ],
        );
        let doc = assert_valid("tool-call.schema.json", &out).remove(0);
        (code, doc, err)
    };
    let (code, doc, err) = count("notes.txt");
    assert_eq!(code, Some(0), "{doc}{err}");
    assert_eq!(doc["plugin"], "wc");
    assert_eq!(
        doc["outcome"]["structured"],
        json!({"lines": 1, "words": 2, "bytes": 4})
    );
    let climb = format!(
        "../{}/secret.txt",
        outside.path().file_name().unwrap().to_str().unwrap()
    );
    for path in [climb.as_str(), secret.to_str().unwrap(), "link.txt"] {
        let (code, doc, err) = count(path);
        assert_eq!(code, Some(1), "{path}: {doc}{err}");
        assert_eq!(doc["outcome"]["kind"], "permission_denied", "{path}: {doc}");
        assert!(!doc.to_string().contains("top secret"), "{path}: {doc}");
    }
}

/// The names under `dir`, recursively, with their contents.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut all: Vec<_> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .map(|p| {
            let bytes = if p.is_file() {
                std::fs::read(&p).unwrap()
            } else {
                Vec::new()
            };
            (p, bytes)
        })
        .collect();
    all.sort();
    all
}

#[test]
fn plugin_new_refuses_a_bad_name_and_a_non_empty_dir_and_writes_nothing() {
    let home = fresh_home();
    let parent = tempfile::tempdir().unwrap();
    std::fs::create_dir(parent.path().join("taken")).unwrap();
    std::fs::write(parent.path().join("taken/keep.txt"), "mine").unwrap();
    let before = snapshot(parent.path());

    for (args, says) in [
        (
            &["plugin", "new", "Bad/Name"][..],
            "invalid plugin name \"Bad/Name\"",
        ),
        (&["plugin", "new", "-x"][..], ""),
        (
            &["plugin", "new", "ok", "--dir", "taken"][..],
            "taken already exists and is not empty",
        ),
        (
            &["plugin", "new", "taken"][..],
            "already exists and is not empty",
        ),
        (&["plugin", "new", "x", "--dir", "taken/keep.txt"][..], ""),
    ] {
        let (code, out, err) = author(home.path(), parent.path(), args);
        assert_ne!(code, Some(0), "{args:?}: {out}{err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(snapshot(parent.path()), before, "{args:?} wrote something");
    }
    // An empty directory is fine, and stays the same directory (a shell
    // may be in it), not one renamed over it.
    use std::os::unix::fs::MetadataExt;
    std::fs::create_dir(parent.path().join("empty")).unwrap();
    let inode = std::fs::metadata(parent.path().join("empty"))
        .unwrap()
        .ino();
    let (code, out, err) = author(
        home.path(),
        parent.path(),
        &["plugin", "new", "ok", "--dir", "empty"],
    );
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        parent
            .path()
            .join("empty/vendor/warden-sdk/src/lib.rs")
            .is_file()
    );
    let after = std::fs::metadata(parent.path().join("empty"))
        .unwrap()
        .ino();
    assert_eq!(after, inode);
    let names: Vec<_> = std::fs::read_dir(parent.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(!names.iter().any(|n| n.starts_with(".warden")), "{names:?}");
}

#[test]
fn plugin_build_refuses_a_dir_without_a_crate_and_reports_a_failed_build() {
    let home = fresh_home();
    let dir = scratch();
    let (code, out, err) = author(home.path(), dir.path(), &["plugin", "build", "--json"]);
    assert_eq!(code, Some(2), "{out}{err}");
    let doc = &assert_valid("plugin-build.schema.json", &out)[0];
    assert_eq!(doc["type"], "error");
    assert!(
        doc["message"]
            .as_str()
            .unwrap()
            .contains("is not a Rust crate"),
        "{doc}"
    );

    let (code, out, err) = author(home.path(), dir.path(), &["plugin", "new", "broken"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let lib = dir.path().join("broken/src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(&lib, text.replace("text.len()", "text.no_such_method()")).unwrap();
    let _heavy = exclusive();
    let (code, out, err) = author(
        home.path(),
        &dir.path().join("broken"),
        &["plugin", "build"],
    );
    assert_eq!(code, Some(5), "{out}{err}");
    assert!(
        err.contains("no_such_method"),
        "cargo's own messages on stderr: {err}"
    );
    assert!(
        err.contains("warden: cargo build failed (exit status: 101)"),
        "{err}"
    );
    assert!(out.is_empty(), "{out}");

    // Mended, and without the scaffold's build script: `plugin build`
    // itself starts the component with 4 MiB (64 pages).
    std::fs::write(&lib, text).unwrap();
    std::fs::remove_file(dir.path().join("broken/build.rs")).unwrap();
    let (code, out, err) = author(
        home.path(),
        &dir.path().join("broken"),
        &["plugin", "build", "--json"],
    );
    assert_eq!(code, Some(0), "{out}{err}");
    let doc = &assert_valid("plugin-build.schema.json", &out)[0];
    let bytes = std::fs::read(doc["wasm"].as_str().unwrap()).unwrap();
    assert!(
        initial_pages(&bytes).contains(&64),
        "{:?}",
        initial_pages(&bytes)
    );
}

#[test]
fn the_sdk_guide_example_is_the_new_crate_code() {
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/plugins.md"))
            .unwrap();
    let marker = "<!-- the scaffold's src/lib.rs: tests/all/plugin_authoring.rs keeps them equal -->\n```rust\n";
    let start = docs.find(marker).expect("the guide's example is marked") + marker.len();
    let block = &docs[start..start + docs[start..].find("```\n").unwrap()];
    assert_eq!(block, warden::plugin::scaffold::GUIDE_EXAMPLE);
    assert!(
        block.lines().count() <= 40,
        "the guide's plugin is {} lines",
        block.lines().count()
    );
    // Every error kind a tool can return is in the guide's table.
    for kind in [
        "invalid-input",
        "not-found",
        "permission-denied",
        "io",
        "timeout",
        "internal",
        "cancelled",
        "unsupported",
        "limit-exceeded",
    ] {
        assert!(
            docs.contains(&format!("| `{kind}` |")),
            "{kind} missing from the error table"
        );
    }
}

#[test]
fn plugin_build_adds_a_missing_target_with_rustup_and_says_when_that_fails() {
    use std::os::unix::fs::PermissionsExt;
    let home = fresh_home();
    let dir = scratch();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    // A toolchain whose sysroot lacks wasm32-wasip2, and a rustup that
    // records what it was asked and fails.
    let sysroot = dir.path().join("sysroot");
    std::fs::create_dir(&sysroot).unwrap();
    let asked = dir.path().join("asked");
    let script = |name: &str, body: String| {
        let path = bin.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    };
    let rustc = script("rustc", format!("echo {}", sysroot.display()));
    script(
        "rustup",
        format!("echo \"$@\" > {}; exit 1", asked.display()),
    );
    let krate = dir.path().join("crate");
    std::fs::create_dir(&krate).unwrap();
    std::fs::write(krate.join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let o = warden(home.path())
        .current_dir(&krate)
        .env("RUSTC", &rustc)
        .env("PATH", path)
        .args(["plugin", "build"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(5), "{err}");
    assert!(
        err.contains("`rustup target add wasm32-wasip2` failed (exit status: 1)"),
        "{err}"
    );
    let asked = std::fs::read_to_string(&asked).unwrap();
    assert_eq!(asked.trim(), "target add wasm32-wasip2");
}
