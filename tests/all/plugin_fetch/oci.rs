//! `plugin push`, `plugin install oci://…` and `plugin update` against a
//! real registry on loopback.

use super::installed_state;
use super::registry::Registry;
use crate::support::*;

const ECHO: &str = warden::test_plugins::ECHO;
const ECHO_NEXT: &str = warden::test_plugins::ECHO_NEXT;

/// The value of `key = "…"` in the lockfile's `[plugins.echo]` table.
fn locked(home: &std::path::Path, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(home.join("plugins.lock")).ok()?;
    let lock: toml::Value = toml::from_str(&text).unwrap();
    lock["plugins"]["echo"]
        .get(key)
        .and_then(|v| v.as_str())
        .map(str::to_string)
}

fn push(home: &std::path::Path, file: &str, reference: &str) -> serde_json::Value {
    let (code, out, err) = cli(
        home,
        &["plugin", "push", file, reference, "--allow-http", "--json"],
    );
    assert_eq!(code, Some(0), "{out}{err}");
    serde_json::from_str::<serde_json::Value>(&out).unwrap()["pushed"].clone()
}

#[test]
fn push_install_call_and_update_through_a_real_registry() {
    let registry = Registry::start();
    let home = fresh_home();
    let tag = registry.reference("tools/echo:stable");

    let pushed = push(home.path(), ECHO, &tag);
    let first = pushed["manifest_digest"].as_str().unwrap().to_string();
    // The layout `wkg oci push` writes.
    let manifest = registry.manifest("tools/echo:stable");
    assert_eq!(
        manifest["mediaType"],
        "application/vnd.oci.image.manifest.v1+json"
    );
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.wasm.config.v0+json"
    );
    assert_eq!(manifest["layers"].as_array().unwrap().len(), 1);
    assert_eq!(manifest["layers"][0]["mediaType"], "application/wasm");
    assert_eq!(
        manifest["annotations"]["org.opencontainers.image.version"],
        "0.1.0"
    );
    let echo_sha = warden::base::sha256_hex(&std::fs::read(ECHO).unwrap());
    assert_eq!(
        manifest["layers"][0]["digest"],
        format!("sha256:{echo_sha}")
    );

    let (code, out, err) = cli(home.path(), &["plugin", "install", &tag, "--allow-http"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.starts_with("installed echo 0.1.0\n"), "{out}");
    assert_eq!(locked(home.path(), "source").as_deref(), Some(tag.as_str()));
    assert_eq!(
        locked(home.path(), "manifest_digest").as_deref(),
        Some(first.as_str())
    );
    assert_eq!(locked(home.path(), "sha256"), Some(echo_sha));
    let (code, out, err) = cli(
        home.path(),
        &["tool", "call", "echo", "--input", r#"{"text":"hi"}"#],
    );
    assert_eq!((code, out.as_str()), (Some(0), "hi\n"), "{err}");

    // Same digest: nothing changes.
    let before = installed_state(home.path());
    let (code, out, err) = cli(home.path(), &["plugin", "update", "echo", "--allow-http"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("echo is up to date"), "{out}");
    assert_eq!(installed_state(home.path()), before);

    // The tag moves to a version that may do more.
    push(home.path(), ECHO_NEXT, &tag);
    // Installing the same reference again must match the pinned digest.
    let (code, out, err) = cli(home.path(), &["plugin", "install", &tag, "--allow-http"]);
    assert_eq!(code, Some(5), "{out}{err}");
    assert!(
        err.contains("the tag moved")
            && err.contains(&first)
            && err.contains("warden plugin update"),
        "{err}"
    );
    assert_eq!(installed_state(home.path()), before);
    // So must a reference that pins the old digest itself.
    let pinned = format!("{tag}@{first}");
    let fresh = fresh_home();
    let (code, _, err) = cli(
        fresh.path(),
        &["plugin", "install", &pinned, "--allow-http"],
    );
    assert_eq!(code, Some(5), "{err}");
    assert!(err.contains("the tag moved"), "{err}");
    assert!(!fresh.path().join("plugins.lock").exists());

    // An update shows the diff, and without a terminal or --yes changes nothing.
    for extra in [None, Some("--non-interactive")] {
        let mut args = vec!["plugin", "update", "echo", "--allow-http"];
        args.extend(extra);
        let (code, out, err) = cli(home.path(), &args);
        assert_eq!(code, Some(3), "{out}{err}");
        assert!(
            out.contains("update echo: 0.1.0 → 0.2.0")
                && out.contains("+ declared filesystem: none → read"),
            "{out}"
        );
        assert!(err.contains("run again with --yes"), "{err}");
        assert_eq!(installed_state(home.path()), before);
    }
    let (code, out, err) = cli(
        home.path(),
        &["plugin", "update", "echo", "--allow-http", "--yes"],
    );
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("upgraded echo 0.1.0 → 0.2.0"), "{out}");
    let second = locked(home.path(), "manifest_digest").unwrap();
    assert_ne!(second, first);
    assert_eq!(locked(home.path(), "source").as_deref(), Some(tag.as_str()));
    let (_, out, _) = cli(home.path(), &["plugin", "list", "--json"]);
    assert!(out.contains("\"version\":\"0.2.0\""), "{out}");
}

#[test]
fn an_artifact_pushed_by_another_client_in_the_wkg_layout_installs() {
    let registry = Registry::start();
    let home = fresh_home();
    let wasm = std::fs::read(ECHO).unwrap();
    let config = br#"{"created":"2026-01-01T00:00:00Z","author":null,"architecture":"wasm","os":"wasip2","layerDigests":[],"component":null}"#;
    registry.push_raw(
        "other/echo:1",
        "application/vnd.wasm.config.v0+json",
        config,
        "application/wasm",
        &wasm,
        None,
    );
    let (code, out, err) = cli(
        home.path(),
        &[
            "plugin",
            "install",
            &registry.reference("other/echo:1"),
            "--allow-http",
        ],
    );
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.starts_with("installed echo 0.1.0\n"), "{out}");
}
