//! How much an overlay holds, and the caps on it.
//!
//! Sizes are the files' lengths (what reading them back would give), summed
//! over `upper/`; whiteouts and directories count nothing.

use std::path::Path;

use crate::home::Home;

use super::{Overlay, OverlayError};

/// The default cap on what one run may write to its overlay: 1 GiB.
pub const RUN_CAP: u64 = 1 << 30;

/// The default cap on all overlays kept together: 10 GiB.
pub const TOTAL_CAP: u64 = 10 << 30;

/// The bytes of the files under `dir`; entries that vanish while it is
/// walked count nothing.
pub fn tree_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => tree_bytes(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map(|m| m.len()).unwrap_or(0),
            _ => 0,
        })
        .sum()
}

impl Overlay {
    /// What the run wrote so far.
    pub fn upper_bytes(&self) -> u64 {
        tree_bytes(&self.upper())
    }
}

/// Refuse to make another overlay when those kept already hold more than
/// `limit` bytes.
pub fn check_total(home: &Home, limit: u64) -> Result<(), OverlayError> {
    let used: u64 = Overlay::list(home)?.iter().map(Overlay::upper_bytes).sum();
    match used > limit {
        true => Err(OverlayError::TotalCap { used, limit }),
        false => Ok(()),
    }
}
