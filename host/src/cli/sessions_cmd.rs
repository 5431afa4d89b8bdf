//! `warden sessions list | show`.
//!
//! A session holds the model's words and the tools' results: the
//! conversation is shown inert for a terminal, every other field as one line.

use serde_json::json;

use super::{Exit, SessionsCommand, fail};
use crate::agent::{LoadedSession, Record, SessionStore};
use crate::base::{terminal_line, terminal_text};
use crate::home::Home;
use crate::protocol::{AskAnswer, plan_lines};
use crate::provider::Message;

pub fn run(cmd: SessionsCommand) -> Exit {
    let json = match &cmd {
        SessionsCommand::List { json, .. } | SessionsCommand::Show { json, .. } => *json,
    };
    let store = match Home::from_env() {
        Ok(home) => SessionStore::new(&home),
        Err(e) => return fail(json, Exit::Failure, &e.to_string()),
    };
    match cmd {
        SessionsCommand::List { limit, json } => list(&store, limit, json),
        SessionsCommand::Show { id, json } => show(&store, &id, json),
    }
}

fn status(s: &LoadedSession) -> String {
    match &s.ended {
        Some(reason) => reason.to_string(),
        None => "interrupted (resume with --resume)".to_string(),
    }
}

fn list(store: &SessionStore, limit: Option<usize>, json: bool) -> Exit {
    let mut sessions = match store.list() {
        Ok(s) => s,
        Err(e) => return fail(json, Exit::Failure, &e.to_string()),
    };
    sessions.reverse();
    sessions.truncate(limit.unwrap_or(usize::MAX));
    if json {
        let rows: Vec<_> = sessions
            .iter()
            .map(|s| {
                json!({
                    "id": s.meta.id,
                    "created": s.meta.created,
                    "task": s.meta.task,
                    "workspace": s.meta.workspace,
                    "policy": s.meta.policy,
                    "model": s.meta.model,
                    "turns": s.turns,
                    "ended": s.ended,
                })
            })
            .collect();
        outln!("{}", json!({ "sessions": rows }));
        return Exit::Success;
    }
    if sessions.is_empty() {
        outln!("no sessions yet; start one with `warden run \"TASK\"`");
        return Exit::Success;
    }
    let id_width = sessions.iter().map(|s| s.meta.id.len()).max().unwrap_or(0);
    let created_width = sessions
        .iter()
        .map(|s| s.meta.created.len())
        .max()
        .unwrap_or(0);
    outln!(
        "{:<id_width$}  {:<created_width$}  TURNS  {:<16}  TASK",
        "ID",
        "STARTED",
        "ENDED"
    );
    for s in &sessions {
        let task: String = s.meta.task.chars().take(60).collect();
        let line = format!(
            "{:<id_width$}  {:<created_width$}  {:>5}  {:<16}  {}",
            s.meta.id,
            s.meta.created,
            s.turns,
            status(s),
            task.replace('\n', " ")
        );
        outln!("{}", terminal_line(&line));
    }
    Exit::Success
}

fn show(store: &SessionStore, id: &str, json: bool) -> Exit {
    let s = match store.load(id) {
        Ok(s) => s,
        Err(e) => return fail(json, Exit::Usage, &e.to_string()),
    };
    if json {
        outln!(
            "{}",
            json!({ "meta": s.meta, "turns": s.turns, "ended": s.ended, "records": s.records })
        );
        return Exit::Success;
    }
    let head = [
        format!("session {} · {}", s.meta.id, s.meta.created),
        format!(
            "workspace {} · policy {} · {} · model {}",
            s.meta.workspace, s.meta.policy, s.meta.provider, s.meta.model
        ),
        format!("{} turns · {}", s.turns, status(&s)),
    ];
    for line in head {
        outln!("{}", terminal_line(&line));
    }
    outln!();
    for r in &s.records {
        match r {
            Record::Start(_) | Record::TurnEnd { .. } => {}
            Record::Resumed { at } => outln!("— resumed {}", terminal_line(at)),
            Record::Message { message } => match message {
                Message::User { content } => outln!("user: {}", terminal_text(content)),
                Message::Assistant {
                    content, reasoning, ..
                } => {
                    for r in reasoning {
                        let text = r.text();
                        if !text.is_empty() {
                            outln!("reasoning: {}", terminal_text(&text));
                        }
                    }
                    if !content.is_empty() {
                        outln!("assistant: {}", terminal_text(content));
                    }
                }
                Message::Tool { .. } => {}
            },
            Record::Call(c) => {
                let why = c
                    .rationale
                    .as_deref()
                    .map(|r| format!(" (why: {r})"))
                    .unwrap_or_default();
                let call = format!("{} {}{why}", c.tool, c.arguments);
                outln!("→ {}", terminal_line(&call));
                let text = c.outcome.model_text();
                let first = text.lines().next().unwrap_or("");
                outln!("  {}: {}", c.outcome.label(), terminal_line(first));
            }
            Record::Compaction { messages } => {
                outln!("— context compacted to {} messages", messages.len())
            }
            Record::End { reason } => outln!("— {}", terminal_line(&reason.to_string())),
            Record::Plan { steps, .. } => {
                outln!("plan:");
                for line in plan_lines(steps) {
                    outln!("  {}", terminal_line(&line));
                }
            }
            Record::Asked {
                question, answer, ..
            } => {
                outln!("asked: {}", terminal_line(&question.text));
                match answer {
                    AskAnswer::Answered { answer } => {
                        outln!("  answer: {}", terminal_line(answer))
                    }
                    AskAnswer::Unanswered { reason } => {
                        outln!("  unanswered: {}", terminal_line(reason))
                    }
                }
            }
        }
    }
    Exit::Success
}
