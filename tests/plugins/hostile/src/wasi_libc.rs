//! Calls into wasi-libc for what stable std does not expose on wasm32-wasip2.
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
