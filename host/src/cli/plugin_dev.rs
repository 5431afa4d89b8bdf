//! `warden plugin new` and `warden plugin build`: for plugin authors.
//!
//! `new` writes a crate that builds without a Warden checkout; `build`
//! compiles one and passes the component through the checks `plugin
//! install` makes, so what it reports valid installs, and a component it
//! refuses gets the one-line reason `install` would give.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::plugin_view::print_bom;
use super::{Exit, fail, open_catalog};
use crate::base::terminal_line;
use crate::plugin::Bom;
use crate::plugin::cargo_build::{self, BuildError};
use crate::plugin::scaffold::{self, ScaffoldError};

/// `warden plugin new NAME [--dir DIR]`.
pub fn new_crate(name: &str, dir: Option<&Path>) -> Exit {
    let dir = dir.map_or_else(|| PathBuf::from(name), Path::to_path_buf);
    let made = match scaffold::create(name, &dir) {
        Ok(made) => made,
        Err(e) => {
            let code = match e {
                ScaffoldError::BadName(_)
                | ScaffoldError::NotEmpty(_)
                | ScaffoldError::NotADirectory(_) => Exit::Usage,
                ScaffoldError::Io { .. } => Exit::Failure,
            };
            return fail(false, code, &format!("no plugin crate made: {e}"));
        }
    };
    let shown = terminal_line(&dir.display().to_string());
    outln!("made plugin {name} in {shown}: one tool, word_count, reading a workspace file");
    outln!();
    outln!("  cd {shown}");
    outln!("  cargo test                 # its unit tests, natively");
    outln!("  warden plugin build        # the component, checked as `plugin install` would");
    outln!(
        "  warden tool call --plugin {} word_count --input '{{\"path\":\"README.md\"}}'",
        made.wasm
    );
    outln!("  warden plugin install {}", made.wasm);
    Exit::Success
}

/// `warden plugin build [DIR]`.
pub fn build(dir: Option<&Path>, policy: Option<&str>, json: bool) -> Exit {
    let dir = dir.unwrap_or(Path::new("."));
    let policy = match super::policy_cmd::effective(policy) {
        Ok(p) => p,
        Err(e) => return fail(json, Exit::Usage, &e),
    };
    let wasm = match cargo_build::build(dir) {
        Ok(wasm) => wasm,
        Err(e) => {
            let code = match e {
                BuildError::NotACrate(_) => Exit::Usage,
                BuildError::Spawn { .. }
                | BuildError::Target(_)
                | BuildError::Failed(_)
                | BuildError::NoComponent
                | BuildError::Output(_) => Exit::Failure,
            };
            return fail(json, code, &e.to_string());
        }
    };
    let catalog = match open_catalog(json) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let shown = wasm.display().to_string();
    let candidate = match catalog.prepare_install(&wasm) {
        Ok(c) => c,
        Err(e) => {
            let message = format!("built {shown}, but `plugin install` would refuse it: {e}");
            return fail(json, Exit::Failure, &message);
        }
    };
    let m = &candidate.meta;
    let bom = Bom::new(&m.manifest, &m.imports, &m.tools, &policy);
    let size = std::fs::metadata(&wasm).map_or(0, |md| md.len());
    if json {
        let doc = json!({
            "wasm": shown,
            "sha256": candidate.sha256,
            "size": size,
            "meta": m,
            "capabilities": bom,
        });
        outln!("{doc}");
        return Exit::Success;
    }
    let label = format!("{} {}", m.manifest.name, m.manifest.version);
    outln!(
        "built {}, a component `plugin install` accepts",
        terminal_line(&label)
    );
    let tools: Vec<_> = m.tools.iter().map(|t| t.name.as_str()).collect();
    outln!("  tools: {}", terminal_line(&tools.join(", ")));
    outln!("  sha256: {}", candidate.sha256);
    outln!();
    print_bom(&bom);
    outln!();
    outln!("{}", terminal_line(&shown));
    Exit::Success
}
