//! `warden run`: the agent, from the command line.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::render::{Output, Renderer};
use super::run_review::RunOverlay;
use super::{Exit, RunArgs, fail};
use crate::agent::{
    Agent, AgentConfig, AgentEvent, ContextLimits, EventSink, INSTRUCTIONS_CAP, Interrupt,
    ProjectInstructions, ReviewCap, SessionStore, StopReason, with_restored_plan,
};
use crate::audit::{AuditEvent, AuditLog};
use crate::base::{Verbosity, terminal_line};
use crate::config::{self, Config};
use crate::home::Home;
use crate::plugin::Catalog;
use crate::protocol::PlanStep;
use crate::provider::http::HttpProvider;
use crate::provider::{Provider, ProviderConfig, Recorder, ReplayProvider, RetryPolicy};
use crate::runtime::InteractionParty;

pub fn run(args: RunArgs, verbosity: Verbosity) -> Exit {
    let json = args.json;
    match prepare(args, verbosity) {
        Ok(prepared) => execute(prepared),
        Err((code, msg)) => fail(json, code, &msg),
    }
}

struct Prepared {
    agent: Agent,
    store: SessionStore,
    resume: Option<String>,
    task: String,
    /// The plan the resumed session restores (empty: none).
    plan: Vec<PlanStep>,
    args: RunArgs,
    /// With `--review`: the overlay every write goes to, mounted.
    overlay: Option<RunOverlay>,
}

fn prepare(args: RunArgs, verbosity: Verbosity) -> Result<Prepared, (Exit, String)> {
    let usage = |m: String| (Exit::Usage, m);
    let failure = |m: String| (Exit::Failure, m);
    let home = Home::from_env().map_err(|e| failure(e.to_string()))?;
    config::register_key_variables();
    let settings = Config::load(&home).map_err(|e| usage(e.to_string()))?;
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
    let plan = previous
        .as_ref()
        .map(|p| p.plan.clone())
        .unwrap_or_default();
    let task = with_restored_plan(&task, &plan);

    let workspace = match (&args.workspace, &previous) {
        (Some(w), _) => w.clone(),
        (None, Some(p)) => PathBuf::from(&p.meta.workspace),
        (None, None) => std::env::current_dir()
            .map_err(|e| usage(format!("cannot read the current directory: {e}")))?,
    };
    let workspace = super::workspace_trust::canonical_workspace(&workspace).map_err(usage)?;
    super::workspace_trust::check(&workspace, &home, args.trust_workspace).map_err(usage)?;

    // The named policy, else the resumed session's, else the user's
    // default, else the built-in default; never a file in the workspace.
    let named = args
        .policy
        .clone()
        .or_else(|| previous.as_ref().map(|p| p.meta.policy.clone()));
    let policy = super::policy_cmd::effective(named.as_deref()).map_err(usage)?;

    let session_model = previous.as_ref().map(|p| p.meta.model.clone());
    let (provider, model) = match &args.replay {
        Some(path) => {
            let replay = ReplayProvider::open(path).map_err(|e| usage(e.to_string()))?;
            let model = args
                .model
                .clone()
                .or(session_model)
                .unwrap_or_else(|| "recorded".to_string());
            (Provider::Replay(replay), model)
        }
        None => {
            let flags = config::Overrides {
                provider: args.provider,
                model: args.model.as_deref(),
                base_url: args.base_url.as_deref(),
                session_model: session_model.as_deref(),
                idle_timeout: args.idle_timeout.map(Duration::from_secs),
            };
            let env = |name: &str| std::env::var(name).ok();
            let chosen =
                config::choose(&flags, &env, &settings).map_err(|e| usage(e.to_string()))?;
            let model = chosen.model.clone();
            (Provider::Http(http_provider(chosen).map_err(usage)?), model)
        }
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

    // Read before the process confines itself: the files of the parents
    // up to the repository root are outside the workspace.
    let instructions = match args.no_project_instructions {
        true => ProjectInstructions::off(),
        false => ProjectInstructions::load(&workspace, INSTRUCTIONS_CAP),
    };
    if verbosity.shows_warnings() {
        for (path, why) in instructions.skipped() {
            errln!(
                "warden: warning: project instructions {} not read: {why}",
                terminal_line(&path.display().to_string())
            );
        }
    }

    // Before any thread starts, and before anything opens the workspace to
    // write (only reads came before: the instructions above): with
    // `--review` the workspace is overlaid for this process and every
    // command it starts. Then the process confines itself (Landlock
    // forbids changing mounts after).
    let warn = |m: String| {
        if verbosity.shows_warnings() {
            errln!("warden: warning: {}", terminal_line(&m));
        }
    };
    let overlay = super::run_review::set_up(
        &args,
        &home,
        &workspace,
        &policy,
        previous.as_ref().map(|p| &p.meta),
        &warn,
    )
    .map_err(failure)?;
    // Before any thread starts: the process confines itself.
    if let Some(warning) = super::self_confine::confine_self(&home, &workspace, &policy, Vec::new())
        && verbosity.shows_warnings()
    {
        errln!("warden: warning: {warning}");
    }
    let observer = super::progress::compile_observer(args.json, "first use");
    let catalog = Catalog::open_observed(&home, crate::runtime::Instances::Pooled, observer)
        .map_err(|e| failure(e.to_string()))?;
    super::report_problems(&catalog);
    if policy.host_reach().workspace_writes && !args.json {
        super::workspace_trust::announce_first_write(&home, &workspace, verbosity);
    }
    let audit =
        AuditLog::open(&crate::audit::log_path(&home)).map_err(|e| failure(e.to_string()))?;
    if let Some(o) = &overlay {
        let meta = o.overlay.meta();
        audit
            .append(AuditEvent::OverlayCreated {
                overlay: meta.id.clone(),
                workspace: meta.workspace.display().to_string(),
                policy: meta.policy.clone(),
            })
            .map_err(|e| failure(e.to_string()))?;
    }
    let mut config = AgentConfig::new(workspace, model);
    config.system_prompt = instructions.system_prompt(&config.system_prompt);
    config.instructions = instructions;
    config.max_turns = args.max_turns;
    config.time_budget = args.max_time.map(Duration::from_secs);
    config.token_budget = args.max_tokens;
    config.parallel = args.parallel as usize;
    config.context = context_limits(args.compact_above, &settings);
    config.review = overlay.as_ref().map(|o| ReviewCap {
        upper: o.overlay.upper(),
        limit: args.review_max_bytes.unwrap_or(crate::overlay::RUN_CAP),
    });

    let renderer = Arc::new(Mutex::new(Renderer::new(Output::of(&args), verbosity)));
    let interrupt = Interrupt::default();
    let on_closed = interrupt.clone();
    let events: EventSink = Arc::new(move |ev| {
        if let Ok(mut r) = renderer.lock() {
            r.show(&ev);
        }
        // `warden run … | head`: the reader left, so the run ends, saved.
        if super::stdio::stdout_closed() {
            on_closed.output_closed();
        }
    });
    let interaction = InteractionParty {
        user: super::ask_prompt::asker(args.non_interactive),
        home: Some(home.clone()),
    };
    let agent = Agent {
        catalog: Arc::new(catalog),
        policy: Arc::new(policy),
        provider,
        recorder,
        config,
        events,
        interrupt,
        audit: Some(Arc::new(audit)),
        approvals: Arc::new(super::tool_cmd::approvals(args.non_interactive)),
        interaction: Some(interaction),
    };
    Ok(Prepared {
        agent,
        store,
        resume,
        task,
        plan,
        args,
        overlay,
    })
}

fn http_provider(chosen: config::Chosen) -> Result<HttpProvider, String> {
    HttpProvider::new(ProviderConfig {
        format: chosen.provider.format(),
        base_url: chosen.base_url,
        model: chosen.model,
        api_key: chosen.api_key,
        retry: RetryPolicy::default(),
        idle_timeout: chosen.idle_timeout,
    })
    .map_err(|e| e.to_string())
}

/// The compaction threshold from `--compact-above`, else the config file,
/// else the default; the kept tail from the config file, else a fifth of
/// the threshold (at most the default).
fn context_limits(flag: Option<u64>, settings: &Config) -> ContextLimits {
    let defaults = ContextLimits::default();
    let compact_above = flag
        .or(settings.context.compact_above)
        .unwrap_or(defaults.compact_above);
    ContextLimits {
        compact_above,
        keep_recent: settings
            .context
            .keep_recent
            .unwrap_or_else(|| (compact_above / 5).min(defaults.keep_recent)),
        ..defaults
    }
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
            plan,
            args,
            mut overlay,
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
        if let Some(Err(e)) = overlay
            .as_mut()
            .map(|o| super::run_review::attach(o, session.id()))
        {
            errln!("warden: warning: {e}");
        }
        (agent.events)(AgentEvent::SessionStarted {
            session_id: session.id().to_string(),
            resumed,
            provider: agent.provider.describe(),
            model: agent.config.model.clone(),
            policy: agent.policy.name.clone(),
            workspace: agent.config.workspace.display().to_string(),
            instructions: (agent.config.instructions.files().iter())
                .map(|f| agent.config.instructions.shown(&f.path))
                .collect(),
            overlay: overlay.as_ref().map(|o| o.overlay.id().to_string()),
        });
        if !plan.is_empty() {
            (agent.events)(AgentEvent::PlanUpdated {
                call_id: None,
                steps: plan,
            });
        }
        let interrupt = agent.interrupt.clone();
        let events = agent.events.clone();
        // The partial turn a second Ctrl-C leaves is dropped when the
        // session is loaded.
        super::ctrl_c::watch(move || {
            interrupt.interrupt();
            events(AgentEvent::Interrupted);
        });
        let summary = agent.run(&mut session, messages, &task, turns).await;
        if let Some(o) = overlay.as_mut() {
            if let Err(e) = super::run_review::finish(o) {
                errln!("warden: warning: {e}");
            }
            if !args.json {
                errln!("{}", super::run_review::summary(o));
            }
        }
        if let Some(Err(e)) = agent.audit.as_ref().map(|log| log.flush()) {
            errln!("warden: warning: the audit log may be incomplete: {e}");
        }
        match summary.reason {
            StopReason::Done => Exit::Success,
            StopReason::Cancelled => Exit::Cancelled,
            StopReason::OutputClosed => Exit::Stopped,
            StopReason::ProviderFailed { .. } | StopReason::SessionFailed { .. } => Exit::Failure,
            StopReason::MaxTurns { .. }
            | StopReason::ContextOverflow { .. }
            | StopReason::TimeBudget { .. }
            | StopReason::TokenBudget { .. }
            | StopReason::ReviewCap { .. }
            | StopReason::LoopDetected { .. }
            | StopReason::RepeatedErrors { .. } => Exit::Stopped,
        }
    })
}
