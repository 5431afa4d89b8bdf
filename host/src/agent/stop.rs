//! Detectors for runs that stopped making progress: the same call over and
//! over, the same answer over and over, or failure after failure.

use crate::provider::ToolCall;

use super::canonical_json;

/// Limits on unproductive repetition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopLimits {
    /// The same tool with the same canonical arguments this many times in a
    /// row stops the run.
    pub same_call: u32,
    /// The same non-empty assistant text this many turns in a row stops it.
    pub same_text: u32,
    /// This many failed (error or denied) tool calls in a row stop it.
    pub consecutive_errors: u32,
}

impl Default for LoopLimits {
    fn default() -> Self {
        LoopLimits {
            same_call: 5,
            same_text: 3,
            consecutive_errors: 8,
        }
    }
}

/// Watches calls, answers and results as they happen.
#[derive(Debug, Default)]
pub struct Watchdog {
    limits: LoopLimits,
    last_call: Option<(String, String)>,
    same_call: u32,
    last_text: Option<String>,
    same_text: u32,
    errors: u32,
}

/// What the watchdog saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Alarm {
    Loop(String),
    Errors(u32),
}

impl Watchdog {
    pub fn new(limits: LoopLimits) -> Watchdog {
        Watchdog {
            limits,
            ..Watchdog::default()
        }
    }

    /// Note an assistant turn's text.
    pub fn text(&mut self, text: &str) -> Option<Alarm> {
        let text = text.trim();
        if text.is_empty() {
            return None;
        }
        if self.last_text.as_deref() == Some(text) {
            self.same_text += 1;
        } else {
            self.last_text = Some(text.to_string());
            self.same_text = 1;
        }
        (self.same_text >= self.limits.same_text).then(|| {
            Alarm::Loop(format!(
                "the model gave the same answer {} times in a row",
                self.same_text
            ))
        })
    }

    /// Note a tool call, in the order the model issued it.
    pub fn call(&mut self, call: &ToolCall) -> Option<Alarm> {
        let key = (call.name.clone(), canonical_json(&call.arguments));
        if self.last_call.as_ref() == Some(&key) {
            self.same_call += 1;
        } else {
            self.last_call = Some(key);
            self.same_call = 1;
        }
        (self.same_call >= self.limits.same_call).then(|| {
            Alarm::Loop(format!(
                "{} was called {} times in a row with the same arguments",
                call.name, self.same_call
            ))
        })
    }

    /// Note whether a call failed.
    pub fn result(&mut self, failed: bool) -> Option<Alarm> {
        if failed {
            self.errors += 1;
        } else {
            self.errors = 0;
        }
        (self.errors >= self.limits.consecutive_errors).then_some(Alarm::Errors(self.errors))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, args: &str) -> ToolCall {
        ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: args.into(),
        }
    }

    #[test]
    fn the_same_call_in_a_row_is_a_loop_whatever_the_key_order() {
        let mut w = Watchdog::new(LoopLimits {
            same_call: 3,
            ..LoopLimits::default()
        });
        assert_eq!(w.call(&call("grep", r#"{"a":1,"b":2}"#)), None);
        assert_eq!(w.call(&call("grep", r#"{"b":2, "a":1}"#)), None);
        assert!(matches!(
            w.call(&call("grep", r#"{"a":1,"b":2}"#)),
            Some(Alarm::Loop(_))
        ));
    }

    #[test]
    fn a_different_call_resets_the_count() {
        let mut w = Watchdog::new(LoopLimits {
            same_call: 2,
            ..LoopLimits::default()
        });
        assert_eq!(w.call(&call("grep", "{}")), None);
        assert_eq!(w.call(&call("glob", "{}")), None);
        assert_eq!(w.call(&call("grep", "{}")), None);
    }

    #[test]
    fn repeated_answers_and_failures_alarm() {
        let mut w = Watchdog::new(LoopLimits {
            same_call: 5,
            same_text: 2,
            consecutive_errors: 2,
        });
        assert_eq!(w.text("hmm"), None);
        assert!(w.text(" hmm ").is_some());
        assert_eq!(w.result(true), None);
        assert_eq!(w.result(false), None);
        assert_eq!(w.result(true), None);
        assert_eq!(w.result(true), Some(Alarm::Errors(2)));
    }
}
