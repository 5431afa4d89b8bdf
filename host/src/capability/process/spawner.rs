//! Starting a confined child: `clone3` from the calling thread, or, once
//! the host has confined itself, from the spawner thread started just
//! before (a confined process may not mount, even in its own namespaces).

use std::os::fd::OwnedFd;
use std::sync::OnceLock;
use std::sync::mpsc;

use super::ProcessError;
use super::child::{self, ChildPlan};
use super::sys::{self, CArray};

type Job = (
    ChildPlan,
    mpsc::Sender<std::io::Result<(libc::pid_t, std::os::fd::OwnedFd)>>,
);

static SPAWNER: OnceLock<mpsc::Sender<Job>> = OnceLock::new();

/// Starts `plan`'s child: from the spawner thread once the host is
/// confined, else from the calling thread.
pub(super) fn launch(plan: ChildPlan) -> std::io::Result<(libc::pid_t, std::os::fd::OwnedFd)> {
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
pub(super) fn clone_with(plan: ChildPlan) -> std::io::Result<(libc::pid_t, OwnedFd)> {
    let argv = CArray::new(&plan.argv);
    let envp = CArray::new(&plan.env);
    // SAFETY: the child runs only child::run, which makes async-signal-safe
    // system calls on data prepared above, and never returns.
    match unsafe { sys::clone_child() }? {
        None => child::run(&plan, &argv, &envp),
        Some(child) => Ok(child),
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
