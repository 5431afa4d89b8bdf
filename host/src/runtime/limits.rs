//! Per-call resource limits. Every limit is set explicitly on every call.

use std::time::Duration;

/// What one tool call may consume. The defaults suit an interactive agent;
/// policies and CLI flags narrow or widen them per call.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Limits {
    /// Wall-clock deadline, enforced by epoch interruption. Default 30 s.
    pub deadline: Duration,
    /// Linear memory the guest may grow to, in bytes. Default 256 MiB.
    pub memory_bytes: usize,
    /// Result text kept before a truncation marker, in bytes. Default 1 MiB.
    pub output_bytes: usize,
    /// Captured stdout and stderr, each, in bytes. Default 64 KiB.
    pub stdio_bytes: usize,
    /// Log lines kept per call. Default 1,000.
    pub log_lines: usize,
    /// Bytes of log text kept per call. Default 64 KiB.
    pub log_bytes: usize,
    /// Progress reports kept per call. Default 1,000.
    pub progress_events: usize,
    /// Bytes the guest may pass to the host in one host call. Default 16 MiB.
    pub hostcall_fuel: usize,
    /// Live WASI resource handles (files, streams, ...). Default 4,096.
    pub resource_handles: usize,
    /// Bytes one `wasi:random` call may request. Default 64 KiB.
    pub random_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            deadline: Duration::from_secs(30),
            memory_bytes: 256 << 20,
            output_bytes: 1 << 20,
            stdio_bytes: 64 << 10,
            log_lines: 1_000,
            log_bytes: 64 << 10,
            progress_events: 1_000,
            hostcall_fuel: 16 << 20,
            resource_handles: 4_096,
            random_bytes: 64 << 10,
        }
    }
}

/// The hard ceiling on a guest's linear memory, fixed when the engine's
/// pooling allocator is built. [`Limits::memory_bytes`] above it is clamped.
pub const MAX_MEMORY_BYTES: usize = 4 << 30;
