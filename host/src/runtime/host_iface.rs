//! The Warden host interface every plugin imports, for each `warden:tool`
//! version: log, progress, cancellation and fan-out. Both versions share
//! one implementation; only the types differ.

use super::bindings::{v0_1, v0_2};
use super::fan_out::{self, FanOutRefusal};
use super::guest::{GuestReturn, to_v0_1, to_v0_2};
use super::state::CallState;
use crate::base::{LogLevel, LogLine};

impl CallState {
    fn log(&mut self, level: LogLevel, message: String) {
        self.record
            .push_log(LogLine { level, message }, &self.bounds.limits);
    }

    fn progress(&mut self, message: String, fraction: Option<f32>) {
        self.record
            .report_progress(message, fraction, &self.bounds.limits);
    }

    fn parallelism(&self) -> u32 {
        if self.fan.workers.is_some() {
            fan_out::workers_at_once(&self.bounds.limits)
        } else {
            1
        }
    }

    fn fan_out(&mut self, tasks: Vec<String>) -> Result<Vec<GuestReturn>, FanOutRefusal> {
        fan_out::fan_out(self, tasks)
    }
}

impl v0_1::host::Host for CallState {
    fn log(&mut self, level: v0_1::host::LogLevel, message: String) {
        use v0_1::host::LogLevel as L;
        let level = match level {
            L::Trace => LogLevel::Trace,
            L::Debug => LogLevel::Debug,
            L::Info => LogLevel::Info,
            L::Warn => LogLevel::Warn,
            L::Error => LogLevel::Error,
        };
        CallState::log(self, level, message);
    }

    fn progress(&mut self, message: String, fraction: Option<f32>) {
        CallState::progress(self, message, fraction);
    }

    fn is_cancelled(&mut self) -> bool {
        self.bounds.cancel.is_cancelled()
    }

    fn parallelism(&mut self) -> u32 {
        CallState::parallelism(self)
    }

    fn is_worker(&mut self) -> bool {
        self.fan.is_worker
    }

    fn fan_out(
        &mut self,
        tasks: Vec<String>,
    ) -> Result<Vec<Result<v0_1::types::ToolOutput, v0_1::types::ToolError>>, v0_1::host::FanOutError>
    {
        use v0_1::host::FanOutError as E;
        match CallState::fan_out(self, tasks) {
            Ok(done) => Ok(done.into_iter().map(to_v0_1).collect()),
            Err(FanOutRefusal::Nested) => Err(E::Nested),
            Err(FanOutRefusal::TooManyTasks) => Err(E::TooManyTasks),
            Err(FanOutRefusal::Unavailable) => Err(E::Unavailable),
        }
    }
}

impl v0_1::types::Host for CallState {}

impl v0_2::host::Host for CallState {
    fn log(&mut self, level: v0_2::host::LogLevel, message: String) {
        use v0_2::host::LogLevel as L;
        let level = match level {
            L::Trace => LogLevel::Trace,
            L::Debug => LogLevel::Debug,
            L::Info => LogLevel::Info,
            L::Warn => LogLevel::Warn,
            L::Error => LogLevel::Error,
        };
        CallState::log(self, level, message);
    }

    fn progress(&mut self, message: String, fraction: Option<f32>) {
        CallState::progress(self, message, fraction);
    }

    fn is_cancelled(&mut self) -> bool {
        self.bounds.cancel.is_cancelled()
    }

    fn parallelism(&mut self) -> u32 {
        CallState::parallelism(self)
    }

    fn is_worker(&mut self) -> bool {
        self.fan.is_worker
    }

    fn fan_out(
        &mut self,
        tasks: Vec<String>,
    ) -> Result<Vec<Result<v0_2::types::ToolOutput, v0_2::types::ToolError>>, v0_2::host::FanOutError>
    {
        use v0_2::host::FanOutError as E;
        match CallState::fan_out(self, tasks) {
            Ok(done) => Ok(done.into_iter().map(to_v0_2).collect()),
            Err(FanOutRefusal::Nested) => Err(E::Nested),
            Err(FanOutRefusal::TooManyTasks) => Err(E::TooManyTasks),
            Err(FanOutRefusal::Unavailable) => Err(E::Unavailable),
        }
    }
}

impl v0_2::types::Host for CallState {}
