//! The echo example's next version, for upgrade tests: the same tool under
//! the same plugin name, with a manifest that asks for more (see
//! `warden.toml`).

include!("../../../../plugins/examples/echo/src/lib.rs");
