//! The write quota: how many bytes one call may put into the directories
//! it was granted, shared by its instance and every worker it fans out to.
//!
//! Invariant: the bytes the call's writes are allowed to pass to the kernel,
//! plus the bytes by which it extends files without data, never exceed the
//! quota — not by one chunk, even with workers writing at once: each write
//! reserves its bytes before it is made, and a write that does not fit is
//! cut to what remains (`descriptor.write`, a blocking stream write) or
//! refused whole (a non-blocking stream write, `set-size`). Every byte
//! counts once written, overwrites included; a failed write gives back
//! what it did not write when that is known. Truncating or deleting gives
//! nothing back. A refused write fails with `error-code::quota` (`EDQUOT`),
//! and the call's outcome says the quota stopped it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use bytes::Bytes;
use wasmtime_wasi::p2::{DynOutputStream, OutputStream, Pollable, StreamError, StreamResult};

/// The bytes one call may still write.
#[derive(Debug)]
pub struct WriteQuota {
    cap: u64,
    used: AtomicU64,
    /// Set when a write asked for more than was left.
    exceeded: AtomicBool,
}

impl WriteQuota {
    /// A quota of `cap` bytes, none used.
    pub fn new(cap: u64) -> WriteQuota {
        WriteQuota {
            cap,
            used: AtomicU64::new(0),
            exceeded: AtomicBool::new(false),
        }
    }

    /// The quota, in bytes.
    pub fn cap(&self) -> u64 {
        self.cap
    }

    /// Whether a write was cut or refused for want of quota.
    pub fn exceeded(&self) -> bool {
        self.exceeded.load(Ordering::Acquire)
    }

    /// Bytes not yet reserved.
    pub(super) fn left(&self) -> u64 {
        self.cap.saturating_sub(self.used.load(Ordering::Acquire))
    }

    /// Reserve as much of `want` as is left; what was reserved.
    pub(crate) fn take_up_to(&self, want: u64) -> u64 {
        let mut got = 0;
        let _ = self
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                got = want.min(self.cap.saturating_sub(used));
                Some(used + got)
            });
        if got < want {
            self.exceeded.store(true, Ordering::Release);
        }
        got
    }

    /// Reserve all of `want`, or nothing.
    pub(super) fn take_all(&self, want: u64) -> bool {
        let taken = self
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(want).filter(|total| *total <= self.cap)
            })
            .is_ok();
        if !taken {
            self.exceeded.store(true, Ordering::Release);
        }
        taken
    }

    /// Give back `bytes` reserved but not written.
    pub(super) fn give_back(&self, bytes: u64) {
        self.used.fetch_sub(bytes, Ordering::AcqRel);
    }
}

/// What a write refused for want of quota fails with. Through a stream
/// the guest asks `filesystem-error-code`, which maps this to `quota`.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the call's write quota of {cap} bytes is used up")]
pub struct QuotaExceeded {
    /// The quota, in bytes.
    pub cap: u64,
}

impl QuotaExceeded {
    fn stream_error(cap: u64) -> StreamError {
        StreamError::LastOperationFailed(wasmtime::Error::new(QuotaExceeded { cap }))
    }
}

/// A file's output stream, each write reserved from the quota first.
pub(super) struct QuotaStream {
    inner: DynOutputStream,
    quota: Arc<WriteQuota>,
}

impl QuotaStream {
    pub(super) fn wrap(inner: DynOutputStream, quota: Arc<WriteQuota>) -> DynOutputStream {
        Box::new(QuotaStream { inner, quota })
    }

    fn refused(&self) -> StreamError {
        QuotaExceeded::stream_error(self.quota.cap)
    }
}

fn len(bytes: &Bytes) -> u64 {
    bytes.len() as u64
}

#[wasmtime_wasi::async_trait]
impl OutputStream for QuotaStream {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        let want = len(&bytes);
        if !self.quota.take_all(want) {
            return Err(self.refused());
        }
        // A write refused at once wrote nothing.
        self.inner
            .write(bytes)
            .inspect_err(|_| self.quota.give_back(want))
    }

    async fn blocking_write_and_flush(&mut self, mut bytes: Bytes) -> StreamResult<()> {
        let want = len(&bytes);
        let got = self.quota.take_up_to(want);
        if got == 0 && want > 0 {
            return Err(self.refused());
        }
        // `got` fits in the buffer's length, which is a `usize`.
        bytes.truncate(usize::try_from(got).unwrap_or(usize::MAX));
        // A write that failed part way wrote an unknown part: it stays counted.
        self.inner.blocking_write_and_flush(bytes).await?;
        if got < want {
            return Err(self.refused());
        }
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        self.inner.flush()
    }

    /// What the inner stream accepts, cut to the quota left; once it is
    /// used up, the inner permit, so that a flush completes and the next
    /// write fails with `quota` rather than waiting for room forever.
    fn check_write(&mut self) -> StreamResult<usize> {
        let permit = self.inner.check_write()?;
        match self.quota.left() {
            0 => Ok(permit),
            left => Ok(permit.min(usize::try_from(left).unwrap_or(usize::MAX))),
        }
    }

    async fn cancel(&mut self) {
        self.inner.cancel().await;
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for QuotaStream {
    async fn ready(&mut self) {
        self.inner.ready().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_never_pass_the_cap() {
        let q = WriteQuota::new(10);
        assert_eq!(q.take_up_to(4), 4);
        assert!(!q.exceeded());
        assert!(!q.take_all(7), "7 more would pass 10");
        assert!(q.exceeded());
        assert_eq!(q.take_up_to(100), 6, "cut to what is left");
        assert_eq!(q.take_up_to(1), 0);
        q.give_back(3);
        assert_eq!(q.left(), 3);
        assert!(q.take_all(3));
        assert_eq!(q.left(), 0);
    }

    #[test]
    fn workers_share_one_quota() {
        let q = Arc::new(WriteQuota::new(1 << 20));
        let taken: u64 = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    let q = q.clone();
                    s.spawn(move || (0..1000).map(|_| q.take_up_to(4096)).sum::<u64>())
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or(0)).sum()
        });
        assert_eq!(taken, 1 << 20, "exactly the cap, however the threads raced");
    }
}
