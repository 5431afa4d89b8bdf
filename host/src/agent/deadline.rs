//! The run's wall-clock budget (`--max-time`) as one deadline that every
//! wait of the turn loop races: the model's stream (its connects, retries
//! and back-off sleeps included), compaction, the wait for a call's turn,
//! and the calls themselves, which are cancelled when it passes.
//!
//! Invariant: once the deadline passes the loop waits on nothing but the
//! cancelled calls' results, so the run ends as `time_budget` on time, and
//! every call the model issued still gets exactly one result.

use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

use crate::base::CancelToken;

/// When the run's time is up, if it has a budget.
#[derive(Debug, Clone, Copy)]
pub(super) struct Deadline(Option<tokio::time::Instant>);

impl Deadline {
    /// `budget` after `started`; none without a budget (or one too far
    /// away to represent).
    pub(super) fn after(started: Instant, budget: Option<Duration>) -> Deadline {
        let at = budget.and_then(|b| started.checked_add(b));
        Deadline(at.map(tokio::time::Instant::from_std))
    }

    pub(super) fn passed(&self) -> bool {
        self.0.is_some_and(|at| tokio::time::Instant::now() >= at)
    }

    /// Resolves when the deadline passes; never, without one.
    pub(super) async fn reached(self) {
        match self.0 {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    }

    /// Cancel `calls` once `interrupt` is cancelled or the deadline
    /// passes, whichever comes first, until the guard is dropped.
    pub(super) fn cancel_calls(self, interrupt: CancelToken, calls: CancelToken) -> Watch {
        Watch(tokio::spawn(async move {
            tokio::select! {
                () = interrupt.cancelled() => {}
                () = self.reached() => {}
            }
            calls.cancel();
        }))
    }
}

/// Stops watching when dropped.
pub(super) struct Watch(JoinHandle<()>);

impl Drop for Watch {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_calls_token_is_cancelled_at_the_deadline_or_the_interrupt() {
        let calls = CancelToken::new();
        let deadline = Deadline::after(Instant::now(), Some(Duration::from_millis(50)));
        let _watch = deadline.cancel_calls(CancelToken::new(), calls.clone());
        assert!(!calls.is_cancelled());
        tokio::time::timeout(Duration::from_secs(10), calls.cancelled())
            .await
            .unwrap();
        assert!(deadline.passed());

        let (interrupt, calls) = (CancelToken::new(), CancelToken::new());
        let _watch =
            Deadline::after(Instant::now(), None).cancel_calls(interrupt.clone(), calls.clone());
        interrupt.cancel();
        tokio::time::timeout(Duration::from_secs(10), calls.cancelled())
            .await
            .unwrap();
    }

    #[test]
    fn a_budget_too_large_to_represent_is_no_deadline() {
        let deadline = Deadline::after(Instant::now(), Some(Duration::from_secs(u64::MAX)));
        assert!(deadline.0.is_none());
    }
}
