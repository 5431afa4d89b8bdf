//! Body stream errors as the guest can read them.
//!
//! wasmtime-wasi-http 48 keeps the error a response or request body ends
//! with as its own embedder [`HttpError`], while `http-error-code` only
//! recognises the `wasi:http` [`ErrorCode`]: without this conversion a
//! guest could read the message of a body cut at the byte cap or timed out,
//! but not its code.

use wasmtime_wasi::p2::StreamError;
use wasmtime_wasi_http::Error as HttpError;
use wasmtime_wasi_http::p2::bindings::http::types::ErrorCode;

/// `err` with an embedder HTTP error replaced by its `wasi:http` code.
pub fn with_http_code(err: StreamError) -> StreamError {
    let StreamError::LastOperationFailed(e) = err else {
        return err;
    };
    match e.downcast::<HttpError>() {
        Ok(http) => StreamError::LastOperationFailed(wasmtime::Error::new(code_of(http))),
        Err(e) => StreamError::LastOperationFailed(e),
    }
}

/// The `wasi:http` code for an error a body stream can end with; anything
/// else is an internal error carrying its message.
fn code_of(e: HttpError) -> ErrorCode {
    match e {
        HttpError::HttpResponseBodySize(n) => ErrorCode::HttpResponseBodySize(n),
        HttpError::HttpRequestBodySize(n) => ErrorCode::HttpRequestBodySize(n),
        HttpError::ConnectionReadTimeout => ErrorCode::ConnectionReadTimeout,
        HttpError::ConnectionWriteTimeout => ErrorCode::ConnectionWriteTimeout,
        HttpError::ConnectionTimeout => ErrorCode::ConnectionTimeout,
        HttpError::ConnectionTerminated => ErrorCode::ConnectionTerminated,
        HttpError::HttpResponseTimeout => ErrorCode::HttpResponseTimeout,
        HttpError::HttpResponseIncomplete => ErrorCode::HttpResponseIncomplete,
        HttpError::HttpProtocolError => ErrorCode::HttpProtocolError,
        HttpError::HttpRequestDenied => ErrorCode::HttpRequestDenied,
        HttpError::DestinationIpProhibited => ErrorCode::DestinationIpProhibited,
        HttpError::HttpResponseTransferCoding(c) => ErrorCode::HttpResponseTransferCoding(c),
        HttpError::HttpResponseContentCoding(c) => ErrorCode::HttpResponseContentCoding(c),
        HttpError::InternalError(m) => ErrorCode::InternalError(m),
        HttpError::Hyper(h) if h.is_incomplete_message() => ErrorCode::HttpResponseIncomplete,
        HttpError::Hyper(h) if h.is_timeout() => ErrorCode::ConnectionReadTimeout,
        other => ErrorCode::InternalError(Some(other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime_wasi_http::p2::bindings::http::types::ErrorCode as Code;

    fn code(err: StreamError) -> Option<Code> {
        match err {
            StreamError::LastOperationFailed(e) => e.downcast_ref::<Code>().cloned(),
            _ => None,
        }
    }

    #[test]
    fn body_errors_reach_the_guest_as_codes() {
        let cut = StreamError::LastOperationFailed(HttpError::HttpResponseBodySize(Some(9)).into());
        assert!(matches!(
            code(with_http_code(cut)),
            Some(Code::HttpResponseBodySize(Some(9)))
        ));
        let slow = StreamError::LastOperationFailed(HttpError::ConnectionReadTimeout.into());
        assert!(matches!(
            code(with_http_code(slow)),
            Some(Code::ConnectionReadTimeout)
        ));
        let odd = StreamError::LastOperationFailed(HttpError::LoopDetected.into());
        assert!(matches!(
            code(with_http_code(odd)),
            Some(Code::InternalError(Some(_)))
        ));
    }

    #[test]
    fn other_errors_pass_unchanged() {
        assert!(matches!(
            with_http_code(StreamError::Closed),
            StreamError::Closed
        ));
        let io = StreamError::LastOperationFailed(wasmtime::Error::msg("disk on fire"));
        match with_http_code(io) {
            StreamError::LastOperationFailed(e) => assert_eq!(e.to_string(), "disk on fire"),
            other => panic!("{other:?}"),
        }
    }
}
