//! An OCI pull reads the manifest and the layer itself, so a registry that
//! sends either to another host is refused like a URL install, and a
//! manifest past its cap is not read to the end. The registry here is the
//! small loopback server, serving a real component in the Wasm OCI layout.

use std::sync::Arc;

use super::http::{respond, respond_endless, serve};
use super::installed_state;
use crate::support::*;

const ECHO: &str = warden::test_plugins::ECHO;

/// A Wasm OCI manifest for `wasm`.
fn manifest(wasm: &[u8]) -> Vec<u8> {
    let digest = |b: &[u8]| format!("sha256:{}", warden::base::sha256_hex(b));
    serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {
            "mediaType": "application/vnd.wasm.config.v0+json",
            "digest": digest(b"{}"),
            "size": 2
        },
        "layers": [{
            "mediaType": "application/wasm",
            "digest": digest(wasm),
            "size": wasm.len()
        }]
    }))
    .unwrap()
}

/// How the registry answers a blob request, given its own port.
type BlobAnswer = dyn Fn(u16, &mut std::net::TcpStream) + Send + Sync;

/// A registry on 127.0.0.1 whose blob requests are answered by `blob`.
fn registry(blob: Arc<BlobAnswer>) -> u16 {
    let wasm = std::fs::read(ECHO).unwrap();
    let manifest = manifest(&wasm);
    let port = Arc::new(std::sync::OnceLock::new());
    let own = port.clone();
    let served = serve(
        40,
        Arc::new(move |path, stream| {
            let port = *own.get().unwrap();
            if path == "/v2/" {
                respond(stream, "200 OK", &[], b"{}");
            } else if path.starts_with("/v2/tools/echo/manifests/") {
                let kind = ("Content-Type", "application/vnd.oci.image.manifest.v1+json");
                respond(stream, "200 OK", &[kind], &manifest);
            } else if path.starts_with("/v2/tools/echo/blobs/") {
                blob(port, stream);
            } else if path == "/moved/blob" {
                respond(stream, "200 OK", &[], &wasm);
            } else {
                respond(stream, "404 Not Found", &[], b"");
            }
        }),
    );
    port.set(served).unwrap();
    served
}

fn install(home: &std::path::Path, port: u16) -> (Option<i32>, String, String) {
    let reference = format!("oci://127.0.0.1:{port}/tools/echo:1");
    cli(home, &["plugin", "install", &reference, "--allow-http"])
}

#[test]
fn a_layer_redirected_to_another_host_is_refused_and_installs_nothing() {
    let home = fresh_home();
    let port = registry(Arc::new(|port, stream| {
        let to = format!("http://localhost:{port}/moved/blob");
        respond(stream, "307 Temporary Redirect", &[("Location", &to)], b"");
    }));
    let before = installed_state(home.path());
    let (code, out, err) = install(home.path(), port);
    assert_eq!(code, Some(5), "{out}{err}");
    assert!(
        err.contains("redirects to another host (http://localhost:")
            && err.trim_end().lines().count() == 1,
        "{err}"
    );
    assert_eq!(installed_state(home.path()), before);
}

#[test]
fn a_layer_redirected_on_the_same_host_installs() {
    let home = fresh_home();
    let port = registry(Arc::new(|port, stream| {
        let to = format!("http://127.0.0.1:{port}/moved/blob");
        respond(stream, "307 Temporary Redirect", &[("Location", &to)], b"");
    }));
    let (code, out, err) = install(home.path(), port);
    assert_eq!(code, Some(0), "{out}{err}");
    let lock = std::fs::read_to_string(home.path().join("plugins.lock")).unwrap();
    assert!(
        lock.contains(&format!("127.0.0.1:{port}/tools/echo:1")),
        "{lock}"
    );
}

#[test]
fn a_manifest_past_its_cap_is_refused_before_it_is_all_read() {
    let home = fresh_home();
    let port = serve(
        10,
        Arc::new(|path, stream| {
            if path == "/v2/" {
                respond(stream, "200 OK", &[], b"{}");
            } else {
                respond_endless(stream, 64 * 1024 * 1024);
            }
        }),
    );
    let before = installed_state(home.path());
    let (code, out, err) = install(home.path(), port);
    assert_eq!(code, Some(5), "{out}{err}");
    assert!(err.contains("4096 KiB cap on manifests"), "{err}");
    assert_eq!(installed_state(home.path()), before);
}
