//! Which failures are worth another attempt, and how long to wait first.
//!
//! Retried: HTTP 408, 429 and 5xx, transport failures (connect, reset,
//! idle timeout), streams cut before their terminal event, and in-stream
//! errors that say the provider is overloaded. Never retried: any other
//! 4xx (401/403 are [`ProviderError::Auth`], a context overflow is
//! [`ProviderError::ContextLength`]), responses that cannot be parsed (a
//! server that sends malformed JSON once will send it again), and a
//! refused connection to a loopback address: no server runs there, and
//! waiting will not start one.

use std::hash::BuildHasher;
use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;
use serde_json::Value;

use super::super::{ModelResponse, ProviderError, RetryPolicy};

/// The outcome of one request and its stream.
pub(super) type Attempt = Result<ModelResponse, AttemptError>;

/// Why one attempt failed.
#[derive(Debug)]
pub(super) enum AttemptError {
    /// Worth another attempt, after `after` if the provider said so.
    Retry {
        reason: String,
        after: Option<Duration>,
    },
    /// Final: retrying would fail the same way.
    Fail(ProviderError),
}

impl AttemptError {
    pub(super) fn retry(reason: impl Into<String>) -> AttemptError {
        AttemptError::Retry {
            reason: reason.into(),
            after: None,
        }
    }

    pub(super) fn bad_response(message: impl Into<String>) -> AttemptError {
        AttemptError::Fail(ProviderError::BadResponse(message.into()))
    }
}

/// The wait before retry number `attempt` (1-based): the provider's
/// `Retry-After` if it sent one, otherwise `initial_delay` doubled per
/// attempt with jitter (a random point in its upper half); never longer
/// than `max_delay`.
pub(super) fn delay(policy: &RetryPolicy, attempt: u32, after: Option<Duration>) -> Duration {
    let wait = after.unwrap_or_else(|| {
        let doubled = policy
            .initial_delay
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(20));
        let full = doubled.min(policy.max_delay);
        // A fresh RandomState is randomly seeded: enough for jitter.
        let random = std::collections::hash_map::RandomState::new().hash_one(attempt);
        let fraction = 0.5 + (random % 1000) as f64 / 2000.0;
        full.mul_f64(fraction)
    });
    wait.min(policy.max_delay)
}

/// The wait a response asks for: `retry-after-ms` (OpenAI), or
/// `Retry-After` as seconds or an HTTP date.
pub(super) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok()) {
        return Duration::try_from_secs_f64(ms / 1000.0).ok();
    }
    let value = text("retry-after")?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).ok();
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(SystemTime::now()).unwrap_or_default())
}

/// Classify a non-success HTTP response.
pub(super) fn from_status(status: u16, body: &str, after: Option<Duration>) -> AttemptError {
    let (code, message) = error_detail(body);
    let message = match message {
        Some(m) => m,
        None if body.trim().is_empty() => "no details given".to_string(),
        None => excerpt(body),
    };
    if code.as_deref() == Some("insufficient_quota") {
        return AttemptError::Fail(ProviderError::BadRequest { status, message });
    }
    match status {
        408 | 429 | 500..=599 => AttemptError::Retry {
            reason: format!("HTTP {status}: {message}"),
            after,
        },
        401 | 403 => AttemptError::Fail(ProviderError::Auth { status, message }),
        400..=499 if is_context_overflow(code.as_deref(), &message) => {
            AttemptError::Fail(ProviderError::ContextLength { message })
        }
        400..=499 => AttemptError::Fail(ProviderError::BadRequest { status, message }),
        _ => AttemptError::bad_response(format!("unexpected HTTP {status}: {message}")),
    }
}

/// Classify an error the provider reported inside a stream (OpenAI
/// `error`/`response.failed`, Anthropic `error`): `code` is its code or type.
pub(super) fn stream_error(code: &str, message: &str) -> AttemptError {
    let message = if message.is_empty() {
        "no details given"
    } else {
        message
    };
    if is_context_overflow(Some(code), message) {
        return AttemptError::Fail(ProviderError::ContextLength {
            message: message.to_string(),
        });
    }
    let transient = [
        "overloaded",
        "rate_limit",
        "server_error",
        "api_error",
        "internal",
        "timeout",
    ];
    if transient.iter().any(|t| code.contains(t)) {
        return AttemptError::retry(format!("the provider reported {code}: {message}"));
    }
    AttemptError::bad_response(format!(
        "the provider reported an error ({code}): {message}"
    ))
}

/// A transport failure of the request (connect, reset, TLS): retried,
/// except a request that could not even be built.
pub(super) fn transport_error(e: &reqwest::Error) -> AttemptError {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    if e.is_builder() {
        AttemptError::Fail(ProviderError::Transport(text))
    } else {
        AttemptError::retry(text)
    }
}

/// A failure to send the request to `url`: a refused connection to a
/// loopback address (`loopback`) is final, anything else is
/// [`transport_error`].
pub(super) fn send_error(e: &reqwest::Error, url: &reqwest::Url, loopback: bool) -> AttemptError {
    if loopback && e.is_connect() && refused(e) {
        return AttemptError::Fail(ProviderError::NotListening {
            url: url.to_string(),
        });
    }
    transport_error(e)
}

/// Whether the connection was refused, somewhere down the error's sources.
fn refused(e: &reqwest::Error) -> bool {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if s.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
        {
            return true;
        }
        source = s.source();
    }
    false
}

/// At most 500 characters of a response body, for an error message.
pub(super) fn excerpt(body: &str) -> String {
    let body = body.trim();
    match body.char_indices().nth(500) {
        Some((end, _)) => format!("{}…", &body[..end]),
        None => body.to_string(),
    }
}

/// The error code (or type) and message of an error body: OpenAI and
/// Anthropic `{"error": {"message", "code"|"type"}}`, Ollama `{"error": "…"}`.
fn error_detail(body: &str) -> (Option<String>, Option<String>) {
    let Ok(json) = serde_json::from_str::<Value>(body) else {
        return (None, None);
    };
    let error = json.get("error").unwrap_or(&json);
    if let Some(text) = error.as_str() {
        return (None, Some(text.to_string()));
    }
    let field = |name: &str| error.get(name).and_then(Value::as_str).map(str::to_string);
    (field("code").or_else(|| field("type")), field("message"))
}

/// Whether an error says the prompt does not fit the context window, in
/// the words of OpenAI, Anthropic, vLLM or llama.cpp.
fn is_context_overflow(code: Option<&str>, message: &str) -> bool {
    if matches!(
        code,
        Some("context_length_exceeded" | "exceed_context_size_error")
    ) {
        return true;
    }
    let m = message.to_ascii_lowercase();
    [
        "maximum context length",
        "prompt is too long",
        "context window",
        "context length",
        "context size",
    ]
    .iter()
    .any(|w| m.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_and_caps() {
        let policy = RetryPolicy {
            max_retries: 10,
            initial_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(500),
            max_elapsed: Duration::from_secs(10),
        };
        for _ in 0..50 {
            let d1 = delay(&policy, 1, None);
            assert!(d1 >= Duration::from_millis(50) && d1 <= Duration::from_millis(100));
            let d2 = delay(&policy, 2, None);
            assert!(d2 >= Duration::from_millis(100) && d2 <= Duration::from_millis(200));
            assert!(delay(&policy, 30, None) <= Duration::from_millis(500));
        }
        let asked = Some(Duration::from_secs(60));
        assert_eq!(delay(&policy, 1, asked), Duration::from_millis(500));
    }

    #[test]
    fn retry_after_reads_seconds_milliseconds_and_dates() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", "3".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(3)));
        let soon = SystemTime::now() + Duration::from_secs(120);
        h.insert(
            "retry-after",
            httpdate::fmt_http_date(soon).parse().unwrap(),
        );
        let d = retry_after(&h).unwrap();
        assert!(d > Duration::from_secs(100) && d <= Duration::from_secs(120));
        h.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
        h.insert("retry-after-ms", "250".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(250)));
        assert_eq!(retry_after(&HeaderMap::new()), None);
    }

    #[tokio::test]
    async fn a_refused_connection_is_final_on_loopback_only() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url: reqwest::Url = format!("http://127.0.0.1:{port}/v1/chat/completions")
            .parse()
            .unwrap();
        let e = reqwest::Client::new()
            .post(url.clone())
            .send()
            .await
            .unwrap_err();
        assert!(matches!(
            send_error(&e, &url, true),
            AttemptError::Fail(ProviderError::NotListening { url: u }) if u == url.as_str()
        ));
        // The same refusal from a host elsewhere (a load balancer between
        // restarts) is worth another attempt.
        assert!(matches!(
            send_error(&e, &url, false),
            AttemptError::Retry { .. }
        ));
    }

    #[test]
    fn statuses_are_classified() {
        let ctx = r#"{"error":{"message":"This model's maximum context length is 8192 tokens","code":"context_length_exceeded"}}"#;
        assert!(matches!(
            from_status(400, ctx, None),
            AttemptError::Fail(ProviderError::ContextLength { .. })
        ));
        let anthropic = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#;
        assert!(matches!(
            from_status(400, anthropic, None),
            AttemptError::Fail(ProviderError::ContextLength { .. })
        ));
        assert!(matches!(
            from_status(401, "", None),
            AttemptError::Fail(ProviderError::Auth { status: 401, .. })
        ));
        assert!(matches!(
            from_status(529, r#"{"error":"busy"}"#, None),
            AttemptError::Retry { .. }
        ));
        let quota =
            r#"{"error":{"message":"You exceeded your quota","code":"insufficient_quota"}}"#;
        assert!(matches!(
            from_status(429, quota, None),
            AttemptError::Fail(ProviderError::BadRequest { status: 429, .. })
        ));
        assert!(matches!(
            stream_error("overloaded_error", "Overloaded"),
            AttemptError::Retry { .. }
        ));
        assert!(matches!(
            stream_error("invalid_prompt", "nope"),
            AttemptError::Fail(ProviderError::BadResponse(_))
        ));
    }
}
