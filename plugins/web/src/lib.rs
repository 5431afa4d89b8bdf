//! Warden's built-in `http_fetch`: one HTTP request (and its redirects)
//! through the host's egress layer, the body shown as Markdown, text or as
//! received.
//!
//! The plugin holds no authority of its own: every request, redirects
//! included, is checked by the host against the policy's network rules, and
//! credentials are injected by the host where the policy says. A call
//! granted no network fails on its first request with a permission error.
//! Input is validated before anything is sent, with errors naming the field.

mod content;
mod html;
mod json;
mod redirect;
mod render;

use std::collections::BTreeMap;

use serde::Deserialize;
use warden_sdk::http::{Method, Url, check_header};
use warden_sdk::{
    Annotations, Context, Output, Tool, ToolError, register,
    serde_json::{Value, json},
};

use redirect::Hop;

/// Bytes of body text shown when the input gives no `max_bytes`.
pub const DEFAULT_MAX_BYTES: usize = 100_000;
/// The largest `max_bytes` honoured; the host caps a result at 1 MiB.
pub const MAX_BYTES: usize = 1_000_000;

/// Headers the tool or the host sets; the input may not.
const MANAGED_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "upgrade",
    "te",
    "trailer",
    "proxy-connection",
    "accept-encoding",
];

register!(HttpFetch);

/// Fetches a URL.
struct HttpFetch;

/// The methods `http_fetch` sends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
enum MethodName {
    #[default]
    Get,
    Post,
    Head,
}

/// How the body is shown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// HTML as Markdown; JSON pretty-printed; other text as is.
    #[default]
    Markdown,
    /// HTML as plain text; JSON pretty-printed; other text as is.
    Text,
    /// The body as received (decoded to text).
    Raw,
}

/// Input of `http_fetch`; see the schema for each field.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    url: String,
    #[serde(default)]
    method: MethodName,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    body: Option<String>,
    #[serde(default)]
    format: Format,
    max_bytes: Option<u64>,
    follow_redirects: Option<bool>,
}

/// A validated call.
#[derive(Debug)]
struct Plan {
    hop: Hop,
    follow: bool,
    format: Format,
    max_bytes: usize,
}

impl Tool for HttpFetch {
    type Input = Input;
    const NAME: &'static str = "http_fetch";
    const DESCRIPTION: &'static str = "Fetch a URL over HTTP or HTTPS: GET (default), POST or HEAD, with optional \
        headers and, for POST, a body. HTML is converted to Markdown (format `markdown`, the default) or plain \
        text (`text`), keeping headings, links, lists, code and tables and dropping scripts, styles and \
        navigation; `raw` returns the body as received. JSON is pretty-printed; binary content is described, not \
        shown. Redirects are followed (at most 5) unless follow_redirects is false. The output starts with the \
        status line, the final URL, any redirects and the main headers; at most max_bytes bytes of body text \
        are shown (default 100000), with a marker saying how much was cut. Only destinations the user's \
        policy allows can be reached; a refusal says which.";
    const ANNOTATIONS: Annotations = Annotations {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: true,
    };

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "Absolute http:// or https:// URL."},
                "method": {"type": "string", "enum": ["GET", "POST", "HEAD"], "description": "Default GET."},
                "headers": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "description": "Request headers, name to value. Host, Content-Length, Accept-Encoding and \
                        hop-by-hop headers are set by the tool."
                },
                "body": {"type": "string", "description": "Request body, POST only; set a matching Content-Type header."},
                "format": {
                    "type": "string",
                    "enum": ["markdown", "text", "raw"],
                    "description": "How to show HTML: markdown (default), text, or raw (the body as received)."
                },
                "max_bytes": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_BYTES,
                    "description": "Most bytes of body text to show. Default 100000."
                },
                "follow_redirects": {"type": "boolean", "description": "Follow 301/302/303/307/308 redirects (at most 5). Default true."}
            },
            "required": ["url"],
            "additionalProperties": false
        })
    }

    fn call(&self, input: Input, _cx: &Context) -> Result<Output, ToolError> {
        let plan = plan(input)?;
        let (format, max_bytes) = (plan.format, plan.max_bytes);
        let fetched = redirect::fetch(&mut redirect::Wasi, plan.hop, plan.follow, &|headers| {
            render::body_cap(format, max_bytes, headers)
        })?;
        Ok(render::render(&fetched, format, max_bytes))
    }
}

/// Check the input and build the first request.
fn plan(input: Input) -> Result<Plan, ToolError> {
    let bad = |field: &str, why: String| ToolError::invalid_input(format!("{field}: {why}"));
    let url = Url::parse(&input.url).map_err(|e| bad("url", e.to_string()))?;
    let method = match input.method {
        MethodName::Get => Method::Get,
        MethodName::Post => Method::Post,
        MethodName::Head => Method::Head,
    };
    if input.body.is_some() && method != Method::Post {
        return Err(bad(
            "body",
            format!(
                "only POST sends a body (method is {method}); set method to POST or leave body out"
            ),
        ));
    }
    let max_bytes = match input.max_bytes {
        None => DEFAULT_MAX_BYTES,
        Some(n) if (1..=MAX_BYTES as u64).contains(&n) => n as usize,
        Some(n) => {
            return Err(bad(
                "max_bytes",
                format!("{n} is out of range: use 1 to {MAX_BYTES}"),
            ));
        }
    };
    let mut headers = Vec::new();
    for (name, value) in input.headers {
        let field = format!("headers.{name}");
        if MANAGED_HEADERS.iter().any(|m| name.eq_ignore_ascii_case(m)) {
            return Err(bad(
                &field,
                "this header is set by http_fetch and the host, not by the caller".into(),
            ));
        }
        check_header(&name, &value).map_err(|e| match e {
            warden_sdk::http::HttpError::InvalidHeader { reason, .. } => bad(&field, reason),
            other => bad(&field, other.to_string()),
        })?;
        headers.push((name, value));
    }
    let has = |h: &[(String, String)], n: &str| h.iter().any(|(k, _)| k.eq_ignore_ascii_case(n));
    if !has(&headers, "user-agent") {
        headers.push((
            "user-agent".into(),
            concat!("warden-http_fetch/", env!("CARGO_PKG_VERSION")).into(),
        ));
    }
    if !has(&headers, "accept") {
        let accept = match input.format {
            Format::Raw => "*/*",
            Format::Markdown | Format::Text => {
                "text/html, application/xhtml+xml, application/json;q=0.9, text/*;q=0.8, */*;q=0.5"
            }
        };
        headers.push(("accept".into(), accept.into()));
    }
    Ok(Plan {
        hop: Hop {
            method,
            url,
            headers,
            body: input.body,
        },
        follow: input.follow_redirects.unwrap_or(true),
        format: input.format,
        max_bytes,
    })
}

#[cfg(test)]
mod tests;
