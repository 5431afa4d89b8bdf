//! Opening a path beneath a directory when no symlink lies on the way, and
//! reading back where an open file really is.
//!
//! On Linux one `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` does the
//! open wasmtime would do, with the same flags. When it succeeds, the path
//! the guest gave, joined to the directory's path and normalised, is exactly
//! what was opened, so checking that path costs no extra system call. When a
//! symlink is in the way it fails, and the caller takes the careful path.

use std::path::PathBuf;

use wasmtime_wasi::filesystem::OpenMode;
use wasmtime_wasi::p2::bindings::sync::filesystem::types::{DescriptorFlags, OpenFlags, PathFlags};

/// An open as wasmtime's `open-at` would make it.
pub(super) struct Plan {
    /// Flags for the system call.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    flags: rustix::fs::OFlags,
    /// The mode wasmtime records on the descriptor.
    pub mode: OpenMode,
}

/// The open wasmtime would make for these flags, or `None` for flags it
/// refuses or does not support (it then says so itself, before any effect).
pub(super) fn plan(pflags: PathFlags, oflags: OpenFlags, dflags: DescriptorFlags) -> Option<Plan> {
    use rustix::fs::OFlags;
    let unsupported = DescriptorFlags::FILE_INTEGRITY_SYNC
        | DescriptorFlags::DATA_INTEGRITY_SYNC
        | DescriptorFlags::REQUESTED_WRITE_SYNC;
    let not_for_directories = OpenFlags::CREATE | OpenFlags::EXCLUSIVE | OpenFlags::TRUNCATE;
    if dflags.intersects(unsupported)
        || (oflags.contains(OpenFlags::DIRECTORY) && oflags.intersects(not_for_directories))
    {
        return None;
    }
    let create = oflags.contains(OpenFlags::CREATE);
    let create_new = create && oflags.contains(OpenFlags::EXCLUSIVE);
    let truncate = oflags.contains(OpenFlags::TRUNCATE);
    let write = create || truncate || dflags.contains(DescriptorFlags::WRITE);
    let read = dflags.contains(DescriptorFlags::READ) || !dflags.contains(DescriptorFlags::WRITE);
    let mut mode = OpenMode::empty();
    mode.set(OpenMode::READ, read);
    mode.set(OpenMode::WRITE, write);
    let mut flags = OFlags::CLOEXEC
        | match (read, write) {
            (true, true) => OFlags::RDWR,
            (false, true) => OFlags::WRONLY,
            (_, false) => OFlags::RDONLY,
        }
        | match (create, truncate, create_new) {
            (_, _, true) => OFlags::CREATE | OFlags::EXCL,
            (true, true, false) => OFlags::CREATE | OFlags::TRUNC,
            (true, false, false) => OFlags::CREATE,
            (false, true, false) => OFlags::TRUNC,
            (false, false, false) => OFlags::empty(),
        };
    if !pflags.contains(PathFlags::SYMLINK_FOLLOW) {
        flags |= OFlags::NOFOLLOW;
    }
    // wasmtime opens and then checks for a directory; asking the kernel
    // gives the same `not-directory` without opening (and blocking on) a FIFO.
    if oflags.contains(OpenFlags::DIRECTORY) {
        flags |= OFlags::DIRECTORY;
    }
    // Opening a FIFO waits for its other end, in a system call neither the
    // deadline nor cancellation can cut short. Non-blocking, the open returns
    // at once and the caller refuses what it opened (see `special`). Reads,
    // writes and listings of regular files and directories ignore the flag
    // (open(2)), so it stays set; an open that would wait for a file lease
    // fails with `EAGAIN` instead and takes the careful path.
    flags |= OFlags::NONBLOCK;
    Some(Plan { flags, mode })
}

impl Plan {
    /// Leave truncation to the caller, for after it has looked at what was
    /// opened; whether the open was to truncate.
    pub(super) fn defer_truncate(&mut self) -> bool {
        let truncate = self.flags.contains(rustix::fs::OFlags::TRUNC);
        self.flags.remove(rustix::fs::OFlags::TRUNC);
        truncate
    }
}

/// What a direct open came to.
pub(super) enum Beneath {
    /// Opened, at exactly the lexical path.
    Opened(std::fs::File),
    /// Failed the way wasmtime's open would have.
    Failed(std::io::Error),
    /// A FIFO, a socket or a device (see [`special`]), held by an `O_PATH`
    /// descriptor that can say where it is but not read or write it.
    Special(std::fs::File),
    /// A symlink, an escape, a racing rename or no `openat2`: only the
    /// careful path can tell.
    Unavailable,
}

/// Which symlinks an open beneath a directory may pass through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Symlinks {
    /// None: what was opened is exactly the lexical path.
    Refused,
    /// Those that stay beneath the directory (as wasmtime's own open);
    /// where the open led is read back from the kernel.
    Beneath,
}

/// Open `path` beneath `dir`, through the symlinks `via` allows.
#[cfg(target_os = "linux")]
pub(super) fn open(dir: &std::fs::File, path: &str, plan: &Plan, via: Symlinks) -> Beneath {
    use rustix::fs::{Mode, OFlags, ResolveFlags, openat2};
    use rustix::io::Errno;
    let resolve = match via {
        Symlinks::Refused => {
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS
        }
        Symlinks::Beneath => ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
    };
    // `openat2` refuses a mode unless it creates.
    let mode = if plan.flags.contains(rustix::fs::OFlags::CREATE) {
        Mode::from_raw_mode(0o666)
    } else {
        Mode::empty()
    };
    match openat2(dir, path, plan.flags, mode, resolve) {
        Ok(fd) => Beneath::Opened(fd.into()),
        Err(Errno::LOOP | Errno::XDEV | Errno::AGAIN | Errno::NOSYS | Errno::PERM) => {
            Beneath::Unavailable
        }
        // What a non-blocking open says of a socket, or of a FIFO with no
        // reader opened for writing: a special file, held by a path-only
        // descriptor (which never waits) so the caller can tell where it is.
        Err(Errno::NXIO) => {
            let flags = OFlags::PATH | OFlags::CLOEXEC | (plan.flags & OFlags::NOFOLLOW);
            match openat2(dir, path, flags, Mode::empty(), resolve) {
                Ok(fd) => Beneath::Special(fd.into()),
                Err(_) => Beneath::Failed(Errno::OPNOTSUPP.into()),
            }
        }
        Err(e) => Beneath::Failed(e.into()),
    }
}

/// Without `openat2` every checked open takes the careful path.
#[cfg(not(target_os = "linux"))]
pub(super) fn open(_dir: &std::fs::File, _path: &str, _plan: &Plan, _via: Symlinks) -> Beneath {
    Beneath::Unavailable
}

/// Whether `kind` is something the boundary never opens: a FIFO, a socket
/// or a device. Only regular files, directories and the symlinks leading to
/// them are served.
pub(super) fn special(kind: std::fs::FileType) -> bool {
    !(kind.is_file() || kind.is_dir() || kind.is_symlink())
}

/// The host path of an open file or directory, as the kernel knows it now.
#[cfg(target_os = "linux")]
pub(super) fn host_path(file: &std::fs::File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
}

/// Elsewhere the path cannot be read back, and checks that need it fail closed.
#[cfg(not(target_os = "linux"))]
pub(super) fn host_path(_file: &std::fs::File) -> Option<PathBuf> {
    None
}
