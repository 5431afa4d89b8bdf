//! Plugins: manifests, the built-in set, installation, and the catalog of
//! every tool available to a call.

mod builtin;
mod catalog;
mod inspect;
mod manifest;
mod registry;

pub use builtin::{BUILTIN, BuiltinPlugin};
pub use catalog::{Catalog, CatalogError, PluginEntry, PluginSource};
pub use inspect::{ImportClass, Inspection, classify_import};
pub use manifest::{DeclaredCapabilities, FsNeed, MANIFEST_SECTION, Manifest, ManifestError};
pub use registry::{InstallError, InstallReport, InstalledPlugin, Registry};
