//! The mock's server: its shared [`State`] (tools, calls, faults), the `rmcp` handler that
//! answers `tools/list` and `tools/call` from it, and [`Served`], the thread that serves it over
//! streamable HTTP on 127.0.0.1 until the mock is dropped or dies.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use tokio::sync::Notify;

use super::calls::McpMockCall;
use super::tool::{Fault, MockTool, Reply, huge_text};

/// What the mock's handle and its server share.
pub(super) struct State {
    pub(super) name: String,
    tools: Mutex<Vec<MockTool>>,
    pub(super) calls: Mutex<Vec<McpMockCall>>,
    pub(super) tool_timeout: Mutex<Option<Duration>>,
    dies_after: Mutex<Option<usize>>,
    list_change: Mutex<Option<(String, MockTool)>>,
    died: Notify,
    dead: std::sync::atomic::AtomicBool,
}

impl State {
    pub(super) fn new(name: String) -> Self {
        Self {
            name,
            tools: Mutex::default(),
            calls: Mutex::default(),
            tool_timeout: Mutex::default(),
            dies_after: Mutex::default(),
            list_change: Mutex::default(),
            died: Notify::new(),
            dead: Default::default(),
        }
    }

    pub(super) fn add_tool(&self, tool: MockTool) {
        let mut tools = self.tools.lock().expect("mock lock");
        tools.retain(|t| t.name != tool.name);
        tools.push(tool);
    }

    pub(super) fn tool_names(&self) -> Vec<String> {
        let tools = self.tools.lock().expect("mock lock");
        tools.iter().map(|t| t.name.clone()).collect()
    }

    pub(super) fn set_dies_after(&self, calls: usize) {
        *self.dies_after.lock().expect("mock lock") = Some(calls);
    }

    pub(super) fn set_list_change(&self, after: String, tool: MockTool) {
        *self.list_change.lock().expect("mock lock") = Some((after, tool));
    }

    pub(super) fn died(&self) -> bool {
        self.dead.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Record a call as it arrives; returns its index.
    fn record(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> usize {
        let header = |name: &str| {
            let parts = context.extensions.get::<axum::http::request::Parts>()?;
            Some(parts.headers.get(name)?.to_str().ok()?.to_owned())
        };
        let at_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let mut calls = self.calls.lock().expect("mock lock");
        calls.push(McpMockCall {
            tool: request.name.to_string(),
            arguments: Value::Object(request.arguments.clone().unwrap_or_default()),
            at_ms,
            session: None,
            mcp_session: header("mcp-session-id"),
            fault: None,
            is_error: false,
            run: header(super::RUN_HEADER),
        });
        calls.len() - 1
    }

    fn note(&self, index: usize, fault: Option<String>, is_error: bool) {
        let mut calls = self.calls.lock().expect("mock lock");
        if let Some(call) = calls.get_mut(index) {
            call.fault = call.fault.take().or(fault);
            call.is_error = is_error;
        }
    }
}

/// The `rmcp` server handler of one MCP session: every session of the mock shares its state.
#[derive(Clone)]
struct MockServer {
    state: Arc<State>,
}

impl MockServer {
    /// Answer one call of `tool` with `args`: its fault, else its handler's reply.
    async fn answer(&self, tool: MockTool, args: Value, index: usize) -> Result<Reply, ErrorData> {
        let fault = tool.fault.clone();
        self.state
            .note(index, fault.as_ref().map(Fault::label), false);
        match fault {
            Some(Fault::Hang) => std::future::pending().await,
            Some(Fault::ProtocolError(message)) => Err(ErrorData::internal_error(message, None)),
            Some(Fault::Huge(bytes)) => Ok(Reply::text(huge_text(bytes))),
            Some(Fault::Delay(delay)) => {
                tokio::time::sleep(delay).await;
                Ok((tool.handler)(args).await)
            }
            None => Ok((tool.handler)(args).await),
        }
    }

    /// After a call of `tool`: the list change it triggers.
    async fn after_call(&self, tool: &str, context: &RequestContext<RoleServer>) {
        let change = {
            let mut change = self.state.list_change.lock().expect("mock lock");
            match change.as_ref() {
                Some((after, _)) if after == tool => change.take(),
                _ => None,
            }
        };
        if let Some((_, added)) = change {
            self.state.add_tool(added);
            let _ = context.peer.notify_tool_list_changed().await;
        }
    }
}

impl ServerHandler for MockServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self.state.tools.lock().expect("mock lock");
        let listed = tools
            .iter()
            .map(|t| Tool::new(t.name.clone(), t.description.clone(), t.schema.clone()))
            .collect();
        Ok(ListToolsResult::with_all_items(listed))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let index = self.state.record(&request, &context);
        let dies = *self.state.dies_after.lock().expect("mock lock");
        if dies.is_some_and(|answered| index >= answered) {
            // The server dies on this call: never answered, every connection closed.
            self.state.note(index, Some("died".to_owned()), false);
            self.state
                .dead
                .store(true, std::sync::atomic::Ordering::SeqCst);
            self.state.died.notify_one();
            return std::future::pending().await;
        }
        let tool = {
            let tools = self.state.tools.lock().expect("mock lock");
            tools.iter().find(|t| t.name == request.name).cloned()
        };
        let Some(tool) = tool else {
            self.state.note(index, None, true);
            let error = format!(
                "no tool named `{}` on mock `{}`",
                request.name, self.state.name
            );
            return Err(ErrorData::invalid_params(error, None));
        };
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        let reply = self.answer(tool, args, index).await;
        if let Ok(reply) = &reply {
            self.state.note(index, None, reply.is_error);
        }
        self.after_call(&request.name, &context).await;
        let reply = reply?;
        let content = vec![ContentBlock::text(reply.text)];
        let mut result = if reply.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        };
        result.structured_content = reply.structured;
        Ok(CallToolResponse::Complete(result))
    }
}

/// A running server: its URL, and the thread serving it, stopped and joined on drop.
pub(super) struct Served {
    pub(super) url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Served {
    /// Bind 127.0.0.1 on an ephemeral port and serve `state` on a thread of its own (a tokio
    /// runtime of its own, so the mock works from synchronous and asynchronous tests alike).
    pub(super) fn start(state: Arc<State>) -> std::io::Result<Self> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let url = format!("http://127.0.0.1:{}/mcp", listener.local_addr()?.port());
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name(format!("mcp-mock-{}", state.name))
            .enable_all()
            .build()?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(format!("mcp-mock-{}", state.name))
            .spawn(move || {
                runtime.block_on(serve(listener, state, stopped));
                runtime.shutdown_timeout(Duration::from_secs(2));
            })?;
        Ok(Self {
            url,
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

/// Serve until `stopped` fires (the mock was dropped) or the server dies.
async fn serve(
    listener: std::net::TcpListener,
    state: Arc<State>,
    stopped: tokio::sync::oneshot::Receiver<()>,
) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    let config = StreamableHttpServerConfig::default().with_sse_keep_alive(None);
    let sessions = config.cancellation_token.clone();
    let server = MockServer {
        state: state.clone(),
    };
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    tokio::select! {
        _ = axum::serve(listener, router) => {}
        _ = stopped => {}
        _ = state.died.notified() => {}
    }
    sessions.cancel();
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
