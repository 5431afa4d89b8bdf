//! Preparing a confined child in the parent, and starting it.
//!
//! Invariant: every path, string, descriptor, ruleset and BPF program the
//! child uses is made here, before the clone; the child only makes system
//! calls. The clone (made by a starter inside the shared network
//! namespace) creates the child directly in its new pid namespace, so
//! the command is the namespace's pid 1: when it ends, or is killed, the
//! kernel kills everything else in the namespace, and no second fork is
//! needed.

use std::ffi::{CString, OsStr};
use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

use super::cgroup::CallCgroup;
use super::child::{Bind, ChildPlan, Cover, MAX_TMP_BINDS, ProtectedMount, Stage};
use super::landlock::{self as ll, Allowed};
use super::protected::{self, Kind, Scan};
use super::{
    AppliedConfinement, Namespace, ProcessBound, ProcessError, ProcessGrant, ProcessRequest, env,
    seccomp, spawner, support,
};
use crate::capability::FsAccess;

/// A child ready to start, and the parent's ends of its pipes.
pub(super) struct Prepared {
    plan: Option<ChildPlan>,
    /// The parent's ends of stdin, stdout and stderr, taken by the
    /// supervisor.
    pub pipes: Option<[OwnedFd; 3]>,
    errors: std::io::PipeReader,
    pub cgroup: Option<CallCgroup>,
    /// The protected paths before the call, under a read-write grant.
    pub before: Option<Scan>,
    pub confinement: AppliedConfinement,
}

/// A started child.
pub(super) struct Started {
    pub pidfd: OwnedFd,
    pub started: Instant,
    /// The child's mount namespace, to release once the tree is gone.
    pub mount_ns: Option<OwnedFd>,
}

fn prepare_err(what: &'static str) -> impl Fn(std::io::Error) -> ProcessError {
    move |source| ProcessError::Prepare { what, source }
}

fn cstring(bytes: &[u8], what: &str) -> Result<CString, ProcessError> {
    CString::new(bytes).map_err(|_| ProcessError::BadCommand(format!("{what} holds a NUL byte")))
}

/// Everything the child will need, made now.
pub(super) fn prepare(
    grant: &ProcessGrant,
    request: &ProcessRequest,
    bound: ProcessBound,
) -> Result<Prepared, ProcessError> {
    let Some(program) = request.argv.first() else {
        return Err(ProcessError::BadCommand("empty command line".into()));
    };
    let argv = request
        .argv
        .iter()
        .map(|a| cstring(a.as_bytes(), "an argument"))
        .collect::<Result<Vec<_>, _>>()?;
    let cwd = working_dir(&grant.workspace, &request.cwd)?;
    let host_env: Vec<_> = std::env::vars_os().collect();
    let mut reachable: Vec<&Path> = ll::SYSTEM_DIRS.iter().map(Path::new).collect();
    reachable.extend(grant.toolchains.iter().map(PathBuf::as_path));
    reachable.push(&grant.workspace);
    let env = env::child_env(&host_env, &grant.env, &reachable)?;
    let program = resolve(program, &cwd, env::path_of(&env))?;

    let refused_reads = grant.protected.refuses_reads();
    let scan = match (grant.access, refused_reads) {
        (FsAccess::ReadOnly, false) => protected::scan_gitdirs(&grant.workspace, &grant.protected),
        _ => protected::scan(&grant.workspace, &grant.protected)
            .map_err(prepare_err("scanning the workspace for protected paths"))?,
    };
    let protected_mounts = scan
        .paths
        .iter()
        .map(|(rel, kind)| {
            let cover = match (refused_reads, kind) {
                (false, _) | (true, Kind::Symlink) => Cover::ReadOnly,
                (true, Kind::Dir) => Cover::UnreadableDir,
                (true, Kind::File) => Cover::UnreadableFile,
            };
            Ok(ProtectedMount {
                rel: cstring(rel.as_os_str().as_bytes(), "a protected path")?,
                cover,
            })
        })
        .collect::<Result<Vec<_>, ProcessError>>()?;
    let readable: &[PathBuf] = match refused_reads {
        true => &[],
        false => &scan.gitdirs,
    };
    let mut binds = Vec::new();
    for dir in readable {
        binds.push(bind(dir, true)?);
    }
    if under_tmp(&grant.workspace).is_some() {
        binds.push(bind(&grant.workspace, grant.access == FsAccess::ReadOnly)?);
    }
    for dir in grant.toolchains.iter().filter(|d| under_tmp(d).is_some()) {
        binds.push(bind(dir, true)?);
    }
    if binds.iter().filter(|b| b.under_tmp.is_some()).count() > MAX_TMP_BINDS {
        return Err(ProcessError::BadCommand(format!(
            "more than {MAX_TMP_BINDS} granted directories lie under /tmp"
        )));
    }
    let ruleset = ll::ruleset(&Allowed {
        workspace: &grant.workspace,
        access: grant.access,
        toolchains: &grant.toolchains,
        readable,
    })?;

    let (cgroup, cgroup_procs) = match (bound, &support().pids_cgroup) {
        (ProcessBound::Cgroup, Some(parent)) => {
            let (cg, procs) = CallCgroup::create(parent, grant.limits.processes)
                .map_err(prepare_err("creating the call's pids cgroup"))?;
            (Some(cg), Some(procs))
        }
        _ => (None, None),
    };
    let limits = &grant.limits;
    let mut rlimits = vec![
        (libc::RLIMIT_CPU, limits.cpu_seconds),
        (libc::RLIMIT_FSIZE, limits.file_size),
        (libc::RLIMIT_NOFILE, limits.open_files),
        (libc::RLIMIT_CORE, 0),
    ];
    if let Some(bytes) = limits.address_space {
        rlimits.push((libc::RLIMIT_AS, bytes));
    }
    if bound == ProcessBound::Rlimit {
        rlimits.push((libc::RLIMIT_NPROC, limits.processes));
    }

    let (stdin_r, stdin_w) = std::io::pipe().map_err(prepare_err("making a pipe"))?;
    let (stdout_r, stdout_w) = std::io::pipe().map_err(prepare_err("making a pipe"))?;
    let (stderr_r, stderr_w) = std::io::pipe().map_err(prepare_err("making a pipe"))?;
    let (errors, error_w) = std::io::pipe().map_err(prepare_err("making a pipe"))?;
    let uid = rustix::process::geteuid().as_raw();
    let gid = rustix::process::getegid().as_raw();
    let seccomp = seccomp::programs().map_err(|e| ProcessError::Prepare {
        what: "compiling the seccomp filter",
        source: std::io::Error::other(e),
    })?;
    let confinement = AppliedConfinement {
        mode: grant.mode,
        landlock_abi: ll::ABI_USED as u8,
        namespaces: vec![
            Namespace::User,
            Namespace::Mount,
            Namespace::Pid,
            Namespace::Network,
            Namespace::Ipc,
            Namespace::Uts,
        ],
        seccomp: true,
        process_bound: bound,
        protected_mounts: protected_mounts.len(),
    };
    let plan = ChildPlan {
        cgroup_procs,
        uid_map: cstring(format!("{uid} {uid} 1").as_bytes(), "uid map")?,
        gid_map: cstring(format!("{gid} {gid} 1").as_bytes(), "gid map")?,
        workspace: cstring(grant.workspace.as_os_str().as_bytes(), "the workspace path")?,
        protected: protected_mounts,
        binds,
        tmp_options: cstring(format!("mode=1777,size={}", limits.tmp_size).as_bytes(), "")?,
        cwd: cstring(cwd.as_os_str().as_bytes(), "the working directory")?,
        ruleset,
        tmp_access: ll::all_fs().bits(),
        last_cap: last_cap(),
        rlimits,
        seccomp,
        stdin: stdin_r.into(),
        stdout: stdout_w.into(),
        stderr: stderr_w.into(),
        error_pipe: error_w.into(),
        program: cstring(program.as_os_str().as_bytes(), "the program path")?,
        argv,
        env,
    };
    Ok(Prepared {
        plan: Some(plan),
        pipes: Some([stdin_w.into(), stdout_r.into(), stderr_r.into()]),
        errors,
        cgroup,
        before: (grant.access == FsAccess::ReadWrite).then_some(scan),
        confinement,
    })
}

/// Starts the child (on the spawner thread when the host is confined) and
/// waits until it has executed the program or failed to.
pub(super) fn start(prepared: &mut Prepared) -> Result<Started, ProcessError> {
    let Some(plan) = prepared.plan.take() else {
        return Err(ProcessError::BadCommand(
            "the process was already started".into(),
        ));
    };
    let program = plan.program.to_string_lossy().into_owned();
    let spawner::Launched { pidfd, mount_ns } =
        spawner::launch(plan).map_err(prepare_err("starting the confined process"))?;
    let started = Instant::now();
    let mut report = [0u8; 8];
    let mut got = 0;
    while got < report.len() {
        match prepared.errors.read(&mut report[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(prepare_err("reading the child's setup report")(e)),
        }
    }
    if got == 0 {
        return Ok(Started {
            pidfd,
            started,
            mount_ns,
        });
    }
    let _ = rustix::process::waitid(
        rustix::process::WaitId::PidFd(std::os::fd::AsFd::as_fd(&pidfd)),
        rustix::process::WaitIdOptions::EXITED,
    );
    let [s0, s1, s2, s3, e0, e1, e2, e3] = report;
    let stage = Stage::from_code(u32::from_ne_bytes([s0, s1, s2, s3])).unwrap_or(Stage::Exec);
    let source = std::io::Error::from_raw_os_error(i32::from_ne_bytes([e0, e1, e2, e3]));
    Err(match stage {
        Stage::Exec => ProcessError::Exec { program, source },
        other => ProcessError::Confine {
            stage: other.name(),
            source,
        },
    })
}

/// The components of `dir` below `/tmp`, if it lies there.
fn under_tmp(dir: &Path) -> Option<Vec<&OsStr>> {
    let rel = dir.strip_prefix("/tmp").ok()?;
    let parts: Vec<&OsStr> = rel.iter().collect();
    (!parts.is_empty()).then_some(parts)
}

fn bind(dir: &Path, readonly: bool) -> Result<Bind, ProcessError> {
    let under_tmp = under_tmp(dir)
        .map(|parts| {
            parts
                .iter()
                .map(|p| cstring(p.as_bytes(), "a directory name"))
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    Ok(Bind {
        abs: cstring(dir.as_os_str().as_bytes(), "a directory path")?,
        readonly,
        under_tmp,
    })
}

/// `rel` inside `workspace`, canonical, refusing anything that leaves it.
fn working_dir(workspace: &Path, rel: &Path) -> Result<PathBuf, ProcessError> {
    let bad = |reason: &str| ProcessError::BadCwd {
        cwd: rel.to_path_buf(),
        reason: reason.into(),
    };
    if rel
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(bad("must be relative to the workspace, without `..`"));
    }
    let dir = workspace
        .join(rel)
        .canonicalize()
        .map_err(|e| bad(&format!("cannot resolve it: {e}")))?;
    if !dir.starts_with(workspace) {
        return Err(bad("it leads out of the workspace (through a symlink)"));
    }
    if !dir.is_dir() {
        return Err(bad("not a directory"));
    }
    Ok(dir)
}

/// The program's path: as given when it holds a `/` (relative to `cwd`),
/// else the first executable file of that name in `path`.
fn resolve(program: &OsStr, cwd: &Path, path: &[u8]) -> Result<PathBuf, ProcessError> {
    let name = program.as_bytes();
    if name.contains(&b'/') {
        return Ok(cwd.join(program));
    }
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    path.split(|b| *b == b':')
        .filter(|dir| !dir.is_empty())
        .map(|dir| Path::new(OsStr::from_bytes(dir)).join(program))
        .find(|p| executable(p))
        .ok_or_else(|| ProcessError::ProgramNotFound(program.to_string_lossy().into_owned()))
}

/// The highest capability number this kernel knows.
fn last_cap() -> u32 {
    static LAST: OnceLock<u32> = OnceLock::new();
    *LAST.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(63)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_working_directory_outside_the_workspace_is_refused() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("out")).unwrap();
        assert_eq!(
            working_dir(&root, Path::new("sub")).unwrap(),
            root.join("sub")
        );
        assert_eq!(working_dir(&root, Path::new("")).unwrap(), root);
        for bad in ["../x", "/etc", "sub/../..", "out", "missing"] {
            let err = working_dir(&root, Path::new(bad)).unwrap_err();
            assert!(matches!(err, ProcessError::BadCwd { .. }), "{bad}: {err}");
        }
    }
}
