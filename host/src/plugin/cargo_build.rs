//! `warden plugin build`: cargo for `wasm32-wasip2` in release, the
//! component's initial memory set as the built-in plugins' is, and the
//! `.wasm` found in cargo's own artifact messages rather than guessed.
//!
//! Invariant: cargo's diagnostics go to this process's stderr as cargo
//! renders them; only its JSON messages are read, and a build that fails
//! or makes no component is an error carrying cargo's exit status.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The target plugins are built for.
pub const TARGET: &str = "wasm32-wasip2";

/// The linear memory a built component starts with, as the built-ins do
/// (`plugins/initial_memory.rs`): room for its heap, so a call does not
/// grow it.
pub const INITIAL_MEMORY: u64 = 4 << 20;

/// Why no component was built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(
        "{0} is not a Rust crate (it has no Cargo.toml); make one with `warden plugin new NAME`"
    )]
    NotACrate(PathBuf),
    #[error("cannot run {program}: {source}; install Rust with rustup (https://rustup.rs)")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("`rustup target add {TARGET}` failed ({0}); add the target and build again")]
    Target(String),
    #[error("cargo build failed ({0}); cargo's messages are above")]
    Failed(String),
    #[error(
        "cargo built no .wasm: the crate needs `[lib] crate-type = [\"cdylib\"]` in its Cargo.toml"
    )]
    NoComponent,
    #[error("cannot read cargo's output: {0}")]
    Output(std::io::Error),
}

/// Build the crate in `dir` for [`TARGET`], adding the target with rustup
/// when the toolchain lacks it, and return the path of its `.wasm`.
pub fn build(dir: &Path) -> Result<PathBuf, BuildError> {
    let manifest = dir.join("Cargo.toml");
    if !manifest.is_file() {
        return Err(BuildError::NotACrate(dir.to_path_buf()));
    }
    let dir = &std::path::absolute(dir).map_err(BuildError::Output)?;
    let manifest = dir.join("Cargo.toml");
    ensure_target(dir)?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut child = Command::new(&cargo)
        .current_dir(dir)
        .args(["rustc", "--release", "--lib", "--target", TARGET])
        .arg("--message-format=json-render-diagnostics")
        .arg("--manifest-path")
        .arg(&manifest)
        .args(["--", "-C"])
        .arg(format!("link-arg=--initial-memory={INITIAL_MEMORY}"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|source| BuildError::Spawn {
            program: cargo.clone(),
            source,
        })?;
    let mut wasm = None;
    if let Some(stdout) = child.stdout.take() {
        for line in std::io::BufReader::new(stdout).lines() {
            let line = line.map_err(BuildError::Output)?;
            if let Some(path) = component_of(&line) {
                wasm = Some(path);
            }
        }
    }
    let status = child.wait().map_err(BuildError::Output)?;
    if !status.success() {
        return Err(BuildError::Failed(status.to_string()));
    }
    wasm.ok_or(BuildError::NoComponent)
}

/// The `.wasm` a `compiler-artifact` message names for a `cdylib`.
fn component_of(line: &str) -> Option<PathBuf> {
    let msg: serde_json::Value = serde_json::from_str(line).ok()?;
    if msg["reason"] != "compiler-artifact" {
        return None;
    }
    let kinds = msg["target"]["kind"].as_array()?;
    if !kinds.iter().any(|k| k == "cdylib") {
        return None;
    }
    msg["filenames"]
        .as_array()?
        .iter()
        .filter_map(serde_json::Value::as_str)
        .find(|f| f.ends_with(".wasm"))
        .map(PathBuf::from)
}

/// Add [`TARGET`] with rustup when the toolchain `dir` builds with lacks it.
fn ensure_target(dir: &Path) -> Result<(), BuildError> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let spawn = |program: &str| {
        let program = program.to_string();
        move |source| BuildError::Spawn { program, source }
    };
    let out = Command::new(&rustc)
        .current_dir(dir)
        .args(["--print", "sysroot"])
        .stderr(Stdio::inherit())
        .output()
        .map_err(spawn(&rustc))?;
    let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if sysroot.join("lib/rustlib").join(TARGET).exists() {
        return Ok(());
    }
    eprintln!("warden: adding the {TARGET} target with rustup (first build only)");
    let status = Command::new("rustup")
        .current_dir(dir)
        .args(["target", "add", TARGET])
        .stdout(std::io::stderr())
        .status()
        .map_err(spawn("rustup"))?;
    if !status.success() {
        return Err(BuildError::Target(status.to_string()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_cdylib_wasm_is_taken_for_the_component() {
        let artifact = |kind: &str, file: &str| {
            serde_json::json!({"reason": "compiler-artifact", "target": {"kind": [kind]},
                               "filenames": [file]})
            .to_string()
        };
        assert_eq!(
            component_of(&artifact("cdylib", "/t/wc.wasm")),
            Some(PathBuf::from("/t/wc.wasm"))
        );
        assert_eq!(component_of(&artifact("lib", "/t/libserde.rlib")), None);
        assert_eq!(component_of(&artifact("cdylib", "/t/libwc.so")), None);
        assert_eq!(
            component_of("{\"reason\":\"build-finished\",\"success\":true}"),
            None
        );
        assert_eq!(component_of("not json"), None);
    }
}
