//! MCP server evidence: the status and tool count the runtime reported for each MCP server the
//! eval configured ([`McpServerState`]), read from the event log by [`mcp_servers`].
//!
//! Events read (camelCase as sent by runtime 1.0.102):
//! - `session.mcp_server_status_changed`: `serverName`, `status`, `error`;
//! - `session.mcp_servers_loaded`: `servers[] {name, status, error}`, the summary the runtime
//!   sends once every server it launched settled;
//! - `session.mcp_server_tools_loaded`: `serverName`, `toolCount`.
//!
//! Only the servers the eval configured are listed: the runtime's builtin `github-mcp-server`
//! (and any other server of its own) is not the eval's and is left out.
//!
//! The check before the prompt adds each connected server's tools as the server advertised
//! them, with the name the runtime gives the model ([`model_tool_name`]: runtime 1.0.102 names
//! a tool `<server>-<tool>` and cuts that name to [`MAX_TOOL_NAME`] characters), and a warning
//! for each cut name ([`cut_warning`]).
//!
//! "Connected" and a tool count are the runtime's words, not what the model got: a server whose
//! `tools` filter matches none of its tools (runtime 1.0.102 matches the filter against the
//! tool names the server lists, `lookup`, not `fixture-lookup`; `*` matches all; an empty filter
//! none), or that lists no tools, is reported connected all the same, and the model is offered
//! nothing from it. After the run, each connected server's `offered_tools` says which of its
//! tools the model requests carried ([`offered_names`], read from what the run's request proxy
//! forwarded), and [`gave_nothing`] says why a server gave the model no tool.

use github_copilot_sdk::session_events::{
    SessionMcpServerStatusChangedData, SessionMcpServerToolsLoadedData, SessionMcpServersLoadedData,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{RawEvent, SessionEventType as Kind, untyped};

/// The status of a configured server the runtime said nothing about.
pub const UNREPORTED: &str = "unreported";

/// One MCP server the eval configured, as the runtime last reported it. Also the JSON report's
/// entry of `tests[].runs[].mcp_servers[]`: `tool_count` and `error` are absent there when
/// `None`, `optional` when `false`, `tools` and `warnings` when empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct McpServerState {
    /// The server's name (the key given to `mcp_server(name, config)`).
    pub name: String,
    /// The last status the runtime reported: `connected`, `failed`, `needs-auth`, `pending`,
    /// `disabled`, `stopped` or `not_configured` (the runtime's words), or `unreported` when
    /// the runtime sent no status for it.
    pub status: String,
    /// How many tools the server listed (`session.mcp_server_tools_loaded.toolCount`); `None`
    /// when the runtime never loaded its tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_count: Option<u32>,
    /// The runtime's error text for the last failed status, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `true` for a server added with `optional_mcp_server`: the run goes on when it is not
    /// connected (only a required server stops the run before the prompt).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
    /// The server's tools, as the check before the prompt listed them (`session.mcp.listTools`),
    /// in the server's order; empty when the server was not connected or the check did not run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<McpTool>,
    /// What the check before the prompt warns about: each tool whose name the runtime cut
    /// ([`cut_warning`]); and, for an optional server, that it gave the model no tool
    /// ([`gave_nothing`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The model-side names of the server's tools that the model was offered: those any model
    /// request of the run carried (the main agent's or a subagent's), as the run's request
    /// proxy forwarded it ([`offered_names`]). Empty: the server gave the model nothing,
    /// however `connected` it is. `None` when the server was not connected or the run saw no
    /// model request (it stopped before the prompt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered_tools: Option<Vec<String>>,
    /// For an in-process mock (`mcp_mock`): every tool call the mock received from this run's
    /// session, as the server saw it (the server's end of the wire; the run's `tool_calls` are
    /// the runtime's end), in arrival order. `None` for a server that is not a mock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub received_calls: Option<Vec<crate::mcp::McpMockCall>>,
}

/// One tool of a connected MCP server (in JSON: `name`, `model_name`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct McpTool {
    /// The tool's name as the server advertised it.
    pub name: String,
    /// The name the runtime gives the model for it ([`model_tool_name`]); a call must use it.
    /// The name exists whether or not the model was offered the tool: the server's
    /// `offered_tools` says which were.
    pub model_name: String,
}

impl McpTool {
    /// The tool `name` of server `server`, with the name the model sees.
    pub fn new(server: &str, name: &str) -> Self {
        Self {
            name: name.to_owned(),
            model_name: model_tool_name(server, name),
        }
    }

    /// The full `<server>-<tool>` name, before the runtime's cut.
    pub fn full_name(&self, server: &str) -> String {
        format!("{server}-{}", self.name)
    }
}

pub use crate::customization::mcp_names::{MAX_TOOL_NAME, cut_warning, model_tool_name};

/// The warning when a mock's two ends disagree: the calls of its tools the runtime reported
/// (`tool_calls` named by one of the server's model names and not denied before they left the
/// runtime) against the calls the mock received ([`McpServerState::received_calls`]), per
/// tool. `None` when they agree or the server is not a mock.
pub fn received_mismatch(state: &McpServerState, tool_calls: &[super::ToolCall]) -> Option<String> {
    let received = state.received_calls.as_ref()?;
    let mut differences = Vec::new();
    for tool in &state.tools {
        let reported = tool_calls
            .iter()
            .filter(|c| c.denied.is_none())
            .filter(|c| c.runtime_name.as_deref().unwrap_or(&c.name) == tool.model_name)
            .count();
        let served = received.iter().filter(|c| c.tool == tool.name).count();
        if reported != served {
            differences.push(format!(
                "`{}`: the runtime reported {reported} call(s), the server received {served}",
                tool.model_name
            ));
        }
    }
    (!differences.is_empty()).then(|| {
        format!(
            "MCP mock `{}`: the two ends of the wire disagree: {}",
            state.name,
            differences.join("; ")
        )
    })
}

/// Mark the servers named in `optional` as optional.
pub fn mark_optional(states: &mut [McpServerState], optional: &[String]) {
    for state in states {
        state.optional = optional.contains(&state.name);
    }
}

/// Whether the runtime sent its `session.mcp_servers_loaded` summary, and each configured
/// server's last reported state, in the order of `configured`.
pub fn mcp_servers<'a>(
    events: impl IntoIterator<Item = &'a RawEvent>,
    configured: &[String],
) -> (Vec<McpServerState>, bool) {
    let mut states: Vec<McpServerState> = configured
        .iter()
        .map(|name| McpServerState {
            name: name.clone(),
            status: UNREPORTED.to_owned(),
            tool_count: None,
            error: None,
            optional: false,
            tools: Vec::new(),
            warnings: Vec::new(),
            offered_tools: None,
            received_calls: None,
        })
        .collect();
    let mut loaded = false;
    for event in events {
        match event.kind() {
            Kind::SessionMcpServerStatusChanged => {
                let changed = event.read::<SessionMcpServerStatusChangedData>();
                if !changed.lacks("status") {
                    let status = untyped::mcp_status(&changed.data.status, &event.data);
                    let data = changed.data;
                    update(&mut states, &data.server_name, status, data.error);
                }
            }
            Kind::SessionMcpServersLoaded => {
                loaded = true;
                let servers = event.read::<SessionMcpServersLoadedData>().data.servers;
                for (i, server) in servers.into_iter().enumerate() {
                    let sent = untyped::loaded_server(event, i);
                    let status = untyped::mcp_status(&server.status, sent);
                    update(&mut states, &server.name, status, server.error);
                }
            }
            Kind::SessionMcpServerToolsLoaded => {
                let loaded_tools = event.read::<SessionMcpServerToolsLoadedData>();
                let count = (!untyped::lacks_tool_count(&loaded_tools))
                    .then_some(loaded_tools.data.tool_count)
                    .and_then(|n| u64::try_from(n).ok());
                let name = loaded_tools.data.server_name;
                if let (Some(state), Some(count)) =
                    (states.iter_mut().find(|s| s.name == name), count)
                {
                    state.tool_count = Some(u32::try_from(count).unwrap_or(u32::MAX));
                }
            }
            _ => {}
        }
    }
    (states, loaded)
}

/// Set the status (and error) of the configured server `name`; a `None` status (none sent)
/// changes nothing.
fn update(
    states: &mut [McpServerState],
    name: &str,
    status: Option<String>,
    error: Option<String>,
) {
    if let Some(state) = states.iter_mut().find(|s| s.name == name)
        && let Some(status) = status
    {
        state.status = status;
        state.error = error;
    }
}

/// Whether the runtime has settled every configured server: each has a final status (not
/// `pending`, not unreported) and each connected one has loaded its tools; or the runtime sent
/// its `session.mcp_servers_loaded` summary (whatever it left unreported stays so).
pub fn settled(states: &[McpServerState], loaded: bool) -> bool {
    loaded
        || states.iter().all(|s| match s.status.as_str() {
            "pending" | UNREPORTED => false,
            "connected" => s.tool_count.is_some(),
            _ => true,
        })
}

/// The setup error for required servers that are not `connected`, naming each server and
/// its status (and the runtime's error text); `None` when every required one is connected (an
/// optional server may be in any state).
pub fn setup_error(states: &[McpServerState]) -> Option<String> {
    let bad: Vec<String> = states
        .iter()
        .filter(|s| !s.optional && s.status != "connected")
        .map(|s| match &s.error {
            Some(error) => format!("`{}` is {} ({error})", s.name, s.status),
            None => format!("`{}` is {}", s.name, s.status),
        })
        .collect();
    (!bad.is_empty()).then(|| {
        format!(
            "MCP server setup failed before the prompt was sent: {}",
            bad.join("; ")
        )
    })
}

/// The names among `offered` (what the run's model requests offered) that are tools of the
/// server of `state`: the model-side name of one of the tools it listed; when it listed none
/// (or its list could not be read), a name starting `<server>-` that no other server of
/// `servers` (the configured names) with a longer name claims. In `offered`'s order.
pub fn offered_names(
    state: &McpServerState,
    servers: &[String],
    offered: &[String],
) -> Vec<String> {
    let prefix = format!("{}-", state.name);
    offered
        .iter()
        .filter(|name| {
            if !state.tools.is_empty() {
                return state.tools.iter().any(|t| &t.model_name == *name);
            }
            name.starts_with(&prefix)
                && !servers.iter().any(|other| {
                    other.len() > state.name.len() && name.starts_with(&format!("{other}-"))
                })
        })
        .cloned()
        .collect()
}

/// Why the connected server of `state` gave the model no tool, when it did not (its
/// `offered_tools` is an empty list): its `tools` filter (`filter`, as configured) matched none
/// of the tools it listed, the filter is empty, or the server listed no tools; else the eval's
/// own tool settings left them out. `None` when the model was offered one of its tools, or
/// nothing is known (`offered_tools` is `None`).
pub fn gave_nothing(state: &McpServerState, filter: Option<&[String]>) -> Option<String> {
    if state.status != "connected" || !state.offered_tools.as_ref()?.is_empty() {
        return None;
    }
    let listed: Vec<String> = state
        .tools
        .iter()
        .map(|t| format!("`{}`", t.name))
        .collect();
    let why = match filter {
        Some([]) => "its `tools` filter is empty, which exposes no tool (leave `tools` unset, or give `[\"*\"]`, for all of them)".to_owned(),
        Some(filter) if state.tool_count != Some(0) => {
            let example = state
                .tools
                .first()
                .map(|t| format!(" (e.g. `{}`, not `{}`)", t.name, t.full_name(&state.name)))
                .unwrap_or_default();
            format!(
                "its `tools` filter {filter:?} matches none of the tools it lists ({}): the filter names a tool as the server lists it{example}, or `*` for all",
                if listed.is_empty() {
                    "their names could not be read".to_owned()
                } else {
                    listed.join(", ")
                },
            )
        }
        _ if state.tool_count == Some(0) => {
            "the server lists no tools (its `tools/list` answered an empty list)".to_owned()
        }
        _ => "the eval's own tool settings (`allowed_tools`, `excluded_tools`, `client_mode`) left all of its tools out".to_owned(),
    };
    Some(format!(
        "MCP server `{}` gave the model no tool: the runtime reported it connected{}, but no model request offered any of its tools; {why}",
        state.name,
        state
            .tool_count
            .map(|n| format!(" with {n} tool{}", if n == 1 { "" } else { "s" }))
            .unwrap_or_default()
    ))
}

/// Whether an event of `kind` reports on the session's MCP servers (`session.mcp_*`: their
/// loading, a server's status, its tools, its removal or reconnection), the events the MCP check
/// before the prompt waits for.
pub fn is_server_event(kind: &Kind) -> bool {
    matches!(
        kind,
        Kind::SessionMcpServersLoaded
            | Kind::SessionMcpServerStatusChanged
            | Kind::SessionMcpServerToolsLoaded
            | Kind::SessionMcpServerRemoved
            | Kind::SessionMcpServerNeedsReconnect
    )
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn event(event_type: &str, data: Value) -> RawEvent {
        RawEvent {
            event_type: event_type.to_owned(),
            id: String::new(),
            timestamp: String::new(),
            agent_id: None,
            ephemeral: true,
            data,
        }
    }

    #[test]
    fn the_last_status_and_tool_count_of_configured_servers_only() {
        let configured = ["fixture".to_owned(), "other".to_owned()];
        let mut log = vec![
            event(
                "session.mcp_server_status_changed",
                json!({"serverName": "fixture", "status": "pending"}),
            ),
            event(
                "session.mcp_server_status_changed",
                json!({"serverName": "github-mcp-server", "status": "failed", "error": "404"}),
            ),
        ];
        let (states, loaded) = mcp_servers(&log, &configured);
        assert!(!loaded);
        assert_eq!(states[0].status, "pending");
        assert_eq!(states[1].status, UNREPORTED);
        assert!(!settled(&states, loaded));

        log.push(event(
            "session.mcp_server_status_changed",
            json!({"serverName": "fixture", "status": "connected"}),
        ));
        log.push(event(
            "session.mcp_server_status_changed",
            json!({"serverName": "other", "status": "failed", "error": "exit 3"}),
        ));
        let (states, loaded) = mcp_servers(&log, &configured);
        assert!(!settled(&states, loaded), "connected, tools not loaded yet");
        log.push(event(
            "session.mcp_server_tools_loaded",
            json!({"serverName": "fixture", "toolCount": 2}),
        ));
        let (states, loaded) = mcp_servers(&log, &configured);
        assert!(settled(&states, loaded));
        assert_eq!(states.len(), 2, "the builtin server is not listed");
        assert_eq!(states[0].tool_count, Some(2));
        assert_eq!(states[1].error.as_deref(), Some("exit 3"));
        assert_eq!(
            setup_error(&states).unwrap(),
            "MCP server setup failed before the prompt was sent: `other` is failed (exit 3)"
        );
    }

    #[test]
    fn the_summary_settles_and_names_what_it_lists() {
        let configured = ["a".to_owned(), "b".to_owned()];
        let log = [event(
            "session.mcp_servers_loaded",
            json!({"servers": [{"name": "a", "status": "not_configured"}]}),
        )];
        let (states, loaded) = mcp_servers(&log, &configured);
        assert!(loaded && settled(&states, loaded));
        assert_eq!(
            setup_error(&states).unwrap(),
            "MCP server setup failed before the prompt was sent: `a` is not_configured; `b` is unreported"
        );
        let connected = [McpServerState {
            name: "a".into(),
            status: "connected".into(),
            tool_count: Some(1),
            error: None,
            optional: false,
            tools: Vec::new(),
            warnings: Vec::new(),
            offered_tools: None,
            received_calls: None,
        }];
        assert_eq!(setup_error(&connected), None);
        let (mut states, _) = mcp_servers(&log, &configured);
        mark_optional(&mut states, &["b".to_owned()]);
        assert_eq!(
            setup_error(&states).unwrap(),
            "MCP server setup failed before the prompt was sent: `a` is not_configured",
            "an optional server that is not connected stops nothing"
        );
        mark_optional(&mut states, &["a".to_owned(), "b".to_owned()]);
        assert_eq!(setup_error(&states), None);
    }

    fn connected(name: &str, tools: &[&str], offered: Option<&[&str]>) -> McpServerState {
        McpServerState {
            name: name.into(),
            status: "connected".into(),
            tool_count: Some(u32::try_from(tools.len()).unwrap()),
            error: None,
            optional: false,
            tools: tools.iter().map(|t| McpTool::new(name, t)).collect(),
            warnings: Vec::new(),
            offered_tools: offered.map(|o| o.iter().map(|t| t.to_string()).collect()),
            received_calls: None,
        }
    }

    #[test]
    fn a_mock_whose_calls_differ_from_the_runtimes_is_a_warning_naming_both_counts() {
        let received = |tool: &str| {
            serde_json::from_value::<crate::mcp::McpMockCall>(
                json!({"tool": tool, "arguments": {}, "at_ms": 0}),
            )
            .unwrap()
        };
        let call = |name: &str| super::super::ToolCall::started("1", name, json!({}), None);
        let mut state = connected("m", &["a", "b"], None);
        // Not a mock: nothing to compare.
        assert_eq!(received_mismatch(&state, &[call("m-a")]), None);
        state.received_calls = Some(vec![received("a")]);
        assert_eq!(
            received_mismatch(&state, &[call("m-a")]),
            None,
            "they agree"
        );
        let warning = received_mismatch(&state, &[call("m-a"), call("m-b")]).unwrap();
        assert!(
            warning.contains("`m-b`: the runtime reported 1 call(s), the server received 0"),
            "{warning}"
        );
        assert!(!warning.contains("`m-a`"), "{warning}");
        // A call the run denied never left the runtime.
        let mut denied = call("m-b");
        denied.denied = Some(crate::evidence::denial::Denial::budget(0, "m-b"));
        assert_eq!(received_mismatch(&state, &[call("m-a"), denied]), None);
    }

    #[test]
    fn the_offered_names_are_the_servers_tools_the_requests_carried() {
        let offered: Vec<String> = ["view", "fixture-lookup", "fixture-x-other", "web_fetch"]
            .map(str::to_owned)
            .to_vec();
        let servers = ["fixture".to_owned(), "fixture-x".to_owned()];
        // By its listed tools.
        let state = connected("fixture", &["lookup", "missing"], None);
        assert_eq!(
            offered_names(&state, &servers, &offered),
            ["fixture-lookup"]
        );
        // No list: by its prefix, less what a longer server name claims.
        let state = connected("fixture", &[], None);
        assert_eq!(
            offered_names(&state, &servers, &offered),
            ["fixture-lookup"]
        );
        let state = connected("fixture-x", &[], None);
        assert_eq!(
            offered_names(&state, &servers, &offered),
            ["fixture-x-other"]
        );
        let state = connected("web", &[], None);
        assert!(offered_names(&state, &servers, &offered).is_empty());
    }

    #[test]
    fn a_connected_server_that_gave_nothing_says_why() {
        let filter = ["nomatch".to_owned()];
        let state = connected("fixture", &["lookup"], Some(&[]));
        assert_eq!(
            gave_nothing(&state, Some(&filter)).unwrap(),
            "MCP server `fixture` gave the model no tool: the runtime reported it connected with 1 tool, but no model request offered any of its tools; its `tools` filter [\"nomatch\"] matches none of the tools it lists (`lookup`): the filter names a tool as the server lists it (e.g. `lookup`, not `fixture-lookup`), or `*` for all"
        );
        assert!(
            gave_nothing(&state, Some(&[])).unwrap().ends_with(
                "its `tools` filter is empty, which exposes no tool (leave `tools` unset, or give `[\"*\"]`, for all of them)"
            )
        );
        let empty = connected("fixture", &[], Some(&[]));
        assert!(
            gave_nothing(&empty, None)
                .unwrap()
                .ends_with("connected with 0 tools, but no model request offered any of its tools; the server lists no tools (its `tools/list` answered an empty list)")
        );
        assert!(
            gave_nothing(&state, None)
                .unwrap()
                .contains("the eval's own tool settings")
        );
        // Offered something, nothing known, or not connected: nothing to say.
        let offered = connected("fixture", &["lookup"], Some(&["fixture-lookup"]));
        assert_eq!(gave_nothing(&offered, Some(&filter)), None);
        let unknown = connected("fixture", &["lookup"], None);
        assert_eq!(gave_nothing(&unknown, Some(&filter)), None);
        let mut failed = connected("fixture", &[], Some(&[]));
        failed.status = "failed".into();
        assert_eq!(gave_nothing(&failed, None), None);
    }

    #[test]
    fn a_tool_name_over_64_characters_is_cut_with_a_warning() {
        assert_eq!(model_tool_name("fixture", "lookup"), "fixture-lookup");
        assert_eq!(cut_warning("fixture", "lookup"), None);
        let tool = "t".repeat(56);
        assert_eq!(model_tool_name("fixture", &tool).chars().count(), 64);
        assert_eq!(cut_warning("fixture", &tool), None, "exactly 64 fits");
        let tool = "t".repeat(57);
        let seen = model_tool_name("fixture", &tool);
        assert_eq!(seen, format!("fixture-{}", "t".repeat(56)));
        let warning = cut_warning("fixture", &tool).unwrap();
        assert!(
            warning.contains(&format!("the model sees it as `{seen}`")),
            "{warning}"
        );
        assert!(warning.contains("has 65 characters"), "{warning}");
    }
}
