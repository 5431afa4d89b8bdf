//! The `warden` command line.
//!
//! Exit codes are part of the interface, see [`Exit`].

#[macro_use]
mod stdio;

mod ask_prompt;
mod audit_caps;
mod audit_cmd;
mod call_progress;
mod colour;
mod ctrl_c;
mod limit_args;
mod mcp_cmd;
mod memory_cmd;
mod plugin_cmd;
mod plugin_dev;
mod plugin_fetch_cmd;
mod plugin_list;
mod plugin_view;
mod policy_cmd;
mod policy_explain;
mod policy_suggest;
mod progress;
mod redact_events;
mod render;
mod review_cmd;
mod review_show;
mod run_cmd;
mod run_review;
mod self_confine;
mod sessions_cmd;
mod shell_help;
mod since;
mod tool_cmd;
mod tool_list;
mod workspace_trust;

pub use crate::provider::ProviderName;
pub use colour::ColorWhen;
pub use limit_args::LimitArgs;
pub use mcp_cmd::McpArgs;
pub use memory_cmd::MemoryCommand;
pub use plugin_cmd::{InstallArgs, PluginCommand};
pub use review_cmd::{ReviewArgs, ReviewCommand};

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::base::Verbosity;

/// Warden: run AI agent tools as sandboxed WebAssembly components.
#[derive(Debug, Parser)]
#[command(name = "warden", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Print only results and errors.
    #[arg(long, short = 'q', global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Also print notes (how a grant was narrowed, network use) and every
    /// plugin log line.
    #[arg(long, short = 'v', global = true)]
    pub verbose: bool,
    /// When to colour: auto (a terminal, unless NO_COLOR is set or TERM=dumb), always, never.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorWhen::Auto,
          global = true, hide_possible_values = true, hide_default_value = true)]
    pub color: ColorWhen,
}

impl Cli {
    /// How much the command prints besides results and errors.
    pub fn verbosity(&self) -> Verbosity {
        match (self.quiet, self.verbose) {
            (true, _) => Verbosity::Quiet,
            (false, true) => Verbosity::Verbose,
            (false, false) => Verbosity::Normal,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the agent on a task.
    Run(RunArgs),
    /// List and show saved agent sessions.
    #[command(subcommand)]
    Sessions(SessionsCommand),
    /// Show, apply or discard the changes a `run --review` kept aside; list and clean overlays.
    Review(ReviewArgs),
    /// Show, edit or clear the agent's memory notes for a workspace.
    #[command(subcommand)]
    Memory(MemoryCommand),
    /// Show, verify and summarize the audit log.
    #[command(subcommand)]
    Audit(AuditCommand),
    /// List and call tools.
    #[command(subcommand)]
    Tool(ToolCommand),
    /// Make, build, install, update, push, list, inspect and remove plugins.
    #[command(subcommand)]
    Plugin(PluginCommand),
    /// List, check, explain and suggest policies.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Serve the tools to MCP clients (Claude Code, Codex, Cursor, VS Code), over stdio or HTTP.
    Mcp(McpArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell to complete in.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page, or write one per command with --out-dir.
    Man {
        /// Write a page per command (warden.1, warden-tool-call.1, …) into DIR instead.
        #[arg(long, value_name = "DIR")]
        out_dir: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Shipped and user policies (`<data dir>/policies/*.toml`) with one-line descriptions.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Parse and validate a policy file, then run its inline tests.
    Check {
        /// The policy file.
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Which rule decides a call and why, and the grant the call would run with.
    Explain {
        /// A policy name (see `warden policy list`) or a policy file
        /// [default: the user policy `default`, else workspace-write].
        #[arg(long)]
        policy: Option<String>,
        /// The tool's name.
        tool: String,
        /// The call's input as JSON.
        #[arg(long, short = 'i', default_value = "{}")]
        input: String,
        #[arg(long)]
        json: bool,
    },
    /// Write the narrowest policy that would have allowed exactly what a run did.
    Suggest {
        /// The session to learn from (see `warden sessions list`).
        #[arg(long, value_name = "SESSION", group = "source")]
        from: Option<String>,
        /// Learn from the latest session.
        #[arg(long, group = "source")]
        last: bool,
        /// Learn from every call in the audit log since --since.
        #[arg(long, group = "source", requires = "since")]
        audit: bool,
        /// With --audit: a duration back from now (2h, 30min) or a time (RFC 3339).
        #[arg(long, value_name = "WHEN", requires = "audit")]
        since: Option<String>,
        /// Write the policy here instead of to stdout; an existing file needs --force.
        #[arg(long, short = 'o', value_name = "FILE")]
        output: Option<PathBuf>,
        /// Replace an existing --output file.
        #[arg(long)]
        force: bool,
        /// The policy's name [default: suggested-SESSION].
        #[arg(long)]
        name: Option<String>,
        /// The policy and a summary of what it allows, as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// What to do, in plain words.
    pub task: Option<String>,
    /// The policy every call passes through: a name (see `warden policy list`) or a file
    /// [default: workspace-write; a resumed session keeps its own].
    #[arg(long, value_name = "NAME|PATH")]
    pub policy: Option<String>,
    /// The directory the agent works in (default: the current directory).
    #[arg(long, short = 'w')]
    pub workspace: Option<PathBuf>,
    /// Accept /, your home directory or the data directory as the workspace.
    #[arg(long)]
    pub trust_workspace: bool,
    /// Which model service to use [default: $WARDEN_PROVIDER, else `provider` in
    /// config.toml, else openai]. Keys come from OPENAI_API_KEY / ANTHROPIC_API_KEY,
    /// else from config.toml in the data directory.
    #[arg(long, value_enum)]
    pub provider: Option<ProviderName>,
    /// The model [default: $WARDEN_MODEL, else the resumed session's, else config.toml's,
    /// else one per provider].
    #[arg(long)]
    pub model: Option<String>,
    /// The service's base URL, e.g. http://localhost:8080/v1 for llama.cpp's server
    /// [default: $WARDEN_BASE_URL, else config.toml's, else the service's].
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Most model turns in this run.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_turns: u32,
    /// Stop after this many seconds, whatever the run is waiting for (the model's
    /// stream, a retry, a tool call).
    #[arg(long, value_name = "SECS")]
    pub max_time: Option<u64>,
    /// Retry a model request that sends nothing for this many seconds: no response,
    /// or no event of its stream [default: `idle_timeout_secs` in config.toml, else 90].
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub idle_timeout: Option<u64>,
    /// Stop once this many tokens (input plus output, all turns) are used.
    #[arg(long, value_name = "TOKENS")]
    pub max_tokens: Option<u64>,
    /// Summarize older turns once a request's estimate passes this many tokens
    /// [default: `compact_above` in config.toml, else 100000].
    #[arg(long, value_name = "TOKENS", value_parser = clap::value_parser!(u64).range(1..))]
    pub compact_above: Option<u64>,
    /// Read-only tool calls that may run at once.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub parallel: u64,
    /// One JSON event per line on stdout (see the README for the schema).
    #[arg(long, conflicts_with = "print")]
    pub json: bool,
    /// Print only the final answer.
    #[arg(long, short = 'p')]
    pub print: bool,
    /// Save the model's responses to FILE, to replay the session later.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Play recorded model responses back instead of calling a provider.
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
    /// Continue session ID (see `warden sessions list`).
    #[arg(long, value_name = "ID", conflicts_with = "last")]
    pub resume: Option<String>,
    /// Continue the most recent session.
    #[arg(long)]
    pub last: bool,
    /// Never prompt: calls the policy asks about are denied.
    #[arg(long, alias = "no-prompt")]
    pub non_interactive: bool,
    /// Do not give the model the project's AGENTS.md files.
    #[arg(long)]
    pub no_project_instructions: bool,
    /// Send every write of the run (tools and commands) to a copy-on-write overlay in
    /// the data directory; the workspace is untouched until `warden review apply`
    /// [default: on under `strict` where the machine supports it, and when resuming
    /// a session whose overlay is still there].
    #[arg(long, conflicts_with = "no_review")]
    pub review: bool,
    /// Write straight into the workspace, also under `strict`.
    #[arg(long)]
    pub no_review: bool,
    /// With --review: stop the run once its overlay holds more than this many bytes
    /// [default: 1073741824].
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    pub review_max_bytes: Option<u64>,
}

#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Records of the log, oldest first, optionally filtered.
    Show {
        /// Only calls of this agent session.
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// Only calls of this tool.
        #[arg(long, value_name = "TOOL")]
        tool: Option<String>,
        /// Only records at or after this time: RFC 3339 (2026-11-22T10:00:00+02:00;
        /// no zone means UTC) or a date (2026-11-22, from midnight UTC).
        #[arg(long, value_name = "TIME", value_parser = since::parse)]
        since: Option<std::time::SystemTime>,
        /// One record per line, as stored.
        #[arg(long)]
        json: bool,
    },
    /// Check the hash chain; names the first broken record (exit 1 if any).
    Verify {
        #[arg(long)]
        json: bool,
    },
    /// Per tool: declared vs import-derived vs granted vs actually used,
    /// grants never used, and the least-privilege grants that would do.
    Caps {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// Saved sessions, newest first: id, start, turns, how it ended, task.
    List {
        /// Show at most this many (the newest).
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
        #[arg(long)]
        json: bool,
    },
    /// A session's conversation and tool calls.
    Show {
        id: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ToolCommand {
    /// Every tool, its plugin, whether it is read-only, its declared
    /// capabilities and what it does, in a table that fits the terminal.
    List {
        /// One JSON document instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// One tool: its whole description, its input schema, and the decision
    /// and grant a call gets under the policy.
    Show {
        /// The tool's name (see `warden tool list`).
        name: String,
        /// The policy to explain the call under: a name or a file
        /// [default: the user policy `default`, else workspace-write].
        #[arg(long, value_name = "NAME|PATH")]
        policy: Option<String>,
        /// The tool as `tool list --json` shows it.
        #[arg(long)]
        json: bool,
    },
    /// Run one tool in the sandbox and print its result.
    Call(CallArgs),
}

#[derive(Debug, Args)]
pub struct CallArgs {
    /// The tool's name (see `warden tool list`).
    pub name: String,
    /// The input object: JSON text, `@FILE` to read it from a file, or `-` for stdin.
    #[arg(long, short = 'i', default_value = "{}")]
    pub input: String,
    /// Call the tool once per line of FILE (`-` for stdin), each line one
    /// input object, in order and in one approval session.
    #[arg(long, value_name = "FILE", conflicts_with = "input")]
    pub input_lines: Option<String>,
    /// The directory the tool may see (default: the current directory).
    #[arg(long, short = 'w')]
    pub workspace: Option<PathBuf>,
    /// Accept /, your home directory or the data directory as the workspace.
    #[arg(long)]
    pub trust_workspace: bool,
    /// The policy deciding the call and its grant: a name (see `warden policy
    /// list`) or a file [default: the user policy `default`, else workspace-write].
    #[arg(long, value_name = "NAME|PATH")]
    pub policy: Option<String>,
    /// Never prompt: a call the policy asks about is denied.
    #[arg(long, visible_alias = "no-prompt")]
    pub non_interactive: bool,
    /// Retired: the policy decides what may be written.
    #[arg(long, hide = true)]
    pub allow_write: bool,
    /// One JSON object with the outcome, grant, logs and timings.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub limit: LimitArgs,
    /// Run the tool from this component file, not installed (for
    /// development; same checks, policy, sandbox and audit)
    #[arg(long, value_name = "FILE.wasm")]
    pub plugin: Option<PathBuf>,
}

/// Process exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// The command succeeded; for `tool call`, the tool returned a result.
    Success = 0,
    /// The tool ran and failed (including timeouts, memory and crashes).
    ToolError = 1,
    /// Bad usage or input: bad flags, unknown tool, invalid JSON, schema violation.
    Usage = 2,
    /// The call was denied; for `plugin install` and `plugin approve`, the
    /// plugin was refused (an import/declaration mismatch under `--strict`,
    /// or more capabilities than before, not confirmed); for `review apply`,
    /// a path changed in the workspace since the run started.
    Denied = 3,
    /// The call was cancelled.
    Cancelled = 4,
    /// Warden itself failed: data directory, plugin loading, installation; for
    /// `run`, the model could not be reached.
    Failure = 5,
    /// `run` stopped before the task was done: max turns, a budget, a loop,
    /// repeated tool errors, or no reader left for its output.
    Stopped = 6,
}

impl Exit {
    /// The `kind` of an error that ends the command with this code.
    pub fn kind(self) -> &'static str {
        match self {
            Exit::Success => "none",
            Exit::ToolError => "tool_error",
            Exit::Usage => "usage",
            Exit::Denied => "denied",
            Exit::Cancelled => "cancelled",
            Exit::Failure => "failure",
            Exit::Stopped => "stopped",
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e as u8)
    }
}

/// Run the parsed command line.
pub fn run(cli: Cli) -> Exit {
    let verbosity = cli.verbosity();
    colour::choose(cli.color);
    progress::allow(verbosity);
    match cli.command {
        Command::Tool(ToolCommand::List { json }) => tool_list::list(json),
        Command::Tool(ToolCommand::Show { name, policy, json }) => {
            tool_list::show(&name, policy.as_deref(), json)
        }
        Command::Tool(ToolCommand::Call(args)) => tool_cmd::call(args, verbosity),
        Command::Plugin(cmd) => plugin_cmd::run(cmd),
        Command::Policy(cmd) => policy_cmd::run(cmd),
        Command::Run(args) => run_cmd::run(args, verbosity),
        Command::Sessions(cmd) => sessions_cmd::run(cmd),
        Command::Audit(cmd) => audit_cmd::run(cmd),
        Command::Mcp(args) => mcp_cmd::run(args, verbosity),
        Command::Memory(cmd) => memory_cmd::run(cmd),
        Command::Review(args) => review_cmd::run(args),
        Command::Completions { shell } => shell_help::completions(shell),
        Command::Man { out_dir } => shell_help::man(out_dir.as_deref()),
    }
}

/// Print an error for a human (inert for a terminal: it may quote a
/// plugin or a model) or as JSON, every secret this process resolved
/// redacted, and return `code`.
fn fail(json: bool, code: Exit, message: &str) -> Exit {
    let message = crate::base::secrets::redact(message);
    if json {
        outln!("{}", error_json(code, &message));
    } else {
        errln!("warden: {}", crate::base::terminal_text(&message));
    }
    code
}

/// The one shape of an error in every `--json` output (an event of the
/// `run --json` stream too): `{"type": "error", "kind": …, "message": …}`.
fn error_json(code: Exit, message: &str) -> serde_json::Value {
    serde_json::json!({ "type": "error", "kind": code.kind(), "message": message })
}

/// Open the catalog, or explain why not. These commands make at most one
/// call, so instances are mapped on demand rather than pooled.
fn open_catalog(json: bool) -> Result<crate::plugin::Catalog, Exit> {
    open_catalog_with(json, crate::runtime::Instances::OnDemand)
}

/// [`open_catalog`], with instances allocated as `instances` says.
fn open_catalog_with(
    json: bool,
    instances: crate::runtime::Instances,
) -> Result<crate::plugin::Catalog, Exit> {
    let home =
        crate::home::Home::from_env().map_err(|e| fail(json, Exit::Failure, &e.to_string()))?;
    let observer = progress::compile_observer(json, "first use");
    let catalog = crate::plugin::Catalog::open_observed(&home, instances, observer)
        .map_err(|e| fail(json, Exit::Failure, &e.to_string()))?;
    report_problems(&catalog);
    Ok(catalog)
}

/// Say once each what could not be read in the data directory.
fn report_problems(catalog: &crate::plugin::Catalog) {
    for problem in catalog.problems() {
        let message = crate::base::terminal_line(&problem.to_string());
        errln!("warden: warning: {message}; only the plugins Warden could read are available");
    }
}

/// Append `event` to the audit log and wait until it is on disk; warn on
/// stderr if it cannot be.
fn audit_or_warn(event: crate::audit::AuditEvent) {
    let written = open_audit().and_then(|log| {
        log.append(event).map_err(|e| e.to_string())?;
        log.flush().map_err(|e| e.to_string())
    });
    if let Err(e) = written {
        errln!("warden: warning: this change was not audited: {e}");
    }
}

/// Open the audit log of the data directory.
fn open_audit() -> Result<crate::audit::AuditLog, String> {
    let home = crate::home::Home::from_env().map_err(|e| e.to_string())?;
    crate::audit::AuditLog::open(&crate::audit::log_path(&home)).map_err(|e| e.to_string())
}
