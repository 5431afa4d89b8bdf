//! `warden plugin push FILE oci://…`: publish a component, already
//! validated by the caller, in the layout `wkg oci push` writes.

use std::collections::BTreeMap;

use oci_client::client::{Config, ImageLayer};
use oci_client::manifest::OciImageManifest;
use oci_client::secrets::RegistryAuth;

use super::layout::{CONFIG_MEDIA_TYPE, LAYER_MEDIA_TYPE, MANIFEST_MEDIA_TYPE, WasmConfig};
use super::registry::{client, registry_error};
use super::source::oci_source;
use super::{FetchError, FetchOptions, Remote, block_on, oci_digest};

/// What was published.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Pushed {
    /// `oci://HOST/REPO:TAG`.
    pub reference: String,
    /// The `sha256:…` digest of the manifest pushed: pin it with
    /// `oci://HOST/REPO:TAG@DIGEST`.
    pub manifest_digest: String,
    /// The `sha256:…` digest of the component layer.
    pub layer_digest: String,
}

/// Publish component `wasm` (named `name`, version `version`, described by
/// `description`) to `remote`, which must be an OCI reference with a tag.
pub fn push(
    remote: &Remote,
    wasm: Vec<u8>,
    name: &str,
    version: &str,
    description: &str,
    opts: FetchOptions,
) -> Result<Pushed, FetchError> {
    let Remote::Oci { reference, .. } = remote else {
        return Err(FetchError::BadReference {
            reference: remote.source(),
            reason: "push needs an OCI reference: oci://HOST/REPO:TAG".into(),
        });
    };
    if reference.digest().is_some() {
        return Err(FetchError::BadReference {
            reference: oci_source(reference),
            reason: "push to a tag, not a digest: the registry computes the digest".into(),
        });
    }
    let shown = oci_source(reference);
    let layer_digest = oci_digest(&wasm);
    let config = WasmConfig::of_component(&wasm, layer_digest.clone());
    let config = Config {
        data: serde_json::to_vec(&config)
            .map_err(|e| FetchError::Network(format!("cannot encode the config: {e}")))?,
        media_type: CONFIG_MEDIA_TYPE.to_string(),
        annotations: None,
    };
    let layers = vec![ImageLayer {
        data: wasm,
        media_type: LAYER_MEDIA_TYPE.to_string(),
        annotations: None,
    }];
    let mut annotations = BTreeMap::from([
        (
            "org.opencontainers.image.title".to_string(),
            name.to_string(),
        ),
        (
            "org.opencontainers.image.version".to_string(),
            version.to_string(),
        ),
    ]);
    if !description.is_empty() {
        annotations.insert(
            "org.opencontainers.image.description".to_string(),
            description.to_string(),
        );
    }
    let mut manifest = OciImageManifest::build(&layers, &config, Some(annotations));
    manifest.media_type = Some(MANIFEST_MEDIA_TYPE.to_string());
    let manifest_digest = block_on(async {
        let client = client(opts.allow_http);
        let auth = RegistryAuth::Anonymous;
        let registry = |e| registry_error(&shown, e, opts.allow_http);
        client
            .push(reference, &layers, config, &auth, Some(manifest))
            .await
            .map_err(registry)?;
        // The digest of the manifest as the registry stores it.
        let (raw, _) = client
            .pull_manifest_raw(reference, &auth, &[MANIFEST_MEDIA_TYPE])
            .await
            .map_err(registry)?;
        Ok(oci_digest(&raw))
    })?;
    Ok(Pushed {
        reference: shown,
        manifest_digest,
        layer_digest,
    })
}
