//! A run's copy-on-write layer over the workspace (`warden run --review`).
//!
//! Every write a run makes lands in an overlay kept in Warden's data
//! directory; the workspace is untouched until `warden review apply`.
//!
//! On disk, one directory per overlay under `<home>/overlays/<id>/`:
//!
//! - `meta.json`: [`OverlayMeta`], rewritten whole (atomically) when it
//!   changes;
//! - `started`: an empty file made before the run's first write; its ctime
//!   is the instant the run started, on the kernel's clock that also stamps
//!   the workspace's files (the three-way check of `apply` compares with
//!   it: a workspace entry whose ctime is not older changed since);
//! - `upper/`: the overlay filesystem's upper directory, in overlayfs's own
//!   format as a user-namespace mount (`userxattr`) writes it: a file or
//!   symlink is the new content of that path; a character device 0:0 is a
//!   whiteout (the path was deleted); a directory with the extended
//!   attribute `user.overlay.opaque` = `y` replaces the workspace's
//!   directory of that name instead of merging with it;
//! - `work/`: overlayfs's work directory (same filesystem as `upper/`).
//!
//! The format is the kernel's, so a run killed half-way leaves an overlay
//! that can still be reviewed.

pub mod apply;
mod beneath;
pub mod changes;
mod layout;
#[allow(unsafe_code)]
mod mount;
mod remove;
mod size;
mod status;

pub use changes::{Change, ChangeKind, Changes, ChangesError, Content, Node, Side};
pub use layout::{Overlay, OverlayError, OverlayMeta, OverlayState, overlays_dir};
pub use mount::{check_placement, mount_over};
pub use size::{RUN_CAP, TOTAL_CAP, check_total, tree_bytes};
pub use status::RunStatus;
