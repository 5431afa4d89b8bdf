//! Whether an overlay's run is still going, and how much room it takes.
//!
//! A `running` overlay whose process is gone was interrupted (killed, or
//! the machine stopped): it can be reviewed, applied and discarded like a
//! finished one. One whose process is alive is never applied or cleaned.

use std::path::Path;

use serde::Serialize;

use super::{Overlay, OverlayState};

/// What `warden review list` says of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Its `warden run` is alive and may still write.
    Running,
    Finished,
    /// Marked running, but its process is gone.
    Interrupted,
}

impl RunStatus {
    pub fn word(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Finished => "finished",
            RunStatus::Interrupted => "interrupted",
        }
    }
}

impl Overlay {
    /// Whether the run is going, finished or was interrupted.
    pub fn status(&self) -> RunStatus {
        match self.meta().state {
            OverlayState::Finished => RunStatus::Finished,
            OverlayState::Running if pid_alive(self.meta().pid) => RunStatus::Running,
            OverlayState::Running => RunStatus::Interrupted,
        }
    }

    /// Bytes the overlay's directory takes on disk (symlinks not followed).
    pub fn disk_usage(&self) -> u64 {
        usage(self.dir())
    }
}

fn pid_alive(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        Err(e) => e == rustix::io::Errno::PERM,
    }
}

fn usage(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    let mut total = meta.blocks() * 512;
    if meta.is_dir()
        && let Ok(entries) = std::fs::read_dir(path)
    {
        total += entries.flatten().map(|e| usage(&e.path())).sum::<u64>();
    }
    total
}
