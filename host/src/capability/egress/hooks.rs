//! The per-call egress state and the `wasi:http` hooks that route every
//! outgoing request through it.
//!
//! Invariant: `wasi:http/outgoing-handler.handle` reaches the network only
//! through [`EgressHooks::send_request`], which runs the checks of
//! [`super::send`]; a call without a network grant has no [`EgressCall`]
//! and every request it could make is refused (and `wasi:http` is not
//! even linked for it).

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use http::HeaderName;
use wasmtime_wasi_http::{
    DEFAULT_FORBIDDEN_HEADERS, Error as HttpError, ForbiddenHeaderFilter, RequestOptions, WasiBody,
    WasiHttpHooks,
};

use wasmtime_wasi_http::p2::bindings::http::types::ErrorCode;

use super::check::CompiledGrant;
use super::connect::EgressEnv;
use super::credential::{LoadedCredential, Redactor};
use super::grant::NetworkGrant;
use super::record::{DenialReason, EgressLog, NetworkDenial, NetworkRecords};
use crate::base::{CancelToken, Limits};

/// The byte and count caps of one call's network use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EgressLimits {
    pub request_bytes: u64,
    pub response_bytes: u64,
    pub requests: u64,
}

impl EgressLimits {
    pub fn from_limits(l: &Limits) -> EgressLimits {
        EgressLimits {
            request_bytes: l.http_request_bytes,
            response_bytes: l.http_response_bytes,
            requests: l.http_requests,
        }
    }
}

/// Everything one call's requests share.
pub struct EgressCall {
    pub(super) grant: CompiledGrant,
    pub(super) credentials: Vec<LoadedCredential>,
    pub(super) redactor: Redactor,
    pub(super) env: EgressEnv,
    pub(super) limits: EgressLimits,
    pub(super) deadline: Instant,
    pub(super) cancel: CancelToken,
    pub(super) log: Mutex<EgressLog>,
    pub(super) requests: AtomicU64,
}

impl EgressCall {
    /// The egress state of a call granted `grant`; credential values are
    /// read now.
    pub fn new(
        grant: &NetworkGrant,
        env: EgressEnv,
        limits: EgressLimits,
        deadline: Instant,
        cancel: CancelToken,
    ) -> EgressCall {
        let credentials: Vec<LoadedCredential> =
            grant.credentials.iter().map(|c| c.load()).collect();
        let redactor = Redactor::new(&credentials);
        EgressCall {
            grant: CompiledGrant::new(grant.clone()),
            credentials,
            redactor,
            env,
            limits,
            deadline,
            cancel,
            log: Mutex::default(),
            requests: AtomicU64::new(0),
        }
    }

    /// Every credential value the call holds, as a redactor.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// What the call's requests did so far.
    pub fn records(&self) -> NetworkRecords {
        self.log().finish()
    }

    pub(super) fn log(&self) -> std::sync::MutexGuard<'_, EgressLog> {
        self.log.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Record a refusal; return the error code the guest gets for it.
    pub(super) fn deny(
        &self,
        destination: String,
        method: &str,
        reason: DenialReason,
    ) -> HttpError {
        let code = error_code(&reason);
        self.log()
            .deny(NetworkDenial::new(destination, method.to_string(), reason));
        code
    }
}

/// The `wasi:http` error code for a refusal.
pub fn error_code(reason: &DenialReason) -> HttpError {
    match reason {
        DenialReason::LiteralAddress { .. } | DenialReason::ResolvedAddress { .. } => {
            HttpError::DestinationIpProhibited
        }
        DenialReason::BadHost { .. } | DenialReason::Scheme { .. } => {
            HttpError::HttpRequestUriInvalid
        }
        DenialReason::RequestTooLarge { limit, .. } => HttpError::HttpRequestBodySize(Some(*limit)),
        DenialReason::NoRule
        | DenialReason::MethodOrPath { .. }
        | DenialReason::NotDeclared
        | DenialReason::Userinfo
        | DenialReason::HostHeader { .. }
        | DenialReason::BadHeader { .. }
        | DenialReason::AmbiguousPath
        | DenialReason::TooManyRequests { .. }
        | DenialReason::CredentialUnavailable { .. } => HttpError::HttpRequestDenied,
    }
}

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
