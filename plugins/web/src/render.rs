//! The tool's output: a short head (status, final URL, redirects, selected
//! headers), the body as text, and a marker whenever anything was cut;
//! beside it, the same facts as JSON.

use warden_sdk::Output;
use warden_sdk::http::Headers;
use warden_sdk::serde_json::{Map, Value, json};

use crate::content::{self, ContentType, Kind};
use crate::html::{self, Style};
use crate::redirect::{Fetched, chain};
use crate::{Format, MAX_BYTES};

/// Bytes of an HTML page read when converting it: conversion shrinks a page
/// many times over, so this is larger than the text shown.
pub const HTML_READ_CAP: usize = 4 << 20;

/// Response headers shown in the text (all of them are in the JSON).
const SHOWN_HEADERS: &[&str] = &[
    "content-type",
    "content-length",
    "content-encoding",
    "content-language",
    "content-disposition",
    "last-modified",
    "location",
    "retry-after",
    "www-authenticate",
];

/// A `Content-Encoding` the tool cannot undo, if the body has one.
fn encoding(headers: &Headers) -> Option<&str> {
    headers
        .get("content-encoding")
        .map(str::trim)
        .filter(|e| !e.is_empty() && !e.eq_ignore_ascii_case("identity"))
}

/// How many body bytes to read once the response's headers are known.
pub fn body_cap(format: Format, max_bytes: usize, headers: &Headers) -> usize {
    if encoding(headers).is_some() {
        return 0;
    }
    let ct = headers.get("content-type").and_then(ContentType::parse);
    match (format, ct.map(|ct| content::classify(Some(&ct), b""))) {
        (_, Some(Kind::Binary)) => 0,
        (Format::Raw, _) | (_, Some(Kind::Json | Kind::Text)) => max_bytes,
        (Format::Markdown | Format::Text, Some(Kind::Html) | None) => HTML_READ_CAP.max(max_bytes),
    }
}

/// The output for `f`, showing at most `max_bytes` bytes of body text.
pub fn render(f: &Fetched, format: Format, max_bytes: usize) -> Output {
    let ct = f.headers.get("content-type").and_then(ContentType::parse);
    let compressed = encoding(&f.headers);
    let kind = match compressed {
        Some(_) => Kind::Binary,
        None => content::classify(ct.as_ref(), &f.body.bytes),
    };
    let declared_length = f
        .headers
        .get("content-length")
        .and_then(|v| v.trim().parse::<u64>().ok());

    let mut head = vec![status_line(f.status), format!("url: {}", f.url)];
    if !f.redirects.is_empty() {
        head.push(format!("redirects: {}", chain(&f.redirects)));
    }
    if let Some(why) = &f.unfollowed {
        head.push(format!("redirect not followed: {why}"));
    }
    for name in SHOWN_HEADERS {
        for value in f.headers.get_all(name) {
            head.push(format!("{name}: {value}"));
        }
    }

    let mut title = None;
    let mut main_only = false;
    let body = if f.method == warden_sdk::http::Method::Head {
        "(no body: HEAD request)".to_string()
    } else if f.body.bytes.is_empty() && !f.body.truncated {
        "(empty body)".to_string()
    } else if kind == Kind::Binary {
        let size = match (declared_length, f.body.truncated) {
            (Some(n), _) => format!("{n} bytes"),
            (None, true) => "size unknown".to_string(),
            (None, false) => format!("{} bytes", f.body.bytes.len()),
        };
        match (compressed, &ct) {
            (Some(enc), _) => format!(
                "compressed content ({enc}, {size}) not shown: http_fetch cannot decode Content-Encoding {enc}"
            ),
            (None, Some(ct)) => format!("binary content ({}, {size}) not shown", ct.essence),
            (None, None) => format!("binary content (no content type, {size}) not shown"),
        }
    } else {
        let (text, note) = content::decode(
            &f.body.bytes,
            kind,
            ct.as_ref().and_then(|c| c.charset.as_deref()),
        );
        if let Some(note) = note {
            head.push(format!("note: {note}"));
        }
        match (kind, format) {
            (_, Format::Raw) => text,
            (Kind::Html, Format::Markdown | Format::Text) => {
                let style = if format == Format::Text {
                    Style::Text
                } else {
                    Style::Markdown
                };
                let page = html::convert(&text, &f.url, style);
                title = page.title;
                main_only = page.main_only;
                page.content
            }
            (Kind::Json, _) => crate::json::pretty(&text),
            (Kind::Text | Kind::Binary, _) => text,
        }
    };
    if let Some(t) = &title {
        head.insert(2, format!("title: {t}"));
    }
    if main_only {
        head.push("showing: the page's <main> element".into());
    }

    let (shown, text_cut) = cut(&body, max_bytes);
    let mut cuts = Vec::new();
    if f.body.truncated && kind != Kind::Binary {
        let read = f.body.bytes.len();
        cuts.push(match (declared_length, f.body.host_limit) {
            (_, Some(limit)) => format!(
                "read the first {read}{} bytes of the response body; the host's limit of \
                 {limit} bytes per response (http_response_bytes) stopped the rest",
                declared_length
                    .map(|n| format!(" of {n}"))
                    .unwrap_or_default()
            ),
            (Some(n), None) => format!("read the first {read} of {n} bytes of the response body"),
            (None, None) => {
                format!("read the first {read} bytes of the response body; the rest was not read")
            }
        });
    }
    if text_cut > 0 {
        cuts.push(format!(
            "showed {} of {} bytes of text, {text_cut} bytes cut",
            shown.len(),
            body.len()
        ));
    }
    let mut text = format!("{}\n\n{shown}", head.join("\n"));
    if !cuts.is_empty() {
        // A larger max_bytes shows more only if it raises the cap that cut.
        let read_cap_was_max =
            f.body.host_limit.is_none() && body_cap(format, max_bytes, &f.headers) == max_bytes;
        let more = if max_bytes < MAX_BYTES && (text_cut > 0 || read_cap_was_max) {
            format!("; call again with a larger max_bytes (at most {MAX_BYTES}) to see more")
        } else {
            String::new()
        };
        text.push_str(&format!("\n\n[truncated: {}{more}]", cuts.join("; ")));
    }

    let mut structured = json!({
        "status": f.status,
        "url": f.url.to_string(),
        "method": f.method.as_str(),
        "redirects": f.redirects.iter().map(|r| json!({"url": r.from.to_string(), "status": r.status, "location": r.to.to_string()})).collect::<Vec<_>>(),
        "headers": header_map(&f.headers),
        "content_type": ct.as_ref().map(|c| c.essence.clone()),
        "kind": match kind { Kind::Html => "html", Kind::Json => "json", Kind::Text => "text", Kind::Binary => "binary" },
        "format": match format { Format::Markdown => "markdown", Format::Text => "text", Format::Raw => "raw" },
        "bytes": f.body.bytes.len(),
        "content_length": declared_length,
        "truncated": !cuts.is_empty(),
    });
    if let (Some(t), Some(obj)) = (title, structured.as_object_mut()) {
        obj.insert("title".into(), Value::String(t));
    }
    if let (Some(why), Some(obj)) = (&f.unfollowed, structured.as_object_mut()) {
        obj.insert("redirect_not_followed".into(), Value::String(why.clone()));
    }
    Output::text(text).with_structured(structured)
}

/// `s` cut to at most `max` bytes at a character boundary, preferring the
/// end of a line in the last tenth; and how many bytes were cut.
fn cut(s: &str, max: usize) -> (&str, usize) {
    if s.len() <= max {
        return (s, 0);
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    if let Some(nl) = s[..end].rfind('\n').filter(|&nl| nl >= end - end / 10) {
        end = nl;
    }
    (&s[..end], s.len() - end)
}

fn header_map(headers: &Headers) -> Value {
    let mut map = Map::new();
    for (name, value) in headers.iter() {
        match map.get_mut(name) {
            Some(Value::String(prev)) => {
                prev.push_str(", ");
                prev.push_str(value);
            }
            _ => {
                map.insert(name.to_string(), Value::String(value.to_string()));
            }
        }
    }
    Value::Object(map)
}

fn status_line(status: u16) -> String {
    let reason = match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        206 => "Partial Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "",
    };
    format!("HTTP {status} {reason}").trim_end().to_string()
}
