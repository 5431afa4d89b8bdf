//! From recorded calls to what each tool's rule must allow, which calls
//! are left out, and the test cases: every call kept expects `allow`, a
//! few probes just outside expect `deny`.
//!
//! Invariant: a call is kept only if every argument the rule constrains
//! can be named exactly; otherwise it is listed in `not_allowed`.

use std::collections::{BTreeMap, BTreeSet};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde_json::{Value, json};

use super::paths::{generalise, workspace_path};
use super::{NotAllowed, RecordedCall, SuggestRequest, ToolSummary};
use crate::policy::command::{CommandNeed, SHELL_TOOL, allow_needs};

/// Arguments that name a workspace path.
pub(super) const PATH_ARGUMENT: &str = "path";
/// The argument that names a URL.
pub(super) const URL_ARGUMENT: &str = "url";
/// Where probes point that no recorded call touched.
const PROBE: &str = "warden-suggest-probe";

/// What one tool's rule allows.
#[derive(Debug, Default)]
pub(super) struct ToolPlan {
    pub plugin: Option<String>,
    pub calls: usize,
    pub wrote: bool,
    /// Paths seen in `path`; `None` once a kept call had no `path`.
    pub paths: Option<BTreeSet<String>>,
    /// Recorded paths written, for the sibling probe.
    pub written: Vec<String>,
    /// `scheme://authority` as written in `url`; `None` once a kept call
    /// had no `url`.
    pub origins: Option<BTreeSet<String>>,
    /// Destinations reached.
    pub network: BTreeSet<String>,
    pub commands: Vec<CommandNeed>,
    pub toolchains: BTreeSet<String>,
    pub process_env: BTreeSet<String>,
    pub max_duration_ms: u64,
    pub max_output_bytes: u64,
}

impl ToolPlan {
    /// The globs on `path`, if constrained.
    pub(super) fn globs(&self) -> Vec<String> {
        self.paths.as_ref().map(generalise).unwrap_or_default()
    }
}

/// One generated test case.
#[derive(Debug, Clone)]
pub(super) struct Case {
    pub name: String,
    pub tool: String,
    pub input: Value,
}

#[derive(Debug, Default)]
pub(super) struct Plan {
    pub tools: BTreeMap<String, ToolPlan>,
    pub not_allowed: Vec<NotAllowed>,
    pub allow_tests: Vec<Case>,
    pub probes: Vec<Case>,
}

impl Plan {
    pub(super) fn of(req: &SuggestRequest) -> Plan {
        let mut plan = Plan::default();
        let mut seen = BTreeSet::new();
        for call in &req.calls {
            if let Err(reason) = plan.keep(call) {
                plan.not_allowed.push(NotAllowed {
                    tool: call.tool.clone(),
                    arguments: call.arguments.clone(),
                    reason,
                });
                continue;
            }
            if seen.insert((call.tool.clone(), call.arguments.to_string())) {
                plan.allow_tests.push(Case {
                    name: format!("the run's call #{} ({})", seen.len(), call.tool),
                    tool: call.tool.clone(),
                    input: call.arguments.clone(),
                });
            }
        }
        plan.probes = plan.probes(req);
        plan
    }

    /// Add `call` to its tool's plan, or say why it cannot be allowed.
    fn keep(&mut self, call: &RecordedCall) -> Result<(), String> {
        if let Some(why) = &call.refused {
            return Err(format!("not run in the recorded run: {why}"));
        }
        if !call.arguments.is_object() {
            return Err("its input was not recorded whole".to_string());
        }
        let path = match call.arguments.get(PATH_ARGUMENT) {
            Some(Value::String(p)) => Some(workspace_path(p).map_err(|e| e.to_string())?),
            Some(_) => return Err(format!("`{PATH_ARGUMENT}` is not a string")),
            None => None,
        };
        let origin = match call.arguments.get(URL_ARGUMENT) {
            Some(Value::String(u)) => Some(origin_of(u)?),
            Some(_) => return Err(format!("`{URL_ARGUMENT}` is not a string")),
            None => None,
        };
        let commands = if call.tool == SHELL_TOOL {
            let line = call.arguments.get("command").and_then(Value::as_str);
            let line = line.ok_or("a shell call without a command")?;
            if let Some(Value::String(cwd)) = call.arguments.get("cwd") {
                workspace_path(cwd).map_err(|e| e.to_string())?;
            }
            allow_needs(line).map_err(|e| format!("no command rule can allow {e}"))?
        } else {
            Vec::new()
        };
        let t = self
            .tools
            .entry(call.tool.clone())
            .or_insert_with(|| ToolPlan {
                paths: Some(BTreeSet::new()),
                origins: Some(BTreeSet::new()),
                ..ToolPlan::default()
            });
        t.plugin.clone_from(&call.plugin);
        t.calls += 1;
        t.wrote |= call.wrote;
        match (&mut t.paths, path) {
            (Some(paths), Some(p)) => {
                if call.wrote {
                    t.written.push(p.clone());
                }
                paths.insert(p);
            }
            (paths, None) => *paths = None,
            (None, Some(_)) => {}
        }
        match (&mut t.origins, origin) {
            (Some(origins), Some(o)) => {
                origins.insert(o);
            }
            (origins, None) => *origins = None,
            (None, Some(_)) => {}
        }
        t.network.extend(call.network.iter().cloned());
        for need in commands {
            if !t.commands.contains(&need) {
                t.commands.push(need);
            }
        }
        t.toolchains.extend(call.toolchains.iter().cloned());
        t.process_env.extend(call.process_env.iter().cloned());
        t.max_duration_ms = t.max_duration_ms.max(call.duration_ms);
        t.max_output_bytes = t.max_output_bytes.max(call.output_bytes);
        Ok(())
    }

    /// Calls just outside what was done, each expected to be denied.
    fn probes(&self, req: &SuggestRequest) -> Vec<Case> {
        let mut probes = Vec::new();
        let example = |tool: &str| {
            self.allow_tests
                .iter()
                .find(|c| c.tool == tool)
                .map_or_else(|| json!({}), |c| c.input.clone())
        };
        let with = |tool: &str, key: &str, value: &str| {
            let mut input = example(tool);
            if let Some(map) = input.as_object_mut() {
                map.insert(key.to_string(), Value::String(value.to_string()));
            }
            input
        };
        let written = self.tools.iter().find(|(_, t)| !t.written.is_empty());
        if let Some((tool, t)) = written
            && let Some(path) = t.written.first().and_then(|w| sibling(w, &t.globs()))
        {
            probes.push(Case {
                name: format!("{tool} in a directory the run did not write is denied"),
                tool: tool.clone(),
                input: with(tool, PATH_ARGUMENT, &path),
            });
        }
        if let Some((tool, _)) = self.tools.iter().find(|(_, t)| t.paths.is_some()) {
            probes.push(Case {
                name: format!("{tool} outside the workspace is denied"),
                tool: tool.clone(),
                input: with(tool, PATH_ARGUMENT, &format!("../{PROBE}.txt")),
            });
        }
        if let Some((tool, _)) = self.tools.iter().find(|(_, t)| t.origins.is_some()) {
            probes.push(Case {
                name: format!("{tool} to a host the run did not reach is denied"),
                tool: tool.clone(),
                input: with(tool, URL_ARGUMENT, "https://unused.invalid/"),
            });
        }
        if let Some(t) = self.tools.get(SHELL_TOOL) {
            let programs: BTreeSet<&str> = t
                .commands
                .iter()
                .filter_map(|c| c.prefix.split(' ').next())
                .collect();
            let other = [
                "curl https://unused.invalid",
                "wget https://unused.invalid",
                "rm -rf .",
            ]
            .into_iter()
            .find(|c| c.split(' ').next().is_some_and(|p| !programs.contains(p)));
            if let Some(command) = other {
                probes.push(Case {
                    name: "a command the run did not run is denied".to_string(),
                    tool: SHELL_TOOL.to_string(),
                    input: json!({ "command": command }),
                });
            }
        }
        if let Some(tool) = req.unused_tools.first() {
            let input = if tool == SHELL_TOOL {
                json!({ "command": "true" })
            } else {
                json!({})
            };
            probes.push(Case {
                name: format!("{tool}, which the run did not call, is denied"),
                tool: tool.clone(),
                input,
            });
        }
        probes
    }

    pub(super) fn summaries(&self) -> Vec<ToolSummary> {
        self.tools
            .iter()
            .map(|(tool, t)| ToolSummary {
                tool: tool.clone(),
                plugin: t.plugin.clone(),
                calls: t.calls,
                workspace: if t.wrote { "read-write" } else { "read-only" },
                paths: t.globs(),
                commands: t.commands.iter().map(|c| c.prefix.clone()).collect(),
                network: t.network.iter().cloned().collect(),
            })
            .collect()
    }
}

/// `scheme://authority` of `url` exactly as written, refusing what a
/// prefix match could be fooled by (user info, odd characters).
pub(super) fn origin_of(url: &str) -> Result<String, String> {
    let refuse = || format!("`{}` is not a plain http(s) URL", url.escape_debug());
    let (scheme, rest) = url.split_once("://").ok_or_else(refuse)?;
    if !matches!(scheme, "http" | "https") {
        return Err(refuse());
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let plain = |c: char| c.is_ascii_alphanumeric() || ".-:[]".contains(c);
    if authority.is_empty() || !authority.chars().all(plain) {
        return Err(refuse());
    }
    Ok(format!("{scheme}://{authority}"))
}

/// A path beside `written` in a directory no glob of `globs` reaches: the
/// sibling of its directory, or of a parent when a subtree glob covers it.
fn sibling(written: &str, globs: &[String]) -> Option<String> {
    let set = glob_set(globs)?;
    let name = written.rsplit('/').next()?;
    let mut dirs: Vec<&str> = written.split('/').collect();
    dirs.pop();
    while let Some(last) = dirs.pop() {
        let mut probe = dirs.clone();
        let renamed = format!("{last}-{PROBE}");
        probe.push(&renamed);
        probe.push(name);
        let probe = probe.join("/");
        if !set.is_match(&probe) {
            return Some(probe);
        }
    }
    let probe = format!("{PROBE}/{name}");
    (!set.is_match(&probe)).then_some(probe)
}

fn glob_set(globs: &[String]) -> Option<GlobSet> {
    let mut b = GlobSetBuilder::new();
    for g in globs {
        b.add(GlobBuilder::new(g).literal_separator(true).build().ok()?);
    }
    b.build().ok()
}
