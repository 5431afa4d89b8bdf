//! The model services Warden knows by name (`--provider`, `provider = …`
//! in the config file), each with its wire format and defaults.

use serde::Deserialize;

use super::WireFormat;

/// A model service, as named on the command line and in the config file.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum ProviderName {
    /// OpenAI Chat Completions (or any compatible server, with --base-url).
    Openai,
    /// The OpenAI Responses API.
    OpenaiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// A local Ollama server (Chat Completions, no key).
    Ollama,
}

impl ProviderName {
    /// Every service, in the order shown to users.
    pub const ALL: [ProviderName; 4] = [
        ProviderName::Openai,
        ProviderName::OpenaiResponses,
        ProviderName::Anthropic,
        ProviderName::Ollama,
    ];

    /// The name as written on the command line and in the config file.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderName::Openai => "openai",
            ProviderName::OpenaiResponses => "openai-responses",
            ProviderName::Anthropic => "anthropic",
            ProviderName::Ollama => "ollama",
        }
    }

    /// The service named `name`, if any.
    pub fn parse(name: &str) -> Option<ProviderName> {
        ProviderName::ALL.into_iter().find(|p| p.as_str() == name)
    }

    pub fn format(self) -> WireFormat {
        match self {
            ProviderName::Openai | ProviderName::Ollama => WireFormat::OpenAiChat,
            ProviderName::OpenaiResponses => WireFormat::OpenAiResponses,
            ProviderName::Anthropic => WireFormat::Anthropic,
        }
    }

    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderName::Openai | ProviderName::OpenaiResponses => "https://api.openai.com/v1",
            ProviderName::Anthropic => "https://api.anthropic.com",
            ProviderName::Ollama => "http://localhost:11434/v1",
        }
    }

    pub fn default_model(self) -> &'static str {
        match self {
            ProviderName::Openai | ProviderName::OpenaiResponses => "gpt-4.1-mini",
            ProviderName::Anthropic => "claude-sonnet-4-5",
            ProviderName::Ollama => "qwen2.5-coder",
        }
    }

    /// The standard environment variable holding the key, if the service
    /// needs one.
    pub fn key_variable(self) -> Option<&'static str> {
        match self {
            ProviderName::Openai | ProviderName::OpenaiResponses => Some("OPENAI_API_KEY"),
            ProviderName::Anthropic => Some("ANTHROPIC_API_KEY"),
            ProviderName::Ollama => None,
        }
    }
}

impl std::fmt::Display for ProviderName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
