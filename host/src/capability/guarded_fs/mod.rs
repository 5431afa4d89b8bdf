//! `wasi:filesystem/types` with protected paths enforced at the boundary.
//!
//! Invariant: whatever a plugin does, no operation through WASI changes a
//! protected path — no open for writing, creating or truncating, no rename
//! or hard link at either end, no delete, no size or time change — and when
//! the grant's protected paths are not readable, none reads one. A path is
//! judged where it really leads (symlinks, hard links), in every directory
//! the grant preopens. Refusals are `error-code::access`, recorded as
//! [`BoundaryDenial`](crate::capability::BoundaryDenial)s, never traps.
//! Every write is counted against the call's write quota first; only
//! regular files and directories are opened. Every use that succeeds is
//! noted as a [`FileUse`](crate::capability::FileUse) for the audit record.
//!
//! How each check is made, and the residual gaps:
//! `docs/sandbox.md`, "The guarded filesystem".

mod descriptor;
mod links;
mod listing;
mod prefilter;
mod quota;
mod read;
mod record;
mod resolve;

pub use prefilter::{BadNeedles, Filtered, MAX_NEEDLE_LEN, MAX_NEEDLES, Needles};

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
        self.next_entry(&stream)
    }

    fn drop(&mut self, stream: Resource<fs::DirectoryEntryStream>) -> wasmtime::Result<()> {
        self.drop_listing(stream)
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
