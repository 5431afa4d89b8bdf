//! What `warden plugin install TARGET` names: a local file, a URL (with the
//! sha256 it must have), or an OCI reference `oci://HOST/REPO:TAG[@sha256:…]`.

use oci_client::Reference;

use super::FetchError;

/// A component to fetch.
#[derive(Debug, Clone)]
pub enum Remote {
    /// `https://…` (or `http://…` with `--allow-http`), pinned by sha256.
    Url { url: reqwest::Url, sha256: String },
    /// An OCI reference; `sha256`, when given, pins the component too.
    Oci {
        reference: Reference,
        sha256: Option<String>,
    },
}

impl Remote {
    /// What `target` names: `None` for a local path. `sha256` is the
    /// `--sha256` flag, required for a URL.
    pub fn parse(target: &str, sha256: Option<&str>) -> Result<Option<Remote>, FetchError> {
        let sha256 = sha256.map(normalise_sha256).transpose()?;
        if let Some(rest) = target.strip_prefix("oci://") {
            let reference: Reference = rest.parse().map_err(|e| FetchError::BadReference {
                reference: target.to_string(),
                reason: format!("{e}"),
            })?;
            if !rest.contains('/') || rest.split('/').next().is_none_or(|h| h.is_empty()) {
                return Err(FetchError::BadReference {
                    reference: target.to_string(),
                    reason: "name the registry host: oci://HOST/REPO:TAG".into(),
                });
            }
            return Ok(Some(Remote::Oci { reference, sha256 }));
        }
        let lower = target.to_ascii_lowercase();
        if lower.starts_with("https://") || lower.starts_with("http://") {
            let url = reqwest::Url::parse(target).map_err(|e| FetchError::BadReference {
                reference: target.to_string(),
                reason: e.to_string(),
            })?;
            let Some(sha256) = sha256 else {
                return Err(FetchError::DigestRequired {
                    url: target.to_string(),
                });
            };
            return Ok(Some(Remote::Url { url, sha256 }));
        }
        if sha256.is_some() {
            return Err(FetchError::DigestForLocal);
        }
        Ok(None)
    }

    /// How the lockfile names this source: the URL, or `oci://…` with its
    /// tag (and digest only when there is no tag to fetch again).
    pub fn source(&self) -> String {
        match self {
            Remote::Url { url, .. } => url.to_string(),
            Remote::Oci { reference, .. } => oci_source(reference),
        }
    }
}

/// `oci://REGISTRY/REPO:TAG`, or `…@sha256:…` for a digest-only reference.
pub(super) fn oci_source(reference: &Reference) -> String {
    let base = format!("oci://{}/{}", reference.registry(), reference.repository());
    match (reference.tag(), reference.digest()) {
        (Some(tag), _) => format!("{base}:{tag}"),
        (None, Some(digest)) => format!("{base}@{digest}"),
        (None, None) => format!("{base}:latest"),
    }
}

/// A sha256 given as 64 hex digits, optionally prefixed `sha256:`.
fn normalise_sha256(given: &str) -> Result<String, FetchError> {
    let hex = given.strip_prefix("sha256:").unwrap_or(given);
    if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(hex.to_ascii_lowercase())
    } else {
        Err(FetchError::BadSha256 {
            given: given.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_needs_a_sha256_and_a_reference_needs_a_host() {
        let hex = "ab".repeat(32);
        assert!(matches!(
            Remote::parse("https://example.com/x.wasm", None),
            Err(FetchError::DigestRequired { .. })
        ));
        let url = Remote::parse("https://example.com/x.wasm", Some(&format!("sha256:{hex}")));
        assert!(matches!(url, Ok(Some(Remote::Url { sha256, .. })) if sha256 == hex));
        assert!(matches!(
            Remote::parse("https://example.com/x.wasm", Some("abc")),
            Err(FetchError::BadSha256 { .. })
        ));
        assert!(matches!(
            Remote::parse("oci://echo", None),
            Err(FetchError::BadReference { .. })
        ));
        let oci = Remote::parse("oci://127.0.0.1:5000/tools/echo:0.1.0", None)
            .unwrap()
            .unwrap();
        assert_eq!(oci.source(), "oci://127.0.0.1:5000/tools/echo:0.1.0");
        assert!(matches!(Remote::parse("./echo.wasm", None), Ok(None)));
        assert!(matches!(
            Remote::parse("./echo.wasm", Some(&hex)),
            Err(FetchError::DigestForLocal)
        ));
    }
}
