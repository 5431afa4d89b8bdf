//! Warden's built-in memory tools: `memory_read` and `memory_write` keep
//! short notes per workspace that later sessions read.
//!
//! The notes live in Warden's data directory, never in the workspace; the
//! host caps their size, redacts secrets before they are stored, and keeps
//! them away from any call whose policy sets `memory = false`.

use serde::Deserialize;
use warden_sdk::interaction;
use warden_sdk::{
    Annotations, Context, Output, Tool, ToolError, register,
    serde_json::{Value, json},
};

register!(MemoryRead, MemoryWrite);

/// The `memory_read` tool.
pub struct MemoryRead;

/// Input of `memory_read`: nothing.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadInput {}

impl Tool for MemoryRead {
    type Input = ReadInput;
    const NAME: &'static str = "memory_read";
    const DESCRIPTION: &'static str = "Read the memory notes kept for this workspace by earlier \
        sessions: conventions, working commands, the user's decisions.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    }

    fn call(&self, _input: ReadInput, _cx: &Context) -> Result<Output, ToolError> {
        let notes = interaction::memory_read()?;
        let text = match notes.trim().is_empty() {
            true => "There are no memory notes for this workspace yet.".to_string(),
            false => format!("Memory notes for this workspace:\n{notes}"),
        };
        Ok(Output::text(text).with_structured(json!({ "notes": notes })))
    }
}

/// The `memory_write` tool.
pub struct MemoryWrite;

/// How a write changes the notes.
#[derive(Deserialize, Default, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Add the text as a new line after the notes.
    #[default]
    Append,
    /// Replace all notes with the text.
    Replace,
}

/// Input of `memory_write`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteInput {
    text: String,
    #[serde(default)]
    mode: Mode,
}

impl Tool for MemoryWrite {
    type Input = WriteInput;
    const NAME: &'static str = "memory_write";
    const DESCRIPTION: &'static str = "Keep a short note for later sessions in this workspace \
        (at most 16 KiB of notes in all). `append` (the default) adds the text as a line; \
        `replace` rewrites all notes. Secrets are redacted before the notes are stored.";
    const ANNOTATIONS: Annotations = Annotations::WRITES;

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "mode": {"type": "string", "enum": ["append", "replace"]}
            },
            "required": ["text"],
            "additionalProperties": false
        })
    }

    fn call(&self, input: WriteInput, _cx: &Context) -> Result<Output, ToolError> {
        let notes = match input.mode {
            Mode::Replace => input.text.clone(),
            Mode::Append => {
                let mut notes = interaction::memory_read()?;
                if !notes.is_empty() && !notes.ends_with('\n') {
                    notes.push('\n');
                }
                notes.push_str(input.text.trim_end());
                notes.push('\n');
                notes
            }
        };
        let stored = interaction::memory_write(&notes)?;
        let redacted = stored != notes;
        let mut text = format!("Memory saved: {} bytes of notes.", stored.len());
        if redacted {
            text.push_str(" Secrets in it were redacted.");
        }
        Ok(
            Output::text(text)
                .with_structured(json!({"bytes": stored.len(), "redacted": redacted})),
        )
    }
}
