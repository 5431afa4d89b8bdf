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
//! directories themselves cannot be moved; and a file hard-linked to a
//! protected one before the call is a second name the globs do not know
//! (creating such links is refused). Moving a directory
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

mod resolve;

use wasmtime::component::{HasData, Resource};
use wasmtime_wasi::filesystem::{Descriptor, WasiFilesystemCtxView};
use wasmtime_wasi::p2::bindings::filesystem::preopens;
use wasmtime_wasi::p2::bindings::sync::filesystem::types::{
    self as fs, HostDescriptor, HostDirectoryEntryStream,
};
use wasmtime_wasi::p2::bindings::sync::io::streams;
use wasmtime_wasi::p2::{FsError, FsResult};

use super::PathUse;
use super::fs_boundary::{FsBoundary, FsOp};

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
        fs::Host::filesystem_error_code(&mut self.inner, err)
    }
}

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
        self.inner.set_size(fd, size)
    }

    fn set_times(
        &mut self,
        fd: Resource<Descriptor>,
        atim: fs::NewTimestamp,
        mtim: fs::NewTimestamp,
    ) -> FsResult<()> {
        self.check_descriptor(&fd, FsOp::SetTimes, PathUse::Change)?;
        self.inner.set_times(fd, atim, mtim)
    }

    fn read(
        &mut self,
        fd: Resource<Descriptor>,
        len: fs::Filesize,
        offset: fs::Filesize,
    ) -> FsResult<(Vec<u8>, bool)> {
        self.inner.read(fd, len, offset)
    }

    fn write(
        &mut self,
        fd: Resource<Descriptor>,
        buf: Vec<u8>,
        offset: fs::Filesize,
    ) -> FsResult<fs::Filesize> {
        self.check_descriptor(&fd, FsOp::Write, PathUse::Change)?;
        self.inner.write(fd, buf, offset)
    }

    fn read_directory(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> FsResult<Resource<fs::DirectoryEntryStream>> {
        self.check_descriptor(&fd, FsOp::ReadDirectory, PathUse::Read)?;
        self.inner.read_directory(fd)
    }

    fn sync(&mut self, fd: Resource<Descriptor>) -> FsResult<()> {
        self.inner.sync(fd)
    }

    fn create_directory_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<()> {
        if !self.boundary.checks(PathUse::Change) {
            return self.inner.create_directory_at(fd, path);
        }
        self.at_entry(
            fd,
            &path,
            (FsOp::CreateDirectory, PathUse::Change),
            |fs, dir, leaf| fs.create_directory_at(dir, leaf),
        )
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
        if !self.boundary.checks(PathUse::Change) {
            return self.inner.set_times_at(fd, path_flags, path, atim, mtim);
        }
        let follow = path_flags.contains(fs::PathFlags::SYMLINK_FOLLOW);
        let at = self.pin_followed(fd, &path, follow, (FsOp::SetTimes, PathUse::Change), 0)?;
        let result = self.inner.set_times_at(
            at.dir(),
            fs::PathFlags::empty(),
            at.leaf.clone(),
            atim,
            mtim,
        );
        self.release(at);
        result
    }

    fn link_at(
        &mut self,
        fd: Resource<Descriptor>,
        old_path_flags: fs::PathFlags,
        old_path: String,
        new_descriptor: Resource<Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        if !self.boundary.checks(PathUse::Change) {
            return self
                .inner
                .link_at(fd, old_path_flags, old_path, new_descriptor, new_path);
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
        result
    }

    fn open_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: fs::PathFlags,
        path: String,
        oflags: fs::OpenFlags,
        flags: fs::DescriptorFlags,
    ) -> FsResult<Resource<Descriptor>> {
        self.open_guarded(fd, path_flags, path, (oflags, flags), 0)
    }

    fn drop(&mut self, fd: Resource<Descriptor>) -> wasmtime::Result<()> {
        self.boundary.paths.remove(&fd.rep());
        HostDescriptor::drop(&mut self.inner, fd)
    }

    fn readlink_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<String> {
        if !self.boundary.checks(PathUse::Read) {
            return self.inner.readlink_at(fd, path);
        }
        self.at_entry(
            fd,
            &path,
            (FsOp::Readlink, PathUse::Read),
            |fs, dir, leaf| fs.readlink_at(dir, leaf),
        )
    }

    fn remove_directory_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<()> {
        if !self.boundary.checks(PathUse::Change) {
            return self.inner.remove_directory_at(fd, path);
        }
        self.at_entry(
            fd,
            &path,
            (FsOp::RemoveDirectory, PathUse::Change),
            |fs, dir, leaf| fs.remove_directory_at(dir, leaf),
        )
    }

    fn rename_at(
        &mut self,
        fd: Resource<Descriptor>,
        old_path: String,
        new_fd: Resource<Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        if !self.boundary.checks(PathUse::Change) {
            return self.inner.rename_at(fd, old_path, new_fd, new_path);
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
        result
    }

    fn symlink_at(
        &mut self,
        fd: Resource<Descriptor>,
        src_path: String,
        dest_path: String,
    ) -> FsResult<()> {
        if !self.boundary.checks(PathUse::Change) {
            return self.inner.symlink_at(fd, src_path, dest_path);
        }
        let at = self.pin(fd, &dest_path, FsOp::Symlink)?;
        let points_to = self.boundary.link_target(&at.rel, &src_path);
        let result = self
            .check(FsOp::Symlink, at.target().as_deref(), PathUse::Change)
            .and_then(|()| self.check(FsOp::Symlink, points_to.as_deref(), PathUse::Change))
            .and_then(|()| self.inner.symlink_at(at.dir(), src_path, at.leaf.clone()));
        self.release(at);
        result
    }

    fn unlink_file_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<()> {
        if !self.boundary.checks(PathUse::Change) {
            return self.inner.unlink_file_at(fd, path);
        }
        self.at_entry(
            fd,
            &path,
            (FsOp::Unlink, PathUse::Change),
            |fs, dir, leaf| fs.unlink_file_at(dir, leaf),
        )
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
        self.inner.write_via_stream(fd, offset)
    }

    fn append_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> FsResult<Resource<streams::OutputStream>> {
        self.check_descriptor(&fd, FsOp::Write, PathUse::Change)?;
        self.inner.append_via_stream(fd)
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
        let result = act(&mut self.inner, at.dir(), at.leaf.clone());
        self.release(at);
        result
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
