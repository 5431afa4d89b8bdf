//! Where a `warden tool call`'s progress goes: a spinner on a terminal,
//! a line per report on a terminal that cannot redraw one, a
//! `tool_progress` event with `--json` (at most one per
//! [`PROGRESS_INTERVAL`], as `run --json` has), else nowhere.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use serde_json::json;

use super::progress::{self, ProgressDisplay, SHOW_AFTER};
use crate::agent::PROGRESS_INTERVAL;
use crate::base::{ProgressEvent, ProgressSink};

/// The sink for one call of `tool` started at `started`, its spinner
/// known as `key`; `None` when progress goes nowhere.
pub(super) fn sink(tool: &str, json: bool, key: &str, started: Instant) -> Option<ProgressSink> {
    let tool = tool.to_string();
    if json {
        let last: Mutex<Option<Instant>> = Mutex::new(None);
        return Some(Arc::new(move |p: &ProgressEvent| {
            let now = Instant::now();
            {
                let mut last = last.lock().unwrap_or_else(PoisonError::into_inner);
                if last.is_some_and(|at| now.duration_since(at) < PROGRESS_INTERVAL) {
                    return;
                }
                *last = Some(now);
            }
            let mut event = json!({
                "type": "tool_progress",
                "tool": tool,
                "message": p.message,
                "elapsed_ms": now.duration_since(started).as_millis() as u64,
            });
            if let Some(f) = p.fraction {
                event["fraction"] = json!(f);
            }
            outln!("{event}");
        }));
    }
    match progress::display(false) {
        ProgressDisplay::Spinner => {
            let key = key.to_string();
            Some(Arc::new(move |p: &ProgressEvent| {
                if started.elapsed() >= SHOW_AFTER {
                    progress::show(&key, &progress::call_line(&tool, p), started);
                }
            }))
        }
        ProgressDisplay::Lines => Some(Arc::new(move |p: &ProgressEvent| {
            errln!("… {}", progress::call_line(&tool, p));
        })),
        ProgressDisplay::Off => None,
    }
}
