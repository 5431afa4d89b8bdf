//! Starting a confined child: `clone` from the calling thread, or, once
//! the host has confined itself, from the spawner thread started just
//! before (a confined process may not mount, even in its own namespaces).
//! The parent holds the child's mount namespace and lets it go on a
//! thread of its own once the call is over, so that its teardown (an RCU
//! grace period, milliseconds on a loaded machine) is not part of the call.

use std::os::fd::OwnedFd;
use std::sync::{Mutex, OnceLock, PoisonError, mpsc};

use super::ProcessError;
use super::child::{self, ChildPlan};
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

/// Runs `plan` in a new child of the calling thread; returns its pid and
/// pidfd. The child's ends of the pipes close when `plan` drops here.
pub(super) fn clone_with(plan: ChildPlan) -> std::io::Result<Launched> {
    let argv = CArray::new(&plan.argv);
    let envp = CArray::new(&plan.env);
    let mask = sys::block_signals();
    let mut start = child::Start {
        plan: &plan,
        argv: &argv,
        envp: &envp,
        mask,
    };
    // SAFETY: the child runs only child::entry, which makes async-signal-safe
    // system calls on `start` (alive until the clone returns, by which time
    // the child has exec'd or exited), resets signal handlers before it
    // unblocks signals, and never returns.
    let cloned = unsafe { sys::clone_vm_child(child::entry, (&raw mut start).cast()) };
    sys::set_signal_mask(&mask);
    let (pid, pidfd) = cloned?;
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
