//! Opening, reading and statting paths beneath a directory handle, never
//! through a symlink and never outside it.
//!
//! Every path `warden review` reads or writes in the workspace or an
//! overlay's upper directory goes through here: `openat2` with
//! `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, and the last component opened
//! or statted with `O_NOFOLLOW`. A FIFO or device is opened non-blocking
//! and refused before a byte is read.

use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags, Stat};
use rustix::io::Errno;
use sha2::{Digest, Sha256};

/// overlayfs's mark (as a `userxattr` mount writes it) of a directory that
/// replaces the workspace's instead of merging with it.
pub(crate) const OPAQUE_XATTR: &str = "user.overlay.opaque";

const RESOLVE: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);

/// Open the directory at `path` itself (no symlink as its last component).
pub(crate) fn open_root(path: &Path) -> std::io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    Ok(rustix::fs::open(path, flags, Mode::empty())?)
}

/// Open the directory `rel` beneath `root` (`""` is `root` itself).
pub(crate) fn open_dir(root: impl AsFd, rel: &str) -> std::io::Result<OwnedFd> {
    let rel = if rel.is_empty() { "." } else { rel };
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    Ok(rustix::fs::openat2(
        root,
        rel,
        flags,
        Mode::empty(),
        RESOLVE,
    )?)
}

/// `rel` split into its parent directory (`""` at the top) and last name.
pub(crate) fn split(rel: &str) -> (&str, &str) {
    match rel.rfind('/') {
        Some(i) => (&rel[..i], &rel[i + 1..]),
        None => ("", rel),
    }
}

/// The entry at `rel` beneath `root`, not followed; `None` when absent.
pub(crate) fn stat(root: impl AsFd, rel: &str) -> std::io::Result<Option<Stat>> {
    let (parent, name) = split(rel);
    let dir = match open_dir(root, parent) {
        Ok(d) => d,
        Err(e) if e.raw_os_error() == Some(Errno::NOENT.raw_os_error()) => return Ok(None),
        Err(e) => return Err(e),
    };
    stat_at(&dir, name)
}

/// The entry `name` in `dir`, not followed; `None` when absent.
pub(crate) fn stat_at(dir: impl AsFd, name: &str) -> std::io::Result<Option<Stat>> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(st)),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Open the regular file `rel` beneath `root` for reading; anything else
/// (a FIFO, a device, a symlink on the way) is an error, nothing read.
pub(crate) fn open_file(root: impl AsFd, rel: &str) -> std::io::Result<(std::fs::File, Stat)> {
    let flags =
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    let fd = rustix::fs::openat2(root, rel, flags, Mode::empty(), RESOLVE)?;
    let st = rustix::fs::fstat(&fd)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok((std::fs::File::from(fd), st))
}

/// The sha256 of the regular file `rel` beneath `root`, streamed.
pub(crate) fn hash_file(root: impl AsFd, rel: &str) -> std::io::Result<String> {
    let (mut file, _) = open_file(root, rel)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

/// The names in `dir`, sorted, without `.` and `..`. A name that is not
/// UTF-8 is an error: such a path cannot be shown or selected.
pub(crate) fn names(dir: impl AsFd) -> std::io::Result<Vec<String>> {
    let mut out = Vec::new();
    for entry in rustix::fs::Dir::read_from(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        match std::str::from_utf8(name) {
            Ok(n) => out.push(n.to_string()),
            Err(_) => {
                let shown = String::from_utf8_lossy(name);
                return Err(std::io::Error::other(format!(
                    "the name {shown:?} is not UTF-8"
                )));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The ctime of `st`, in nanoseconds since the epoch.
pub(crate) fn ctime_ns(st: &Stat) -> i128 {
    i128::from(st.st_ctime) * 1_000_000_000 + i128::from(st.st_ctime_nsec)
}

/// The mtime of `st`, in nanoseconds since the epoch.
pub(crate) fn mtime_ns(st: &Stat) -> i128 {
    i128::from(st.st_mtime) * 1_000_000_000 + i128::from(st.st_mtime_nsec)
}

/// Whether `dir` carries `user.overlay.opaque` = `y`.
pub(crate) fn is_opaque(dir: impl AsFd) -> std::io::Result<bool> {
    let mut buf = [0u8; 8];
    match rustix::fs::fgetxattr(dir, OPAQUE_XATTR, &mut buf[..]) {
        Ok(n) => Ok(buf.get(..n) == Some(b"y")),
        Err(Errno::NODATA | Errno::OPNOTSUPP) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// overlayfs's mark on an upper entry copied up from the workspace (as
/// opposed to one the run created).
pub(crate) const ORIGIN_XATTR: &str = "user.overlay.origin";

/// Whether `name` in `dir` (not followed) carries the extended attribute
/// `xattr`.
pub(crate) fn has_xattr_at(dir: impl AsFd, name: &str, xattr: &str) -> bool {
    use std::os::fd::AsRawFd;
    let path = format!("/proc/self/fd/{}/{name}", dir.as_fd().as_raw_fd());
    rustix::fs::lgetxattr_query(path.as_str(), xattr).is_ok()
}
