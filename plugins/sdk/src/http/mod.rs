//! A small blocking HTTP client over `wasi:http/outgoing-handler`
//! (feature `http`).
//!
//! Every request goes through the host, which checks it against the
//! policy's network rules before anything leaves the machine, never follows
//! redirects itself (a 3xx comes back to the plugin; following it is a new,
//! newly checked request) and injects credentials the plugin never sees. A
//! plugin granted no network has no `wasi:http` at all: its first request
//! fails with a permission error naming the interface.
//!
//! ```ignore
//! use warden_sdk::http::Request;
//!
//! let response = Request::get("https://example.com/")?
//!     .header("accept", "text/html")
//!     .send()?;
//! let body = response.body(1 << 20)?; // at most 1 MiB
//! let text = String::from_utf8_lossy(&body.bytes);
//! ```
//!
//! The response body is read with a byte cap: reading stops one byte past
//! it, and [`Body::truncated`] says whether anything was left unread.

mod client;
mod error;
mod url;

pub use error::HttpError;
pub use url::{Url, UrlError};

use std::time::Duration;

/// The request methods this client sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    Get,
    Head,
    Post,
    Put,
    Delete,
    Patch,
    Options,
}

impl Method {
    /// The method's name, e.g. `GET`.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
            Method::Patch => "PATCH",
            Method::Options => "OPTIONS",
        }
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Response headers, in the order received; names are lower-case.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Headers(Vec<(String, String)>);

impl Headers {
    /// Headers from `(name, value)` pairs; names are lower-cased.
    pub fn from_pairs<N: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (N, V)>,
    ) -> Self {
        Headers(
            pairs
                .into_iter()
                .map(|(n, v)| (n.into().to_ascii_lowercase(), v.into()))
                .collect(),
        )
    }

    /// The first value of `name` (case-insensitive).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `name` (case-insensitive), in order.
    pub fn get_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.0
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// All `(name, value)` pairs.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    /// Number of header lines.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are no headers.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// An HTTP request to build and [`send`](Request::send).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    method: Method,
    url: Url,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    timeout: Option<Duration>,
}

impl Request {
    /// A request with no headers and no body.
    pub fn new(method: Method, url: Url) -> Self {
        Request {
            method,
            url,
            headers: Vec::new(),
            body: Vec::new(),
            timeout: None,
        }
    }

    /// A `GET` of `url`.
    pub fn get(url: &str) -> Result<Self, HttpError> {
        Ok(Self::new(Method::Get, Url::parse(url)?))
    }

    /// A `POST` to `url`.
    pub fn post(url: &str) -> Result<Self, HttpError> {
        Ok(Self::new(Method::Post, Url::parse(url)?))
    }

    /// A `HEAD` of `url`.
    pub fn head(url: &str) -> Result<Self, HttpError> {
        Ok(Self::new(Method::Head, Url::parse(url)?))
    }

    /// Add a header (checked when sent).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Set the body. `Content-Length` is added when sent unless already set
    /// (as `0` for a POST, PUT or PATCH without a body).
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = body.into();
        self
    }

    /// Ask the host to give up connecting, or waiting for any byte, after
    /// `timeout`. The host applies its own, possibly shorter, limits.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    pub fn method(&self) -> Method {
        self.method
    }

    pub fn url(&self) -> &Url {
        &self.url
    }

    /// The headers as added.
    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }

    /// Check the headers the way the host will: names are HTTP tokens,
    /// values carry no line breaks or NUL bytes.
    pub fn validate(&self) -> Result<(), HttpError> {
        for (name, value) in &self.headers {
            check_header(name, value)?;
        }
        Ok(())
    }

    /// Send the request and wait for the response's status and headers.
    pub fn send(self) -> Result<Response, HttpError> {
        self.validate()?;
        client::send(self)
    }
}

/// Refuse a header the host would refuse, naming it.
pub fn check_header(name: &str, value: &str) -> Result<(), HttpError> {
    let invalid = |reason: &str| HttpError::InvalidHeader {
        name: name.to_string(),
        reason: reason.to_string(),
    };
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if name.is_empty() || !name.bytes().all(token) {
        return Err(invalid(
            "not a valid header name (letters, digits and !#$%&'*+-.^_`|~ only)",
        ));
    }
    if value.contains(['\r', '\n', '\0']) {
        return Err(invalid("the value contains a line break or NUL byte"));
    }
    Ok(())
}

/// A response whose status and headers have arrived; the body is read on
/// demand with [`Response::body`].
pub struct Response {
    status: u16,
    headers: Headers,
    body: client::BodyReader,
}

impl Response {
    /// The status code, e.g. 200.
    pub fn status(&self) -> u16 {
        self.status
    }

    pub fn headers(&self) -> &Headers {
        &self.headers
    }

    /// Read the body, at most `max` bytes. Reading stops one byte past the
    /// cap; the rest is never transferred into the plugin.
    pub fn body(self, max: usize) -> Result<Body, HttpError> {
        self.body.read(max)
    }
}

impl std::fmt::Debug for Response {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Response")
            .field("status", &self.status)
            .field("headers", &self.headers)
            .finish_non_exhaustive()
    }
}

/// A response body read under a byte cap.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Body {
    /// The bytes read, never more than the cap.
    pub bytes: Vec<u8>,
    /// True when the body went on past the cap.
    pub truncated: bool,
    /// When the host's own limit on response bodies ended the body before
    /// the cap did: that limit in bytes. A larger cap shows no more.
    pub host_limit: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_checks_name_the_header() {
        let req = Request::get("https://h/")
            .unwrap()
            .header("x-ok", "fine value")
            .header("x-bad", "a\r\nInjected: yes");
        let err = req.validate().unwrap_err();
        assert_eq!(
            err.to_string(),
            "header `x-bad`: the value contains a line break or NUL byte"
        );
        assert!(check_header("bad name", "v").is_err());
        assert!(check_header("", "v").is_err());
        assert!(check_header("X-Custom_1", "").is_ok());
    }

    #[test]
    fn headers_look_up_case_insensitively() {
        let h = Headers::from_pairs([
            ("Content-Type", "text/html"),
            ("set-cookie", "a"),
            ("Set-Cookie", "b"),
        ]);
        assert_eq!(h.get("content-type"), Some("text/html"));
        assert_eq!(h.get_all("SET-COOKIE").collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(h.iter().next(), Some(("content-type", "text/html")));
        assert_eq!(h.get("missing"), None);
    }
}
