//! Network egress: the only way a guest reaches the network.
//!
//! A guest granted network gets `wasi:http` and nothing else
//! (`wasi:sockets` is never linked). Every request it sends goes through
//! [`EgressHooks`]: the destination is checked against the policy's rules
//! and the manifest ([`check`]), the name resolved once ([`Resolver`]),
//! every address vetted (no loopback, private, link-local or reserved
//! address unless a rule names it), a credential injected only for its
//! audience, the connection pinned to the vetted address, and every body
//! and wait bounded. A refusal is a `wasi:http` error code for the guest
//! and a [`NetworkDenial`] for the model; each request sent is a
//! [`NetworkUse`]. Credential values never reach the guest.
//!
//! Each step in detail: `docs/egress.md`, "How the host checks a request".

mod address;
mod body;
mod call;
mod check;
mod connect;
mod credential;
mod grant;
mod hooks;
mod pattern;
mod record;
mod resolve;
mod rule;
mod send;
mod stream_error;

pub use address::{AddressClass, Host, HostError, canonical_ip, classify, parse_host};
pub use call::{EgressCall, EgressLimits, error_code};
pub use check::{Allowed, CompiledGrant, Destination, check_request, vet_addresses};
pub use connect::{EgressEnv, TrustError};
pub use credential::{
    CredentialConfigError, CredentialHandle, CredentialSource, CredentialValueError,
    LoadedCredential, MIN_SECRET_BYTES, Redactor, Secret,
};
pub use grant::NetworkGrant;
pub use hooks::EgressHooks;
pub use pattern::{HostPattern, NetPattern, PatternError, PortPattern, Scheme};
pub use record::{DenialReason, MAX_NETWORK_RECORDS, NetworkDenial, NetworkRecords, NetworkUse};
pub use resolve::{Resolver, SystemResolver};
pub use rule::{NetRule, NetRuleError, PrivateAccess};
pub use send::send;
pub use stream_error::with_http_code;
