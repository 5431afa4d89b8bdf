//! The two reads of an OCI pull, the manifest and the layer, made with the
//! client a URL install uses: a redirect to another host is refused, like
//! any download's (a registry that serves its blobs from another host is
//! named in the error, so the user can decide), the manifest is capped at
//! [`MAX_MANIFEST`] and the layer at the download cap. `oci-client` still
//! parses the reference and gets the registry's token; its own HTTP client
//! follows every redirect, so it never reads what is installed.

use oci_client::secrets::RegistryAuth;
use oci_client::{Reference, RegistryOperation};

use super::read::read_capped;
use super::registry::registry_error;
use super::url::{http_client, request_error};
use super::{FetchError, FetchOptions};

/// The largest manifest read: 4 MiB, the size the OCI distribution
/// specification asks registries to accept.
pub const MAX_MANIFEST: u64 = 4 * 1024 * 1024;

/// Reads from one repository of one registry.
pub(super) struct RegistryGet {
    client: reqwest::Client,
    /// `SCHEME://REGISTRY/v2/REPOSITORY`.
    base: String,
    token: Option<String>,
    /// The reference as the user sees it, for errors.
    shown: String,
    opts: FetchOptions,
}

impl RegistryGet {
    /// Ready to read `reference`'s repository, with the registry's
    /// anonymous pull token when it uses tokens.
    pub(super) async fn open(
        oci: &oci_client::Client,
        reference: &Reference,
        shown: &str,
        opts: FetchOptions,
    ) -> Result<RegistryGet, FetchError> {
        let token = oci
            .auth(reference, &RegistryAuth::Anonymous, RegistryOperation::Pull)
            .await
            .map_err(|e| registry_error(shown, e, opts.allow_http))?;
        let scheme = if opts.allow_http { "http" } else { "https" };
        Ok(RegistryGet {
            client: http_client(opts.allow_http)?,
            base: format!(
                "{scheme}://{}/v2/{}",
                reference.resolve_registry(),
                reference.repository()
            ),
            token,
            shown: shown.to_string(),
            opts,
        })
    }

    /// The raw manifest `tag_or_digest`, asked for as `media_type`.
    pub(super) async fn manifest(
        &self,
        tag_or_digest: &str,
        media_type: &str,
    ) -> Result<Vec<u8>, FetchError> {
        let url = format!("{}/manifests/{tag_or_digest}", self.base);
        let response = self.get(&url, Some(media_type)).await?;
        let expected = response.content_length();
        let what = format!("the manifest of {}", self.shown);
        read_capped(response.bytes_stream(), &what, MAX_MANIFEST, expected)
            .await
            .map_err(|e| match e {
                FetchError::TooLarge { what, .. } => FetchError::ManifestTooLarge {
                    what,
                    cap_kib: MAX_MANIFEST / 1024,
                },
                other => other,
            })
    }

    /// The blob `digest`, announced as `size` bytes; `what` names it in
    /// errors.
    pub(super) async fn blob(
        &self,
        digest: &str,
        size: u64,
        what: &str,
    ) -> Result<Vec<u8>, FetchError> {
        let url = format!("{}/blobs/{digest}", self.base);
        let response = self.get(&url, None).await?;
        read_capped(
            response.bytes_stream(),
            what,
            self.opts.max_bytes,
            Some(size),
        )
        .await
    }

    /// One GET; a status other than success becomes the registry's own
    /// error when it sent one.
    async fn get(&self, url: &str, accept: Option<&str>) -> Result<reqwest::Response, FetchError> {
        let mut request = self.client.get(url);
        if let Some(accept) = accept {
            request = request.header(reqwest::header::ACCEPT, accept);
        }
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.map_err(|e| request_error(url, &e))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let reference = self.shown.clone();
        if status == reqwest::StatusCode::UNAUTHORIZED {
            return Err(FetchError::Unauthorized { reference });
        }
        let body = read_capped(response.bytes_stream(), url, 64 * 1024, None)
            .await
            .unwrap_or_default();
        match registry_message(&body) {
            Some(message) => Err(FetchError::Registry { reference, message }),
            None => Err(FetchError::Status {
                what: format!("the registry for {reference}"),
                status: status.to_string(),
            }),
        }
    }
}

/// The `errors` of the registry's error envelope, on one line.
fn registry_message(body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Envelope {
        errors: Vec<Entry>,
    }
    #[derive(serde::Deserialize)]
    struct Entry {
        code: String,
        #[serde(default)]
        message: String,
    }
    let envelope: Envelope = serde_json::from_slice(body).ok()?;
    let parts: Vec<String> = envelope
        .errors
        .iter()
        .map(|e| format!("{}: {}", e.code, e.message))
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::registry_message;

    #[test]
    fn the_registry_error_envelope_is_read_and_anything_else_is_not() {
        let body =
            br#"{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown","detail":{}}]}"#;
        assert_eq!(
            registry_message(body).as_deref(),
            Some("MANIFEST_UNKNOWN: manifest unknown")
        );
        assert_eq!(registry_message(b"<html>502</html>"), None);
        assert_eq!(registry_message(br#"{"errors":[]}"#), None);
    }
}
