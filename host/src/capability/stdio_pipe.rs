//! Captured guest stdout and stderr: bytes past the cap are dropped, never
//! an error, so a flood of output cannot crash the guest or grow the host.

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError};

/// A capped in-memory stdout or stderr.
#[derive(Debug, Clone)]
pub struct CappedPipe {
    inner: Arc<Mutex<Captured>>,
    cap: usize,
}

/// What a [`CappedPipe`] captured.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Captured {
    /// The first `cap` bytes written.
    pub bytes: Vec<u8>,
    /// Bytes written past the cap and dropped.
    pub dropped: u64,
}

impl CappedPipe {
    pub fn new(cap: usize) -> Self {
        CappedPipe {
            inner: Arc::default(),
            cap,
        }
    }

    fn push(&self, data: &[u8]) {
        let mut c = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let room = self.cap.saturating_sub(c.bytes.len());
        let keep = room.min(data.len());
        c.bytes.extend_from_slice(&data[..keep]);
        c.dropped += (data.len() - keep) as u64;
    }

    /// What was captured so far.
    pub fn captured(&self) -> Captured {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl IsTerminal for CappedPipe {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CappedPipe {
    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }

    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }
}

/// Writes a guest may make in one go; the pipe never blocks.
const WRITE_BUDGET: usize = 64 << 10;

impl OutputStream for CappedPipe {
    fn write(&mut self, bytes: bytes::Bytes) -> Result<(), StreamError> {
        self.push(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StreamError> {
        Ok(())
    }

    fn check_write(&mut self) -> Result<usize, StreamError> {
        Ok(WRITE_BUDGET)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for CappedPipe {
    async fn ready(&mut self) {}
}

impl tokio::io::AsyncWrite for CappedPipe {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.push(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_past_the_cap() {
        let mut p = CappedPipe::new(4);
        p.write(bytes::Bytes::from_static(b"abc")).ok();
        p.write(bytes::Bytes::from_static(b"defg")).ok();
        let c = p.captured();
        assert_eq!(c.bytes, b"abcd");
        assert_eq!(c.dropped, 3);
    }
}
