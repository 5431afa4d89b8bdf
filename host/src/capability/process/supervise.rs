//! Watching a started process tree until it ends: its output, its
//! deadline, its cancel token, its output limit and its process limit.
//!
//! Invariant: when this returns, every process the call started is dead
//! and reaped (killing the namespace's pid 1 kills the rest), and the
//! call's cgroup is gone.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::io::AsyncWriteExt;
use tokio::net::unix::pipe;
use tokio::sync::Notify;

use super::cgroup::CallCgroup;
use super::output::{Capture, Lines};
use super::spawn::{Prepared, Started};
use super::{
    CapturedOutput, ExitStatus, LineSink, ProcessError, ProcessReport, ProcessRequest, StopReason,
    Stream,
};

/// How often the pids cgroup is checked for a refused fork.
const PIDS_POLL: Duration = Duration::from_millis(50);

/// Output of both streams so far, and a wake-up once past the limit.
struct Volume {
    bytes: AtomicU64,
    limit: u64,
    over: Notify,
}

/// Waits for the tree to end (or ends it) and reports how it ended.
pub(super) async fn supervise(
    mut prepared: Prepared,
    started: Started,
    request: &ProcessRequest,
) -> Result<(ProcessReport, Option<super::protected::Scan>), ProcessError> {
    let volume = Arc::new(Volume {
        bytes: AtomicU64::new(0),
        limit: request.output_limit,
        over: Notify::new(),
    });
    let Some([stdin, stdout, stderr]) = prepared.pipes.take() else {
        return Err(ProcessError::BadCommand(
            "the process's pipes were already taken".into(),
        ));
    };
    let input = request.stdin.clone();
    let writer = tokio::spawn(async move {
        if let Ok(mut tx) = pipe::Sender::from_owned_fd(stdin) {
            let _ = tx.write_all(&input).await;
        }
    });
    let out = reader(
        stdout,
        Stream::Stdout,
        request.stdout_cap,
        volume.clone(),
        request.on_line.clone(),
    )?;
    let err = reader(
        stderr,
        Stream::Stderr,
        request.stderr_cap,
        volume.clone(),
        request.on_line.clone(),
    )?;

    let pidfd = started.pidfd;
    let waiter = pidfd.try_clone().map_err(ProcessError::Wait)?;
    let mut exited = tokio::task::spawn_blocking(move || {
        rustix::process::waitid(
            rustix::process::WaitId::PidFd(waiter.as_fd()),
            rustix::process::WaitIdOptions::EXITED,
        )
    });
    let cgroup = prepared.cgroup.take();
    let mut stopped = None;
    let status = tokio::select! {
        status = &mut exited => status,
        reason = stop_reason(request, &volume, cgroup.as_ref()) => {
            stopped = Some(reason);
            // Killing the namespace's init kills every process in it.
            let _ = rustix::process::pidfd_send_signal(&pidfd, rustix::process::Signal::KILL);
            exited.await
        }
    };
    let status = status
        .map_err(|e| ProcessError::Wait(std::io::Error::other(e)))?
        .map_err(|e| ProcessError::Wait(e.into()))?;
    let duration = started.started.elapsed();
    if let Some(mount_ns) = started.mount_ns {
        super::spawner::release(mount_ns);
    }
    let exit = match status {
        Some(s) => match (s.exit_status(), s.terminating_signal()) {
            (Some(code), _) => ExitStatus::Code { code },
            (None, Some(signal)) => ExitStatus::Signal { signal },
            (None, None) => ExitStatus::Signal { signal: 0 },
        },
        None => ExitStatus::Signal { signal: 0 },
    };
    if stopped.is_none() && cgroup.as_ref().is_some_and(CallCgroup::hit_limit) {
        stopped = Some(StopReason::ProcessLimit);
    }
    writer.abort();
    let stdout = out.await.unwrap_or_default();
    let stderr = err.await.unwrap_or_default();
    drop(cgroup);
    let report = ProcessReport {
        exit,
        stdout,
        stderr,
        duration,
        stopped,
        confinement: prepared.confinement.clone(),
        removed_protected: Vec::new(),
    };
    Ok((report, prepared.before.take()))
}

/// Resolves with the first reason to end the tree early.
async fn stop_reason(
    request: &ProcessRequest,
    volume: &Volume,
    cgroup: Option<&CallCgroup>,
) -> StopReason {
    let deadline = tokio::time::Instant::from_std(request.deadline);
    tokio::select! {
        () = tokio::time::sleep_until(deadline) => StopReason::Deadline,
        () = request.cancel.cancelled() => StopReason::Cancelled,
        () = volume.over.notified() => StopReason::OutputLimit,
        () = pids_limit(cgroup) => StopReason::ProcessLimit,
    }
}

/// Resolves once the cgroup refused a fork; never without a cgroup.
async fn pids_limit(cgroup: Option<&CallCgroup>) {
    let Some(cgroup) = cgroup else {
        return std::future::pending().await;
    };
    loop {
        tokio::time::sleep(PIDS_POLL).await;
        if cgroup.hit_limit() {
            return;
        }
    }
}

/// Reads one stream to its end into a capped capture.
fn reader(
    fd: OwnedFd,
    stream: Stream,
    cap: usize,
    volume: Arc<Volume>,
    sink: Option<LineSink>,
) -> Result<tokio::task::JoinHandle<CapturedOutput>, ProcessError> {
    let mut rx = pipe::Receiver::from_owned_fd(fd).map_err(ProcessError::Wait)?;
    Ok(tokio::spawn(async move {
        let mut capture = Capture::new(cap);
        let mut lines = Lines::new(stream);
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let n = match rx.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let chunk = &buf[..n];
            capture.push(chunk);
            if let Some(sink) = &sink {
                lines.push(chunk, &mut |line| sink(&line));
            }
            let total = volume.bytes.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
            if total > volume.limit {
                volume.over.notify_one();
            }
        }
        if let Some(sink) = &sink
            && lines.has_partial()
        {
            lines.flush(&mut |line| sink(&line));
        }
        capture.finish()
    }))
}
