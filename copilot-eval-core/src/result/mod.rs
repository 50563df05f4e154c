//! The result of one run: [`CopilotResult`], built from the live SDK event stream.
//!
//! Check `success`, `stop_reason`, `error`, `capture_errors` and `evidence_complete` before
//! reading the trace; then verify the task's real output independently (files on disk, state
//! your tools observed). A file's existence or the model's claim of success is not verification.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::evidence::mcp::McpServerState;
use crate::evidence::skills::{SkillDiscovery, SkillInvocation};
use crate::evidence::subagents::{SubagentInvocation, SubagentStatus};
pub use crate::evidence::{Denial, RawEvent, Role, ToolCall, Turn, Usage};
pub use json::{PromptOptionsRecord, PromptsRecord, TurnRecord};
pub use stop::{StopClass, StopReason};

pub mod json;
pub mod replay;
mod stop;

/// Phase timings of one run, in milliseconds (host monotonic clock). Also the JSON report's
/// `tests[].runs[].timings`: there `runtime_unpack_ms` is absent when `None`, and
/// `runtime_startup` is not written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Timings {
    /// The runtime's first-start unpack into the shared cache, done before the eval's clock
    /// starts (not part of `timeout_s` or `duration_ms`): `None` when the runtime was already
    /// unpacked ([`crate::runtime::unpack::warm`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_unpack_ms: Option<u64>,
    /// `Client::start`: spawn the runtime and complete the protocol handshake.
    pub runtime_start_ms: Option<u64>,
    /// The runtime's own startup phases as the SDK reports them (`StartupTimings`). Not in the
    /// JSON report (it keeps `runtime_start_ms`, the start as a whole): `None` when read back.
    #[serde(skip)]
    pub runtime_startup: Option<RuntimeStartup>,
    /// Session creation (`session.create`).
    pub create_session_ms: Option<u64>,
    /// From sending the prompt to `session.idle` (or the stop).
    pub turns_ms: Option<u64>,
    /// Cleanup after the run: abort, disconnect, runtime stop and leftover-process check.
    pub cleanup_ms: u64,
}

/// The SDK's startup phases of the runtime process, ms.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuntimeStartup {
    /// Total startup.
    pub total_ms: u64,
    /// Resolving the executable.
    pub program_resolve_ms: Option<u64>,
    /// Spawning the process.
    pub process_spawn_ms: Option<u64>,
    /// Setting up the stdio transport.
    pub transport_setup_ms: u64,
    /// The protocol-version handshake.
    pub handshake_ms: u64,
}

/// Everything one run observed.
///
/// Serialized, it is the run record of the JSON results (`tests[].runs[]`, with what the runner
/// adds: [`RunRecord`](crate::report::RunRecord)), and the schema is generated from it: the serde
/// attributes below say what the record renames (`request_audit` is `audit`), leaves out (the
/// raw events, the runtime's path and pid, what only the engine needs) and derives (the
/// prompts' texts and options, each turn's prompt number: [`json`]). A field added here is
/// written in the JSON and its schema, read back by `merge`, and shown on the HTML page once
/// its template names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CopilotResult {
    /// The eval's name (`name` key of the attribute, else the test function's name).
    pub eval_name: String,
    /// The model the eval requested (`None`: the runtime's default).
    pub model_requested: Option<String>,
    /// The model that served the last model call (`assistant.usage.model`), else the session's
    /// selected model (`session.start` / `session.model_change`).
    pub model_used: Option<String>,
    /// `true` when the run ended with `stop_reason == completed` and no error.
    pub success: bool,
    /// Why the run ended ([`StopReason::as_str`]), e.g. `completed`, `timeout`,
    /// `execution_error` (the schema lists every value; docs/budgets-guards-stops.md says when
    /// each is given).
    pub stop_reason: StopReason,
    /// What went wrong, when something did (several causes are joined with `; `; a cause next
    /// to one of several lines, such as a replay diagnosis, is on a line of its own).
    pub error: Option<String>,
    /// The prompts the run was given, in order, with their options (attachments, agent mode):
    /// attachment paths as the test gave them, each selection's `text` read from its file. In
    /// the JSON: `prompt` (the first), `prompts` (their texts) and `prompt_options`.
    #[serde(flatten, with = "json::prompts")]
    #[schemars(with = "json::PromptsRecord")]
    pub prompts: Vec<crate::eval::Prompt>,
    /// The root agent's conversation: each prompt and each assistant message, in order (in the
    /// JSON, each with the number of the prompt it is or answers).
    #[serde(with = "json::turns")]
    #[schemars(with = "Vec<json::TurnRecord>")]
    pub turns: Vec<Turn>,
    /// Every tool call observed, main agent and subagents, in request order (a subagent's calls
    /// are also in its `subagent_invocations` entry, in the same shape).
    pub tool_calls: Vec<ToolCall>,
    /// The root agent's final answer: the content of the last root `assistant.message`, when that
    /// message requested no tools and has text. `None` when the session ended without an answer.
    pub final_response: Option<String>,
    /// What the run learned about the requested skills before the first model request
    /// (requested, discovered, missing, disabled, warnings, errors); `None` when the eval
    /// requested no skill folder ([`crate::run::skills`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill_discovery: Option<SkillDiscovery>,
    /// Each MCP server the eval configured (`mcp_server`), in configuration order, with the
    /// last status and tool count the runtime reported ([`McpServerState`]); empty (absent in
    /// the JSON) when the eval configured none. The runtime's own servers (its builtin
    /// `github-mcp-server`) are not listed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<McpServerState>,
    /// Every `skill.invoked` event, in order ([`SkillInvocation`]): skill name and `SKILL.md`
    /// path.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skill_invocations: Vec<SkillInvocation>,
    /// Every subagent dispatch with the subagent's own tool calls (the same records as in
    /// `tool_calls`) and answer, in dispatch order ([`crate::evidence::subagents`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subagent_invocations: Vec<SubagentInvocation>,
    /// One entry per model call, in order, as the runtime reported it (in the run record, all
    /// counts 0 when `totals.tokens` is `unknown`).
    pub usage: Vec<Usage>,
    /// `true` when the token counts in `usage` are not real: a cassette replay served at least
    /// one reply that has no recorded `usage:` (the copilot-sdk recordings, hand-written
    /// cassettes), which the loopback server answers with its made-up default (100 in, 20 out).
    /// The artifacts then say the run's tokens are `unknown` (`totals.tokens`) and do not price
    /// it. Scripted and live runs: `false`.
    #[serde(skip)]
    pub usage_unknown: bool,
    /// Why the cassette replay failed the run (a `replay_mismatch` cause, its text in `error`),
    /// typed: the first model request the cassette could not answer and where it departs from
    /// each recorded conversation, or the recorded replies the session never requested
    /// ([`replay::ReplayMismatch`]). Absent otherwise, and in results files written before it
    /// was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_diagnosis: Option<replay::ReplayMismatch>,
    /// What the run noticed that does not fail it by itself, in order: before the prompt, a
    /// custom agent whose `model` the offline catalog lacks ([`EvalContext::offline`](crate::harness::EvalContext::offline));
    /// after the session, a failed `task` dispatch whose `agent_type` is the file name of a
    /// [`custom_agent_file`](crate::eval::CopilotEvalBuilder::custom_agent_file) agent whose id
    /// (its front-matter `name`) differs. In the run record of the last run of a test with a
    /// scripted model, also the replies left unused when the test ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Whole run, from the call to the return (includes startup and cleanup), ms.
    pub duration_ms: u64,
    /// Phase timings, ms.
    pub timings: Timings,
    /// The workspace the session ran in (the file helpers read from here).
    #[serde(serialize_with = "json::path_text")]
    #[schemars(with = "String")]
    pub working_directory: PathBuf,
    /// The runtime executable that ran the session (not in the JSON).
    #[serde(skip)]
    pub runtime_path: Option<PathBuf>,
    /// The runtime process id, while it ran; `None` on a pooled runtime (the pool's process).
    /// Not in the JSON.
    #[serde(skip)]
    pub runtime_pid: Option<u32>,
    /// `true`: the session ran on a warm runtime leased from a pool (under `cargo
    /// copilot-eval`, the runner's; see [`crate::run::pool`] and docs/performance.md, "Warm
    /// runtimes"); `false` (absent in the JSON): on a runtime started for this run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pooled_runtime: bool,
    /// Why the session started a runtime of its own although a pool of warm runtimes was
    /// offered (under `cargo copilot-eval`, unless `--fresh-runtime`): the eval configures MCP
    /// servers (`mcp_servers`: a stdio server's process would be the pooled runtime's child,
    /// an HTTP server's or mock's port is not one a pooled runtime's sandbox, fixed when the
    /// pool started, may connect to), runs in empty client mode, sets `fresh_runtime`, resumes a
    /// session or seeds its home, or runs live. Absent when the run was pooled or no pool was
    /// offered (docs/performance.md, "Which evals run on a private runtime").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_runtime_reason: Option<String>,
    /// One record per audited model request, in order, when the eval audited its requests
    /// (`audit_requests = true`; see [`crate::run::proxy::audit`]): model, tool names, reasoning effort,
    /// image details and the instructions' hash; never message text or credentials. Written as
    /// `audit`, absent when empty.
    #[serde(rename = "audit", default, skip_serializing_if = "Vec::is_empty")]
    pub request_audit: Vec<crate::evidence::audit::RequestAudit>,
    /// Tool calls admitted by the pre-tool-use hook (after caller guards and the budget).
    pub tool_calls_admitted: u32,
    /// Model requests not forwarded because the run had stopped (budget stop, guard failure, a
    /// tool handler's panic). Not in the JSON.
    #[serde(skip)]
    pub model_requests_held_back: usize,
    /// Errors and panics of in-process tool handlers, recorded by the drain (`tool handler NAME
    /// failed: ...`, `tool handler NAME panicked: ...`). An error is the tool's failure only; a
    /// panic also ends the run as [`StopReason::ExecutionError`].
    pub tool_handler_failures: Vec<String>,
    /// What failed while cleaning up (see [`StopReason::CleanupError`]).
    pub cleanup_errors: Vec<String>,
    /// Problems recording the evidence (uncorrelated events, missing completions, lagged
    /// subscription).
    pub capture_errors: Vec<String>,
    /// `false` when a started tool call has no completion, an event could not be correlated, or
    /// events were lost (`capture_errors` says which).
    pub evidence_complete: bool,
    /// Every event received from the live subscription, in order (not in the JSON).
    #[serde(skip)]
    pub raw_events: Vec<RawEvent>,
    /// The eval configuration's snapshot ([`CopilotEval::snapshot`](crate::CopilotEval::snapshot)):
    /// names only for tools, agents and MCP servers, no credentials; the budget
    /// (`max_tool_calls`), the timeout, the model and the rest of the session's settings.
    pub configuration: crate::eval::EvalSnapshot,
    /// The id of the runtime session the run created or resumed (the SDK's `Session::id`, a
    /// UUID such as `"0d4f…"`); `None` (absent in the JSON) when the run stopped before the
    /// session existed. A resumed run has the id of the session it resumed. Resume it later in
    /// the same test with [`EvalContext::resume`](crate::harness::EvalContext::resume).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// `true` when the run resumed an earlier session instead of creating one
    /// ([`RunOptions::resume`](crate::RunOptions::resume), `ctx.resume`): its model requests
    /// carried the earlier conversation as history. Not in the JSON (the run record's
    /// `resumed_from` names the run it resumed).
    #[serde(skip)]
    pub resumed: bool,
    /// The kinds of input this run went without (`cargo copilot-eval --ablate skills`, or
    /// [`RunOptions::ablate`](crate::RunOptions::ablate)): the ablated side of a skill lift,
    /// whose outcome is a measurement, not the suite's verdict. Absent for a run with every
    /// input.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ablated: Vec<crate::eval::Ablate>,
    /// What confined the session's runtime and everything it started (docs/sandbox.md):
    /// `confined`, `off` or `unsandboxed` with why, what the domain allowed, and the tool calls
    /// whose output shows a refusal. `None` for a run that stopped before it was decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<crate::evidence::sandbox::SandboxRecord>,
    /// The test context and run that returned this result (set by the harness; `None` for
    /// `run_with`): how `ctx.resume` finds the run's kept runtime home.
    #[serde(skip)]
    pub(crate) origin: Option<RunOrigin>,
}

/// Which test context and run a result came from: set by the context on every result it
/// returns, read by `EvalContext::resume` to find the run's kept home.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunOrigin {
    /// The context's process-wide number.
    pub(crate) context: u64,
    /// The test path of the context (`module::function`).
    pub(crate) test: String,
    /// The run's number among the test's runs, from 1.
    pub(crate) run: usize,
}

impl CopilotResult {
    /// Panic unless the run succeeded with complete evidence, with [`failure_text`](Self::failure_text)
    /// as the message: the eval, the stop reason, the error and each capture error and tool
    /// handler failure on a line of its own, in place of
    /// `assert!(result.success, "{:?}", result.error)`.
    #[track_caller]
    pub fn assert_success(&self) {
        if let Some(text) = self.failure_text() {
            panic!("{text}");
        }
    }

    /// What kept the run from a clean success, for a person: `None` when it succeeded with
    /// complete evidence; else `eval <name> stopped with <stop reason>` (or `... completed, but
    /// its evidence is incomplete`), then `error: ...`, each `capture error: ...` and each
    /// `tool handler: ...` on lines of their own.
    pub fn failure_text(&self) -> Option<String> {
        if self.success && self.evidence_complete {
            return None;
        }
        let mut text = if self.success {
            format!(
                "eval {} completed, but its evidence is incomplete",
                self.eval_name
            )
        } else {
            format!("eval {} stopped with {}", self.eval_name, self.stop_reason)
        };
        let lines = self
            .error
            .iter()
            .map(|e| format!("error: {e}"))
            .chain(
                self.capture_errors
                    .iter()
                    .map(|e| format!("capture error: {e}")),
            )
            .chain(
                self.tool_handler_failures
                    .iter()
                    .map(|e| format!("tool handler: {e}")),
            );
        for line in lines {
            text.push('\n');
            text.push_str(&line);
        }
        Some(text)
    }

    /// Every tool call the run's pre-tool-use hook denied (a caller guard, the budget, or the
    /// stop), in order; each one's reason is its `denied`.
    pub fn denied_calls(&self) -> Vec<&ToolCall> {
        self.tool_calls
            .iter()
            .filter(|c| c.denied.is_some())
            .collect()
    }

    /// Why the first denied call of the tool `name` was denied (its [`Denial`]: the `reason`);
    /// `None` when no call of it was.
    pub fn denial_for(&self, name: &str) -> Option<&Denial> {
        self.tool_calls
            .iter()
            .filter(|c| c.name == name)
            .find_map(|c| c.denied.as_ref())
    }

    /// Every tool call with this exact name, in order.
    pub fn tool_calls_for(&self, name: &str) -> Vec<&ToolCall> {
        self.tool_calls.iter().filter(|c| c.name == name).collect()
    }

    /// Whether any tool call had this exact name.
    pub fn tool_was_called(&self, name: &str) -> bool {
        self.tool_calls.iter().any(|c| c.name == name)
    }

    /// How many tool calls had this exact name.
    pub fn tool_call_count(&self, name: &str) -> usize {
        self.tool_calls.iter().filter(|c| c.name == name).count()
    }

    /// The premium requests the session used, as the runtime reported them in `raw_events`
    /// (see [`crate::evidence::reported_premium_requests`]); `None` when it did not report them.
    pub fn premium_requests(&self) -> Option<f64> {
        crate::evidence::reported_premium_requests(&self.raw_events)
    }

    /// The calls the in-process MCP mock `server` received from this run's session
    /// (`mcp_servers[].received_calls`: the server's end of the wire), in arrival order; empty
    /// when `server` is not a mock of the eval or received none.
    pub fn mock_calls(&self, server: &str) -> &[crate::mcp::McpMockCall] {
        self.mcp_servers
            .iter()
            .find(|s| s.name == server)
            .and_then(|s| s.received_calls.as_deref())
            .unwrap_or_default()
    }

    /// Whether some call to `name` had arguments containing `expected` as a JSON subset:
    /// every key of an expected object must be present with a matching value (recursively);
    /// arrays must have the same length with matching elements; other values must be equal.
    pub fn tool_was_called_with(&self, name: &str, expected: &Value) -> bool {
        self.tool_calls
            .iter()
            .any(|c| c.name == name && json_contains(&c.arguments, expected))
    }

    /// The UTF-8 text of `path`, relative to the working directory.
    ///
    /// Errors: the file cannot be read, or `path` is absolute or leaves the working directory
    /// (`..`), which is refused with `InvalidInput`.
    pub fn file(&self, path: impl AsRef<Path>) -> std::io::Result<String> {
        std::fs::read_to_string(self.workspace_path(path.as_ref())?)
    }

    /// Whether `path` (relative to the working directory) exists as a regular file.
    pub fn file_exists(&self, path: impl AsRef<Path>) -> bool {
        self.workspace_path(path.as_ref())
            .map(|p| p.is_file())
            .unwrap_or(false)
    }

    /// Files (not directories) under the working directory whose relative path matches the glob
    /// (`globset` syntax, `/` separators, e.g. `**/*.rs`), sorted, relative to the working
    /// directory.
    ///
    /// Errors: an invalid glob (`InvalidInput`), or a directory that cannot be read.
    pub fn files_matching(&self, glob: &str) -> std::io::Result<Vec<PathBuf>> {
        let matcher = globset::Glob::new(glob)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?
            .compile_matcher();
        let mut found = Vec::new();
        let mut stack = vec![self.working_directory.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir)? {
                let entry = entry?;
                let kind = entry.file_type()?;
                let path = entry.path();
                if kind.is_dir() {
                    stack.push(path);
                } else if kind.is_file() {
                    let relative = path
                        .strip_prefix(&self.working_directory)
                        .expect("walk stays under the root")
                        .to_path_buf();
                    if matcher.is_match(&relative) {
                        found.push(relative);
                    }
                }
            }
        }
        found.sort();
        Ok(found)
    }

    /// Total input tokens over every model call (made up when
    /// [`usage_unknown`](Self::usage_unknown)).
    pub fn total_input_tokens(&self) -> u64 {
        self.usage.iter().map(|u| u.input_tokens).sum()
    }

    /// Total output tokens over every model call (made up when
    /// [`usage_unknown`](Self::usage_unknown)).
    pub fn total_output_tokens(&self) -> u64 {
        self.usage.iter().map(|u| u.output_tokens).sum()
    }

    fn workspace_path(&self, path: &Path) -> std::io::Result<PathBuf> {
        use std::path::Component;
        if path
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "{} is not a relative path inside the working directory",
                    path.display()
                ),
            ));
        }
        Ok(self.working_directory.join(path))
    }
}

/// One prompt of a run and what answered it, from [`CopilotResult::prompt_turns`].
#[derive(Debug, Clone, PartialEq)]
pub struct PromptTurn<'a> {
    /// Which prompt it is: 1 for the first prompt the session received.
    pub number: usize,
    /// The prompt's text as the session received it (the root `user.message`).
    pub prompt: &'a str,
    /// The root agent's messages that answered it, in order (up to the next prompt).
    pub messages: &'a [Turn],
    /// The answer to this prompt: the text of its last message when that message requested no
    /// tools and has text; `None` when the turn ended without one.
    pub response: Option<&'a str>,
    /// The root agent's tool calls requested in [`messages`](Self::messages), in order (a
    /// subagent's own calls are under its dispatch, [`CopilotResult::subagent_invocations`]).
    pub tool_calls: Vec<&'a ToolCall>,
}

/// Multi-turn helpers.
impl CopilotResult {
    /// The run's conversation split by prompt: one entry per root user message (each prompt of
    /// [`run_turns`](crate::run_turns) or `ctx.run_turns`), with the assistant messages and
    /// tool calls that answered it. A run that stopped before a prompt was sent has fewer
    /// entries than prompts.
    pub fn prompt_turns(&self) -> Vec<PromptTurn<'_>> {
        let starts: Vec<usize> = self
            .turns
            .iter()
            .enumerate()
            .filter(|(_, t)| t.role == Role::User)
            .map(|(i, _)| i)
            .collect();
        starts
            .iter()
            .enumerate()
            .map(|(n, &start)| {
                let end = starts.get(n + 1).copied().unwrap_or(self.turns.len());
                let messages = &self.turns[start + 1..end];
                let response = messages
                    .last()
                    .filter(|m| m.tool_call_ids.is_empty() && !m.content.is_empty())
                    .map(|m| m.content.as_str());
                let tool_calls = messages
                    .iter()
                    .flat_map(|m| m.tool_call_ids.iter())
                    .filter_map(|id| self.tool_calls.iter().find(|c| &c.id == id))
                    .collect();
                PromptTurn {
                    number: n + 1,
                    prompt: &self.turns[start].content,
                    messages,
                    response,
                    tool_calls,
                }
            })
            .collect()
    }
}

/// Skill helpers.
impl CopilotResult {
    /// Whether the run triggered this skill: a `skill.invoked` event named it (main agent or a
    /// subagent) that is not a custom agent's preload. A preload (trigger `context-load`, an
    /// agent's `skills:` list) is not a trigger: see [`skill_was_preloaded`](Self::skill_was_preloaded).
    pub fn skill_was_invoked(&self, name: &str) -> bool {
        self.skill_invocations
            .iter()
            .any(|s| s.name == name && !s.is_preload())
    }

    /// Whether a custom agent preloaded this skill: a `skill.invoked` event with trigger
    /// `context-load` named it (the agent lists it in `skills:`). Evidence of its own, never a
    /// trigger.
    pub fn skill_was_preloaded(&self, name: &str) -> bool {
        self.skill_invocations
            .iter()
            .any(|s| s.name == name && s.is_preload())
    }

    /// Names of the skills the session invoked, in order: the `skill.invoked` events that are
    /// not a custom agent's preload, else (no such event) the runtime's `skill` tool calls.
    pub fn skills_invoked(&self) -> Vec<String> {
        if self.skill_invocations.is_empty() {
            return (self.tool_calls.iter())
                .filter(|c| c.name == "skill")
                .filter_map(|c| c.arguments.get("skill").and_then(Value::as_str))
                .map(str::to_owned)
                .collect();
        }
        (self.skill_invocations.iter())
            .filter(|i| !i.is_preload())
            .map(|i| i.name.clone())
            .collect()
    }

    /// Names of the skills custom agents preloaded, in order (`skill.invoked` events with
    /// trigger `context-load`: an agent's `skills:` list). Never a trigger.
    pub fn skills_preloaded(&self) -> Vec<String> {
        (self.skill_invocations.iter())
            .filter(|i| i.is_preload())
            .map(|i| i.name.clone())
            .collect()
    }

    /// Whether the runtime listed a skill of this name before the prompt was sent (only known
    /// when the eval requested skill folders).
    pub fn skill_was_discovered(&self, name: &str) -> bool {
        self.skill_discovery
            .as_ref()
            .is_some_and(|d| d.discovered(name))
    }
}

/// Subagent helpers.
impl CopilotResult {
    /// The ids of the subagents that made tool calls or model calls, in order of first
    /// appearance (tool calls first, then usage).
    pub fn subagents(&self) -> Vec<String> {
        let mut ids: Vec<String> = Vec::new();
        let agents = (self.tool_calls.iter().filter_map(|c| c.agent_id.as_ref()))
            .chain(self.usage.iter().filter_map(|u| u.agent_id.as_ref()));
        for id in agents {
            if !ids.contains(id) {
                ids.push(id.clone());
            }
        }
        ids
    }

    /// The invocations of the agent called `name`, in dispatch order.
    pub fn subagent_invocations_for(&self, name: &str) -> Vec<&SubagentInvocation> {
        self.subagent_invocations
            .iter()
            .filter(|i| i.name == name)
            .collect()
    }

    /// Whether an invocation of the agent called `name` completed its work (completed and not
    /// cancelled).
    pub fn subagent_completed(&self, name: &str) -> bool {
        self.subagent_invocations
            .iter()
            .any(|i| i.name == name && i.status == SubagentStatus::Completed && !i.cancelled)
    }
}

/// JSON subset test used by [`CopilotResult::tool_was_called_with`].
pub fn json_contains(actual: &Value, expected: &Value) -> bool {
    match (actual, expected) {
        (Value::Object(actual), Value::Object(expected)) => expected
            .iter()
            .all(|(k, v)| actual.get(k).is_some_and(|a| json_contains(a, v))),
        (Value::Array(actual), Value::Array(expected)) => {
            actual.len() == expected.len()
                && actual
                    .iter()
                    .zip(expected)
                    .all(|(a, e)| json_contains(a, e))
        }
        (actual, expected) => actual == expected,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_failure_reads_as_lines_and_denials_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let mut result = result_in(dir.path());
        assert_eq!(result.failure_text(), None);
        result.assert_success();
        result.success = false;
        result.stop_reason = StopReason::Timeout;
        result.error = Some("timed out after 4s (eval timeout_s) during a model turn".into());
        result.capture_errors = vec!["a call had no completion".into()];
        assert_eq!(
            result.failure_text().as_deref(),
            Some(
                "eval t stopped with timeout\nerror: timed out after 4s (eval timeout_s) during a model turn\ncapture error: a call had no completion"
            )
        );
        let panic = std::panic::catch_unwind(|| result.assert_success()).unwrap_err();
        assert!(
            panic
                .downcast_ref::<String>()
                .is_some_and(|m| m.starts_with("eval t stopped with timeout\n")),
            "assert_success panics with the text"
        );

        assert!(result.denied_calls().is_empty());
        assert_eq!(result.denial_for("create"), None);
        result.tool_calls[0].denied = Some(Denial::guard(Some("guard: no writes".into())));
        assert_eq!(result.denied_calls().len(), 1);
        assert_eq!(
            result.denial_for("create").map(|d| d.reason.as_str()),
            Some("guard: no writes")
        );
        assert_eq!(result.denial_for("view"), None);
    }

    fn result_in(dir: &Path) -> CopilotResult {
        CopilotResult {
            eval_name: "t".into(),
            model_requested: None,
            model_used: None,
            success: true,
            stop_reason: StopReason::Completed,
            error: None,
            prompts: vec![],
            turns: vec![],
            tool_calls: vec![ToolCall {
                success: Some(true),
                completed: true,
                ..ToolCall::started(
                    "c1",
                    "create",
                    json!({"path": "a.txt", "opts": {"mode": 1, "x": [1, 2]}}),
                    None,
                )
            }],
            final_response: None,
            skill_discovery: None,
            mcp_servers: vec![],
            skill_invocations: vec![],
            subagent_invocations: vec![],
            usage: vec![],
            usage_unknown: false,
            replay_diagnosis: None,
            warnings: vec![],
            duration_ms: 0,
            timings: Timings::default(),
            working_directory: dir.to_path_buf(),
            runtime_path: None,
            runtime_pid: None,
            pooled_runtime: false,
            private_runtime_reason: None,
            request_audit: vec![],
            tool_calls_admitted: 0,
            model_requests_held_back: 0,
            tool_handler_failures: vec![],
            cleanup_errors: vec![],
            capture_errors: vec![],
            evidence_complete: true,
            raw_events: vec![],
            configuration: crate::CopilotEval::builder().build().unwrap().snapshot(),
            session_id: None,
            resumed: false,
            ablated: vec![],
            sandbox: None,
            origin: None,
        }
    }

    #[test]
    fn prompt_turns_split_the_conversation_by_prompt() {
        let mut r = result_in(Path::new("."));
        let turn = |role: Role, content: &str, ids: &[&str]| Turn {
            role,
            content: content.into(),
            tool_call_ids: ids.iter().map(|s| s.to_string()).collect(),
        };
        r.turns = vec![
            turn(Role::User, "Create a.txt.", &[]),
            turn(Role::Assistant, "", &["c1"]),
            turn(Role::Assistant, "Created it.", &[]),
            turn(Role::User, "What is in it?", &[]),
            turn(Role::Assistant, "Nothing yet.", &[]),
            turn(Role::User, "Stop.", &[]),
            turn(Role::Assistant, "", &["c1"]),
        ];
        let turns = r.prompt_turns();
        assert_eq!(turns.len(), 3);
        assert_eq!(
            (turns[0].number, turns[0].prompt, turns[0].response),
            (1, "Create a.txt.", Some("Created it."))
        );
        assert_eq!(turns[0].messages.len(), 2);
        assert_eq!(turns[0].tool_calls.len(), 1);
        assert_eq!(turns[0].tool_calls[0].id, "c1");
        assert_eq!(
            (turns[1].number, turns[1].prompt, turns[1].response),
            (2, "What is in it?", Some("Nothing yet."))
        );
        assert!(turns[1].tool_calls.is_empty());
        // A turn that ended on a tool request has no answer.
        assert_eq!((turns[2].prompt, turns[2].response), ("Stop.", None));
        r.turns.clear();
        assert!(r.prompt_turns().is_empty());
    }

    #[test]
    fn json_subset_rules() {
        let r = result_in(Path::new("."));
        assert!(r.tool_was_called_with("create", &json!({"path": "a.txt"})));
        assert!(r.tool_was_called_with("create", &json!({"opts": {"mode": 1}})));
        assert!(!r.tool_was_called_with("create", &json!({"opts": {"x": [1]}})));
        assert!(!r.tool_was_called_with("create", &json!({"path": "b.txt"})));
        assert!(!r.tool_was_called_with("view", &json!({})));
        assert_eq!(r.tool_call_count("create"), 1);
        assert_eq!(r.tool_calls_for("create")[0].id, "c1");
    }

    #[test]
    fn file_helpers_stay_inside_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src/nested")).unwrap();
        std::fs::write(dir.path().join("src/a.rs"), "a").unwrap();
        std::fs::write(dir.path().join("src/nested/b.rs"), "b").unwrap();
        std::fs::write(dir.path().join("notes.md"), "n").unwrap();
        let r = result_in(dir.path());
        assert_eq!(r.file("src/a.rs").unwrap(), "a");
        assert!(r.file_exists("notes.md"));
        assert!(!r.file_exists("src"), "directories are not files");
        assert_eq!(
            r.files_matching("**/*.rs").unwrap(),
            vec![PathBuf::from("src/a.rs"), PathBuf::from("src/nested/b.rs")]
        );
        let err = r.file("../escape").unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
        assert!(r.file("/etc/hostname").is_err());
    }
}
