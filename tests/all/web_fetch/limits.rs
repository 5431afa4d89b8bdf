//! Size caps end to end: `max_bytes` shows the start of a body with a
//! marker saying how to see more; the host's `http_response_bytes` cuts a
//! larger body at its cap, the marker says the host's limit did it (a
//! larger `max_bytes` would not help), and a server that keeps sending or
//! stalls past the cap holds nothing up; one that never answers ends the
//! call at the policy's deadline with a timeout.

use std::time::{Duration, Instant};

use serde_json::json;

use super::*;
use crate::egress::server::{Loopback, respond};

/// `line 0000\n` … numbered lines, `n` of them (10 bytes each).
fn lines(n: usize) -> String {
    (0..n).map(|i| format!("line {i:04}\n")).collect()
}

#[test]
fn max_bytes_shows_the_start_and_says_how_to_see_more() {
    let body = lines(200);
    let sent = body.clone();
    let server = Loopback::http(move |_, out| {
        respond(out, 200, &[("content-type", "text/plain")], sent.as_bytes())
    });
    let port = server.port();
    let r = fetch(
        &web_policy(&loopback_rule(port), ""),
        json!({"url": format!("http://127.0.0.1:{port}/log.txt"), "max_bytes": 95}),
    );
    let (text, s) = fetched(&r);
    assert_eq!(
        text,
        format!(
            "HTTP 200 OK\nurl: http://127.0.0.1:{port}/log.txt\ncontent-type: text/plain\n\
             content-length: 2000\n\n{}\n\n[truncated: read the first 95 of 2000 bytes of the \
             response body; call again with a larger max_bytes (at most 1000000) to see more]",
            &body[..95]
        )
    );
    assert_eq!((&s["bytes"], &s["truncated"]), (&json!(95), &json!(true)));
    let used = &report(&r).network[0];
    assert_eq!((used.status, used.error.as_deref()), (Some(200), None));
    assert!(
        (96..=2000).contains(&used.bytes_in),
        "the guest read {} bytes",
        used.bytes_in
    );
}

#[test]
fn the_hosts_response_cap_cuts_the_body_and_says_so() {
    let _x = exclusive();
    let body = lines(5000);
    let sent = body.clone();
    let server = Loopback::http(move |_, out| {
        respond(out, 200, &[("content-type", "text/plain")], sent.as_bytes())
    });
    let port = server.port();
    let policy = web_policy(&loopback_rule(port), "http_response_bytes = 1000");
    warm();
    let started = Instant::now();
    let r = fetch(
        &policy,
        json!({"url": format!("http://127.0.0.1:{port}/big.txt")}),
    );
    assert!(started.elapsed() < Duration::from_secs(5), "{r:?}");
    let (text, s) = fetched(&r);
    assert_eq!(
        text,
        format!(
            "HTTP 200 OK\nurl: http://127.0.0.1:{port}/big.txt\ncontent-type: text/plain\n\
             content-length: 50000\n\n{}\n\n[truncated: read the first 1000 of 50000 bytes of \
             the response body; the host's limit of 1000 bytes per response \
             (http_response_bytes) stopped the rest]",
            &body[..1000]
        )
    );
    assert_eq!((&s["bytes"], &s["truncated"]), (&json!(1000), &json!(true)));
    let used = &report(&r).network[0];
    assert_eq!(used.bytes_in, 1000);
    assert!(
        used.error.as_deref().unwrap().contains("1000-byte cap"),
        "{used:?}"
    );
}

#[test]
fn a_server_streaming_past_the_cap_then_stalling_holds_nothing_up() {
    let _x = exclusive();
    let server = Loopback::http(|_, out| {
        let _ = out.write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ntransfer-encoding: chunked\r\n\r\n",
        );
        let chunk = "<p>para</p>".repeat(400);
        for _ in 0..10 {
            let _ = write!(out, "{:x}\r\n{chunk}\r\n", chunk.len());
        }
        let _ = out.flush();
        std::thread::sleep(Duration::from_secs(6));
    });
    let port = server.port();
    let policy = web_policy(&loopback_rule(port), "http_response_bytes = 1000");
    warm();
    let started = Instant::now();
    let r = fetch(
        &policy,
        json!({"url": format!("http://127.0.0.1:{port}/stream")}),
    );
    let took = started.elapsed();
    assert!(took < Duration::from_secs(4), "took {took:?}");
    let (text, s) = fetched(&r);
    assert!(text.starts_with("HTTP 200 OK\n"), "{text}");
    assert!(text.contains("\n\npara\n\npara\n\n"), "{text}");
    assert!(
        text.ends_with(
            "\n\n[truncated: read the first 1000 bytes of the response body; the host's limit \
             of 1000 bytes per response (http_response_bytes) stopped the rest]"
        ),
        "{text}"
    );
    assert_eq!((&s["bytes"], &s["kind"]), (&json!(1000), &json!("html")));
    assert_eq!(report(&r).network[0].bytes_in, 1000);
}

#[test]
fn a_silent_server_ends_the_call_at_the_deadline() {
    let _x = exclusive();
    let server = Loopback::http(|_, _| std::thread::sleep(Duration::from_secs(6)));
    let port = server.port();
    let policy = web_policy(&loopback_rule(port), "deadline_ms = 800");
    warm();
    let started = Instant::now();
    let r = fetch(
        &policy,
        json!({"url": format!("http://127.0.0.1:{port}/slow")}),
    );
    let took = started.elapsed();
    assert!(
        (Duration::from_millis(700)..Duration::from_millis(2500)).contains(&took),
        "took {took:?}"
    );
    assert_eq!(
        err(&r, warden::protocol::ErrorKind::Timeout),
        "the call ran past its 800ms deadline and was stopped"
    );
    let used = &report(&r).network[0];
    assert_eq!(
        (used.status, used.error.as_deref()),
        (None, Some("connection read timeout"))
    );
    assert_eq!(server.requests().len(), 1);
}
