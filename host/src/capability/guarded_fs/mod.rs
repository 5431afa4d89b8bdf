//! `wasi:filesystem/types` with protected paths enforced at the boundary.
//!
//! Invariant: whatever a plugin does, no operation through WASI changes a
//! protected path — no open for writing, creating or truncating, no rename
//! or hard link at either end, no delete, no size or time change — and when
//! the grant's protected paths are not readable, none reads one (open for
//! reading, list, read a link, read its metadata). This holds in every
//! directory the grant preopens: the workspace and each extra directory,
//! each with the globs taken relative to it. Refusals are `error-code::access`, recorded
//! as [`BoundaryDenial`](crate::capability::BoundaryDenial)s; the guest
//! never traps for them.
//!
//! Every byte written, and every byte a file grows by without data, is
//! counted against the call's write quota (module `write_quota`), which
//! no write passes; one that does not fit fails with `error-code::quota`.
//!
//! Every operation that succeeds is noted as a
//! [`FileUse`](crate::capability::FileUse) — read, write, create, delete,
//! rename, metadata — under the path the guest named, for the call's audit
//! record.
//!
//! A path is judged where it really leads, not by its spelling:
//!
//! - An open is first tried with `RESOLVE_NO_SYMLINKS` (module `beneath`):
//!   then the lexical path checked beforehand is exactly what was opened.
//! - With a symlink on the way, the entry is opened without creating or
//!   truncating it, its real path is read back from the kernel and checked,
//!   and only then truncated. A new file is created with `O_EXCL` in its
//!   parent directory, opened and checked first; a dangling symlink is
//!   followed by hand, each hop checked the same way.
//! - Other operations pin the parent directory the same way and act on the
//!   last component only, never following it (setting times through a
//!   symlink follows it by hand, each hop checked).
//!
//! So the check and the effect concern the same object. Residual gaps: a
//! descriptor's remembered path goes stale if someone else (another call,
//! a host process) moves its directory while it is open — protected
//! directories themselves cannot be moved. A file hard-linked to a
//! protected one is refused as that file (module `hard_links`), judged by
//! the inode of what was opened. Moving a directory
//! moves the files in it: a glob naming files anywhere (`**/*.pem`) still
//! protects them at their new place; a glob with a literal directory
//! (`config/secrets/**`) forbids moving that directory or its parents, and
//! moving anything onto them; a glob naming a directory after a wildcard
//! (`**/config/*.key`) is not checked against directory moves, so moving a
//! directory to `x/config` can bring files under it. When protected paths
//! are not readable, their metadata is not either (`stat-at`, following
//! symlinks by hand when asked); a directory listing still names them, and
//! `metadata-hash-at` (an opaque identity wasi-libc asks of every listed
//! entry) still answers. Where the kernel cannot say where a
//! descriptor is (no `/proc`, or not Linux), the checks that need it fail
//! closed.
//!
//! Only regular files and directories are opened (through symlinks
//! leading to them). A FIFO, a socket or a device is refused with
//! `error-code::unsupported` (`access` if it is protected against the use,
//! wherever the path to it came from): opening a FIFO waits for its other
//! end, in a system call that neither the deadline nor cancellation can cut
//! short.
//! Every open the guard makes is non-blocking and looks at what it opened,
//! with or without checks to make; only where the kernel cannot make the
//! open (a symlink leading out, a racing rename) is the entry looked at
//! before wasmtime opens it. Setting times through a symlink takes the
//! pinned route even without checks, since wasmtime would open the entry.
//! Opens with nothing to check remember their path too, so the stale-path
//! gap above applies to them.

mod descriptor;
mod links;
mod quota;
mod record;
mod resolve;

use wasmtime::component::{HasData, Resource};
use wasmtime_wasi::filesystem::{Descriptor, WasiFilesystemCtxView};
use wasmtime_wasi::p2::bindings::filesystem::preopens;
use wasmtime_wasi::p2::bindings::sync::filesystem::types::{self as fs, HostDirectoryEntryStream};
use wasmtime_wasi::p2::bindings::sync::io::streams;
use wasmtime_wasi::p2::{FsError, FsResult};

use super::fs_boundary::FsBoundary;
use super::write_quota::QuotaExceeded;

/// The filesystem as a guest sees it: wasmtime's, behind the boundary.
pub struct GuardedFs<'a> {
    pub inner: WasiFilesystemCtxView<'a>,
    pub boundary: &'a mut FsBoundary,
}

/// [`HasData`] marker for linking [`GuardedFs`].
pub struct HasGuardedFs;

impl HasData for HasGuardedFs {
    type Data<'a> = GuardedFs<'a>;
}

impl fs::Host for GuardedFs<'_> {
    fn convert_error_code(&mut self, err: FsError) -> wasmtime::Result<fs::ErrorCode> {
        fs::Host::convert_error_code(&mut self.inner, err)
    }

    fn filesystem_error_code(
        &mut self,
        err: Resource<streams::Error>,
    ) -> wasmtime::Result<Option<fs::ErrorCode>> {
        if self.inner.table.get(&err)?.is::<QuotaExceeded>() {
            return Ok(Some(fs::ErrorCode::Quota));
        }
        fs::Host::filesystem_error_code(&mut self.inner, err)
    }
}

impl HostDirectoryEntryStream for GuardedFs<'_> {
    fn read_directory_entry(
        &mut self,
        stream: Resource<fs::DirectoryEntryStream>,
    ) -> FsResult<Option<fs::DirectoryEntry>> {
        self.inner.read_directory_entry(stream)
    }

    fn drop(&mut self, stream: Resource<fs::DirectoryEntryStream>) -> wasmtime::Result<()> {
        HostDirectoryEntryStream::drop(&mut self.inner, stream)
    }
}

impl preopens::Host for GuardedFs<'_> {
    fn get_directories(&mut self) -> wasmtime::Result<Vec<(Resource<Descriptor>, String)>> {
        let dirs = preopens::Host::get_directories(&mut self.inner)?;
        for (dir, name) in &dirs {
            if let Some(host) = self.boundary.preopen(name) {
                self.boundary.paths.insert(dir.rep(), host);
            }
        }
        Ok(dirs)
    }
}
