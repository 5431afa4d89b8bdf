//! Model providers: one provider-neutral conversation ([`types`]), spoken
//! over HTTP in three wire formats ([`http`]) or played back from a
//! recording ([`replay`]).
//!
//! Invariant: a turn either returns a complete [`ModelResponse`] or a
//! [`ProviderError`]; events streamed during a failed attempt are voided by
//! a [`StreamEvent::Retrying`] before anything is streamed again.

pub mod http;
pub mod replay;
mod service;
mod types;

pub use replay::{Recorder, ReplayProvider};
pub use service::ProviderName;
pub use types::*;

use tokio::sync::mpsc::UnboundedSender;

/// Where model turns come from.
pub enum Provider {
    /// A model behind an HTTP API.
    Http(http::HttpProvider),
    /// Responses recorded earlier, played back in order.
    Replay(ReplayProvider),
}

impl Provider {
    /// Run one model turn, streaming what arrives into `events`.
    pub async fn complete(
        &self,
        request: &ModelRequest,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<ModelResponse, ProviderError> {
        match self {
            Provider::Http(p) => p.complete(request, events).await,
            Provider::Replay(p) => p.complete(events),
        }
    }

    /// A short label for the user: `openai-chat gpt-4o`, `replay FILE`.
    pub fn describe(&self) -> String {
        match self {
            Provider::Http(p) => p.describe(),
            Provider::Replay(p) => p.describe(),
        }
    }
}
