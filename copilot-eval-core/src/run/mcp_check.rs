//! The MCP check before the prompt ([`check_mcp`]): every MCP server the eval configured, as
//! the runtime settled it, with its tools and the names the model will see; the setup error for
//! a required server that is not connected; and the error when the eval's timeout elapses while
//! the runtime is still starting a server ([`mcp_timeout_error`]); and the run's tag on its
//! requests to each MCP mock of the eval ([`tag_mock_requests`]).

use std::sync::Mutex;

use github_copilot_sdk::session::Session;
use tokio::sync::watch;

use super::state::{Progress, RunState};
use crate::evidence::{LoggedEvent, mcp};

/// The MCP check before the prompt. The runtime starts MCP servers lazily, so first ask it
/// for its servers (`session.mcp.list`, which starts them and waits for them); then wait on
/// `session.mcp_*` events for any required server it still reported `pending` (an optional
/// one still starting is recorded `pending`, not waited for); each connected server is asked
/// for its tools (`session.mcp.listTools`): their names as the server advertised them, the
/// names the model will see, a warning for each name the runtime cuts (also logged), and the
/// tool count when the runtime did not announce it (`session.mcp_server_tools_loaded`).
/// Returns each configured server's state and the setup error for the required ones not
/// connected. Nothing to do when the eval configured no server. Bounded by the eval's timeout
/// around the whole run: when it elapses here (`RunState::mcp_checking`), the run ends as
/// `mcp_setup_error` naming the servers still starting ([`mcp_timeout_error`]).
pub(super) async fn check_mcp(
    session: &Session,
    configured: &[String],
    optional: &[String],
    log: &Mutex<Vec<LoggedEvent>>,
    mut progress: watch::Receiver<Progress>,
) -> (Vec<mcp::McpServerState>, Option<String>) {
    if configured.is_empty() {
        return (Vec::new(), None);
    }
    let rpc = session.rpc();
    let listed = match rpc.mcp().list().await {
        Ok(listed) => listed,
        Err(e) => {
            let error = format!(
                "MCP server setup failed before the prompt was sent: asking the runtime for its MCP servers (session.mcp.list) failed: {e}"
            );
            return (Vec::new(), Some(error));
        }
    };
    let listed_state = |name: &str| {
        listed.servers.iter().find(|s| s.name == name).map(|s| {
            let status = serde_json::to_value(&s.status)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_else(|| format!("{:?}", s.status));
            (status, s.error.clone())
        })
    };
    let mut states = loop {
        progress.borrow_and_update();
        let (mut states, _) = {
            let log = log.lock().expect("log lock");
            mcp::mcp_servers(log.iter().map(|l| &l.event), configured)
        };
        mcp::mark_optional(&mut states, optional);
        // What the events left unreported, the list answer says.
        for state in states.iter_mut().filter(|s| s.status == mcp::UNREPORTED) {
            if let Some((status, error)) = listed_state(&state.name) {
                state.status = status;
                state.error = error;
            }
        }
        if !states.iter().any(|s| !s.optional && s.status == "pending") {
            break states;
        }
        if progress.changed().await.is_err() {
            break states;
        }
    };
    for state in states.iter_mut().filter(|s| s.status == "connected") {
        let request = github_copilot_sdk::rpc::McpListToolsRequest {
            server_name: state.name.clone(),
        };
        let Ok(tools) = rpc.mcp().list_tools(request).await else {
            continue;
        };
        if state.tool_count.is_none() {
            state.tool_count = Some(u32::try_from(tools.tools.len()).unwrap_or(u32::MAX));
        }
        for tool in &tools.tools {
            state.tools.push(mcp::McpTool::new(&state.name, &tool.name));
            if let Some(warning) = mcp::cut_warning(&state.name, &tool.name) {
                tracing::warn!("{warning}");
                state.warnings.push(warning);
            }
        }
    }
    let error = mcp::setup_error(&states);
    (states, error)
}

/// The setup error when the eval's timeout elapsed during the MCP check: each required server
/// the runtime had not settled (still `pending`, or never reported), by name.
pub(super) fn mcp_timeout_error(run: &RunState, timeout_s: f64) -> String {
    let (mut states, _) = {
        let log = run.log.lock().expect("log lock");
        mcp::mcp_servers(log.iter().map(|l| &l.event), &run.mcp_configured)
    };
    mcp::mark_optional(&mut states, &run.mcp_optional);
    let waiting: Vec<String> = states
        .iter()
        .filter(|s| !s.optional && (s.status == "pending" || s.status == mcp::UNREPORTED))
        .map(|s| format!("`{}` is {}", s.name, s.status))
        .collect();
    format!(
        "MCP server setup did not finish within the eval's timeout_s ({timeout_s}s), so the prompt was never sent: {} (the runtime was still starting it: a stdio server must answer `initialize`)",
        if waiting.is_empty() {
            "no server was reported pending".to_owned()
        } else {
            waiting.join("; ")
        }
    )
}

/// Add the run's tag ([`crate::mcp::RUN_HEADER`]) to the HTTP headers of each MCP mock the
/// eval added, so each mock files the calls of this run's session under it.
pub(super) fn tag_mock_requests(
    config: &mut github_copilot_sdk::SessionConfig,
    eval: &crate::CopilotEval,
    tag: &str,
) {
    let Some(servers) = config.mcp_servers.as_mut() else {
        return;
    };
    for mock in &eval.mcp_mocks {
        if let Some(github_copilot_sdk::McpServerConfig::Http(http)) = servers.get_mut(mock.name())
        {
            http.headers
                .insert(crate::mcp::RUN_HEADER.to_owned(), tag.to_owned());
        }
    }
}
