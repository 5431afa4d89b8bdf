//! What an allowed server sends comes back readable: HTML as Markdown with
//! links made absolute, Latin-1 decoded, binary described, JSON pretty-printed, a POST's body and headers
//! delivered exactly, a same-origin redirect chain followed and reported;
//! and each request is in the call's network record.

use serde_json::json;

use super::*;
use crate::egress::server::{Loopback, Seen, respond};

const PAGE: &str = "<!doctype html><html><head><title>Warden  docs</title>\
    <script>var secret = 'not shown';</script><style>p{color:red}</style></head>\
    <body><nav><a href=\"/home\">Home</a></nav>\
    <h1>Egress</h1><p>See <a href=\"limits\">the limits</a> and \
    <a href=\"/policies#network\">the rules</a>.</p>\
    <h2>Checks</h2><ul><li>names</li><li>addresses</li></ul></body></html>";

#[test]
fn an_allowed_page_reads_as_markdown_and_is_recorded() {
    let server = Loopback::http(|_, out| {
        respond(
            out,
            200,
            &[("content-type", "text/html; charset=utf-8")],
            PAGE.as_bytes(),
        )
    });
    let port = server.port();
    let r = fetch(
        &web_policy(&loopback_rule(port), ""),
        json!({"url": format!("http://127.0.0.1:{port}/docs/page")}),
    );
    let (text, s) = fetched(&r);
    assert_eq!(
        text,
        format!(
            "HTTP 200 OK\nurl: http://127.0.0.1:{port}/docs/page\ntitle: Warden docs\n\
             content-type: text/html; charset=utf-8\ncontent-length: {}\n\n\
             # Egress\n\n\
             See [the limits](http://127.0.0.1:{port}/docs/limits) and \
             [the rules](http://127.0.0.1:{port}/policies#network).\n\n\
             ## Checks\n\n- names\n- addresses",
            PAGE.len()
        )
    );
    assert_eq!(s["status"], 200);
    assert_eq!(s["kind"], "html");
    assert_eq!(s["title"], "Warden docs");
    assert_eq!(s["truncated"], false);
    assert_eq!(s["bytes"], PAGE.len());

    assert_eq!(
        uses(&r),
        json!([use_of(port, "GET", "/docs/page", 200, 0, PAGE.len())])
    );
    assert!(report(&r).network_denials.is_empty());
    let seen = server.requests();
    assert_eq!(seen.len(), 1);
    assert!(
        seen[0].head.starts_with("GET /docs/page HTTP/1.1\r\n"),
        "{}",
        seen[0].head
    );
    assert_eq!(seen[0].header("host"), [format!("127.0.0.1:{port}")]);
    assert_eq!(
        seen[0].header("user-agent"),
        [concat!("warden-http_fetch/", env!("CARGO_PKG_VERSION"))]
    );
}

const REPLY: &str = r#"{"id":7,"tags":["a","b"],"nested":{"ok":true,"n":1.50}}"#;

#[test]
fn a_post_arrives_exactly_and_json_comes_back_pretty() {
    let server = Loopback::http(|_, out| {
        respond(
            out,
            201,
            &[("content-type", "application/json")],
            REPLY.as_bytes(),
        )
    });
    let port = server.port();
    let body = r#"{"name":"widget","qty":2}"#;
    let r = fetch(
        &web_policy(&loopback_rule(port), ""),
        json!({
            "url": format!("http://127.0.0.1:{port}/api/items?dry=1"),
            "method": "POST",
            "headers": {"Content-Type": "application/json", "X-Request-Id": "req-42"},
            "body": body,
        }),
    );
    let (text, s) = fetched(&r);
    assert!(
        text.starts_with(&format!(
            "HTTP 201 Created\nurl: http://127.0.0.1:{port}/api/items?dry=1\n"
        )),
        "{text}"
    );
    assert!(
        text.ends_with(
            "\n\n{\n  \"id\": 7,\n  \"tags\": [\n    \"a\",\n    \"b\"\n  ],\n  \
             \"nested\": {\n    \"ok\": true,\n    \"n\": 1.50\n  }\n}"
        ),
        "{text}"
    );
    assert_eq!((&s["kind"], &s["method"]), (&json!("json"), &json!("POST")));

    let seen: Vec<Seen> = server.requests();
    assert_eq!(seen.len(), 1);
    assert!(
        seen[0]
            .head
            .starts_with("POST /api/items?dry=1 HTTP/1.1\r\n"),
        "{}",
        seen[0].head
    );
    assert_eq!(seen[0].header("content-type"), ["application/json"]);
    assert_eq!(seen[0].header("x-request-id"), ["req-42"]);
    assert_eq!(seen[0].header("content-length"), [body.len().to_string()]);
    assert_eq!(seen[0].body, body.as_bytes());
    assert_eq!(
        uses(&r),
        json!([use_of(
            port,
            "POST",
            "/api/items",
            201,
            body.len(),
            REPLY.len()
        )])
    );
}

#[test]
fn a_same_origin_redirect_chain_is_followed_and_reported() {
    let server = Loopback::http(|req, out| match req.head.split(' ').nth(1).unwrap_or("") {
        "/old" => respond(out, 301, &[("location", "/mid")], b""),
        "/mid" => respond(out, 302, &[("location", "new?x=1")], b""),
        _ => respond(out, 200, &[("content-type", "text/plain")], b"arrived"),
    });
    let port = server.port();
    let base = format!("http://127.0.0.1:{port}");
    let r = fetch(
        &web_policy(&loopback_rule(port), ""),
        json!({"url": format!("{base}/old")}),
    );
    let (text, s) = fetched(&r);
    assert_eq!(
        text,
        format!(
            "HTTP 200 OK\nurl: {base}/new?x=1\n\
             redirects: {base}/old -301-> {base}/mid -302-> {base}/new?x=1\n\
             content-type: text/plain\ncontent-length: 7\n\narrived"
        )
    );
    assert_eq!(
        s["redirects"],
        json!([
            {"url": format!("{base}/old"), "status": 301, "location": format!("{base}/mid")},
            {"url": format!("{base}/mid"), "status": 302, "location": format!("{base}/new?x=1")},
        ])
    );
    assert_eq!(
        uses(&r),
        json!([
            use_of(port, "GET", "/old", 301, 0, 0),
            use_of(port, "GET", "/mid", 302, 0, 0),
            use_of(port, "GET", "/new", 200, 0, 7),
        ])
    );
    let lines: Vec<String> = server
        .requests()
        .iter()
        .map(|s| s.head.lines().next().unwrap().to_string())
        .collect();
    assert_eq!(
        lines,
        [
            "GET /old HTTP/1.1",
            "GET /mid HTTP/1.1",
            "GET /new?x=1 HTTP/1.1"
        ]
    );
}

/// `<p>Café crème</p>` in Latin-1.
const MENU: &[u8] = b"<p>Caf\xe9 cr\xe8me</p>";

#[test]
fn a_latin1_page_is_decoded_and_an_image_described() {
    let png: Vec<u8> = b"\x89PNG\r\n\x1a\n"
        .iter()
        .copied()
        .chain([0u8; 4992])
        .collect();
    let server = Loopback::http(move |req, out| {
        if req.head.starts_with("GET /logo.png ") {
            respond(out, 200, &[("content-type", "image/png")], &png);
        } else {
            let latin1 = [("content-type", "text/html; charset=iso-8859-1")];
            respond(out, 200, &latin1, MENU);
        }
    });
    let port = server.port();
    let policy = web_policy(&loopback_rule(port), "");
    let base = format!("http://127.0.0.1:{port}");
    let r = fetch(&policy, json!({"url": format!("{base}/menu")}));
    assert_eq!(
        fetched(&r).0,
        format!(
            "HTTP 200 OK\nurl: {base}/menu\ncontent-type: text/html; charset=iso-8859-1\n\
             content-length: {}\n\nCaf\u{e9} cr\u{e8}me",
            MENU.len()
        )
    );
    let r = fetch(&policy, json!({"url": format!("{base}/logo.png")}));
    let (text, s) = fetched(&r);
    assert_eq!(
        text,
        format!(
            "HTTP 200 OK\nurl: {base}/logo.png\ncontent-type: image/png\ncontent-length: 5000\n\n\
             binary content (image/png, 5000 bytes) not shown"
        )
    );
    assert_eq!(
        (&s["kind"], &s["truncated"]),
        (&json!("binary"), &json!(false))
    );
}
