//! One MCP session: the handshake (who the client is, whether it can be
//! asked), `tools/list` and `tools/call`.
//!
//! Invariants: a call before the client introduced itself is refused; an
//! unknown tool is a JSON-RPC error (after its audit record), every other
//! outcome a tool result; only the handshake versions are offered, since
//! the client's `initialize` names the caller every record carries.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, InitializeRequestParams, InitializeResult, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{RoleServer, ServerHandler};

use super::approve::McpApprover;
use super::call::{self, Caller};
use super::roots::Roots;
use super::server::McpServer;
use super::tools;
use crate::approval::Approvals;
use crate::pipeline::Stage;
use crate::protocol::{ErrorKind, ToolOutcome};
use crate::runtime::InteractionParty;

/// The longest client name or version kept for the caller.
const MAX_CLIENT_FIELD: usize = 64;

/// A session's handler (one per stdio process, one per HTTP session).
pub(super) struct McpSession {
    server: Arc<McpServer>,
    client: OnceLock<Client>,
    roots: Roots,
}

/// What the client's `initialize` told us.
struct Client {
    caller: Caller,
    /// No one can answer an ask in this session.
    asks_refused: bool,
}

impl McpSession {
    pub(super) fn new(server: Arc<McpServer>) -> McpSession {
        let roots = Roots::new(server.options.verbosity);
        McpSession {
            server,
            client: OnceLock::new(),
            roots,
        }
    }

    fn meet(&self, request: &InitializeRequestParams, ctx: &RequestContext<RoleServer>) -> Client {
        let field = |s: &str| {
            let s = crate::base::terminal_line(s);
            crate::base::cut_to(&s, MAX_CLIENT_FIELD)
        };
        let info = &request.client_info;
        let name = format!("mcp:{}/{}", field(&info.name), field(&info.version));
        let elicits = request.capabilities.elicitation.as_ref().is_some_and(|e| {
            // A client naming neither mode offers forms (2025-06-18).
            e.form.is_some() || e.url.is_none()
        });
        let approver = match (self.server.options.non_interactive, elicits) {
            (true, _) => McpApprover::Nobody {
                why: "prompts are off (warden mcp --non-interactive)".into(),
            },
            (false, false) => McpApprover::Nobody {
                why: format!(
                    "the MCP client ({}) cannot be asked: it does not offer elicitation",
                    field(&info.name)
                ),
            },
            (false, true) => McpApprover::Client {
                peer: ctx.peer.clone(),
                runtime: tokio::runtime::Handle::current(),
            },
        };
        let asks_refused = matches!(approver, McpApprover::Nobody { .. });
        let approver = Arc::new(approver);
        Client {
            caller: Caller {
                name,
                approvals: Arc::new(Approvals::new(approver.clone())),
                interaction: InteractionParty {
                    user: approver,
                    home: Some(self.server.options.home.clone()),
                },
            },
            asks_refused,
        }
    }
}

impl ServerHandler for McpSession {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        InitializeResult::new(capabilities)
            .with_server_info(Implementation::new("warden", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Warden runs each tool in a WebAssembly sandbox under a policy. Paths are \
                 relative to the workspace. A denial is final: do not repeat the same call; \
                 adapt or explain.",
            )
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(
            &ProtocolVersion::LATEST_WITH_INITIALIZE,
        ))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        if self.client.set(self.meet(&request, &ctx)).is_err() {
            return Err(ErrorData::invalid_request(
                "this session is already initialized",
                None,
            ));
        }
        ctx.peer.set_peer_info(request.clone());
        self.server.register(ctx.peer.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let client = self.client.get().ok_or_else(not_initialized)?;
        let catalog = self.server.catalog();
        Ok(ListToolsResult::with_all_items(tools::listed(
            &catalog,
            &self.server.options.policy,
            client.asks_refused,
            self.server.options.list_denied,
        )))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let client = self.client.get().ok_or_else(not_initialized)?;
        let input = serde_json::Value::Object(request.arguments.unwrap_or_default()).to_string();
        // No call runs unless its record can be written.
        let room = input.len() as u64 + crate::audit::RECORD_ROOM;
        if let Err(e) = self.server.audit.reserve(room) {
            let message = format!("{e}; the call was not run: Warden runs no tool it cannot audit");
            return Ok(CallToolResult::error(vec![ContentBlock::text(message)]).into());
        }
        let workspace = self
            .roots
            .workspace(&ctx.peer, &self.server.workspace)
            .await;
        let result = call::run(
            &self.server,
            &client.caller,
            &request.name,
            input,
            workspace,
            &ctx,
        )
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        match (&result.outcome, result.stage) {
            (ToolOutcome::Error(e), Stage::Rejected) if e.kind == ErrorKind::UnknownTool => {
                Err(ErrorData::invalid_params(e.message.clone(), None))
            }
            (outcome, _) => Ok(tools::result(outcome).into()),
        }
    }

    async fn on_roots_list_changed(&self, _ctx: NotificationContext<RoleServer>) {
        self.roots.changed().await;
    }
}

fn not_initialized() -> ErrorData {
    ErrorData::invalid_request(
        "the session is not initialized: send `initialize` first",
        None,
    )
}
