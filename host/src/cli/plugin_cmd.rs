//! `warden plugin install | approve | update | push | list | inspect | remove`
//! (and the authors' `new` and `build`, in `plugin_dev`).
//!
//! Installing shows the plugin's capability bill of materials; under
//! `--strict` a component that imports more than it declares is refused,
//! and an upgrade (or re-approval) that grows its capabilities goes ahead
//! only when confirmed on the terminal or with `--yes`. Every change is
//! audited. What the component says of itself is shown inert for a terminal.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::json;

use super::plugin_fetch_cmd::{self, FetchArgs, UpdateFetch, print_update};
use super::plugin_view::{print_bom, print_changes, print_inspection};
use super::{Exit, fail, open_catalog};
use crate::audit::AuditEvent;
use crate::base::terminal_line;
use crate::plugin::{Bom, Candidate, CapChange, Catalog, grows};
use crate::policy::Policy;

#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Make a new plugin crate (one working tool, its unit test, a
    /// least-privilege manifest) that builds without a Warden checkout.
    New {
        /// The plugin's name: ^[a-z0-9][a-z0-9_-]{0,63}$.
        name: String,
        /// Where to make it [default: ./NAME]; it must not exist or be empty.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Build a plugin crate for wasm32-wasip2, check the component as
    /// `install` would, and show its capabilities and path.
    Build {
        /// The crate's directory [default: the current directory].
        dir: Option<PathBuf>,
        /// The policy whose grants are shown [default: as `warden tool call`].
        #[arg(long, value_name = "NAME|PATH")]
        policy: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Validate a component, show its capabilities, and install it.
    Install {
        /// Path of the `.wasm` component, an `https://` URL (with --sha256),
        /// or `oci://HOST/REPO:TAG[@sha256:DIGEST]`.
        path: PathBuf,
        #[command(flatten)]
        fetch: FetchArgs,
        #[command(flatten)]
        opts: InstallArgs,
    },
    /// Fetch a plugin installed from a registry again: show what its new
    /// version changes, and install it when confirmed.
    Update {
        name: String,
        /// Allow a registry that serves plain http.
        #[arg(long)]
        allow_http: bool,
        #[command(flatten)]
        opts: InstallArgs,
    },
    /// Validate a component and publish it to an OCI registry, in the
    /// layout `wkg oci push` writes.
    Push {
        /// Path of the `.wasm` component.
        path: PathBuf,
        /// `oci://HOST/REPO:TAG`.
        reference: String,
        /// Allow a registry that serves plain http.
        #[arg(long)]
        allow_http: bool,
        #[arg(long)]
        json: bool,
    },
    /// Trust an installed plugin's component as it is on disk now (after it
    /// changed since it was installed).
    Approve {
        name: String,
        #[command(flatten)]
        opts: InstallArgs,
    },
    /// Built-in and installed plugins.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Capabilities declared, reachable from imports, and granted; imports,
    /// tools, sha256, size and WIT version.
    Inspect {
        /// An installed plugin's name, or a path to a `.wasm` file.
        target: String,
        /// Exit 3 if the component imports more than it declares.
        #[arg(long)]
        strict: bool,
        /// The policy whose grants are shown [default: as `warden tool call`].
        #[arg(long, value_name = "NAME|PATH")]
        policy: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Remove an installed plugin.
    Remove {
        name: String,
        #[arg(long)]
        json: bool,
    },
}

/// Options of `install` and `approve`.
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// Refuse a component that imports more than it declares (exit 3).
    #[arg(long)]
    pub strict: bool,
    /// Accept grown capabilities (for `update`, any change) without asking.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Never ask: refuse what needs confirming unless --yes.
    #[arg(long)]
    pub non_interactive: bool,
    /// The policy whose grants are shown [default: as `warden tool call`].
    #[arg(long, value_name = "NAME|PATH")]
    pub policy: Option<String>,
    #[arg(long)]
    pub json: bool,
}

pub fn run(cmd: PluginCommand) -> Exit {
    match cmd {
        PluginCommand::New { name, dir } => super::plugin_dev::new_crate(&name, dir.as_deref()),
        PluginCommand::Build { dir, policy, json } => {
            super::plugin_dev::build(dir.as_deref(), policy.as_deref(), json)
        }
        PluginCommand::Install { path, fetch, opts } => {
            let what = path.display().to_string();
            match plugin_fetch_cmd::fetch_to_install(&what, &fetch, opts.json) {
                Some(Ok(fetched)) => install(&opts, &what, Action::Install, |c| {
                    c.prepare_fetched(fetched)
                }),
                Some(Err(code)) => code,
                None => install(&opts, &what, Action::Install, |c| c.prepare_install(&path)),
            }
        }
        PluginCommand::Approve { name, opts } => {
            install(&opts, &name, Action::Approve, |c| c.prepare_approve(&name))
        }
        PluginCommand::Update {
            name,
            allow_http,
            opts,
        } => match plugin_fetch_cmd::fetch_update(&name, allow_http, opts.json) {
            Ok(UpdateFetch::Changed(fetched)) => install(&opts, &name, Action::Update, |c| {
                plugin_fetch_cmd::prepare_update(c, &name, fetched)
            }),
            Ok(UpdateFetch::UpToDate) => Exit::Success,
            Err(code) => code,
        },
        PluginCommand::Push {
            path,
            reference,
            allow_http,
            json,
        } => plugin_fetch_cmd::push(&path, &reference, allow_http, json),
        PluginCommand::List { json } => super::plugin_list::list(json),
        PluginCommand::Inspect {
            target,
            strict,
            policy,
            json,
        } => inspect(&target, strict, policy.as_deref(), json),
        PluginCommand::Remove { name, json } => remove(&name, json),
    }
}

fn policy_and_catalog(named: Option<&str>, json: bool) -> Result<(Policy, Catalog), Exit> {
    let policy = super::policy_cmd::effective(named).map_err(|e| fail(json, Exit::Usage, &e))?;
    Ok((policy, open_catalog(json)?))
}

/// What [`install`] does with its candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Action {
    /// Install, or upgrade: ask only when capabilities grow.
    Install,
    /// Trust the bytes on disk again.
    Approve,
    /// Replace with what the registry serves now: show the changes and ask.
    Update,
}

/// Install (or approve again, or update) the candidate `prepare` makes.
pub(super) fn install(
    opts: &InstallArgs,
    what: &str,
    action: Action,
    prepare: impl FnOnce(&Catalog) -> Result<Candidate, crate::plugin::CatalogError>,
) -> Exit {
    let json = opts.json;
    let (policy, mut catalog) = match policy_and_catalog(opts.policy.as_deref(), json) {
        Ok(pc) => pc,
        Err(code) => return code,
    };
    catalog.observe_compiles(super::progress::compile_observer(json, "to install"));
    let candidate = match prepare(&catalog) {
        Ok(c) => c,
        Err(e) => return fail(json, Exit::Failure, &format!("cannot install {what}: {e}")),
    };
    let m = &candidate.meta;
    let bom = Bom::new(&m.manifest, &m.imports, &m.tools, &policy);
    let changes = candidate.changes();
    let label = format!("{} {}", m.manifest.name, m.manifest.version);
    if opts.strict && bom.has_warnings() {
        let message = format!(
            "{label} refused (--strict): it imports more than it declares: {}",
            warnings(&bom)
        );
        return refuse(json, &message, &bom, &changes);
    }
    let update = action == Action::Update;
    if update && !json {
        print_update(&candidate);
    }
    let confirmed_by = if !grows(&changes) && !update {
        None
    } else if opts.yes {
        Some("--yes")
    } else {
        if !json && !update {
            print_changes(&changes);
        }
        let question = if update {
            format!("Update to {label}?")
        } else {
            format!("{label} may do more than before. Install it?")
        };
        let answer = if opts.non_interactive {
            crate::base::prompt::Answer::NoTerminal
        } else {
            crate::base::prompt::ask_yes_no(&question)
        };
        match answer {
            crate::base::prompt::Answer::Yes => Some("user"),
            crate::base::prompt::Answer::No => {
                let message = format!("{label} not installed: you declined the new capabilities");
                return refuse(json, &message, &bom, &changes);
            }
            crate::base::prompt::Answer::NoTerminal if update => {
                let message = format!(
                    "{label} not installed: an update needs confirming and there is no terminal to \
                     ask (or --non-interactive); check the changes, then run again with --yes"
                );
                return refuse(json, &message, &bom, &changes);
            }
            crate::base::prompt::Answer::NoTerminal => {
                let message = format!(
                    "{label} may do more than the installed version and there is no terminal to \
                     confirm it; check the changes, then run again with --yes to accept them"
                );
                return refuse(json, &message, &bom, &changes);
            }
        }
    };
    let previous = candidate.previous.clone();
    let report = match catalog.commit(candidate) {
        Ok(r) => r,
        Err(e) => return fail(json, Exit::Failure, &format!("cannot install {what}: {e}")),
    };
    let inst = &report.installed;
    let event = AuditEvent::PluginInstalled {
        name: inst.meta.manifest.name.clone(),
        version: inst.meta.manifest.version.clone(),
        sha256: inst.sha256.clone(),
        replaced_sha256: previous.as_ref().map(|p| p.sha256.clone()),
        replaced_version: previous.as_ref().map(|p| p.meta.manifest.version.clone()),
        approved_again: action == Action::Approve,
        declared: json!(bom.declared),
        imports: json!(bom.imports),
        changes: changes.clone(),
        confirmed_by: confirmed_by.map(str::to_string),
    };
    super::audit_or_warn(event);
    if json {
        let doc = json!({
            "installed": report.installed,
            "replaced": report.replaced,
            "capabilities": bom,
            "changes": changes,
            "confirmed_by": confirmed_by,
        });
        outln!("{doc}");
        return Exit::Success;
    }
    let done = match (&report.replaced, action) {
        (_, Action::Approve) => format!("approved {label}"),
        (Some(old), Action::Install | Action::Update) => format!(
            "upgraded {} {old} → {}",
            inst.meta.manifest.name, inst.meta.manifest.version
        ),
        (None, Action::Install | Action::Update) => format!("installed {label}"),
    };
    outln!("{}", terminal_line(&done));
    let tools: Vec<_> = inst.meta.tools.iter().map(|t| t.name.as_str()).collect();
    outln!("  tools: {}", terminal_line(&tools.join(", ")));
    outln!("  sha256: {}", inst.sha256);
    if !changes.is_empty() && confirmed_by != Some("user") && !update {
        print_changes(&changes);
    }
    outln!();
    print_bom(&bom);
    Exit::Success
}

fn warnings(bom: &Bom) -> String {
    let w: Vec<&str> = bom
        .findings
        .iter()
        .filter(|f| f.severity == crate::plugin::Severity::Warning)
        .map(|f| f.message.as_str())
        .collect();
    w.join("; ")
}

/// Refuse an install (exit 3), showing why and what was asked for.
fn refuse(json: bool, message: &str, bom: &Bom, changes: &[CapChange]) -> Exit {
    if json {
        let mut doc = super::error_json(Exit::Denied, message);
        doc["capabilities"] = json!(bom);
        doc["changes"] = json!(changes);
        outln!("{doc}");
    } else {
        print_bom(bom);
        errln!("warden: {}", terminal_line(message));
    }
    Exit::Denied
}

fn inspect(target: &str, strict: bool, policy: Option<&str>, json: bool) -> Exit {
    let (policy, catalog) = match policy_and_catalog(policy, json) {
        Ok(pc) => pc,
        Err(code) => return code,
    };
    let ins = match catalog.inspect(target) {
        Ok(ins) => ins.with_policy(&policy),
        Err(e) => return fail(json, Exit::Failure, &e.to_string()),
    };
    if json {
        outln!("{}", json!(ins));
    } else {
        print_inspection(&ins);
    }
    match &ins.capabilities {
        Some(bom) if strict && bom.has_warnings() => {
            if !json {
                let line = format!(
                    "{} imports more than it declares: {}",
                    ins.manifest.name,
                    warnings(bom)
                );
                errln!("warden: {}", terminal_line(&line));
            }
            Exit::Denied
        }
        Some(_) | None => Exit::Success,
    }
}

fn remove(name: &str, json: bool) -> Exit {
    let mut catalog = match open_catalog(json) {
        Ok(c) => c,
        Err(code) => return code,
    };
    match catalog.remove(name) {
        Err(e) => fail(json, Exit::Failure, &e.to_string()),
        Ok(removed) => {
            let m = &removed.meta.manifest;
            super::audit_or_warn(AuditEvent::PluginRemoved {
                name: m.name.clone(),
                version: Some(m.version.clone()),
                sha256: removed.sha256.clone(),
            });
            if json {
                outln!("{}", json!({ "removed": m.name }));
            } else {
                outln!(
                    "removed {}",
                    terminal_line(&format!("{} {}", m.name, m.version))
                );
            }
            Exit::Success
        }
    }
}
