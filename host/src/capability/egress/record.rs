//! What a call did on the network, as the call report records it: each
//! request that left the host ([`NetworkUse`]) and each one refused
//! ([`NetworkDenial`]). Neither ever holds a credential's value.

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::address::AddressClass;
use super::pattern::Scheme;
use crate::base::keep_at_most;

/// Records of each kind kept per call; later ones are only counted.
pub const MAX_NETWORK_RECORDS: usize = 64;

/// One request that passed the checks and was sent.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NetworkUse {
    pub scheme: Scheme,
    /// The host as normalised (a name, or an address for a literal).
    pub host: String,
    pub port: u16,
    /// The vetted address connected to, once connected.
    pub address: Option<IpAddr>,
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// The response status, if a response came.
    pub status: Option<u16>,
    /// Request body bytes sent.
    pub bytes_out: u64,
    /// Response body bytes received (what the guest could read).
    pub bytes_in: u64,
    /// The name of the credential the host injected, if any.
    pub credential: Option<String>,
    /// Why the exchange failed or was cut short, if it did.
    pub error: Option<String>,
}

/// Why a request was refused before it left the host.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, thiserror::Error)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DenialReason {
    #[error("no rule allows it")]
    NoRule,
    #[error("no rule allows {method} {path}")]
    MethodOrPath { method: String, path: String },
    #[error("the plugin does not declare it in its manifest")]
    NotDeclared,
    #[error("{host} is {}", class.describe())]
    LiteralAddress {
        host: String,
        address: IpAddr,
        class: AddressClass,
    },
    #[error("{host} resolves to {} ({address})", class.describe())]
    ResolvedAddress {
        host: String,
        address: IpAddr,
        class: AddressClass,
    },
    #[error("URLs with user info are not allowed")]
    Userinfo,
    #[error("the Host header `{value}` differs from the URL's host")]
    HostHeader { value: String },
    #[error("header `{name}` holds a CR, LF or NUL byte")]
    BadHeader { name: String },
    #[error("the path can be read more than one way (dot segments or encoded separators)")]
    AmbiguousPath,
    #[error("the host is not valid: {detail}")]
    BadHost { detail: String },
    #[error("only http and https are allowed, not `{scheme}`")]
    Scheme { scheme: String },
    #[error("the call already made its {limit} requests")]
    TooManyRequests { limit: u64 },
    #[error("the request body ({size} bytes) exceeds the {limit}-byte cap")]
    RequestTooLarge { size: u64, limit: u64 },
    #[error("credential `{name}` is unavailable: {why}")]
    CredentialUnavailable { name: String, why: String },
}

/// One refused request.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NetworkDenial {
    /// `HOST:PORT` as the request named it (the host normalised when it
    /// could be read).
    pub destination: String,
    pub method: String,
    pub reason: DenialReason,
    /// The sentence the model reads.
    pub message: String,
}

/// Bytes of each string from a request (a path, a header value) a record
/// keeps; the rest is cut, so 64 records cannot hold megabytes each.
pub const MAX_RECORDED_TEXT: usize = 2048;

impl DenialReason {
    /// The reason with every string it took from the request cut to
    /// [`MAX_RECORDED_TEXT`].
    fn bounded(self) -> DenialReason {
        let cut = |s: String| keep_at_most(s, MAX_RECORDED_TEXT);
        match self {
            DenialReason::MethodOrPath { method, path } => DenialReason::MethodOrPath {
                method: cut(method),
                path: cut(path),
            },
            DenialReason::LiteralAddress {
                host,
                address,
                class,
            } => DenialReason::LiteralAddress {
                host: cut(host),
                address,
                class,
            },
            DenialReason::ResolvedAddress {
                host,
                address,
                class,
            } => DenialReason::ResolvedAddress {
                host: cut(host),
                address,
                class,
            },
            DenialReason::HostHeader { value } => DenialReason::HostHeader { value: cut(value) },
            DenialReason::BadHeader { name } => DenialReason::BadHeader { name: cut(name) },
            DenialReason::BadHost { detail } => DenialReason::BadHost {
                detail: cut(detail),
            },
            DenialReason::Scheme { scheme } => DenialReason::Scheme {
                scheme: cut(scheme),
            },
            DenialReason::CredentialUnavailable { name, why } => {
                DenialReason::CredentialUnavailable {
                    name: cut(name),
                    why: cut(why),
                }
            }
            r @ (DenialReason::NoRule
            | DenialReason::NotDeclared
            | DenialReason::Userinfo
            | DenialReason::AmbiguousPath
            | DenialReason::TooManyRequests { .. }
            | DenialReason::RequestTooLarge { .. }) => r,
        }
    }
}

impl NetworkDenial {
    pub fn new(destination: String, method: String, reason: DenialReason) -> NetworkDenial {
        let destination = keep_at_most(destination, MAX_RECORDED_TEXT);
        let method = keep_at_most(method, MAX_RECORDED_TEXT);
        let reason = reason.bounded();
        let message = format!("network access to {destination} denied: {reason}");
        NetworkDenial {
            destination,
            method,
            reason,
            message,
        }
    }
}

/// Byte counters a request's bodies update as they flow.
#[derive(Debug, Clone, Default)]
pub struct Counters {
    pub out: Arc<AtomicU64>,
    pub inn: Arc<AtomicU64>,
}

/// The network records of one call, filled in by request tasks.
#[derive(Debug, Default)]
pub struct EgressLog {
    uses: Vec<(NetworkUse, Counters)>,
    uses_dropped: u64,
    denials: Vec<NetworkDenial>,
    denials_dropped: u64,
}

/// Index of a [`NetworkUse`] in the log, to update it later.
#[derive(Debug, Clone, Copy)]
pub struct UseId(Option<usize>);

impl EgressLog {
    pub fn deny(&mut self, denial: NetworkDenial) {
        if self.denials.len() < MAX_NETWORK_RECORDS {
            self.denials.push(denial);
        } else {
            self.denials_dropped += 1;
        }
    }

    pub fn start(&mut self, use_: NetworkUse, counters: Counters) -> UseId {
        if self.uses.len() < MAX_NETWORK_RECORDS {
            self.uses.push((use_, counters));
            UseId(Some(self.uses.len() - 1))
        } else {
            self.uses_dropped += 1;
            UseId(None)
        }
    }

    pub fn update(&mut self, id: UseId, f: impl FnOnce(&mut NetworkUse)) {
        if let Some(entry) = id.0.and_then(|i| self.uses.get_mut(i)) {
            f(&mut entry.0);
        }
    }

    /// The records, with byte counts as they stand now.
    pub fn finish(&self) -> NetworkRecords {
        NetworkRecords {
            uses: self
                .uses
                .iter()
                .map(|(u, c)| NetworkUse {
                    bytes_out: c.out.load(Ordering::Relaxed),
                    bytes_in: c.inn.load(Ordering::Relaxed),
                    ..u.clone()
                })
                .collect(),
            uses_dropped: self.uses_dropped,
            denials: self.denials.clone(),
            denials_dropped: self.denials_dropped,
        }
    }
}

/// A call's network records, for its report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkRecords {
    pub uses: Vec<NetworkUse>,
    pub uses_dropped: u64,
    pub denials: Vec<NetworkDenial>,
    pub denials_dropped: u64,
}
