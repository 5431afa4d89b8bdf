//! What a finished call reports: its outcome and what it did on the way.

use std::time::Duration;

use crate::base::{LogLine, ProgressEvent};
use crate::capability::egress::{NetworkDenial, NetworkUse};
use crate::capability::process::ProcessUse;
use crate::capability::{BoundaryDenial, Exercised};
use crate::protocol::ToolOutcome;

use super::interaction_call::InteractionReport;

/// What happened during a call.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CallReport {
    pub outcome: ToolOutcome,
    pub logs: Vec<LogLine>,
    pub logs_dropped: u64,
    pub progress: Vec<ProgressEvent>,
    /// Captured stdout (lossy UTF-8), at most the stdio cap.
    pub stdout: String,
    pub stdout_dropped: u64,
    pub stderr: String,
    pub stderr_dropped: u64,
    /// Operations the filesystem layer refused on protected paths, at most
    /// [`crate::capability::MAX_BOUNDARY_DENIALS`].
    pub boundary_denials: Vec<BoundaryDenial>,
    /// Refusals past that cap, counted only.
    pub boundary_denials_dropped: u64,
    /// Each HTTP request that passed the egress checks and was sent, at
    /// most [`crate::capability::egress::MAX_NETWORK_RECORDS`].
    pub network: Vec<NetworkUse>,
    /// Requests past that cap, counted only.
    pub network_dropped: u64,
    /// Each HTTP request the egress checks refused, same cap.
    pub network_denials: Vec<NetworkDenial>,
    /// Refusals past that cap, counted only.
    pub network_denials_dropped: u64,
    /// What the call did with its grant, as the host's WASI layer saw it.
    pub exercised: Exercised,
    /// Each command the call ran, at most
    /// [`crate::capability::process::MAX_PROCESS_USES`].
    pub processes: Vec<ProcessUse>,
    /// Commands past that cap, counted only.
    pub processes_dropped: u64,
    /// Worker instances the call ran through `fan-out` (their logs, file
    /// and network use and refusals are in this report).
    pub workers: u64,
    /// What the call published, asked and kept through
    /// `warden:tool/interaction`.
    #[serde(skip_serializing_if = "InteractionReport::is_empty")]
    pub interaction: InteractionReport,
    #[serde(with = "duration_ms")]
    pub duration: Duration,
}

impl CallReport {
    /// A report of `outcome` with nothing logged, captured or used.
    pub fn empty(outcome: ToolOutcome) -> CallReport {
        CallReport {
            outcome,
            logs: Vec::new(),
            logs_dropped: 0,
            progress: Vec::new(),
            stdout: String::new(),
            stdout_dropped: 0,
            stderr: String::new(),
            stderr_dropped: 0,
            boundary_denials: Vec::new(),
            boundary_denials_dropped: 0,
            network: Vec::new(),
            network_dropped: 0,
            network_denials: Vec::new(),
            network_denials_dropped: 0,
            exercised: Exercised::default(),
            processes: Vec::new(),
            processes_dropped: 0,
            workers: 0,
            interaction: InteractionReport::default(),
            duration: Duration::ZERO,
        }
    }
}

mod duration_ms {
    pub fn serialize<S: serde::Serializer>(
        d: &std::time::Duration,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64() * 1000.0)
    }
}
