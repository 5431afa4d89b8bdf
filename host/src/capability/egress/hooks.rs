//! The per-call egress state and the `wasi:http` hooks that route every
//! outgoing request through it.
//!
//! Invariant: `wasi:http/outgoing-handler.handle` reaches the network only
//! through [`EgressHooks::send_request`], which runs the checks of
//! [`super::send`]; a call without a network grant has no [`EgressCall`]
//! and every request it could make is refused (and `wasi:http` is not
//! even linked for it).

use std::sync::Arc;

use http::HeaderName;
use wasmtime_wasi_http::{
    DEFAULT_FORBIDDEN_HEADERS, Error as HttpError, ForbiddenHeaderFilter, RequestOptions, WasiBody,
    WasiHttpHooks,
};

use wasmtime_wasi_http::p2::bindings::http::types::ErrorCode;

use super::call::EgressCall;

/// The hooks a call's `wasi:http` runs with.
#[derive(Default)]
pub struct EgressHooks {
    call: Option<Arc<EgressCall>>,
}

impl EgressHooks {
    pub fn new(call: Arc<EgressCall>) -> EgressHooks {
        EgressHooks { call: Some(call) }
    }
}

/// Headers a guest may not set: wasmtime's list (connection, host,
/// transfer-encoding, upgrade, proxy headers …) plus `te`, `trailer` and
/// anything else starting with `proxy-`.
fn forbidden(name: &HeaderName) -> bool {
    DEFAULT_FORBIDDEN_HEADERS.contains(name)
        || name == http::header::TE
        || name == http::header::TRAILER
        || name.as_str().starts_with("proxy-")
}

type SendResult = Result<
    (
        http::Response<WasiBody>,
        Box<dyn Future<Output = Result<(), HttpError>> + Send>,
    ),
    HttpError,
>;

impl WasiHttpHooks for EgressHooks {
    fn forbidden_header_filter(&mut self) -> ForbiddenHeaderFilter {
        Arc::new(forbidden)
    }

    /// A cap the request body hit surfaces inside hyper's error: give the
    /// guest the cap's own code rather than a protocol error.
    fn p2_error_from_hyper(&mut self, err: &hyper::Error) -> ErrorCode {
        let mut source = std::error::Error::source(err);
        while let Some(e) = source {
            if let Some(HttpError::HttpRequestBodySize(limit)) = e.downcast_ref::<HttpError>() {
                return ErrorCode::HttpRequestBodySize(*limit);
            }
            source = e.source();
        }
        ErrorCode::HttpProtocolError
    }

    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        _fut: Box<dyn Future<Output = Result<(), HttpError>> + Send>,
    ) -> Box<dyn Future<Output = SendResult> + Send> {
        match &self.call {
            None => Box::new(async { Err(HttpError::HttpRequestDenied) }),
            Some(call) => Box::new(super::send::send(call.clone(), request, options)),
        }
    }
}
