//! What the child does between `clone` and `execve`: joins its cgroup,
//! maps its uid, builds its mounts, confines itself and runs the command;
//! and the starter that clones it from inside the shared network namespace.
//!
//! Invariant: the child only runs the async-signal-safe calls of [`sys`]
//! on the [`ChildPlan`] the parent prepared (no allocation, no locks, no
//! writes to the host's memory, which it shares until it execs), and
//! it either runs the command fully confined or reports the stage that
//! failed on the error pipe and exits: it never runs the command with less.

use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, IntoRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicI32, Ordering};

use super::sys::{self, CArray, Errno, SysResult};

/// The most directories that can be carried into the private `/tmp`.
pub(super) const MAX_TMP_BINDS: usize = 8;

/// How a protected path is covered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cover {
    /// A read-only mount of itself (a symlink is pinned the same way).
    ReadOnly,
    /// An unreadable empty file (`/dev/null` mounted `nodev`).
    UnreadableFile,
    /// An empty read-only tmpfs nobody may list.
    UnreadableDir,
}

/// A protected path, relative to the workspace.
#[derive(Debug)]
pub(super) struct ProtectedMount {
    pub rel: CString,
    pub cover: Cover,
}

/// A directory re-mounted for the child: read-only if asked, and carried
/// into the private `/tmp` when it lies under `/tmp`.
#[derive(Debug)]
pub(super) struct Bind {
    pub abs: CString,
    pub readonly: bool,
    /// Components below `/tmp`, when the directory lies there.
    pub under_tmp: Option<Vec<CString>>,
}

/// Everything the child needs, prepared by the parent.
#[derive(Debug)]
pub(super) struct ChildPlan {
    pub cgroup_procs: Option<OwnedFd>,
    pub uid_map: CString,
    pub gid_map: CString,
    pub workspace: CString,
    pub protected: Vec<ProtectedMount>,
    pub binds: Vec<Bind>,
    pub tmp_options: CString,
    pub cwd: CString,
    pub ruleset: OwnedFd,
    /// Landlock rights on the private `/tmp`.
    pub tmp_access: u64,
    pub last_cap: u32,
    pub rlimits: Vec<(libc::__rlimit_resource_t, u64)>,
    pub seccomp: &'static [Vec<seccompiler::sock_filter>],
    pub stdin: OwnedFd,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
    pub error_pipe: OwnedFd,
    pub program: CString,
    pub argv: Vec<CString>,
    pub env: Vec<CString>,
}

/// A step of the child's setup, reported to the parent when it fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub(super) enum Stage {
    JoinCgroup,
    MapUser,
    PrivateMounts,
    ProtectPath,
    BindDir,
    MountProc,
    MountTmp,
    Chdir,
    NoNewPrivs,
    DropCapabilities,
    Landlock,
    Rlimit,
    Setsid,
    Stdio,
    Seccomp,
    Exec,
}

const STAGES: [Stage; 16] = [
    Stage::JoinCgroup,
    Stage::MapUser,
    Stage::PrivateMounts,
    Stage::ProtectPath,
    Stage::BindDir,
    Stage::MountProc,
    Stage::MountTmp,
    Stage::Chdir,
    Stage::NoNewPrivs,
    Stage::DropCapabilities,
    Stage::Landlock,
    Stage::Rlimit,
    Stage::Setsid,
    Stage::Stdio,
    Stage::Seccomp,
    Stage::Exec,
];

impl Stage {
    pub(super) fn from_code(code: u32) -> Option<Stage> {
        STAGES.get(code as usize).copied()
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Stage::JoinCgroup => "joining the call's pids cgroup",
            Stage::MapUser => "mapping the user namespace",
            Stage::PrivateMounts => "making mounts private",
            Stage::ProtectPath => "mounting a protected path read-only",
            Stage::BindDir => "re-mounting a granted directory",
            Stage::MountProc => "mounting a fresh /proc",
            Stage::MountTmp => "mounting the private /tmp",
            Stage::Chdir => "entering the working directory",
            Stage::NoNewPrivs => "setting no_new_privs",
            Stage::DropCapabilities => "dropping capabilities",
            Stage::Landlock => "applying the Landlock ruleset",
            Stage::Rlimit => "setting resource limits",
            Stage::Setsid => "starting a session",
            Stage::Stdio => "connecting standard streams",
            Stage::Seccomp => "installing the seccomp filter",
            Stage::Exec => "executing the program",
        }
    }
}

type Step<T> = Result<T, (Stage, Errno)>;

fn at(stage: Stage) -> impl Fn(Errno) -> (Stage, Errno) {
    move |e| (stage, e)
}

/// What the child is started with: it reads it from the host's memory,
/// which it shares until it execs.
pub(super) struct Start<'a> {
    pub plan: &'a ChildPlan,
    pub argv: &'a CArray<'a>,
    pub envp: &'a CArray<'a>,
    /// The signal mask to exec the command with (the host's, before it
    /// blocked every signal for the clone).
    pub mask: libc::sigset_t,
    /// The shared user and network namespaces the command's child joins
    /// (see [`enter`]).
    pub user_ns: RawFd,
    pub net_ns: RawFd,
    /// Written by [`enter`]: the command's pid and pidfd (in the host's
    /// descriptor table), or why it could not start it.
    pub pid: AtomicI32,
    pub pidfd: AtomicI32,
    pub errno: AtomicI32,
}

/// The entry point of the short-lived process that starts the command's
/// child (cloned with `CLONE_FILES`, so its descriptors are the host's):
/// it joins the shared user and network namespaces, clones the child into
/// its new namespaces (nested there) as a child of the host
/// (`CLONE_PARENT`), and exits. `arg` is a [`Start`].
pub(super) extern "C" fn enter(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: clone_with passes a live Start, which outlives this process.
    let start = unsafe { &*arg.cast::<Start<'_>>() };
    let joined = sys::setns(start.user_ns, libc::CLONE_NEWUSER)
        .and_then(|()| sys::setns(start.net_ns, libc::CLONE_NEWNET));
    if let Err(errno) = joined {
        start.errno.store(errno, Ordering::SeqCst);
        sys::exit(1)
    }
    let flags = sys::CONFINED_FLAGS | libc::CLONE_PARENT | libc::CLONE_PIDFD;
    // SAFETY: the child runs only `entry` (see its contract) on `start`,
    // alive until this process exits, after the child has exec'd or exited.
    match unsafe { sys::clone_vm(entry, arg, flags) } {
        Ok((pid, pidfd)) => {
            start.pid.store(pid, Ordering::SeqCst);
            let pidfd = pidfd.map_or(-1, IntoRawFd::into_raw_fd);
            start.pidfd.store(pidfd, Ordering::SeqCst);
            sys::exit(0)
        }
        Err(e) => {
            let errno = e.raw_os_error().unwrap_or(libc::EIO);
            start.errno.store(errno, Ordering::SeqCst);
            sys::exit(1)
        }
    }
}

/// The command's child's entry point (see [`sys::clone_vm`]): `arg` is a
/// [`Start`].
pub(super) extern "C" fn entry(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: clone_with passes a live Start, which outlives the child's
    // use of it (the parent sleeps until the child execs or exits).
    let start = unsafe { &*arg.cast::<Start<'_>>() };
    run(start)
}

/// Confines the calling (child) process and runs the command; on failure
/// reports the stage and errno on the error pipe and exits with 127.
fn run(start: &Start<'_>) -> ! {
    // No handler of the host may run here: every signal is blocked until
    // the handlers are back to their defaults.
    sys::default_signal_handlers();
    let plan = start.plan;
    let (stage, errno) = match setup(plan) {
        Ok(()) => {
            sys::set_signal_mask(&start.mask);
            (
                Stage::Exec,
                sys::execve(&plan.program, start.argv, start.envp),
            )
        }
        Err(failure) => failure,
    };
    let mut report = [0u8; 8];
    report[..4].copy_from_slice(&(stage as u32).to_ne_bytes());
    report[4..].copy_from_slice(&(errno as u32).to_ne_bytes());
    let _ = sys::write_all(plan.error_pipe.as_raw_fd(), &report);
    sys::exit(127)
}

fn setup(plan: &ChildPlan) -> Step<()> {
    if let Some(procs) = &plan.cgroup_procs {
        sys::write_all(procs.as_raw_fd(), b"0").map_err(at(Stage::JoinCgroup))?;
    }
    map_user(&plan.uid_map, &plan.gid_map).map_err(at(Stage::MapUser))?;
    sys::mount(c"none", c"/", None, libc::MS_REC | libc::MS_PRIVATE, None)
        .map_err(at(Stage::PrivateMounts))?;
    protect(plan).map_err(at(Stage::ProtectPath))?;
    let mut carried = [-1 as RawFd; MAX_TMP_BINDS];
    bind_dirs(plan, &mut carried).map_err(at(Stage::BindDir))?;
    let proc_flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    sys::mount(c"proc", c"/proc", Some(c"proc"), proc_flags, None).map_err(at(Stage::MountProc))?;
    private_tmp(plan, &carried).map_err(at(Stage::MountTmp))?;
    sys::chdir(&plan.cwd).map_err(at(Stage::Chdir))?;
    sys::setsid().map_err(at(Stage::Setsid))?;
    sys::set_no_new_privs().map_err(at(Stage::NoNewPrivs))?;
    sys::drop_capabilities(plan.last_cap).map_err(at(Stage::DropCapabilities))?;
    sys::landlock_restrict(plan.ruleset.as_raw_fd()).map_err(at(Stage::Landlock))?;
    for &(resource, value) in &plan.rlimits {
        sys::set_rlimit(resource, value).map_err(at(Stage::Rlimit))?;
    }
    stdio(plan).map_err(at(Stage::Stdio))?;
    for program in plan.seccomp {
        sys::seccomp_filter(program).map_err(at(Stage::Seccomp))?;
    }
    Ok(())
}

/// Maps the calling process's ids in its new user namespace, with
/// `setgroups` denied.
pub(super) fn map_user(uid_map: &CStr, gid_map: &CStr) -> SysResult<()> {
    for (path, content) in [
        (c"/proc/self/setgroups", c"deny"),
        (c"/proc/self/uid_map", uid_map),
        (c"/proc/self/gid_map", gid_map),
    ] {
        let fd = sys::open(path, libc::O_WRONLY)?;
        let written = sys::write_all(fd, content.to_bytes());
        sys::close(fd);
        written?;
    }
    Ok(())
}

/// Covers each protected path, found beneath the workspace without
/// following any symlink, with a mount made through its descriptor.
fn protect(plan: &ChildPlan) -> SysResult<()> {
    if plan.protected.is_empty() {
        return Ok(());
    }
    let workspace = sys::open(&plan.workspace, libc::O_PATH | libc::O_DIRECTORY)?;
    let covered = plan.protected.iter().try_for_each(|p| cover(workspace, p));
    sys::close(workspace);
    covered
}

fn cover(workspace: RawFd, path: &ProtectedMount) -> SysResult<()> {
    let target = sys::open_beneath_nofollow(workspace, &path.rel)?;
    let attrs = sys::MOUNT_ATTR_RDONLY | sys::MOUNT_ATTR_NOSUID | sys::MOUNT_ATTR_NODEV;
    let mnt = match path.cover {
        Cover::ReadOnly => sys::clone_tree(target, c"", sys::AT_EMPTY_PATH | sys::AT_RECURSIVE)
            .and_then(|m| {
                sys::set_mount_attrs(m, attrs)
                    .map(|()| m)
                    .inspect_err(|_| sys::close(m))
            }),
        Cover::UnreadableFile => sys::clone_tree(libc::AT_FDCWD, c"/dev/null", 0).and_then(|m| {
            sys::set_mount_attrs(m, attrs | sys::MOUNT_ATTR_NOEXEC)
                .map(|()| m)
                .inspect_err(|_| sys::close(m))
        }),
        Cover::UnreadableDir => sys::empty_tmpfs(),
    };
    let moved = mnt.and_then(|m| {
        let moved = sys::move_mount(m, target);
        sys::close(m);
        moved
    });
    sys::close(target);
    moved
}

/// Re-mounts the granted directories that need it: read-only ones in
/// place, and those under `/tmp` detached (into `carried`), to be attached
/// again inside the private `/tmp`.
fn bind_dirs(plan: &ChildPlan, carried: &mut [RawFd; MAX_TMP_BINDS]) -> SysResult<()> {
    let mut slots = carried.iter_mut();
    for bind in &plan.binds {
        let mnt = sys::clone_tree(libc::AT_FDCWD, &bind.abs, sys::AT_RECURSIVE)?;
        if bind.readonly {
            let attrs = sys::MOUNT_ATTR_RDONLY | sys::MOUNT_ATTR_NOSUID | sys::MOUNT_ATTR_NODEV;
            sys::set_mount_attrs(mnt, attrs)?;
        }
        if bind.under_tmp.is_some() {
            let slot = slots.next().ok_or(libc::E2BIG)?;
            *slot = mnt;
            continue;
        }
        let target = sys::open(&bind.abs, libc::O_PATH | libc::O_DIRECTORY)?;
        let moved = sys::move_mount(mnt, target);
        sys::close(target);
        sys::close(mnt);
        moved?;
    }
    Ok(())
}

/// Mounts the private `/tmp` with its `home`, attaches the carried
/// directories at their paths inside it, and allows it in the ruleset.
fn private_tmp(plan: &ChildPlan, carried: &[RawFd; MAX_TMP_BINDS]) -> SysResult<()> {
    let flags = libc::MS_NOSUID | libc::MS_NODEV;
    sys::mount(
        c"tmpfs",
        c"/tmp",
        Some(c"tmpfs"),
        flags,
        Some(&plan.tmp_options),
    )?;
    let tmp = sys::open(c"/tmp", libc::O_PATH | libc::O_DIRECTORY)?;
    sys::mkdirat(tmp, c"home", 0o700)?;
    let mut slots = carried.iter();
    for components in plan.binds.iter().filter_map(|b| b.under_tmp.as_ref()) {
        let mnt = *slots.next().ok_or(libc::E2BIG)?;
        let mut dir = sys::open(c"/tmp", libc::O_PATH | libc::O_DIRECTORY)?;
        for name in components {
            sys::mkdirat(dir, name, 0o755)?;
            let next = sys::openat(
                dir,
                name,
                libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW,
            );
            sys::close(dir);
            dir = next?;
        }
        let moved = sys::move_mount(mnt, dir);
        sys::close(dir);
        sys::close(mnt);
        moved?;
    }
    let allowed = sys::landlock_allow(plan.ruleset.as_raw_fd(), tmp, plan.tmp_access);
    sys::close(tmp);
    allowed
}

fn stdio(plan: &ChildPlan) -> SysResult<()> {
    sys::dup2(plan.stdin.as_raw_fd(), 0)?;
    sys::dup2(plan.stdout.as_raw_fd(), 1)?;
    sys::dup2(plan.stderr.as_raw_fd(), 2)?;
    sys::cloexec_from(3)
}
