//! `fan-out`: one call's work split across parallel workers.
//!
//! Each task runs in a worker, a fresh instance of the same plugin calling
//! the same tool with the task as its input. Workers are part of the call,
//! never a way around it: the same grant, filesystem boundary and egress
//! checks (built anew for each worker); the call's deadline, cancellation
//! and write quota; one memory limit for the call, its workers and the
//! results the host holds ([`super::memory::MemoryBudget`]); the other
//! per-instance limits as the call has them; and their logs, progress,
//! output, file and network use land in the call's report and audit
//! record. A worker cannot fan out again, at most [`workers_at_once`] run
//! at once, and results come back in task order.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use super::engine::WORKER_INSTANCES;
use super::guest::{GuestContext, GuestOutput, GuestReturn};
use super::instance::{Ended, cap_text, hidden_paths, new_store, run_instance};
use super::memory::MemoryBudget;
use super::process_call::ProcessCall;
use super::state::{CallState, Workers};
use crate::base::Limits;
use crate::base::{CancelToken, LogLine, MAX_WORKERS, ProgressEvent, ProgressSink};
use crate::capability::CappedPipe;
use crate::capability::egress::EgressCall;
use crate::capability::{BoundaryReport, FsBoundary, FsShared, build_wasi};
use crate::protocol::{ErrorKind, ToolError, hide_paths_in};

/// The most tasks one `fan-out` accepts.
pub const MAX_TASKS: usize = 64;

/// How many workers run at once: the machine's cores, at most
/// [`MAX_WORKERS`].
pub fn parallelism() -> u32 {
    static CORES: OnceLock<u32> = OnceLock::new();
    *CORES.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(1, |n| u32::try_from(n.get()).unwrap_or(u32::MAX))
            .clamp(1, MAX_WORKERS)
    })
}

/// How many workers a call under `limits` runs at once.
pub(super) fn workers_at_once(limits: &Limits) -> u32 {
    parallelism().min(limits.workers).max(1)
}

/// Why `fan-out` ran no workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FanOutRefusal {
    /// The caller is itself a worker.
    Nested,
    /// More than [`MAX_TASKS`] tasks.
    TooManyTasks,
    /// The call runs no workers, or none are free now.
    Unavailable,
}

/// What one worker left behind for its parent.
struct Done {
    result: GuestReturn,
    /// Bytes of `result` charged to the call's memory budget until the
    /// caller receives it.
    held: usize,
    logs: Vec<LogLine>,
    logs_dropped: u64,
    progress: Vec<ProgressEvent>,
    boundary: BoundaryReport,
    processes: Option<ProcessCall>,
}

impl Done {
    /// A worker that could not run at all.
    fn failed(e: ToolError) -> Done {
        Done {
            result: GuestReturn::Failed(e),
            held: 0,
            logs: Vec::new(),
            logs_dropped: 0,
            progress: Vec::new(),
            boundary: BoundaryReport::default(),
            processes: None,
        }
    }
}

/// The parent's state every worker shares.
struct Shared<'a> {
    workers: &'a Workers,
    limits: &'a Limits,
    deadline: Instant,
    cancel: CancelToken,
    stderr: CappedPipe,
    progress: Option<ProgressSink>,
    egress: Option<Arc<EgressCall>>,
    memory: Arc<MemoryBudget>,
    fs: FsShared,
    hidden: Vec<String>,
}

/// Run `tasks` in workers for the call whose instance holds `state`.
pub(super) fn fan_out(
    state: &mut CallState,
    tasks: Vec<String>,
) -> Result<Vec<GuestReturn>, FanOutRefusal> {
    if state.fan.is_worker {
        return Err(FanOutRefusal::Nested);
    }
    if tasks.len() > MAX_TASKS {
        return Err(FanOutRefusal::TooManyTasks);
    }
    let Some(workers) = state.fan.workers.take() else {
        return Err(FanOutRefusal::Unavailable);
    };
    let want =
        workers_at_once(&state.bounds.limits).min(u32::try_from(tasks.len()).unwrap_or(u32::MAX));
    let slots = Slots::take(want.max(1));
    if slots.0 == 0 {
        state.fan.workers = Some(workers);
        return Err(FanOutRefusal::Unavailable);
    }
    let done = {
        let shared = Shared {
            workers: &workers,
            limits: &state.bounds.limits,
            deadline: state.bounds.deadline,
            cancel: state.bounds.cancel.clone(),
            stderr: state.stderr.clone(),
            progress: state.record.progress_sink.clone(),
            egress: state.egress_call.clone(),
            memory: state.bounds.memory.clone(),
            fs: state.fs_boundary.shared(),
            hidden: hidden_paths(&workers.grant),
        };
        run_all(&shared, &tasks, slots.0 as usize)
    };
    drop(slots);
    state.fan.workers = Some(workers);
    state.fan.workers_run += tasks.len() as u64;
    let held: usize = done.iter().map(|d| d.held).sum();
    let mut results = Vec::with_capacity(done.len());
    for d in done {
        let limits = &state.bounds.limits;
        for line in d.logs {
            state.record.push_log(line, limits);
        }
        state.record.logs_dropped += d.logs_dropped;
        for event in d.progress {
            state.record.push_progress(event, limits);
        }
        state.fs_boundary.absorb(d.boundary);
        if let (Some(mine), Some(theirs)) = (&mut state.process, d.processes) {
            mine.absorb(theirs);
        }
        results.push(d.result);
    }
    // Lowered into the caller's memory next, where its own growth is charged.
    state.bounds.memory.release(held);
    Ok(results)
}

/// Pool slots for workers taken across every call in the process, at most
/// [`WORKER_INSTANCES`], so calls fanning out at once never take the
/// slots that calls themselves need.
static SLOTS_TAKEN: AtomicU32 = AtomicU32::new(0);

/// Worker slots one `fan-out` holds until it is dropped.
struct Slots(u32);

impl Slots {
    /// Up to `want` slots: fewer, or none, while other calls hold them.
    fn take(want: u32) -> Slots {
        let mut got = 0;
        let _ = SLOTS_TAKEN.fetch_update(Ordering::AcqRel, Ordering::Acquire, |taken| {
            got = want.min(WORKER_INSTANCES.saturating_sub(taken));
            Some(taken + got)
        });
        Slots(got)
    }
}

impl Drop for Slots {
    fn drop(&mut self) {
        SLOTS_TAKEN.fetch_sub(self.0, Ordering::AcqRel);
    }
}

/// Run every task on `threads` threads of its own (the calling thread is
/// inside the parent's guest, so it waits).
fn run_all(shared: &Shared<'_>, tasks: &[String], threads: usize) -> Vec<Done> {
    let next = AtomicUsize::new(0);
    let mut done: Vec<Option<Done>> = std::iter::repeat_with(|| None).take(tasks.len()).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .filter_map(|_| {
                std::thread::Builder::new()
                    .name("warden-worker".into())
                    .spawn_scoped(s, || {
                        let mut mine = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(task) = tasks.get(i) else {
                                return mine;
                            };
                            // A host bug in one worker fails its task, not the call.
                            let done = std::panic::catch_unwind(AssertUnwindSafe(|| {
                                run_one(shared, i, task)
                            }))
                            .unwrap_or_else(|_| {
                                Done::failed(ToolError::new(
                                    ErrorKind::Host,
                                    "the host failed while running this worker",
                                ))
                            });
                            mine.push((i, done));
                        }
                    })
                    .ok()
            })
            .collect();
        for handle in handles {
            for (i, d) in handle.join().unwrap_or_default() {
                done[i] = Some(d);
            }
        }
    });
    done.into_iter()
        .map(|d| {
            d.unwrap_or_else(|| {
                Done::failed(ToolError::new(
                    ErrorKind::Host,
                    "the host could not run this worker",
                ))
            })
        })
        .collect()
}

/// Run task `index` in a fresh instance under the parent call's grant,
/// deadline, cancellation and shared memory limit.
fn run_one(shared: &Shared<'_>, index: usize, task: &str) -> Done {
    let (workers, limits) = (shared.workers, shared.limits);
    let wasi = match build_wasi(&workers.grant, limits, &workers.stdout, &shared.stderr) {
        Ok(wasi) => wasi,
        Err(e) => {
            return Done::failed(ToolError::new(
                ErrorKind::Host,
                format!("cannot open the workspace for a worker: {}", e.kind()),
            ));
        }
    };
    let mut state = CallState::new(
        wasi,
        FsBoundary::for_grant(&workers.grant).sharing(shared.fs.clone()),
        shared.stderr.clone(),
        limits.clone(),
        shared.cancel.clone(),
        shared.progress.clone(),
    );
    state.bounds.deadline = shared.deadline;
    state.fan.is_worker = true;
    state.bounds.memory = shared.memory.clone();
    if let Some(egress) = &shared.egress {
        state.set_egress(egress.clone());
    }
    if let Some(process) = &workers.grant.process {
        state.process = Some(ProcessCall::new(process.clone()));
    }
    let left = shared.deadline.saturating_duration_since(Instant::now());
    let context = GuestContext {
        call_id: format!("{}/worker-{index}", workers.context.call_id),
        deadline_ms: u64::try_from(left.as_millis()).unwrap_or(u64::MAX),
        ..workers.context.clone()
    };
    let mut store = new_store(workers.pre.engine(), state, limits);
    let ended = run_instance(
        &workers.pre,
        &mut store,
        &workers.tool,
        task,
        &context,
        limits,
    );
    let state = store.into_data();
    state.bounds.memory.release(state.bounds.memory_mine);
    let result = match ended {
        Ended::Returned(out) => worker_output(out, limits),
        Ended::Failed(e) => GuestReturn::Failed(ToolError::new(
            e.kind,
            hide_paths_in(e.message, &shared.hidden),
        )),
        Ended::Cancelled => GuestReturn::Cancelled,
    };
    let (result, held) = hold(result, &shared.memory, limits);
    Done {
        result,
        held,
        logs: state.record.logs,
        logs_dropped: state.record.logs_dropped,
        progress: state.record.progress,
        boundary: state.fs_boundary.into_report(),
        processes: state.process,
    }
}

/// A worker's output as its parent receives it: the text under the call's
/// output cap (cut with the usual marker), the structured part whole or
/// refused, since cutting JSON would corrupt it.
fn worker_output(mut out: GuestOutput, limits: &Limits) -> GuestReturn {
    if out
        .structured
        .as_ref()
        .is_some_and(|s| s.len() > limits.output_bytes)
    {
        return GuestReturn::Failed(ToolError::new(
            ErrorKind::Internal,
            format!(
                "the worker's structured output passed the {}-byte output cap",
                limits.output_bytes
            ),
        ));
    }
    if cap_text(&mut out.text, limits) {
        out.text.shrink_to_fit();
    }
    GuestReturn::Output(out)
}

/// Charge a worker's output to the call's memory budget while the host
/// holds it, or refuse it when that would pass the limit: 64 results under
/// the output cap would otherwise let a call keep far more host memory than
/// its limit allows.
fn hold(result: GuestReturn, memory: &MemoryBudget, limits: &Limits) -> (GuestReturn, usize) {
    let GuestReturn::Output(out) = &result else {
        return (result, 0);
    };
    // What the strings allocated, not their length: that is what is held.
    let bytes = out.text.capacity() + out.structured.as_ref().map_or(0, String::capacity);
    if memory.take(bytes) {
        return (result, bytes);
    }
    let refused = ToolError::new(
        ErrorKind::Internal,
        format!(
            "the worker's output ({bytes} bytes) would pass the call's {} MiB memory limit, \
             with the call's instances and the results already held: return less per task, \
             or raise the call's `memory` limit",
            limits.memory_bytes >> 20
        ),
    );
    (GuestReturn::Failed(refused), 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(text: &str) -> GuestReturn {
        GuestReturn::Output(GuestOutput {
            text: text.to_string(),
            structured: Some("{}".to_string()),
        })
    }

    #[test]
    fn results_held_for_the_caller_are_charged_and_refused_past_the_limit() {
        let limits = Limits {
            memory_bytes: 64 << 20,
            ..Limits::default()
        };
        let memory = MemoryBudget::new(20);
        let (first, held) = hold(output("0123456789"), &memory, &limits);
        assert!(matches!(first, GuestReturn::Output(_)));
        assert_eq!(held, 12, "text and structured output");
        let (second, refused) = hold(output("0123456789"), &memory, &limits);
        let GuestReturn::Failed(e) = second else {
            panic!("a result past the budget is refused");
        };
        let message = e.message;
        assert!(
            message.starts_with("the worker's output (12 bytes) would pass"),
            "{message}"
        );
        assert_eq!(refused, 0, "nothing is held for a refused result");
        let (failed, none) = hold(
            GuestReturn::Failed(ToolError::new(ErrorKind::Io, "x")),
            &memory,
            &limits,
        );
        assert!(matches!(failed, GuestReturn::Failed(_)));
        assert_eq!(none, 0, "an error holds nothing");
        memory.release(held);
        let (again, held) = hold(output("0123456789"), &memory, &limits);
        assert!(
            matches!(again, GuestReturn::Output(_)),
            "the budget is free again once released"
        );
        assert_eq!(held, 12);
    }

    #[test]
    fn worker_slots_are_shared_and_given_back() {
        let first = Slots::take(WORKER_INSTANCES - 4);
        assert_eq!(first.0, WORKER_INSTANCES - 4);
        let second = Slots::take(10);
        assert_eq!(second.0, 4, "only what is left");
        assert_eq!(Slots::take(1).0, 0, "none left: the call gets none");
        drop(first);
        assert_eq!(Slots::take(3).0, 3, "dropped slots are free again");
        drop(second);
    }
}
