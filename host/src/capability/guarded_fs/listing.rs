//! `read-directory`: a directory's entries, typed as the listing itself
//! types them.
//!
//! wasmtime stats every entry by name (one `statx` and a path lookup
//! each) to learn its type, which `getdents64` already gives; on a large
//! tree that is most of a walk's system time. Here an entry is stat'ed
//! (without following a symlink, as wasmtime does) only when the
//! filesystem leaves its type unknown. The entries, their types and
//! errors are wasmtime's (a name that is not UTF-8 is
//! `illegal-byte-sequence`); the descriptor is checked at the boundary
//! before it is listed, as before. The stream lives in the call's resource
//! table under its own type, so only this module reads or drops it.
//!
//! The listing reads the descriptor's own directory handle from its start,
//! all at once, inside the one host call: no other call of the instance
//! can move that handle's position meanwhile. Only a handle that cannot be
//! sought (an `O_PATH` preopen) is opened again, for reading, to be listed
//! (reopened with its own flags it stayed path-only, and a guest listing
//! its preopen got `bad-descriptor`). Reopening every directory cost an
//! `fcntl`, an open (with its path lookup and Landlock check) and a `close`
//! per directory of a walk.

use std::ffi::CStr;
use std::os::fd::AsFd;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir, SeekFrom, openat, seek, statat};
use wasmtime::component::Resource;
use wasmtime_wasi::filesystem::Descriptor;
use wasmtime_wasi::p2::FsResult;
use wasmtime_wasi::p2::bindings::filesystem::types as wasi;
use wasmtime_wasi::p2::bindings::sync::filesystem::types as fs;

use super::GuardedFs;

/// A directory's entries, read when it was opened for listing.
pub(super) struct Listing(std::vec::IntoIter<FsResult<fs::DirectoryEntry>>);

fn descriptor_type(kind: FileType) -> fs::DescriptorType {
    match kind {
        FileType::RegularFile => fs::DescriptorType::RegularFile,
        FileType::Directory => fs::DescriptorType::Directory,
        FileType::Symlink => fs::DescriptorType::SymbolicLink,
        FileType::Fifo => fs::DescriptorType::Fifo,
        FileType::Socket => fs::DescriptorType::Socket,
        FileType::CharacterDevice => fs::DescriptorType::CharacterDevice,
        FileType::BlockDevice => fs::DescriptorType::BlockDevice,
        FileType::Unknown => fs::DescriptorType::Unknown,
    }
}

/// Bytes of entries one `getdents64` may return: every entry fits (a name
/// is at most 255 bytes), and most directories take one call.
const LISTING_BUFFER: usize = 32 * 1024;

/// Every entry of `dir` but `.` and `..`, in the order the kernel lists them.
fn entries(dir: &std::fs::File) -> std::io::Result<Vec<FsResult<fs::DirectoryEntry>>> {
    let reopened;
    let fd = match seek(dir, SeekFrom::Start(0)) {
        Ok(_) => dir.as_fd(),
        // A handle opened only as a path (a preopen: `EBADF`), or one whose
        // filesystem will not seek a directory, is listed through a
        // readable handle of its own, opened from it.
        Err(_) => {
            reopened = openat(
                dir,
                c".",
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )?;
            reopened.as_fd()
        }
    };
    let mut buf = Vec::<u8>::with_capacity(LISTING_BUFFER);
    let mut raw = RawDir::new(fd, buf.spare_capacity_mut());
    let mut out = Vec::new();
    while let Some(entry) = raw.next() {
        let entry = entry?;
        push_entry(dir, entry.file_name(), entry.file_type(), &mut out)?;
    }
    Ok(out)
}

/// Append the entry `name` of `dir`, of type `kind` as listed, to `out`;
/// `.` and `..` are left out.
fn push_entry(
    dir: &std::fs::File,
    name: &CStr,
    kind: FileType,
    out: &mut Vec<FsResult<fs::DirectoryEntry>>,
) -> std::io::Result<()> {
    if matches!(name.to_bytes(), b"." | b"..") {
        return Ok(());
    }
    let kind = match kind {
        FileType::Unknown => {
            FileType::from_raw_mode(statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?.st_mode)
        }
        known => known,
    };
    out.push(match name.to_str() {
        Ok(name) => Ok(fs::DirectoryEntry {
            type_: descriptor_type(kind),
            name: name.to_string(),
        }),
        Err(_) => Err(wasi::ErrorCode::IllegalByteSequence.into()),
    });
    Ok(())
}

impl GuardedFs<'_> {
    /// List the directory `fd` holds into a stream of its entries.
    pub(super) fn list(
        &mut self,
        fd: &Resource<Descriptor>,
    ) -> FsResult<Resource<fs::DirectoryEntryStream>> {
        let dir = match self.inner.table.get(fd)? {
            Descriptor::Dir(d) => d.dir.clone(),
            Descriptor::File(_) => return Err(wasi::ErrorCode::NotDirectory.into()),
        };
        let listing = Listing(entries(&dir)?.into_iter());
        let stream = self.inner.table.push(listing)?;
        Ok(Resource::new_own(stream.rep()))
    }

    /// The next entry of a stream [`Self::list`] made.
    pub(super) fn next_entry(
        &mut self,
        stream: &Resource<fs::DirectoryEntryStream>,
    ) -> FsResult<Option<fs::DirectoryEntry>> {
        let listing: Resource<Listing> = Resource::new_borrow(stream.rep());
        self.inner.table.get_mut(&listing)?.0.next().transpose()
    }

    /// Drop a stream [`Self::list`] made.
    pub(super) fn drop_listing(
        &mut self,
        stream: Resource<fs::DirectoryEntryStream>,
    ) -> wasmtime::Result<()> {
        let listing: Resource<Listing> = Resource::new_own(stream.rep());
        self.inner.table.delete(listing)?;
        Ok(())
    }
}
