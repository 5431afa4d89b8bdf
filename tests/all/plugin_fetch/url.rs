//! `warden plugin install https://…/x.wasm --sha256 HEX` against a real
//! HTTP server on loopback.

use std::sync::Arc;

use super::http::{respond, respond_cut_short, respond_endless, serve};
use super::{CORE_MODULE, installed_state};
use crate::support::*;

const ECHO: &str = warden::test_plugins::ECHO;

fn sha(bytes: &[u8]) -> String {
    warden::base::sha256_hex(bytes)
}

/// A server with the echo component at `/echo.wasm` and every bad answer
/// the tests need, each at its own path.
fn server() -> u16 {
    let echo = std::fs::read(ECHO).unwrap();
    serve(
        200,
        Arc::new(move |path, stream| match path {
            "/echo.wasm" => respond(stream, "200 OK", &[], &echo),
            "/moved" => respond(stream, "302 Found", &[("Location", "/echo.wasm")], b""),
            "/loop" => respond(stream, "302 Found", &[("Location", "/loop")], b""),
            "/core.wasm" => respond(stream, "200 OK", &[], CORE_MODULE),
            "/text.wasm" => respond(stream, "200 OK", &[], b"not wasm at all"),
            "/secret.wasm" => respond(stream, "401 Unauthorized", &[], b""),
            "/broken.wasm" => respond(stream, "500 Internal Server Error", &[], b"oops"),
            "/short.wasm" => respond_cut_short(stream, echo.len(), &echo[..echo.len() / 2]),
            "/claims-huge.wasm" => respond_cut_short(stream, 65 * 1024 * 1024, b""),
            "/endless.wasm" => respond_endless(stream, 80 * 1024 * 1024),
            p if p.starts_with("/elsewhere") => {
                let port = stream.local_addr().unwrap().port();
                let to = format!("http://localhost:{port}/echo.wasm");
                respond(stream, "302 Found", &[("Location", &to)], b"")
            }
            _ => respond(stream, "404 Not Found", &[], b"no such file"),
        }),
    )
}

#[test]
fn a_url_installs_with_its_sha256_and_the_lockfile_records_the_source() {
    let port = server();
    let home = fresh_home();
    let echo_sha = sha(&std::fs::read(ECHO).unwrap());
    let url = format!("http://127.0.0.1:{port}/moved");
    let (code, out, err) = cli(
        home.path(),
        &[
            "plugin",
            "install",
            &url,
            "--sha256",
            &echo_sha,
            "--allow-http",
        ],
    );
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.starts_with("installed echo 0.1.0\n"), "{out}");
    let lock = std::fs::read_to_string(home.path().join("plugins.lock")).unwrap();
    assert!(
        lock.contains(&format!("sha256 = \"{echo_sha}\""))
            && lock.contains(&format!("source = \"{url}\"")),
        "{lock}"
    );
    let (code, out, err) = cli(
        home.path(),
        &["tool", "call", "echo", "--input", r#"{"text":"hi"}"#],
    );
    assert_eq!((code, out.as_str()), (Some(0), "hi\n"), "{err}");
    // A URL is pinned by its sha256: there is no tag to update.
    let (code, _, err) = cli(home.path(), &["plugin", "update", "echo", "--allow-http"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no tag to fetch again"), "{err}");
}

#[test]
fn bad_downloads_install_nothing_and_leave_the_lockfile_as_it_was() {
    let port = server();
    let home = fresh_home();
    // Something installed already, so the lockfile and plugins dir exist.
    let (code, _, err) = cli(home.path(), &["plugin", "install", ECHO]);
    assert_eq!(code, Some(0), "{err}");
    let before = installed_state(home.path());
    let echo_sha = sha(&std::fs::read(ECHO).unwrap());
    let base = format!("http://127.0.0.1:{port}");
    let cases: Vec<(String, String, Vec<&str>, &str)> = vec![
        // (path, sha256, extra flags, what the one-line error says)
        (
            "/echo.wasm".into(),
            "ab".repeat(32),
            vec![],
            "digest mismatch",
        ),
        (
            "/echo.wasm".into(),
            echo_sha.clone(),
            vec!["--no-http"],
            "--allow-http",
        ),
        (
            "/core.wasm".into(),
            sha(CORE_MODULE),
            vec![],
            "core WebAssembly module, not a component",
        ),
        (
            "/text.wasm".into(),
            sha(b"not wasm at all"),
            vec![],
            "is not WebAssembly",
        ),
        (
            "/missing.wasm".into(),
            echo_sha.clone(),
            vec![],
            "answered 404 Not Found",
        ),
        (
            "/secret.wasm".into(),
            echo_sha.clone(),
            vec![],
            "answered 401 Unauthorized",
        ),
        (
            "/broken.wasm".into(),
            echo_sha.clone(),
            vec![],
            "answered 500 Internal Server Error",
        ),
        (
            "/short.wasm".into(),
            echo_sha.clone(),
            vec![],
            "was cut short",
        ),
        (
            "/claims-huge.wasm".into(),
            echo_sha.clone(),
            vec![],
            "larger than the 64 MiB cap",
        ),
        (
            "/endless.wasm".into(),
            echo_sha.clone(),
            vec![],
            "larger than the 64 MiB cap",
        ),
        (
            "/elsewhere".into(),
            echo_sha.clone(),
            vec![],
            "redirects to another host",
        ),
        (
            "/loop".into(),
            echo_sha.clone(),
            vec![],
            "redirects more than 5 times",
        ),
    ];
    for (path, digest, flags, expected) in cases {
        let url = format!("{base}{path}");
        let mut args = vec!["plugin", "install", &url, "--sha256", &digest];
        if flags != ["--no-http"] {
            args.push("--allow-http");
        }
        let (code, out, err) = cli(home.path(), &args);
        assert_eq!(code, Some(5), "{path}: {out}{err}");
        assert!(
            err.contains(expected) && err.trim_end().lines().count() == 1,
            "{path}: expected one line saying {expected:?}, got {err:?}"
        );
        assert_eq!(
            installed_state(home.path()),
            before,
            "{path} changed the plugins dir or the lockfile"
        );
    }
    let url = format!("{base}/echo.wasm");
    let (code, _, err) = cli(home.path(), &["plugin", "install", &url]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("add --sha256 HEX"), "{err}");
    assert_eq!(installed_state(home.path()), before);
}
