//! The read/write gate tool calls pass before they run: read-only calls
//! share it, at most `parallel` of them running at once, and any other
//! call holds it alone.
//!
//! Invariant: holds are granted in the order they were asked for (the lock
//! is fair), so a call that writes never overlaps another call and sees
//! the effects of every call that asked before it; a read-only call asked
//! for after a writer waits for that writer.

use std::sync::Arc;

use tokio::sync::{OwnedRwLockReadGuard, OwnedRwLockWriteGuard, OwnedSemaphorePermit};
use tokio::sync::{RwLock, Semaphore};

/// The gate shared by every call of an agent run or an MCP server.
#[derive(Debug, Clone)]
pub struct CallGate {
    lock: Arc<RwLock<()>>,
    slots: Arc<Semaphore>,
}

/// A place in the gate, taken in order; [`GateHold::admit`] then waits for
/// a parallel slot when the hold is shared.
#[derive(Debug)]
pub enum GateHold {
    /// Held with other read-only calls.
    Shared {
        guard: OwnedRwLockReadGuard<()>,
        slots: Arc<Semaphore>,
    },
    /// Held alone.
    Exclusive(OwnedRwLockWriteGuard<()>),
}

/// A call admitted to run: it keeps its hold (and slot) until dropped.
#[derive(Debug)]
pub struct GatePass {
    _hold: GateHold,
    _slot: Option<OwnedSemaphorePermit>,
}

impl CallGate {
    /// A gate letting at most `parallel` (at least 1) read-only calls run at once.
    pub fn new(parallel: usize) -> CallGate {
        CallGate {
            lock: Arc::new(RwLock::new(())),
            slots: Arc::new(Semaphore::new(parallel.max(1))),
        }
    }

    /// Take a place in the gate, behind every hold asked for earlier:
    /// shared for a read-only call, exclusive for any other.
    pub async fn hold(&self, read_only: bool) -> GateHold {
        if read_only {
            GateHold::Shared {
                guard: self.lock.clone().read_owned().await,
                slots: self.slots.clone(),
            }
        } else {
            GateHold::Exclusive(self.lock.clone().write_owned().await)
        }
    }

    /// [`hold`](Self::hold), then [`admit`](GateHold::admit).
    pub async fn enter(&self, read_only: bool) -> GatePass {
        self.hold(read_only).await.admit().await
    }
}

impl GateHold {
    /// Wait for a parallel slot (shared holds only) and run.
    pub async fn admit(self) -> GatePass {
        let slot = match &self {
            GateHold::Shared { slots, .. } => slots.clone().acquire_owned().await.ok(),
            GateHold::Exclusive(_) => None,
        };
        GatePass {
            _hold: self,
            _slot: slot,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::CallGate;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
    }

    #[test]
    fn a_writer_waits_for_the_readers_before_it_and_blocks_those_after() {
        runtime().block_on(async {
            let gate = CallGate::new(4);
            let reader = gate.enter(true).await;
            let writer = gate.hold(false);
            let mut writer = std::pin::pin!(writer);
            let waiting = tokio::time::timeout(Duration::from_millis(20), &mut writer).await;
            assert!(waiting.is_err(), "the writer ran beside a reader");
            drop(reader);
            let writer = writer.await.admit().await;
            let later = tokio::time::timeout(Duration::from_millis(20), gate.enter(true)).await;
            assert!(later.is_err(), "a reader ran beside the writer");
            drop(writer);
            gate.enter(true).await;
        });
    }

    #[test]
    fn read_only_calls_share_the_gate_up_to_the_bound() {
        runtime().block_on(async {
            let gate = CallGate::new(2);
            let a = gate.enter(true).await;
            let _b = gate.enter(true).await;
            let third = tokio::time::timeout(Duration::from_millis(20), gate.enter(true)).await;
            assert!(third.is_err(), "a third reader ran with a bound of two");
            drop(a);
            gate.enter(true).await;
        });
    }
}
