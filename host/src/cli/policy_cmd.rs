//! `warden policy list | check | explain`.

use std::path::Path;

use serde_json::json;

use super::policy_suggest::{self, Source, SuggestArgs};
use super::{Exit, PolicyCommand, fail, open_catalog, policy_explain};
use crate::base::Limits;
use crate::capability::FsAccess;
use crate::home::Home;
use crate::plugin::Catalog;
use crate::policy::grant_from_policy;
use crate::policy::{
    CallFacts, DEFAULT_POLICY, DecidedBy, Decision, KnownTool, Policy, builtin_policies,
};

pub fn run(cmd: PolicyCommand) -> Exit {
    match cmd {
        PolicyCommand::List { json } => list(json),
        PolicyCommand::Check { file, json } => check(&file, json),
        PolicyCommand::Explain {
            policy,
            tool,
            input,
            json,
        } => explain(policy.as_deref(), &tool, &input, json),
        PolicyCommand::Suggest {
            from,
            last,
            audit: _,
            since,
            output,
            force,
            name,
            json,
        } => {
            let source = match (from, last, since) {
                (Some(id), _, _) => Source::Session(id),
                (None, true, _) => Source::Last,
                (None, false, Some(since)) => Source::Since(since),
                (None, false, None) => {
                    return fail(
                        json,
                        Exit::Usage,
                        "say which calls to learn from: --from SESSION, --last, or --audit --since WHEN",
                    );
                }
            };
            policy_suggest::run(SuggestArgs {
                source,
                output,
                force,
                name,
                json,
                known_tools,
            })
        }
    }
}

/// User policies live in `<home>/policies/<name>.toml`.
fn user_policies_dir() -> Option<std::path::PathBuf> {
    Home::from_env().ok().map(|h| h.root().join("policies"))
}

/// The name of the user's default policy, `<home>/policies/default.toml`.
pub const USER_DEFAULT: &str = "default";

/// The user's default policy file, if there is one.
fn user_default() -> Option<std::path::PathBuf> {
    user_policies_dir()
        .map(|d| d.join(format!("{USER_DEFAULT}.toml")))
        .filter(|p| p.is_file())
}

/// The policy a command runs under: the one named on the command line,
/// else the user's default policy if the data directory has one, else the
/// built-in default. Nothing in the workspace is ever consulted.
pub fn effective(named: Option<&str>) -> Result<Policy, String> {
    if let Some(name) = named {
        return resolve(name);
    }
    if let Some(user) = user_default() {
        return Policy::load_file(&user)
            .map_err(|e| format!("{e} (the user's default policy; fix it or remove it)"));
    }
    resolve(DEFAULT_POLICY)
}

/// The name of the policy [`effective`] picks without a name.
fn effective_name() -> &'static str {
    match user_default() {
        Some(_) => USER_DEFAULT,
        None => DEFAULT_POLICY,
    }
}

/// Find a policy by shipped name, user policy name, or file path.
pub fn resolve(name_or_path: &str) -> Result<Policy, String> {
    if let Some((name, text)) = builtin_policies()
        .into_iter()
        .find(|(n, _)| *n == name_or_path)
    {
        return Policy::parse(text, &format!("{name}.toml")).map_err(|e| e.to_string());
    }
    if let Some(dir) = user_policies_dir() {
        let user = dir.join(format!("{name_or_path}.toml"));
        if !name_or_path.contains('/') && user.is_file() {
            return Policy::load_file(&user).map_err(|e| e.to_string());
        }
    }
    let path = Path::new(name_or_path);
    if path.is_file() {
        return Policy::load_file(path).map_err(|e| e.to_string());
    }
    Err(format!(
        "no policy named {name_or_path} and no such file (see `warden policy list`)"
    ))
}

fn list(json: bool) -> Exit {
    let mut rows: Vec<(String, &'static str, String)> = Vec::new();
    for (name, text) in builtin_policies() {
        let description = Policy::parse(text, name)
            .map(|p| p.description)
            .unwrap_or_default();
        rows.push((name.to_string(), "shipped", description));
    }
    if let Some(entries) = user_policies_dir().and_then(|d| std::fs::read_dir(d).ok()) {
        let mut user: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
        user.sort();
        for path in user
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        {
            let name = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let description = match Policy::load_file(path) {
                Ok(p) => p.description,
                Err(e) => format!("INVALID: {e}"),
            };
            rows.push((name, "user", description));
        }
    }
    if json {
        let policies: Vec<_> = rows
            .iter()
            .map(|(n, s, d)| json!({"name": n, "source": s, "description": d}))
            .collect();
        outln!(
            "{}",
            json!({ "policies": policies, "default": effective_name() })
        );
    } else {
        outln!("{:<18} {:<8} DESCRIPTION", "POLICY", "SOURCE");
        for (name, source, description) in &rows {
            outln!("{name:<18} {source:<8} {description}");
        }
        outln!("\nWithout --policy: {}", effective_name());
    }
    Exit::Success
}

fn check(file: &Path, json: bool) -> Exit {
    let policy = match Policy::load_file(file) {
        Ok(p) => p,
        Err(e) => return fail(json, Exit::Usage, &e.to_string()),
    };
    let catalog = match open_catalog(json) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let lints = policy.lint(&known_tools(&catalog));
    if !lints.is_empty() {
        if json {
            outln!(
                "{}",
                json!({ "policy": policy.name, "valid": false, "lints": lints })
            );
        } else {
            for lint in &lints {
                errln!("warden: {}: {lint}", file.display());
            }
        }
        return Exit::Usage;
    }
    let lookup = |tool: &str| {
        catalog
            .find_tool(tool)
            .map(|(p, t)| (p.name().to_string(), t.annotations))
    };
    let outcomes = policy.run_tests(&lookup);
    let failed = outcomes.iter().filter(|o| !o.passed).count();
    if json {
        outln!(
            "{}",
            json!({ "policy": policy.name, "valid": true, "tests": outcomes, "failed": failed })
        );
    } else {
        outln!(
            "{}: valid ({} rules, mode {})",
            file.display(),
            policy.rules.len(),
            policy.mode
        );
        for o in &outcomes {
            let mark = if o.passed { "ok  " } else { "FAIL" };
            outln!(
                "  {mark} {}: expected {}, got {} ({})",
                o.name,
                o.expected,
                o.got.verdict,
                describe_by(&o.got)
            );
        }
        outln!(
            "{} of {} inline tests passed",
            outcomes.len() - failed,
            outcomes.len()
        );
    }
    if failed == 0 {
        Exit::Success
    } else {
        Exit::ToolError
    }
}

fn explain(policy: Option<&str>, tool: &str, input: &str, json: bool) -> Exit {
    let policy = match effective(policy) {
        Ok(p) => p,
        Err(e) => return fail(json, Exit::Usage, &e),
    };
    let input = match serde_json::from_str::<serde_json::Value>(input) {
        Ok(v) if v.is_object() => v,
        Ok(_) => return fail(json, Exit::Usage, "input must be a JSON object"),
        Err(e) => return fail(json, Exit::Usage, &format!("input is not valid JSON: {e}")),
    };
    let catalog: Catalog = match open_catalog(json) {
        Ok(c) => c,
        Err(code) => return code,
    };
    explain_in(&catalog, &policy, tool, &input, json)
}

/// Explain a call of `tool` with `input` under `policy`: its decision and grant.
pub fn explain_in(
    catalog: &Catalog,
    policy: &Policy,
    tool: &str,
    input: &serde_json::Value,
    json: bool,
) -> Exit {
    let (plugin, annotations, capabilities) = match catalog.find_tool(tool) {
        Some((plugin, spec)) => (
            plugin.name().to_string(),
            spec.annotations,
            plugin.meta.manifest.capabilities.clone(),
        ),
        None => {
            return fail(
                json,
                Exit::Usage,
                &format!("unknown tool `{tool}` (see `warden tool list`)"),
            );
        }
    };
    let facts = CallFacts {
        tool,
        plugin: &plugin,
        annotations,
        input,
    };
    // A rule that can never fire may be why the decision surprises.
    let lints = policy.lint(&known_tools(catalog));
    let decision = policy.decide(&facts);
    let granted = policy.grant_for_call(&facts);
    let declared = capabilities.filesystem;
    let (grant, cuts) = grant_from_policy(&capabilities, Path::new("."), &granted);
    let process = policy_explain::shows_process(tool, &granted.process).then_some(&granted.process);
    let workspace = grant.filesystem.map(|fs| fs.access);
    let extra_dirs: Vec<_> = grant
        .extra_dirs
        .iter()
        .map(|d| json!({"path": d.path, "access": d.access}))
        .collect();
    let limits = granted.limits.apply(Limits::default());
    let network_ask = policy_explain::approvable(
        decision.verdict,
        &capabilities.network,
        &granted.network_ask,
    );
    if json {
        let mut doc = json!({
            "policy": policy.name,
            "tool": tool,
            "plugin": plugin,
            "decision": decision,
            "grant": {
                "workspace": workspace,
                "declared_filesystem": declared,
                "extra_dirs": extra_dirs,
                "network": granted.network,
                "network_ask": network_ask,
                "limits": limits_json(&limits),
            },
            "grant_cuts": cuts,
        });
        if let Some(process) = process {
            doc["grant"]["process"] = json!(process);
        }
        if !lints.is_empty() {
            doc["warnings"] = json!(lints);
        }
        outln!("{doc}");
    } else {
        for lint in &lints {
            outln!("warning:  {lint}");
        }
        outln!("policy:   {} (mode {})", policy.name, policy.mode);
        outln!("tool:     {tool} (plugin {plugin})");
        outln!(
            "decision: {} — {}",
            decision.verdict,
            describe_by(&decision)
        );
        if let Some(reason) = &decision.reason {
            outln!("reason:   {reason}");
        }
        policy_explain::print_parts(&decision);
        outln!(
            "grant:    workspace {} (plugin declares {})",
            access_name(workspace),
            declared.as_str()
        );
        for dir in &grant.extra_dirs {
            outln!(
                "          extra directory {} {}",
                dir.path.display(),
                access_name(Some(dir.access))
            );
        }
        outln!(
            "          network {}",
            policy_explain::network_line(&granted.network, &network_ask)
        );
        outln!(
            "          deadline {} ms, memory {} MiB, output {} bytes",
            limits.deadline.as_millis(),
            limits.memory_bytes >> 20,
            limits.output_bytes
        );
        if let Some(process) = process {
            policy_explain::print_process(process);
        }
        for cut in &cuts {
            outln!(
                "cut:      declared {} → granted {}",
                cut.declared,
                cut.granted
            );
        }
    }
    Exit::Success
}

/// The limits as JSON, the deadline in milliseconds like every other
/// duration Warden prints (`deadline_ms`).
fn limits_json(limits: &Limits) -> serde_json::Value {
    let mut doc = json!(limits);
    if let Some(fields) = doc.as_object_mut() {
        fields.remove("deadline");
        fields.insert("deadline_ms".into(), json!(limits.deadline.as_millis()));
    }
    doc
}

/// The catalog's tools, for [`Policy::lint`].
fn known_tools(catalog: &Catalog) -> Vec<KnownTool<'_>> {
    catalog
        .tools()
        .map(|(p, t)| KnownTool {
            name: t.name.as_str(),
            plugin: p.name(),
            input_schema: &t.input_schema,
        })
        .collect()
}

fn access_name(access: Option<FsAccess>) -> &'static str {
    match access {
        None => "none",
        Some(FsAccess::ReadOnly) => "read-only",
        Some(FsAccess::ReadWrite) => "read-write",
    }
}

fn describe_by(d: &Decision) -> String {
    match &d.by {
        DecidedBy::Rule { name, .. } => format!("rule {name}"),
        DecidedBy::Mode(mode) => format!("no rule matched; mode {mode}"),
    }
}
