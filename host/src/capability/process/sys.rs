//! Raw Linux system calls for the child between `clone` and `execve`, and
//! the `clone` itself.
//!
//! Invariant: every function here but [`clone_vm_child`] is async-signal-safe:
//! one or a few raw system calls on arguments the caller owns, no
//! allocation, no locks, no panics. Errors are errno values.

use std::ffi::{CStr, CString, c_char, c_int, c_long};
use std::marker::PhantomData;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

/// An errno value.
pub(super) type Errno = i32;
pub(super) type SysResult<T> = Result<T, Errno>;

// From <linux/mount.h>, <linux/openat2.h>, <linux/fcntl.h>, <linux/landlock.h>.
pub(super) const OPEN_TREE_CLONE: u32 = 1;
pub(super) const AT_EMPTY_PATH: u32 = 0x1000;
pub(super) const AT_RECURSIVE: u32 = 0x8000;
const MOVE_MOUNT_F_EMPTY_PATH: u32 = 0x04;
const MOVE_MOUNT_T_EMPTY_PATH: u32 = 0x40;
pub(super) const MOUNT_ATTR_RDONLY: u64 = 0x1;
pub(super) const MOUNT_ATTR_NOSUID: u64 = 0x2;
pub(super) const MOUNT_ATTR_NODEV: u64 = 0x4;
pub(super) const MOUNT_ATTR_NOEXEC: u64 = 0x8;
const FSCONFIG_SET_STRING: u32 = 1;
const FSCONFIG_CMD_CREATE: u32 = 6;
const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
const RESOLVE_NO_SYMLINKS: u64 = 0x04;
const RESOLVE_BENEATH: u64 = 0x08;
const LANDLOCK_RULE_PATH_BENEATH: c_int = 1;
const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;
const SECCOMP_SET_MODE_FILTER: u32 = 1;

fn check(ret: c_long) -> SysResult<c_long> {
    if ret < 0 { Err(errno()) } else { Ok(ret) }
}

fn check_fd(ret: c_long) -> SysResult<RawFd> {
    check(ret).map(|fd| fd as RawFd)
}

/// The calling thread's errno.
pub(super) fn errno() -> Errno {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// A NULL-terminated array of C strings for `execve`, borrowing them.
pub(super) struct CArray<'a> {
    ptrs: Vec<*const c_char>,
    _strings: PhantomData<&'a CString>,
}

impl<'a> CArray<'a> {
    pub(super) fn new(strings: &'a [CString]) -> Self {
        let mut ptrs: Vec<*const c_char> = strings.iter().map(|s| s.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        CArray {
            ptrs,
            _strings: PhantomData,
        }
    }
}

/// The child's stack: its frames are small (no allocation, a few
/// fixed-size arrays), this leaves ample room. A guard page lies below it.
const CHILD_STACK: usize = 256 * 1024;

/// Every signal blocked on the calling thread; returns the mask it had.
pub(super) fn block_signals() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; both sets are valid for the calls.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        old
    }
}

/// Sets the calling thread's signal mask.
pub(super) fn set_signal_mask(mask: &libc::sigset_t) {
    // SAFETY: a valid mask; the old one is not asked for.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, mask, std::ptr::null_mut()) };
}

/// In the child, before it unblocks signals: every caught signal back to
/// its default action, so that no handler of the host runs in it (it
/// shares the host's memory until it execs).
pub(super) fn default_signal_handlers() {
    for sig in 1..=libc::SIGRTMAX() {
        // SAFETY: sigaction reads or writes a zeroed, valid struct; signals
        // the kernel or libc refuse to change fail harmlessly.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
                continue;
            }
            if old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN {
                let mut dfl: libc::sigaction = std::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(sig, &dfl, std::ptr::null_mut());
            }
        }
    }
}

/// `clone` into new user, mount, pid, network, ipc and uts namespaces,
/// with a pidfd: [`clone_vm`] with [`CONFINED_FLAGS`] and a new network
/// namespace.
///
/// # Safety
/// As for [`clone_vm`].
pub(super) unsafe fn clone_vm_child(
    entry: extern "C" fn(*mut libc::c_void) -> c_int,
    arg: *mut libc::c_void,
) -> std::io::Result<(libc::pid_t, OwnedFd)> {
    let flags = CONFINED_FLAGS | libc::CLONE_NEWNET | libc::CLONE_PIDFD;
    // SAFETY: the caller upholds clone_vm's contract.
    let (pid, pidfd) = unsafe { clone_vm(entry, arg, flags) }?;
    pidfd
        .map(|fd| (pid, fd))
        .ok_or_else(|| std::io::Error::other("clone returned no pidfd"))
}

/// The namespaces every confined process gets new at its `clone` (its
/// network namespace is the shared one, see `shared_net`).
pub(super) const CONFINED_FLAGS: c_int = libc::CLONE_NEWUSER
    | libc::CLONE_NEWNS
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUTS;

/// `clone(flags | CLONE_VM | CLONE_VFORK | SIGCHLD)`, as `posix_spawn`
/// starts a child: sharing this process's memory on a stack of its own,
/// the calling thread asleep until the child has exec'd or exited. Nothing
/// of the host's memory is copied, so the cost does not grow with the
/// host's size. The child runs `entry(arg)`. With `CLONE_PIDFD` in
/// `flags`, the pidfd is returned. Async-signal-safe (raw `mmap`, `clone`,
/// `munmap`): a child may call it to start a grandchild.
///
/// # Safety
/// `entry` runs in the child sharing the host's memory while the host's
/// other threads go on: it may only call the async-signal-safe functions
/// of this module on memory that `arg` borrows (alive until this returns),
/// must reset signal handlers ([`default_signal_handlers`]) before it
/// unblocks any signal, and must end with [`execve`] or [`exit`]. The
/// caller blocks every signal around the call ([`block_signals`]).
pub(super) unsafe fn clone_vm(
    entry: extern "C" fn(*mut libc::c_void) -> c_int,
    arg: *mut libc::c_void,
    flags: c_int,
) -> std::io::Result<(libc::pid_t, Option<OwnedFd>)> {
    let page = 4096;
    let len = CHILD_STACK + page;
    // SAFETY: a fresh private anonymous mapping, unmapped below.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the lowest page of the mapping just made: the guard.
    unsafe { libc::mprotect(base, page, libc::PROT_NONE) };
    let flags = flags | libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD;
    let mut pidfd: c_int = -1;
    // SAFETY: the stack grows down from the end of the mapping (16-byte
    // aligned); with CLONE_PIDFD the kernel writes the pidfd where the
    // parent_tid argument points. CLONE_VFORK: when clone returns, the
    // child no longer uses the stack or `arg`.
    let pid = unsafe {
        let top = base.cast::<u8>().add(len).cast::<libc::c_void>();
        libc::clone(entry, top, flags, arg, &mut pidfd as *mut c_int)
    };
    let cloned = match pid {
        pid if pid > 0 => {
            // SAFETY: with CLONE_PIDFD the kernel wrote a new pidfd we now own.
            let pidfd = (flags & libc::CLONE_PIDFD != 0 && pidfd >= 0)
                .then(|| unsafe { OwnedFd::from_raw_fd(pidfd) });
            Ok((pid as libc::pid_t, pidfd))
        }
        _ => Err(std::io::Error::last_os_error()),
    };
    // SAFETY: the mapping made above, no longer used by anyone.
    unsafe { libc::munmap(base, len) };
    cloned
}

/// Waits for the child `pid` (not a pidfd) to exit and reaps it; returns
/// its exit code, or `None` when it was killed or could not be waited for.
pub(super) fn reap(pid: libc::pid_t) -> Option<c_int> {
    loop {
        let mut status: c_int = 0;
        // SAFETY: a valid pointer to a status word.
        let ret = unsafe { libc::waitpid(pid, &mut status, libc::__WALL) };
        if ret == pid {
            return libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
        }
        if ret < 0 && errno() == libc::EINTR {
            continue;
        }
        return None;
    }
}

/// Moves the calling process into the namespace `fd` refers to, of type
/// `nstype` (`CLONE_NEWUSER`, `CLONE_NEWNET`, …).
pub(super) fn setns(fd: RawFd, nstype: c_int) -> SysResult<()> {
    // SAFETY: plain integers only.
    check(unsafe { libc::setns(fd, nstype) } as c_long).map(drop)
}

/// Ends the child at once.
pub(super) fn exit(code: c_int) -> ! {
    // SAFETY: _exit never returns and runs no atexit handlers.
    unsafe { libc::_exit(code) }
}

pub(super) fn write_all(fd: RawFd, mut bytes: &[u8]) -> SysResult<()> {
    while !bytes.is_empty() {
        // SAFETY: writes from a live slice of the length given.
        let n = check(unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) } as c_long)?;
        bytes = bytes.get(n as usize..).unwrap_or_default();
    }
    Ok(())
}

pub(super) fn open(path: &CStr, flags: c_int) -> SysResult<RawFd> {
    // SAFETY: path is a valid C string.
    check_fd(unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC, 0o600) } as c_long)
}

pub(super) fn openat(dir: RawFd, path: &CStr, flags: c_int) -> SysResult<RawFd> {
    // SAFETY: path is a valid C string.
    check_fd(unsafe { libc::openat(dir, path.as_ptr(), flags | libc::O_CLOEXEC, 0o600) } as c_long)
}

pub(super) fn close(fd: RawFd) {
    // SAFETY: closes a descriptor the caller owns and no longer uses.
    unsafe { libc::close(fd) };
}

/// An `O_PATH` descriptor for `rel` beneath `dir`, following no symlink
/// (the last component may be one: the descriptor is then the link).
pub(super) fn open_beneath_nofollow(dir: RawFd, rel: &CStr) -> SysResult<RawFd> {
    #[repr(C)]
    struct OpenHow {
        flags: u64,
        mode: u64,
        resolve: u64,
    }
    let how = OpenHow {
        flags: (libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    // SAFETY: a valid open_how of the size passed and a valid C string.
    check_fd(unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir,
            rel.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    })
}

/// `open_tree(dir, path, OPEN_TREE_CLONE | flags)`: a detached copy of the
/// mount at `path`.
pub(super) fn clone_tree(dir: RawFd, path: &CStr, flags: u32) -> SysResult<RawFd> {
    let flags = OPEN_TREE_CLONE | libc::O_CLOEXEC as u32 | flags;
    // SAFETY: path is a valid C string.
    check_fd(unsafe { libc::syscall(libc::SYS_open_tree, dir, path.as_ptr(), flags) })
}

/// Sets `attrs` on the detached mount `mnt` and all its submounts.
pub(super) fn set_mount_attrs(mnt: RawFd, attrs: u64) -> SysResult<()> {
    #[repr(C)]
    struct MountAttr {
        set: u64,
        clr: u64,
        propagation: u64,
        userns_fd: u64,
    }
    let attr = MountAttr {
        set: attrs,
        clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: a valid mount_attr of the size passed; "" is a C string.
    check(unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            mnt,
            c"".as_ptr(),
            AT_EMPTY_PATH | AT_RECURSIVE,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    })
    .map(drop)
}

/// Attaches the detached mount `mnt` on the object `target` refers to.
pub(super) fn move_mount(mnt: RawFd, target: RawFd) -> SysResult<()> {
    // SAFETY: "" is a C string; both descriptors are the caller's.
    check(unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            mnt,
            c"".as_ptr(),
            target,
            c"".as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH,
        )
    })
    .map(drop)
}

/// A detached, empty, read-only tmpfs whose root nobody may list.
pub(super) fn empty_tmpfs() -> SysResult<RawFd> {
    // SAFETY: C strings and plain integers only.
    let fs = check_fd(unsafe { libc::syscall(libc::SYS_fsopen, c"tmpfs".as_ptr(), 1u32) })?;
    let configured = (|| {
        for (key, value) in [(c"mode", c"000"), (c"size", c"4k")] {
            // SAFETY: C strings and plain integers only.
            check(unsafe {
                libc::syscall(
                    libc::SYS_fsconfig,
                    fs,
                    FSCONFIG_SET_STRING,
                    key.as_ptr(),
                    value.as_ptr(),
                    0,
                )
            })?;
        }
        // SAFETY: plain integers and null pointers, as documented for CMD_CREATE.
        check(unsafe {
            libc::syscall(
                libc::SYS_fsconfig,
                fs,
                FSCONFIG_CMD_CREATE,
                std::ptr::null::<c_char>(),
                std::ptr::null::<c_char>(),
                0,
            )
        })?;
        let attrs = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
        // SAFETY: plain integers only.
        check_fd(unsafe { libc::syscall(libc::SYS_fsmount, fs, 1u32, attrs) })
    })();
    close(fs);
    configured
}

pub(super) fn mount(
    source: &CStr,
    target: &CStr,
    fstype: Option<&CStr>,
    flags: libc::c_ulong,
    data: Option<&CStr>,
) -> SysResult<()> {
    let fstype = fstype.map_or(std::ptr::null(), CStr::as_ptr);
    let data = data.map_or(std::ptr::null(), |d| d.as_ptr().cast());
    // SAFETY: valid C strings or null pointers, as mount(2) accepts.
    check(unsafe { libc::mount(source.as_ptr(), target.as_ptr(), fstype, flags, data) } as c_long)
        .map(drop)
}

pub(super) fn mkdirat(dir: RawFd, name: &CStr, mode: libc::mode_t) -> SysResult<()> {
    // SAFETY: name is a valid C string.
    match check(unsafe { libc::mkdirat(dir, name.as_ptr(), mode) } as c_long) {
        Err(libc::EEXIST) => Ok(()),
        other => other.map(drop),
    }
}

pub(super) fn chdir(path: &CStr) -> SysResult<()> {
    // SAFETY: path is a valid C string.
    check(unsafe { libc::chdir(path.as_ptr()) } as c_long).map(drop)
}

/// Allows `access` beneath the directory (or on the file) `fd` refers to.
pub(super) fn landlock_allow(ruleset: RawFd, fd: RawFd, access: u64) -> SysResult<()> {
    #[repr(C, packed)]
    struct PathBeneath {
        allowed_access: u64,
        parent_fd: i32,
    }
    let rule = PathBeneath {
        allowed_access: access,
        parent_fd: fd,
    };
    // SAFETY: a valid landlock_path_beneath_attr.
    check(unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            LANDLOCK_RULE_PATH_BENEATH,
            &rule as *const PathBeneath,
            0u32,
        )
    })
    .map(drop)
}

pub(super) fn landlock_restrict(ruleset: RawFd) -> SysResult<()> {
    // SAFETY: plain integers only.
    check(unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) }).map(drop)
}

/// The kernel's Landlock ABI version, or 0 without Landlock.
pub(super) fn landlock_abi() -> u8 {
    // SAFETY: the documented version query: null attr, size 0.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u8::try_from(v).unwrap_or(0)
}

/// Whether the kernel has seccomp filters.
pub(super) fn seccomp_available() -> bool {
    // SAFETY: PR_GET_SECCOMP takes no pointer.
    unsafe { libc::prctl(libc::PR_GET_SECCOMP) >= 0 }
}

pub(super) fn set_no_new_privs() -> SysResult<()> {
    // SAFETY: plain integers only.
    check(unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } as c_long).map(drop)
}

/// Empties the bounding, ambient, effective, permitted and inheritable
/// capability sets: what `execve` runs gets no capability, even as uid 0.
pub(super) fn drop_capabilities(last_cap: u32) -> SysResult<()> {
    for cap in 0..=last_cap {
        // SAFETY: plain integers only.
        match check(unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) } as c_long) {
            Ok(_) | Err(libc::EINVAL) => {}
            Err(e) => return Err(e),
        }
    }
    // SAFETY: plain integers only.
    check(unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        )
    } as c_long)?;
    #[repr(C)]
    struct Header {
        version: u32,
        pid: c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    let header = Header {
        version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
        pid: 0,
    };
    let data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: a v3 header and the two data structs it expects.
    check(unsafe { libc::syscall(libc::SYS_capset, &header as *const Header, data.as_ptr()) })
        .map(drop)
}

pub(super) fn set_rlimit(resource: libc::__rlimit_resource_t, value: u64) -> SysResult<()> {
    let limit = libc::rlimit {
        rlim_cur: value,
        rlim_max: value,
    };
    // SAFETY: a valid rlimit struct.
    check(unsafe { libc::setrlimit(resource, &limit) } as c_long).map(drop)
}

pub(super) fn setsid() -> SysResult<()> {
    // SAFETY: no arguments.
    check(unsafe { libc::setsid() } as c_long).map(drop)
}

pub(super) fn dup2(from: RawFd, to: RawFd) -> SysResult<()> {
    // SAFETY: plain integers only.
    check(unsafe { libc::dup2(from, to) } as c_long).map(drop)
}

/// Marks every descriptor from `first` on close-on-exec.
pub(super) fn cloexec_from(first: u32) -> SysResult<()> {
    // SAFETY: plain integers only.
    check(unsafe {
        libc::syscall(
            libc::SYS_close_range,
            first,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    })
    .map(drop)
}

/// Installs a seccomp filter on the calling thread.
pub(super) fn seccomp_filter(program: &[seccompiler::sock_filter]) -> SysResult<()> {
    let prog = libc::sock_fprog {
        len: u16::try_from(program.len()).map_err(|_| libc::E2BIG)?,
        // The kernel only reads the program; seccompiler's sock_filter has
        // libc's layout (repr(C), same fields).
        filter: program.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: a valid sock_fprog over a live program.
    check(unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            SECCOMP_SET_MODE_FILTER,
            0u32,
            &prog as *const libc::sock_fprog,
        )
    })
    .map(drop)
}

/// Runs `program`; returns only on failure.
pub(super) fn execve(program: &CStr, argv: &CArray<'_>, envp: &CArray<'_>) -> Errno {
    // SAFETY: NULL-terminated arrays of live C strings (CArray's invariant).
    unsafe { libc::execve(program.as_ptr(), argv.ptrs.as_ptr(), envp.ptrs.as_ptr()) };
    errno()
}
