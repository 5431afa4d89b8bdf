//! `read` on a file descriptor: what wasmtime's does, in one call for up
//! to [`MAX_READ`] bytes and into a buffer that is not zero-filled first.
//!
//! wasmtime reads at most 64 KiB per call into a freshly zeroed buffer, so
//! a guest reading a 5 MiB file makes 80 calls and every byte is written
//! three times. Nothing here is checked that wasmtime checks: a read is
//! made on a descriptor the guest already opened through the boundary (a
//! directory is `bad-descriptor`, as in wasmtime), at the offset it gives,
//! and host memory per call stays bounded by [`MAX_READ`].

use std::sync::Arc;

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
        let size_at_open = match &self.boundary.size_at_open {
            Some((opened, size)) if std::ptr::eq(opened.as_ptr(), Arc::as_ptr(&file)) => {
                Some(*size)
            }
            _ => None,
        };
        let want = usize::try_from(len).unwrap_or(usize::MAX).min(MAX_READ);
        read_up_to(|buf, at| pread(&file, buf, at), offset, want, size_at_open)
    }
}

/// One `pread` of `file` at `at` into the spare capacity of `buf`.
fn pread(file: &std::fs::File, buf: &mut Vec<u8>, at: u64) -> std::io::Result<usize> {
    rustix::io::pread(file, spare_capacity(buf), at).map_err(std::io::Error::from)
}

/// Read with `pread` (which fills the spare capacity of the buffer it is
/// given, from the offset it is given) up to `want` bytes at `offset`,
/// until that many are read or the file ends; `true` when it ended.
/// `size_at_open` is the file's size when it was opened, if known.
fn read_up_to(
    mut pread: impl FnMut(&mut Vec<u8>, u64) -> std::io::Result<usize>,
    offset: u64,
    want: usize,
    size_at_open: Option<u64>,
) -> FsResult<(Vec<u8>, bool)> {
    let mut buf = Vec::with_capacity(want);
    while buf.len() < want {
        let at = offset
            .checked_add(buf.len() as u64)
            .ok_or(wasi::ErrorCode::Overflow)?;
        let asked = buf.capacity() - buf.len();
        let read = pread(&mut buf, at)?;
        if read == 0 {
            return Ok((buf, true));
        }
        // A read that stopped short at or past the size the file had when
        // opened found its end, as the next read would say (a filesystem
        // that reads short before the end stops before that size, and is
        // read on).
        let reached = at + read as u64;
        if read < asked && size_at_open.is_some_and(|size| reached >= size) {
            return Ok((buf, true));
        }
    }
    Ok((buf, false))
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// `read_up_to` on `file`, as `read_whole` makes it.
    fn read(file: &std::fs::File, offset: u64, want: usize, size: Option<u64>) -> (Vec<u8>, bool) {
        read_up_to(|buf, at| pread(file, buf, at), offset, want, size).unwrap()
    }

    #[test]
    fn a_file_read_whole_ends_where_it_ends_whatever_its_size_did_since_it_was_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"0123456789").unwrap();
        let file = std::fs::File::open(&path).unwrap();
        assert_eq!(
            read(&file, 0, 100, Some(10)),
            (b"0123456789".to_vec(), true)
        );
        assert_eq!(read(&file, 4, 100, Some(10)), (b"456789".to_vec(), true));
        assert_eq!(read(&file, 0, 4, Some(10)), (b"0123".to_vec(), false));
        assert_eq!(read(&file, 0, 100, None), (b"0123456789".to_vec(), true));
        // Grown since it was opened: read on past the size then.
        let mut append = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        append.write_all(b"abcdefghij").unwrap();
        let grown = b"0123456789abcdefghij".to_vec();
        assert_eq!(read(&file, 0, 100, Some(10)), (grown.clone(), true));
        assert_eq!(read(&file, 0, 100, Some(0)), (grown, true));
        // Shrunk since: the read stops short of the old size and reads on
        // to hear the end.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(3)
            .unwrap();
        assert_eq!(read(&file, 0, 100, Some(20)), (b"012".to_vec(), true));
    }

    #[test]
    fn a_filesystem_that_reads_short_before_the_end_is_read_on() {
        // Three bytes per read, as some network and FUSE filesystems give.
        let data = b"abcdefghijklmnop";
        let mut reads = 0;
        let short = |buf: &mut Vec<u8>, at: u64| {
            reads += 1;
            let at = at as usize;
            let n = 3
                .min(data.len().saturating_sub(at))
                .min(buf.capacity() - buf.len());
            buf.extend_from_slice(&data[at..at + n]);
            Ok(n)
        };
        let (got, end) = read_up_to(short, 0, 100, Some(data.len() as u64)).unwrap();
        assert_eq!((got.as_slice(), end), (&data[..], true));
        // Five short reads, and the sixth reaches the size and ends it.
        assert_eq!(reads, 6);
    }
}
