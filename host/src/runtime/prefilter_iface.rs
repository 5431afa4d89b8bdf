//! `warden:tool/prefilter` (0.2.2): a guarded read handed to the guest only
//! when it holds one of the guest's needles.
//!
//! Invariant: linked only where `wasi:filesystem` is, and it reads only
//! through [`GuardedFs::read_if_contains`](crate::capability::GuardedFs),
//! on a descriptor the guest already opened through the boundary. The
//! search for the last needle set is kept, so that a walk compiles it once.

use wasmtime::component::Resource;
use wasmtime_wasi::filesystem::Descriptor;
use wasmtime_wasi::p2::bindings::sync::filesystem::types::Host as _;

use super::bindings::v0_2::prefilter as wit;
use super::state::CallState;
use crate::capability::{Filtered, Needles};

impl wit::Host for CallState {
    fn read_if_contains(
        &mut self,
        fd: Resource<Descriptor>,
        len: u64,
        offset: u64,
        needles: Vec<Vec<u8>>,
        sniff: u32,
    ) -> wasmtime::Result<Result<wit::Found, wit::PrefilterError>> {
        let compiled = match self.needles.take() {
            Some(kept) if kept.is_for(&needles) => kept,
            _ => match Needles::new(needles) {
                Ok(compiled) => compiled,
                Err(_) => return Ok(Err(wit::PrefilterError::BadNeedles)),
            },
        };
        let mut fs = self.guarded_fs();
        let result = fs.read_if_contains(&fd, len, offset, &compiled, sniff);
        let found = match result {
            Ok(Filtered::Bytes(bytes, end)) => Ok(wit::Found::Bytes((bytes, end))),
            Ok(Filtered::Absent {
                size,
                end,
                nul_in_head,
            }) => Ok(wit::Found::Absent(wit::Absence {
                size,
                end,
                nul_in_head,
            })),
            Err(e) => Err(wit::PrefilterError::Read(fs.convert_error_code(e)?)),
        };
        self.needles = Some(compiled);
        Ok(found)
    }
}
