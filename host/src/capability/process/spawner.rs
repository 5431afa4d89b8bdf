//! Starting a confined child: `clone` from the calling thread, or, once
//! the host has confined itself, from the spawner thread started just
//! before (a confined process may not mount, even in its own namespaces).
//! The parent holds the child's mount namespace and lets it go on a
//! thread of its own once the call is over, so that its teardown (an RCU
//! grace period, milliseconds on a loaded machine) is not part of the call.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError, mpsc};

use super::ProcessError;
use super::child::{self, ChildPlan};
use super::shared_net;
use super::sys::{self, CArray};

/// A started child.
#[derive(Debug)]
pub(super) struct Launched {
    pub pidfd: OwnedFd,
    /// The child's mount namespace, held so that the child's exit does not
    /// tear it down; hand it to [`release`] once the tree is gone. `None`
    /// when the child ended before it could be opened.
    pub mount_ns: Option<OwnedFd>,
}

type Job = (ChildPlan, mpsc::Sender<std::io::Result<Launched>>);

static SPAWNER: OnceLock<mpsc::Sender<Job>> = OnceLock::new();

/// Starts `plan`'s child: from the spawner thread once the host is
/// confined, else from the calling thread.
pub(super) fn launch(plan: ChildPlan) -> std::io::Result<Launched> {
    let Some(spawner) = SPAWNER.get() else {
        return clone_with(plan);
    };
    let (reply, answer) = mpsc::channel();
    spawner
        .send((plan, reply))
        .map_err(|_| std::io::Error::other("the spawner thread is gone"))?;
    answer
        .recv()
        .map_err(|_| std::io::Error::other("the spawner thread is gone"))?
}

/// Runs `plan` in a new child of the calling thread's process; returns
/// its pidfd. The child is started by a short-lived process that joins the
/// shared network namespace first (see [`child::enter`]). The child's ends
/// of the pipes close when `plan` drops here.
pub(super) fn clone_with(plan: ChildPlan) -> std::io::Result<Launched> {
    let shared = shared_net::get().map_err(|e| {
        std::io::Error::new(
            e.kind(),
            format!("making the shared network namespace: {e}"),
        )
    })?;
    let argv = CArray::new(&plan.argv);
    let envp = CArray::new(&plan.env);
    let mask = sys::block_signals();
    let start = child::Start {
        plan: &plan,
        argv: &argv,
        envp: &envp,
        mask,
        user_ns: shared.user.as_raw_fd(),
        net_ns: shared.net.as_raw_fd(),
        pid: AtomicI32::new(-1),
        pidfd: AtomicI32::new(-1),
        errno: AtomicI32::new(0),
    };
    // SAFETY: the starter runs only child::enter, which makes
    // async-signal-safe system calls on `start` and clones the child, which
    // runs only child::entry (see its contract); `start` is alive until
    // the clone returns, by which time the starter has exited and the child
    // has exec'd or exited. CLONE_FILES: the child's pidfd lands in the
    // host's descriptor table.
    let cloned = unsafe {
        sys::clone_vm(
            child::enter,
            (&raw const start).cast_mut().cast(),
            libc::CLONE_FILES,
        )
    };
    sys::set_signal_mask(&mask);
    let (starter, _) = cloned?;
    sys::reap(starter);
    let (pid, pidfd) = (
        start.pid.load(Ordering::SeqCst),
        start.pidfd.load(Ordering::SeqCst),
    );
    if pid <= 0 || pidfd < 0 {
        let e = std::io::Error::from_raw_os_error(match start.errno.load(Ordering::SeqCst) {
            0 => libc::EIO,
            errno => errno,
        });
        return Err(std::io::Error::new(
            e.kind(),
            format!("joining the shared network namespace: {e}"),
        ));
    }
    // SAFETY: the pidfd the kernel made for the child in this process's
    // table (the starter shared it), owned by nobody else.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
    // The child has exec'd: the command starts up (bash takes a
    // millisecond) while its mount namespace is opened here. Should it
    // already be gone, the namespace is torn down as it exits instead.
    let mount_ns = std::fs::File::open(format!("/proc/{pid}/ns/mnt"))
        .ok()
        .map(OwnedFd::from);
    Ok(Launched { pidfd, mount_ns })
}

/// Lets go of a child's mount namespace on the releasing thread (started
/// on first use); closed here if that thread cannot run.
pub(super) fn release(mount_ns: OwnedFd) {
    static RELEASER: OnceLock<Option<Mutex<mpsc::Sender<OwnedFd>>>> = OnceLock::new();
    let releaser = RELEASER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<OwnedFd>();
        std::thread::Builder::new()
            .name("warden-ns-release".into())
            .spawn(move || rx.into_iter().for_each(drop))
            .ok()
            .map(|_| Mutex::new(tx))
    });
    if let Some(tx) = releaser {
        let tx = tx.lock().unwrap_or_else(PoisonError::into_inner);
        if let Err(mpsc::SendError(fd)) = tx.send(mount_ns) {
            drop(fd);
        }
    }
}

/// Starts the thread confined children are cloned from, outside the
/// domain about to be applied.
pub(super) fn start() -> Result<(), ProcessError> {
    if SPAWNER.get().is_some() {
        return Ok(());
    }
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("warden-spawner".into())
        .spawn(move || {
            for (plan, reply) in rx {
                let _ = reply.send(clone_with(plan));
            }
        })
        .map_err(|source| ProcessError::Prepare {
            what: "starting the spawner thread",
            source,
        })?;
    let _ = SPAWNER.set(tx);
    Ok(())
}
