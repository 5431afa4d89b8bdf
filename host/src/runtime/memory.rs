//! The call's memory budget, shared by its instance and the workers it fans
//! out to.
//!
//! Invariant: the bytes committed across every memory of every instance of
//! a call, and the worker results the host holds for it, never pass the
//! call's memory limit.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Linear memory a call may commit, across its own instance and the
/// workers it fans out to, and the workers' results the host holds for it.
#[derive(Debug)]
pub(crate) struct MemoryBudget {
    used: AtomicUsize,
    cap: usize,
}

impl MemoryBudget {
    pub(crate) fn new(cap: usize) -> Self {
        MemoryBudget {
            used: AtomicUsize::new(0),
            cap,
        }
    }

    /// Commit `bytes` more, unless that would pass the cap.
    pub(crate) fn take(&self, bytes: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(bytes).filter(|total| *total <= self.cap)
            })
            .is_ok()
    }

    /// Give back `bytes`: a finished worker's instance's memory, or the
    /// results a fan-out held until the caller took them.
    pub(crate) fn release(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::AcqRel);
    }
}
