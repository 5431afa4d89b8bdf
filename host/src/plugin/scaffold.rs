//! `warden plugin new`: a standalone plugin crate that builds with the Rust
//! toolchain and crates.io alone. It vendors the SDK and WIT this binary
//! was built with (`vendor/warden-sdk/`, `wit/`) and the guest workspace's
//! lockfile, so it needs no checkout and no git.
//!
//! Invariant: a crate is written whole or not at all. The name is checked
//! first (the manifest's rules), the files are written into a fresh
//! directory beside the target and renamed onto it (or, for an existing
//! empty directory, into it entry by entry, undone on a failure), and an
//! existing non-empty directory is never written into.

use std::path::{Path, PathBuf};

use crate::capability::valid_plugin_name;

include!(concat!(env!("OUT_DIR"), "/sdk_vendor.rs"));

/// The scaffold's `src/lib.rs`: the SDK guide's example (docs/plugins.md).
pub const GUIDE_EXAMPLE: &str = include_str!("scaffold/lib.rs.in");

/// The scaffold's own files; `{name}`, `{package}`, `{lib}` and `{serde}`
/// are filled in all but the Rust sources.
const TEMPLATES: &[(&str, &str)] = &[
    ("Cargo.toml", include_str!("scaffold/Cargo.toml.in")),
    ("warden.toml", include_str!("scaffold/warden.toml.in")),
    ("build.rs", include_str!("scaffold/build.rs.in")),
    ("README.md", include_str!("scaffold/README.md.in")),
    (".gitignore", include_str!("scaffold/gitignore.in")),
    ("src/lib.rs", GUIDE_EXAMPLE),
    ("src/tests.rs", include_str!("scaffold/tests.rs.in")),
];

/// Why no crate was made. Nothing was written in any case.
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    #[error("invalid plugin name {0:?}: names must match ^[a-z0-9][a-z0-9_-]{{0,63}}$")]
    BadName(String),
    #[error("{0} already exists and is not empty; choose a new directory with --dir")]
    NotEmpty(PathBuf),
    #[error("{0} exists and is not a directory")]
    NotADirectory(PathBuf),
    #[error("cannot write the new crate at {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A crate `plugin new` made.
#[derive(Debug, Clone)]
pub struct Scaffold {
    /// Its directory.
    pub dir: PathBuf,
    /// Where `cargo build --release --target wasm32-wasip2` puts the
    /// component, relative to `dir`.
    pub wasm: String,
}

/// The Cargo package of plugin `name`: the name itself, unless it starts
/// with a digit, which Cargo refuses.
pub fn package_name(name: &str) -> String {
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        format!("plugin-{name}")
    } else {
        name.to_string()
    }
}

/// Every file of a new crate for plugin `name`: (relative path, contents).
pub fn files(name: &str) -> Vec<(String, String)> {
    let package = package_name(name);
    let lib = package.replace('-', "_");
    let fill = |text: &str| {
        text.replace("{name}", name)
            .replace("{package}", &package)
            .replace("{lib}", &lib)
            .replace("{serde}", SERDE_VERSION)
    };
    let own = TEMPLATES.iter().map(|(path, text)| {
        let text = match *path {
            "src/lib.rs" | "src/tests.rs" | "build.rs" => text.to_string(),
            _ => fill(text),
        };
        (path.to_string(), text)
    });
    let vendored = SDK_VENDOR
        .iter()
        .map(|(path, text)| (path.to_string(), text.to_string()));
    own.chain(vendored).collect()
}

/// Write a new crate for plugin `name` at `dir`, which must not exist or
/// be empty.
pub fn create(name: &str, dir: &Path) -> Result<Scaffold, ScaffoldError> {
    if !valid_plugin_name(name) {
        return Err(ScaffoldError::BadName(name.to_string()));
    }
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ScaffoldError::Io { path, source }
    };
    match std::fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(ScaffoldError::NotEmpty(dir.to_path_buf()));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            return Err(ScaffoldError::NotADirectory(dir.to_path_buf()));
        }
        Err(e) => return Err(io(dir)(e)),
    }
    let dir = std::path::absolute(dir).map_err(io(dir))?;
    let parent = dir.parent().unwrap_or(Path::new("/"));
    std::fs::create_dir_all(parent).map_err(io(parent))?;
    let staging = tempfile::Builder::new()
        .prefix(".warden-plugin-new-")
        .tempdir_in(parent)
        .map_err(io(parent))?;
    for (rel, text) in files(name) {
        let path = staging.path().join(&rel);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).map_err(io(p))?;
        }
        std::fs::write(&path, text).map_err(io(&path))?;
    }
    if dir.is_dir() {
        // An empty directory stays (it may be the user's shell's): the
        // staged entries move into it, and back out if one cannot.
        move_entries(staging.path(), &dir).map_err(io(&dir))?;
    } else {
        set_mode(staging.path(), 0o755).map_err(io(staging.path()))?;
        // Onto a missing directory only: rename refuses a non-empty one.
        std::fs::rename(staging.path(), &dir).map_err(|e| match e.kind() {
            std::io::ErrorKind::DirectoryNotEmpty => ScaffoldError::NotEmpty(dir.clone()),
            _ => io(&dir)(e),
        })?;
    }
    let lib = package_name(name).replace('-', "_");
    Ok(Scaffold {
        dir,
        wasm: format!("target/wasm32-wasip2/release/{lib}.wasm"),
    })
}

/// Move every entry of `from` into `to`; on a failure, remove what moved.
fn move_entries(from: &Path, to: &Path) -> std::io::Result<()> {
    let mut moved = Vec::new();
    for entry in std::fs::read_dir(from)? {
        let name = entry?.file_name();
        let target = to.join(&name);
        if let Err(e) = std::fs::rename(from.join(&name), &target) {
            for path in moved {
                let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
            }
            return Err(e);
        }
        moved.push(target);
    }
    Ok(())
}

fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_vendored_manifest_inherits_from_a_workspace() {
        let files = files("wc");
        let manifest = &files
            .iter()
            .find(|(p, _)| p == "vendor/warden-sdk/Cargo.toml")
            .unwrap()
            .1;
        let parsed: toml::Table = manifest.parse().unwrap();
        assert!(!manifest.contains("workspace ="), "{manifest}");
        assert!(!manifest.contains(".workspace"), "{manifest}");
        assert!(parsed["dependencies"]["wit-bindgen"]["version"].is_str());
        assert!(
            files
                .iter()
                .any(|(p, _)| p.starts_with("wit/") && p.ends_with("tool.wit"))
        );
    }

    #[test]
    fn a_name_cargo_refuses_gets_a_package_name_it_accepts() {
        assert_eq!(package_name("wc"), "wc");
        assert_eq!(package_name("7zip"), "plugin-7zip");
        let files = files("7zip");
        let manifest = &files.iter().find(|(p, _)| p == "Cargo.toml").unwrap().1;
        assert!(manifest.contains("name = \"plugin-7zip\""), "{manifest}");
        let wm = &files.iter().find(|(p, _)| p == "warden.toml").unwrap().1;
        assert!(wm.contains("name = \"7zip\""), "{wm}");
    }
}
