//! `warden plugin install | list | inspect | remove`, the compile cache,
//! and refusal of components that do not fit.

use std::path::{Path, PathBuf};

use serde_json::Value;
use warden::home::Home;
use warden::plugin::Catalog;
use warden::runtime::LoadError;

use crate::support::*;

fn echo_path() -> &'static str {
    warden::test_plugins::ECHO
}

#[test]
fn install_call_list_inspect_remove() {
    let home = fresh_home();
    let (code, out, err) = cli(home.path(), &["plugin", "install", echo_path()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.starts_with("installed echo 0.1.0\n  tools: echo\n  sha256: "),
        "{out}"
    );

    let sb = Sandbox::new();
    let ws = sb.ws().display().to_string();
    let (code, out, _) = cli(
        home.path(),
        &[
            "tool",
            "call",
            "echo",
            "-w",
            &ws,
            "--input",
            r#"{"text":"hi ","times":3}"#,
        ],
    );
    assert_eq!((code, out.as_str()), (Some(0), "hi hi hi \n"));

    let (_, out, _) = cli(home.path(), &["plugin", "list", "--json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let names: Vec<_> = v["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["fs", "search", "shell", "web", "agent", "memory", "echo"]
    );
    assert_eq!(v["plugins"][6]["builtin"], false);

    let (code, out, _) = cli(home.path(), &["plugin", "inspect", "echo", "--json"]);
    assert_eq!(code, Some(0));
    let v: Value = serde_json::from_str(&out).unwrap();
    let wasm = std::fs::read(echo_path()).unwrap();
    assert_eq!(v["sha256"], warden::base::sha256_hex(&wasm));
    assert_eq!(v["size"], wasm.len());
    assert_eq!(v["wit_version"], "0.2.2");
    assert_eq!(v["manifest"]["capabilities"]["filesystem"], "none");
    let imports: Vec<_> = v["imports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert!(imports.contains(&"warden:tool/types@0.2.2"), "{imports:?}");
    assert!(
        !imports.iter().any(|i| i.starts_with("wasi:filesystem")),
        "{imports:?}"
    );

    let (code, out, _) = cli(home.path(), &["plugin", "remove", "echo"]);
    assert_eq!((code, out.as_str()), (Some(0), "removed echo 0.1.0\n"));
    let (code, _, err) = cli(
        home.path(),
        &["tool", "call", "echo", "--input", r#"{"text":"x"}"#],
    );
    assert_eq!(code, Some(2));
    assert!(err.contains("unknown tool `echo`"), "{err}");
    let (code, _, err) = cli(home.path(), &["plugin", "remove", "echo"]);
    assert_eq!(code, Some(5));
    assert!(err.contains("no installed plugin named echo"), "{err}");
}

#[test]
fn inspect_a_file_shows_imports_and_capabilities() {
    let home = fresh_home();
    let (code, out, err) = cli(
        home.path(),
        &["plugin", "inspect", warden::test_plugins::HOSTILE],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("hostile 0.1.0\n"), "{out}");
    let fs_row = out
        .lines()
        .find(|l| l.trim_start().starts_with("filesystem "))
        .unwrap();
    assert!(
        fs_row.contains(" read-write ") && fs_row.contains("yes: the directories it is granted"),
        "{fs_row}"
    );
    let fs_line = out
        .lines()
        .find(|l| l.trim_start().starts_with("wasi:filesystem/types@"))
        .unwrap();
    assert!(
        fs_line.ends_with("can touch the directories it is granted"),
        "{fs_line}"
    );
    let sockets = out
        .lines()
        .find(|l| l.trim_start().starts_with("wasi:sockets/tcp@"))
        .unwrap();
    assert!(
        sockets.ends_with("raw network sockets: never linked, calls trap"),
        "{sockets}"
    );
    // Inspecting a file does not install it.
    let (_, out, _) = cli(home.path(), &["plugin", "list"]);
    assert!(!out.contains("hostile"), "{out}");
}

#[test]
fn builtins_cannot_be_replaced_or_removed() {
    let home = fresh_home();
    let (code, _, err) = cli(home.path(), &["plugin", "remove", "fs"]);
    assert_eq!(code, Some(5));
    assert!(err.contains("fs is a built-in plugin"), "{err}");
    let (code, _, err) = cli(
        home.path(),
        &["plugin", "install", warden::test_plugins::FS],
    );
    assert_eq!(code, Some(5));
    assert!(err.contains("fs is a built-in plugin"), "{err}");
}

#[test]
fn install_refuses_what_does_not_fit() {
    let home = fresh_home();
    let dir = tempfile::tempdir().unwrap();
    let garbage = write(dir.path(), "garbage.wasm", b"not wasm at all");
    let (code, _, err) = cli(
        home.path(),
        &["plugin", "install", garbage.to_str().unwrap()],
    );
    assert_eq!(code, Some(5));
    assert!(
        err.contains("cannot install") && err.contains("not a WebAssembly file"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "one line: {err}");

    let core = write(dir.path(), "core.wasm", b"\0asm\x01\0\0\0");
    let (code, _, err) = cli(home.path(), &["plugin", "install", core.to_str().unwrap()]);
    assert_eq!(code, Some(5));
    assert!(
        err.contains("a core WebAssembly module, not a component"),
        "{err}"
    );

    let (code, _, err) = cli(home.path(), &["plugin", "install", "/no/such/file.wasm"]);
    assert_eq!(code, Some(5));
    assert!(err.contains("cannot read /no/such/file.wasm"), "{err}");
    let (_, out, _) = cli(home.path(), &["plugin", "list"]);
    assert_eq!(out.lines().count(), 7, "{out}");
}

#[test]
fn an_unsupported_wit_version_is_refused_clearly() {
    let wasm = std::fs::read(warden::test_plugins::FUTURE).unwrap();
    let err = catalog().runtime().load(&wasm, None).unwrap_err();
    assert!(
        matches!(&err, LoadError::UnsupportedWit { found } if found == "0.3.0"),
        "{err:?}"
    );
    insta::assert_snapshot!("unsupported_wit_error", err.to_string());
}

#[test]
fn a_changed_component_on_disk_is_refused() {
    let home = fresh_home();
    let (code, _, err) = cli(home.path(), &["plugin", "install", echo_path()]);
    assert_eq!(code, Some(0), "{err}");
    // The compiled cache stays: it must not hide the change.
    let stored = home.path().join("plugins/echo/component.wasm");
    let mut bytes = std::fs::read(&stored).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&stored, bytes).unwrap();
    let (code, _, err) = cli(
        home.path(),
        &["tool", "call", "echo", "--input", r#"{"text":"x"}"#],
    );
    assert_eq!(code, Some(5), "{err}");
    assert!(
        err.contains("changed on disk since it was approved")
            && err.contains("`warden plugin approve echo`"),
        "{err}"
    );
}

#[test]
fn compiled_components_are_cached_and_a_corrupt_entry_is_rebuilt() {
    let home = home_with_own_cache();
    let cwasm: Vec<PathBuf> = std::fs::read_dir(home.path().join("cache"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cwasm"))
        .collect();
    assert!(cwasm.len() >= 2, "{cwasm:?}");
    let name = cwasm[0].file_name().unwrap().to_str().unwrap();
    assert!(
        name.split('.')
            .nth(1)
            .is_some_and(|tag| tag.starts_with("wasmtime-")),
        "{name}"
    );
    for p in &cwasm {
        std::fs::write(p, b"corrupt").unwrap();
    }
    let catalog = Catalog::open(&Home::at(home.path().to_path_buf())).unwrap();
    let (entry, _) = catalog.find_tool("read_file").unwrap();
    let plugin = catalog.load(entry).unwrap();
    assert_eq!(plugin.name(), "fs");
    let rebuilt = std::fs::read(
        cwasm
            .iter()
            .find(|p| p.to_str().unwrap().contains(&plugin.sha256))
            .unwrap(),
    )
    .unwrap();
    assert!(
        rebuilt.len() > 1000,
        "the corrupt cache entry was not rebuilt"
    );
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn the_plugin_guide_example_is_the_built_echo_plugin() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let guide = std::fs::read_to_string(root.join("docs/plugins.md")).unwrap();
    let source = std::fs::read_to_string(root.join("plugins/examples/echo/src/lib.rs")).unwrap();
    assert!(
        guide.contains(&format!("```rust\n{source}```")),
        "docs/plugins.md's plugin example differs from plugins/examples/echo"
    );
    assert!(
        source.lines().count() < 40,
        "the minimal plugin must stay under 40 lines"
    );
}
