//! `wasi:filesystem/types` descriptors behind the boundary: each operation
//! checked as the invariant in the module above requires, and noted as a
//! file use once it succeeded.

use wasmtime::component::Resource;
use wasmtime_wasi::filesystem::{Descriptor, WasiFilesystemCtxView};
use wasmtime_wasi::p2::FsResult;
use wasmtime_wasi::p2::bindings::sync::filesystem::types::{self as fs, HostDescriptor};
use wasmtime_wasi::p2::bindings::sync::io::streams;

use super::GuardedFs;
use crate::capability::PathUse;
use crate::capability::exercised::FileOp;
use crate::capability::fs_boundary::FsOp;

impl HostDescriptor for GuardedFs<'_> {
    fn advise(
        &mut self,
        fd: Resource<Descriptor>,
        offset: fs::Filesize,
        len: fs::Filesize,
        advice: fs::Advice,
    ) -> FsResult<()> {
        self.inner.advise(fd, offset, len, advice)
    }

    fn sync_data(&mut self, fd: Resource<Descriptor>) -> FsResult<()> {
        self.inner.sync_data(fd)
    }

    fn get_flags(&mut self, fd: Resource<Descriptor>) -> FsResult<fs::DescriptorFlags> {
        self.inner.get_flags(fd)
    }

    fn get_type(&mut self, fd: Resource<Descriptor>) -> FsResult<fs::DescriptorType> {
        self.inner.get_type(fd)
    }

    fn set_size(&mut self, fd: Resource<Descriptor>, size: fs::Filesize) -> FsResult<()> {
        self.check_descriptor(&fd, FsOp::SetSize, PathUse::Change)?;
        let borrowed = Resource::new_borrow(fd.rep());
        self.set_size_in_quota(fd, size)?;
        self.note_descriptor(&borrowed, FileOp::Write);
        Ok(())
    }

    fn set_times(
        &mut self,
        fd: Resource<Descriptor>,
        atim: fs::NewTimestamp,
        mtim: fs::NewTimestamp,
    ) -> FsResult<()> {
        self.check_descriptor(&fd, FsOp::SetTimes, PathUse::Change)?;
        self.refuse_linked(&fd, FsOp::SetTimes, PathUse::Change)?;
        let borrowed = Resource::new_borrow(fd.rep());
        self.inner.set_times(fd, atim, mtim)?;
        self.note_descriptor(&borrowed, FileOp::Metadata);
        Ok(())
    }

    fn read(
        &mut self,
        fd: Resource<Descriptor>,
        len: fs::Filesize,
        offset: fs::Filesize,
    ) -> FsResult<(Vec<u8>, bool)> {
        self.read_whole(&fd, len, offset)
    }

    fn write(
        &mut self,
        fd: Resource<Descriptor>,
        buf: Vec<u8>,
        offset: fs::Filesize,
    ) -> FsResult<fs::Filesize> {
        self.check_descriptor(&fd, FsOp::Write, PathUse::Change)?;
        self.write_in_quota(fd, buf, offset)
    }

    fn read_directory(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> FsResult<Resource<fs::DirectoryEntryStream>> {
        self.check_descriptor(&fd, FsOp::ReadDirectory, PathUse::Read)?;
        let borrowed = Resource::new_borrow(fd.rep());
        let stream = self.list(&fd)?;
        self.note_descriptor(&borrowed, FileOp::Read);
        Ok(stream)
    }

    fn sync(&mut self, fd: Resource<Descriptor>) -> FsResult<()> {
        self.inner.sync(fd)
    }

    fn create_directory_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<()> {
        let used = self.named(&fd, &path);
        let result = if self.boundary.checks(PathUse::Change) {
            self.at_entry(
                fd,
                &path,
                (FsOp::CreateDirectory, PathUse::Change),
                |fs, dir, leaf| fs.create_directory_at(dir, leaf),
            )
        } else {
            self.inner.create_directory_at(fd, path)
        };
        self.noted(result, FileOp::Create, used, None)
    }

    fn stat(&mut self, fd: Resource<Descriptor>) -> FsResult<fs::DescriptorStat> {
        self.inner.stat(fd)
    }

    fn stat_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: fs::PathFlags,
        path: String,
    ) -> FsResult<fs::DescriptorStat> {
        if !self.boundary.checks(PathUse::Read) {
            return self.inner.stat_at(fd, path_flags, path);
        }
        self.at_followed(fd, path_flags, &path, |fs, dir, leaf| {
            fs.stat_at(dir, fs::PathFlags::empty(), leaf)
        })
    }

    fn set_times_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: fs::PathFlags,
        path: String,
        atim: fs::NewTimestamp,
        mtim: fs::NewTimestamp,
    ) -> FsResult<()> {
        let used = self.named(&fd, &path);
        let follow = path_flags.contains(fs::PathFlags::SYMLINK_FOLLOW);
        // Following, wasmtime opens the entry (and would wait on a FIFO):
        // the pinned route sets times on the last hop without opening it.
        if !self.boundary.checks(PathUse::Change) && !follow {
            let result = self.inner.set_times_at(fd, path_flags, path, atim, mtim);
            return self.noted(result, FileOp::Metadata, used, None);
        }
        let at = self.pin_followed(fd, &path, follow, (FsOp::SetTimes, PathUse::Change), 0)?;
        let result = self
            .refuse_linked_entry(&at, FsOp::SetTimes, PathUse::Change)
            .and_then(|()| {
                self.inner.set_times_at(
                    at.dir(),
                    fs::PathFlags::empty(),
                    at.leaf.clone(),
                    atim,
                    mtim,
                )
            });
        self.release(at);
        self.noted(result, FileOp::Metadata, used, None)
    }

    fn link_at(
        &mut self,
        fd: Resource<Descriptor>,
        old_path_flags: fs::PathFlags,
        old_path: String,
        new_descriptor: Resource<Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        let used = self.named(&new_descriptor, &new_path);
        if !self.boundary.checks(PathUse::Change) {
            let result = self
                .inner
                .link_at(fd, old_path_flags, old_path, new_descriptor, new_path);
            return self.noted(result, FileOp::Create, used, None);
        }
        let from = self.pin(fd, &old_path, FsOp::Link)?;
        let to = match self.pin(new_descriptor, &new_path, FsOp::Link) {
            Ok(to) => to,
            Err(e) => {
                self.release(from);
                return Err(e);
            }
        };
        let result = self
            .check(FsOp::Link, from.target().as_deref(), PathUse::Change)
            .and_then(|()| self.check(FsOp::Link, to.target().as_deref(), PathUse::Change))
            .and_then(|()| self.refuse_linked_entry(&from, FsOp::Link, PathUse::Change))
            .and_then(|()| {
                self.inner.link_at(
                    from.dir(),
                    old_path_flags,
                    from.leaf.clone(),
                    to.dir(),
                    to.leaf.clone(),
                )
            });
        self.release(to);
        self.release(from);
        self.noted(result, FileOp::Create, used, None)
    }

    fn open_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: fs::PathFlags,
        path: String,
        oflags: fs::OpenFlags,
        flags: fs::DescriptorFlags,
    ) -> FsResult<Resource<Descriptor>> {
        let used = self.named(&fd, &path);
        let created = self.will_create(&fd, path_flags, &path, oflags);
        let opened =
            self.open_guarded(fd, path_flags, path, (oflags, flags), (used.as_deref(), 0))?;
        self.note_open(&opened, used, created, (oflags, flags));
        Ok(opened)
    }

    fn drop(&mut self, fd: Resource<Descriptor>) -> wasmtime::Result<()> {
        self.boundary.paths.remove(&fd.rep());
        HostDescriptor::drop(&mut self.inner, fd)
    }

    fn readlink_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<String> {
        let used = self.named(&fd, &path);
        let result = if self.boundary.checks(PathUse::Read) {
            self.at_entry(
                fd,
                &path,
                (FsOp::Readlink, PathUse::Read),
                |fs, dir, leaf| fs.readlink_at(dir, leaf),
            )
        } else {
            self.inner.readlink_at(fd, path)
        };
        self.noted(result, FileOp::Read, used, None)
    }

    fn remove_directory_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<()> {
        let used = self.named(&fd, &path);
        let result = if self.boundary.checks(PathUse::Change) {
            self.at_entry(
                fd,
                &path,
                (FsOp::RemoveDirectory, PathUse::Change),
                |fs, dir, leaf| fs.remove_directory_at(dir, leaf),
            )
        } else {
            self.inner.remove_directory_at(fd, path)
        };
        self.noted(result, FileOp::Delete, used, None)
    }

    fn rename_at(
        &mut self,
        fd: Resource<Descriptor>,
        old_path: String,
        new_fd: Resource<Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        let used = self.named(&fd, &old_path);
        let to_path = self.named(&new_fd, &new_path);
        if !self.boundary.checks(PathUse::Change) {
            let result = self.inner.rename_at(fd, old_path, new_fd, new_path);
            return self.noted(result, FileOp::Rename, used, to_path);
        }
        let from = self.pin(fd, &old_path, FsOp::Rename)?;
        let to = match self.pin(new_fd, &new_path, FsOp::Rename) {
            Ok(to) => to,
            Err(e) => {
                self.release(from);
                return Err(e);
            }
        };
        let refused = [from.target(), to.target()]
            .into_iter()
            .flatten()
            .find(|rel| {
                self.boundary.refuses(rel, PathUse::Change) || self.boundary.guards_below(rel)
            });
        let result = match refused {
            Some(rel) => Err(self.deny(FsOp::Rename, Some(&rel))),
            None => self
                .inner
                .rename_at(from.dir(), from.leaf.clone(), to.dir(), to.leaf.clone()),
        };
        self.release(to);
        self.release(from);
        self.noted(result, FileOp::Rename, used, to_path)
    }

    fn symlink_at(
        &mut self,
        fd: Resource<Descriptor>,
        src_path: String,
        dest_path: String,
    ) -> FsResult<()> {
        let used = self.named(&fd, &dest_path);
        if !self.boundary.checks(PathUse::Change) {
            let result = self.inner.symlink_at(fd, src_path, dest_path);
            return self.noted(result, FileOp::Create, used, None);
        }
        let at = self.pin(fd, &dest_path, FsOp::Symlink)?;
        let points_to = self.boundary.link_target(&at.rel, &src_path);
        let result = self
            .check(FsOp::Symlink, at.target().as_deref(), PathUse::Change)
            .and_then(|()| self.check(FsOp::Symlink, points_to.as_deref(), PathUse::Change))
            .and_then(|()| self.inner.symlink_at(at.dir(), src_path, at.leaf.clone()));
        self.release(at);
        self.noted(result, FileOp::Create, used, None)
    }

    fn unlink_file_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<()> {
        let used = self.named(&fd, &path);
        let result = if self.boundary.checks(PathUse::Change) {
            self.at_entry(
                fd,
                &path,
                (FsOp::Unlink, PathUse::Change),
                |fs, dir, leaf| fs.unlink_file_at(dir, leaf),
            )
        } else {
            self.inner.unlink_file_at(fd, path)
        };
        self.noted(result, FileOp::Delete, used, None)
    }

    fn read_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
        offset: fs::Filesize,
    ) -> FsResult<Resource<streams::InputStream>> {
        self.inner.read_via_stream(fd, offset)
    }

    fn write_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
        offset: fs::Filesize,
    ) -> FsResult<Resource<streams::OutputStream>> {
        self.check_descriptor(&fd, FsOp::Write, PathUse::Change)?;
        self.stream_in_quota(fd, Some(offset))
    }

    fn append_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> FsResult<Resource<streams::OutputStream>> {
        self.check_descriptor(&fd, FsOp::Write, PathUse::Change)?;
        self.stream_in_quota(fd, None)
    }

    fn is_same_object(
        &mut self,
        a: Resource<Descriptor>,
        b: Resource<Descriptor>,
    ) -> wasmtime::Result<bool> {
        self.inner.is_same_object(a, b)
    }

    fn metadata_hash(&mut self, fd: Resource<Descriptor>) -> FsResult<fs::MetadataHashValue> {
        self.inner.metadata_hash(fd)
    }

    fn metadata_hash_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: fs::PathFlags,
        path: String,
    ) -> FsResult<fs::MetadataHashValue> {
        // An opaque identity, not content: wasi-libc asks it of every entry
        // it lists (for `d_ino`), so refusing it would refuse listings.
        self.inner.metadata_hash_at(fd, path_flags, path)
    }
}

impl GuardedFs<'_> {
    /// Pin the entry `path` names, following a symlink there by hand when
    /// `path_flags` says to, refuse it if protected from reads, else `act`
    /// on it without following.
    fn at_followed<R>(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: fs::PathFlags,
        path: &str,
        act: impl FnOnce(&mut WasiFilesystemCtxView<'_>, Resource<Descriptor>, String) -> FsResult<R>,
    ) -> FsResult<R> {
        let follow = path_flags.contains(fs::PathFlags::SYMLINK_FOLLOW);
        let at = self.pin_followed(fd, path, follow, (FsOp::Stat, PathUse::Read), 0)?;
        let result = self
            .refuse_linked_entry(&at, FsOp::Stat, PathUse::Read)
            .and_then(|()| act(&mut self.inner, at.dir(), at.leaf.clone()));
        self.release(at);
        result
    }
}
