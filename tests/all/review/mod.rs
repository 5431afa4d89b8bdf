//! `warden review`: overlays made by a real overlayfs mount (in a user and
//! mount namespace) or, for hostile cases, by hand; the real binary shows,
//! applies, discards, lists and cleans them.

mod apply;
mod manage;
mod show;

use std::path::{Path, PathBuf};
use std::process::Command;

use warden::home::Home;
use warden::overlay::{Overlay, OverlayState};

use crate::support::*;

/// A workspace (with canaries beside it), a data directory and one
/// finished overlay of the workspace.
pub struct Reviewed {
    pub sb: Sandbox,
    pub home: tempfile::TempDir,
    pub overlay: Overlay,
}

impl Reviewed {
    /// The workspace holding `files` (path, content), and an empty overlay
    /// made after them.
    pub fn new(files: &[(&str, &str)]) -> Reviewed {
        let sb = Sandbox::new();
        for (p, c) in files {
            sb.write(p, c);
        }
        let home = tempfile::Builder::new()
            .prefix("warden-review-")
            .tempdir()
            .unwrap();
        let mut overlay = Overlay::create(&Home::at(home.path().into()), &sb.ws(), "test").unwrap();
        overlay.meta_mut().state = OverlayState::Finished;
        overlay.meta_mut().session_id = Some("sess-1".into());
        overlay.save().unwrap();
        Reviewed { sb, home, overlay }
    }

    pub fn id(&self) -> String {
        self.overlay.id().to_string()
    }

    pub fn upper(&self) -> PathBuf {
        self.overlay.upper()
    }

    /// Run `script` with `sh` in the overlay mounted over the workspace,
    /// as the kernel's overlayfs writes it (`userxattr`, as `run --review`).
    pub fn run_in_overlay(&self, script: &str) {
        let merged = tempfile::tempdir().unwrap();
        let opts = format!(
            "lowerdir={},upperdir={},workdir={},userxattr",
            self.sb.ws().display(),
            self.upper().display(),
            self.overlay.work().display()
        );
        let full = format!(
            "set -e; mount -t overlay overlay -o \"$OPTS\" \"$MERGED\"; cd \"$MERGED\"; {script}"
        );
        let out = Command::new("unshare")
            .args(["-Urm", "sh", "-c", &full])
            .env("OPTS", opts)
            .env("MERGED", merged.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn review(&self, args: &[&str]) -> (Option<i32>, String, String) {
        cli(self.home.path(), args)
    }

    /// The overlay's directory still exists.
    pub fn overlay_exists(&self) -> bool {
        self.overlay.dir().exists()
    }

    /// The events of the audit log of this data directory.
    pub fn audit_events(&self, kind: &str) -> Vec<serde_json::Value> {
        let (code, out, err) = self.review(&["audit", "show", "--json"]);
        assert_eq!(code, Some(0), "{err}");
        out.lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["event"].clone())
            .filter(|e| e["type"] == kind)
            .collect()
    }
}

/// The pid of a process that has ended.
pub fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// Every entry under `dir`, relative, sorted (symlinks not followed).
pub fn tree(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .map(|e| {
            e.unwrap()
                .path()
                .strip_prefix(dir)
                .unwrap()
                .display()
                .to_string()
        })
        .collect();
    out.sort();
    out
}
