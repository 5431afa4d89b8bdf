//! Capabilities: what a call is granted, and how a grant becomes WASI.
//!
//! Invariant: a guest's WASI context and linker are built only from its
//! [`Grant`]. No environment, arguments, stdio or network are inherited, the
//! only preopens are the workspace and the extra directories the grant
//! names, no guest path resolves outside its preopen (cap-std enforces this
//! for `..` and symlinks alike), and an interface the grant does not allow
//! is not linked: calling it traps and the call reports which interface it
//! was. `warden:tool/interaction` is linked only for a grant with
//! interaction. `wasi:http` is linked only for a grant with network, behind the
//! [`egress`] checks; `wasi:sockets` never is. The filesystem is linked
//! behind [`GuardedFs`], which refuses every change to the grant's
//! protected paths (and reads and metadata, if they are not readable), in
//! every preopen, wherever the guest's path leads and by whichever hard
//! link it is reached, and holds the call's writes to its [`WriteQuota`].

mod beneath;
mod clock;
mod deadline_io;
pub mod egress;
mod exercised;
mod extra_dirs;
mod fs_boundary;
mod grant;
mod guarded_fs;
mod hard_links;
mod imports;
mod manifest;
mod memory_notes;
pub(crate) mod path_guard;
pub mod process;
mod stdio_pipe;
mod wasi;
mod write_quota;

pub use clock::{DeadlineClock, HasDeadlineClock};
pub use deadline_io::{DeadlineIo, HasDeadlineIo};
pub use egress::{EgressEnv, NetworkGrant, NetworkRecords};
pub use exercised::{Exercised, FileOp, FileUse, FileUses, MAX_FILE_USES};
pub use extra_dirs::DirGrant;
pub use fs_boundary::{
    BoundaryDenial, BoundaryReport, FsBoundary, FsOp, FsShared, MAX_BOUNDARY_DENIALS,
};
pub use grant::{FsAccess, FsGrant, Grant, GrantCut, InteractionGrant, WriteMode};
pub use guarded_fs::{
    BadNeedles, Filtered, GuardedFs, HasGuardedFs, MAX_NEEDLE_LEN, MAX_NEEDLES, Needles,
};
pub use hard_links::MAX_WALK_ENTRIES;
pub use imports::{ImportClass, classify_import};
pub use manifest::{
    DeclaredCapabilities, FsNeed, MANIFEST_SECTION, Manifest, ManifestError, valid_plugin_name,
};
pub use memory_notes::{MAX_MEMORY_BYTES, MemoryError, MemoryNotes, redact_notes};
pub use path_guard::{
    DEFAULT_PROTECTED, GlobError, PathGuard, PathUse, ProtectedReads, normalize_path,
};
pub use stdio_pipe::{CappedPipe, Captured};
pub use wasi::{GUEST_WORKSPACE, build_wasi};
pub use write_quota::{QuotaExceeded, WriteQuota};
