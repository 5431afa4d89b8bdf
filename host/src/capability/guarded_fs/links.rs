//! The hard-link rule (module `hard_links`) where the boundary checks a
//! use: a file reached by another name of a protected file is refused as
//! the protected file would be, judged by the inode of what was opened or
//! of the entry in a pinned directory.

use std::os::fd::AsFd;

use wasmtime::component::Resource;
use wasmtime_wasi::filesystem::Descriptor;
use wasmtime_wasi::p2::FsResult;

use super::GuardedFs;
use super::resolve::Pinned;
use crate::capability::PathUse;
use crate::capability::beneath;
use crate::capability::fs_boundary::FsOp;
use crate::capability::hard_links::Linked;

impl GuardedFs<'_> {
    /// Whether `how` on the file `meta` describes is refused because it is
    /// another name of a protected file.
    pub(super) fn is_protected_link(&self, meta: &std::fs::Metadata, how: PathUse) -> bool {
        self.boundary.checks(how)
            && Linked::of(meta).is_some_and(|file| self.boundary.links_to_protected(file))
    }

    /// Refuse `how` on the file `fd` holds if it is another name of a
    /// protected file.
    pub(super) fn refuse_linked(
        &mut self,
        fd: &Resource<Descriptor>,
        op: FsOp,
        how: PathUse,
    ) -> FsResult<()> {
        if !self.boundary.checks(how) {
            return Ok(());
        }
        let Ok(Descriptor::File(f)) = self.inner.table.get(fd) else {
            return Ok(());
        };
        let file = f.file.clone();
        let meta = file.metadata()?;
        if self.is_protected_link(&meta, how) {
            return Err(self.refuse_opened_link(&file, op));
        }
        Ok(())
    }

    /// The refusal of `file`, reached by another name of a protected file,
    /// recorded under the name it was reached by.
    pub(super) fn refuse_opened_link(
        &mut self,
        file: &std::fs::File,
        op: FsOp,
    ) -> wasmtime_wasi::p2::FsError {
        let rel = beneath::host_path(file).and_then(|h| self.boundary.place(&h));
        self.deny(op, rel.as_deref())
    }

    /// Refuse `how` on the entry `at` names (not following it) if it is
    /// another name of a protected file.
    pub(super) fn refuse_linked_entry(
        &mut self,
        at: &Pinned,
        op: FsOp,
        how: PathUse,
    ) -> FsResult<()> {
        if !self.boundary.checks(how) {
            return Ok(());
        }
        let Ok(Descriptor::Dir(d)) = self.inner.table.get(&at.dir()) else {
            return Ok(());
        };
        let dir = d.dir.clone();
        let flags = rustix::fs::AtFlags::SYMLINK_NOFOLLOW;
        // Nothing there, or no file: the operation says so itself.
        let Ok(stat) = rustix::fs::statat(dir.as_fd(), at.leaf.as_str(), flags) else {
            return Ok(());
        };
        match Linked::of_stat(&stat) {
            Some(file) if self.boundary.links_to_protected(file) => {
                Err(self.deny(op, at.target().as_deref()))
            }
            _ => Ok(()),
        }
    }
}
