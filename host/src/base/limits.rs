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
    /// Request body bytes one outgoing HTTP request may send. Default 1 MiB.
    #[serde(default = "default_http_request_bytes")]
    pub http_request_bytes: u64,
    /// Response body bytes one outgoing HTTP request may receive; the body
    /// ends with an error past it. Default 8 MiB.
    #[serde(default = "default_http_response_bytes")]
    pub http_response_bytes: u64,
    /// Outgoing HTTP requests per call. Default 64.
    #[serde(default = "default_http_requests")]
    pub http_requests: u64,
    /// Workers a call's `fan-out` runs at once, at most the host's cores
    /// (and 8). Default 8: one per core. 1 runs them one at a time.
    #[serde(default = "default_workers")]
    pub workers: u32,
    /// Bytes the call may write into the directories it was granted, its
    /// workers included: data written, and files extended without data
    /// (`set-size`, a write past the end). Default 1 GiB.
    #[serde(default = "default_write_bytes")]
    pub write_bytes: u64,
}

/// The most workers a call's `fan-out` runs at once, whatever its limits say.
pub const MAX_WORKERS: u32 = 8;

fn default_workers() -> u32 {
    MAX_WORKERS
}

fn default_write_bytes() -> u64 {
    1 << 30
}

fn default_http_request_bytes() -> u64 {
    1 << 20
}

fn default_http_response_bytes() -> u64 {
    8 << 20
}

fn default_http_requests() -> u64 {
    64
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
            http_request_bytes: default_http_request_bytes(),
            http_response_bytes: default_http_response_bytes(),
            http_requests: default_http_requests(),
            workers: default_workers(),
            write_bytes: default_write_bytes(),
        }
    }
}

/// The hard ceiling on a guest's linear memory, fixed when the engine's
/// pooling allocator is built. [`Limits::memory_bytes`] above it is clamped.
pub const MAX_MEMORY_BYTES: usize = 4 << 30;

/// The names `Limits::set` accepts, as the CLI spells them.
pub const LIMIT_KEYS: &[&str] = &[
    "deadline-ms",
    "memory-mib",
    "output-bytes",
    "stdio-bytes",
    "log-lines",
    "log-bytes",
    "progress-events",
    "hostcall-fuel",
    "resource-handles",
    "random-bytes",
    "http-request-bytes",
    "http-response-bytes",
    "http-requests",
    "workers",
    "write-bytes",
];

/// Why a limit cannot be set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    /// Zero: every limit allows at least one of what it counts.
    #[error("limit {0} must be at least 1")]
    Zero(String),
    /// More than the limit's type holds.
    #[error("limit {0} is too large")]
    TooLarge(String),
    /// More memory than the engine's ceiling.
    #[error("memory-mib must be at most {}", MAX_MEMORY_BYTES >> 20)]
    MemoryAboveCeiling,
    /// No limit of that name.
    #[error("unknown limit {name:?}; limits are: {}", LIMIT_KEYS.join(", "))]
    Unknown { name: String },
}

impl Limits {
    /// Set one limit by name (see [`LIMIT_KEYS`]); every value must be at
    /// least 1, and memory at most the engine's ceiling.
    pub fn set(&mut self, key: &str, value: u64) -> Result<(), LimitError> {
        if value == 0 {
            return Err(LimitError::Zero(key.to_string()));
        }
        let size = usize::try_from(value).map_err(|_| LimitError::TooLarge(key.to_string()))?;
        match key {
            "deadline-ms" => self.deadline = Duration::from_millis(value),
            "memory-mib" => {
                let bytes = size.checked_mul(1 << 20).filter(|b| *b <= MAX_MEMORY_BYTES);
                self.memory_bytes = bytes.ok_or(LimitError::MemoryAboveCeiling)?;
            }
            "output-bytes" => self.output_bytes = size,
            "stdio-bytes" => self.stdio_bytes = size,
            "log-lines" => self.log_lines = size,
            "log-bytes" => self.log_bytes = size,
            "progress-events" => self.progress_events = size,
            "hostcall-fuel" => self.hostcall_fuel = size,
            "resource-handles" => self.resource_handles = size,
            "random-bytes" => self.random_bytes = value,
            "http-request-bytes" => self.http_request_bytes = value,
            "http-response-bytes" => self.http_response_bytes = value,
            "http-requests" => self.http_requests = value,
            "write-bytes" => self.write_bytes = value,
            "workers" => {
                self.workers =
                    u32::try_from(value).map_err(|_| LimitError::TooLarge(key.to_string()))?;
            }
            other => {
                return Err(LimitError::Unknown {
                    name: other.to_string(),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_sets_its_limit() {
        for key in LIMIT_KEYS {
            let mut l = Limits::default();
            l.set(key, 7).unwrap();
            assert_ne!(l, Limits::default(), "{key} changed nothing");
        }
        let mut l = Limits::default();
        let err =
            |l: &mut Limits, key: &str, value: u64| l.set(key, value).unwrap_err().to_string();
        assert!(err(&mut l, "memory-mib", 1 << 20).contains("at most 4096"));
        assert!(err(&mut l, "cpu", 1).contains("unknown limit \"cpu\""));
        assert!(err(&mut l, "log-lines", 0).contains("at least 1"));
    }
}
