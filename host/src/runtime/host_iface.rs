//! The Warden host interface every plugin imports: log, progress,
//! cancellation and fan-out.

use super::bindings::{host, types};
use super::fan_out;
use super::state::CallState;
use crate::base::{LogLevel, LogLine};

impl host::Host for CallState {
    fn log(&mut self, level: host::LogLevel, message: String) {
        let level = match level {
            host::LogLevel::Trace => LogLevel::Trace,
            host::LogLevel::Debug => LogLevel::Debug,
            host::LogLevel::Info => LogLevel::Info,
            host::LogLevel::Warn => LogLevel::Warn,
            host::LogLevel::Error => LogLevel::Error,
        };
        self.record
            .push_log(LogLine { level, message }, &self.bounds.limits);
    }

    fn progress(&mut self, message: String, fraction: Option<f32>) {
        self.record
            .report_progress(message, fraction, &self.bounds.limits);
    }

    fn is_cancelled(&mut self) -> bool {
        self.bounds.cancel.is_cancelled()
    }

    fn parallelism(&mut self) -> u32 {
        if self.fan.workers.is_some() {
            fan_out::workers_at_once(&self.bounds.limits)
        } else {
            1
        }
    }

    fn is_worker(&mut self) -> bool {
        self.fan.is_worker
    }

    fn fan_out(
        &mut self,
        tasks: Vec<String>,
    ) -> Result<Vec<Result<types::ToolOutput, types::ToolError>>, host::FanOutError> {
        fan_out::fan_out(self, tasks)
    }
}

impl types::Host for CallState {}
