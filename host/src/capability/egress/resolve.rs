//! Name resolution for egress: asked once per request, by the host only.
//!
//! Invariant: the addresses a [`Resolver`] returns are the only ones a
//! request may connect to, and each is vetted before any connection; the
//! connection is made to a vetted address, so a second answer (DNS
//! rebinding) cannot change where the request goes. Guests never resolve
//! names themselves (`wasi:sockets` is not linked).

use std::net::{IpAddr, ToSocketAddrs};

/// Turns a host name into addresses. Injectable for tests through
/// [`super::EgressEnv::with_resolver`]; never configurable from a policy.
pub trait Resolver: Send + Sync + 'static {
    /// Every address `host` has. Called on a blocking thread.
    fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<IpAddr>>;
}

/// The operating system's resolver (`getaddrinfo`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl Resolver for SystemResolver {
    fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<IpAddr>> {
        Ok((host, port).to_socket_addrs()?.map(|a| a.ip()).collect())
    }
}
