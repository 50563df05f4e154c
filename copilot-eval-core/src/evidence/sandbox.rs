//! What a run's sandbox was (docs/sandbox.md): confined, off, or unsandboxed and why; what the
//! domain let the session reach; and the refusals the tool output shows.
//!
//! Landlock refuses silently: the kernel answers `EACCES` ("Permission denied") and the process
//! reports it as it reports any other denial, so a refusal is known by the text of the tool's
//! own result. [`refusals`] reads those texts; the tool call's result stays the runtime's own.

use super::events::ToolCall;

/// What the run's sandbox was.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SandboxState {
    /// The runtime and everything it started ran under a Landlock domain.
    Confined,
    /// The eval (`sandbox = false`) or the runner (`--no-sandbox`) turned it off.
    Off,
    /// Asked for, but the kernel (or the platform) could not confine it; `why` says why.
    Unsandboxed,
}

/// The run record's `sandbox`: what confined the session's runtime and everything it started.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct SandboxRecord {
    /// Confined, off, or unsandboxed.
    pub state: SandboxState,
    /// The mode the run was given (`on`, `off`, `required`): the eval's, under the runner's
    /// `--no-sandbox` / `--sandbox required`.
    pub mode: crate::eval::SandboxMode,
    /// Why the run was not confined (only for `unsandboxed`), e.g. "the kernel has no
    /// Landlock".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The Landlock ABI version the kernel offered (`None` when it has none or was not asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abi: Option<u32>,
    /// Folders (and files) the domain let the session read, beside those it may write.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<String>,
    /// Folders (and files) the domain let the session write (and read).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<String>,
    /// TCP ports the domain let the session connect to (on any address).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connect: Vec<u16>,
    /// Tool calls of a confined run whose output shows a refusal, in the order of the calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refusals: Vec<SandboxRefusal>,
}

/// A tool call whose output shows that the sandbox refused it something.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct SandboxRefusal {
    /// The tool call's id (`tool_calls[].id`).
    pub tool_call_id: String,
    /// The tool's name.
    pub tool: String,
    /// The first line of the call's output that shows the refusal, as the tool wrote it.
    pub line: String,
}

/// What a refused access looks like in a tool's output: the text of `EACCES` (`strerror`,
/// Node's code) and of `EPERM`, which Landlock returns for some refused operations (a link
/// or rename across rules).
const REFUSAL_TEXTS: [&str; 4] = [
    "permission denied",
    "eacces",
    "operation not permitted",
    "eperm",
];

/// The tool calls among `calls` whose result or error shows a refusal, each with its first such
/// line. Only meaningful for a confined run: an unconfined one can be denied by file modes too.
pub fn refusals(calls: &[ToolCall]) -> Vec<SandboxRefusal> {
    calls
        .iter()
        .filter_map(|call| {
            let line = [call.result.as_deref(), call.error.as_deref()]
                .into_iter()
                .flatten()
                .flat_map(str::lines)
                .find(|line| {
                    let lower = line.to_lowercase();
                    REFUSAL_TEXTS.iter().any(|text| lower.contains(text))
                })?;
            Some(SandboxRefusal {
                tool_call_id: call.id.clone(),
                tool: call.name.clone(),
                line: line.trim().to_owned(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str, result: Option<&str>, error: Option<&str>) -> ToolCall {
        ToolCall {
            result: result.map(str::to_owned),
            error: error.map(str::to_owned),
            completed: true,
            ..ToolCall::started(id.to_owned(), "bash", serde_json::json!({}), None)
        }
    }

    #[test]
    fn a_refusal_is_the_first_line_that_shows_one_in_the_result_or_the_error() {
        let calls = [
            call("a", Some("ok\nall fine"), None),
            call(
                "b",
                Some("start\ncat: /root/.ssh/id: Permission denied\nbash: x: Permission denied"),
                None,
            ),
            call(
                "c",
                None,
                Some("Error: EACCES: permission denied, open '/x'"),
            ),
            call(
                "d",
                Some("touch: cannot touch '/y': Operation not permitted"),
                None,
            ),
        ];
        let found = refusals(&calls);
        let ids: Vec<&str> = found.iter().map(|r| r.tool_call_id.as_str()).collect();
        assert_eq!(ids, ["b", "c", "d"]);
        assert_eq!(found[0].line, "cat: /root/.ssh/id: Permission denied");
        assert_eq!(found[0].tool, "bash");
    }
}
