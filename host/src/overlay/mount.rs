//! Mounting a run's overlay on its workspace, for the whole process.
//!
//! The process enters a user and mount namespace of its own and mounts
//! overlayfs (lower: the workspace, upper: the overlay's `upper/`) on the
//! workspace path itself. From then on every lookup of a path under the
//! workspace, by this process or the commands it starts (they inherit the
//! namespace), sees the merged tree; the workspace in the user's own
//! namespace is untouched.
//!
//! Invariant: it runs while the process has one thread (`unshare` of a user
//! namespace requires it) and before anything opens a file in the workspace
//! for writing: a descriptor opened before would still point at the lower
//! directory.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::{Overlay, OverlayError};

/// Why the machine cannot overlay a workspace (see [`OverlayError::Unsupported`]).
fn unsupported(why: String) -> OverlayError {
    OverlayError::Unsupported(why)
}

/// Whether `--review` can work here for `workspace` with data directory
/// `data_dir`, checked without changing anything.
pub fn check_placement(workspace: &Path, data_dir: &Path) -> Result<(), OverlayError> {
    let data_dir = &resolved(data_dir);
    let workspace = &resolved(workspace);
    if data_dir.starts_with(workspace) || workspace.starts_with(data_dir) {
        return Err(OverlayError::Overlapping {
            workspace: workspace.to_path_buf(),
            data_dir: data_dir.to_path_buf(),
        });
    }
    let threads = std::fs::read_dir("/proc/self/task").map(|d| d.count());
    match threads {
        Ok(1) => Ok(()),
        Ok(n) => Err(OverlayError::Threaded(n)),
        Err(e) => Err(unsupported(format!("cannot read /proc/self/task: {e}"))),
    }
}

/// `path` with its symlinks resolved, as far as it exists (a data
/// directory not made yet is compared by where its parent really is).
fn resolved(path: &Path) -> std::path::PathBuf {
    let mut rest = Vec::new();
    let mut at = path;
    loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            return rest.iter().rev().fold(real, |p, c| p.join(c));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                at = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Mount `overlay` on `workspace` for this process and its children.
pub fn mount_over(
    overlay: &Overlay,
    workspace: &Path,
    data_dir: &Path,
) -> Result<(), OverlayError> {
    check_placement(workspace, data_dir)?;
    probe_user_xattrs(&overlay.work())?;
    let cwd = std::env::current_dir().ok();
    enter_namespaces()?;
    // Mounts made from now on stay in this namespace.
    mount(
        None,
        Path::new("/"),
        None,
        libc::MS_REC | libc::MS_PRIVATE,
        None,
    )
    .map_err(|e| unsupported(format!("cannot make the mounts private: {e}")))?;
    let options = format!(
        "lowerdir={},upperdir={},workdir={},userxattr",
        escaped(workspace),
        escaped(&overlay.upper()),
        escaped(&overlay.work())
    );
    mount(
        Some("overlay"),
        workspace,
        Some("overlay"),
        0,
        Some(&options),
    )
    .map_err(|e| {
        unsupported(format!(
            "the kernel refused an overlay filesystem in a user namespace \
             (Linux 5.11 or later is needed): {e}"
        ))
    })?;
    // The working directory was looked up before the mount: look it up
    // again so relative paths resolve through the overlay too.
    if let Some(cwd) = cwd {
        let _ = std::env::set_current_dir(cwd);
    }
    Ok(())
}

/// overlayfs with `userxattr` keeps its metadata in `user.` extended
/// attributes of the upper filesystem: fail early where there are none.
fn probe_user_xattrs(dir: &Path) -> Result<(), OverlayError> {
    let path = cstring(dir)?;
    let name = c"user.warden.probe";
    // SAFETY: both strings are NUL-terminated and outlive the calls.
    let set = unsafe { libc::setxattr(path.as_ptr(), name.as_ptr(), c"y".as_ptr().cast(), 1, 0) };
    if set != 0 {
        let e = std::io::Error::last_os_error();
        return Err(OverlayError::NoUserXattrs {
            dir: dir.to_path_buf(),
            message: e.to_string(),
        });
    }
    // SAFETY: as above.
    unsafe { libc::removexattr(path.as_ptr(), name.as_ptr()) };
    Ok(())
}

/// `unshare` a user and a mount namespace. The caller keeps its own ids
/// (mapped to themselves); root keeps every id, so it still reaches files
/// of other users (a helper process still outside writes that map: a
/// process cannot map more than its own id in the namespace it just made).
fn enter_namespaces() -> Result<(), OverlayError> {
    // SAFETY: plain id queries.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS;
    if uid == 0 {
        return unshare_mapped_by_helper(flags);
    }
    unshare(flags)?;
    let maps = [
        ("/proc/self/setgroups", "deny".to_string()),
        ("/proc/self/uid_map", format!("{uid} {uid} 1")),
        ("/proc/self/gid_map", format!("{gid} {gid} 1")),
    ];
    for (file, text) in maps {
        std::fs::write(file, text).map_err(|e| unsupported(format!("cannot write {file}: {e}")))?;
    }
    Ok(())
}

fn unshare(flags: libc::c_int) -> Result<(), OverlayError> {
    // SAFETY: unshare takes no pointers.
    if unsafe { libc::unshare(flags) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(unsupported(format!(
            "cannot create a user namespace (are unprivileged user namespaces disabled?): {e}"
        )));
    }
    Ok(())
}

/// As root: fork a helper that waits until this process has unshared, then
/// maps every id of its new user namespace to itself.
fn unshare_mapped_by_helper(flags: libc::c_int) -> Result<(), OverlayError> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(unsupported(format!("cannot make a pipe: {e}")));
    }
    let [read_end, write_end] = fds;
    // SAFETY: getpid takes nothing.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the process has one thread (checked by the caller), so the
    // child may allocate and use the standard library before it exits.
    let child = unsafe { libc::fork() };
    if child < 0 {
        let e = std::io::Error::last_os_error();
        // SAFETY: closing descriptors this function owns.
        unsafe { (libc::close(read_end), libc::close(write_end)) };
        return Err(unsupported(format!("cannot fork: {e}")));
    }
    if child == 0 {
        // SAFETY: the child's own copies of the descriptors.
        unsafe { libc::close(write_end) };
        let mut byte = 0u8;
        // SAFETY: reading one byte into `byte`.
        let got = unsafe { libc::read(read_end, (&raw mut byte).cast(), 1) };
        let mapped = got == 1
            && ["uid_map", "gid_map"]
                .iter()
                .all(|f| std::fs::write(format!("/proc/{parent}/{f}"), "0 0 4294967295").is_ok());
        // SAFETY: leaving the forked child without running the parent's
        // destructors or atexit handlers.
        unsafe { libc::_exit(if mapped { 0 } else { 1 }) };
    }
    // SAFETY: the parent's copy of the read end.
    unsafe { libc::close(read_end) };
    let unshared = unshare(flags);
    if unshared.is_ok() {
        // SAFETY: writing one byte from a live buffer.
        unsafe { libc::write(write_end, [1u8].as_ptr().cast(), 1) };
    }
    // SAFETY: closing the write end wakes a helper still waiting (EOF).
    unsafe { libc::close(write_end) };
    let mut status = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(child, &mut status, 0) };
    unshared?;
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        return Err(unsupported(
            "cannot map the ids of the new user namespace".into(),
        ));
    }
    Ok(())
}

fn mount(
    source: Option<&str>,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> std::io::Result<()> {
    let c = |s: &str| CString::new(s).map_err(|_| std::io::ErrorKind::InvalidInput);
    let source = source.map(c).transpose()?;
    let fstype = fstype.map(c).transpose()?;
    let data = data.map(c).transpose()?;
    let target = CString::new(target.as_os_str().as_bytes())
        .map_err(|_| std::io::ErrorKind::InvalidInput)?;
    let ptr = |s: &Option<CString>| s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
    // SAFETY: every pointer is NULL or a NUL-terminated string alive
    // for the call.
    let ret = unsafe {
        libc::mount(
            ptr(&source),
            target.as_ptr(),
            ptr(&fstype),
            flags,
            ptr(&data).cast(),
        )
    };
    match ret {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

fn cstring(path: &Path) -> Result<CString, OverlayError> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| unsupported(format!("{} contains a NUL byte", path.display())))
}

/// A path as an overlayfs option value: `\`, `,` and `:` escaped.
fn escaped(path: &Path) -> String {
    let mut out = String::new();
    for c in path.to_string_lossy().chars() {
        if matches!(c, '\\' | ',' | ':') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_separators_in_paths_are_escaped() {
        assert_eq!(escaped(Path::new("/a,b:c\\d")), "/a\\,b\\:c\\\\d");
    }

    #[test]
    fn a_data_dir_inside_the_workspace_is_refused() {
        let err = check_placement(Path::new("/w"), Path::new("/w/.warden")).unwrap_err();
        assert!(matches!(err, OverlayError::Overlapping { .. }), "{err}");
        let err = check_placement(Path::new("/d/ws"), Path::new("/d")).unwrap_err();
        assert!(matches!(err, OverlayError::Overlapping { .. }), "{err}");
    }

    #[test]
    fn a_data_dir_reached_through_a_symlink_into_the_workspace_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let ws = root.path().join("ws");
        std::fs::create_dir_all(ws.join("inner")).unwrap();
        let link = root.path().join("link");
        std::os::unix::fs::symlink(ws.join("inner"), &link).unwrap();
        // Neither the data directory nor its parent exists yet under the
        // link's target: it is resolved as far as it exists.
        let err = check_placement(&ws, &link.join("home/warden")).unwrap_err();
        assert!(matches!(err, OverlayError::Overlapping { .. }), "{err}");
        let outside = root.path().join("home");
        std::fs::create_dir(&outside).unwrap();
        assert!(!matches!(
            check_placement(&ws, &outside),
            Err(OverlayError::Overlapping { .. })
        ));
    }
}
