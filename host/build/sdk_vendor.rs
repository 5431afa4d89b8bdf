//! The SDK a scaffolded plugin vendors (`warden plugin new`): generates
//! `sdk_vendor.rs` in OUT_DIR, every file a new crate gets besides its own
//! sources, as `(path in the new crate, contents)`.
//!
//! The SDK's `Cargo.toml` inherits from the guest workspace, which a new
//! crate does not have: the vendored one is written here with the concrete
//! versions and features that `plugins/Cargo.lock` resolved, and the
//! scaffold's `Cargo.lock` is the guest workspace's, less its own members,
//! so a new crate builds with the versions this binary was tested with.

use std::fmt::Write as _;
use std::path::Path;

use super::Result;

/// Write `sdk_vendor.rs` into `out_dir`.
pub fn generate(root: &Path, out_dir: &Path) -> Result<()> {
    let plugins = root.join("plugins");
    let lock: toml::Table = std::fs::read_to_string(plugins.join("Cargo.lock"))?.parse()?;
    let workspace: toml::Table = std::fs::read_to_string(plugins.join("Cargo.toml"))?.parse()?;
    let sdk_dir = plugins.join("sdk");
    let sdk: toml::Table = std::fs::read_to_string(sdk_dir.join("Cargo.toml"))?.parse()?;
    let wit_version = wit_version(&std::fs::read_to_string(sdk_dir.join("src/lib.rs"))?)?;

    let mut files: Vec<(String, String)> = Vec::new();
    let vendored = vendored_manifest(&sdk, &workspace, &lock)?;
    let generated = out_dir.join("vendored-sdk-Cargo.toml");
    std::fs::write(&generated, vendored)?;
    files.push(("vendor/warden-sdk/Cargo.toml".into(), path_str(&generated)?));
    let mut sources = Vec::new();
    walk(&sdk_dir.join("src"), &mut sources)?;
    sources.sort();
    for file in sources {
        let rel = file.strip_prefix(&sdk_dir)?;
        files.push((
            format!("vendor/warden-sdk/{}", rel.display()),
            path_str(&file)?,
        ));
    }
    // `tool.wit` and, from 0.2.2, the `wasi:` packages it uses (`deps/`).
    let wit_dir = root.join("wit").join(&wit_version);
    let mut wit = Vec::new();
    walk(&wit_dir, &mut wit)?;
    wit.sort();
    for file in wit {
        let rel = file.strip_prefix(&wit_dir)?;
        files.push((
            format!("wit/{wit_version}/{}", rel.display()),
            path_str(&file)?,
        ));
    }
    let scaffold_lock = out_dir.join("scaffold-Cargo.lock");
    std::fs::write(&scaffold_lock, registry_only(&lock)?)?;
    files.push(("Cargo.lock".into(), path_str(&scaffold_lock)?));

    let mut out = String::from(
        "/// What a new plugin crate vendors: (path in the crate, contents).\n\
         pub static SDK_VENDOR: &[(&str, &str)] = &[\n",
    );
    for (rel, path) in &files {
        writeln!(out, "    ({rel:?}, include_str!({path:?})),")?;
    }
    out.push_str("];\n");
    writeln!(
        out,
        "/// The `serde` requirement of a new crate (as the SDK's).\n\
         pub const SERDE_VERSION: &str = {:?};",
        locked_version(&lock, "serde")?
    )?;
    std::fs::write(out_dir.join("sdk_vendor.rs"), out)?;
    Ok(())
}

/// The SDK's manifest with every `workspace = true` replaced by the
/// guest workspace's value, versions raised to the locked ones, and no
/// dev-dependencies (they are the SDK's own tests').
fn vendored_manifest(
    sdk: &toml::Table,
    workspace: &toml::Table,
    lock: &toml::Table,
) -> Result<String> {
    let ws = workspace.get("workspace").and_then(|w| w.as_table());
    let ws_package = ws.and_then(|w| w.get("package")).and_then(|p| p.as_table());
    let ws_deps = ws
        .and_then(|w| w.get("dependencies"))
        .and_then(|d| d.as_table())
        .ok_or("plugins/Cargo.toml has no [workspace.dependencies]")?;
    let mut out = sdk.clone();
    out.remove("dev-dependencies");
    if let Some(package) = out.get_mut("package").and_then(|p| p.as_table_mut()) {
        for (key, value) in package.iter_mut() {
            if is_inherited(value) {
                *value = ws_package
                    .and_then(|p| p.get(key))
                    .cloned()
                    .ok_or_else(|| format!("[workspace.package] has no {key}"))?;
            }
        }
    }
    let deps = out
        .get_mut("dependencies")
        .and_then(|d| d.as_table_mut())
        .ok_or("plugins/sdk/Cargo.toml has no [dependencies]")?;
    for (name, value) in deps.iter_mut() {
        if !is_inherited(value) {
            continue;
        }
        let mut spec = match ws_deps.get(name) {
            Some(toml::Value::String(v)) => {
                let mut t = toml::Table::new();
                t.insert("version".into(), toml::Value::String(v.clone()));
                t
            }
            Some(toml::Value::Table(t)) => t.clone(),
            _ => return Err(format!("[workspace.dependencies] has no {name}").into()),
        };
        if let Some(own) = value.as_table() {
            for (k, v) in own.iter().filter(|(k, _)| k.as_str() != "workspace") {
                spec.insert(k.clone(), v.clone());
            }
        }
        let locked = locked_version(lock, name)?;
        spec.insert("version".into(), toml::Value::String(locked));
        *value = toml::Value::Table(spec);
    }
    Ok(format!(
        "# Vendored by `warden plugin new` from the SDK this warden was built with.\n{}",
        toml::to_string(&out)?
    ))
}

/// `key.workspace = true` or `key = { workspace = true, … }`.
fn is_inherited(value: &toml::Value) -> bool {
    value
        .as_table()
        .and_then(|t| t.get("workspace"))
        .and_then(toml::Value::as_bool)
        == Some(true)
}

/// The `[[package]]` tables of a parsed lockfile.
fn packages(lock: &toml::Table) -> impl Iterator<Item = &toml::Table> {
    lock.get("package")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(toml::Value::as_table)
}

/// The version `plugins/Cargo.lock` resolved for registry crate `name`,
/// without build metadata; the highest when there are several.
fn locked_version(lock: &toml::Table, name: &str) -> Result<String> {
    packages(lock)
        .filter(|p| p.get("name").and_then(toml::Value::as_str) == Some(name))
        .filter_map(|p| p.get("version").and_then(toml::Value::as_str))
        .map(|v| v.split('+').next().unwrap_or_default().to_string())
        .max_by_key(|v| {
            v.split('.')
                .map(|p| p.parse::<u64>().unwrap_or(0))
                .collect::<Vec<_>>()
        })
        .ok_or_else(|| format!("plugins/Cargo.lock has no {name}").into())
}

/// The lockfile's registry packages: the guest workspace's own members
/// (no `source`) are not part of a new crate.
fn registry_only(lock: &toml::Table) -> Result<String> {
    let mut out = lock.clone();
    let registry: Vec<toml::Value> = packages(lock)
        .filter(|p| p.contains_key("source"))
        .map(|p| toml::Value::Table(p.clone()))
        .collect();
    out.insert("package".into(), toml::Value::Array(registry));
    Ok(format!(
        "# This file is automatically @generated by Cargo.\n\
         # It is not intended for manual editing.\n{}",
        toml::to_string(&out)?
    ))
}

/// `WIT_VERSION` as the SDK's `lib.rs` states it.
fn wit_version(lib: &str) -> Result<String> {
    let line = lib
        .lines()
        .find(|l| l.starts_with("pub const WIT_VERSION: &str = \""))
        .ok_or("plugins/sdk/src/lib.rs does not state WIT_VERSION")?;
    Ok(line.split('"').nth(1).unwrap_or_default().to_string())
}

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

fn path_str(path: &Path) -> Result<String> {
    Ok(path
        .to_str()
        .ok_or_else(|| format!("{} is not UTF-8", path.display()))?
        .to_string())
}
