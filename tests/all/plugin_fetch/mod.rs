//! `warden plugin install URL|oci://…`, `plugin update` and `plugin push`
//! against a real registry (Debian's `docker-registry`, the CNCF
//! distribution registry) and a real HTTP server, both on loopback.

mod http;
mod oci;
mod oci_redirects;
mod oci_refusals;
mod registry;
mod url;

use std::collections::BTreeMap;
use std::path::Path;

/// Every file under the data directory's `plugins/`, and the lockfile,
/// byte for byte: what a refused install must leave as it was.
pub fn installed_state(home: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut state = BTreeMap::new();
    let plugins = home.join("plugins");
    if plugins.exists() {
        for entry in walkdir::WalkDir::new(&plugins) {
            let entry = entry.unwrap();
            let rel = entry
                .path()
                .strip_prefix(home)
                .unwrap()
                .display()
                .to_string();
            let bytes = if entry.file_type().is_file() {
                std::fs::read(entry.path()).unwrap()
            } else {
                Vec::new()
            };
            state.insert(rel, bytes);
        }
    }
    if let Ok(lock) = std::fs::read(home.join("plugins.lock")) {
        state.insert("plugins.lock".into(), lock);
    }
    state
}

/// A core WebAssembly module: valid wasm, not a component.
pub const CORE_MODULE: &[u8] = b"\0asm\x01\0\0\0";
