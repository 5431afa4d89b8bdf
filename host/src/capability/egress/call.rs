//! One call's egress state: its compiled grant, credentials, caps,
//! deadline, and the record of what its requests did.

use std::sync::atomic::AtomicU64;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use wasmtime_wasi_http::Error as HttpError;

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
