//! Detectors for runs that stopped making progress: the same call over and
//! over, the same answer over and over, or failure after failure.
//!
//! Failures are counted by turn, not by call: a turn is one observation
//! however many calls it ran in parallel, so one wide turn of misses (a
//! model probing eight paths at once) never ends a run by itself.

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
    /// This many turns in a row in which every tool call failed (an error
    /// or a denial) stop it; a turn with any call that did not fail starts
    /// the count again.
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
    failing_turns: u32,
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

    /// Note how a turn's `calls` went, `failed` of them having failed. A
    /// turn without calls is no observation.
    pub fn turn(&mut self, calls: usize, failed: usize) -> Option<Alarm> {
        if calls == 0 {
            return None;
        }
        if failed >= calls {
            self.failing_turns += 1;
        } else {
            self.failing_turns = 0;
        }
        (self.failing_turns >= self.limits.consecutive_errors)
            .then_some(Alarm::Errors(self.failing_turns))
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
        assert_eq!(w.turn(1, 1), None);
        assert_eq!(
            w.turn(2, 1),
            None,
            "a call that worked starts the count again"
        );
        assert_eq!(w.turn(0, 0), None, "no calls, no observation");
        assert_eq!(w.turn(1, 1), None);
        assert_eq!(w.turn(3, 3), Some(Alarm::Errors(2)));
    }

    #[test]
    fn one_wide_turn_of_failures_is_one_observation() {
        let mut w = Watchdog::new(LoopLimits::default());
        assert_eq!(w.turn(50, 50), None);
        for _ in 2..LoopLimits::default().consecutive_errors {
            assert_eq!(w.turn(1, 1), None);
        }
        assert_eq!(w.turn(1, 1), Some(Alarm::Errors(8)));
    }
}
