//! Host bindings for each minor version of `warden:tool`, generated from
//! `wit/`. The host dispatches on the version a component exports
//! ([`super::guest::GuestPre`]).
//!
//! 0.1.1 only adds to 0.1.0, and wasmtime matches `0.1.x` names as
//! semver-compatible, so [`v0_1`] runs 0.1.0 components as well; in the
//! same way 0.2.1 and 0.2.2 only add to 0.2.0, and [`v0_2`] runs all
//! three. The `wasi:` types 0.2.2 uses are wasmtime's own, so a
//! descriptor passed to `prefilter` is the one the guarded filesystem opened.

/// `warden:tool@0.1.1`, for every 0.1.x component.
pub mod v0_1 {
    wasmtime::component::bindgen!({
        path: "../wit/0.1.1",
        world: "tool-plugin",
    });

    pub use self::warden::tool::{host, types};
}

/// `warden:tool@0.2.2`, for every 0.2.x component.
pub mod v0_2 {
    wasmtime::component::bindgen!({
        path: "../wit/0.2.2",
        world: "tool-plugin",
        imports: { "warden:tool/prefilter.read-if-contains": trappable },
        with: {
            "wasi:io": wasmtime_wasi::p2::bindings::sync::io,
            "wasi:clocks": wasmtime_wasi::p2::bindings::clocks,
            "wasi:filesystem": wasmtime_wasi::p2::bindings::sync::filesystem,
        },
    });

    pub use self::warden::tool::{host, interaction, prefilter, process, types};
}
