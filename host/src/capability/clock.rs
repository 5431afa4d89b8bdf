//! The monotonic clock a guest sees, with every wait clamped to the call's
//! deadline.
//!
//! Epoch interruption only stops a guest while it runs wasm code; a guest
//! blocked in the host (`thread::sleep`, `poll` on a timer) would sleep past
//! its deadline. Clamping each subscription to the time left means the guest
//! wakes at the deadline, returns to wasm, and the next epoch check stops it.

use std::time::Instant;

use wasmtime::component::{HasData, Resource};
use wasmtime_wasi::clocks::WasiClocksCtxView;
use wasmtime_wasi::p2::DynPollable;
use wasmtime_wasi::p2::bindings::clocks::monotonic_clock;

/// Slack past the deadline, so a woken guest is already over it.
const MARGIN_NS: u64 = 10_000_000;

/// `wasi:clocks/monotonic-clock` bounded by a deadline.
pub struct DeadlineClock<'a> {
    pub inner: WasiClocksCtxView<'a>,
    pub deadline: Instant,
}

impl DeadlineClock<'_> {
    fn remaining_ns(&self) -> u64 {
        let left = self.deadline.saturating_duration_since(Instant::now());
        u64::try_from(left.as_nanos())
            .unwrap_or(u64::MAX)
            .saturating_add(MARGIN_NS)
    }
}

/// [`HasData`] marker for linking [`DeadlineClock`].
pub struct HasDeadlineClock;

impl HasData for HasDeadlineClock {
    type Data<'a> = DeadlineClock<'a>;
}

impl monotonic_clock::Host for DeadlineClock<'_> {
    fn now(&mut self) -> wasmtime::Result<monotonic_clock::Instant> {
        self.inner.now()
    }

    fn resolution(&mut self) -> wasmtime::Result<monotonic_clock::Duration> {
        self.inner.resolution()
    }

    fn subscribe_instant(
        &mut self,
        when: monotonic_clock::Instant,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        let latest = self.inner.now()?.saturating_add(self.remaining_ns());
        self.inner.subscribe_instant(when.min(latest))
    }

    fn subscribe_duration(
        &mut self,
        duration: monotonic_clock::Duration,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        let bounded = duration.min(self.remaining_ns());
        self.inner.subscribe_duration(bounded)
    }
}
