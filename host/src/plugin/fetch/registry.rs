//! The registry client every OCI fetch and push starts from, and the typed
//! error for what a registry (or the way to it) answered through it.

use std::time::Duration;

use oci_client::Client;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::OciDistributionError;

use super::FetchError;
use super::url::chain;

/// A registry client: plain http only with `--allow-http`, anonymous.
pub(super) fn client(allow_http: bool) -> Client {
    Client::new(ClientConfig {
        protocol: if allow_http {
            ClientProtocol::Http
        } else {
            ClientProtocol::Https
        },
        connect_timeout: Some(Duration::from_secs(15)),
        read_timeout: Some(Duration::from_secs(60)),
        platform_resolver: None,
        ..ClientConfig::default()
    })
}

/// The typed error for what the registry (or the way to it) answered.
pub(super) fn registry_error(
    reference: &str,
    e: OciDistributionError,
    allow_http: bool,
) -> FetchError {
    let reference = reference.to_string();
    match e {
        OciDistributionError::UnauthorizedError { .. }
        | OciDistributionError::AuthenticationFailure(_) => FetchError::Unauthorized { reference },
        OciDistributionError::RegistryError { envelope, .. } => {
            let message = envelope
                .errors
                .iter()
                .map(|e| format!("{:?}: {}", e.code, e.message))
                .collect::<Vec<_>>()
                .join("; ");
            FetchError::Registry { reference, message }
        }
        OciDistributionError::ImageManifestNotFoundError(m) => FetchError::Registry {
            reference,
            message: format!("not found ({m})"),
        },
        OciDistributionError::ServerError { code, .. } => FetchError::Status {
            what: format!("the registry for {reference}"),
            status: http::StatusCode::from_u16(code)
                .map(|s| s.to_string())
                .unwrap_or_else(|_| code.to_string()),
        },
        OciDistributionError::RequestError(e) => {
            if let Some(status) = e.status() {
                if status == http::StatusCode::UNAUTHORIZED {
                    return FetchError::Unauthorized { reference };
                }
                return FetchError::Status {
                    what: format!("the registry for {reference}"),
                    status: status.to_string(),
                };
            }
            if e.is_timeout() {
                return FetchError::Timeout {
                    secs: super::FETCH_TIMEOUT.as_secs(),
                };
            }
            let hint = if allow_http {
                ""
            } else {
                " (a registry that serves plain http, on a network you trust, needs --allow-http)"
            };
            FetchError::Network(format!(
                "cannot reach the registry for {reference}: {}{hint}",
                chain(&e)
            ))
        }
        other => FetchError::Network(format!("registry error for {reference}: {}", chain(&other))),
    }
}
