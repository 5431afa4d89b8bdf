//! Keeping the conversation inside the model's context window: a token
//! estimate per message, compaction of older turns into a summary, and
//! truncation of long tool outputs.
//!
//! Invariant: compaction cuts the history only just before a user or an
//! assistant message, so every tool result stays next to the call that
//! asked for it, in the summary or in the kept tail, never split.

use crate::provider::{Message, ModelRequest};

/// When to compact and how much to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextLimits {
    /// Compact once the estimate of a request passes this many tokens.
    pub compact_above: u64,
    /// How many tokens of the most recent history compaction keeps verbatim.
    pub keep_recent: u64,
    /// Tool outputs longer than this many bytes are cut in the context;
    /// the full text goes to a file in the session directory.
    pub tool_output_bytes: usize,
}

impl Default for ContextLimits {
    fn default() -> Self {
        ContextLimits {
            compact_above: 100_000,
            keep_recent: 20_000,
            tool_output_bytes: 16 * 1024,
        }
    }
}

/// Rough tokens of `text`: about four bytes each.
pub fn text_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

/// Rough tokens of one message, with a small per-message overhead.
pub fn message_tokens(m: &Message) -> u64 {
    const OVERHEAD: u64 = 4;
    OVERHEAD
        + match m {
            Message::User { content } => text_tokens(content),
            Message::Assistant {
                content,
                tool_calls,
                reasoning,
            } => {
                text_tokens(content)
                    + reasoning
                        .iter()
                        .map(|r| text_tokens(&r.text()))
                        .sum::<u64>()
                    + tool_calls
                        .iter()
                        .map(|c| OVERHEAD + text_tokens(&c.name) + text_tokens(&c.arguments))
                        .sum::<u64>()
            }
            Message::Tool { content, name, .. } => text_tokens(content) + text_tokens(name),
        }
}

/// Rough tokens of a whole request: system prompt, tools and messages.
pub fn request_tokens(r: &ModelRequest) -> u64 {
    let tools: u64 = r
        .tools
        .iter()
        .map(|t| {
            text_tokens(&t.name)
                + text_tokens(&t.description)
                + text_tokens(&t.parameters.to_string())
        })
        .sum();
    text_tokens(&r.system) + tools + r.messages.iter().map(message_tokens).sum::<u64>()
}

/// Where to cut `messages` so that roughly `keep` tokens stay verbatim:
/// the index of the first kept message. `None` when there is nothing
/// worth summarizing. The first message (the task) is never in the tail
/// cut-off: the cut is at index 1 or later, just before a user or
/// assistant message.
pub fn split_point(messages: &[Message], keep: u64) -> Option<usize> {
    let mut kept = 0u64;
    let mut cut = None;
    for i in (1..messages.len()).rev() {
        kept += message_tokens(&messages[i]);
        let boundary = match &messages[i] {
            Message::User { .. } | Message::Assistant { .. } => true,
            Message::Tool { .. } => false,
        };
        if boundary {
            cut = Some(i);
            if kept >= keep {
                break;
            }
        }
    }
    // Summarizing only the task itself gains nothing.
    cut.filter(|&i| i > 1)
}

/// The history rendered as plain text, for the model to summarize.
pub fn transcript(messages: &[Message]) -> String {
    let mut out = String::new();
    for m in messages {
        match m {
            Message::User { content } => out.push_str(&format!("USER:\n{content}\n\n")),
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                if !content.is_empty() {
                    out.push_str(&format!("ASSISTANT:\n{content}\n\n"));
                }
                for c in tool_calls {
                    out.push_str(&format!(
                        "ASSISTANT CALLED {} (id {}): {}\n\n",
                        c.name, c.id, c.arguments
                    ));
                }
            }
            Message::Tool {
                call_id,
                name,
                content,
                is_error,
            } => {
                let status = if *is_error { " (failed)" } else { "" };
                let shown = cut_text(content, 4000);
                out.push_str(&format!(
                    "RESULT OF {name} (id {call_id}){status}:\n{shown}\n\n"
                ));
            }
        }
    }
    out
}

/// The system prompt for a compaction request.
pub const SUMMARY_PROMPT: &str = "You compress an AI agent's working history. Summarize the \
transcript you are given for the agent that will continue the task: the user's goal, what was \
done and found (files, facts, decisions, errors), and what remains. Be specific and brief. \
Write the summary only.";

/// The messages after compaction: the task with the summary of the turns
/// it replaces, then the kept tail unchanged.
pub fn compacted(messages: &[Message], cut: usize, summary: &str) -> Vec<Message> {
    let task = match messages.first() {
        Some(Message::User { content }) => content.clone(),
        Some(Message::Assistant { .. } | Message::Tool { .. }) | None => String::new(),
    };
    let mut head = format!(
        "{task}\n\n[Earlier turns of this session were summarized to save context.]\n{summary}"
    );
    let mut tail = messages[cut..].iter();
    let mut out = Vec::with_capacity(messages.len() - cut + 1);
    let mut rest: Vec<Message> = Vec::new();
    match tail.next() {
        // Two user messages in a row are merged: some providers refuse them.
        Some(Message::User { content }) => head.push_str(&format!("\n\n{content}")),
        Some(m) => rest.push(m.clone()),
        None => {}
    }
    out.push(Message::User { content: head });
    out.extend(rest);
    out.extend(tail.cloned());
    out
}

/// `text` cut to at most `max` bytes of its own, on character boundaries:
/// its head and its tail, with a marker between them saying how much was
/// left out.
pub fn cut_text(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let head_len = floor_boundary(text, max * 3 / 5);
    let tail_start = ceil_boundary(text, text.len() - (max - head_len));
    let omitted = tail_start - head_len;
    format!(
        "{}\n[... {omitted} bytes omitted ...]\n{}",
        &text[..head_len],
        &text[tail_start..]
    )
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::ToolCall;

    fn user(s: &str) -> Message {
        Message::User { content: s.into() }
    }
    fn asks(id: &str) -> Message {
        Message::Assistant {
            content: String::new(),
            tool_calls: vec![ToolCall {
                id: id.into(),
                name: "grep".into(),
                arguments: "{}".into(),
            }],
            reasoning: vec![],
        }
    }
    fn result(id: &str, size: usize) -> Message {
        Message::Tool {
            call_id: id.into(),
            name: "grep".into(),
            content: "x".repeat(size),
            is_error: false,
        }
    }

    /// Every tool result is preceded, in the same list, by the call that asked for it.
    fn paired(messages: &[Message]) -> bool {
        let mut open: Vec<String> = Vec::new();
        for m in messages {
            match m {
                Message::Assistant { tool_calls, .. } => {
                    open = tool_calls.iter().map(|c| c.id.clone()).collect()
                }
                Message::Tool { call_id, .. } => {
                    if !open.contains(call_id) {
                        return false;
                    }
                }
                Message::User { .. } => open.clear(),
            }
        }
        true
    }

    #[test]
    fn compaction_never_separates_a_call_from_its_result() {
        let mut history = vec![user("task")];
        for i in 0..20 {
            let id = format!("c{i}");
            history.push(asks(&id));
            history.push(result(&id, 400 + i * 10));
        }
        for keep in [1, 50, 120, 300, 1000, 2000] {
            let cut = split_point(&history, keep).unwrap();
            assert!(
                matches!(history[cut], Message::Assistant { .. }),
                "keep {keep}"
            );
            let after = compacted(&history, cut, "summary");
            assert!(paired(&after), "keep {keep}");
            assert!(paired(&history[..cut]), "keep {keep}");
            assert!(matches!(&after[0], Message::User { content } if content.starts_with("task")));
        }
    }

    #[test]
    fn a_short_history_is_not_compacted() {
        let history = vec![user("task"), asks("c"), result("c", 10)];
        assert_eq!(split_point(&history, 1_000_000), None);
    }

    #[test]
    fn a_user_message_after_the_cut_is_merged_into_the_summary() {
        let history = vec![
            user("task"),
            asks("a"),
            result("a", 4000),
            user("more"),
            asks("b"),
        ];
        let after = compacted(&history, 3, "S");
        assert_eq!(after.len(), 2);
        assert!(
            matches!(&after[0], Message::User { content } if content.contains("S") && content.ends_with("more"))
        );
    }

    #[test]
    fn long_text_is_cut_on_char_boundaries_with_a_marker() {
        let text = "é".repeat(10_000);
        let cut = cut_text(&text, 1001);
        assert!(cut.len() < 1100);
        assert!(cut.contains("bytes omitted"));
        assert_eq!(cut_text("short", 10), "short");
    }
}
