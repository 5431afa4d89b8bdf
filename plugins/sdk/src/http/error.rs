//! HTTP failures as the model should read them, and the mapping from
//! `wasi:http`'s `error-code` to them.
//!
//! The host's egress layer reports a refused destination as
//! `HTTP-request-denied` or `destination-IP-prohibited`, or as an
//! `internal-error` carrying its own explanation; that text is passed
//! through verbatim, so the model learns which rule to ask for.

use wasip2::http::types::ErrorCode;

use super::UrlError;
use crate::ToolError;

/// Why an HTTP request failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    /// The URL cannot be requested.
    #[error("invalid URL: {0}")]
    InvalidUrl(#[from] UrlError),
    /// A request header name or value was refused before sending.
    #[error("header `{name}`: {reason}")]
    InvalidHeader { name: String, reason: String },
    /// The host's network policy refused the request; the text is the
    /// host's own when it gave one.
    #[error("{0}")]
    Denied(String),
    /// The host name could not be resolved.
    #[error("DNS lookup failed: {0}")]
    Dns(String),
    /// Connecting failed or the connection broke.
    #[error("connection failed: {0}")]
    Connection(String),
    /// The TLS handshake or certificate check failed.
    #[error("TLS failed: {0}")]
    Tls(String),
    /// Gave up waiting.
    #[error("timed out: {0}")]
    Timeout(String),
    /// The request or response broke an HTTP rule or a size limit.
    #[error("HTTP error: {0}")]
    Protocol(String),
    /// Anything else the host reported.
    #[error("HTTP request failed: {0}")]
    Other(String),
}

impl HttpError {
    /// Describe a `wasi:http` error code.
    pub(crate) fn from_code(code: ErrorCode) -> HttpError {
        use HttpError as E;
        let size = |what: &str, limit: Option<u64>| match limit {
            Some(n) => format!("{what} exceeds the limit of {n} bytes"),
            None => format!("{what} is too large"),
        };
        match code {
            ErrorCode::DnsTimeout => E::Timeout("the DNS lookup took too long".into()),
            ErrorCode::DnsError(p) => E::Dns(match (p.rcode, p.info_code) {
                (Some(rcode), _) => format!("the resolver answered {rcode}"),
                (None, Some(info)) => format!("resolver error (info code {info})"),
                (None, None) => "the name could not be resolved".into(),
            }),
            ErrorCode::DestinationNotFound => {
                E::Dns("the host name does not exist (check the spelling)".into())
            }
            ErrorCode::DestinationUnavailable => {
                E::Connection("the destination is unavailable".into())
            }
            ErrorCode::DestinationIpProhibited => E::Denied(
                "network access denied: the destination address is loopback, private or \
                 reserved, which only a policy rule naming it can allow"
                    .into(),
            ),
            ErrorCode::DestinationIpUnroutable => {
                E::Connection("the destination address is unroutable".into())
            }
            ErrorCode::ConnectionRefused => {
                E::Connection("the server refused the connection".into())
            }
            ErrorCode::ConnectionTerminated => {
                E::Connection("the server closed the connection unexpectedly".into())
            }
            ErrorCode::ConnectionTimeout => E::Timeout("connecting took too long".into()),
            ErrorCode::ConnectionReadTimeout => {
                E::Timeout("the server stopped sending data".into())
            }
            ErrorCode::ConnectionWriteTimeout => {
                E::Timeout("sending the request took too long".into())
            }
            ErrorCode::ConnectionLimitReached => {
                E::Connection("too many connections are open".into())
            }
            ErrorCode::TlsProtocolError => E::Tls("TLS protocol error".into()),
            ErrorCode::TlsCertificateError => {
                E::Tls("the server's certificate was not accepted".into())
            }
            ErrorCode::TlsAlertReceived(p) => E::Tls(match (p.alert_id, p.alert_message) {
                (_, Some(msg)) => format!("the server sent a TLS alert: {msg}"),
                (Some(id), None) => format!("the server sent TLS alert {id}"),
                (None, None) => "the server sent a TLS alert".into(),
            }),
            // The host uses this code for every refusal but an address's
            // (no rule, a request limit, an unavailable credential, …), and
            // tells the model which itself: claim no reason here.
            ErrorCode::HttpRequestDenied => {
                E::Denied("network access denied: the host refused this request".into())
            }
            ErrorCode::HttpRequestLengthRequired => {
                E::Protocol("the server requires a Content-Length".into())
            }
            ErrorCode::HttpRequestBodySize(n) => E::Protocol(size("the request body", n)),
            ErrorCode::HttpRequestMethodInvalid => {
                E::Protocol("the request method is invalid".into())
            }
            ErrorCode::HttpRequestUriInvalid => E::Protocol("the request URI is invalid".into()),
            ErrorCode::HttpRequestUriTooLong => E::Protocol("the request URI is too long".into()),
            ErrorCode::HttpRequestHeaderSectionSize(n) => {
                E::Protocol(size("the request headers", n.map(u64::from)))
            }
            ErrorCode::HttpRequestHeaderSize(p) => E::Protocol(field_size("request", p)),
            ErrorCode::HttpRequestTrailerSectionSize(n) => {
                E::Protocol(size("the request trailers", n.map(u64::from)))
            }
            ErrorCode::HttpRequestTrailerSize(p) => E::Protocol(field_size("request", Some(p))),
            ErrorCode::HttpResponseIncomplete => {
                E::Connection("the response ended before it was complete".into())
            }
            ErrorCode::HttpResponseHeaderSectionSize(n) => {
                E::Protocol(size("the response headers", n.map(u64::from)))
            }
            ErrorCode::HttpResponseHeaderSize(p) => E::Protocol(field_size("response", Some(p))),
            ErrorCode::HttpResponseBodySize(n) => E::Protocol(size("the response body", n)),
            ErrorCode::HttpResponseTrailerSectionSize(n) => {
                E::Protocol(size("the response trailers", n.map(u64::from)))
            }
            ErrorCode::HttpResponseTrailerSize(p) => E::Protocol(field_size("response", Some(p))),
            ErrorCode::HttpResponseTransferCoding(c) => E::Protocol(format!(
                "unsupported transfer coding{}",
                c.map(|c| format!(" `{c}`")).unwrap_or_default()
            )),
            ErrorCode::HttpResponseContentCoding(c) => E::Protocol(format!(
                "unsupported content coding{}",
                c.map(|c| format!(" `{c}`")).unwrap_or_default()
            )),
            ErrorCode::HttpResponseTimeout => {
                E::Timeout("the server took too long to respond".into())
            }
            ErrorCode::HttpUpgradeFailed => E::Protocol("the protocol upgrade failed".into()),
            ErrorCode::HttpProtocolError => {
                E::Protocol("the server broke the HTTP protocol".into())
            }
            ErrorCode::LoopDetected => E::Protocol("a request loop was detected".into()),
            ErrorCode::ConfigurationError => {
                E::Other("the host's HTTP client is misconfigured".into())
            }
            ErrorCode::InternalError(Some(text)) if is_denial(&text) => E::Denied(text),
            ErrorCode::InternalError(Some(text)) => E::Other(text),
            ErrorCode::InternalError(None) => {
                E::Other("the host reported an internal error".into())
            }
        }
    }
}

/// True when the host's free text reports a refusal by its egress policy
/// (for example "network access to example.com:443 denied: no rule allows it").
fn is_denial(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("denied") || lower.contains("not allowed") || lower.contains("prohibited")
}

fn field_size(side: &str, p: Option<wasip2::http::types::FieldSizePayload>) -> String {
    match p.and_then(|p| p.field_name) {
        Some(name) => format!("the {side} header `{name}` is too large"),
        None => format!("a {side} header is too large"),
    }
}

impl From<HttpError> for ToolError {
    fn from(err: HttpError) -> ToolError {
        use crate::ErrorKind as K;
        let kind = match &err {
            HttpError::InvalidUrl(_) | HttpError::InvalidHeader { .. } => K::InvalidInput,
            HttpError::Denied(_) => K::PermissionDenied,
            HttpError::Timeout(_) => K::Timeout,
            HttpError::Dns(_)
            | HttpError::Connection(_)
            | HttpError::Tls(_)
            | HttpError::Protocol(_)
            | HttpError::Other(_) => K::Io,
        };
        ToolError::new(kind, err.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;
    use wasip2::http::types::{DnsErrorPayload, FieldSizePayload};

    #[test]
    fn denials_pass_the_host_text_through() {
        let host = "network access to example.com:443 denied: no rule allows it";
        let err = HttpError::from_code(ErrorCode::InternalError(Some(host.into())));
        assert_eq!(err, HttpError::Denied(host.into()));
        assert_eq!(err.to_string(), host);
        let tool = ToolError::from(err);
        assert_eq!(tool.kind, ErrorKind::PermissionDenied);

        let err = HttpError::from_code(ErrorCode::HttpRequestDenied);
        assert!(matches!(err, HttpError::Denied(_)));
        assert_eq!(
            err.to_string(),
            "network access denied: the host refused this request"
        );
        let err = HttpError::from_code(ErrorCode::DestinationIpProhibited);
        assert!(matches!(err, HttpError::Denied(_)));
        let err = HttpError::from_code(ErrorCode::InternalError(Some("boom".into())));
        assert_eq!(err, HttpError::Other("boom".into()));
    }

    #[test]
    fn codes_read_as_sentences_with_kinds() {
        let cases = [
            (
                ErrorCode::ConnectionRefused,
                ErrorKind::Io,
                "connection failed: the server refused the connection",
            ),
            (
                ErrorCode::HttpResponseTimeout,
                ErrorKind::Timeout,
                "timed out: the server took too long to respond",
            ),
            (
                ErrorCode::DnsError(DnsErrorPayload {
                    rcode: Some("NXDOMAIN".into()),
                    info_code: None,
                }),
                ErrorKind::Io,
                "DNS lookup failed: the resolver answered NXDOMAIN",
            ),
            (
                ErrorCode::HttpResponseBodySize(Some(10)),
                ErrorKind::Io,
                "HTTP error: the response body exceeds the limit of 10 bytes",
            ),
            (
                ErrorCode::HttpRequestHeaderSize(Some(FieldSizePayload {
                    field_name: Some("cookie".into()),
                    field_size: None,
                })),
                ErrorKind::Io,
                "HTTP error: the request header `cookie` is too large",
            ),
        ];
        for (code, kind, text) in cases {
            let tool = ToolError::from(HttpError::from_code(code));
            assert_eq!((tool.kind, tool.message.as_str()), (kind, text));
        }
        let bad = ToolError::from(HttpError::from(UrlError::Userinfo));
        assert_eq!(bad.kind, ErrorKind::InvalidInput);
    }
}
