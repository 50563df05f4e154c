//! The names runtime 1.0.102 gives MCP tools: `<server>-<tool>` cut to [`MAX_TOOL_NAME`]
//! characters ([`model_tool_name`]), and the warning for a cut name ([`cut_warning`]), used by
//! the agent loader (`mcp-tool-name-cut`) and the check before the prompt
//! ([`crate::evidence::mcp`]).

/// The longest tool name the runtime gives a model (runtime 1.0.102), in characters.
pub const MAX_TOOL_NAME: usize = 64;

/// The name runtime 1.0.102 gives the model for tool `tool` of MCP server `server`:
/// `<server>-<tool>`, cut to its first [`MAX_TOOL_NAME`] characters. A model (or a script)
/// that calls the full name when it is longer gets "Tool '...' does not exist".
pub fn model_tool_name(server: &str, tool: &str) -> String {
    format!("{server}-{tool}")
        .chars()
        .take(MAX_TOOL_NAME)
        .collect()
}

/// The warning for a tool whose full name the runtime cuts, naming the name the model will see;
/// `None` when the full name fits.
pub fn cut_warning(server: &str, tool: &str) -> Option<String> {
    let full = format!("{server}-{tool}");
    let seen = model_tool_name(server, tool);
    (seen != full).then(|| {
        format!(
            "MCP tool `{tool}` of server `{server}`: its full name `{full}` has {} characters, over the runtime's {MAX_TOOL_NAME}; the model sees it as `{seen}`, and a call with the full name fails \"Tool ... does not exist\" (shorten the server's name or the tool's)",
            full.chars().count()
        )
    })
}
