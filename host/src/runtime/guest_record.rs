//! What a guest reported during its call: log lines and progress.
//!
//! Invariant: the record never holds more lines, bytes or events than the
//! call's limits allow, counting the bytes it actually keeps (what a string
//! allocated, not its length); what does not fit is counted, not kept.

use crate::base::{Limits, LogLine, ProgressEvent, ProgressSink, cut_to};

/// Progress messages are cut to this many bytes.
const PROGRESS_MESSAGE_BYTES: usize = 200;

/// The log lines and progress reports of one instance.
#[derive(Default)]
pub(crate) struct GuestRecord {
    pub(crate) logs: Vec<LogLine>,
    log_bytes: usize,
    pub(crate) logs_dropped: u64,
    pub(crate) progress: Vec<ProgressEvent>,
    /// Who is shown progress as it happens.
    pub(crate) progress_sink: Option<ProgressSink>,
}

impl GuestRecord {
    pub(crate) fn new(progress_sink: Option<ProgressSink>) -> GuestRecord {
        GuestRecord {
            progress_sink,
            ..GuestRecord::default()
        }
    }

    /// Keep `line` if the log caps allow it, else count it as dropped.
    pub(crate) fn push_log(&mut self, mut line: LogLine, limits: &Limits) {
        let full = self.logs.len() >= limits.log_lines
            || self.log_bytes + line.message.len() > limits.log_bytes;
        if full {
            self.logs_dropped += 1;
            return;
        }
        line.message.shrink_to_fit();
        self.log_bytes += line.message.capacity();
        self.logs.push(line);
    }

    /// Keep `event` (already cut, by the worker that received it) if the
    /// progress cap allows it.
    pub(crate) fn push_progress(&mut self, event: ProgressEvent, limits: &Limits) {
        if self.progress.len() < limits.progress_events {
            self.progress.push(event);
        }
    }

    /// A progress report from the guest: shown to the sink, then kept, if
    /// the cap allows.
    pub(crate) fn report_progress(
        &mut self,
        message: String,
        fraction: Option<f32>,
        limits: &Limits,
    ) {
        if self.progress.len() >= limits.progress_events {
            return;
        }
        let fraction = fraction
            .filter(|f| f.is_finite())
            .map(|f| f.clamp(0.0, 1.0));
        // A copy: the guest's string may be megabytes long.
        let message = cut_to(&message, PROGRESS_MESSAGE_BYTES);
        let event = ProgressEvent { message, fraction };
        if let Some(sink) = &self.progress_sink {
            sink(&event);
        }
        self.progress.push(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::LogLevel;

    #[test]
    fn a_flood_of_long_progress_and_log_lines_keeps_only_bounded_copies() {
        let limits = Limits {
            log_bytes: 1 << 10,
            ..Limits::default()
        };
        let mut record = GuestRecord::default();
        for _ in 0..limits.progress_events + 10 {
            record.report_progress("p".repeat(1 << 20), Some(0.5), &limits);
        }
        assert_eq!(record.progress.len(), limits.progress_events);
        let kept: usize = record.progress.iter().map(|e| e.message.capacity()).sum();
        assert!(
            kept <= limits.progress_events * PROGRESS_MESSAGE_BYTES,
            "{kept} bytes kept"
        );
        let mut long = String::with_capacity(1 << 20);
        long.push_str("short line");
        record.push_log(
            LogLine {
                level: LogLevel::Info,
                message: long,
            },
            &limits,
        );
        assert!(record.logs[0].message.capacity() < 64);
        assert!(record.log_bytes < 64);
    }
}
