//! The per-call store state: WASI context, limits, captured logs and the
//! host interface every plugin imports.
//!
//! A fresh `CallState` backs every call, so nothing a guest does survives
//! into the next call.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use wasmtime::ResourceLimiter;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::filesystem::WasiFilesystemCtxView;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::bindings::{host, types};
use super::fan_out::{self, Workers};
use super::pipe::CappedPipe;
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use crate::base::{
    CANCEL_GRACE, CancelToken, Interrupt, Limits, LogLevel, LogLine, ProgressEvent, ProgressSink,
    floor_char_boundary,
};
use crate::capability::egress::{EgressCall, EgressHooks};
use crate::capability::{DeadlineIo, FsBoundary, GuardedFs};

/// Store data for one call.
pub struct CallState {
    wasi: WasiCtx,
    table: ResourceTable,
    /// Protected paths and what the guest was refused at the filesystem layer.
    pub(crate) fs_boundary: FsBoundary,
    pub(crate) limits: Limits,
    pub(crate) deadline: Instant,
    pub(crate) cancel: CancelToken,
    pub(crate) stderr: CappedPipe,
    pub(crate) logs: Vec<LogLine>,
    log_bytes: usize,
    pub(crate) logs_dropped: u64,
    pub(crate) progress: Vec<ProgressEvent>,
    pub(super) progress_sink: Option<ProgressSink>,
    /// Set when the limiter refused a memory growth.
    pub(crate) memory_refused: bool,
    /// Linear memory committed across all of the instance's memories.
    pub(super) memory_mine: usize,
    /// The call's memory limit, shared with the workers it fans out to.
    pub(super) memory: Arc<MemoryBudget>,
    /// What `fan-out` needs to start workers; `None` when the call runs
    /// none (the plugin does not import `fan-out`, or this is a worker).
    pub(super) workers: Option<Box<Workers>>,
    /// This instance is a worker started by `fan-out`.
    pub(super) is_worker: bool,
    /// Workers this call's `fan-out`s ran.
    pub(super) workers_run: u64,
    /// When an epoch check first saw the cancellation.
    cancel_seen: Option<Instant>,
    /// `wasi:http` state; used only when the grant links it.
    http: WasiHttpCtx,
    /// Routes every outgoing request through the call's egress checks.
    egress: EgressHooks,
    /// The call's egress state, when it has a network grant.
    pub(crate) egress_call: Option<Arc<EgressCall>>,
}

impl CallState {
    pub(crate) fn new(
        wasi: WasiCtx,
        fs_boundary: FsBoundary,
        stderr: CappedPipe,
        limits: Limits,
        cancel: CancelToken,
        progress_sink: Option<ProgressSink>,
    ) -> Self {
        let mut table = ResourceTable::new();
        table.set_max_capacity(limits.resource_handles);
        let memory = Arc::new(MemoryBudget::new(limits.memory_bytes));
        CallState {
            wasi,
            table,
            fs_boundary,
            deadline: Instant::now()
                .checked_add(limits.deadline)
                .unwrap_or_else(far_future),
            limits,
            cancel,
            stderr,
            logs: Vec::new(),
            log_bytes: 0,
            logs_dropped: 0,
            progress: Vec::new(),
            progress_sink,
            memory_refused: false,
            memory_mine: 0,
            memory,
            workers: None,
            is_worker: false,
            workers_run: 0,
            cancel_seen: None,
            http: WasiHttpCtx::new(),
            egress: EgressHooks::default(),
            egress_call: None,
        }
    }

    /// Send this call's `wasi:http` requests through `call`'s checks.
    pub(crate) fn set_egress(&mut self, call: Arc<EgressCall>) {
        self.egress = EgressHooks::new(call.clone());
        self.egress_call = Some(call);
    }

    /// The guest's filesystem: wasmtime's, behind the call's boundary.
    pub(crate) fn guarded_fs(&mut self) -> GuardedFs<'_> {
        GuardedFs {
            inner: WasiFilesystemCtxView {
                ctx: self.wasi.filesystem(),
                table: &mut self.table,
            },
            boundary: &mut self.fs_boundary,
        }
    }

    /// The guest's `wasi:io`, every blocking wait bounded by the deadline
    /// and cancellation.
    pub(crate) fn bounded_io(&mut self) -> DeadlineIo<'_> {
        DeadlineIo {
            table: &mut self.table,
            deadline: self.deadline,
            cancel: &self.cancel,
        }
    }

    /// When the call's deadline falls.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Decide, at an epoch tick, whether the guest may go on.
    /// A cancelled guest gets [`CANCEL_GRACE`] to notice `is-cancelled`
    /// and return on its own before it is interrupted.
    pub(crate) fn check_interrupt(&mut self) -> Option<Interrupt> {
        if self.cancel.is_cancelled() {
            let seen = *self.cancel_seen.get_or_insert_with(Instant::now);
            if seen.elapsed() >= CANCEL_GRACE {
                return Some(Interrupt::Cancelled);
            }
        }
        if Instant::now() >= self.deadline {
            Some(Interrupt::Deadline)
        } else {
            None
        }
    }
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for CallState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.egress,
        }
    }
}

impl ResourceLimiter for CallState {
    /// The cap covers the sum of all memories, so a component with several
    /// memories cannot multiply it.
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let delta = desired.saturating_sub(current);
        if !self.memory.take(delta) {
            self.memory_refused = true;
            return Ok(false);
        }
        self.memory_mine += delta;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }

    // Counts per store. The pooling allocator has its own totals; these hold
    // for instances mapped on demand too, so a component cannot multiply
    // its tables (whose elements the memory budget does not count).
    fn instances(&self) -> usize {
        MAX_CORE_INSTANCES
    }

    fn tables(&self) -> usize {
        MAX_TABLES
    }

    fn memories(&self) -> usize {
        MAX_MEMORIES
    }
}

/// Core instances one store may hold: a Rust component has about five (its
/// module, the WASI adapter and the component model's shims).
const MAX_CORE_INSTANCES: usize = 50;

/// Tables one store may hold.
const MAX_TABLES: usize = 20;

/// Linear memories one store may hold; their sum is limited separately.
const MAX_MEMORIES: usize = 10;

/// A deadline so far ahead it never fires (for an unrepresentable one).
fn far_future() -> Instant {
    Instant::now() + std::time::Duration::from_secs(100 * 365 * 24 * 3600)
}

/// Table elements a guest may grow to; tables hold function references.
const MAX_TABLE_ELEMENTS: usize = 100_000;

/// Linear memory a call may commit, across its own instance and the
/// workers it fans out to, and the workers' results the host holds for it.
#[derive(Debug)]
pub(crate) struct MemoryBudget {
    used: AtomicUsize,
    cap: usize,
}

impl MemoryBudget {
    pub(super) fn new(cap: usize) -> Self {
        MemoryBudget {
            used: AtomicUsize::new(0),
            cap,
        }
    }

    /// Commit `bytes` more, unless that would pass the cap.
    pub(super) fn take(&self, bytes: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(bytes).filter(|total| *total <= self.cap)
            })
            .is_ok()
    }

    /// Give back `bytes`: a finished worker's instance's memory, or the
    /// results a fan-out held until the caller took them.
    pub(super) fn release(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::AcqRel);
    }
}

impl CallState {
    /// Keep `line` if the log caps allow it, else count it as dropped.
    pub(super) fn push_log(&mut self, line: LogLine) {
        let full = self.logs.len() >= self.limits.log_lines
            || self.log_bytes + line.message.len() > self.limits.log_bytes;
        if full {
            self.logs_dropped += 1;
            return;
        }
        self.log_bytes += line.message.len();
        self.logs.push(line);
    }

    /// Keep `event` if the progress cap allows it.
    pub(super) fn push_progress(&mut self, event: ProgressEvent) {
        if self.progress.len() < self.limits.progress_events {
            self.progress.push(event);
        }
    }
}

impl host::Host for CallState {
    fn log(&mut self, level: host::LogLevel, message: String) {
        let level = match level {
            host::LogLevel::Trace => LogLevel::Trace,
            host::LogLevel::Debug => LogLevel::Debug,
            host::LogLevel::Info => LogLevel::Info,
            host::LogLevel::Warn => LogLevel::Warn,
            host::LogLevel::Error => LogLevel::Error,
        };
        self.push_log(LogLine { level, message });
    }

    fn progress(&mut self, message: String, fraction: Option<f32>) {
        if self.progress.len() >= self.limits.progress_events {
            return;
        }
        let fraction = fraction
            .filter(|f| f.is_finite())
            .map(|f| f.clamp(0.0, 1.0));
        let mut message = message;
        message.truncate(floor_char_boundary(&message, 200));
        let event = ProgressEvent { message, fraction };
        if let Some(sink) = &self.progress_sink {
            sink(&event);
        }
        self.progress.push(event);
    }

    fn is_cancelled(&mut self) -> bool {
        self.cancel.is_cancelled()
    }

    fn parallelism(&mut self) -> u32 {
        if self.workers.is_some() {
            fan_out::workers_at_once(&self.limits)
        } else {
            1
        }
    }

    fn is_worker(&mut self) -> bool {
        self.is_worker
    }

    fn fan_out(
        &mut self,
        tasks: Vec<String>,
    ) -> Result<Vec<Result<types::ToolOutput, types::ToolError>>, host::FanOutError> {
        fan_out::fan_out(self, tasks)
    }
}

impl super::bindings::types::Host for CallState {}
