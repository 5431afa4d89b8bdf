//! Writes held to the call's write quota (module `write_quota`): data
//! written through a descriptor or its output streams, and files extended
//! without data, by `set-size` or by writing past their end.

use wasmtime::component::Resource;
use wasmtime_wasi::filesystem::Descriptor;
use wasmtime_wasi::p2::bindings::filesystem::types as wasi;
use wasmtime_wasi::p2::bindings::sync::filesystem::types::{self as fs, HostDescriptor};
use wasmtime_wasi::p2::{DynOutputStream, FsError, FsResult};

use super::GuardedFs;
use crate::capability::write_quota::QuotaStream;

fn refused() -> FsError {
    wasi::ErrorCode::Quota.into()
}

impl GuardedFs<'_> {
    /// Bytes by which writing at `offset` would extend the file `fd` holds
    /// without data; 0 when that is not a file (the operation then fails
    /// on its own).
    fn hole_at(&mut self, fd: &Resource<Descriptor>, offset: u64) -> u64 {
        if offset == 0 {
            return 0;
        }
        match self.inner.table.get(fd) {
            Ok(Descriptor::File(f)) => f
                .file
                .metadata()
                .map_or(0, |m| offset.saturating_sub(m.len())),
            _ => 0,
        }
    }

    /// `descriptor.write`, cut to the quota left: a short write, or `quota`
    /// once nothing is left.
    pub(super) fn write_in_quota(
        &mut self,
        fd: Resource<Descriptor>,
        mut buf: Vec<u8>,
        offset: fs::Filesize,
    ) -> FsResult<fs::Filesize> {
        let quota = self.boundary.write_quota().clone();
        let hole = self.hole_at(&fd, offset);
        if !quota.take_all(hole) {
            return Err(refused());
        }
        let want = buf.len() as u64;
        let got = quota.take_up_to(want);
        if got == 0 && want > 0 {
            quota.give_back(hole);
            return Err(refused());
        }
        // `got` is at most the buffer's length.
        buf.truncate(usize::try_from(got).unwrap_or(usize::MAX));
        match self.inner.write(fd, buf, offset) {
            Ok(written) => {
                quota.give_back(got.saturating_sub(written));
                Ok(written)
            }
            Err(e) => {
                quota.give_back(got + hole);
                Err(e)
            }
        }
    }

    /// `set-size`: growth counts in full, or the call fails with `quota`.
    pub(super) fn set_size_in_quota(
        &mut self,
        fd: Resource<Descriptor>,
        size: fs::Filesize,
    ) -> FsResult<()> {
        let quota = self.boundary.write_quota().clone();
        let growth = match self.inner.table.get(&fd) {
            Ok(Descriptor::File(f)) => f
                .file
                .metadata()
                .map_or(0, |m| size.saturating_sub(m.len())),
            _ => 0,
        };
        if !quota.take_all(growth) {
            return Err(refused());
        }
        self.inner
            .set_size(fd, size)
            .inspect_err(|_| quota.give_back(growth))
    }

    /// `write-via-stream` (`offset` given) or `append-via-stream` (`None`),
    /// the stream counting every write against the quota.
    pub(super) fn stream_in_quota(
        &mut self,
        fd: Resource<Descriptor>,
        offset: Option<fs::Filesize>,
    ) -> FsResult<Resource<DynOutputStream>> {
        let quota = self.boundary.write_quota().clone();
        let hole = offset.map_or(0, |at| self.hole_at(&fd, at));
        if !quota.take_all(hole) {
            return Err(refused());
        }
        let stream = match offset {
            Some(at) => self.inner.write_via_stream(fd, at),
            None => self.inner.append_via_stream(fd),
        }
        .inspect_err(|_| quota.give_back(hole))?;
        let inner: DynOutputStream = self.inner.table.delete(stream)?;
        Ok(self.inner.table.push(QuotaStream::wrap(inner, quota))?)
    }
}
