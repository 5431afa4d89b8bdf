//! Stdin and stdout as non-blocking pipes on the tokio reactor, so a
//! message is read by the task that takes it and an answer written by the
//! task that produced it, with no thread between them.
//!
//! Only pipes and sockets qualify: their open file description is this
//! process's end alone, so making it non-blocking (for as long as the
//! server runs; the old mode is put back on drop) changes nothing for the
//! client. A terminal or a file keeps the reader and writer threads.
//!
//! Invariant: lines reach stdout whole and in the order they were queued,
//! even when a writing future is dropped half-way (the rest stays queued
//! and the next flush writes it first).

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::{Mutex, PoisonError};

use rustix::fs::{FileType, OFlags};
use tokio::io::unix::AsyncFd;

/// A pipe or socket end, non-blocking while this lives.
struct NonBlocking {
    fd: OwnedFd,
    old: OFlags,
}

impl NonBlocking {
    /// A non-blocking copy of `fd` when it is a pipe or a socket, `None`
    /// for anything else (or when it cannot be made non-blocking).
    fn of(fd: BorrowedFd<'_>) -> Option<NonBlocking> {
        let kind = FileType::from_raw_mode(rustix::fs::fstat(fd).ok()?.st_mode);
        if !matches!(kind, FileType::Fifo | FileType::Socket) {
            return None;
        }
        let fd = fd.try_clone_to_owned().ok()?;
        let old = rustix::fs::fcntl_getfl(&fd).ok()?;
        rustix::fs::fcntl_setfl(&fd, old | OFlags::NONBLOCK).ok()?;
        Some(NonBlocking { fd, old })
    }
}

impl AsRawFd for NonBlocking {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

impl Drop for NonBlocking {
    fn drop(&mut self) {
        let _ = rustix::fs::fcntl_setfl(&self.fd, self.old);
    }
}

/// Registered with the reactor, or `None` (no runtime, no epoll for it).
fn register(fd: BorrowedFd<'_>) -> Option<AsyncFd<NonBlocking>> {
    let fd = NonBlocking::of(fd)?;
    // SAFETY: `NonBlocking` owns its descriptor and never replaces it, so
    // it stays open and the same for as long as the `AsyncFd` holds it.
    #[allow(unsafe_code)]
    let registered = unsafe { AsyncFd::register(fd) };
    registered.ok()
}

/// Stdin as a non-blocking pipe.
pub(super) struct PipeIn {
    fd: AsyncFd<NonBlocking>,
    buf: Box<[u8]>,
    /// `buf[start..end]` is read and not yet consumed.
    start: usize,
    end: usize,
}

impl PipeIn {
    /// Stdin, when it is a pipe or a socket.
    pub(super) fn stdin() -> Option<PipeIn> {
        Some(PipeIn {
            fd: register(std::io::stdin().as_fd())?,
            buf: vec![0; 64 * 1024].into_boxed_slice(),
            start: 0,
            end: 0,
        })
    }

    /// The bytes read and not consumed, reading more when there are none;
    /// empty at the end of input. Cancel-safe: nothing is lost if dropped.
    pub(super) async fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        while self.start == self.end {
            let mut ready = self.fd.readable().await?;
            match ready.try_io(|fd| Ok(rustix::io::read(fd, &mut self.buf[..])?)) {
                // The end of input.
                Ok(Ok(0)) => return Ok(&[]),
                Ok(Ok(n)) => (self.start, self.end) = (0, n),
                Ok(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => {}
            }
        }
        Ok(&self.buf[self.start..self.end])
    }

    pub(super) fn consume(&mut self, n: usize) {
        self.start = (self.start + n).min(self.end);
    }
}

/// Stdout as a non-blocking pipe, with the bytes not yet written.
pub(super) struct PipeOut {
    fd: AsyncFd<NonBlocking>,
    queue: Mutex<Vec<u8>>,
    /// Held by the one task writing the queue out.
    writer: tokio::sync::Mutex<()>,
}

impl PipeOut {
    /// Stdout, when it is a pipe or a socket.
    pub(super) fn stdout() -> Option<PipeOut> {
        Some(PipeOut {
            fd: register(std::io::stdout().as_fd())?,
            queue: Mutex::default(),
            writer: tokio::sync::Mutex::new(()),
        })
    }

    /// Queue `line` behind what is already queued (at once, so lines keep
    /// the order of the calls).
    pub(super) fn queue(&self, line: &[u8]) {
        self.lock().extend_from_slice(line);
    }

    /// Write out everything queued, waiting while the pipe is full.
    pub(super) async fn flush(&self) -> std::io::Result<()> {
        let _writing = self.writer.lock().await;
        loop {
            if self.lock().is_empty() {
                return Ok(());
            }
            let mut ready = self.fd.writable().await?;
            let written = ready.try_io(|fd| {
                let mut queue = self.lock();
                let n = rustix::io::write(fd, &queue)?;
                queue.drain(..n);
                Ok(())
            });
            match written {
                Ok(Ok(())) | Err(_) => {}
                Ok(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Ok(Err(e)) => return Err(e),
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<u8>> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
