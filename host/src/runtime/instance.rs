//! One guest instance run to its end: the store with every limit set, the
//! instantiation, the call, and every way it can end mapped to [`Ended`].
//! Shared by a call's own instance and the workers it fans out to.

use std::time::Duration;

use wasmtime::{Store, UpdateDeadline};

use super::guest::{GuestContext, GuestOutput, GuestPre, GuestReturn};
use super::state::CallState;
use crate::base::{Interrupt, Interrupted, Limits, cut_to};
use crate::capability::Grant;
use crate::protocol::{ErrorKind, ToolError, ToolOutcome};

/// How a guest's `call` ended, before its output is checked.
pub(super) enum Ended {
    /// It returned normally; the output is the guest's, unchecked.
    Returned(GuestOutput),
    /// It returned an error, trapped or hit a limit.
    Failed(ToolError),
    /// The user cancelled the call while it ran.
    Cancelled,
}

/// Instantiate `pre` in `store` and run `tool` on `input`.
pub(super) fn run_instance(
    pre: &GuestPre<CallState>,
    store: &mut Store<CallState>,
    tool: &str,
    input: &str,
    context: &GuestContext,
    limits: &Limits,
) -> Ended {
    match pre.call(store, tool, input, context) {
        Err(e) => classify_trap(store, e, limits),
        // A call cancelled while it ran is cancelled, whatever it returned.
        Ok(_) if store.data().bounds.cancel.is_cancelled() => Ended::Cancelled,
        Ok(GuestReturn::Cancelled) => Ended::Cancelled,
        Ok(GuestReturn::Failed(e)) => Ended::Failed(e),
        Ok(GuestReturn::Output(out)) => Ended::Returned(out),
    }
}

/// The host paths a call's error text must not show.
pub(super) fn hidden_paths(grant: &Grant) -> Vec<String> {
    grant
        .filesystem
        .iter()
        .map(|fs| fs.host_dir.display().to_string())
        .collect()
}

/// A store for one call with every limit applied: memory through the
/// limiter, host-call fuel, and the epoch check for deadline and cancellation.
pub(crate) fn new_store(
    engine: &wasmtime::Engine,
    state: CallState,
    limits: &Limits,
) -> Store<CallState> {
    let mut store = Store::new(engine, state);
    store.limiter(|s| s);
    store.set_hostcall_fuel(limits.hostcall_fuel);
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(|mut cx| match cx.data_mut().bounds.check_interrupt() {
        Some(why) => Err(Interrupted(why).into()),
        None => Ok(UpdateDeadline::Continue(1)),
    });
    store
}

/// Cut `text` to the output cap, with a marker saying so; true if it was cut.
pub(super) fn cap_text(text: &mut String, limits: &Limits) -> bool {
    if text.len() <= limits.output_bytes {
        return false;
    }
    let total = text.len();
    // A copy, so the guest's whole allocation is freed now.
    let mut kept = cut_to(text, limits.output_bytes);
    kept.push_str(&format!(
        "\n[output truncated by the host: {total} bytes exceeded the {}-byte cap]",
        limits.output_bytes
    ));
    *text = kept;
    true
}

/// Map a trap to the outcome that explains it.
fn classify_trap(store: &Store<CallState>, err: wasmtime::Error, limits: &Limits) -> Ended {
    if let Some(Interrupted(why)) = err.downcast_ref::<Interrupted>() {
        return match why {
            Interrupt::Cancelled => Ended::Cancelled,
            Interrupt::Deadline => Ended::Failed(ToolError::new(
                ErrorKind::Timeout,
                format!(
                    "the call ran past its {} deadline and was stopped",
                    human_duration(limits.deadline)
                ),
            )),
        };
    }
    let state = store.data();
    if state.bounds.memory_refused {
        return Ended::Failed(ToolError::new(
            ErrorKind::MemoryLimit,
            format!(
                "the plugin tried to use more than its {} MiB memory limit and was stopped",
                limits.memory_bytes >> 20
            ),
        ));
    }
    let text = format!("{err:#}");
    if let Some(message) = host_limit_message(&text, limits) {
        return Ended::Failed(ToolError::new(ErrorKind::LimitExceeded, message));
    }
    if let Some(rest) = text.split("unknown import: `").nth(1) {
        let name = rest.split(['`', '#']).next().unwrap_or("an interface");
        return Ended::Failed(ToolError::new(
            ErrorKind::PermissionDenied,
            format!("the plugin called {name}, which its grant does not include"),
        ));
    }
    let stderr = state.stderr.captured();
    let tail = String::from_utf8_lossy(&stderr.bytes);
    let root = err.root_cause().to_string();
    let message = match panic_message(&tail) {
        Some(p) => format!("the plugin panicked: {p} ({root})"),
        None => format!("the plugin crashed: {root}"),
    };
    Ended::Failed(ToolError::new(ErrorKind::Crashed, message))
}

/// Explain a trap raised by one of the WASI host-call limits, if it is one.
fn host_limit_message(trap: &str, limits: &Limits) -> Option<String> {
    if trap.contains("fuel allocated for hostcalls has been exhausted") {
        Some(format!(
            "the plugin passed more than {} bytes to the host in a single call or result (host-call fuel) and was stopped",
            limits.hostcall_fuel
        ))
    } else if trap.contains("resource table has no free keys") {
        Some(format!(
            "the plugin held more than {} open handles (files, streams) at once and was stopped",
            limits.resource_handles
        ))
    } else if trap.contains("requested len") && trap.contains("exceeds limit") {
        Some(format!(
            "the plugin asked for more than {} random bytes in one call and was stopped",
            limits.random_bytes
        ))
    } else {
        None
    }
}

/// The message of the last Rust panic in a guest's stderr: the text after
/// the "panicked at FILE:LINE:COL:" line (the file path is the plugin
/// author's build path, so it is left out).
fn panic_message(stderr: &str) -> Option<String> {
    let lines: Vec<&str> = stderr.lines().collect();
    let at = lines.iter().rposition(|l| l.contains("panicked at"))?;
    let message: Vec<&str> = lines[at + 1..]
        .iter()
        .take_while(|l| !l.starts_with("note: "))
        .take(5)
        .map(|l| l.trim())
        .collect();
    if message.is_empty() {
        None
    } else {
        Some(message.join(" "))
    }
}

pub(super) fn host_error(message: String) -> ToolOutcome {
    ToolOutcome::Error(ToolError::new(ErrorKind::Host, message))
}

fn human_duration(d: Duration) -> String {
    if d.as_millis().is_multiple_of(1000) {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}
