//! The egress environment (resolver, TLS trust) and the pinned connect.
//!
//! Invariants: a connection is made only to an address the check vetted,
//! never to a name (so nothing re-resolves it); TLS is verified against
//! the URL's host with the webpki roots, plus extra roots only a library
//! caller can add ([`EgressEnv::with_extra_root`]; no policy, flag or
//! environment variable reaches it); only HTTP/1.1 is offered.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use wasmtime_wasi_http::Error as HttpError;

use super::address::Host;
use super::resolve::{Resolver, SystemResolver};

/// What egress uses besides the policy: how names resolve and which TLS
/// roots are trusted. [`EgressEnv::system`] is the only one the CLI uses.
#[derive(Clone)]
pub struct EgressEnv {
    pub(crate) resolver: Arc<dyn Resolver>,
    pub(crate) tls: Arc<rustls::ClientConfig>,
}

impl std::fmt::Debug for EgressEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EgressEnv").finish_non_exhaustive()
    }
}

/// An extra TLS root could not be used.
#[derive(Debug, thiserror::Error)]
#[error("cannot trust this certificate: {0}")]
pub struct TrustError(String);

impl Default for EgressEnv {
    fn default() -> Self {
        EgressEnv::system()
    }
}

impl EgressEnv {
    /// The system resolver and the webpki roots.
    pub fn system() -> EgressEnv {
        static SYSTEM: OnceLock<EgressEnv> = OnceLock::new();
        SYSTEM
            .get_or_init(|| EgressEnv {
                resolver: Arc::new(SystemResolver),
                tls: Arc::new(client_config(webpki_store())),
            })
            .clone()
    }

    /// This environment resolving names with `resolver`.
    pub fn with_resolver(mut self, resolver: impl Resolver) -> EgressEnv {
        self.resolver = Arc::new(resolver);
        self
    }

    /// This environment also trusting the DER certificate `root` (for a
    /// test CA). Host names are still verified.
    pub fn with_extra_root(mut self, root: &[u8]) -> Result<EgressEnv, TrustError> {
        let mut store = webpki_store();
        store
            .add(CertificateDer::from(root.to_vec()))
            .map_err(|e| TrustError(e.to_string()))?;
        self.tls = Arc::new(client_config(store));
        Ok(self)
    }
}

fn webpki_store() -> rustls::RootCertStore {
    rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    }
}

fn client_config(roots: rustls::RootCertStore) -> rustls::ClientConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = match rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
    {
        Ok(b) => b,
        // The ring provider supports the default versions; should that
        // ever change, fall back to the process default.
        Err(_) => rustls::ClientConfig::builder(),
    };
    let mut config = builder.with_root_certificates(roots).with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config
}

/// A connected stream, plain or TLS.
pub trait Stream: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Stream for T {}

/// Connect to the first of the vetted `addresses` that answers before
/// `until`, then, for https, shake hands verifying `host`.
pub async fn connect(
    env: &EgressEnv,
    addresses: &[IpAddr],
    port: u16,
    host: &Host,
    tls: bool,
    until: Instant,
) -> Result<(Box<dyn Stream>, IpAddr), HttpError> {
    let until = tokio::time::Instant::from_std(until);
    let mut last = HttpError::DestinationNotFound;
    let mut connected = None;
    for &ip in addresses {
        match tokio::time::timeout_at(until, TcpStream::connect(SocketAddr::new(ip, port))).await {
            Err(_) => return Err(HttpError::ConnectionTimeout),
            Ok(Ok(stream)) => {
                connected = Some((stream, ip));
                break;
            }
            Ok(Err(e)) => last = connect_error(&e),
        }
    }
    let Some((tcp, ip)) = connected else {
        return Err(last);
    };
    let _ = tcp.set_nodelay(true);
    if !tls {
        return Ok((Box::new(tcp), ip));
    }
    let name = match host {
        Host::Ip(ip) => ServerName::IpAddress((*ip).into()),
        Host::Name(n) => {
            ServerName::try_from(n.clone()).map_err(|_| HttpError::TlsProtocolError)?
        }
    };
    let connector = tokio_rustls::TlsConnector::from(env.tls.clone());
    match tokio::time::timeout_at(until, connector.connect(name, tcp)).await {
        Err(_) => Err(HttpError::ConnectionTimeout),
        Ok(Ok(stream)) => Ok((Box::new(stream), ip)),
        Ok(Err(e)) => Err(tls_error(&e)),
    }
}

fn connect_error(e: &std::io::Error) -> HttpError {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::ConnectionRefused => HttpError::ConnectionRefused,
        K::TimedOut => HttpError::ConnectionTimeout,
        K::HostUnreachable | K::NetworkUnreachable => HttpError::DestinationUnavailable,
        _ => HttpError::ConnectionRefused,
    }
}

fn tls_error(e: &std::io::Error) -> HttpError {
    let inner = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>());
    match inner {
        Some(rustls::Error::InvalidCertificate(_)) => HttpError::TlsCertificateError,
        Some(rustls::Error::AlertReceived(alert)) => HttpError::TlsAlertReceived {
            alert_id: Some(u8::from(*alert)),
            alert_message: Some(format!("{alert:?}")),
        },
        _ => HttpError::TlsProtocolError,
    }
}
