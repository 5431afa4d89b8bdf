//! Watching the data directory for plugins installed or removed while the
//! server runs: the catalog is reopened and every session is told
//! (`notifications/tools/list_changed`).
//!
//! Invariant: a catalog is swapped in only once the lockfile and the
//! plugins directory look the same on two polls in a row (an install in
//! progress is not read half-written) and it opened without error; until
//! then calls keep the catalog they had.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::server::McpServer;
use crate::plugin::{Catalog, LOCKFILE};

/// How often the data directory is looked at.
const POLL: Duration = Duration::from_millis(250);

/// What the data directory looks like, as far as the catalog cares.
type Snapshot = Vec<(String, Option<SystemTime>, u64)>;

/// Watch `server`'s data directory until the returned task is aborted
/// (dropping the guard aborts it).
pub(super) fn spawn(server: Arc<McpServer>) -> WatchGuard {
    WatchGuard(tokio::spawn(async move {
        let home = server.options.home.clone();
        let mut served = snapshot(&home);
        let mut seen = served.clone();
        loop {
            tokio::time::sleep(POLL).await;
            let now = snapshot(&home);
            let settled = now == seen;
            seen = now;
            if !settled || seen == served {
                continue;
            }
            let opened = {
                let home = home.clone();
                tokio::task::spawn_blocking(move || Catalog::open(&home)).await
            };
            match opened {
                Ok(Ok(catalog)) => {
                    served = seen.clone();
                    server.replace_catalog(catalog);
                    for peer in server.peers() {
                        let _ = peer.notify_tool_list_changed().await;
                    }
                }
                Ok(Err(e)) => {
                    served = seen.clone();
                    eprintln!("warden mcp: the plugins changed but cannot be opened: {e}");
                }
                Err(e) => eprintln!("warden mcp: reopening the plugins failed: {e}"),
            }
        }
    }))
}

/// Aborts the watch when dropped.
pub(super) struct WatchGuard(tokio::task::JoinHandle<()>);

impl Drop for WatchGuard {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The lockfile and each entry of the plugins directory: name, modified
/// time, size.
fn snapshot(home: &crate::home::Home) -> Snapshot {
    let mut out = vec![stat(LOCKFILE.to_string(), &home.root().join(LOCKFILE))];
    if let Ok(dir) = std::fs::read_dir(home.plugins_dir()) {
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            out.push(stat(name, &e.path()));
        }
    }
    out.sort();
    out
}

fn stat(name: String, path: &Path) -> (String, Option<SystemTime>, u64) {
    match std::fs::metadata(path) {
        Ok(m) => (name, m.modified().ok(), m.len()),
        Err(_) => (name, None, 0),
    }
}
