//! Build script of the built-in plugins (`build = "../initial_memory.rs"`
//! in their manifests): start the guest with 4 MiB of linear memory
//! instead of the linker's minimum (data plus stack), because their calls
//! allocate.
//!
//! A guest that grows its memory during a call costs the host two
//! `mprotect`s per call in the pooling allocator (one to grow, one to shrink
//! the slot back before the next instance), each a TLB shootdown across the
//! host's threads; with the linker's minimum every `read_file` grew it.
//! Initial memory a call never touches is not free either: resetting the
//! slot after a call walks the page tables of all of it (`PAGEMAP_SCAN`),
//! 3–5 µs a call for 4 MiB. So a tool that needs almost no heap, like
//! the example `echo` and the test fixtures, keeps the linker's default.

fn main() {
    println!("cargo::rerun-if-changed=../initial_memory.rs");
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo::rustc-link-arg=--initial-memory=4194304");
    }
}
