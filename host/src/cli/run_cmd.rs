//! `warden run`: the agent, from the command line.

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{Exit, RunArgs, fail};
use crate::agent::{
    Agent, AgentConfig, AgentEvent, EventSink, Interrupt, SessionStore, StopReason,
};
use crate::audit::AuditLog;
use crate::home::Home;
use crate::plugin::Catalog;
use crate::policy::Verdict;
use crate::provider::http::HttpProvider;
use crate::provider::{
    ApiKey, Provider, ProviderConfig, Recorder, ReplayProvider, RetryPolicy, WireFormat,
};

/// Which model service `--provider` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProviderName {
    /// OpenAI Chat Completions (or any compatible server, with --base-url).
    Openai,
    /// The OpenAI Responses API.
    OpenaiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// A local Ollama server (Chat Completions, no key).
    Ollama,
}

impl ProviderName {
    fn format(self) -> WireFormat {
        match self {
            ProviderName::Openai | ProviderName::Ollama => WireFormat::OpenAiChat,
            ProviderName::OpenaiResponses => WireFormat::OpenAiResponses,
            ProviderName::Anthropic => WireFormat::Anthropic,
        }
    }

    fn default_base_url(self) -> &'static str {
        match self {
            ProviderName::Openai | ProviderName::OpenaiResponses => "https://api.openai.com/v1",
            ProviderName::Anthropic => "https://api.anthropic.com",
            ProviderName::Ollama => "http://localhost:11434/v1",
        }
    }

    fn default_model(self) -> &'static str {
        match self {
            ProviderName::Openai | ProviderName::OpenaiResponses => "gpt-4.1-mini",
            ProviderName::Anthropic => "claude-sonnet-4-5",
            ProviderName::Ollama => "qwen2.5-coder",
        }
    }

    /// The environment variable holding the key, if the service needs one.
    fn key_variable(self) -> Option<&'static str> {
        match self {
            ProviderName::Openai | ProviderName::OpenaiResponses => Some("OPENAI_API_KEY"),
            ProviderName::Anthropic => Some("ANTHROPIC_API_KEY"),
            ProviderName::Ollama => None,
        }
    }
}

pub fn run(args: RunArgs) -> Exit {
    let json = args.json;
    match prepare(args) {
        Ok(prepared) => execute(prepared),
        Err((code, msg)) => fail(json, code, &msg),
    }
}

struct Prepared {
    agent: Agent,
    store: SessionStore,
    resume: Option<String>,
    task: String,
    args: RunArgs,
}

fn prepare(args: RunArgs) -> Result<Prepared, (Exit, String)> {
    let usage = |m: String| (Exit::Usage, m);
    let failure = |m: String| (Exit::Failure, m);
    let home = Home::from_env().map_err(|e| failure(e.to_string()))?;
    let store = SessionStore::new(&home);

    let resume = match (&args.resume, args.last) {
        (Some(id), _) => Some(id.clone()),
        (None, true) => Some(store.last().map_err(|e| usage(e.to_string()))?),
        (None, false) => None,
    };
    let previous = match &resume {
        Some(id) => Some(store.load(id).map_err(|e| usage(e.to_string()))?),
        None => None,
    };
    let task = match (&args.task, &previous) {
        (Some(t), _) => t.clone(),
        (None, Some(_)) => "Continue with the task.".to_string(),
        (None, None) => {
            return Err(usage(
                "give a task, e.g. `warden run \"fix the failing test\"`, or --resume/--last"
                    .into(),
            ));
        }
    };

    let workspace = match (&args.workspace, &previous) {
        (Some(w), _) => w.clone(),
        (None, Some(p)) => PathBuf::from(&p.meta.workspace),
        (None, None) => std::env::current_dir()
            .map_err(|e| usage(format!("cannot read the current directory: {e}")))?,
    };
    let workspace = std::fs::canonicalize(&workspace)
        .ok()
        .filter(|w| w.is_dir())
        .ok_or_else(|| {
            usage(format!(
                "workspace {} is not a directory",
                workspace.display()
            ))
        })?;

    // The named policy, else the resumed session's, else the user's
    // default, else the built-in default; never a file in the workspace.
    let named = args
        .policy
        .clone()
        .or_else(|| previous.as_ref().map(|p| p.meta.policy.clone()));
    let policy = super::policy_cmd::effective(named.as_deref()).map_err(usage)?;

    let model = args
        .model
        .clone()
        .or_else(|| previous.as_ref().map(|p| p.meta.model.clone()))
        .unwrap_or_else(|| match args.replay {
            Some(_) => "recorded".to_string(),
            None => args.provider.default_model().to_string(),
        });
    let provider = match &args.replay {
        Some(path) => {
            Provider::Replay(ReplayProvider::open(path).map_err(|e| usage(e.to_string()))?)
        }
        None => Provider::Http(http_provider(&args, &model).map_err(usage)?),
    };
    let recorder = match &args.record {
        Some(path) => Some(Recorder::create(path, &provider.describe()).map_err(|e| {
            usage(format!(
                "cannot write the recording {}: {e}",
                path.display()
            ))
        })?),
        None => None,
    };

    let catalog = Catalog::open(&home).map_err(|e| failure(e.to_string()))?;
    let audit =
        AuditLog::open(&crate::audit::log_path(&home)).map_err(|e| failure(e.to_string()))?;
    let mut config = AgentConfig::new(workspace, model);
    config.max_turns = args.max_turns;
    config.time_budget = args.max_time.map(Duration::from_secs);
    config.token_budget = args.max_tokens;
    config.parallel = args.parallel as usize;

    let renderer = Arc::new(Mutex::new(Renderer::new(Output::of(&args))));
    let events: EventSink = Arc::new(move |ev| {
        if let Ok(mut r) = renderer.lock() {
            r.show(&ev);
        }
    });
    let agent = Agent {
        catalog: Arc::new(catalog),
        policy: Arc::new(policy),
        provider,
        recorder,
        config,
        events,
        interrupt: Interrupt::default(),
        audit: Some(Arc::new(audit)),
        approvals: Arc::new(super::tool_cmd::approvals(args.non_interactive)),
    };
    Ok(Prepared {
        agent,
        store,
        resume,
        task,
        args,
    })
}

fn http_provider(args: &RunArgs, model: &str) -> Result<HttpProvider, String> {
    let api_key = match args.provider.key_variable() {
        Some(var) => match std::env::var(var) {
            Ok(k) if !k.trim().is_empty() => Some(ApiKey::new(k.trim())),
            Ok(_) | Err(_) if args.base_url.is_some() => None,
            Ok(_) | Err(_) => {
                return Err(format!(
                    "set {var} to use {:?}, or run a recording with --replay FILE",
                    args.provider
                ));
            }
        },
        None => None,
    };
    HttpProvider::new(ProviderConfig {
        format: args.provider.format(),
        base_url: args
            .base_url
            .clone()
            .unwrap_or_else(|| args.provider.default_base_url().to_string()),
        model: model.to_string(),
        api_key,
        retry: RetryPolicy::default(),
        idle_timeout: Duration::from_secs(120),
    })
    .map_err(|e| e.to_string())
}

fn execute(p: Prepared) -> Exit {
    let json = p.args.json;
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            return fail(
                json,
                Exit::Failure,
                &format!("cannot start the runtime: {e}"),
            );
        }
    };
    runtime.block_on(async move {
        let Prepared {
            agent,
            store,
            resume,
            task,
            args,
        } = p;
        let opened = match &resume {
            Some(id) => store
                .resume(id)
                .map(|(loaded, w)| (w, loaded.messages, loaded.turns, true)),
            None => store
                .create(
                    &task,
                    &agent.config.workspace.display().to_string(),
                    &agent.policy.name,
                    &agent.provider.describe(),
                    &agent.config.model,
                )
                .map(|w| (w, Vec::new(), 0, false)),
        };
        let (mut session, messages, turns, resumed) = match opened {
            Ok(o) => o,
            Err(e) => return fail(json, Exit::Failure, &e.to_string()),
        };
        (agent.events)(AgentEvent::SessionStarted {
            session_id: session.id().to_string(),
            resumed,
            provider: agent.provider.describe(),
            model: agent.config.model.clone(),
            policy: agent.policy.name.clone(),
            workspace: agent.config.workspace.display().to_string(),
        });
        let interrupt = agent.interrupt.clone();
        let quiet = args.print || json;
        tokio::spawn(async move {
            while tokio::signal::ctrl_c().await.is_ok() {
                if interrupt.interrupt() > 1 {
                    std::process::exit(130);
                }
                if !quiet {
                    eprintln!("\nwarden: interrupting; press Ctrl-C again to exit at once");
                }
            }
        });
        let summary = agent.run(&mut session, messages, &task, turns).await;
        if let Some(Err(e)) = agent.audit.as_ref().map(|log| log.flush()) {
            eprintln!("warden: warning: the audit log may be incomplete: {e}");
        }
        match summary.reason {
            StopReason::Done => Exit::Success,
            StopReason::Cancelled => Exit::Cancelled,
            StopReason::ProviderFailed { .. } | StopReason::SessionFailed { .. } => Exit::Failure,
            StopReason::MaxTurns { .. }
            | StopReason::TimeBudget { .. }
            | StopReason::TokenBudget { .. }
            | StopReason::LoopDetected { .. }
            | StopReason::RepeatedErrors { .. } => Exit::Stopped,
        }
    })
}

/// How events are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Output {
    /// Streaming text on stdout, tool lines and status on stderr.
    Human,
    /// One JSON event per line on stdout.
    Json,
    /// Only the final answer, on stdout.
    Print,
}

impl Output {
    fn of(args: &RunArgs) -> Output {
        if args.json {
            Output::Json
        } else if args.print {
            Output::Print
        } else {
            Output::Human
        }
    }
}

struct Renderer {
    output: Output,
    /// Assistant text was printed without a final newline.
    mid_line: bool,
    /// Decisions waiting for their call's result line.
    decisions: std::collections::HashMap<String, String>,
}

impl Renderer {
    fn new(output: Output) -> Renderer {
        Renderer {
            output,
            mid_line: false,
            decisions: Default::default(),
        }
    }

    fn show(&mut self, ev: &AgentEvent) {
        match self.output {
            Output::Json => {
                if let Ok(line) = serde_json::to_string(ev) {
                    let mut out = std::io::stdout().lock();
                    let _ = writeln!(out, "{line}");
                    let _ = out.flush();
                }
            }
            Output::Print => {
                if let AgentEvent::Finished { answer, reason, .. } = ev {
                    match answer {
                        Some(a) => println!("{a}"),
                        None => eprintln!("warden: {reason}"),
                    }
                }
            }
            Output::Human => self.human(ev),
        }
    }

    fn end_line(&mut self) {
        if self.mid_line {
            println!();
            self.mid_line = false;
        }
    }

    fn human(&mut self, ev: &AgentEvent) {
        match ev {
            AgentEvent::SessionStarted {
                session_id,
                resumed,
                provider,
                model,
                policy,
                workspace,
            } => {
                let verb = if *resumed { "resuming" } else { "session" };
                eprintln!(
                    "warden: {verb} {session_id} · {provider} · model {model} · policy {policy} · {workspace}"
                );
            }
            AgentEvent::TurnStarted { .. } | AgentEvent::TurnCompleted { .. } => {}
            AgentEvent::TextDelta { text } => {
                print!("{text}");
                let _ = std::io::stdout().flush();
                self.mid_line = !text.ends_with('\n');
            }
            AgentEvent::Retrying {
                attempt,
                delay_ms,
                reason,
            } => {
                self.end_line();
                eprintln!("warden: retry {attempt} in {delay_ms} ms: {reason}");
            }
            AgentEvent::ToolCall {
                tool,
                arguments,
                rationale,
                ..
            } => {
                self.end_line();
                let mut args = arguments.to_string();
                if args.len() > 160 {
                    let cut = (0..=157)
                        .rev()
                        .find(|i| args.is_char_boundary(*i))
                        .unwrap_or(0);
                    args.truncate(cut);
                    args.push('…');
                }
                eprintln!("→ {tool} {args}");
                if let Some(r) = rationale {
                    eprintln!("  why: {r}");
                }
            }
            AgentEvent::ToolDecision {
                call_id,
                verdict,
                by,
                approval,
                ..
            } => {
                let word = match (verdict, approval.as_deref()) {
                    (Verdict::Allow, _) => "allowed",
                    (Verdict::Ask, Some("user_once" | "user_session" | "session_grant")) => {
                        "approved"
                    }
                    (Verdict::Ask, _) => "not approved",
                    (Verdict::Deny, _) => "denied",
                };
                self.decisions
                    .insert(call_id.clone(), format!("{word} by {by}"));
            }
            AgentEvent::ToolProgress {
                message, fraction, ..
            } => match fraction {
                Some(f) => eprintln!("  … {message} ({:.0}%)", f * 100.0),
                None => eprintln!("  … {message}"),
            },
            AgentEvent::ToolResult {
                call_id,
                tool,
                outcome,
                summary,
                duration_ms,
            } => {
                let summary = summary.trim();
                let mark = match outcome.as_str() {
                    "success" => "✓",
                    "denied" => "⊘",
                    "cancelled" => "⨯",
                    _ => "✗",
                };
                let decision = self
                    .decisions
                    .remove(call_id)
                    .map(|d| format!(" [{d}]"))
                    .unwrap_or_default();
                eprintln!("{mark} {tool}{decision} {summary} ({duration_ms} ms)");
            }
            AgentEvent::Warning { message } => {
                self.end_line();
                eprintln!("warden: warning: {message}");
            }
            AgentEvent::Compacted {
                tokens_before,
                tokens_after,
                ..
            } => {
                self.end_line();
                eprintln!("warden: context compacted, ~{tokens_before} → ~{tokens_after} tokens");
            }
            AgentEvent::Finished {
                reason,
                turns,
                usage,
                ..
            } => {
                self.end_line();
                eprintln!(
                    "warden: {reason} · {turns} turns · {} tokens in, {} out",
                    usage.input_tokens, usage.output_tokens
                );
            }
        }
    }
}
