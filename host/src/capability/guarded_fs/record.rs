//! Naming what a guest used: the host path an operation acted on, noted
//! on the boundary (which names it as refusals are named) once the
//! operation succeeded.

use wasmtime::component::Resource;
use wasmtime_wasi::filesystem::Descriptor;
use wasmtime_wasi::p2::FsResult;
use wasmtime_wasi::p2::bindings::filesystem::types as wasi;
use wasmtime_wasi::p2::bindings::sync::filesystem::types::{self as fs, HostDescriptor as _};

use super::GuardedFs;
use crate::capability::beneath;
use crate::capability::exercised::FileOp;

impl GuardedFs<'_> {
    /// The host path of `fd`: remembered from its open, else read back
    /// from the kernel (and remembered); `None` if it cannot be placed in a
    /// granted directory.
    pub(super) fn known_path(&mut self, fd: &Resource<Descriptor>) -> Option<String> {
        if let Some(rel) = self.boundary.paths.get(&fd.rep()) {
            return Some(rel.clone());
        }
        let host = match self.inner.table.get(fd).ok()? {
            Descriptor::File(f) => beneath::host_path(&f.file),
            Descriptor::Dir(d) => beneath::host_path(&d.dir),
        }?;
        let rel = self.boundary.place(&host)?;
        self.boundary.paths.insert(fd.rep(), rel.clone());
        Some(rel)
    }

    /// The host path `path` names under directory `fd`, as spelt (a
    /// symlink on the way is not followed).
    pub(super) fn named(&mut self, fd: &Resource<Descriptor>, path: &str) -> Option<String> {
        let base = self.known_path(fd)?;
        self.boundary.join(&base, path)
    }

    /// `result`, noting `op` on `path` if it succeeded.
    pub(super) fn noted<T>(
        &mut self,
        result: FsResult<T>,
        op: FileOp,
        path: Option<String>,
        to: Option<String>,
    ) -> FsResult<T> {
        if result.is_ok() {
            self.boundary.used(op, path, to);
        }
        result
    }

    /// Whether an open with `oflags` will create what `path` names: it
    /// asks for creation and nothing is there yet.
    pub(super) fn will_create(
        &mut self,
        fd: &Resource<Descriptor>,
        pflags: fs::PathFlags,
        path: &str,
        oflags: fs::OpenFlags,
    ) -> bool {
        if !oflags.contains(fs::OpenFlags::CREATE) {
            return false;
        }
        if oflags.contains(fs::OpenFlags::EXCLUSIVE) {
            return true;
        }
        let stat = self
            .inner
            .stat_at(Resource::new_borrow(fd.rep()), pflags, path.to_string());
        matches!(stat, Err(e) if e.downcast_ref() == Some(&wasi::ErrorCode::NoEntry))
    }

    /// Note a successful open of `rel` as `opened`: record how a file (not
    /// a directory) was used.
    pub(super) fn note_open(
        &mut self,
        opened: &Resource<Descriptor>,
        rel: Option<String>,
        created: bool,
        (oflags, dflags): (fs::OpenFlags, fs::DescriptorFlags),
    ) {
        let Some(rel) = rel else { return };
        // `rel` is the path as spelt: through a symlink it is not where the
        // descriptor leads, so it is never remembered as the descriptor's
        // path (checks on the descriptor read the real one back).
        if matches!(self.inner.table.get(opened), Ok(Descriptor::Dir(_))) && !created {
            return;
        }
        let op = if created {
            FileOp::Create
        } else if oflags.contains(fs::OpenFlags::TRUNCATE)
            || dflags.contains(fs::DescriptorFlags::WRITE)
        {
            FileOp::Write
        } else {
            FileOp::Read
        };
        self.boundary.used(op, Some(rel), None);
    }

    /// Note `op` on what descriptor `fd` stands for.
    pub(super) fn note_descriptor(&mut self, fd: &Resource<Descriptor>, op: FileOp) {
        let rel = self.known_path(fd);
        self.boundary.used(op, rel, None);
    }
}
