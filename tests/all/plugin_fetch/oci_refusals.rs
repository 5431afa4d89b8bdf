//! Bad artifacts and registry errors: each a one-line error; nothing is
//! installed and the lockfile and plugins dir stay byte for byte.

use std::sync::Arc;

use super::http::{respond, serve};
use super::registry::Registry;
use super::{CORE_MODULE, installed_state};
use crate::support::*;

const ECHO: &str = warden::test_plugins::ECHO;
const WASM_CONFIG: &str = "application/vnd.wasm.config.v0+json";

/// `warden plugin install REFERENCE --allow-http` fails with one line
/// containing `expected`, and changes nothing.
fn refused(home: &std::path::Path, reference: &str, flags: &[&str], expected: &str) {
    let before = installed_state(home);
    let mut args = vec!["plugin", "install", reference];
    args.extend(flags);
    let (code, out, err) = cli(home, &args);
    assert_eq!(code, Some(5), "{reference}: {out}{err}");
    assert!(
        err.contains(expected) && err.trim_end().lines().count() == 1,
        "{reference}: expected one line saying {expected:?}, got {err:?}"
    );
    assert_eq!(
        installed_state(home),
        before,
        "{reference} changed the data dir"
    );
}

#[test]
fn bad_artifacts_from_a_real_registry_install_nothing() {
    let registry = Registry::start();
    let home = fresh_home();
    let (code, _, err) = cli(home.path(), &["plugin", "install", ECHO]);
    assert_eq!(code, Some(0), "{err}");
    let http = ["--allow-http"];
    let wasm = std::fs::read(ECHO).unwrap();

    refused(
        home.path(),
        &registry.reference("none/such:1"),
        &http,
        "manifest unknown",
    );
    refused(
        home.path(),
        &registry.reference("none/such:1"),
        &[],
        "--allow-http",
    );

    registry.push_raw(
        "wrong/type:1",
        WASM_CONFIG,
        b"{}",
        "application/octet-stream",
        &wasm,
        None,
    );
    refused(
        home.path(),
        &registry.reference("wrong/type:1"),
        &http,
        "its layer is application/octet-stream, not application/wasm",
    );
    registry.push_raw(
        "wrong/config:1",
        "application/vnd.oci.image.config.v1+json",
        b"{}",
        "application/wasm",
        &wasm,
        None,
    );
    refused(
        home.path(),
        &registry.reference("wrong/config:1"),
        &http,
        "not application/vnd.wasm.config.v0+json",
    );
    registry.push_raw(
        "core/module:1",
        WASM_CONFIG,
        b"{}",
        "application/wasm",
        CORE_MODULE,
        None,
    );
    refused(
        home.path(),
        &registry.reference("core/module:1"),
        &http,
        "core WebAssembly module, not a component",
    );
    registry.push_raw(
        "text/blob:1",
        WASM_CONFIG,
        b"{}",
        "application/wasm",
        b"hello",
        None,
    );
    refused(
        home.path(),
        &registry.reference("text/blob:1"),
        &http,
        "not WebAssembly",
    );
    // A manifest that says its layer is larger than the cap is refused
    // before anything is downloaded.
    registry.push_raw(
        "huge/layer:1",
        WASM_CONFIG,
        b"{}",
        "application/wasm",
        b"\0asm\x0d\0\x01\0-huge",
        Some(65 * 1024 * 1024),
    );
    refused(
        home.path(),
        &registry.reference("huge/layer:1"),
        &http,
        "larger than the 64 MiB cap",
    );
}

#[test]
fn a_blob_cut_short_or_changed_in_the_registry_is_refused() {
    let registry = Registry::start();
    let home = fresh_home();
    let wasm = std::fs::read(ECHO).unwrap();
    let digest = format!("sha256:{}", warden::base::sha256_hex(&wasm));
    registry.push_raw(
        "echo/a:1",
        WASM_CONFIG,
        b"{}",
        "application/wasm",
        &wasm,
        None,
    );
    let reference = registry.reference("echo/a:1");
    let http = ["--allow-http"];
    // The component is pinned by --sha256 too.
    refused(
        home.path(),
        &reference,
        &["--allow-http", "--sha256", &"ab".repeat(32)],
        "digest mismatch",
    );
    let blob = registry.blob_path(&digest);
    let mut changed = wasm.clone();
    let last = changed.len() - 1;
    changed[last] ^= 0xff;
    std::fs::write(&blob, &changed).unwrap();
    refused(home.path(), &reference, &http, "digest mismatch");
    std::fs::write(&blob, &wasm[..wasm.len() / 2]).unwrap();
    refused(home.path(), &reference, &http, "was cut short");
    assert!(!home.path().join("plugins.lock").exists());
}

#[test]
fn registry_errors_are_named_and_install_nothing() {
    let home = fresh_home();
    let (code, _, err) = cli(home.path(), &["plugin", "install", ECHO]);
    assert_eq!(code, Some(0), "{err}");
    for (status, expected) in [
        ("401 Unauthorized", "401 Unauthorized"),
        ("500 Internal Server Error", "500 Internal Server Error"),
    ] {
        let port = serve(
            20,
            Arc::new(move |_, stream| respond(stream, status, &[], b"")),
        );
        let reference = format!("oci://127.0.0.1:{port}/tools/echo:1");
        refused(home.path(), &reference, &["--allow-http"], expected);
    }
}

#[test]
fn push_refuses_what_is_not_a_warden_component() {
    let registry = Registry::start();
    let home = fresh_home();
    let dir = tempfile::tempdir().unwrap();
    let core = dir.path().join("core.wasm");
    std::fs::write(&core, CORE_MODULE).unwrap();
    let tag = registry.reference("core/pushed:1");
    let (code, _, err) = cli(
        home.path(),
        &[
            "plugin",
            "push",
            core.to_str().unwrap(),
            &tag,
            "--allow-http",
        ],
    );
    assert_eq!(code, Some(5), "{err}");
    assert!(err.contains("cannot push"), "{err}");
    refused(home.path(), &tag, &["--allow-http"], "manifest unknown");
}
