//! On-disk cache of compiled components.
//!
//! Entries are keyed by the component's sha256, the wasmtime version and a
//! hash of the engine's compilation settings, so a change to any of them
//! misses the cache instead of loading incompatible code. Entries are
//! written to a temporary file and renamed into place, so a reader never
//! sees a partial entry.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use wasmtime::Engine;
use wasmtime::component::Component;

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
        let engine_tag = format!("wasmtime-{}-{:016x}", wasmtime_version(), hasher.finish());
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
        let _ = write_atomic(&self.entry(sha256, "cwasm"), &compiled);
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
        let _ = write_atomic(&self.entry(sha256, ext), value.to_string().as_bytes());
    }

    /// The directory holding the cache.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// The wasmtime version compiled in, part of every cache key.
pub fn wasmtime_version() -> &'static str {
    env!("WARDEN_WASMTIME_VERSION")
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile_in(dir)?;
    tmp.1.write_all(bytes)?;
    tmp.1.sync_all()?;
    std::fs::rename(&tmp.0, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp.0);
    })
}

fn tempfile_in(dir: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    for attempt in 0..16u32 {
        let name = format!(".tmp-{}-{}-{attempt}", std::process::id(), nanos());
        let path = dir.join(name);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(
        "could not create a temporary cache file",
    ))
}

fn nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}
