//! Cancelling a call: the token the caller sets, and how a guest is stopped.
//!
//! Invariant: once [`CancelToken::cancel`] returns, every host wait that
//! watches the token ([`CancelToken::cancelled`]) wakes.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A flag the caller sets to cancel a running call; waits in the host
/// ([`cancelled`](Self::cancelled)) wake as soon as it is set.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<CancelState>);

#[derive(Debug, Default)]
struct CancelState {
    set: AtomicBool,
    woken: tokio::sync::Notify,
}

impl CancelToken {
    pub fn new() -> Self {
        Self::default()
    }
    /// Ask the call to stop; the guest is interrupted within one epoch tick.
    pub fn cancel(&self) {
        self.0.set.store(true, Ordering::SeqCst);
        self.0.woken.notify_waiters();
    }
    pub fn is_cancelled(&self) -> bool {
        self.0.set.load(Ordering::SeqCst)
    }
    /// Resolves once the token is cancelled: at once if it already is.
    pub async fn cancelled(&self) {
        let woken = self.0.woken.notified();
        let mut woken = std::pin::pin!(woken);
        // Registered before the flag is read, so a `cancel` between the
        // read and the wait still wakes it.
        woken.as_mut().enable();
        if !self.is_cancelled() {
            woken.await;
        }
    }
}

/// How long a cancelled guest may take to return on its own.
pub const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_millis(100);

/// Why the host stopped a guest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupt {
    Deadline,
    Cancelled,
}

/// The error an epoch callback raises to stop a guest.
#[derive(Debug, thiserror::Error)]
#[error("guest interrupted: {0:?}")]
pub struct Interrupted(pub Interrupt);

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Context, Wake, Waker};

    use super::CancelToken;

    /// Counts how often it is woken.
    #[derive(Default)]
    struct Wakes(AtomicUsize);

    impl Wake for Wakes {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn cancelled_wakes_its_waiter_from_cancel_itself() {
        let token = CancelToken::new();
        let wakes = Arc::new(Wakes::default());
        let waker = Waker::from(wakes.clone());
        let mut cx = Context::from_waker(&waker);
        let other = token.clone();
        let mut first = Box::pin(token.cancelled());
        let mut second = Box::pin(other.cancelled());
        assert!(first.as_mut().poll(&mut cx).is_pending());
        assert!(second.as_mut().poll(&mut cx).is_pending());
        assert_eq!(wakes.0.load(Ordering::SeqCst), 0);
        // No timer runs here: only `cancel` can wake the waiters.
        token.cancel();
        assert_eq!(wakes.0.load(Ordering::SeqCst), 2);
        assert!(first.as_mut().poll(&mut cx).is_ready());
        assert!(second.as_mut().poll(&mut cx).is_ready());
    }

    #[test]
    fn cancelled_is_ready_at_once_when_already_cancelled() {
        let token = CancelToken::new();
        token.cancel();
        let waker = Waker::from(Arc::new(Wakes::default()));
        let mut cx = Context::from_waker(&waker);
        assert!(
            Box::pin(token.cancelled())
                .as_mut()
                .poll(&mut cx)
                .is_ready()
        );
    }
}
