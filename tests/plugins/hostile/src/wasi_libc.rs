//! Calls into wasi-libc and raw WASI imports for what stable std does not
//! expose on wasm32-wasip2.
//!
//! `std::os::wasi::fs::symlink_path` is gated behind the unstable `wasi_ext`
//! feature and there is no `std::os::unix` on this target, so `symlink(2)` is
//! declared here directly; std already links wasi-libc, which resolves the
//! path against the preopens like every other std call.

use std::ffi::{CString, c_char, c_int};
use std::io;

unsafe extern "C" {
    fn symlink(target: *const c_char, link: *const c_char) -> c_int;
}

/// Create a symbolic link at `link` whose contents are `target`, verbatim.
pub fn symlink_path(target: &str, link: &str) -> io::Result<()> {
    let target = CString::new(target)?;
    let link = CString::new(link)?;
    // SAFETY: both arguments are NUL-terminated strings that outlive the call.
    let rc = unsafe { symlink(target.as_ptr(), link.as_ptr()) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(target_family = "wasm")]
#[link(wasm_import_module = "wasi:random/random@0.2.6")]
unsafe extern "C" {
    /// `get-random-bytes: func(len: u64) -> list<u8>` in the canonical ABI:
    /// the list's pointer and length are written to `ret`.
    #[link_name = "get-random-bytes"]
    fn get_random_bytes(len: u64, ret: *mut [usize; 2]);
}

/// Ask the host for `len` random bytes in a single `wasi:random` call, with
/// no chunking, so the host's per-call cap is what decides.
#[cfg(target_family = "wasm")]
pub fn random_bytes(len: u64) -> Vec<u8> {
    let mut ret = [0usize; 2];
    // SAFETY: the host writes a (pointer, length) pair describing a buffer it
    // allocated through this module's `cabi_realloc` with align 1 and exactly
    // that length; ownership passes to us, as the canonical ABI specifies.
    unsafe {
        get_random_bytes(len, &mut ret);
        Vec::from_raw_parts(ret[0] as *mut u8, ret[1], ret[1])
    }
}

/// Off wasm (native unit-test builds) there is no host to ask.
#[cfg(not(target_family = "wasm"))]
pub fn random_bytes(len: u64) -> Vec<u8> {
    vec![0; usize::try_from(len).unwrap_or(0)]
}
