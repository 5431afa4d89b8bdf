//! `warden mcp --http`: the Python SDK over Streamable HTTP, and raw HTTP
//! requests the server must refuse (no token, a foreign Origin, too large,
//! not JSON, too many sessions or connections) while it keeps serving.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{Value, json};

use super::stdio::assert_tour;
use super::*;

#[test]
fn a_python_client_gets_the_same_tools_and_answers_over_http() {
    let setup = Setup::new("auto");
    let server = HttpServer::start(home(), setup.args(&[]));
    assert_tour(&client("tour", server.config()));

    let seen = client("progress", server.config());
    assert_eq!(seen["progress"].as_array().unwrap().len(), 5, "{seen}");

    let seen = client("cancel", with(server.config(), json!({"after": 0.5})));
    assert_eq!(seen["next"]["is_error"], false, "{seen}");
    assert!(seen["next_seconds"].as_f64().unwrap() < 5.0, "{seen}");
}

#[test]
fn approvals_are_asked_over_http_too() {
    let setup = Setup::new("ask");
    let server = HttpServer::start(home(), setup.args(&[]));
    let write = |path: &str| json!({"path": path, "content": "x"});
    let config = with(
        server.config(),
        json!({"answers": ["allow_once", "decline"], "calls": [write("a.txt"), write("b.txt")]}),
    );
    let seen = client("approvals", config);
    assert_eq!(seen["asked"].as_array().unwrap().len(), 2, "{seen}");
    assert_eq!(seen["results"][0]["is_error"], false, "{seen}");
    assert_eq!(seen["results"][1]["is_error"], true, "{seen}");
    assert!(setup.sandbox.exists("a.txt") && !setup.sandbox.exists("b.txt"));
}

/// One HTTP/1.1 request on a connection of its own: status and body.
fn request(url: &str, headers: &[(&str, &str)], body: &[u8]) -> (u16, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap());
    let mut stream = TcpStream::connect(authority).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    let _ = stream.write_all(body);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {answer:?}"));
    let body = answer
        .split("\r\n\r\n")
        .nth(1)
        .unwrap_or_default()
        .to_string();
    (status, body)
}

fn initialize(id: u64) -> Vec<u8> {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    })
    .to_string()
    .into_bytes()
}

fn rpc_error(body: &str) -> (i64, String) {
    let v: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    (
        v["error"]["code"].as_i64().unwrap(),
        v["error"]["message"].as_str().unwrap().to_string(),
    )
}

#[test]
fn requests_without_the_token_from_a_foreign_origin_or_too_large_are_refused() {
    let setup = Setup::new("auto");
    let home = fresh_home();
    let server = HttpServer::start(
        home.path(),
        setup.args(&[
            "--max-message-bytes",
            "4096",
            "--max-sessions",
            "1",
            "--max-connections",
            "2",
        ]),
    );
    let url = server.url.as_str();
    let bearer = format!("Bearer {}", server.token);
    let auth = ("Authorization", bearer.as_str());

    let (status, body) = request(url, &[], &initialize(1));
    assert_eq!(status, 401, "{body}");
    assert!(rpc_error(&body).1.contains("bearer token"), "{body}");
    let (status, _) = request(
        url,
        &[("Authorization", "Bearer not-the-token")],
        &initialize(1),
    );
    assert_eq!(status, 401);

    let (status, body) = request(
        url,
        &[auth, ("Origin", "http://evil.example")],
        &initialize(1),
    );
    assert_eq!(status, 403, "{body}");
    assert!(rpc_error(&body).1.contains("DNS rebinding"), "{body}");

    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(8000)
    );
    let (status, body) = request(url, &[auth], big.as_bytes());
    assert_eq!(status, 413, "{body}");
    assert!(
        rpc_error(&body).1.contains("the limit is 4096 bytes"),
        "{body}"
    );

    let (status, body) = request(url, &[auth], b"{not json");
    assert_eq!((status, rpc_error(&body).0), (400, -32700), "{body}");

    // Still serving: an initialize from the server's own origin opens the
    // one session allowed, and a second is refused.
    let own = url.trim_end_matches("/mcp").to_string();
    let (status, body) = request(url, &[auth, ("Origin", own.as_str())], &initialize(1));
    assert_eq!(status, 200, "{body}");
    let (status, body) = request(url, &[auth], &initialize(2));
    assert_eq!(status, 503, "{body}");
    assert!(rpc_error(&body).1.contains("too many sessions"), "{body}");

    // Two idle connections take every slot; a third is turned away.
    let authority = url
        .strip_prefix("http://")
        .unwrap()
        .split('/')
        .next()
        .unwrap();
    // (Until the server has closed the earlier connections, the idle ones
    // may be the ones turned away: open them again until they hold both.)
    let mut answers = Vec::new();
    for _ in 0..20 {
        let held: Vec<TcpStream> = (0..2)
            .map(|_| TcpStream::connect(authority).unwrap())
            .collect();
        std::thread::sleep(Duration::from_millis(250));
        let (status, body) = request(url, &[auth], &initialize(3));
        drop(held);
        if status == 503 && rpc_error(&body).1.contains("too many connections") {
            break;
        }
        answers.push((status, body));
    }
    assert!(
        answers.len() < 20,
        "a connection past the limit was served: {answers:?}"
    );
}
