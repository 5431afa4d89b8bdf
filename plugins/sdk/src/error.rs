//! Typed tool errors, and the mapping from I/O errors to messages a model can act on.

use crate::bindings;

/// Why a tool call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Malformed input or a violated contract.
    InvalidInput,
    /// A named file or entity does not exist.
    NotFound,
    /// The sandbox or the system refused the operation.
    PermissionDenied,
    /// Any other I/O failure.
    Io,
    /// Gave up waiting.
    Timeout,
    /// A bug in the plugin.
    Internal,
    /// The tool saw the call cancelled and stopped.
    Cancelled,
    /// The operation is not supported here (for example a special file).
    Unsupported,
    /// A limit of the call stopped the tool (a quota, an output cap).
    LimitExceeded,
}

/// A failure reported to the model: a kind and a message saying what to do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    pub kind: ErrorKind,
    pub message: String,
}

impl ToolError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ToolError {
            kind,
            message: message.into(),
        }
    }
    pub fn invalid_input(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidInput, message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, message)
    }
    pub fn permission_denied(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::PermissionDenied, message)
    }
    pub fn io(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Io, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }

    /// Describe an I/O error on `path` (a display path: workspace-relative,
    /// or absolute inside an extra directory).
    pub fn from_io(err: &std::io::Error, path: &str) -> Self {
        use std::io::ErrorKind as K;
        let shown = if path.is_empty() { "." } else { path };
        match err.kind() {
            K::NotFound => Self::not_found(format!("{shown}: no such file or directory")),
            K::PermissionDenied => Self::permission_denied(format!(
                "{shown}: permission denied (the path leaves the workspace or is not granted to this call, \
                 or the file's own permissions refuse it)"
            )),
            K::ReadOnlyFilesystem => Self::permission_denied(format!(
                "{shown}: read-only for this call; writing needs a write grant"
            )),
            K::AlreadyExists => Self::io(format!("{shown}: already exists")),
            K::IsADirectory => Self::invalid_input(format!("{shown}: is a directory, not a file")),
            K::NotADirectory => Self::invalid_input(format!("{shown}: not a directory")),
            K::InvalidInput | K::InvalidFilename => {
                Self::invalid_input(format!("{shown}: invalid path"))
            }
            K::Unsupported => Self::new(
                ErrorKind::Unsupported,
                format!("{shown}: not supported here (a FIFO, socket or device?)"),
            ),
            K::QuotaExceeded => Self::new(
                ErrorKind::LimitExceeded,
                format!("{shown}: the call's write quota is used up"),
            ),
            _ => Self::io(format!("{shown}: {}", strip_os_detail(err))),
        }
    }

    pub(crate) fn from_wit(e: bindings::ToolError) -> Self {
        let kind = match e.kind {
            bindings::ErrorKind::InvalidInput => ErrorKind::InvalidInput,
            bindings::ErrorKind::NotFound => ErrorKind::NotFound,
            bindings::ErrorKind::PermissionDenied => ErrorKind::PermissionDenied,
            bindings::ErrorKind::Io => ErrorKind::Io,
            bindings::ErrorKind::Timeout => ErrorKind::Timeout,
            bindings::ErrorKind::Internal => ErrorKind::Internal,
            bindings::ErrorKind::Cancelled => ErrorKind::Cancelled,
            bindings::ErrorKind::Unsupported => ErrorKind::Unsupported,
            bindings::ErrorKind::LimitExceeded => ErrorKind::LimitExceeded,
        };
        ToolError::new(kind, e.message)
    }

    pub(crate) fn into_wit(self) -> bindings::ToolError {
        let kind = match self.kind {
            ErrorKind::InvalidInput => bindings::ErrorKind::InvalidInput,
            ErrorKind::NotFound => bindings::ErrorKind::NotFound,
            ErrorKind::PermissionDenied => bindings::ErrorKind::PermissionDenied,
            ErrorKind::Io => bindings::ErrorKind::Io,
            ErrorKind::Timeout => bindings::ErrorKind::Timeout,
            ErrorKind::Internal => bindings::ErrorKind::Internal,
            ErrorKind::Cancelled => bindings::ErrorKind::Cancelled,
            ErrorKind::Unsupported => bindings::ErrorKind::Unsupported,
            ErrorKind::LimitExceeded => bindings::ErrorKind::LimitExceeded,
        };
        bindings::ToolError {
            kind,
            message: self.message,
        }
    }
}

/// The text of an I/O error without the "(os error N)" suffix.
fn strip_os_detail(err: &std::io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.message)
    }
}

impl std::error::Error for ToolError {}
