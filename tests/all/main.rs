//! Warden's integration tests: one binary, one module per concern, all
//! against real wasmtime and real components built from `plugins/` and
//! `tests/plugins/`.

mod cli;
mod limits;
mod plugins;
mod smoke;
mod support;
