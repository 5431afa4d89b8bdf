//! What a guest reports while it runs: log lines and progress.

use std::sync::Arc;

/// Severity of a guest log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogLevel {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
}

/// One line a guest logged.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LogLine {
    pub level: LogLevel,
    pub message: String,
}

/// One progress report from a guest.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ProgressEvent {
    pub message: String,
    pub fraction: Option<f32>,
}

/// Receives progress reports as they happen (for example to draw them).
pub type ProgressSink = Arc<dyn Fn(&ProgressEvent) + Send + Sync>;
