//! The approval prompt on the user's terminal.
//!
//! It talks to the controlling terminal (`/dev/tty`), not to stdin and
//! stdout, so it works while the output is piped or the input comes from a
//! file. Everything shown that a model, a plugin or a policy supplied goes
//! through [`terminal_line`] (or, for the pretty-printed arguments,
//! [`terminal_text`]): no terminal escapes and no extra lines reach the screen.

use std::io::{self, BufRead, Write};
use std::sync::{Mutex, PoisonError};

use super::{ApprovalPattern, ApprovalRequest, ApprovalResponse, Approver, SessionGrantKind};
use crate::base::prompt::{Key, TtyIo};
use crate::base::{terminal_line, terminal_text};

/// Argument lines shown before the rest is elided.
const MAX_INPUT_LINES: usize = 60;

/// The main question.
const CHOICES: &str = "[y] allow once  [s] allow this exact call for the session  \
                       [p] allow a pattern for the session  [n] deny\nAllow? [y/s/p/n]: ";

/// The main question for a call that reaches the network.
const NETWORK_CHOICES: &str = "[y] allow once  [s] allow this tool to reach these \
                               destinations for the session  [p] allow a pattern for the \
                               session  [n] deny\nAllow? [y/s/p/n]: ";

/// Asks the user on a terminal: `y` allow once, `s` allow this exact call
/// for the session, `p` allow a pattern for the session, `n` deny (with an
/// optional message to the model). On a terminal each choice is one key
/// press; a pattern and a message are typed as lines.
pub struct TerminalApprover {
    io: Mutex<TtyIo>,
}

impl TerminalApprover {
    /// Open the controlling terminal. Fails when the process has none.
    pub fn open() -> io::Result<TerminalApprover> {
        Ok(TerminalApprover {
            io: Mutex::new(TtyIo::open()?),
        })
    }

    /// Prompt on `output` and read answers, one per line, from `input`
    /// (for tests and other front ends).
    pub fn with_io(
        input: impl BufRead + Send + 'static,
        output: impl Write + Send + 'static,
    ) -> TerminalApprover {
        TerminalApprover {
            io: Mutex::new(TtyIo::lines(input, output)),
        }
    }
}

impl Approver for TerminalApprover {
    fn approve(&self, req: &ApprovalRequest) -> ApprovalResponse {
        let mut io = self.io.lock().unwrap_or_else(PoisonError::into_inner);
        match ask(&mut io, req) {
            Ok(response) => response,
            Err(e) => ApprovalResponse::Unanswered {
                reason: format!(
                    "needs approval under {}, but no answer came from the terminal ({e})",
                    req.asked_under()
                ),
            },
        }
    }
}

/// The request as the prompt shows it, before the question.
pub(super) fn render(req: &ApprovalRequest) -> String {
    let mut s = format!(
        "\nApproval needed: {} (plugin {})\n",
        terminal_line(&req.tool),
        terminal_line(&req.plugin)
    );
    s.push_str(&format!(
        "  asked under: {}\n",
        terminal_line(&req.asked_under())
    ));
    if let Some(reason) = &req.decision.reason {
        s.push_str(&format!("  reason:      {}\n", terminal_line(reason)));
    }
    for (i, line) in req.destinations().iter().enumerate() {
        let label = if i == 0 { "reaches:" } else { "" };
        s.push_str(&format!("  {label:<12} {}\n", terminal_line(line)));
    }
    s.push_str(&format!(
        "  grant:       {}\n",
        terminal_line(&req.grant_summary())
    ));
    if let Some(rationale) = &req.rationale {
        s.push_str(&format!(
            "  the model says (unverified): {}\n",
            terminal_line(rationale)
        ));
    }
    s.push_str("  arguments:\n");
    let pretty = terminal_text(&req.pretty_input());
    let lines: Vec<&str> = pretty.lines().collect();
    for line in lines.iter().take(MAX_INPUT_LINES) {
        s.push_str(&format!("    {line}\n"));
    }
    if lines.len() > MAX_INPUT_LINES {
        s.push_str(&format!(
            "    … {} more lines not shown\n",
            lines.len() - MAX_INPUT_LINES
        ));
    }
    s
}

/// One conversation with the user about one request.
fn ask(io: &mut TtyIo, req: &ApprovalRequest) -> io::Result<ApprovalResponse> {
    io.say(&render(req))?;
    loop {
        let choices = match req.session_kind() {
            SessionGrantKind::Destinations => NETWORK_CHOICES,
            SessionGrantKind::Fingerprint | SessionGrantKind::Pattern(_) => CHOICES,
        };
        let Key(choice) = io.choice(choices, "yspn", None, "Please answer y, s, p or n.\n")?;
        match choice {
            'y' => return Ok(ApprovalResponse::AllowOnce),
            's' => {
                let kind = req.session_kind();
                let what = match &kind {
                    SessionGrantKind::Destinations => {
                        let targets: Vec<String> =
                            req.network.iter().map(|d| d.target.to_string()).collect();
                        format!("reaching {}", targets.join(", "))
                    }
                    SessionGrantKind::Fingerprint | SessionGrantKind::Pattern(_) => {
                        "with exactly these arguments".to_string()
                    }
                };
                io.say(&format!(
                    "Allowed for this session: {} {}.\n",
                    terminal_line(&req.tool),
                    terminal_line(&what)
                ))?;
                return Ok(ApprovalResponse::AllowSession(kind));
            }
            'p' => {
                if let Some(pattern) = pattern(io, req)? {
                    return Ok(ApprovalResponse::AllowSession(SessionGrantKind::Pattern(
                        pattern,
                    )));
                }
            }
            // `choice` returns only the letters it was given.
            _ => {
                let message = io.question("Message for the model (optional, Enter for none): ")?;
                return Ok(ApprovalResponse::Deny {
                    message: (!message.is_empty()).then_some(message),
                });
            }
        }
    }
}

/// Read a pattern and have the user confirm it; `None` to choose again.
fn pattern(io: &mut TtyIo, req: &ApprovalRequest) -> io::Result<Option<ApprovalPattern>> {
    let suggested = terminal_line(&ApprovalPattern::suggest(&req.tool, &req.input));
    loop {
        let typed = io.question(&format!(
            "Pattern, as TOOL [ARG=GLOB ...] (Enter for `{suggested}`): "
        ))?;
        let text = if typed.is_empty() { &suggested } else { &typed };
        let pattern = match ApprovalPattern::parse(text) {
            Ok(p) => p,
            Err(e) => {
                io.say(&format!(
                    "Not a pattern: {}\n",
                    terminal_line(&e.to_string())
                ))?;
                continue;
            }
        };
        if !pattern.matches(&req.tool, &req.input) {
            io.say("Note: the pattern does not cover this call.\n")?;
        }
        let Key(confirm) = io.choice(
            &format!(
                "Allow, for the rest of this session, {}? [y/N]: ",
                terminal_line(&pattern.describe())
            ),
            "y",
            Some('n'),
            "",
        )?;
        return Ok((confirm == 'y').then_some(pattern));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::base::Limits;
    use crate::capability::Grant;
    use crate::policy::{DecidedBy, Decision, Verdict};

    /// A writer the test can read back.
    #[derive(Clone, Default)]
    struct Screen(Arc<Mutex<Vec<u8>>>);

    impl Write for Screen {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn request(rationale: Option<&str>) -> ApprovalRequest {
        ApprovalRequest {
            call_id: "call_1".into(),
            tool: "write_file".into(),
            plugin: "fs".into(),
            input: json!({"path": "ci/deploy.yml", "content": "on: push\n\u{1b}[2J"}),
            policy: "mine".into(),
            decision: Decision {
                verdict: Verdict::Ask,
                by: DecidedBy::Rule {
                    index: Some(1),
                    name: "ask-ci".into(),
                },
                reason: Some("CI runs with secrets".into()),
                parts: Vec::new(),
            },
            grant: Grant::none(),
            network: Vec::new(),
            limits: Limits::default(),
            rationale: rationale.map(str::to_string),
        }
    }

    fn answer(keys: &str, req: &ApprovalRequest) -> (ApprovalResponse, String) {
        let screen = Screen::default();
        let approver = TerminalApprover::with_io(io::Cursor::new(keys.to_string()), screen.clone());
        let response = approver.approve(req);
        let text = String::from_utf8(screen.0.lock().unwrap().clone()).unwrap();
        (response, text)
    }

    #[test]
    fn each_choice_gives_its_response() {
        let req = request(None);
        assert_eq!(answer("y\n", &req).0, ApprovalResponse::AllowOnce);
        assert_eq!(
            answer("what\ns\n", &req).0,
            ApprovalResponse::AllowSession(SessionGrantKind::Fingerprint)
        );
        assert_eq!(
            answer("n\nnot now\n", &req).0,
            ApprovalResponse::Deny {
                message: Some("not now".into())
            }
        );
        assert_eq!(
            answer("n\n\n", &req).0,
            ApprovalResponse::Deny { message: None }
        );
        let (response, text) = answer("p\n\ny\n", &req);
        let ApprovalResponse::AllowSession(SessionGrantKind::Pattern(p)) = response else {
            panic!("{response:?}");
        };
        assert_eq!(p.to_string(), "write_file path=ci/**");
        assert!(
            text.contains("every write_file call whose path matches ci/**? [y/N]"),
            "{text}"
        );
    }

    #[test]
    fn a_pattern_is_confirmed_or_chosen_again() {
        let req = request(None);
        let (response, text) = answer("p\n[bad\n*_file\nn\ny\n", &req);
        assert_eq!(response, ApprovalResponse::AllowOnce);
        assert!(text.contains("Not a pattern: bad glob `[bad`"), "{text}");
        assert!(
            text.contains("every call of a tool matching *_file? [y/N]"),
            "{text}"
        );
    }

    #[test]
    fn a_closed_terminal_is_no_answer() {
        let (response, _) = answer("", &request(None));
        let ApprovalResponse::Unanswered { reason } = response else {
            panic!("{response:?}");
        };
        assert!(
            reason.contains("needs approval under rule ask-ci of policy mine"),
            "{reason}"
        );
        assert!(reason.contains("the terminal closed"), "{reason}");
    }

    #[test]
    fn the_prompt_shows_tool_rule_grant_and_arguments() {
        let (_, text) = answer("y\n", &request(Some("the deploy\u{202e} needs it")));
        insta::assert_snapshot!("approval_prompt", text);
    }
}
