//! A pids cgroup of the call's own, which bounds its number of processes
//! (root included, which `RLIMIT_NPROC` exempts).
//!
//! Invariant: a call's cgroup is created before its process and removed
//! after the whole tree is gone; the child joins it as its first act, before
//! it can fork. Works with a cgroup v1 `pids` hierarchy or a cgroup v2 one
//! whose `pids` controller is enabled for the host's cgroup's children.

use std::fs;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Where a pids cgroup can be made for each call: `None` when nowhere.
pub(super) fn probe_parent() -> Option<PathBuf> {
    let own = fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut candidates = Vec::new();
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let rel = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == "pids") {
            candidates.push(Path::new("/sys/fs/cgroup/pids").join(rel));
        } else if controllers.is_empty() {
            for root in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] {
                candidates.push(Path::new(root).join(rel));
            }
        }
    }
    candidates.into_iter().find(|dir| usable(dir))
}

/// Whether a child cgroup of `dir` gets a `pids.max`.
fn usable(dir: &Path) -> bool {
    let probe = dir.join(format!("warden-probe-{}", std::process::id()));
    if fs::create_dir(&probe).is_err() {
        return false;
    }
    let mut ok = probe.join("pids.max").exists();
    if !ok && fs::write(dir.join("cgroup.subtree_control"), "+pids").is_ok() {
        ok = probe.join("pids.max").exists();
    }
    let _ = fs::remove_dir(&probe);
    ok
}

/// One call's cgroup; removed on drop.
#[derive(Debug)]
pub(super) struct CallCgroup {
    dir: PathBuf,
}

impl CallCgroup {
    /// A new cgroup under `parent` allowing `max` processes, and the
    /// `cgroup.procs` file the child writes `0` to, to join it.
    pub(super) fn create(parent: &Path, max: u64) -> std::io::Result<(CallCgroup, OwnedFd)> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = parent.join(format!("warden-{}-{n}", std::process::id()));
        fs::create_dir(&dir)?;
        let cgroup = CallCgroup { dir };
        fs::write(cgroup.dir.join("pids.max"), max.to_string())?;
        let procs = fs::OpenOptions::new()
            .write(true)
            .open(cgroup.dir.join("cgroup.procs"))?;
        Ok((cgroup, procs.into()))
    }

    /// Whether a fork was refused for the limit.
    pub(super) fn hit_limit(&self) -> bool {
        fs::read_to_string(self.dir.join("pids.events")).is_ok_and(|events| {
            events.lines().any(|l| {
                l.strip_prefix("max ")
                    .is_some_and(|n| n.trim().parse::<u64>().is_ok_and(|n| n > 0))
            })
        })
    }
}

impl Drop for CallCgroup {
    fn drop(&mut self) {
        // The tree is reaped before this runs; the kernel may take a moment
        // to release the last task from the cgroup.
        for _ in 0..50 {
            if fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
}
