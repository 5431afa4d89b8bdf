//! `warden plugin install | list | inspect | remove`.

use serde_json::json;

use super::{Exit, PluginCommand, fail, open_catalog};
use crate::plugin::Inspection;

pub fn run(cmd: PluginCommand) -> Exit {
    let json = match &cmd {
        PluginCommand::Install { json, .. }
        | PluginCommand::List { json }
        | PluginCommand::Inspect { json, .. }
        | PluginCommand::Remove { json, .. } => *json,
    };
    let mut catalog = match open_catalog(json) {
        Ok(c) => c,
        Err(code) => return code,
    };
    match cmd {
        PluginCommand::Install { path, .. } => match catalog.install(&path) {
            Err(e) => fail(
                json,
                Exit::Failure,
                &format!("cannot install {}: {e}", path.display()),
            ),
            Ok(report) => {
                let m = &report.installed.meta.manifest;
                if json {
                    println!(
                        "{}",
                        json!({ "installed": report.installed, "replaced": report.replaced })
                    );
                } else {
                    match &report.replaced {
                        Some(old) => println!("upgraded {} {old} → {}", m.name, m.version),
                        None => println!("installed {} {}", m.name, m.version),
                    }
                    let tools: Vec<_> = report
                        .installed
                        .meta
                        .tools
                        .iter()
                        .map(|t| t.name.as_str())
                        .collect();
                    println!("  tools: {}", tools.join(", "));
                    println!("  sha256: {}", report.installed.sha256);
                }
                Exit::Success
            }
        },
        PluginCommand::List { .. } => {
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
                        })
                    })
                    .collect();
                println!("{}", json!({ "plugins": plugins }));
            } else {
                println!(
                    "{:<12} {:<9} {:<10} DESCRIPTION",
                    "PLUGIN", "VERSION", "SOURCE"
                );
                for p in catalog.plugins() {
                    let source = if p.is_builtin() {
                        "built-in"
                    } else {
                        "installed"
                    };
                    println!(
                        "{:<12} {:<9} {:<10} {}",
                        p.name(),
                        p.meta.manifest.version,
                        source,
                        p.meta.manifest.description
                    );
                }
            }
            Exit::Success
        }
        PluginCommand::Inspect { target, .. } => match catalog.inspect(&target) {
            Err(e) => fail(json, Exit::Failure, &e.to_string()),
            Ok(ins) => {
                if json {
                    println!("{}", json!(ins));
                } else {
                    print_inspection(&ins);
                }
                Exit::Success
            }
        },
        PluginCommand::Remove { name, .. } => match catalog.remove(&name) {
            Err(e) => fail(json, Exit::Failure, &e.to_string()),
            Ok(removed) => {
                if json {
                    println!("{}", json!({ "removed": removed.meta.manifest.name }));
                } else {
                    println!(
                        "removed {} {}",
                        removed.meta.manifest.name, removed.meta.manifest.version
                    );
                }
                Exit::Success
            }
        },
    }
}

fn print_inspection(ins: &Inspection) {
    let m = &ins.manifest;
    println!("{} {}", m.name, m.version);
    if !m.description.is_empty() {
        println!("  {}", m.description);
    }
    println!("sha256:       {}", ins.sha256);
    println!("size:         {} bytes", ins.size);
    println!("wit version:  warden:tool@{}", ins.wit_version);
    println!(
        "declared:     filesystem {}",
        m.capabilities.filesystem.as_str()
    );
    if m.capabilities.network.is_empty() {
        println!("              network none");
    } else {
        println!(
            "              network {}",
            m.capabilities
                .network
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    println!("imports:");
    for i in &ins.imports {
        println!("  {:<44} {}", i.name, i.class.describe());
    }
    println!("tools:");
    for t in &ins.tools {
        let access = if t.annotations.read_only {
            "read-only"
        } else {
            "writes"
        };
        println!(
            "  {:<16} {:<10} {}",
            t.name,
            access,
            t.description.lines().next().unwrap_or("")
        );
    }
}
