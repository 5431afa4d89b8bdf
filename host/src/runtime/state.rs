//! The store data of one call, in parts with one purpose each: the WASI
//! contexts, the bounds that stop the guest, what the guest reported, what
//! its capabilities recorded, and its place in a fan-out.
//!
//! A fresh `CallState` backs every call, so nothing a guest does survives
//! into the next call.

use std::sync::Arc;
use std::time::Instant;

use wasmtime::ResourceLimiter;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::filesystem::WasiFilesystemCtxView;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use super::guest::{GuestContext, GuestPre};
use super::guest_record::GuestRecord;
use super::interaction_call::InteractionState;
use super::memory::MemoryBudget;
use super::process_call::ProcessCall;
use crate::base::{CANCEL_GRACE, CancelToken, Interrupt, Limits, ProgressSink};
use crate::capability::egress::{EgressCall, EgressHooks};
use crate::capability::{CappedPipe, DeadlineIo, FsBoundary, Grant, GuardedFs, Needles};

/// Store data for one call.
pub struct CallState {
    /// The WASI and `wasi:http` contexts and their resource table.
    wasi: WasiParts,
    /// Deadline, cancellation and memory: what stops the guest.
    pub(crate) bounds: CallBounds,
    /// What the guest logged and reported.
    pub(crate) record: GuestRecord,
    /// Protected paths and what the guest was refused at the filesystem layer.
    pub(crate) fs_boundary: FsBoundary,
    /// The call's egress state, when it has a network grant.
    pub(crate) egress_call: Option<Arc<EgressCall>>,
    /// The guest's captured stderr (a crash's panic message is read from it).
    pub(crate) stderr: CappedPipe,
    /// This instance's part in `fan-out`.
    pub(crate) fan: FanOutRole,
    /// The call's processes, when its grant includes them.
    pub(crate) process: Option<ProcessCall>,
    /// The call's plan, questions and notes, when its grant includes
    /// interaction (never in a worker).
    pub(crate) interaction: Option<InteractionState>,
    /// `prefilter`'s search for the last needle set it was given.
    pub(crate) needles: Option<Needles>,
}

/// The WASI side of a store.
struct WasiParts {
    ctx: WasiCtx,
    table: ResourceTable,
    /// `wasi:http` state; used only when the grant links it.
    http: WasiHttpCtx,
    /// Routes every outgoing request through the call's egress checks.
    egress: EgressHooks,
}

/// What ends a guest that does not end on its own.
pub(crate) struct CallBounds {
    pub(crate) limits: Limits,
    pub(crate) deadline: Instant,
    pub(crate) cancel: CancelToken,
    /// When an epoch check first saw the cancellation.
    cancel_seen: Option<Instant>,
    /// The call's memory limit, shared with the workers it fans out to.
    pub(crate) memory: Arc<MemoryBudget>,
    /// Linear memory committed across all of this instance's memories.
    pub(crate) memory_mine: usize,
    /// Set when the limiter refused a memory growth.
    pub(crate) memory_refused: bool,
}

/// An instance's part in `fan-out`.
#[derive(Default)]
pub(crate) struct FanOutRole {
    /// What `fan-out` needs to start workers; `None` when the call runs
    /// none (the plugin does not import `fan-out`, or this is a worker).
    pub(crate) workers: Option<Box<Workers>>,
    /// This instance is a worker started by `fan-out`.
    pub(crate) is_worker: bool,
    /// Workers this call's `fan-out`s ran.
    pub(crate) workers_run: u64,
}

/// What a call's workers are started from, set up before the call runs.
pub(crate) struct Workers {
    pub(crate) pre: GuestPre<CallState>,
    pub(crate) grant: Grant,
    pub(crate) tool: String,
    pub(crate) context: GuestContext,
    pub(crate) stdout: CappedPipe,
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
            wasi: WasiParts {
                ctx: wasi,
                table,
                http: WasiHttpCtx::new(),
                egress: EgressHooks::default(),
            },
            bounds: CallBounds {
                deadline: Instant::now()
                    .checked_add(limits.deadline)
                    .unwrap_or_else(far_future),
                limits,
                cancel,
                cancel_seen: None,
                memory,
                memory_mine: 0,
                memory_refused: false,
            },
            record: GuestRecord::new(progress_sink),
            fs_boundary,
            egress_call: None,
            stderr,
            fan: FanOutRole::default(),
            process: None,
            interaction: None,
            needles: None,
        }
    }

    /// Send this call's `wasi:http` requests through `call`'s checks.
    pub(crate) fn set_egress(&mut self, call: Arc<EgressCall>) {
        self.wasi.egress = EgressHooks::new(call.clone());
        self.egress_call = Some(call);
    }

    /// The guest's filesystem: wasmtime's, behind the call's boundary.
    pub(crate) fn guarded_fs(&mut self) -> GuardedFs<'_> {
        GuardedFs {
            inner: WasiFilesystemCtxView {
                ctx: self.wasi.ctx.filesystem(),
                table: &mut self.wasi.table,
            },
            boundary: &mut self.fs_boundary,
        }
    }

    /// The guest's `wasi:io`, every blocking wait bounded by the deadline
    /// and cancellation.
    pub(crate) fn bounded_io(&mut self) -> DeadlineIo<'_> {
        DeadlineIo {
            table: &mut self.wasi.table,
            deadline: self.bounds.deadline,
            cancel: &self.bounds.cancel,
        }
    }

    /// When the call's deadline falls.
    pub fn deadline(&self) -> Instant {
        self.bounds.deadline
    }
}

impl CallBounds {
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
            ctx: &mut self.wasi.ctx,
            table: &mut self.wasi.table,
        }
    }
}

impl WasiHttpView for CallState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.wasi.http,
            table: &mut self.wasi.table,
            hooks: &mut self.wasi.egress,
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
        let bounds = &mut self.bounds;
        if !bounds.memory.take(delta) {
            bounds.memory_refused = true;
            return Ok(false);
        }
        bounds.memory_mine += delta;
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
