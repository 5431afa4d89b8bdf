//! Streamable HTTP: `rmcp`'s transport behind our own accept loop, which
//! bounds connections and puts every request through the [`Guard`].
//!
//! Invariants: at most `max_connections` connections are served at once
//! (one more is answered 503 and closed); a connection must send its
//! headers within [`HEADER_TIMEOUT`]; the `Host` header must name the
//! bound address (loopback names for a loopback bind), and sessions are
//! bounded and expire when idle.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http::{Request, StatusCode};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::Value;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tower_service::Service;

use super::handler::McpSession;
use super::http_guard::{Body, Guard, refuse};
use super::server::McpServer;
use super::stdio::stop_signal;
use super::{McpError, watch};

/// How long a connection may take to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long calls may take to end once the server stops.
const DRAIN: Duration = Duration::from_secs(10);

/// How the HTTP server is bounded and who may use it.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The bearer token every request must carry.
    pub token: String,
    /// Browser origins allowed besides the server's own loopback origins.
    pub allowed_origins: Vec<String>,
    pub max_message_bytes: usize,
    pub max_sessions: usize,
    pub max_connections: usize,
}

/// Serve MCP at `/mcp` on `listener` until SIGINT or SIGTERM.
pub async fn serve_http(
    server: Arc<McpServer>,
    options: HttpOptions,
    listener: TcpListener,
) -> Result<(), McpError> {
    let addr = listener.local_addr().map_err(|source| McpError::Bind {
        addr: "the listener".into(),
        source,
    })?;
    let _watch = watch::spawn(server.clone());
    let sessions = Arc::new(LocalSessionManager::default());
    let config = hosts(
        StreamableHttpServerConfig::default()
            .with_max_request_body_bytes(options.max_message_bytes),
        addr,
    );
    let stop_sessions = config.cancellation_token.clone();
    let mcp = StreamableHttpService::new(
        {
            let server = server.clone();
            move || Ok(McpSession::new(server.clone()))
        },
        sessions.clone(),
        config,
    );
    let guard = Arc::new(Guard {
        token: options.token.clone(),
        origins: origins(addr, &options.allowed_origins),
        max_body: options.max_message_bytes,
        max_sessions: options.max_sessions,
        sessions,
    });
    let connections = Arc::new(Semaphore::new(options.max_connections.max(1)));
    let stop = stop_signal();
    let mut stop = std::pin::pin!(stop);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    eprintln!("warden mcp: accepting a connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut stop => break,
        };
        match connections.clone().try_acquire_owned() {
            Ok(permit) => {
                let (mcp, guard) = (mcp.clone(), guard.clone());
                tokio::spawn(async move {
                    serve_connection(stream, mcp, guard).await;
                    drop(permit);
                });
            }
            Err(_) => {
                tokio::spawn(refuse_connection(stream, options.max_connections));
            }
        }
    }
    stop_sessions.cancel();
    if let Err(e) = server.finish(DRAIN).await {
        eprintln!("warden mcp: warning: {e}");
    }
    Ok(())
}

/// `config` accepting the `Host` names that reach `addr`.
fn hosts(config: StreamableHttpServerConfig, addr: SocketAddr) -> StreamableHttpServerConfig {
    let ip = addr.ip();
    if ip.is_unspecified() {
        // Bound to every address: any name may reach it; the token and the
        // Origin check still apply.
        return config.disable_allowed_hosts();
    }
    let mut names = vec!["localhost".to_string(), "127.0.0.1".into(), "::1".into()];
    if !ip.is_loopback() {
        names.push(ip.to_string());
    }
    config.with_allowed_hosts(names)
}

/// The server's own origins on `addr`'s port, and the extra ones allowed.
fn origins(addr: SocketAddr, extra: &[String]) -> Vec<String> {
    let port = addr.port();
    let mut out = Vec::new();
    for scheme in ["http", "https"] {
        for host in ["localhost", "127.0.0.1", "[::1]"] {
            out.push(format!("{scheme}://{host}:{port}"));
        }
    }
    out.extend(
        extra
            .iter()
            .map(|o| o.trim_end_matches('/').to_ascii_lowercase()),
    );
    out
}

type Mcp = StreamableHttpService<McpSession, LocalSessionManager>;

async fn serve_connection(stream: TcpStream, mcp: Mcp, guard: Arc<Guard>) {
    let service = service_fn(move |req: Request<Incoming>| {
        let (mut mcp, guard) = (mcp.clone(), guard.clone());
        async move {
            match guard.check(req).await {
                Ok(req) => mcp.call(req).await,
                Err(refusal) => Ok(refusal),
            }
        }
    });
    let served = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(TokioIo::new(stream), service)
        .await;
    if let Err(e) = served
        && !e.is_incomplete_message()
    {
        eprintln!("warden mcp: connection ended with an error: {e}");
    }
}

/// Answer one request on a connection over the limit with 503, and close it.
async fn refuse_connection(stream: TcpStream, limit: usize) {
    let service = service_fn(move |_req: Request<Incoming>| async move {
        let refusal: http::Response<Body> = refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            &Value::Null,
            &format!("too many connections (the limit is {limit}, --max-connections); retry later"),
        );
        Ok::<_, std::convert::Infallible>(refusal)
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .keep_alive(false)
        .serve_connection(TokioIo::new(stream), service)
        .await;
}
