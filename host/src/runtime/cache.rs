//! On-disk cache of compiled components.
//!
//! Entries are keyed by the component's sha256 and the engine's
//! compatibility hash (its compilation settings and wasmtime's exact
//! version, which wasmtime hashes in itself), so a change to any of them
//! misses the cache instead of loading incompatible code. Entries are
//! written whole ([`write_atomic`]), so a reader never sees a partial entry
//! and a failed write leaves no temporary file.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use wasmtime::Engine;
use wasmtime::component::Component;

use crate::base::{Rename, create_private_dir, write_atomic};

/// Cache entries are not private: compiled code and tool lists.
const CACHE_FILE: u32 = 0o644;

/// A directory of compiled components and their tool lists.
#[derive(Debug, Clone)]
pub struct CompileCache {
    dir: PathBuf,
    engine_tag: String,
}

impl CompileCache {
    /// A cache in `dir` for components compiled by `engine`.
    pub fn new(dir: PathBuf, engine: &Engine) -> Self {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let engine_tag = format!("wasmtime-{:016x}", hasher.finish());
        CompileCache { dir, engine_tag }
    }

    fn entry(&self, sha256: &str, ext: &str) -> PathBuf {
        self.dir.join(format!("{sha256}.{}.{ext}", self.engine_tag))
    }

    /// Load the compiled form of the component with this hash, if cached.
    /// A corrupt or incompatible entry is removed and reported as a miss.
    pub fn load(&self, engine: &Engine, sha256: &str) -> Option<Component> {
        let path = self.entry(sha256, "cwasm");
        if !path.exists() {
            return None;
        }
        // SAFETY: the file was produced by `Engine::precompile_component` in
        // `store` below, under a key that includes the engine's compatibility
        // hash, in a directory only Warden writes to; wasmtime still checks
        // the header and version before mapping it.
        #[allow(unsafe_code)]
        let loaded = unsafe { Component::deserialize_file(engine, &path) };
        match loaded {
            Ok(component) => Some(component),
            Err(_) => {
                let _ = std::fs::remove_file(&path);
                None
            }
        }
    }

    /// Compile `wasm` and store the result; caching failures are not fatal.
    pub fn compile(
        &self,
        engine: &Engine,
        sha256: &str,
        wasm: &[u8],
    ) -> wasmtime::Result<Component> {
        let compiled = engine.precompile_component(wasm)?;
        let _ = store(&self.entry(sha256, "cwasm"), &compiled);
        match self.load(engine, sha256) {
            Some(component) => Ok(component),
            None => Component::new(engine, wasm),
        }
    }

    /// The cached JSON side-data (for example a tool list) for this hash.
    pub fn read_json<T: serde::de::DeserializeOwned>(&self, sha256: &str, ext: &str) -> Option<T> {
        let text = std::fs::read(self.entry(sha256, ext)).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// Store JSON side-data; caching failures are not fatal.
    pub fn write_json(&self, sha256: &str, ext: &str, value: &serde_json::Value) {
        let _ = store(&self.entry(sha256, ext), value.to_string().as_bytes());
    }

    /// The directory holding the cache.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Store `bytes` at `path` whole (see [`write_atomic`]), creating the
/// cache directory first.
fn store(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        create_private_dir(dir)?;
    }
    write_atomic(path, bytes, CACHE_FILE, Rename::Synced)
}
