//! Fetching a component to install from a URL or an OCI registry, and
//! publishing one to a registry.
//!
//! Invariants: what is fetched is pinned — a URL only with the sha256 the
//! user gave, an OCI reference by its manifest digest, which the lockfile
//! records and a later install of the same reference must match; every
//! download is capped ([`MAX_DOWNLOAD`]) and read as a stream that stops at
//! the cap, and the whole fetch is time-limited ([`FETCH_TIMEOUT`]); plain
//! `http` needs `--allow-http`; a download (a URL, an OCI manifest or
//! layer) is never followed to another host.
//! Fetching writes nothing: the bytes then take the same install path as a
//! local file (validation, bill of materials, trust, lockfile).

mod error;
mod layout;
mod oci;
mod push;
mod read;
mod registry;
mod registry_get;
mod source;
mod url;

use std::time::Duration;

pub use error::FetchError;
pub use layout::{CONFIG_MEDIA_TYPE, LAYER_MEDIA_TYPE, MANIFEST_MEDIA_TYPE};
pub use push::{Pushed, push};
pub use source::Remote;

/// The largest component a fetch downloads: 64 MiB.
pub const MAX_DOWNLOAD: u64 = 64 * 1024 * 1024;
/// How long a whole fetch (or push) may take.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(120);
/// Same-host redirects followed at most.
pub const MAX_REDIRECTS: usize = 5;

/// How to fetch.
#[derive(Debug, Clone, Copy)]
pub struct FetchOptions {
    /// Whether plain `http` is allowed (`--allow-http`).
    pub allow_http: bool,
    /// The download cap, in bytes.
    pub max_bytes: u64,
}

impl Default for FetchOptions {
    fn default() -> Self {
        FetchOptions {
            allow_http: false,
            max_bytes: MAX_DOWNLOAD,
        }
    }
}

/// Where an installed component came from, as the lockfile records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The URL, or `oci://HOST/REPO:TAG` (with `@sha256:…` when the
    /// reference named no tag).
    pub source: String,
    /// For OCI, the `sha256:…` digest of the manifest fetched.
    pub manifest_digest: Option<String>,
}

/// A component's bytes as fetched, not yet validated as a Warden plugin.
#[derive(Debug)]
pub struct Fetched {
    pub wasm: Vec<u8>,
    pub origin: Origin,
}

/// Fetch `remote`. For OCI, `pinned` is the manifest digest the caller
/// expects (from the lockfile); the reference's own `@sha256:` pins too.
pub fn fetch(
    remote: &Remote,
    pinned: Option<&str>,
    opts: FetchOptions,
) -> Result<Fetched, FetchError> {
    block_on(async {
        match remote {
            Remote::Url { url, sha256 } => url::fetch(url, sha256, opts).await,
            Remote::Oci { reference, sha256 } => {
                oci::fetch(reference, sha256.as_deref(), pinned, opts).await
            }
        }
    })
}

/// Run `fut` on a runtime of its own, within [`FETCH_TIMEOUT`].
fn block_on<T>(
    fut: impl std::future::Future<Output = Result<T, FetchError>>,
) -> Result<T, FetchError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| FetchError::Network(format!("cannot start the network runtime: {e}")))?;
    runtime.block_on(async {
        tokio::time::timeout(FETCH_TIMEOUT, fut)
            .await
            .unwrap_or(Err(FetchError::Timeout {
                secs: FETCH_TIMEOUT.as_secs(),
            }))
    })
}

/// The sha256 of `bytes` as an OCI digest, `sha256:HEX`.
fn oci_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", crate::base::sha256_hex(bytes))
}
