//! `warden plugin list`.

use serde_json::json;

use super::{Exit, open_catalog};
use crate::base::terminal_line;

pub fn list(json: bool) -> Exit {
    let catalog = match open_catalog(json) {
        Ok(c) => c,
        Err(code) => return code,
    };
    if json {
        let plugins: Vec<_> = catalog
            .plugins()
            .iter()
            .map(|p| {
                json!({
                    "name": p.name(),
                    "version": p.meta.manifest.version,
                    "description": p.meta.manifest.description,
                    "builtin": p.is_builtin(),
                    "sha256": p.sha256,
                    "tools": p.meta.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
                    "refused": p.refused(),
                })
            })
            .collect();
        outln!("{}", json!({ "plugins": plugins }));
        return Exit::Success;
    }
    outln!(
        "{:<12} {:<9} {:<10} DESCRIPTION",
        "PLUGIN",
        "VERSION",
        "SOURCE"
    );
    for p in catalog.plugins() {
        let source = match (p.is_builtin(), p.refused()) {
            (true, _) => "built-in",
            (false, None) => "installed",
            (false, Some(_)) => "REFUSED",
        };
        outln!(
            "{:<12} {:<9} {:<10} {}",
            terminal_line(p.name()),
            terminal_line(&p.meta.manifest.version),
            source,
            terminal_line(&p.meta.manifest.description)
        );
    }
    for p in catalog.plugins() {
        if let Some(why) = p.refused() {
            errln!("warden: {}", terminal_line(why));
        }
    }
    Exit::Success
}
