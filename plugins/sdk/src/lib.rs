//! The Warden plugin SDK: everything a tool plugin author needs.
//!
//! A plugin is a set of [`Tool`]s registered with [`register!`]. Each tool
//! declares its name, description, JSON Schema and annotations, and receives
//! its input already deserialized into a typed struct. Paths in inputs go
//! through [`Context::path`], which maps them into the workspace preopen the
//! host granted: open what it returns at [`WorkspacePath::guest`] (for
//! example `std::fs::read_to_string(path.guest())`) and name it in messages
//! with [`WorkspacePath::display`]. The host's WASI layer enforces
//! containment whatever the plugin does, so this mapping is about clear
//! errors, not security.
//! With the `http` feature, the `http` module sends requests through the host's
//! egress checks; with `walk`, the `walk` module walks a workspace directory
//! as `grep` and `glob` do (gitignore-aware, over directory handles).
//!
//! ```ignore
//! use warden_sdk::{Context, Output, Tool, ToolError, register, serde_json::json};
//!
//! struct Echo;
//! #[derive(serde::Deserialize)]
//! struct EchoInput { text: String }
//!
//! impl Tool for Echo {
//!     type Input = EchoInput;
//!     const NAME: &'static str = "echo";
//!     const DESCRIPTION: &'static str = "Repeat the text back.";
//!     fn input_schema(&self) -> serde_json::Value {
//!         json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
//!     }
//!     fn call(&self, input: EchoInput, _cx: &Context) -> Result<Output, ToolError> {
//!         Ok(Output::text(input.text))
//!     }
//! }
//! register!(Echo);
//! ```

extern crate self as warden_sdk;

#[doc(hidden)]
pub mod bindings;
mod context;
mod error;
#[cfg(feature = "http")]
pub mod http;
pub mod interaction;
mod path;
pub mod process;
#[cfg(feature = "walk")]
pub mod walk;
mod workers;

pub use context::{Context, LogLevel, is_cancelled, log, progress};
pub use error::{ErrorKind, ToolError};
pub use path::WorkspacePath;
pub use serde;
pub use serde_json;
pub use workers::{FanOutError, fan_out, is_worker, parallelism};

/// The version of the WIT contract this SDK builds plugins against.
pub const WIT_VERSION: &str = "0.2.2";

/// Behaviour hints shown to the host. They inform scheduling and approval
/// prompts; the host never relies on them for security.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Annotations {
    /// The tool does not modify its environment.
    pub read_only: bool,
    /// The tool may destroy data (only meaningful when not read-only).
    pub destructive: bool,
    /// Calling twice with the same input has no further effect.
    pub idempotent: bool,
    /// The tool talks to the outside world (the network).
    pub open_world: bool,
}

impl Annotations {
    /// A tool that only reads: read-only and idempotent.
    pub const READ_ONLY: Annotations = Annotations {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    };
    /// A tool that changes files but never deletes data it was not asked to.
    pub const WRITES: Annotations = Annotations {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: false,
    };
    /// A tool that may overwrite or delete data.
    pub const DESTRUCTIVE: Annotations = Annotations {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: false,
    };
}

/// A successful tool result.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    /// What the model reads.
    pub text: String,
    /// Optional machine-readable result.
    pub structured: Option<serde_json::Value>,
}

impl Output {
    /// A plain text result.
    pub fn text(text: impl Into<String>) -> Self {
        Output {
            text: text.into(),
            structured: None,
        }
    }

    /// Attach a structured (JSON) result beside the text.
    pub fn with_structured(mut self, value: serde_json::Value) -> Self {
        self.structured = Some(value);
        self
    }
}

/// One tool. Implement it on a unit struct and list the struct in [`register!`].
pub trait Tool: Sync + 'static {
    /// The deserialized input; a field the schema requires but the input lacks
    /// is reported to the model as an invalid-input error naming the field.
    type Input: serde::de::DeserializeOwned;

    /// The tool's name: `^[a-zA-Z0-9_-]{1,64}$`.
    const NAME: &'static str;
    /// What the tool does, written for the model.
    const DESCRIPTION: &'static str;
    /// Behaviour hints; by default a tool is assumed to write.
    const ANNOTATIONS: Annotations = Annotations::WRITES;

    /// JSON Schema of the input object.
    fn input_schema(&self) -> serde_json::Value;

    /// Run the tool.
    fn call(&self, input: Self::Input, cx: &Context) -> Result<Output, ToolError>;

    /// Run one task that a call of this tool passed to [`fan_out`], in a
    /// worker. A tool that never fans out keeps this default, which
    /// refuses.
    fn work(&self, task: &str, cx: &Context) -> Result<Output, ToolError> {
        let _ = (task, cx);
        Err(ToolError::internal(format!(
            "{} does not run worker tasks",
            Self::NAME
        )))
    }
}

/// Object-safe view of a [`Tool`], used by the registry the macro builds.
#[doc(hidden)]
pub trait DynTool: Sync {
    fn name(&self) -> &'static str;
    fn spec(&self) -> bindings::ToolSpec;
    fn call_json(&self, input: &str, cx: &Context) -> Result<Output, ToolError>;
    fn work(&self, task: &str, cx: &Context) -> Result<Output, ToolError>;
}

impl<T: Tool> DynTool for T {
    fn name(&self) -> &'static str {
        T::NAME
    }

    fn spec(&self) -> bindings::ToolSpec {
        let a = T::ANNOTATIONS;
        bindings::ToolSpec {
            name: T::NAME.to_string(),
            description: T::DESCRIPTION.to_string(),
            input_schema: self.input_schema().to_string(),
            annotations: bindings::Annotations {
                read_only: a.read_only,
                destructive: a.destructive,
                idempotent: a.idempotent,
                open_world: a.open_world,
            },
        }
    }

    fn call_json(&self, input: &str, cx: &Context) -> Result<Output, ToolError> {
        let input: T::Input = serde_json::from_str(input)
            .map_err(|e| ToolError::invalid_input(format!("invalid input for {}: {e}", T::NAME)))?;
        self.call(input, cx)
    }

    fn work(&self, task: &str, cx: &Context) -> Result<Output, ToolError> {
        Tool::work(self, task, cx)
    }
}

/// The plugin's tools, as listed in [`register!`].
#[doc(hidden)]
pub trait Registry {
    fn tools() -> &'static [&'static dyn DynTool];
}

/// Register the plugin's tools and embed its manifest.
///
/// The manifest is the file `warden.toml` beside the plugin's `Cargo.toml`;
/// it is stored in the component's `warden:manifest` custom section so the
/// host can read the declared capabilities without running any code.
#[macro_export]
macro_rules! register {
    ($($tool:expr),+ $(,)?) => {
        struct __WardenPlugin;

        impl $crate::Registry for __WardenPlugin {
            fn tools() -> &'static [&'static dyn $crate::DynTool] {
                static TOOLS: &[&dyn $crate::DynTool] = &[$(&$tool),+];
                TOOLS
            }
        }

        $crate::bindings::__export_bindings!(__WardenPlugin);

        const __WARDEN_MANIFEST_TEXT: &str =
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/warden.toml"));
        #[used]
        #[unsafe(link_section = "warden:manifest")]
        static __WARDEN_MANIFEST: [u8; __WARDEN_MANIFEST_TEXT.len()] =
            $crate::__private::bytes(__WARDEN_MANIFEST_TEXT);
    };
}

#[doc(hidden)]
pub mod __private {
    pub use wit_bindgen;

    /// Copy a string's bytes into an array, in const context.
    pub const fn bytes<const N: usize>(s: &str) -> [u8; N] {
        let src = s.as_bytes();
        let mut out = [0u8; N];
        let mut i = 0;
        while i < N {
            out[i] = src[i];
            i += 1;
        }
        out
    }
}
