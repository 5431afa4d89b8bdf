//! `warden mcp`: serve the tools to MCP clients, over stdio or HTTP.

use std::io::Read;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;

use super::limit_args::{LimitArgs, requested_limits};
use super::{Exit, fail};
use crate::base::Verbosity;
use crate::home::Home;
use crate::mcp::{self, HttpOptions, McpError, McpOptions, McpServer};

/// Options of `warden mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio. ADDR is a
    /// port (bound to 127.0.0.1) or HOST:PORT; port 0 picks a free one.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// The policy deciding every call: a name (see `warden policy list`) or a
    /// file [default: the user policy `default`, else workspace-write].
    #[arg(long, value_name = "NAME|PATH")]
    pub policy: Option<String>,
    /// The directory tools may use (default: the current directory). A
    /// client's roots can narrow it to a directory inside it, never widen it.
    #[arg(long, short = 'w')]
    pub workspace: Option<PathBuf>,
    /// Accept /, your home directory or the data directory as the workspace.
    #[arg(long)]
    pub trust_workspace: bool,
    /// Never ask the client: calls the policy asks about are denied.
    #[arg(long, visible_alias = "no-prompt")]
    pub non_interactive: bool,
    /// Also list the tools the policy denies outright (marked as such), for debugging.
    #[arg(long)]
    pub list_denied: bool,
    /// Read-only calls that may run at once (any other call runs alone).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub parallel: u64,
    /// HTTP: read the bearer token from the first line of FILE (which only
    /// you may read) instead of generating one and printing it to stderr.
    #[arg(long, value_name = "FILE", requires = "http")]
    pub token_file: Option<PathBuf>,
    /// HTTP: also accept requests from this browser origin, e.g.
    /// http://localhost:5173 (repeatable).
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    pub allow_origin: Vec<String>,
    /// The largest message accepted, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = mcp::DEFAULT_MAX_MESSAGE_BYTES as u64,
          value_parser = clap::value_parser!(u64).range(1024..=(64 << 20)))]
    pub max_message_bytes: u64,
    /// HTTP: most MCP sessions open at once.
    #[arg(long, value_name = "N", default_value_t = 16, requires = "http")]
    pub max_sessions: usize,
    /// HTTP: most connections served at once.
    #[arg(long, value_name = "N", default_value_t = 64, requires = "http")]
    pub max_connections: usize,
    #[command(flatten)]
    pub limit: LimitArgs,
}

pub fn run(args: McpArgs, verbosity: Verbosity) -> Exit {
    let server = match open(&args, verbosity) {
        Ok(s) => s,
        Err((code, msg)) => return fail(false, code, &msg),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            return fail(
                false,
                Exit::Failure,
                &format!("cannot start the runtime: {e}"),
            );
        }
    };
    let served = runtime.block_on(async move {
        match &args.http {
            None => mcp::serve_stdio(server, args.max_message_bytes as usize).await,
            Some(addr) => serve_http(server, &args, addr).await,
        }
    });
    match served {
        Ok(()) => Exit::Success,
        Err(e) => fail(false, Exit::Failure, &e.to_string()),
    }
}

/// The server for `args`, or the exit code and message that stop it.
fn open(args: &McpArgs, verbosity: Verbosity) -> Result<Arc<McpServer>, (Exit, String)> {
    let usage = |msg: String| (Exit::Usage, msg);
    let home = Home::from_env().map_err(|e| usage(e.to_string()))?;
    let policy = super::policy_cmd::effective(args.policy.as_deref()).map_err(usage)?;
    let workspace = match &args.workspace {
        Some(w) => w.clone(),
        None => std::env::current_dir()
            .map_err(|e| usage(format!("cannot read the current directory: {e}")))?,
    };
    let canonical = super::workspace_trust::canonical_workspace(&workspace).map_err(usage)?;
    super::workspace_trust::check(&canonical, &home, args.trust_workspace).map_err(usage)?;
    let (limits, limit_requests) = requested_limits(&args.limit).map_err(usage)?;
    // Before any thread starts (the catalog's, the audit writer's, tokio's):
    // the process confines itself. Every workspace a client's roots choose
    // lies inside this one, so the ruleset never needs widening.
    let read = args.token_file.iter().cloned().collect();
    if let Some(warning) = super::self_confine::confine_self(&home, &workspace, &policy, read) {
        eprintln!("warden mcp: warning: {warning}");
    }
    crate::config::register_key_variables();
    crate::runtime::warm_up_wasi_io();
    let server = McpServer::open(McpOptions {
        home,
        policy,
        workspace,
        limits,
        limit_requests,
        non_interactive: args.non_interactive,
        list_denied: args.list_denied,
        parallel: args.parallel as usize,
        verbosity,
    })
    .map_err(|e| match e {
        McpError::Workspace { .. } | McpError::Address(_) => (Exit::Usage, e.to_string()),
        _ => (Exit::Failure, e.to_string()),
    })?;
    Ok(server)
}

async fn serve_http(
    server: Arc<McpServer>,
    args: &McpArgs,
    addr: &str,
) -> Result<(), mcp::McpError> {
    let addr = parse_addr(addr).map_err(mcp::McpError::Address)?;
    let token = match &args.token_file {
        Some(path) => read_token(path)?,
        None => new_token()?,
    };
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| mcp::McpError::Bind {
            addr: addr.to_string(),
            source,
        })?;
    let bound = listener.local_addr().unwrap_or(addr);
    errln!("warden mcp: serving MCP at http://{bound}/mcp");
    if !bound.ip().is_loopback() {
        errln!("warden mcp: warning: {bound} is reachable from other machines");
    }
    if args.token_file.is_none() {
        errln!("warden mcp: bearer token (shown once): {token}");
    }
    let options = HttpOptions {
        token,
        allowed_origins: args.allow_origin.clone(),
        max_message_bytes: args.max_message_bytes as usize,
        max_sessions: args.max_sessions.max(1),
        max_connections: args.max_connections.max(1),
    };
    mcp::serve_http(server, options, listener).await
}

/// `PORT` (on 127.0.0.1) or `HOST:PORT`.
fn parse_addr(text: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    text.parse::<SocketAddr>().map_err(|_| {
        format!("--http {text}: expected a port (e.g. 8848) or an address and port (e.g. 127.0.0.1:8848)")
    })
}

fn read_token(path: &Path) -> Result<String, mcp::McpError> {
    crate::config::check_private(path).map_err(|e| mcp::McpError::Token(e.to_string()))?;
    let text = std::fs::read_to_string(path)
        .map_err(|e| mcp::McpError::Token(format!("token file {}: {e}", path.display())))?;
    let token = text.lines().next().unwrap_or("").trim().to_string();
    if token.len() < 16 {
        return Err(mcp::McpError::Token(format!(
            "token file {}: the token must be at least 16 characters on its first line",
            path.display()
        )));
    }
    Ok(token)
}

/// 32 random bytes from the system, as hex.
fn new_token() -> Result<String, mcp::McpError> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| mcp::McpError::Token(format!("cannot make a token: {e}")))?;
    Ok(hex::encode(bytes))
}
