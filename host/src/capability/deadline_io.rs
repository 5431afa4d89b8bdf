//! `wasi:io` (poll and streams) with every blocking wait bounded by the
//! call's deadline and its cancellation.
//!
//! Epoch interruption only stops a guest while it runs wasm; a guest
//! blocked in the host (sleeping on a timer, waiting for an HTTP response,
//! or on a stream that never becomes ready, such as an outgoing body
//! nobody drains) would not notice either. Here each blocking call waits
//! at most until shortly after the deadline, or until [`CANCEL_GRACE`]
//! after the call is cancelled, then traps as the epoch check does, so
//! the call ends as a timeout or as cancelled. Non-blocking calls pass
//! straight through.

use std::time::{Duration, Instant};

use wasmtime::component::{HasData, Resource, ResourceTable};
use wasmtime_wasi::p2::bindings::io::poll as async_poll;
use wasmtime_wasi::p2::bindings::io::streams::{
    HostInputStream as AsyncInput, HostOutputStream as AsyncOutput,
};
use wasmtime_wasi::p2::bindings::sync::io::{poll, streams};
use wasmtime_wasi::p2::{DynInputStream, DynOutputStream, DynPollable, StreamError, StreamResult};
use wasmtime_wasi::runtime::in_tokio;

use super::egress::with_http_code;
use crate::base::{CANCEL_GRACE, CancelToken, Interrupt, Interrupted};

/// Slack past the deadline, so a clock the guest waits on (clamped to the
/// deadline plus the same slack) wakes it first.
const MARGIN: Duration = Duration::from_millis(10);

/// The guest's `wasi:io`, bounded by `deadline` and `cancel`.
pub struct DeadlineIo<'a> {
    pub table: &'a mut ResourceTable,
    pub deadline: Instant,
    pub cancel: &'a CancelToken,
}

/// [`HasData`] marker for linking [`DeadlineIo`].
pub struct HasDeadlineIo;

impl HasData for HasDeadlineIo {
    type Data<'a> = DeadlineIo<'a>;
}

/// Wait for `work`, unless the deadline passes or the call has been
/// cancelled for [`CANCEL_GRACE`] first (time a guest that sleeps in
/// slices has to see `is-cancelled` and return on its own).
async fn bounded<T>(
    work: impl Future<Output = T>,
    until: tokio::time::Instant,
    cancel: &CancelToken,
) -> Result<T, Interrupt> {
    let cancelled = async {
        cancel.cancelled().await;
        tokio::time::sleep(CANCEL_GRACE).await;
    };
    tokio::select! {
        biased;
        done = work => Ok(done),
        () = tokio::time::sleep_until(until) => Err(Interrupt::Deadline),
        () = cancelled => Err(Interrupt::Cancelled),
    }
}

impl DeadlineIo<'_> {
    fn until(&self) -> tokio::time::Instant {
        tokio::time::Instant::from_std(self.deadline + MARGIN)
    }

    fn stream<T>(
        &mut self,
        f: impl AsyncFnOnce(&mut ResourceTable) -> StreamResult<T>,
    ) -> StreamResult<T> {
        let until = self.until();
        let (table, cancel) = (&mut *self.table, self.cancel);
        in_tokio(async move {
            bounded(f(table), until, cancel)
                .await
                .unwrap_or_else(|why| Err(StreamError::Trap(Interrupted(why).into())))
        })
    }

    fn wait<T>(
        &mut self,
        f: impl AsyncFnOnce(&mut ResourceTable) -> wasmtime::Result<T>,
    ) -> wasmtime::Result<T> {
        let until = self.until();
        let (table, cancel) = (&mut *self.table, self.cancel);
        in_tokio(async move {
            bounded(f(table), until, cancel)
                .await
                .unwrap_or_else(|why| Err(Interrupted(why).into()))
        })
    }
}

impl poll::Host for DeadlineIo<'_> {
    fn poll(&mut self, pollables: Vec<Resource<DynPollable>>) -> wasmtime::Result<Vec<u32>> {
        self.wait(async move |t| async_poll::Host::poll(t, pollables).await)
    }
}

impl poll::HostPollable for DeadlineIo<'_> {
    fn ready(&mut self, p: Resource<DynPollable>) -> wasmtime::Result<bool> {
        poll::HostPollable::ready(self.table, p)
    }

    fn block(&mut self, p: Resource<DynPollable>) -> wasmtime::Result<()> {
        self.wait(async move |t| async_poll::HostPollable::block(t, p).await)
    }

    fn drop(&mut self, p: Resource<DynPollable>) -> wasmtime::Result<()> {
        poll::HostPollable::drop(self.table, p)
    }
}

impl streams::Host for DeadlineIo<'_> {
    fn convert_stream_error(&mut self, err: StreamError) -> wasmtime::Result<streams::StreamError> {
        streams::Host::convert_stream_error(self.table, with_http_code(err))
    }
}

impl streams::HostOutputStream for DeadlineIo<'_> {
    fn drop(&mut self, s: Resource<DynOutputStream>) -> wasmtime::Result<()> {
        self.wait(async move |t| AsyncOutput::drop(t, s).await)
    }

    fn check_write(&mut self, s: Resource<DynOutputStream>) -> StreamResult<u64> {
        streams::HostOutputStream::check_write(self.table, s)
    }

    fn write(&mut self, s: Resource<DynOutputStream>, bytes: Vec<u8>) -> StreamResult<()> {
        streams::HostOutputStream::write(self.table, s, bytes)
    }

    fn blocking_write_and_flush(
        &mut self,
        s: Resource<DynOutputStream>,
        bytes: Vec<u8>,
    ) -> StreamResult<()> {
        self.stream(async move |t| AsyncOutput::blocking_write_and_flush(t, s, bytes).await)
    }

    fn blocking_write_zeroes_and_flush(
        &mut self,
        s: Resource<DynOutputStream>,
        len: u64,
    ) -> StreamResult<()> {
        self.stream(async move |t| AsyncOutput::blocking_write_zeroes_and_flush(t, s, len).await)
    }

    fn subscribe(
        &mut self,
        s: Resource<DynOutputStream>,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        streams::HostOutputStream::subscribe(self.table, s)
    }

    fn write_zeroes(&mut self, s: Resource<DynOutputStream>, len: u64) -> StreamResult<()> {
        streams::HostOutputStream::write_zeroes(self.table, s, len)
    }

    fn flush(&mut self, s: Resource<DynOutputStream>) -> StreamResult<()> {
        streams::HostOutputStream::flush(self.table, s)
    }

    fn blocking_flush(&mut self, s: Resource<DynOutputStream>) -> StreamResult<()> {
        self.stream(async move |t| AsyncOutput::blocking_flush(t, s).await)
    }

    fn splice(
        &mut self,
        dst: Resource<DynOutputStream>,
        src: Resource<DynInputStream>,
        len: u64,
    ) -> StreamResult<u64> {
        streams::HostOutputStream::splice(self.table, dst, src, len)
    }

    fn blocking_splice(
        &mut self,
        dst: Resource<DynOutputStream>,
        src: Resource<DynInputStream>,
        len: u64,
    ) -> StreamResult<u64> {
        self.stream(async move |t| AsyncOutput::blocking_splice(t, dst, src, len).await)
    }
}

impl streams::HostInputStream for DeadlineIo<'_> {
    fn drop(&mut self, s: Resource<DynInputStream>) -> wasmtime::Result<()> {
        self.wait(async move |t| AsyncInput::drop(t, s).await)
    }

    fn read(&mut self, s: Resource<DynInputStream>, len: u64) -> StreamResult<Vec<u8>> {
        streams::HostInputStream::read(self.table, s, len)
    }

    fn blocking_read(&mut self, s: Resource<DynInputStream>, len: u64) -> StreamResult<Vec<u8>> {
        self.stream(async move |t| AsyncInput::blocking_read(t, s, len).await)
    }

    fn skip(&mut self, s: Resource<DynInputStream>, len: u64) -> StreamResult<u64> {
        streams::HostInputStream::skip(self.table, s, len)
    }

    fn blocking_skip(&mut self, s: Resource<DynInputStream>, len: u64) -> StreamResult<u64> {
        self.stream(async move |t| AsyncInput::blocking_skip(t, s, len).await)
    }

    fn subscribe(
        &mut self,
        s: Resource<DynInputStream>,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        streams::HostInputStream::subscribe(self.table, s)
    }
}
