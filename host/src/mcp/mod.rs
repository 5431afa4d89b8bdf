//! `warden mcp`: the catalog's tools served over the Model Context
//! Protocol (stdio, or Streamable HTTP), with the official SDK (`rmcp`).
//!
//! Invariants: every `tools/call` goes through the one pipeline (schema,
//! policy, approval, sandbox) under the shared read/write gate, and gets
//! an audit record naming the client as its caller — also when it is
//! denied, fails, is cancelled or its client goes away; a denial or a tool
//! error is a tool result with `isError`, never a protocol error; input
//! that is not a valid request gets a JSON-RPC error, and the server keeps
//! serving. Asks are put to the client (elicitation) or refused, never to
//! a terminal. Over HTTP, nothing reaches the protocol without the bearer
//! token and an acceptable `Origin`. Design and client setup: `docs/mcp.md`.

mod approve;
mod ask;
mod call;
mod handler;
mod http;
mod http_guard;
mod roots;
mod server;
mod stdio;
mod stdio_fd;
mod tools;
mod watch;

pub use http::{HttpOptions, serve_http};
pub use server::{FinishError, McpOptions, McpServer};
pub use stdio::serve_stdio;

/// Why the server could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The catalog (built-in and installed plugins) could not be opened.
    #[error("cannot open the plugins: {0}")]
    Catalog(#[from] crate::plugin::CatalogError),
    /// The audit log cannot be written, so no call may run.
    #[error("{0}; warden mcp runs no tool it cannot audit")]
    Audit(#[from] crate::audit::AuditError),
    /// The workspace is not a directory that can be opened.
    #[error("workspace {path}: {reason}")]
    Workspace { path: String, reason: String },
    /// `--http` names no address that can be bound.
    #[error("{0}")]
    Address(String),
    /// The HTTP address could not be bound.
    #[error("cannot listen on {addr}: {source}; pick another port or address")]
    Bind {
        addr: String,
        source: std::io::Error,
    },
    /// The bearer token could not be read or made.
    #[error("{0}")]
    Token(String),
    /// The MCP handshake failed before the session began.
    #[error("the MCP session could not start: {0}")]
    Handshake(String),
}

/// The largest JSON-RPC message accepted by default, in bytes.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;
