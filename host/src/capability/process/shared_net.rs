//! The empty network namespace every confined process joins, made once per
//! host process instead of once per command (its creation was the largest
//! cost of a spawn the host controls).
//!
//! Invariant: the namespace holds no interface but its loopback, down, and
//! never a socket of the host. It is owned by a user namespace of its own
//! (the host's ids mapped to themselves, `setgroups` denied), made by a
//! short-lived helper child: each confined process enters that user
//! namespace, then the network namespace, and only then makes its own user
//! namespace, nested there, so that joining needs no privilege on the host
//! (root or not, or in a user namespace of its own). Processes of
//! concurrent calls share it; seccomp (`AF_UNIX` only) and Landlock (no TCP,
//! abstract sockets scoped to each process) keep them apart, see
//! `docs/sandbox.md`.

use std::ffi::CString;
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, Ordering};

use super::child;
use super::sys;

/// The shared namespaces, held open for the life of the host process.
#[derive(Debug)]
pub(super) struct SharedNet {
    /// The user namespace that owns `net`.
    pub user: OwnedFd,
    pub net: OwnedFd,
}

static SHARED: OnceLock<SharedNet> = OnceLock::new();

/// The shared namespaces, made on first use. A failure is not remembered
/// (it may be a passing shortage of processes): the next call tries again.
pub(super) fn get() -> std::io::Result<&'static SharedNet> {
    if let Some(shared) = SHARED.get() {
        return Ok(shared);
    }
    let made = make()?;
    // Should another thread have won the race, its namespaces are kept and
    // these closed.
    let _ = SHARED.set(made);
    SHARED
        .get()
        .ok_or_else(|| std::io::Error::other("the shared network namespace is gone"))
}

/// What the helper child reads and writes, in the memory it shares with
/// the host until it exits.
struct Helper {
    uid_map: CString,
    gid_map: CString,
    user: AtomicI32,
    net: AtomicI32,
    errno: AtomicI32,
}

fn make() -> std::io::Result<SharedNet> {
    let uid = rustix::process::geteuid().as_raw();
    let gid = rustix::process::getegid().as_raw();
    let map = |id: u32| CString::new(format!("{id} {id} 1")).map_err(std::io::Error::other);
    let helper = Helper {
        uid_map: map(uid)?,
        gid_map: map(gid)?,
        user: AtomicI32::new(-1),
        net: AtomicI32::new(-1),
        errno: AtomicI32::new(0),
    };
    let mask = sys::block_signals();
    // SAFETY: the helper runs only `helper_entry`, which makes
    // async-signal-safe system calls on `helper` (alive until clone_vm
    // returns, after the helper has exited), never unblocks a signal, and
    // ends with sys::exit. CLONE_FILES: the descriptors it opens are the
    // host's.
    let cloned = unsafe {
        sys::clone_vm(
            helper_entry,
            (&raw const helper).cast_mut().cast(),
            libc::CLONE_NEWUSER | libc::CLONE_NEWNET | libc::CLONE_FILES,
        )
    };
    sys::set_signal_mask(&mask);
    let (pid, _) = cloned?;
    let code = sys::reap(pid);
    let take = |fd: &AtomicI32| {
        let fd = fd.load(Ordering::SeqCst);
        // SAFETY: a descriptor the helper opened in the host's table and
        // left to it.
        (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
    };
    let (user, net) = (take(&helper.user), take(&helper.net));
    match (code, user, net) {
        (Some(0), Some(user), Some(net)) => Ok(SharedNet { user, net }),
        _ => Err(std::io::Error::from_raw_os_error(
            match helper.errno.load(Ordering::SeqCst) {
                0 => libc::EIO,
                errno => errno,
            },
        )),
    }
}

/// The helper: in its new user and network namespaces, maps its ids and
/// opens both namespaces for the host, then exits.
extern "C" fn helper_entry(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: make passes a live Helper, which outlives the helper.
    let helper = unsafe { &*arg.cast::<Helper>() };
    let opened = child::map_user(&helper.uid_map, &helper.gid_map)
        .and_then(|()| {
            let user = sys::open(c"/proc/self/ns/user", libc::O_RDONLY)?;
            helper.user.store(user, Ordering::SeqCst);
            sys::open(c"/proc/self/ns/net", libc::O_RDONLY)
        })
        .map(|net| helper.net.store(net, Ordering::SeqCst));
    match opened {
        Ok(()) => sys::exit(0),
        Err(errno) => {
            helper.errno.store(errno, Ordering::SeqCst);
            sys::exit(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::MetadataExt;

    use super::sys;

    fn ns_inode(path: &str) -> u64 {
        std::fs::metadata(path).unwrap().ino()
    }

    #[test]
    fn the_namespace_is_made_once_and_is_not_the_hosts() {
        let first = super::get().unwrap();
        assert!(std::ptr::eq(first, super::get().unwrap()));
        let shared = ns_inode(&format!("/proc/self/fd/{}", first.net.as_raw_fd()));
        assert_ne!(shared, ns_inode("/proc/self/ns/net"));
        let owner = ns_inode(&format!("/proc/self/fd/{}", first.user.as_raw_fd()));
        assert_ne!(owner, ns_inode("/proc/self/ns/user"));
    }

    #[test]
    fn the_namespace_holds_only_a_loopback_and_none_of_the_hosts_sockets() {
        if !rustix::process::geteuid().is_root() {
            return; // a thread may join it only with CAP_SYS_ADMIN on the host
        }
        let host = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = format!(":{:04X}", host.local_addr().unwrap().port());
        let net = super::get().unwrap().net.as_raw_fd();
        let seen = std::thread::spawn(move || {
            sys::setns(net, libc::CLONE_NEWNET).unwrap();
            let read = |t: &str| std::fs::read_to_string(format!("/proc/thread-self/net/{t}"));
            (
                read("dev").unwrap(),
                read("tcp").unwrap(),
                read("tcp6").unwrap(),
            )
        })
        .join()
        .unwrap();
        let (dev, tcp, tcp6) = seen;
        let interfaces: Vec<&str> = dev
            .lines()
            .skip(2)
            .filter_map(|l| l.split(':').next())
            .map(str::trim)
            .collect();
        assert_eq!(interfaces, ["lo"], "{dev}");
        assert_eq!(tcp.lines().count(), 1, "{tcp}");
        assert_eq!(tcp6.lines().count(), 1, "{tcp6}");
        assert!(!tcp.contains(&port));
        let own = std::fs::read_to_string("/proc/thread-self/net/tcp").unwrap();
        assert!(
            own.contains(&port),
            "the host's listener is not in its own table"
        );
    }
}
