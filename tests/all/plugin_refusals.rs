//! What `warden plugin install` refuses, and what a call cuts from a
//! plugin's declaration, with components crafted at test time: the echo
//! plugin under another manifest (same length, so nothing else moves), and
//! an empty component that carries a manifest but exports nothing.

use std::path::{Path, PathBuf};

use serde_json::Value;
use warden::capability::MANIFEST_SECTION;
use warden::home::Home;
use warden::plugin::{Catalog, CatalogError, InstallError};
use warden::runtime::LoadError;

use crate::support::*;

/// `wasm` with its manifest replaced by `text`, padded with a TOML comment
/// to the old manifest's length.
pub(crate) fn with_manifest(wasm: &[u8], text: &str) -> Vec<u8> {
    let mut range = None;
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        if let wasmparser::Payload::CustomSection(s) = payload.unwrap()
            && s.name() == MANIFEST_SECTION
        {
            range = Some(s.data_offset()..s.data_offset() + s.data().len());
        }
    }
    let range = range.expect("the component carries a manifest");
    let mut patched = format!("{text}\n#");
    assert!(patched.len() <= range.len(), "manifest too long");
    while patched.len() < range.len() {
        patched.push('-');
    }
    let mut out = wasm.to_vec();
    out[range].copy_from_slice(patched.as_bytes());
    out
}

/// An empty component whose only content is a manifest.
pub(crate) fn hollow_component(manifest: &str) -> Vec<u8> {
    fn leb(mut n: usize, out: &mut Vec<u8>) {
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            out.push(if n == 0 { byte } else { byte | 0x80 });
            if n == 0 {
                return;
            }
        }
    }
    let mut section = Vec::new();
    leb(MANIFEST_SECTION.len(), &mut section);
    section.extend_from_slice(MANIFEST_SECTION.as_bytes());
    section.extend_from_slice(manifest.as_bytes());
    let mut wasm = b"\0asm\x0d\x00\x01\x00".to_vec();
    wasm.push(0);
    leb(section.len(), &mut wasm);
    wasm.extend(section);
    wasm
}

/// A fresh data directory seeded with the shared compile cache.
fn fresh_home() -> tempfile::TempDir {
    catalog();
    let home = tempfile::tempdir().unwrap();
    let cache = home.path().join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    for e in std::fs::read_dir(shared_home().join("cache")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), cache.join(e.file_name())).unwrap();
    }
    home
}

fn cli(home: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let o = warden(home).args(args).output().unwrap();
    (
        o.status.code(),
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
    )
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn echo_wasm() -> Vec<u8> {
    std::fs::read(warden::test_plugins::ECHO).unwrap()
}

/// The names under `<home>/plugins`, staging and backup directories included.
fn plugin_dirs(home: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(home.join("plugins"))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Installed plugin names as `warden plugin list --json` reports them.
fn listed(home: &Path) -> Vec<String> {
    let (code, out, err) = cli(home, &["plugin", "list", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    doc["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn install_refuses_a_tool_another_plugin_provides() {
    let home = fresh_home();
    let (code, _, err) = cli(
        home.path(),
        &["plugin", "install", warden::test_plugins::ECHO],
    );
    assert_eq!(code, Some(0), "{err}");
    let before = (listed(home.path()), plugin_dirs(home.path()));

    let dir = tempfile::tempdir().unwrap();
    let twin = with_manifest(&echo_wasm(), "name = \"echo-twin\"\nversion = \"0.2.0\"");
    let twin = write(dir.path(), "twin.wasm", &twin);
    let twin_arg = twin.to_str().unwrap();
    let (code, out, err) = cli(home.path(), &["plugin", "install", twin_arg]);
    assert_eq!(code, Some(5), "{out}");
    assert_eq!(
        err,
        format!(
            "warden: cannot install {twin_arg}: tool echo is already provided by plugin echo; \
             remove that plugin first\n"
        )
    );
    let (_, out, _) = cli(home.path(), &["plugin", "install", twin_arg, "--json"]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["type"], "error", "{doc}");
    assert_eq!(doc["kind"], "failure", "{doc}");
    assert!(
        doc["message"]
            .as_str()
            .unwrap()
            .ends_with("tool echo is already provided by plugin echo; remove that plugin first"),
        "{doc}"
    );

    let catalog = Catalog::open(&Home::at(home.path().to_path_buf())).unwrap();
    match catalog.prepare_install(&twin).map(|c| c.sha256) {
        Err(CatalogError::Install(InstallError::ToolConflict { tool, plugin })) => {
            assert_eq!((tool.as_str(), plugin.as_str()), ("echo", "echo"));
        }
        other => panic!("expected a tool conflict, got {other:?}"),
    }
    assert_eq!((listed(home.path()), plugin_dirs(home.path())), before);
    assert_eq!(before.1, ["echo"]);
}

#[test]
fn install_refuses_a_component_that_is_not_a_plugin() {
    let home = fresh_home();
    let dir = tempfile::tempdir().unwrap();
    let hollow = hollow_component("name = \"hollow\"\nversion = \"0.1.0\"\n");
    let hollow = write(dir.path(), "hollow.wasm", &hollow);
    let arg = hollow.to_str().unwrap();
    let (code, _, err) = cli(home.path(), &["plugin", "install", arg]);
    assert_eq!(code, Some(5));
    assert_eq!(
        err,
        format!(
            "warden: cannot install {arg}: not a Warden tool plugin: it does not export \
             `warden:tool/plugin`; build it with warden-sdk\n"
        )
    );
    let catalog = Catalog::open(&Home::at(home.path().to_path_buf())).unwrap();
    match catalog.prepare_install(&hollow).map(|c| c.sha256) {
        Err(CatalogError::Install(InstallError::Load(LoadError::NotAPlugin))) => {}
        other => panic!("expected NotAPlugin, got {other:?}"),
    }
    assert_eq!(
        listed(home.path()),
        ["fs", "search", "shell", "web", "agent", "memory"]
    );
    assert!(
        plugin_dirs(home.path()).is_empty(),
        "{:?}",
        plugin_dirs(home.path())
    );
}

#[test]
fn a_declared_network_capability_is_cut_and_the_cut_recorded() {
    let home = fresh_home();
    let dir = tempfile::tempdir().unwrap();
    let manifest = "name = \"echo-net\"\nversion = \"0.1.0\"\n[capabilities]\n\
                    network = [\"https://api.example.com:443\"]";
    let net = write(
        dir.path(),
        "net.wasm",
        &with_manifest(&echo_wasm(), manifest),
    );
    let (code, _, err) = cli(home.path(), &["plugin", "install", net.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");

    let sb = Sandbox::new();
    let ws = sb.ws().display().to_string();
    let input = r#"{"text":"hi"}"#;
    let args = ["tool", "call", "echo", "-w", &ws, "--input", input];
    let (code, out, err) = cli(home.path(), &[&args[..], &["--json"]].concat());
    assert_eq!(code, Some(0), "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["plugin"], "echo-net");
    let cuts = doc["grant_cuts"].as_array().unwrap();
    assert_eq!(cuts.len(), 1, "{doc}");
    assert_eq!(cuts[0]["declared"], "network: https://api.example.com:443");
    assert!(
        cuts[0]["granted"]
            .as_str()
            .unwrap()
            .starts_with("no network"),
        "{doc}"
    );
    assert!(doc["grant"]["filesystem"].is_null(), "{doc}");
    // A human sees the cut with -v, and not without.
    let (code, _, err) = cli(home.path(), &args);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("note:"), "{err}");
    let (code, _, err) = cli(home.path(), &[&args[..], &["-v"]].concat());
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains(
            "warden: note: declared network: https://api.example.com:443 → granted no network"
        ),
        "{err}"
    );
}
