//! Model APIs over HTTP: three wire formats, each streamed as server-sent
//! events (or, from a server that does not stream, one JSON completion
//! read as its events would be), with one retry loop around them.
//!
//! Invariants: the API key travels only in the request's auth header — it
//! is never part of a URL, a log line or an error (error text comes from
//! response bodies and transport errors, and any copy of the key in it is
//! redacted all the same); and a turn either completes from one whole
//! stream or fails, events of a failed attempt being voided by a
//! [`StreamEvent::Retrying`].

mod anthropic;
mod openai_chat;
mod openai_responses;
mod retry;
mod sse;
mod whole;

use std::time::Instant;

use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

use super::{
    ApiKey, ModelRequest, ModelResponse, ProviderConfig, ProviderError, StreamEvent, WireFormat,
};
use retry::{Attempt, AttemptError};
use sse::Decoder;

/// The `anthropic-version` header this client speaks.
const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A model behind an HTTP API, in one of the [`WireFormat`]s.
pub struct HttpProvider {
    config: ProviderConfig,
    endpoint: reqwest::Url,
    client: reqwest::Client,
}

impl HttpProvider {
    /// A provider for `config`. Fails if the base URL is not an absolute
    /// `http`/`https` URL. Loopback base URLs (a local Ollama, llama.cpp or
    /// vLLM) bypass any configured HTTP proxy.
    pub fn new(config: ProviderConfig) -> Result<HttpProvider, ProviderError> {
        let base = config.base_url.trim_end_matches('/');
        let path = match config.format {
            WireFormat::OpenAiChat => "/chat/completions",
            WireFormat::OpenAiResponses => "/responses",
            WireFormat::Anthropic => "/v1/messages",
        };
        let endpoint = reqwest::Url::parse(&format!("{base}{path}")).map_err(|e| {
            ProviderError::Transport(format!(
                "the base URL {:?} is not a valid URL ({e}); expected e.g. \
                 https://api.openai.com/v1 or http://localhost:11434/v1",
                config.base_url
            ))
        })?;
        if !matches!(endpoint.scheme(), "http" | "https") {
            return Err(ProviderError::Transport(format!(
                "the base URL {:?} must start with http:// or https://",
                config.base_url
            )));
        }
        let mut builder = reqwest::Client::builder()
            .user_agent(concat!("warden/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(config.idle_timeout);
        if is_loopback(&endpoint) {
            builder = builder.no_proxy();
        }
        let client = builder
            .build()
            .map_err(|e| ProviderError::Transport(format!("cannot set up HTTP: {e}")))?;
        Ok(HttpProvider {
            config,
            endpoint,
            client,
        })
    }

    /// Run one model turn, streaming what arrives into `events`, retrying
    /// per the [`super::RetryPolicy`].
    pub async fn complete(
        &self,
        request: &ModelRequest,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<ModelResponse, ProviderError> {
        let body = match self.config.format {
            WireFormat::OpenAiChat => openai_chat::request_body(request),
            WireFormat::OpenAiResponses => openai_responses::request_body(request),
            WireFormat::Anthropic => anthropic::request_body(request),
        };
        let started = Instant::now();
        let policy = &self.config.retry;
        let mut attempts: u32 = 0;
        let result = loop {
            attempts += 1;
            let (reason, after) = match self.attempt(&body, events).await {
                Ok(response) => break Ok(response),
                Err(AttemptError::Fail(e)) => break Err(e),
                Err(AttemptError::Retry { reason, after }) => (reason, after),
            };
            let delay = retry::delay(policy, attempts, after);
            if attempts > policy.max_retries || started.elapsed() + delay > policy.max_elapsed {
                break Err(ProviderError::RetriesExhausted {
                    attempts,
                    last: reason,
                });
            }
            // The receiver may be gone (the turn was abandoned); the result
            // still goes to the caller.
            let _ = events.send(StreamEvent::Retrying {
                attempt: attempts,
                delay,
                reason: self.scrub(reason),
            });
            tokio::time::sleep(delay).await;
        };
        result.map_err(|e| self.redact(e))
    }

    /// A short label for the user: `openai-chat gpt-4o`.
    pub fn describe(&self) -> String {
        let format = match self.config.format {
            WireFormat::OpenAiChat => "openai-chat",
            WireFormat::OpenAiResponses => "openai-responses",
            WireFormat::Anthropic => "anthropic",
        };
        format!("{format} {}", self.config.model)
    }

    /// One request and its whole stream.
    async fn attempt(&self, body: &Value, events: &UnboundedSender<StreamEvent>) -> Attempt {
        let mut request = self
            .client
            .post(self.endpoint.clone())
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .json(body);
        let key = self.config.api_key.as_ref().map(ApiKey::expose);
        request = match self.config.format {
            WireFormat::OpenAiChat | WireFormat::OpenAiResponses => match key {
                Some(key) => request.bearer_auth(key),
                None => request,
            },
            WireFormat::Anthropic => {
                let request = request.header("anthropic-version", ANTHROPIC_VERSION);
                match key.map(reqwest::header::HeaderValue::from_str) {
                    Some(Ok(mut value)) => {
                        value.set_sensitive(true);
                        request.header("x-api-key", value)
                    }
                    Some(Err(_)) => {
                        return Err(AttemptError::Fail(ProviderError::Transport(
                            "the API key has characters an HTTP header cannot carry".into(),
                        )));
                    }
                    None => request,
                }
            }
        };
        let idle = self.config.idle_timeout;
        let response = match tokio::time::timeout(idle, request.send()).await {
            Ok(Ok(response)) => response,
            Ok(Err(e)) => {
                let loopback = is_loopback(&self.endpoint);
                return Err(retry::send_error(&e, &self.endpoint, loopback));
            }
            Err(_) => {
                return Err(AttemptError::Retry {
                    reason: format!("no response from the provider within {idle:?}"),
                    after: None,
                });
            }
        };
        let status = response.status();
        if !status.is_success() {
            let after = retry::retry_after(response.headers());
            let text = match tokio::time::timeout(idle, response.text()).await {
                Ok(Ok(text)) => text,
                Ok(Err(_)) | Err(_) => String::new(),
            };
            return Err(retry::from_status(status.as_u16(), &text, after));
        }
        let is_json = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        let decoder: Box<dyn Decoder> = match self.config.format {
            WireFormat::OpenAiChat => Box::<openai_chat::ChatDecoder>::default(),
            WireFormat::OpenAiResponses => Box::<openai_responses::ResponsesDecoder>::default(),
            WireFormat::Anthropic => Box::<anthropic::AnthropicDecoder>::default(),
        };
        if !is_json {
            return sse::read(response, idle, decoder, events).await;
        }
        let text = match tokio::time::timeout(idle, response.text()).await {
            Ok(Ok(text)) => text,
            Ok(Err(e)) => return Err(retry::transport_error(&e)),
            Err(_) => {
                return Err(AttemptError::retry(format!(
                    "the response stalled: no more of it for {idle:?}"
                )));
            }
        };
        whole::read(&text, self.config.format, decoder, events)
    }
}

fn is_loopback(url: &reqwest::Url) -> bool {
    let host = url.host_str().unwrap_or_default();
    host.eq_ignore_ascii_case("localhost")
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

impl HttpProvider {
    /// `text` with any copy of the key replaced; a provider should never
    /// echo it, but errors and retry reasons may be shown or recorded.
    fn scrub(&self, text: String) -> String {
        match self.config.api_key.as_ref().map(ApiKey::expose) {
            Some(key) if !key.is_empty() => text.replace(key, "<redacted>"),
            _ => text,
        }
    }

    fn redact(&self, error: ProviderError) -> ProviderError {
        let clean = |s: String| self.scrub(s);
        match error {
            ProviderError::Auth { status, message } => ProviderError::Auth {
                status,
                message: clean(message),
            },
            ProviderError::ContextLength { message } => ProviderError::ContextLength {
                message: clean(message),
            },
            ProviderError::BadRequest { status, message } => ProviderError::BadRequest {
                status,
                message: clean(message),
            },
            ProviderError::RetriesExhausted { attempts, last } => ProviderError::RetriesExhausted {
                attempts,
                last: clean(last),
            },
            ProviderError::BadResponse(m) => ProviderError::BadResponse(clean(m)),
            ProviderError::Transport(m) => ProviderError::Transport(clean(m)),
            ProviderError::NotListening { url } => ProviderError::NotListening { url },
            ProviderError::Replay(m) => ProviderError::Replay(clean(m)),
        }
    }
}
