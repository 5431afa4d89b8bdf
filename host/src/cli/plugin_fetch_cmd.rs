//! `warden plugin install URL|oci://…`, `plugin update NAME` and
//! `plugin push FILE oci://…`.
//!
//! Fetched bytes take the same install path as a local file; the lockfile
//! records their source and pins their digest. An update shows what
//! changes and installs only when confirmed (a terminal, or `--yes`).
//! A failed fetch installs nothing and leaves the lockfile untouched.

use std::path::Path;

use clap::Args;
use serde_json::json;

use super::plugin_view::print_changes;
use super::{Exit, fail, open_catalog};
use crate::base::terminal_line;
use crate::home::Home;
use crate::plugin::fetch::{self, FetchOptions, Fetched, Remote};
use crate::plugin::{Candidate, Catalog, CatalogError, InstallError, LOCKFILE, Locked, Lockfile};

/// How `install` fetches a URL or an OCI reference.
#[derive(Debug, Args)]
pub struct FetchArgs {
    /// The sha256 the component must have (required for a URL; for OCI it
    /// pins the component as well as the manifest digest).
    #[arg(long, value_name = "HEX")]
    pub sha256: Option<String>,
    /// Allow plain http (a URL or a registry), e.g. a registry on loopback.
    #[arg(long)]
    pub allow_http: bool,
}

/// Fetch what `target` names, if it is a URL or a registry reference, for
/// the caller to install; `None` for a local file.
pub(super) fn fetch_to_install(
    target: &str,
    args: &FetchArgs,
    json: bool,
) -> Option<Result<Fetched, Exit>> {
    let failed = |code, e: &dyn std::fmt::Display| {
        Err(fail(json, code, &format!("cannot install {target}: {e}")))
    };
    let remote = match Remote::parse(target, args.sha256.as_deref()) {
        Ok(Some(r)) => r,
        Ok(None) => return None,
        Err(e) => return Some(failed(Exit::Usage, &e)),
    };
    let lock = match read_lock(json) {
        Ok(l) => l,
        Err(code) => return Some(Err(code)),
    };
    let source = remote.source();
    let pinned = lock
        .plugins
        .values()
        .find(|l| l.source.as_deref() == Some(source.as_str()))
        .and_then(|l| l.manifest_digest.clone());
    let options = FetchOptions {
        allow_http: args.allow_http,
        ..FetchOptions::default()
    };
    Some(match fetch::fetch(&remote, pinned.as_deref(), options) {
        Ok(f) => Ok(f),
        Err(e) => failed(Exit::Failure, &e),
    })
}

/// What fetching an update found.
pub(super) enum UpdateFetch {
    /// The registry serves what is installed: nothing to do (said already).
    UpToDate,
    /// Something else, to install when confirmed.
    Changed(Fetched),
}

/// `warden plugin update NAME`: fetch its tag again. Nothing changes when
/// the registry serves the same manifest.
pub(super) fn fetch_update(name: &str, allow_http: bool, json: bool) -> Result<UpdateFetch, Exit> {
    let lock = read_lock(json)?;
    let Some(locked) = lock.plugins.get(name) else {
        let e = InstallError::NotInstalled(name.to_string());
        return Err(fail(json, Exit::Usage, &e.to_string()));
    };
    let Some(source) = locked.source.as_deref() else {
        let message = format!(
            "{name} was installed from a local file: install the new file with `warden plugin install FILE`"
        );
        return Err(fail(json, Exit::Usage, &message));
    };
    let remote = match Remote::parse(source, None) {
        Ok(Some(r @ Remote::Oci { .. })) => r,
        Ok(Some(Remote::Url { .. })) | Ok(None) | Err(_) => {
            let message = format!(
                "{name} was installed from {source}, which the sha256 pins: there is no tag to fetch \
                 again; install the new URL with `warden plugin install URL --sha256 HEX`"
            );
            return Err(fail(json, Exit::Usage, &message));
        }
    };
    let options = FetchOptions {
        allow_http,
        ..FetchOptions::default()
    };
    let fetched = fetch::fetch(&remote, None, options)
        .map_err(|e| fail(json, Exit::Failure, &format!("cannot update {name}: {e}")))?;
    if !up_to_date(locked, &fetched) {
        return Ok(UpdateFetch::Changed(fetched));
    }
    let digest = locked.manifest_digest.as_deref().unwrap_or("-");
    if json {
        outln!(
            "{}",
            json!({ "up_to_date": name, "manifest_digest": digest })
        );
    } else {
        outln!(
            "{} is up to date ({source} is still {digest})",
            terminal_line(name)
        );
    }
    Ok(UpdateFetch::UpToDate)
}

/// The candidate of an update of `name`: it must still be plugin `name`.
pub(super) fn prepare_update(
    catalog: &Catalog,
    name: &str,
    fetched: Fetched,
) -> Result<Candidate, CatalogError> {
    let candidate = catalog.prepare_fetched(fetched)?;
    if candidate.name() != name {
        return Err(InstallError::Renamed {
            stored: name.to_string(),
            found: candidate.name().to_string(),
        }
        .into());
    }
    Ok(candidate)
}

fn up_to_date(locked: &Locked, fetched: &Fetched) -> bool {
    locked.manifest_digest == fetched.origin.manifest_digest
        && locked.sha256 == crate::base::sha256_hex(&fetched.wasm)
}

/// `warden plugin push FILE oci://…`: validate, then publish.
pub(super) fn push(path: &Path, reference: &str, allow_http: bool, json: bool) -> Exit {
    let what = path.display().to_string();
    let remote = match Remote::parse(reference, None) {
        Ok(Some(r @ Remote::Oci { .. })) => r,
        Ok(Some(Remote::Url { .. })) | Ok(None) => {
            let message =
                format!("cannot push to {reference}: name a registry as oci://HOST/REPO:TAG");
            return fail(json, Exit::Usage, &message);
        }
        Err(e) => {
            return fail(
                json,
                Exit::Usage,
                &format!("cannot push to {reference}: {e}"),
            );
        }
    };
    let wasm = match std::fs::read(path) {
        Ok(w) => w,
        Err(e) => return fail(json, Exit::Failure, &format!("cannot read {what}: {e}")),
    };
    let catalog = match open_catalog(json) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let sha256 = crate::base::sha256_hex(&wasm);
    let plugin = match catalog.runtime().load(&wasm, Some(&sha256)) {
        Ok(p) => p,
        Err(e) => return fail(json, Exit::Failure, &format!("cannot push {what}: {e}")),
    };
    let m = &plugin.meta.manifest;
    let options = FetchOptions {
        allow_http,
        ..FetchOptions::default()
    };
    let pushed = match fetch::push(&remote, wasm, &m.name, &m.version, &m.description, options) {
        Ok(p) => p,
        Err(e) => return fail(json, Exit::Failure, &format!("cannot push {what}: {e}")),
    };
    if json {
        outln!(
            "{}",
            json!({ "pushed": pushed, "name": m.name, "version": m.version })
        );
    } else {
        let label = terminal_line(&format!("{} {}", m.name, m.version));
        outln!("pushed {label} to {}", terminal_line(&pushed.reference));
        outln!("  manifest: {}", pushed.manifest_digest);
        outln!("  component: {}", pushed.layer_digest);
        outln!(
            "  install pinned: warden plugin install {}@{}",
            terminal_line(&pushed.reference),
            pushed.manifest_digest
        );
    }
    Exit::Success
}

/// What an update replaces, and its capability changes, before asking.
pub(super) fn print_update(c: &Candidate) {
    let new = &c.meta.manifest;
    let (old_version, old_sha) = match &c.previous {
        Some(p) => (p.meta.manifest.version.as_str(), p.sha256.as_str()),
        None => ("-", "-"),
    };
    let line = format!("update {}: {old_version} → {}", new.name, new.version);
    outln!("{}", terminal_line(&line));
    outln!("  sha256: {old_sha} → {}", c.sha256);
    if let Some(origin) = &c.origin {
        let digest = origin.manifest_digest.as_deref().unwrap_or("-");
        outln!("  from: {} ({digest})", terminal_line(&origin.source));
    }
    let changes = c.changes();
    if changes.is_empty() {
        outln!("no capability changes from the installed version");
    } else {
        print_changes(&changes);
    }
}

fn read_lock(json: bool) -> Result<Lockfile, Exit> {
    let home = Home::from_env().map_err(|e| fail(json, Exit::Failure, &e.to_string()))?;
    Lockfile::read(&home.root().join(LOCKFILE))
        .map_err(|e| fail(json, Exit::Failure, &e.to_string()))
}
