//! Input validation and rendering of whole responses.

use warden_sdk::ErrorKind;
use warden_sdk::http::{Body, Headers};
use warden_sdk::serde_json::json;

use super::*;
use crate::redirect::{Fetched, Redirect};

fn input(v: Value) -> Result<Plan, ToolError> {
    plan(warden_sdk::serde_json::from_value(v).unwrap())
}

#[track_caller]
fn refused(v: Value) -> String {
    let err = input(v).unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidInput);
    err.message
}

#[test]
fn validation_names_the_field() {
    assert_eq!(
        refused(json!({"url": "example.com"})),
        "url: not an absolute URL: expected scheme://host/path, e.g. https://example.com/"
    );
    assert_eq!(
        refused(json!({"url": "file:///etc/passwd"})),
        "url: unsupported scheme `file`: only http and https are supported"
    );
    assert!(refused(json!({"url": "https://u:p@h/"})).starts_with("url: user info"));
    assert_eq!(
        refused(json!({"url": "https://h/", "body": "x"})),
        "body: only POST sends a body (method is GET); set method to POST or leave body out"
    );
    assert!(
        refused(json!({"url": "https://h/", "method": "HEAD", "body": ""})).starts_with("body:")
    );
    assert_eq!(
        refused(json!({"url": "https://h/", "headers": {"X-A": "1\r\nX-Injected: 1"}})),
        "headers.X-A: the value contains a line break or NUL byte"
    );
    assert_eq!(
        refused(json!({"url": "https://h/", "headers": {"Host": "other.example"}})),
        "headers.Host: this header is set by http_fetch and the host, not by the caller"
    );
    assert!(
        refused(json!({"url": "https://h/", "headers": {"bad name": "v"}}))
            .starts_with("headers.bad name: not a valid header name")
    );
    assert_eq!(
        refused(json!({"url": "https://h/", "max_bytes": 0})),
        "max_bytes: 0 is out of range: use 1 to 1000000"
    );
    assert!(
        refused(json!({"url": "https://h/", "max_bytes": 2_000_000})).starts_with("max_bytes:")
    );
}

#[test]
fn a_plan_has_defaults_and_keeps_caller_headers() {
    let p = input(json!({"url": "https://h/x", "method": "POST", "body": "{}",
        "headers": {"Content-Type": "application/json", "User-Agent": "mine"}}))
    .unwrap();
    assert_eq!(
        (p.hop.method, p.hop.body.as_deref()),
        (Method::Post, Some("{}"))
    );
    assert!(p.follow);
    assert_eq!(
        (p.format, p.max_bytes),
        (Format::Markdown, DEFAULT_MAX_BYTES)
    );
    let names: Vec<&str> = p.hop.headers.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["Content-Type", "User-Agent", "accept"]);
    let p =
        input(json!({"url": "https://h/", "format": "raw", "follow_redirects": false})).unwrap();
    assert!(!p.follow);
    assert!(p.hop.headers.contains(&("accept".into(), "*/*".into())));
    assert!(
        p.hop
            .headers
            .iter()
            .any(|(n, v)| n == "user-agent" && v.starts_with("warden-http_fetch/"))
    );
    let wrong =
        warden_sdk::serde_json::from_value::<Input>(json!({"url": "https://h/", "method": "PUT"}));
    assert!(
        wrong
            .unwrap_err()
            .to_string()
            .contains("unknown variant `PUT`")
    );
}

fn fetched(status: u16, headers: &[(&str, &str)], body: &[u8], truncated: bool) -> Fetched {
    Fetched {
        method: Method::Get,
        url: Url::parse("https://site.example/a/page").unwrap(),
        status,
        headers: Headers::from_pairs(headers.iter().copied()),
        body: Body {
            bytes: body.to_vec(),
            truncated,
            host_limit: None,
        },
        redirects: Vec::new(),
        unfollowed: None,
    }
}

#[test]
fn html_is_shown_as_markdown_with_a_head() {
    let mut f = fetched(
        200,
        &[("Content-Type", "text/html; charset=utf-8"), ("Content-Length", "120"), ("X-Other", "hidden")],
        b"<html><head><title>Page</title></head><body><h2>Hi</h2><p><a href=\"b\">B</a></p></body></html>",
        false,
    );
    f.redirects.push(Redirect {
        from: Url::parse("http://site.example/").unwrap(),
        status: 301,
        to: f.url.clone(),
    });
    let out = render::render(&f, Format::Markdown, 1000);
    assert_eq!(
        out.text,
        "HTTP 200 OK\nurl: https://site.example/a/page\ntitle: Page\n\
         redirects: http://site.example/ -301-> https://site.example/a/page\n\
         content-type: text/html; charset=utf-8\ncontent-length: 120\n\n## Hi\n\n[B](https://site.example/a/b)"
    );
    let s = out.structured.unwrap();
    assert_eq!(s["status"], 200);
    assert_eq!(s["kind"], "html");
    assert_eq!(s["content_type"], "text/html");
    assert_eq!(s["title"], "Page");
    assert_eq!(s["truncated"], false);
    assert_eq!(s["headers"]["x-other"], "hidden");
    assert_eq!(
        s["redirects"][0],
        json!({"url": "http://site.example/", "status": 301, "location": "https://site.example/a/page"})
    );
    let text = render::render(&f, Format::Text, 1000).text;
    assert!(text.ends_with("\n\nHi\n\nB"), "{text}");
    let raw = render::render(&f, Format::Raw, 1000).text;
    assert!(
        raw.ends_with("<h2>Hi</h2><p><a href=\"b\">B</a></p></body></html>"),
        "{raw}"
    );
}

#[test]
fn json_text_and_binary() {
    let f = fetched(
        201,
        &[("content-type", "application/json")],
        br#"{"b":1,"a":[true]}"#,
        false,
    );
    let out = render::render(&f, Format::Markdown, 1000);
    assert!(out.text.starts_with("HTTP 201 Created\n"));
    assert!(
        out.text
            .ends_with("\n\n{\n  \"b\": 1,\n  \"a\": [\n    true\n  ]\n}"),
        "{}",
        out.text
    );
    let raw = render::render(&f, Format::Raw, 1000).text;
    assert!(raw.ends_with("\n\n{\"b\":1,\"a\":[true]}"));

    let f = fetched(
        200,
        &[("content-type", "text/plain; charset=iso-8859-1")],
        b"caf\xe9",
        false,
    );
    assert!(
        render::render(&f, Format::Markdown, 1000)
            .text
            .ends_with("\n\ncafé")
    );

    let f = fetched(
        200,
        &[("content-type", "image/png"), ("content-length", "5120")],
        b"",
        true,
    );
    let out = render::render(&f, Format::Markdown, 1000);
    assert!(
        out.text
            .ends_with("\n\nbinary content (image/png, 5120 bytes) not shown"),
        "{}",
        out.text
    );
    assert_eq!(out.structured.unwrap()["truncated"], false);
    let f = fetched(200, &[], b"\x89PNG\r\n\x1a\n\0\0\0", false);
    assert!(
        render::render(&f, Format::Raw, 1000)
            .text
            .ends_with("binary content (no content type, 11 bytes) not shown")
    );
    let f = fetched(
        200,
        &[("content-type", "text/html"), ("content-encoding", "gzip")],
        b"",
        true,
    );
    assert!(render::render(&f, Format::Markdown, 1000).text.ends_with(
        "compressed content (gzip, size unknown) not shown: http_fetch cannot decode Content-Encoding gzip"
    ));

    let f = fetched(204, &[], b"", false);
    assert_eq!(
        render::render(&f, Format::Markdown, 1000).text,
        "HTTP 204 No Content\nurl: https://site.example/a/page\n\n(empty body)"
    );
    let mut f = fetched(200, &[("content-type", "text/html")], b"", false);
    f.method = Method::Head;
    assert!(
        render::render(&f, Format::Markdown, 1000)
            .text
            .ends_with("\n\n(no body: HEAD request)")
    );
}

#[test]
fn truncation_says_how_much_was_cut() {
    let body = "line\n".repeat(100);
    let f = fetched(
        200,
        &[("content-type", "text/plain")],
        body.as_bytes(),
        false,
    );
    let out = render::render(&f, Format::Markdown, 52);
    assert!(
        out.text.ends_with(&format!(
            "\n\n{}\n\n[truncated: showed 49 of 500 bytes of text, 451 bytes cut; call again with a larger max_bytes (at most 1000000) to see more]",
            "line\n".repeat(10).trim_end()
        )),
        "{}",
        out.text
    );
    assert_eq!(out.structured.unwrap()["truncated"], true);

    let f = fetched(
        200,
        &[("content-type", "text/plain"), ("content-length", "9000")],
        &[b'x'; 100],
        true,
    );
    let out = render::render(&f, Format::Markdown, 100);
    assert!(out.text.ends_with(
        "[truncated: read the first 100 of 9000 bytes of the response body; call again with a larger max_bytes (at most 1000000) to see more]"
    ), "{}", out.text);
    // Nor is the host's limit on response bodies.
    let mut f = fetched(
        200,
        &[("content-type", "text/plain"), ("content-length", "9000")],
        &[b'x'; 100],
        true,
    );
    f.body.host_limit = Some(100);
    let out = render::render(&f, Format::Markdown, 1000);
    assert!(out.text.ends_with(
        "[truncated: read the first 100 of 9000 bytes of the response body; the host's limit of 100 bytes per response (http_response_bytes) stopped the rest]"
    ), "{}", out.text);
    // The HTML read cap is not raised by max_bytes: no false promise.
    let f = fetched(200, &[("content-type", "text/html")], b"<p>partial", true);
    let out = render::render(&f, Format::Markdown, 100);
    assert!(out.text.ends_with("\n\npartial\n\n[truncated: read the first 10 bytes of the response body; the rest was not read]"), "{}", out.text);
    // Cuts never split a character.
    let f = fetched(
        200,
        &[("content-type", "text/plain")],
        "ééé".as_bytes(),
        false,
    );
    assert!(
        render::render(&f, Format::Markdown, 3)
            .text
            .contains("\n\né\n\n[truncated: showed 2 of 6 bytes")
    );
}

#[test]
fn unfollowed_redirects_show_the_location() {
    let mut f = fetched(302, &[("location", "/elsewhere")], b"", false);
    f.unfollowed = Some("follow_redirects is false".into());
    let out = render::render(&f, Format::Markdown, 100);
    assert_eq!(
        out.text,
        "HTTP 302 Found\nurl: https://site.example/a/page\nredirect not followed: follow_redirects is false\nlocation: /elsewhere\n\n(empty body)"
    );
    assert_eq!(
        out.structured.unwrap()["redirect_not_followed"],
        "follow_redirects is false"
    );
}

#[test]
fn read_caps_follow_the_content_type() {
    let h = |pairs: &[(&str, &str)]| Headers::from_pairs(pairs.iter().copied());
    let cap = |f, pairs: &[(&str, &str)]| render::body_cap(f, 1000, &h(pairs));
    assert_eq!(
        cap(Format::Markdown, &[("content-type", "text/html")]),
        render::HTML_READ_CAP
    );
    assert_eq!(cap(Format::Markdown, &[]), render::HTML_READ_CAP);
    assert_eq!(cap(Format::Raw, &[("content-type", "text/html")]), 1000);
    assert_eq!(
        cap(Format::Text, &[("content-type", "application/json")]),
        1000
    );
    assert_eq!(cap(Format::Markdown, &[("content-type", "image/png")]), 0);
    assert_eq!(
        cap(
            Format::Raw,
            &[("content-type", "text/plain"), ("content-encoding", "br")]
        ),
        0
    );
}
