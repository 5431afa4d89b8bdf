//! The provider-neutral conversation: what the agent sends a model and what
//! comes back, independent of any wire format.
//!
//! Invariant: an [`ApiKey`] never prints — `Debug` and `Display` redact it,
//! and it does not serialize (it only deserializes, from the config file) —
//! so a key cannot reach a log, a transcript or a record by accident.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// One tool call as the model issued it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's call id; results are paired with calls by it.
    pub id: String,
    /// The tool name exactly as the model wrote it (it may name no tool).
    pub name: String,
    /// The arguments as JSON text exactly as streamed (it may be malformed).
    pub arguments: String,
}

/// One message of the conversation. The system prompt travels separately
/// in [`ModelRequest::system`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// What the user asked.
    User { content: String },
    /// What the model answered: text, tool calls, or both.
    Assistant {
        content: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
        /// The model's reasoning before it answered, kept to be sent back
        /// where the wire format wants it (see [`Reasoning`]).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        reasoning: Vec<Reasoning>,
    },
    /// The result of one tool call, paired with it by `call_id`.
    Tool {
        call_id: String,
        name: String,
        content: String,
        /// The call failed, was denied or cancelled.
        #[serde(default)]
        is_error: bool,
    },
}

/// One piece of a model's reasoning, as its wire format gave it. Pieces a
/// format can take back are sent back unchanged in later requests (the
/// signature or encrypted content proves them to the provider); the others
/// are only shown and recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Reasoning {
    /// An Anthropic `thinking` block; sent back to Anthropic.
    Thinking { thinking: String, signature: String },
    /// An Anthropic `redacted_thinking` block (encrypted); sent back to Anthropic.
    RedactedThinking { data: String },
    /// An OpenAI Responses `reasoning` output item, verbatim (id, summary,
    /// `encrypted_content` when present); sent back to the Responses API.
    ResponsesItem { item: serde_json::Value },
    /// Chat Completions `reasoning_content` (DeepSeek, llama.cpp, vLLM,
    /// Ollama); shown and recorded, not sent back: some of these servers
    /// refuse it in a request.
    Text { text: String },
}

impl Reasoning {
    /// The readable text of the piece, if it has any.
    pub fn text(&self) -> String {
        match self {
            Reasoning::Thinking { thinking, .. } => thinking.clone(),
            Reasoning::RedactedThinking { .. } => String::new(),
            Reasoning::ResponsesItem { item } => {
                let parts = item["summary"]
                    .as_array()
                    .into_iter()
                    .chain(item["content"].as_array())
                    .flatten()
                    .filter_map(|p| p["text"].as_str());
                parts.collect::<Vec<_>>().join("\n")
            }
            Reasoning::Text { text } => text.clone(),
        }
    }
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    /// JSON Schema of the input object.
    pub parameters: serde_json::Value,
}

/// One request for the model's next turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    pub model: String,
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolDef>,
    /// Upper bound on the tokens the model may produce in this turn.
    pub max_output_tokens: Option<u32>,
}

/// Tokens a turn consumed, as the provider reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// Why the model stopped producing output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FinishReason {
    /// The model finished its answer.
    Stop,
    /// The model stopped to let its tool calls run.
    ToolCalls,
    /// The output hit the token limit.
    Length,
    /// Anything else the provider reported, verbatim.
    Other { reason: String },
}

/// A complete model turn, assembled from the stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelResponse {
    pub text: String,
    /// The reasoning that came with the turn, in stream order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasoning: Vec<Reasoning>,
    /// In the order the model issued them.
    pub tool_calls: Vec<ToolCall>,
    pub usage: Option<Usage>,
    pub finish: FinishReason,
}

/// What a provider reports while a turn streams.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    /// More assistant text.
    TextDelta(String),
    /// More of the model's reasoning, to show (dimmed) as it streams.
    ReasoningDelta(String),
    /// A tool call whose arguments are complete; it may start running
    /// before the rest of the turn arrives.
    ToolCallReady(ToolCall),
    /// The attempt failed and will be retried after `delay`; everything
    /// streamed since the turn began is void and will be streamed again.
    Retrying {
        attempt: u32,
        delay: Duration,
        reason: String,
    },
}

/// Which wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WireFormat {
    /// OpenAI-compatible Chat Completions (`POST {base}/chat/completions`):
    /// OpenAI, Ollama, llama.cpp's server, vLLM, LM Studio.
    OpenAiChat,
    /// The OpenAI Responses API (`POST {base}/responses`).
    OpenAiResponses,
    /// Anthropic Messages (`POST {base}/v1/messages`).
    Anthropic,
}

/// An API key. Never printed, never serialized.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl<'de> Deserialize<'de> for ApiKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ApiKey, D::Error> {
        let key = String::deserialize(d)?;
        Ok(ApiKey(key.trim().to_string()))
    }
}

impl ApiKey {
    pub fn new(key: impl Into<String>) -> ApiKey {
        ApiKey(key.into())
    }

    /// The key itself, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

impl std::fmt::Display for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// When and how long to retry a failed request: 429, 5xx, transport
/// errors and streams cut before their end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// The first backoff; each later one doubles, with jitter.
    pub initial_delay: Duration,
    /// No single wait is longer, `Retry-After` included.
    pub max_delay: Duration,
    /// No retry starts after this much time since the turn began.
    pub max_elapsed: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 5,
            initial_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            max_elapsed: Duration::from_secs(120),
        }
    }
}

/// The longest wait for a response, and between two events of its
/// stream, unless the user sets another (`--idle-timeout`, or
/// `idle_timeout_secs` in config.toml).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// Everything needed to talk to one model over HTTP.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    pub format: WireFormat,
    /// For example `https://api.openai.com/v1`, `http://localhost:11434/v1`,
    /// `https://api.anthropic.com`.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<ApiKey>,
    pub retry: RetryPolicy,
    /// Longest wait for a connection and a response's headers, and between
    /// two events of its stream; an attempt that waits longer is retried.
    pub idle_timeout: Duration,
}

/// Why a model turn failed. Retryable failures only appear here once the
/// retry budget is spent.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error("the provider refused the credentials (HTTP {status}): {message}; check the API key")]
    Auth { status: u16, message: String },
    #[error("the request exceeds the model's context window: {message}")]
    ContextLength { message: String },
    #[error("the provider rejected the request (HTTP {status}): {message}")]
    BadRequest { status: u16, message: String },
    #[error("gave up after {attempts} attempts: {last}")]
    RetriesExhausted { attempts: u32, last: String },
    #[error("the provider's response could not be understood: {0}")]
    BadResponse(String),
    #[error("cannot reach the provider: {0}")]
    Transport(String),
    /// A model server on this machine refused the connection: retrying
    /// would not start it.
    #[error(
        "nothing is listening at {url} (connection refused); start the model server, \
         or point --base-url at the one that is running"
    )]
    NotListening { url: String },
    #[error("replay: {0}")]
    Replay(String),
}
