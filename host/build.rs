//! Builds the guest plugins in `plugins/` (and the test fixtures in
//! `tests/plugins/`) for wasm32-wasip2 and embeds the built-ins.
//!
//! On a fresh machine the wasm32-wasip2 target is added with rustup first.
//! Generated in OUT_DIR:
//! - `builtin.rs`: the `BUILTIN` table (bytes and sha256 of `fs`, `search`, `shell`, `web`, `agent` and `memory`);
//! - `test_plugins.rs`: paths of every built guest, for tests and benches;
//!   `tests/all/fixtures.rs` checks that every fixture tool is used by a test;
//! - `sdk_vendor.rs`: the SDK and WIT `warden plugin new` vendors (`build/sdk_vendor.rs`).

use std::env;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

#[path = "build/sdk_vendor.rs"]
mod sdk_vendor;

const TARGET: &str = "wasm32-wasip2";
/// Plugins embedded in the binary.
const BUILTIN: &[&str] = &["fs", "search", "shell", "web", "agent", "memory"];
/// Guests built only for tests and benchmarks.
const FIXTURES: &[&str] = &[
    "echo",
    "hostile",
    "future",
    "netprobe",
    "echo_next",
    "legacy",
    "legacy_fan",
    "legacy_v2",
];

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> Result<()> {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR")?);
    let root = manifest_dir
        .parent()
        .ok_or("host/ has no parent")?
        .to_path_buf();
    let out_dir = PathBuf::from(env::var("OUT_DIR")?);
    for dir in ["plugins", "tests/plugins", "wit"] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }
    ensure_target()?;
    let target_dir = env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
        .join("wasm-plugins");
    build_guests(&root.join("plugins"), &target_dir)?;
    let built = target_dir.join(TARGET).join("release");

    let mut builtin = String::from(
        "/// The plugins compiled into this binary.\npub static BUILTIN: &[BuiltinPlugin] = &[\n",
    );
    for name in BUILTIN {
        let path = built.join(format!("{name}.wasm"));
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let sha = hex::encode(Sha256::digest(&bytes));
        writeln!(
            builtin,
            "    BuiltinPlugin {{ name: {name:?}, wasm: include_bytes!({:?}), sha256: {sha:?} }},",
            path.display().to_string()
        )?;
    }
    builtin.push_str("];\n");
    std::fs::write(out_dir.join("builtin.rs"), builtin)?;

    let mut fixtures = String::from("// Paths of the guests built for tests and benchmarks.\n");
    for name in BUILTIN.iter().chain(FIXTURES) {
        let path = built.join(format!("{name}.wasm"));
        if !path.exists() {
            return Err(format!("expected guest {} was not built", path.display()).into());
        }
        writeln!(
            fixtures,
            "pub const {}: &str = {:?};",
            name.to_uppercase(),
            path.display().to_string()
        )?;
    }
    std::fs::write(out_dir.join("test_plugins.rs"), fixtures)?;
    sdk_vendor::generate(&root, &out_dir)?;
    Ok(())
}

/// Add the wasm32-wasip2 target with rustup when it is missing.
fn ensure_target() -> Result<()> {
    let sysroot = Command::new(env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .args(["--print", "sysroot"])
        .output()?;
    let sysroot = PathBuf::from(String::from_utf8(sysroot.stdout)?.trim());
    if sysroot.join("lib/rustlib").join(TARGET).exists() {
        return Ok(());
    }
    println!("cargo:warning=adding the {TARGET} target with rustup (first build only)");
    let status = Command::new("rustup")
        .args(["target", "add", TARGET])
        .status()?;
    if !status.success() {
        return Err(format!(
            "`rustup target add {TARGET}` failed; install the target and build again"
        )
        .into());
    }
    Ok(())
}

/// `cargo build --release --target wasm32-wasip2` in the guest workspace.
fn build_guests(plugins: &Path, target_dir: &Path) -> Result<()> {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(plugins)
        .args([
            "build",
            "--release",
            "--locked",
            "--workspace",
            "--target",
            TARGET,
        ])
        .env("CARGO_TARGET_DIR", target_dir);
    // The outer build's settings are not the guests': drop what would leak in.
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_BUILD_TARGET",
        "CARGO_PROFILE_RELEASE_DEBUG",
        "CARGO_LLVM_COV",
        "LLVM_PROFILE_FILE",
    ] {
        cmd.env_remove(var);
    }
    let status = cmd.status()?;
    if !status.success() {
        return Err(
            "building the wasm32-wasip2 plugins failed (see the cargo output above)".into(),
        );
    }
    Ok(())
}
