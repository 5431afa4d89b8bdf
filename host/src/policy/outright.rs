//! Whether a policy refuses every call of a tool, whatever its input, so a
//! client need not be offered the tool at all.
//!
//! Invariant: the answer is `Some` only when no input can make the call
//! run — a deny rule without argument matchers applies to the tool, or
//! the mode refuses it (deny, or an ask no one can answer) and no rule
//! that could allow it (or, when asks can be answered, ask about it)
//! applies to the tool. Protected paths depend on the input, so they
//! never refuse a tool outright.

use super::{DecidedBy, Decision, Policy, Verdict};
use crate::protocol::Annotations;

impl Policy {
    /// The decision every call of `tool` gets, when it refuses them all.
    /// `asks_refused`: no one can answer an ask (no prompt, a client that
    /// cannot be asked), so an ask refuses too; a non-interactive policy
    /// refuses asks whatever this says.
    pub fn refuses_every_call(
        &self,
        tool: &str,
        annotations: &Annotations,
        asks_refused: bool,
    ) -> Option<Decision> {
        let asks_refused = asks_refused || self.non_interactive;
        let refuses = |v: Verdict| match v {
            Verdict::Deny => true,
            Verdict::Ask => asks_refused,
            Verdict::Allow => false,
        };
        let mut could_run = false;
        for i in self.index.candidates(tool).iter() {
            let Some(rule) = self.rules.get(i) else {
                continue;
            };
            if rule.decision == Verdict::Deny && rule.args.is_empty() && rule.commands.is_none() {
                return Some(Decision {
                    verdict: Verdict::Deny,
                    by: DecidedBy::Rule {
                        index: Some(i),
                        name: rule.name.clone(),
                    },
                    reason: rule.reason.clone(),
                    parts: Vec::new(),
                });
            }
            could_run |= !refuses(rule.decision);
        }
        if could_run {
            return None;
        }
        let (verdict, reason) = self.mode.fallback(annotations);
        refuses(verdict).then(|| Decision {
            verdict,
            by: DecidedBy::Mode(self.mode),
            reason: reason.map(str::to_string),
            parts: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::{DecidedBy, Mode, Policy, Verdict};
    use crate::protocol::Annotations;

    const READS: Annotations = Annotations {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    };
    const WRITES: Annotations = Annotations {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: false,
    };

    fn policy(text: &str) -> Policy {
        Policy::parse(text, "t.toml").unwrap()
    }

    #[test]
    fn a_deny_rule_without_matchers_refuses_its_tools_only() {
        let p = policy(
            r#"
name = "p"
mode = "auto"
[[rule]]
name = "no-web"
tools = ["web_*"]
decision = "deny"
reason = "offline"
"#,
        );
        let d = p.refuses_every_call("web_fetch", &READS, false).unwrap();
        assert_eq!(d.verdict, Verdict::Deny);
        assert!(matches!(d.by, DecidedBy::Rule { ref name, .. } if name == "no-web"));
        assert!(p.refuses_every_call("read_file", &READS, false).is_none());
    }

    #[test]
    fn a_deny_rule_with_matchers_refuses_some_inputs_not_the_tool() {
        let p = policy(
            r#"
name = "p"
mode = "auto"
[[rule]]
name = "no-env"
tools = ["write_file"]
decision = "deny"
[rule.args]
path = { glob = "**/.env" }
"#,
        );
        assert!(p.refuses_every_call("write_file", &WRITES, true).is_none());
    }

    #[test]
    fn read_only_mode_refuses_writers_unless_a_rule_may_allow_them() {
        let plain = policy("name = \"p\"\nmode = \"read-only\"\n");
        let d = plain
            .refuses_every_call("write_file", &WRITES, false)
            .unwrap();
        assert_eq!(d.by, DecidedBy::Mode(Mode::ReadOnly));
        assert!(
            plain
                .refuses_every_call("read_file", &READS, false)
                .is_none()
        );

        let notes = policy(
            r#"
name = "p"
mode = "read-only"
[[rule]]
name = "notes"
tools = ["write_file"]
decision = "allow"
[rule.args]
path = { glob = "notes/**" }
"#,
        );
        assert!(
            notes
                .refuses_every_call("write_file", &WRITES, false)
                .is_none()
        );
    }

    #[test]
    fn an_ask_refuses_only_when_no_one_can_answer() {
        let ask = policy("name = \"p\"\nmode = \"ask\"\n");
        assert!(
            ask.refuses_every_call("write_file", &WRITES, false)
                .is_none()
        );
        let d = ask.refuses_every_call("write_file", &WRITES, true).unwrap();
        assert_eq!(d.verdict, Verdict::Ask);
        assert!(ask.refuses_every_call("read_file", &READS, true).is_none());

        let ci = policy("name = \"p\"\nmode = \"ask\"\nnon_interactive = true\n");
        assert!(
            ci.refuses_every_call("write_file", &WRITES, false)
                .is_some()
        );
    }
}
