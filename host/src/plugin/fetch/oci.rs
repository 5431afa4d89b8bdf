//! `warden plugin install oci://HOST/REPO:TAG`: the manifest (pinned by
//! digest when the reference or the lockfile names one, capped), checked
//! for the Wasm component layout, then its one layer, capped and checked
//! against the layer digest; both read without following a redirect to
//! another host (`registry_get`).

use oci_client::Reference;
use oci_client::manifest::OciImageManifest;

use super::layout::{CONFIG_MEDIA_TYPE, LAYER_MEDIA_TYPE, MANIFEST_MEDIA_TYPE, not_a_component};
use super::registry::client;
use super::registry_get::RegistryGet;
use super::source::oci_source;
use super::{FetchError, FetchOptions, Fetched, Origin, oci_digest};

pub(super) async fn fetch(
    reference: &Reference,
    sha256: Option<&str>,
    pinned: Option<&str>,
    opts: FetchOptions,
) -> Result<Fetched, FetchError> {
    let shown = oci_source(reference);
    // A reference with both a tag and a digest is fetched by tag, so that a
    // tag that moved is seen.
    let by = match (reference.tag(), reference.digest()) {
        (Some(tag), Some(_)) => Reference::with_tag(
            reference.registry().to_string(),
            reference.repository().to_string(),
            tag.to_string(),
        ),
        _ => reference.clone(),
    };
    let registry = RegistryGet::open(&client(opts.allow_http), &by, &shown, opts).await?;
    let tag_or_digest = by.digest().or(by.tag()).unwrap_or("latest");
    let raw = registry
        .manifest(tag_or_digest, MANIFEST_MEDIA_TYPE)
        .await?;
    let served = oci_digest(&raw);
    for pin in [reference.digest(), pinned].into_iter().flatten() {
        if pin != served {
            let hint = if reference.digest() == Some(pin) {
                ": check the new artifact, then install it by its new digest".to_string()
            } else {
                ": see what changed with `warden plugin update NAME`".to_string()
            };
            return Err(FetchError::TagMoved {
                reference: shown,
                pinned: pin.to_string(),
                served,
                hint,
            });
        }
    }
    let manifest: OciImageManifest =
        serde_json::from_slice(&raw).map_err(|e| FetchError::NotAComponent {
            what: shown.clone(),
            reason: format!("its manifest is not an OCI image manifest ({e})"),
        })?;
    let not_component = |reason: String| FetchError::NotAComponent {
        what: shown.clone(),
        reason,
    };
    if manifest.config.media_type != CONFIG_MEDIA_TYPE {
        return Err(not_component(format!(
            "its config is {}, not {CONFIG_MEDIA_TYPE}",
            manifest.config.media_type
        )));
    }
    let [layer] = manifest.layers.as_slice() else {
        return Err(not_component(format!(
            "it has {} layers, not one {LAYER_MEDIA_TYPE} layer",
            manifest.layers.len()
        )));
    };
    if layer.media_type != LAYER_MEDIA_TYPE {
        return Err(not_component(format!(
            "its layer is {}, not {LAYER_MEDIA_TYPE}",
            layer.media_type
        )));
    }
    let size = u64::try_from(layer.size).unwrap_or(0);
    let what = format!("{shown} (layer {})", layer.digest);
    if size > opts.max_bytes {
        return Err(FetchError::TooLarge {
            what,
            cap: opts.max_bytes / (1024 * 1024),
        });
    }
    let wasm = registry.blob(&layer.digest, size, &what).await?;
    let got = oci_digest(&wasm);
    if got != layer.digest {
        return Err(FetchError::DigestMismatch {
            what,
            expected: layer.digest.clone(),
            got,
        });
    }
    let got_hex = got.strip_prefix("sha256:").unwrap_or(&got);
    if let Some(want) = sha256
        && got_hex != want
    {
        return Err(FetchError::DigestMismatch {
            what,
            expected: want.to_string(),
            got: got_hex.to_string(),
        });
    }
    if let Some(reason) = not_a_component(&wasm) {
        return Err(not_component(reason.into()));
    }
    Ok(Fetched {
        wasm,
        origin: Origin {
            source: shown,
            manifest_digest: Some(served),
        },
    })
}
