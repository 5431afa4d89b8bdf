//! What every session of one `warden mcp` process shares: the catalog
//! (swapped when plugins change), the policy, the workspace bound, the
//! call gate, the audit log, and the calls in flight.
//!
//! Invariant: [`McpServer::finish`] returns only once every call that
//! started has ended and its audit record is on disk (or a bounded wait
//! ran out, which it reports).

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::service::Peer;
use tokio::sync::Notify;

use super::McpError;
use crate::audit::{AuditError, AuditLog};
use crate::base::{CallGate, CancelToken, Limits, Verbosity};
use crate::home::Home;
use crate::plugin::Catalog;
use crate::policy::{LimitOverrides, Policy};

/// How the server behaves, from the command line.
#[derive(Debug, Clone)]
pub struct McpOptions {
    /// The data directory: plugins, compile cache, audit log.
    pub home: Home,
    /// The policy deciding every call.
    pub policy: Policy,
    /// The directory calls may use; a client's roots can narrow it, never widen it.
    pub workspace: PathBuf,
    /// The limits calls start from, and those asked for explicitly.
    pub limits: Limits,
    pub limit_requests: LimitOverrides,
    /// Never ask the client: calls the policy asks about are refused.
    pub non_interactive: bool,
    /// List the tools the policy refuses outright too (for debugging).
    pub list_denied: bool,
    /// Read-only calls that may run at once.
    pub parallel: usize,
    /// What the server says on stderr: `Quiet` no warnings, `Verbose` a
    /// line per call with its grant cuts and plugin logs.
    pub verbosity: Verbosity,
}

/// The state shared by every session.
pub struct McpServer {
    pub(super) options: McpOptions,
    /// The canonical workspace.
    pub(super) workspace: PathBuf,
    catalog: RwLock<Arc<Catalog>>,
    pub(super) gate: CallGate,
    pub(super) audit: Arc<AuditLog>,
    /// Set when the server stops: every running call is cancelled.
    pub(super) stopping: CancelToken,
    /// Sessions to tell when the tool list changes.
    peers: Mutex<Vec<Peer<RoleServer>>>,
    in_flight: AtomicUsize,
    idle: Notify,
}

impl McpServer {
    /// Open the catalog and the audit log for `options`. A log that cannot
    /// be opened stops the server before it serves: Warden runs no tool it
    /// cannot audit.
    pub fn open(options: McpOptions) -> Result<Arc<McpServer>, McpError> {
        let workspace = std::fs::canonicalize(&options.workspace)
            .ok()
            .filter(|p| p.is_dir())
            .ok_or_else(|| McpError::Workspace {
                path: options.workspace.display().to_string(),
                reason: "not a directory that can be opened".into(),
            })?;
        let catalog = Catalog::open(&options.home)?;
        if options.verbosity.shows_warnings() {
            for problem in catalog.problems() {
                eprintln!("warden mcp: warning: {problem}");
            }
        }
        let audit = Arc::new(AuditLog::open(&crate::audit::log_path(&options.home))?);
        Ok(Arc::new(McpServer {
            gate: CallGate::new(options.parallel),
            workspace,
            catalog: RwLock::new(Arc::new(catalog)),
            audit,
            stopping: CancelToken::new(),
            peers: Mutex::default(),
            in_flight: AtomicUsize::new(0),
            idle: Notify::new(),
            options,
        }))
    }

    /// The catalog as it is now.
    pub(super) fn catalog(&self) -> Arc<Catalog> {
        self.catalog
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Serve from `catalog` from now on.
    pub(super) fn replace_catalog(&self, catalog: Catalog) {
        *self.catalog.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(catalog);
    }

    /// Remember `peer`, to tell it when the tool list changes.
    pub(super) fn register(&self, peer: Peer<RoleServer>) {
        let mut peers = self.peers.lock().unwrap_or_else(PoisonError::into_inner);
        peers.retain(|p| !p.is_transport_closed());
        peers.push(peer);
    }

    /// The sessions still connected.
    pub(super) fn peers(&self) -> Vec<Peer<RoleServer>> {
        let mut peers = self.peers.lock().unwrap_or_else(PoisonError::into_inner);
        peers.retain(|p| !p.is_transport_closed());
        peers.clone()
    }

    /// Count a call in flight until the guard drops.
    pub(super) fn call_started(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        InFlight(self.clone())
    }

    /// Stop: cancel the calls still running, wait up to `wait` for them to
    /// end, and for their audit records to reach the disk.
    pub async fn finish(&self, wait: Duration) -> Result<(), FinishError> {
        self.stopping.cancel();
        let drained = tokio::time::timeout(wait, async {
            loop {
                let idle = self.idle.notified();
                let mut idle = std::pin::pin!(idle);
                // Registered before the count is read, so a call ending in
                // between still wakes this wait.
                idle.as_mut().enable();
                if self.in_flight.load(Ordering::SeqCst) == 0 {
                    break;
                }
                idle.await;
            }
        })
        .await;
        let flushed = self.audit.flush().map_err(FinishError::Audit);
        match drained {
            Ok(()) => flushed,
            Err(_) => Err(FinishError::StillRunning {
                running: self.in_flight.load(Ordering::SeqCst),
                waited: wait,
            }),
        }
    }
}

/// Why the server did not stop cleanly.
#[derive(Debug, thiserror::Error)]
pub enum FinishError {
    /// The audit log could not be flushed.
    #[error("{0}")]
    Audit(AuditError),
    /// Calls were still running when the wait ended.
    #[error("{running} calls were still running after {} ms", waited.as_millis())]
    StillRunning { running: usize, waited: Duration },
}

/// A call in flight: [`McpServer::finish`] waits until it drops.
pub(super) struct InFlight(Arc<McpServer>);

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}
