//! A session's workspace: `-w` (canonical), narrowed to the client's first
//! root that lies inside it when the client offers roots.
//!
//! Invariant: the workspace a call gets is always `-w` or a directory
//! beneath it; a root outside `-w`, one that is not a local `file://`
//! directory, or a client that does not answer in time leaves `-w`. The
//! client is asked once per session, and again only after it says its
//! roots changed: a client that cannot answer does not hold up every call.

use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::service::Peer;
use tokio::sync::Mutex;

use crate::base::Verbosity;

/// How long a client has to answer `roots/list`.
const ROOTS_TIMEOUT: Duration = Duration::from_secs(5);

/// The workspace a session resolved from the client's roots, refreshed
/// when the client says they changed.
pub(super) struct Roots {
    resolved: Mutex<Option<PathBuf>>,
    /// Whether a root left out or unread is said on stderr.
    warn: bool,
}

impl Roots {
    pub(super) fn new(verbosity: Verbosity) -> Roots {
        Roots {
            resolved: Mutex::new(None),
            warn: verbosity.shows_warnings(),
        }
    }

    /// Forget the resolved workspace: the roots changed.
    pub(super) async fn changed(&self) {
        *self.resolved.lock().await = None;
    }

    /// The workspace for a call: `bound` when the client offers no roots,
    /// else the first root at or beneath `bound` (or `bound` itself when a
    /// root contains it).
    pub(super) async fn workspace(&self, peer: &Peer<RoleServer>, bound: &Path) -> PathBuf {
        let offers_roots = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        if !offers_roots {
            return bound.to_path_buf();
        }
        let mut resolved = self.resolved.lock().await;
        if let Some(ws) = &*resolved {
            return ws.clone();
        }
        let listed = tokio::time::timeout(ROOTS_TIMEOUT, list_roots(peer)).await;
        let ws = match listed {
            Ok(Ok(uris)) => narrowed(bound, &uris, self.warn),
            Ok(Err(e)) => {
                if self.warn {
                    eprintln!("warden mcp: the client's roots could not be read ({e}); using -w");
                }
                bound.to_path_buf()
            }
            Err(_) => {
                if self.warn {
                    eprintln!("warden mcp: the client did not list its roots in time; using -w");
                }
                bound.to_path_buf()
            }
        };
        *resolved = Some(ws.clone());
        ws
    }
}

/// The client's roots, as URIs. Roots are deprecated by the 2026-07-28
/// revision, which this server does not offer; they are current in the
/// handshake revisions it does.
#[allow(deprecated)]
async fn list_roots(peer: &Peer<RoleServer>) -> Result<Vec<String>, rmcp::ServiceError> {
    let list = peer.list_roots().await?;
    Ok(list.roots.into_iter().map(|r| r.uri).collect())
}

/// The first of `uris` that lies inside `bound`, else `bound`.
fn narrowed(bound: &Path, uris: &[String], warn: bool) -> PathBuf {
    for uri in uris {
        let Some(dir) = file_uri_path(uri).and_then(|p| std::fs::canonicalize(p).ok()) else {
            if warn {
                eprintln!("warden mcp: root {uri:?} is not a local directory; ignored");
            }
            continue;
        };
        if !dir.is_dir() {
            continue;
        }
        if dir.starts_with(bound) {
            return dir;
        }
        if bound.starts_with(&dir) {
            return bound.to_path_buf();
        }
        if warn {
            eprintln!("warden mcp: root {uri:?} is outside the workspace -w; ignored");
        }
    }
    bound.to_path_buf()
}

/// The path of a local `file://` URI (`file:///a%20b`, `file://localhost/a`).
fn file_uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let path = match rest.find('/') {
        Some(0) => rest,
        Some(i) if rest[..i].eq_ignore_ascii_case("localhost") => &rest[i..],
        Some(_) | None => return None,
    };
    let mut bytes = Vec::with_capacity(path.len());
    let mut raw = path.bytes();
    while let Some(b) = raw.next() {
        if b == b'%' {
            let hex = [raw.next()?, raw.next()?];
            let hex = std::str::from_utf8(&hex).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
        } else {
            bytes.push(b);
        }
    }
    if bytes.contains(&0) {
        return None;
    }
    Some(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_decode_and_others_are_refused() {
        assert_eq!(
            file_uri_path("file:///home/a%20b/c"),
            Some(PathBuf::from("/home/a b/c"))
        );
        assert_eq!(
            file_uri_path("file://localhost/x"),
            Some(PathBuf::from("/x"))
        );
        assert_eq!(file_uri_path("file://evil.example/x"), None);
        assert_eq!(file_uri_path("https://example.com/"), None);
        assert_eq!(file_uri_path("file:///a%2"), None);
        assert_eq!(file_uri_path("file:///a%00b"), None);
    }

    #[test]
    fn roots_narrow_the_workspace_and_never_widen_it() {
        let dir = tempfile::tempdir().unwrap();
        let bound = std::fs::canonicalize(dir.path()).unwrap().join("ws");
        let inner = bound.join("app");
        std::fs::create_dir_all(&inner).unwrap();
        let other = dir.path().join("other");
        std::fs::create_dir_all(&other).unwrap();
        let uri = |p: &Path| format!("file://{}", p.display());
        assert_eq!(narrowed(&bound, &[uri(&other), uri(&inner)], false), inner);
        assert_eq!(narrowed(&bound, &[uri(&other)], false), bound);
        assert_eq!(narrowed(&bound, &[uri(dir.path())], false), bound);
        assert_eq!(
            narrowed(&bound, &["file:///no/such/dir".into()], false),
            bound
        );
    }
}
