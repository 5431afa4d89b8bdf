//! Plugins: manifests, the built-in set, installation and approval, the
//! capability bill of materials, the catalog of every tool available to
//! a call, components run without installing them, fetching from a URL
//! or an OCI registry, and for plugin authors new crates (`scaffold`) and
//! their builds (`cargo_build`).

mod bom;
mod builtin;
pub mod cargo_build;
mod catalog;
mod diff;
pub mod fetch;
mod inspect;
mod install;
mod lockfile;
mod registry;
pub mod scaffold;
mod trust;
mod uninstalled;

pub use bom::{Bom, Finding, Reach, Severity, ToolGrant, findings, granted};
pub use builtin::{BUILTIN, BuiltinPlugin};
pub use catalog::{Catalog, CatalogError, PluginEntry, PluginSource};
pub use diff::{CapChange, diff, grows};
pub use inspect::Inspection;
pub use install::Candidate;
pub use lockfile::{LOCKFILE, LockError, Locked, Lockfile};
pub use registry::{InstallError, InstallReport, InstalledPlugin, Registry};
pub use uninstalled::PluginOrigin;
