//! Network egress: the only way a guest reaches the network.
//!
//! A guest granted network gets `wasi:http` (types and outgoing-handler)
//! and nothing else: `wasi:sockets` is never linked, so it can neither open
//! sockets nor resolve names. Every request it sends goes through
//! [`EgressHooks`], which upholds, in this order:
//!
//! 1. **Name check** ([`check`]): scheme `http`/`https`; no user info; no
//!    Host header other than the URL's; no CR, LF or NUL in any header;
//!    the host normalised once (every IP spelling becomes one address);
//!    a policy rule must match scheme, host, port, method and path, and the
//!    plugin's manifest must declare the destination.
//! 2. **Resolve once** ([`Resolver`]); a literal address is not resolved.
//! 3. **Vet every address**: if *any* is loopback, private, link-local,
//!    shared (CGNAT), documentation, reserved, unspecified, multicast or
//!    broadcast — IPv4-mapped, IPv4-compatible, NAT64 and 6to4 forms
//!    included — the request is refused, unless an allowing rule names
//!    that address or lists it under `allow_private` (unspecified,
//!    multicast and broadcast: never).
//! 4. **Credential**: injected only now, and only for its exact audience,
//!    replacing any header of that name the guest set.
//! 5. **Pinned connect** to a vetted address (no second resolution, so DNS
//!    rebinding cannot move it), TLS verified against the URL's host.
//! 6. **Bounded exchange**: request and response bodies capped, every
//!    wait ending at the call's deadline or cancellation; no redirect is
//!    followed (the guest sees the 3xx and a new request is checked anew).
//!
//! A refusal is a `wasi:http` error code for the guest
//! (`HTTP-request-denied`, `destination-IP-prohibited`, …) and a
//! [`NetworkDenial`] with a sentence for the model ("network access to
//! HOST:PORT denied: …"); each request sent is a [`NetworkUse`].
//! Credential values never reach the guest: responses from the audience
//! are redacted, and so is everything the call returns.

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
    CredentialHandle, CredentialSource, LoadedCredential, MIN_SECRET_BYTES, Redactor, Secret,
};
pub use grant::NetworkGrant;
pub use hooks::EgressHooks;
pub use pattern::{HostPattern, NetPattern, PatternError, PortPattern, Scheme};
pub use record::{DenialReason, MAX_NETWORK_RECORDS, NetworkDenial, NetworkRecords, NetworkUse};
pub use resolve::{Resolver, SystemResolver};
pub use rule::{NetRule, PrivateAccess};
pub use send::send;
pub use stream_error::with_http_code;
