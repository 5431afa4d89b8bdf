//! Model APIs over HTTP with streaming (SSE) and retries.

use tokio::sync::mpsc::UnboundedSender;

use super::{ModelRequest, ModelResponse, ProviderConfig, ProviderError, StreamEvent};

/// A model behind an HTTP API, in one of the [`super::WireFormat`]s.
pub struct HttpProvider {
    config: ProviderConfig,
}

impl HttpProvider {
    pub fn new(config: ProviderConfig) -> Result<HttpProvider, ProviderError> {
        Ok(HttpProvider { config })
    }

    pub async fn complete(
        &self,
        _request: &ModelRequest,
        _events: &UnboundedSender<StreamEvent>,
    ) -> Result<ModelResponse, ProviderError> {
        Err(ProviderError::Transport(format!(
            "{:?} is not wired yet",
            self.config.format
        )))
    }

    pub fn describe(&self) -> String {
        format!("{:?} {}", self.config.format, self.config.model)
    }
}
