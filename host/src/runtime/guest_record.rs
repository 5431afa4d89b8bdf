//! What a guest reported during its call: log lines and progress.
//!
//! Invariant: the record never holds more lines, bytes or events than the
//! call's limits allow; what does not fit is counted, not kept.

use crate::base::{Limits, LogLine, ProgressEvent, ProgressSink, floor_char_boundary};

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
    pub(crate) fn push_log(&mut self, line: LogLine, limits: &Limits) {
        let full = self.logs.len() >= limits.log_lines
            || self.log_bytes + line.message.len() > limits.log_bytes;
        if full {
            self.logs_dropped += 1;
            return;
        }
        self.log_bytes += line.message.len();
        self.logs.push(line);
    }

    /// Keep `event` if the progress cap allows it.
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
        let mut message = message;
        message.truncate(floor_char_boundary(&message, PROGRESS_MESSAGE_BYTES));
        let event = ProgressEvent { message, fraction };
        if let Some(sink) = &self.progress_sink {
            sink(&event);
        }
        self.progress.push(event);
    }
}
