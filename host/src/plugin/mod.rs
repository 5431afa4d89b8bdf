//! Plugins: manifests, the built-in set, installation and approval, the
//! capability bill of materials, the catalog of every tool available to
//! a call, components run without installing them, and fetching from a URL
//! or an OCI registry.

mod bom;
mod builtin;
mod catalog;
mod diff;
pub mod fetch;
mod inspect;
mod install;
mod lockfile;
mod registry;
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
