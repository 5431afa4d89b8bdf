//! What an HTTP request must pass before it reaches the MCP transport: an
//! acceptable `Origin`, the bearer token, a body within the size limit
//! that is one JSON object, and room for a new session.
//!
//! Invariant: a request failing any check is answered here (403, 401,
//! 413, 400 or 503, with a JSON-RPC error body saying what to do) and
//! never reaches a session; the token is compared in constant time.

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::{Value, json};

/// A response body.
pub(super) type Body = BoxBody<Bytes, std::convert::Infallible>;

/// The checks, shared by every connection.
pub(super) struct Guard {
    pub(super) token: String,
    /// Origins allowed to send requests (`scheme://host:port`, lower case).
    pub(super) origins: Vec<String>,
    pub(super) max_body: usize,
    pub(super) max_sessions: usize,
    pub(super) sessions: Arc<LocalSessionManager>,
}

impl Guard {
    /// `req` with its body read, or the response refusing it.
    pub(super) async fn check<B>(
        &self,
        req: Request<B>,
    ) -> Result<Request<Full<Bytes>>, Response<Body>>
    where
        B: http_body::Body,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        if let Some(origin) = req.headers().get(header::ORIGIN) {
            let origin = origin
                .to_str()
                .unwrap_or("")
                .trim_end_matches('/')
                .to_ascii_lowercase();
            if !self.origins.contains(&origin) {
                return Err(refuse(
                    StatusCode::FORBIDDEN,
                    &Value::Null,
                    &format!(
                        "origin {origin:?} is not allowed (DNS rebinding protection); a browser \
                         client's origin must be allowed with --allow-origin"
                    ),
                ));
            }
        }
        if !self.authorized(req.headers().get(header::AUTHORIZATION)) {
            let mut r = refuse(
                StatusCode::UNAUTHORIZED,
                &Value::Null,
                "missing or wrong bearer token: send `Authorization: Bearer TOKEN` with the \
                 token warden mcp printed at start, or the one in its --token-file",
            );
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return Err(r);
        }
        let too_large = || {
            refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                &Value::Null,
                &format!(
                    "message too large: the limit is {} bytes (--max-message-bytes)",
                    self.max_body
                ),
            )
        };
        let declared = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > self.max_body as u64) {
            return Err(too_large());
        }
        let (parts, body) = req.into_parts();
        let bytes = match Limited::new(body, self.max_body).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(e) if e.is::<http_body_util::LengthLimitError>() => return Err(too_large()),
            Err(e) => {
                let msg = format!("the request body could not be read: {e}");
                return Err(refuse(StatusCode::BAD_REQUEST, &Value::Null, &msg));
            }
        };
        if parts.method == http::Method::POST {
            let message: Value = serde_json::from_slice(&bytes).map_err(|e| {
                let msg = format!("parse error: the message is not JSON ({e})");
                refuse_code(StatusCode::BAD_REQUEST, &Value::Null, -32700, &msg)
            })?;
            let Some(object) = message.as_object() else {
                return Err(refuse(
                    StatusCode::BAD_REQUEST,
                    &Value::Null,
                    "invalid request: send one JSON-RPC message (an object) per request",
                ));
            };
            let opens_session = !parts.headers.contains_key("mcp-session-id")
                && object.get("method") == Some(&json!("initialize"));
            if opens_session && self.sessions.sessions.read().await.len() >= self.max_sessions {
                let id = object.get("id").cloned().unwrap_or(Value::Null);
                return Err(refuse(
                    StatusCode::SERVICE_UNAVAILABLE,
                    &id,
                    &format!(
                        "too many sessions (the limit is {}, --max-sessions): close one \
                         (DELETE with its Mcp-Session-Id) or wait for an idle one to expire",
                        self.max_sessions
                    ),
                ));
            }
        }
        Ok(Request::from_parts(parts, Full::new(bytes)))
    }

    fn authorized(&self, header: Option<&HeaderValue>) -> bool {
        let Some(value) = header.and_then(|h| h.to_str().ok()) else {
            return false;
        };
        let Some((scheme, token)) = value.split_once(' ') else {
            return false;
        };
        scheme.eq_ignore_ascii_case("bearer") && same_secret(token.trim(), &self.token)
    }
}

/// Whether two secrets are equal, in time that depends only on their length.
fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// A refusal with a JSON-RPC "invalid request" error body.
pub(super) fn refuse(status: StatusCode, id: &Value, message: &str) -> Response<Body> {
    refuse_code(status, id, -32600, message)
}

fn refuse_code(status: StatusCode, id: &Value, code: i64, message: &str) -> Response<Body> {
    let body = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    });
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::same_secret;

    #[test]
    fn secrets_match_only_when_equal() {
        assert!(same_secret("abc123", "abc123"));
        assert!(!same_secret("abc124", "abc123"));
        assert!(!same_secret("abc12", "abc123"));
        assert!(!same_secret("", "abc123"));
    }
}
