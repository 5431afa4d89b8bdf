//! Splitting one call's work across parallel workers.
//!
//! A tool that has much independent work (many files to search, say) can
//! pass tasks to [`fan_out`]: the host runs each in a worker, a fresh
//! instance of the same plugin whose [`crate::Tool::work`] receives the
//! task, and returns every result in task order. Workers run under the
//! call's grant, deadline and limits; the call's memory limit covers them
//! all. A worker cannot fan out again.
//!
//! Tasks are the plugin's own text (JSON, typically): the model never sees
//! them, and the host does not check them against the tool's schema.

use crate::bindings::host;
use crate::{Output, ToolError};

/// Why [`fan_out`] ran no workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FanOutError {
    /// This instance is a worker itself; workers cannot fan out.
    Nested,
    /// More tasks than the host accepts at once (64).
    TooManyTasks,
    /// The host runs no workers for this call, or has none free now.
    Unavailable,
}

impl std::fmt::Display for FanOutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FanOutError::Nested => "a worker cannot fan out",
            FanOutError::TooManyTasks => "too many tasks for one fan-out",
            FanOutError::Unavailable => "the host has no workers free for this call",
        })
    }
}

impl std::error::Error for FanOutError {}

/// How many workers the host runs at once for this call: 1 when splitting
/// the work would gain nothing.
pub fn parallelism() -> u32 {
    host::parallelism()
}

/// True in a worker, whose input is one of its parent's tasks.
pub fn is_worker() -> bool {
    host::is_worker()
}

/// Run each of `tasks` in a worker (see the module docs) and return the
/// results in task order. A worker that ran out of time or memory returns
/// an error like any other.
pub fn fan_out(tasks: &[String]) -> Result<Vec<Result<Output, ToolError>>, FanOutError> {
    let results = host::fan_out(tasks).map_err(|e| match e {
        host::FanOutError::Nested => FanOutError::Nested,
        host::FanOutError::TooManyTasks => FanOutError::TooManyTasks,
        host::FanOutError::Unavailable => FanOutError::Unavailable,
    })?;
    Ok(results
        .into_iter()
        .map(|r| match r {
            Ok(out) => {
                let structured = match out.structured.as_deref().map(serde_json::from_str) {
                    None => None,
                    Some(Ok(v)) => Some(v),
                    Some(Err(e)) => {
                        return Err(ToolError::internal(format!(
                            "a worker's structured output is not JSON: {e}"
                        )));
                    }
                };
                Ok(Output {
                    text: out.text,
                    structured,
                })
            }
            Err(e) => Err(ToolError::from_wit(e)),
        })
        .collect())
}
