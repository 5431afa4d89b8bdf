//! The turn loop: ask the model, run what it calls, give it the results,
//! until a stop condition fires.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::approval::Approvals;
use crate::audit::AuditLog;
use crate::base::CancelToken;
use crate::plugin::Catalog;
use crate::policy::Policy;
use crate::protocol::{ErrorKind, ToolError, ToolOutcome};
use crate::provider::{
    Message, ModelRequest, ModelResponse, Provider, ProviderError, Recorder, StreamEvent, ToolCall,
    ToolDef, Usage,
};
use crate::runtime::InteractionParty;

use super::compact::Compacted;
use super::context;
use super::deadline::Deadline;
use super::review_cap::ReviewCap;
use super::scheduler::{self, FinishedCall, PreparedCall, Scheduler};
use super::session::{Record, SessionWriter};
use super::stop::{Alarm, Watchdog};
use super::{AgentConfig, AgentEvent, EventSink, StopReason, offered_tools};

/// The user's interrupt (Ctrl-C): stops the model stream, interrupts
/// running guests, and keeps any later call from starting.
#[derive(Clone)]
pub struct Interrupt {
    token: CancelToken,
    count: Arc<watch::Sender<u32>>,
    /// Set when no one reads the run's output any more.
    output_closed: Arc<AtomicBool>,
}

impl Default for Interrupt {
    fn default() -> Self {
        Interrupt {
            token: CancelToken::new(),
            count: Arc::new(watch::Sender::new(0)),
            output_closed: Arc::new(AtomicBool::new(false)),
        }
    }
}

impl Interrupt {
    /// Interrupt the run; returns how many interrupts there have been.
    pub fn interrupt(&self) -> u32 {
        self.token.cancel();
        let mut n = 0;
        self.count.send_modify(|c| {
            *c += 1;
            n = *c;
        });
        n
    }

    /// Stop the run because its output has no reader (a closed pipe); it
    /// ends as an interrupt does, with [`StopReason::OutputClosed`].
    pub fn output_closed(&self) {
        if !self.output_closed.swap(true, Ordering::Relaxed) {
            self.interrupt();
        }
    }

    /// The stop reason of an interrupted run.
    pub(super) fn stop_reason(&self) -> StopReason {
        if self.output_closed.load(Ordering::Relaxed) {
            StopReason::OutputClosed
        } else {
            StopReason::Cancelled
        }
    }

    pub fn is_set(&self) -> bool {
        self.token.is_cancelled()
    }

    pub(super) async fn wait(&self) {
        let mut rx = self.count.subscribe();
        // The sender lives as long as `self`, so this only returns once set.
        let _ = rx.wait_for(|c| *c > 0).await;
    }
}

/// How a run ended.
#[derive(Debug, Clone)]
pub struct RunSummary {
    pub session_id: String,
    pub reason: StopReason,
    /// Model turns completed over the session's life.
    pub turns: u32,
    pub usage: Usage,
    pub answer: Option<String>,
}

/// Everything one run needs.
pub struct Agent {
    pub catalog: Arc<Catalog>,
    pub policy: Arc<Policy>,
    pub provider: Provider,
    pub recorder: Option<Recorder>,
    pub config: AgentConfig,
    pub events: EventSink,
    pub interrupt: Interrupt,
    /// Where every tool call is recorded.
    pub audit: Option<Arc<AuditLog>>,
    /// Who answers calls the policy asks about; shared by every call of the run.
    pub approvals: Arc<Approvals>,
    /// Who the calls' plans and questions go to, and where memory notes
    /// live; `None`: no one can answer, and there is no memory.
    pub interaction: Option<InteractionParty>,
}

/// What came of streaming one model turn.
enum Streamed {
    Complete(Result<ModelResponse, ProviderError>),
    /// Cut short by an interrupt or the time budget (`reason`): the text
    /// and the complete calls that arrived before.
    Stopped {
        text: String,
        calls: Vec<ToolCall>,
        reason: StopReason,
    },
}

/// Read-only calls started while the turn was still streaming, by call id.
type Early = HashMap<String, (ToolCall, JoinHandle<FinishedCall>)>;

impl Agent {
    /// Continue the conversation `messages` (committed in `session`) with
    /// `task` as the next user message, until a stop condition fires.
    pub async fn run(
        &self,
        session: &mut SessionWriter,
        mut messages: Vec<Message>,
        task: &str,
        turns_before: u32,
    ) -> RunSummary {
        let started = Instant::now();
        let mut run = RunState {
            started,
            deadline: Deadline::after(started, self.config.time_budget),
            usage: Usage::default(),
            turn: turns_before,
            watchdog: Watchdog::new(self.config.loops),
            answer: None,
            stop: None,
        };
        let reason = self
            .turns(session, &mut messages, task, &mut run)
            .await
            .unwrap_or_else(|e| StopReason::SessionFailed {
                message: e.to_string(),
            });
        // The run is over either way; a failure to note it is reported above.
        let _ = session
            .append(&Record::End {
                reason: reason.clone(),
            })
            .and_then(|()| session.sync_soon())
            .and_then(|()| session.sync_begun());
        (self.events)(AgentEvent::Finished {
            reason: reason.clone(),
            turns: run.turn,
            usage: run.usage,
            answer: run.answer.clone(),
        });
        RunSummary {
            session_id: session.id().to_string(),
            reason,
            turns: run.turn,
            usage: run.usage,
            answer: run.answer,
        }
    }

    async fn turns(
        &self,
        session: &mut SessionWriter,
        messages: &mut Vec<Message>,
        task: &str,
        run: &mut RunState,
    ) -> Result<StopReason, super::SessionError> {
        let cfg = &self.config;
        let user = Message::User {
            content: task.to_string(),
        };
        session.append(&Record::Message {
            message: user.clone(),
        })?;
        session.append(&Record::TurnEnd {
            turn: run.turn,
            usage: None,
        })?;
        session.sync_soon()?;
        messages.push(user);

        let calls_cancel = CancelToken::new();
        let _watch = run
            .deadline
            .cancel_calls(self.interrupt.token.clone(), calls_cancel.clone());
        let mut scheduler = Scheduler::new(
            self.catalog.clone(),
            self.policy.clone(),
            cfg.workspace.clone(),
            cfg.limits.clone(),
            self.events.clone(),
            calls_cancel,
            cfg.parallel,
        );
        scheduler.audit = self
            .audit
            .clone()
            .map(|log| (log, session.id().to_string()));
        scheduler.approvals = self.approvals.clone();
        scheduler.interaction = self.interaction.clone();
        let tools = offered_tools(&self.catalog, &self.policy);
        let first_turn = run.turn;
        let mut context_retry = false;

        loop {
            if self.interrupt.is_set() {
                return Ok(self.interrupt.stop_reason());
            }
            if run.turn - first_turn >= cfg.max_turns {
                return Ok(StopReason::MaxTurns {
                    limit: cfg.max_turns,
                });
            }
            if let Some(budget) = cfg.time_budget
                && run.started.elapsed() >= budget
            {
                return Ok(StopReason::TimeBudget {
                    limit_secs: budget.as_secs(),
                });
            }
            let used = run.usage.input_tokens + run.usage.output_tokens;
            if let Some(limit) = cfg.token_budget
                && used >= limit
            {
                return Ok(StopReason::TokenBudget { limit, used });
            }

            if context::request_tokens(&self.request(messages, &tools)) > cfg.context.compact_above
            {
                match self
                    .compact(session, messages, cfg.context.keep_recent, run.deadline)
                    .await?
                {
                    Ok(Compacted::Yes | Compacted::NothingToSummarize) => {}
                    Err(stop) => return Ok(stop),
                }
            }

            let request = self.request(messages, &tools);
            run.turn += 1;
            (self.events)(AgentEvent::TurnStarted { turn: run.turn });
            let (streamed, early, announced) =
                self.stream(&request, &scheduler, run.deadline).await;
            let mut response = match streamed {
                Streamed::Stopped {
                    text,
                    calls,
                    reason,
                } => {
                    let assistant = Message::Assistant {
                        content: text,
                        tool_calls: calls.clone(),
                        reasoning: Vec::new(),
                    };
                    session.append(&Record::Message {
                        message: assistant.clone(),
                    })?;
                    messages.push(assistant);
                    let finished = self
                        .execute(calls, early, &announced, &scheduler, run)
                        .await;
                    self.results(session, messages, finished, run)?;
                    self.end_turn(session, run, None)?;
                    return Ok(reason);
                }
                Streamed::Complete(Ok(r)) => r,
                Streamed::Complete(Err(ProviderError::ContextLength { message })) => {
                    run.turn -= 1;
                    match self
                        .after_overflow(session, messages, message, context_retry, run.deadline)
                        .await?
                    {
                        Some(stop) => return Ok(stop),
                        None => {
                            context_retry = true;
                            continue;
                        }
                    }
                }
                Streamed::Complete(Err(e)) => {
                    return Ok(StopReason::ProviderFailed {
                        message: e.to_string(),
                    });
                }
            };
            context_retry = false;
            let turn_usage = response.usage.unwrap_or_else(|| Usage {
                input_tokens: context::request_tokens(&request),
                output_tokens: context::text_tokens(&response.text)
                    + response
                        .tool_calls
                        .iter()
                        .map(|c| context::text_tokens(&c.arguments))
                        .sum::<u64>(),
            });
            run.usage.input_tokens += turn_usage.input_tokens;
            run.usage.output_tokens += turn_usage.output_tokens;
            // Run as issued; kept (recorded, stored, sent back) cut to size.
            let calls = std::mem::take(&mut response.tool_calls);
            response.tool_calls = calls.iter().map(scheduler::stored).collect();
            if let Some(rec) = &self.recorder {
                rec.record(&response)?;
            }

            let assistant = Message::Assistant {
                content: response.text.clone(),
                tool_calls: response.tool_calls.clone(),
                reasoning: response.reasoning.clone(),
            };
            session.append(&Record::Message {
                message: assistant.clone(),
            })?;
            messages.push(assistant);
            let repeated = run.watchdog.text(&response.text);

            if response.tool_calls.is_empty() {
                run.answer = Some(response.text);
                self.end_turn(session, run, Some(turn_usage))?;
                return Ok(StopReason::Done);
            }
            if let Some(Alarm::Loop(detail)) = &repeated {
                run.stop = Some(StopReason::LoopDetected {
                    detail: detail.clone(),
                });
            }
            let finished = self
                .execute(calls, early, &announced, &scheduler, run)
                .await;
            self.results(session, messages, finished, run)?;
            self.end_turn(session, run, Some(turn_usage))?;
            if let Some(stop) = cfg.review.as_ref().and_then(ReviewCap::exceeded) {
                return Ok(stop);
            }
            if self.interrupt.is_set() {
                return Ok(self.interrupt.stop_reason());
            }
            if let Some(stop) = run.stop.take() {
                return Ok(stop);
            }
        }
    }

    fn request(&self, messages: &[Message], tools: &[ToolDef]) -> ModelRequest {
        ModelRequest {
            model: self.config.model.clone(),
            system: self.config.system_prompt.clone(),
            messages: messages.to_vec(),
            tools: tools.to_vec(),
            max_output_tokens: self.config.max_output_tokens,
        }
    }

    /// The stop reason of a run whose time budget ran out.
    pub(super) fn out_of_time(&self) -> StopReason {
        StopReason::TimeBudget {
            limit_secs: self.config.time_budget.unwrap_or_default().as_secs(),
        }
    }

    /// Stream one turn, until `deadline` at the latest. Read-only calls
    /// start as soon as they are complete, as long as every call before
    /// them in the turn is read-only too.
    async fn stream(
        &self,
        request: &ModelRequest,
        scheduler: &Scheduler,
        deadline: Deadline,
    ) -> (Streamed, Early, HashSet<String>) {
        let (tx, mut rx) = unbounded_channel();
        let mut early = Early::new();
        let mut turn = TurnProgress::default();
        let complete = self.provider.complete(request, &tx);
        tokio::pin!(complete);
        loop {
            tokio::select! {
                biased;
                () = self.interrupt.wait() => {
                    let streamed = Streamed::Stopped {
                        text: turn.text,
                        calls: turn.calls,
                        reason: self.interrupt.stop_reason(),
                    };
                    return (streamed, early, turn.announced);
                }
                () = deadline.reached() => {
                    let streamed = Streamed::Stopped {
                        text: turn.text,
                        calls: turn.calls,
                        reason: self.out_of_time(),
                    };
                    return (streamed, early, turn.announced);
                }
                Some(ev) = rx.recv() => self.on_stream_event(ev, &mut turn, &mut early, scheduler).await,
                result = &mut complete => {
                    drain(&mut rx, &mut turn, &mut early, scheduler, self).await;
                    return (Streamed::Complete(result), early, turn.announced);
                }
            }
        }
    }

    async fn on_stream_event(
        &self,
        ev: StreamEvent,
        turn: &mut TurnProgress,
        early: &mut Early,
        scheduler: &Scheduler,
    ) {
        match ev {
            StreamEvent::TextDelta(text) => {
                turn.text.push_str(&text);
                (self.events)(AgentEvent::TextDelta { text });
            }
            StreamEvent::ReasoningDelta(text) => {
                (self.events)(AgentEvent::Reasoning { text });
            }
            StreamEvent::ToolCallReady(call) => {
                let prepared = PreparedCall::new(call, &self.catalog);
                self.announce(&prepared);
                let stored = prepared.call.clone();
                turn.calls.push(stored.clone());
                turn.announced.insert(stored.id.clone());
                turn.all_read_only &= prepared.read_only;
                if turn.all_read_only && !early.contains_key(&stored.id) {
                    let handle = scheduler.start(prepared).await;
                    early.insert(stored.id.clone(), (stored, handle));
                }
            }
            StreamEvent::Retrying {
                attempt,
                delay,
                reason,
            } => {
                // Calls already started are read-only; their results are
                // dropped and the calls run again if the model repeats them.
                early.clear();
                *turn = TurnProgress::default();
                (self.events)(AgentEvent::Retrying {
                    attempt,
                    delay_ms: delay.as_millis() as u64,
                    reason,
                });
            }
        }
    }

    fn announce(&self, p: &PreparedCall) {
        (self.events)(AgentEvent::ToolCall {
            call_id: p.call.id.clone(),
            tool: p.call.name.clone(),
            arguments: p.shown_arguments(),
            rationale: p.rationale.clone(),
        });
    }

    /// Run a turn's calls and collect their results in the order issued.
    /// Calls are cancelled once the run is interrupted or out of time.
    async fn execute(
        &self,
        calls: Vec<ToolCall>,
        mut early: Early,
        announced: &HashSet<String>,
        scheduler: &Scheduler,
        run: &mut RunState,
    ) -> Vec<FinishedCall> {
        enum Pending {
            Running(JoinHandle<FinishedCall>, PreparedCall),
            Done(Box<FinishedCall>),
        }
        let deadline = run.deadline;
        let mut pending = Vec::with_capacity(calls.len());
        for call in calls {
            let prepared = PreparedCall::new(call, &self.catalog);
            if !announced.contains(&prepared.call.id) {
                self.announce(&prepared);
            }
            if let Some(stop) = &run.stop {
                pending.push(Pending::Done(Box::new(not_run(prepared, stop))));
                continue;
            }
            if let Some(Alarm::Loop(detail)) = run.watchdog.call(&prepared.call) {
                let stop = StopReason::LoopDetected { detail };
                pending.push(Pending::Done(Box::new(not_run(prepared, &stop))));
                run.stop = Some(stop);
                continue;
            }
            if self.interrupt.is_set() || deadline.passed() {
                pending.push(Pending::Done(Box::new(scheduler::cancelled(prepared))));
                continue;
            }
            match early.remove(&prepared.call.id) {
                Some((started, handle)) if started == prepared.call => {
                    pending.push(Pending::Running(handle, prepared));
                }
                Some(_) | None => {
                    tokio::select! {
                        biased;
                        () = self.interrupt.wait() => {
                            pending.push(Pending::Done(Box::new(scheduler::cancelled(prepared))));
                        }
                        () = deadline.reached() => {
                            pending.push(Pending::Done(Box::new(scheduler::cancelled(prepared))));
                        }
                        handle = scheduler.start(prepared.clone()) => {
                            pending.push(Pending::Running(handle, prepared));
                        }
                    }
                }
            }
        }
        let mut finished = Vec::with_capacity(pending.len());
        for p in pending {
            finished.push(match p {
                Pending::Done(f) => *f,
                Pending::Running(handle, prepared) => match handle.await {
                    Ok(f) => f,
                    Err(e) => FinishedCall {
                        prepared,
                        result: None,
                        outcome: ToolOutcome::Error(ToolError::new(
                            ErrorKind::Host,
                            format!("the call's task failed: {e}"),
                        )),
                        duration_ms: 0,
                    },
                },
            });
        }
        finished
    }
}

pub(super) struct RunState {
    started: Instant,
    pub(super) deadline: Deadline,
    usage: Usage,
    pub(super) turn: u32,
    pub(super) watchdog: Watchdog,
    answer: Option<String>,
    /// Set when the run must stop after this turn's results are in.
    pub(super) stop: Option<StopReason>,
}

struct TurnProgress {
    text: String,
    calls: Vec<ToolCall>,
    announced: HashSet<String>,
    /// Every call so far in the turn is read-only.
    all_read_only: bool,
}

impl Default for TurnProgress {
    fn default() -> Self {
        TurnProgress {
            text: String::new(),
            calls: Vec::new(),
            announced: HashSet::new(),
            all_read_only: true,
        }
    }
}

async fn drain(
    rx: &mut UnboundedReceiver<StreamEvent>,
    turn: &mut TurnProgress,
    early: &mut Early,
    scheduler: &Scheduler,
    agent: &Agent,
) {
    while let Ok(ev) = rx.try_recv() {
        agent.on_stream_event(ev, turn, early, scheduler).await;
    }
}

/// A call the host did not run because the run is stopping.
fn not_run(prepared: PreparedCall, stop: &StopReason) -> FinishedCall {
    FinishedCall {
        prepared,
        result: None,
        outcome: ToolOutcome::Denied {
            reason: format!("not run: the run is stopping ({stop})"),
        },
        duration_ms: 0,
    }
}
