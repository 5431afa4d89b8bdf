//! `read` on a file descriptor: what wasmtime's does, in one call for up
//! to [`MAX_READ`] bytes and into a buffer that is not zero-filled first.
//!
//! wasmtime reads at most 64 KiB per call into a freshly zeroed buffer, so
//! a guest reading a 5 MiB file makes 80 calls and every byte is written
//! three times. Nothing here is checked that wasmtime checks: a read is
//! made on a descriptor the guest already opened through the boundary (a
//! directory is `bad-descriptor`, as in wasmtime), at the offset it gives,
//! and host memory per call stays bounded by [`MAX_READ`].

use rustix::buffer::spare_capacity;
use wasmtime::component::Resource;
use wasmtime_wasi::filesystem::Descriptor;
use wasmtime_wasi::p2::FsResult;
use wasmtime_wasi::p2::bindings::filesystem::types as wasi;

use super::GuardedFs;

/// The most bytes one `read` returns.
pub(super) const MAX_READ: usize = 4 * 1024 * 1024;

impl GuardedFs<'_> {
    /// Read up to `len` bytes (at most [`MAX_READ`]) at `offset`: until
    /// that many are read or the file ends; `true` when it ended.
    pub(super) fn read_whole(
        &mut self,
        fd: &Resource<Descriptor>,
        len: u64,
        offset: u64,
    ) -> FsResult<(Vec<u8>, bool)> {
        let file = match self.inner.table.get(fd)? {
            Descriptor::File(f) => f.file.clone(),
            Descriptor::Dir(_) => return Err(wasi::ErrorCode::BadDescriptor.into()),
        };
        let want = usize::try_from(len).unwrap_or(usize::MAX).min(MAX_READ);
        let mut buf = Vec::with_capacity(want);
        while buf.len() < want {
            let at = offset
                .checked_add(buf.len() as u64)
                .ok_or(wasi::ErrorCode::Overflow)?;
            let read = rustix::io::pread(&*file, spare_capacity(&mut buf), at)
                .map_err(std::io::Error::from)?;
            if read == 0 {
                return Ok((buf, true));
            }
        }
        Ok((buf, false))
    }
}
