//! Watching a started process tree until it ends: its output, its
//! deadline, its cancel token, its output limit and its process limit.
//!
//! Invariant: when this returns, every process the call started is dead
//! and reaped (killing the namespace's pid 1 kills the rest), and the
//! call's cgroup is gone. The exit (through the pidfd), both streams and
//! stdin are all polled in the caller's own task: no thread or task is
//! handed work, so a runtime on the calling thread wakes nothing else.

use std::os::fd::{AsFd, OwnedFd};
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncReadExt, AsyncWriteExt, Interest};
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

/// The parent's ends of the pipes and the pidfd, registered with the
/// runtime.
struct Watched {
    pidfd: AsyncFd<OwnedFd>,
    stdin: Option<pipe::Sender>,
    stdout: pipe::Receiver,
    stderr: pipe::Receiver,
}

fn register(pidfd: OwnedFd, [stdin, stdout, stderr]: [OwnedFd; 3]) -> std::io::Result<Watched> {
    // SAFETY: an owned descriptor, open and the same for as long as the
    // AsyncFd owns it.
    let pidfd = unsafe { AsyncFd::register_with_interest(pidfd, Interest::READABLE) }
        .map_err(std::io::Error::from)?;
    Ok(Watched {
        pidfd,
        stdin: Some(pipe::Sender::from_owned_fd(stdin)?),
        stdout: pipe::Receiver::from_owned_fd(stdout)?,
        stderr: pipe::Receiver::from_owned_fd(stderr)?,
    })
}

/// Waits for the tree to end (or ends it) and reports how it ended.
pub(super) async fn supervise(
    mut prepared: Prepared,
    started: Started,
    request: &ProcessRequest,
) -> Result<(ProcessReport, Option<super::protected::Scan>), ProcessError> {
    let Some(pipes) = prepared.pipes.take() else {
        kill_and_reap(&started.pidfd);
        return Err(ProcessError::BadCommand(
            "the process's pipes were already taken".into(),
        ));
    };
    let Started {
        pidfd,
        started,
        mount_ns,
    } = started;
    let cgroup = prepared.cgroup.take();
    // Kept to kill and reap the tree should registering fail.
    let spare = pidfd.try_clone().map_err(|e| {
        kill_and_reap(&pidfd);
        ProcessError::Wait(e)
    })?;
    let mut watched = register(pidfd, pipes).map_err(|e| {
        kill_and_reap(&spare);
        ProcessError::Wait(e)
    })?;
    drop(spare);
    let volume = Volume {
        bytes: AtomicU64::new(0),
        limit: request.output_limit,
        over: Notify::new(),
    };
    let (mut status, mut stdout, mut stderr, mut stopped) = (None, None, None, None);
    {
        let stdin = watched.stdin.take();
        let mut writer = pin!(write_stdin(stdin, &request.stdin));
        let mut out = pin!(read(
            &mut watched.stdout,
            Stream::Stdout,
            request.stdout_cap,
            &volume,
            request.on_line.as_ref(),
        ));
        let mut err = pin!(read(
            &mut watched.stderr,
            Stream::Stderr,
            request.stderr_cap,
            &volume,
            request.on_line.as_ref(),
        ));
        let mut exited = pin!(wait_exit(&watched.pidfd));
        let mut stop = pin!(stop_reason(request, &volume, cgroup.as_ref()));
        let mut wrote = false;
        while status.is_none() || stdout.is_none() || stderr.is_none() {
            tokio::select! {
                s = &mut exited, if status.is_none() => {
                    if s.is_err() {
                        let _ = rustix::process::pidfd_send_signal(
                            watched.pidfd.get_ref(),
                            rustix::process::Signal::KILL,
                        );
                    }
                    status = Some(s);
                }
                o = &mut out, if stdout.is_none() => stdout = Some(o),
                e = &mut err, if stderr.is_none() => stderr = Some(e),
                () = &mut writer, if !wrote => wrote = true,
                reason = &mut stop, if status.is_none() && stopped.is_none() => {
                    stopped = Some(reason);
                    // Killing the namespace's init kills every process in it.
                    let _ = rustix::process::pidfd_send_signal(
                        watched.pidfd.get_ref(),
                        rustix::process::Signal::KILL,
                    );
                }
            }
        }
    }
    let (Some(status), Some(stdout), Some(stderr)) = (status, stdout, stderr) else {
        return Err(ProcessError::Wait(std::io::Error::other(
            "the process ended without a status",
        )));
    };
    let status = status.map_err(|e| {
        kill_and_reap(watched.pidfd.get_ref());
        ProcessError::Wait(e)
    })?;
    let duration = started.elapsed();
    if let Some(mount_ns) = mount_ns {
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

/// Kills the tree and waits for its pid 1, when the call cannot watch it.
fn kill_and_reap(pidfd: &OwnedFd) {
    let _ = rustix::process::pidfd_send_signal(pidfd, rustix::process::Signal::KILL);
    let _ = rustix::process::waitid(
        rustix::process::WaitId::PidFd(pidfd.as_fd()),
        rustix::process::WaitIdOptions::EXITED,
    );
}

/// Resolves once the process has exited, with its reaped status: the
/// pidfd turns readable when it exits.
async fn wait_exit(
    pidfd: &AsyncFd<OwnedFd>,
) -> std::io::Result<Option<rustix::process::WaitIdStatus>> {
    loop {
        let mut ready = pidfd.readable().await?;
        let options =
            rustix::process::WaitIdOptions::EXITED | rustix::process::WaitIdOptions::NOHANG;
        match rustix::process::waitid(
            rustix::process::WaitId::PidFd(pidfd.get_ref().as_fd()),
            options,
        ) {
            Ok(Some(status)) => return Ok(Some(status)),
            Ok(None) => ready.clear_ready(),
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// Writes the request's stdin, then closes it (at once when empty).
async fn write_stdin(stdin: Option<pipe::Sender>, input: &[u8]) {
    if let (Some(mut tx), false) = (stdin, input.is_empty()) {
        let _ = tx.write_all(input).await;
    }
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
async fn read(
    rx: &mut pipe::Receiver,
    stream: Stream,
    cap: usize,
    volume: &Volume,
    sink: Option<&LineSink>,
) -> CapturedOutput {
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
        if let Some(sink) = sink {
            lines.push(chunk, &mut |line| sink(&line));
        }
        let total = volume.bytes.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
        if total > volume.limit {
            volume.over.notify_one();
        }
    }
    if let Some(sink) = sink
        && lines.has_partial()
    {
        lines.flush(&mut |line| sink(&line));
    }
    capture.finish()
}
