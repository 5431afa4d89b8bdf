//! Redirects as the server sees them: each hop a new request the host
//! checks and counts; 303 turns a POST into a bodiless GET, 307 repeats it
//! exactly; a loop stops after five hops; a chain longer than the call's
//! request limit is refused by the host at the hop past it. HEAD ends at
//! the head.

use serde_json::json;
use warden::capability::egress::DenialReason;
use warden::protocol::ErrorKind;

use super::*;
use crate::egress::server::{Loopback, Seen, respond};

/// The request line of each request `server` got.
fn request_lines(server: &Loopback) -> Vec<String> {
    server
        .requests()
        .iter()
        .map(|s| s.head.lines().next().unwrap().to_string())
        .collect()
}

fn path(req: &Seen) -> &str {
    req.head.split(' ').nth(1).unwrap_or("")
}

#[test]
fn a_303_becomes_a_get_and_a_307_repeats_the_post() {
    let server = Loopback::http(|req, out| match path(req) {
        "/form" => respond(out, 303, &[("location", "/done")], b""),
        "/keep" => respond(out, 307, &[("location", "/kept")], b""),
        _ => respond(out, 200, &[("content-type", "text/plain")], b"ok"),
    });
    let port = server.port();
    let policy = web_policy(&loopback_rule(port), "");
    let body = r#"{"a":1}"#;
    for start in ["/form", "/keep"] {
        let r = fetch(
            &policy,
            json!({
                "url": format!("http://127.0.0.1:{port}{start}"),
                "method": "POST",
                "headers": {"Content-Type": "application/json"},
                "body": body,
            }),
        );
        assert_eq!(fetched(&r).1["status"], 200, "{start}");
    }
    let seen = server.requests();
    assert_eq!(
        request_lines(&server),
        [
            "POST /form HTTP/1.1",
            "GET /done HTTP/1.1",
            "POST /keep HTTP/1.1",
            "POST /kept HTTP/1.1"
        ]
    );
    let bodies: Vec<&[u8]> = seen.iter().map(|s| s.body.as_slice()).collect();
    let (b, none): (&[u8], &[u8]) = (body.as_bytes(), b"");
    assert_eq!(bodies, [b, none, b, b]);
    assert!(
        seen[1].header("content-type").is_empty(),
        "{}",
        seen[1].head
    );
    assert!(
        seen[1].header("content-length").is_empty(),
        "{}",
        seen[1].head
    );
    assert_eq!(seen[3].header("content-type"), ["application/json"]);
}

#[test]
fn a_redirect_loop_stops_after_five_hops() {
    let server = Loopback::http(|_, out| respond(out, 302, &[("location", "/loop")], b""));
    let port = server.port();
    let url = format!("http://127.0.0.1:{port}/loop");
    let r = fetch(&web_policy(&loopback_rule(port), ""), json!({"url": url}));
    let hops = vec![format!(" -302-> {url}"); 6].concat();
    assert_eq!(
        err(&r, ErrorKind::Io),
        format!("more than 5 redirects, stopped: {url}{hops}")
    );
    assert_eq!(server.requests().len(), 6);
    assert_eq!(report(&r).network.len(), 6);
}

#[test]
fn the_hop_past_the_request_limit_is_refused_by_the_host() {
    let server = Loopback::http(|req, out| match path(req) {
        "/a" => respond(out, 302, &[("location", "/b")], b""),
        "/b" => respond(out, 302, &[("location", "/c")], b""),
        _ => respond(out, 200, &[], b"never"),
    });
    let port = server.port();
    let base = format!("http://127.0.0.1:{port}");
    let r = fetch(
        &web_policy(&loopback_rule(port), "http_requests = 2"),
        json!({"url": format!("{base}/a")}),
    );
    let denial =
        format!("network access to 127.0.0.1:{port} denied: the call already made its 2 requests");
    assert_eq!(
        err(&r, ErrorKind::PermissionDenied),
        hop_refused(
            REFUSED,
            302,
            &format!("{base}/b"),
            &format!("{base}/c"),
            &denial
        )
    );
    assert_eq!(
        report(&r).network_denials[0].reason,
        DenialReason::TooManyRequests { limit: 2 }
    );
    assert_eq!(
        request_lines(&server),
        ["GET /a HTTP/1.1", "GET /b HTTP/1.1"]
    );
}

#[test]
fn head_shows_the_head_and_reads_no_body() {
    let server = Loopback::http(|_, out| {
        let _ = out.write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 1234\r\n\r\n",
        );
    });
    let port = server.port();
    let r = fetch(
        &web_policy(&loopback_rule(port), ""),
        json!({"url": format!("http://127.0.0.1:{port}/big.html"), "method": "HEAD"}),
    );
    let (text, s) = fetched(&r);
    assert_eq!(
        text,
        format!(
            "HTTP 200 OK\nurl: http://127.0.0.1:{port}/big.html\ncontent-type: text/html\n\
             content-length: 1234\n\n(no body: HEAD request)"
        )
    );
    assert_eq!(s["method"], "HEAD");
    assert_eq!(
        uses(&r),
        json!([use_of(port, "HEAD", "/big.html", 200, 0, 0)])
    );
    assert_eq!(request_lines(&server), ["HEAD /big.html HTTP/1.1"]);
}
