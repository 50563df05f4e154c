//! Cassettes: replaying recorded model conversations through the **real** runtime, and
//! recording them from live runs ([`Recorder`], [`Cassette::write`]).
//!
//! A cassette is a YAML file of recorded conversations. A replay starts the loopback
//! [`ModelServer`] with a [`ReplayResponder`]: the real
//! runtime runs the session (its own tools really run: files are written, commands run, your
//! tool handlers are called), and each model request it sends is answered with the reply that
//! followed the same request in the recording. A request that was not recorded fails the run
//! at once with `stop_reason = replay_mismatch` and a diagnosis. `docs/cassettes.md` is the
//! user guide; this page is the reference.
//!
//! ```no_run
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use copilot_eval_core::cassette::ReplaySession;
//! use copilot_eval_core::{CopilotEval, StopReason, run_with};
//!
//! let replay = ReplaySession::start("tests/cassettes/copilot-sdk/session/should_have_stateful_conversation.yaml".as_ref()).await?;
//! let eval = CopilotEval::builder().model(replay.model()).build()?;
//! let result = run_with(&eval, "What is 1+1?", &replay.run_options()).await;
//! // One prompt of a two-prompt recording: the second reply was never requested.
//! assert_eq!(result.stop_reason, StopReason::ReplayMismatch);
//! assert_eq!(replay.unconsumed().len(), 1);
//! replay.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! # Format
//!
//! ```yaml
//! copilot_eval:                 # optional, ours (see CassetteHeader); files without it read fine
//!   runtime_version: 1.0.102
//!   model: claude-sonnet-4.5
//!   wire_format: chat_completions
//!   recorded: 2026-11-30
//!   workdir: test_root          # `${workdir}` is the test's root folder (absent: see CassetteHeader)
//! models:                       # model ids of the recorded session
//!   - claude-sonnet-4.5
//! conversations:                # each: one chain of model requests, ending with its last reply
//!   - messages:
//!       - role: system
//!         content: ${system}
//!       - role: user
//!         content: Run 'echo hi'.
//!       - role: assistant
//!         tool_calls:
//!           - id: toolcall_0
//!             type: function
//!             function: {name: "${shell}", arguments: '{"command":"echo hi"}'}
//!       - role: tool
//!         tool_call_id: toolcall_0
//!         content: "hi\n<exited with exit code 0>"
//!       - role: assistant
//!         content: It printed hi.
//!         usage: {input_tokens: 1200, output_tokens: 8, cache_read_tokens: 900, cache_write_tokens: 0}
//! ```
//!
//! An assistant message may carry `usage:`, the token counts the model service reported for
//! that reply ([`Message::usage`]; written when recording, optional, never matched); a replay
//! answers with them, or with [`DEFAULT_USAGE`](crate::model_server::DEFAULT_USAGE) (100 in,
//! 20 out) when the message has none, as in the copilot-sdk recordings. Those counts are made up,
//! so the run's usage is unknown: [`ReplayResponder::replies_without_usage`] counts such
//! replies, and the run's result then has `usage_unknown` (its artifacts say `unknown`).
//!
//! Placeholders stand for what differs between machines: `${system}` (the runtime's whole system
//! prompt), `${compaction_prompt}` (the runtime's compaction request), `${workdir}` (the test's root folder, the copilot-sdk's meaning, in every spelling; see [`WorkdirMeaning`]),
//! `${tool_output_file}` (the file the runtime saves a too-large tool result to), `${shell}`, `${read_shell}`,
//! `${write_shell}`, `${stop_shell}`, `${list_shell}` (the shell tool names). Reading is strict:
//! unknown keys, unknown roles and messages missing what their role needs are errors that name
//! the file, the line and column, and what is wrong ([`CassetteError::Malformed`]).
//!
//! # Matching
//!
//! For every model request (any wire format: the server hands over the whole conversation in
//! Chat Completions shape, [`ModelRequest::messages`](crate::model_server::ModelRequest)):
//!
//! 1. runtime-injected calls are taken out (below);
//! 2. the request's messages and every recorded conversation are normalised by the same list,
//!    [`NORMALIZERS`]; only `role`, `content`, `tool_calls` (id, name, arguments) and
//!    `tool_call_id` of a message take part (an empty text counts as no text);
//! 3. the request must be a **strict prefix** of a recorded conversation, message for message,
//!    and the recorded message right after it must be an assistant message: that message is the
//!    reply. Consecutive recorded assistant messages (one recorded reply with several choices)
//!    are merged into one reply first, so their text and tool calls arrive together;
//! 4. when several conversations qualify, the first in file order whose reply at that point was
//!    not served yet is used, else the first; the reply is marked served in every qualifying
//!    conversation that has the same reply there;
//! 5. the reply is sent in the request's wire format, with `${workdir}` and the shell
//!    placeholders resolved for this session (tool-call ids are issued by the server: `call_1`,
//!    `call_2`, ...; usage is the reply's recorded `usage`, else the server's default,
//!    [`DEFAULT_USAGE`](crate::model_server::DEFAULT_USAGE)).
//!
//! Nothing else is forgiven: there is no order-only, fuzzy or best-effort fallback. A change in
//! the prompt, a setup file, a tool result or a tool's arguments is a miss.
//!
//! # Normalisers
//!
//! [`NORMALIZERS`] (version [`NORMALIZERS_VERSION`]) is applied, in order, to both sides:
//!
//! | name | kind | for runtime versions | what it does |
//! |---|---|---|---|
//! | `merge_assistant_messages` | format | all | consecutive assistant messages become one (texts joined in order, calls concatenated) |
//! | `system_prompt` (v2) | format | all | every system message's content becomes `${system}`; the hashes of the parts the user controls are kept as its `prompt_parts` (below) |
//! | `skill_context_front_matter` | format | all (the copilot-sdk's rule) | in user messages, the `---` front matter after a `<skill-context>`'s base-directory line is removed |
//! | `task_completion_notice` | format | all (the copilot-sdk's rule) | in user messages, a subagent's completion notice takes one wording |
//! | `datetime_tag` | format | 1.0.x and the copilot-sdk recordings | in user messages, every `<current_datetime>...</current_datetime>` is removed; the line breaks around it stay |
//! | `reminder_block`, `system_reminder_block`, `agent_instructions_block` | format | all (the copilot-sdk's rules) | in user messages, every `<reminder>`, `<system_reminder>`, `<agent_instructions>` block is removed |
//! | `plan_prefix` | format | all (the copilot-sdk's rule) | in user messages, a leading `[[PLAN]]` is removed |
//! | `compaction_prompt` | format | all (the copilot-sdk's rule) | in user messages, the runtime's compaction request to the end of the text becomes `${compaction_prompt}` |
//! | `user_text_trim` | format | all (the copilot-sdk's rule) | a user message's text is trimmed |
//! | `workdir` | format | all | every spelling of the test's root folder (the run's, as given and canonical, and as the system prompt's `Current working directory: <path>` line spells it) becomes `${workdir}` in texts and in the string values of tool-call arguments |
//! | `tool_output_file` | format | 1.0.102 | in tool results, the runtime's large-output file (`<temp>/<ms>-copilot-tool-output-<hex>.txt`) becomes `${tool_output_file}` |
//! | `shell_tool_names` | format | all | tool-call names `bash`/`powershell`, `read_*`, `write_*`, `stop_*`, `list_*` become `${shell}`, `${read_shell}`, ... |
//! | `tool_call_ids` | format | all | tool-call ids are renumbered by first appearance: `toolcall_0`, `toolcall_1`, ... |
//! | `canonical_json` | format | all | tool-call arguments that parse as JSON are rewritten with sorted keys and no extra whitespace |
//! | `view_line_numbers` | compat | recordings that numbered `view` output, replayed on 1.0.102 | a `view` result whose every line starts with consecutive `N. ` numbers loses them |
//! | `unknown_tool_list` | compat | 1.0.102 and the copilot-sdk recordings | `Tool 'X' does not exist. Available tools that can be called are ...` loses the list |
//! | `shell_exit_marker` | compat | 1.0.102 against the copilot-sdk recordings | `<shellId: N completed with exit code X>` becomes `<exited with exit code X>` in tool results |
//!
//! The three compat entries are the drift measured between the copilot-sdk recordings and
//! runtime 1.0.102. A new runtime's drift gets a new, versioned entry here, never a looser
//! comparison.
//!
//! # Changed instructions, prompts and skills
//!
//! A system message recorded by copilot-eval carries `prompt_parts:`, the SHA-256 of each part
//! of the recorded system prompt the user controls ([`PROMPT_PARTS`]: the eval's
//! `instructions`, the `custom_instructions` files, the `agent_prompt`, the `skills` list), found
//! by runtime 1.0.102's section tags, with the working directory written `${workdir}` first.
//! A replay hashes the same parts of each live prompt; when they differ the request is a miss
//! whose reason names the parts ("the eval's instructions changed since recording ...; if the
//! change is intended, re-record the cassette with `cargo copilot-eval --record=all TEST`").
//! A system message without `prompt_parts` (older cassettes, the copilot-sdk recordings)
//! matches any prompt.
//!
//! # Runtime-injected calls
//!
//! The server knows every tool-call id it issued (`call_1` ..= `call_N`). An assistant tool call
//! in a request with any other id was not produced by the model (the server is the model): the
//! runtime put it there. Such a call, its tool result, and an assistant message left empty by
//! its removal are taken out of the request **before** it is normalised and matched, so the
//! comparison covers exactly the model's output as served and the real results of those
//! calls. Each is recorded once ([`ReplaySession::injected_calls`], [`InjectedCall`]) and is
//! listed in a diagnosis. Cassettes therefore do not contain runtime-injected calls (none of the
//! copilot-sdk recordings do).
//!
//! A resumed session's requests carry the earlier sessions' conversation as history. Its server
//! issues ids after the earlier ones ([`ReplayConfig::earlier_calls`]); the earlier ids are
//! taken out like injected calls (a recording of the resumed session does not hold them either)
//! but not reported, and the recorded replies a matching request carries as history count as
//! served.
//!
//! # Recorded errors
//!
//! A cassette may hold an `errors:` list before its conversations (the copilot-sdk's snapshot
//! format, [`RecordedError`]): a request whose normalised messages equal an entry's `messages`
//! exactly, for its `model` when it names one, is answered with the entry's `status`, a JSON
//! body `{"error": {"message", "type": code, "code": code}}` and `retry-after` when recorded,
//! every time it comes and before any conversation is tried
//! ([`Reply::RecordedError`](crate::model_server::Reply::RecordedError)); the runtime applies
//! its own retry policy. [`ReplaySession::errors_served`] counts the answers.
//!
//! # Misses
//!
//! A request that matches nothing is answered at once with HTTP 400 and `x-should-retry: false`
//! ([`Reply::Error`](crate::model_server::Reply::Error)): the runtime makes no retry and ends the
//! turn with `session.error` within about 100 ms; a later prompt of the same run is not sent.
//! The run (given [`ReplaySession::run_options`]) then ends with
//! [`StopReason::ReplayMismatch`](crate::StopReason::ReplayMismatch), and its `error` holds the
//! diagnosis ([`ReplayMiss`]'s `Display`): the request number and, for every recorded
//! conversation, the first differing message (numbered from 1; the system prompt is 1) with
//! both sides normalised and shortened to a window around their first differing character:
//!
//! ```text
//! replay mismatch: model request 1 matches no recorded conversation (cassette ...; the request has 2 messages after normalisation, normalisers v3)
//!   conversation 1 of 2 (3 messages): first difference at message 2 (user)
//!     recorded: user "Create a file called 'new_file.txt' with the content 'Created by test'. Then read it back to confirm."
//!     request:  user "Create a file called 'other.txt' with the content 'Created by test'. Then read it back to confirm."
//! ```
//!
//! # Unconsumed conversations
//!
//! When the session's turns end on their own (idle) with no miss, every recorded reply of every
//! conversation must have been served. If one was not, the session did less than the recording
//! (for example the second prompt of a two-turn recording was never sent), and the run ends
//! with `replay_mismatch` too; its error lists each conversation with unserved replies
//! ([`ReplaySession::unconsumed`]). After a timeout or another stop the list is not turned into
//! a failure (the run already failed for its own reason), but `unconsumed` still reports it.
//!
//! When the run used some conversations and left others wholly unused, the error ends with how
//! to split a file that holds several sessions: `split` (feature `runner`, behind `cargo
//! copilot-eval cassette split`) writes one cassette per session, the test's second run's as
//! `<stem>-2.yaml`.

mod context;
mod format;
mod normalize;
mod prompt;
mod record;
mod replay;
mod scan;
mod session_folder;
mod spellings;
#[cfg(feature = "runner")]
pub mod split;
mod tap_impl;
mod tool_output_file;
mod user_text;
mod write;

#[cfg(test)]
mod sdk_parity_tests;
#[cfg(all(test, feature = "runner"))]
mod split_tests;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::future::BoxFuture;

pub use format::{
    Cassette, CassetteError, CassetteHeader, Conversation, DEFAULT_ERROR_CODE,
    DEFAULT_ERROR_MESSAGE, Message, RecordedError, RecordedToolCall, Role, WorkdirMeaning,
};
pub use normalize::{NORMALIZERS, NORMALIZERS_VERSION, Normalizer, NormalizerKind};
pub use prompt::{PROMPT_PARTS, PromptParts};
pub use record::{RecordError, RecordedExchange, Recorder};
pub use replay::{
    ConversationDiff, Departure, InjectedCall, LaterMiss, ReplayMismatch, ReplayMiss,
    ReplayResponder,
};
pub use scan::{VolatileKind, VolatileValue, temp_folders, volatile_values};
pub use user_text::COMPACTION_PLACEHOLDER;

use crate::model_server::{ModelServer, ServerConfig, WireApi};
use crate::run::RunOptions;

/// The cassette of a test's run number `run` (1-based), given the first run's cassette `first`:
/// `first` itself for run 1, then the same path with `-2`, `-3`, ... before the extension
/// (`greets.yaml`, `greets-2.yaml`; `greets`, `greets-2` without one). What a test's later
/// runs record and replay, and where `cassette split` writes a file's later sessions.
pub fn run_cassette_path(first: &Path, run: usize) -> PathBuf {
    if run <= 1 {
        return first.to_path_buf();
    }
    let stem = first
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let extension = first
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    first.with_file_name(format!("{stem}-{run}{extension}"))
}

/// The folder holding the trial cassettes of an eval whose cassette is `first`: `first` without
/// its extension (`evals/greets.yaml` -> `evals/greets`; a case's `evals/f/label.yaml` ->
/// `evals/f/label`); `first` with `.trials` added when it has no extension.
pub fn trial_folder(first: &Path) -> PathBuf {
    match first.extension() {
        Some(_) => first.with_extension(""),
        None => {
            let mut name = first.as_os_str().to_owned();
            name.push(".trials");
            PathBuf::from(name)
        }
    }
}

/// The cassette of trial `trial` (from 1) of an eval whose cassette is `first`:
/// `<trial_folder>/trial-<trial>.<ext>` (`evals/greets.yaml` -> `evals/greets/trial-2.yaml`;
/// `yaml` when `first` has no extension). What `cargo copilot-eval --record --trials N` writes
/// and `--replay --trials N` replays. A test's later runs in that trial (a comparison's
/// treatment) add `-2`, `-3`, ... to it ([`run_cassette_path`]): `trial-2-2.yaml`.
pub fn trial_cassette_path(first: &Path, trial: u32) -> PathBuf {
    let extension = first
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_else(|| "yaml".to_owned());
    trial_folder(first).join(format!("trial-{trial}.{extension}"))
}

/// The trials recorded for the eval whose cassette is `first`: each k (ascending) for which
/// [`trial_cassette_path`]`(first, k)` is a file. Empty when [`trial_folder`] does not exist
/// or holds no such file (later runs' files, `trial-2-2.yaml`, do not count).
pub fn recorded_trials(first: &Path) -> Vec<u32> {
    let folder = trial_folder(first);
    let Ok(entries) = std::fs::read_dir(&folder) else {
        return Vec::new();
    };
    let mut trials: Vec<u32> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let number = name.strip_prefix("trial-")?.split_once('.')?.0;
            let trial: u32 = number.parse().ok().filter(|k| *k >= 1)?;
            (trial_cassette_path(first, trial) == entry.path() && entry.path().is_file())
                .then_some(trial)
        })
        .collect();
    trials.sort_unstable();
    trials
}

/// Options of a [`ReplaySession`] (builder; the default replays as the cassette says).
#[derive(Debug, Clone, Default)]
pub struct ReplayConfig {
    wire_api: Option<WireApi>,
    earlier_calls: u64,
}

impl ReplayConfig {
    /// Advertise this wire format instead of the cassette header's `wire_format` (default: the
    /// header's, else Chat Completions). Matching does not depend on it: every format is
    /// compared in Chat Completions shape.
    pub fn wire_api(mut self, wire_api: WireApi) -> Self {
        self.wire_api = Some(wire_api);
        self
    }

    /// Replay a resumed session whose history carries the earlier sessions' tool calls with
    /// ids `call_1` ..= `call_{calls}`: the server issues ids from `call_{calls + 1}` on and
    /// the matcher takes those history calls out of each request
    /// ([`ReplayResponder::earlier_calls`]). Default 0.
    pub fn earlier_calls(mut self, calls: u64) -> Self {
        self.earlier_calls = calls;
        self
    }
}

/// A cassette loaded and served: a running loopback model server answering from it.
///
/// One session per run: the consumption record and the tool-call ids belong to one replayed
/// session. Dropping it stops the server.
#[derive(Debug)]
pub struct ReplaySession {
    cassette: Arc<Cassette>,
    responder: Arc<ReplayResponder>,
    server: ModelServer,
    model: String,
}

impl ReplaySession {
    /// Loads the cassette at `path` and starts a loopback [`ModelServer`] on `127.0.0.1`
    /// answering from it, with the cassette's models in its catalog (the header's `model`
    /// first) and the header's wire format (default Chat Completions). Must be called inside a
    /// Tokio runtime.
    ///
    /// Errors: [`CassetteError::Io`] (unreadable file), [`CassetteError::Malformed`] (with file,
    /// line, column and what is wrong), [`CassetteError::Server`] (the port could not be
    /// bound).
    ///
    /// The future is boxed in this crate, so that a test crate awaiting it does not compile the
    /// replay and its server again (docs/performance.md, "The edit loop").
    pub fn start(path: &Path) -> BoxFuture<'_, Result<ReplaySession, CassetteError>> {
        Self::start_with(path, ReplayConfig::default())
    }

    /// [`ReplaySession::start`] with options (e.g. another wire format); boxed the same way.
    pub fn start_with(
        path: &Path,
        config: ReplayConfig,
    ) -> BoxFuture<'_, Result<ReplaySession, CassetteError>> {
        Box::pin(Self::start_unboxed(path, config))
    }

    async fn start_unboxed(
        path: &Path,
        config: ReplayConfig,
    ) -> Result<ReplaySession, CassetteError> {
        let cassette = Arc::new(Cassette::load(path)?);
        let responder =
            Arc::new(ReplayResponder::new(cassette.clone()).earlier_calls(config.earlier_calls));
        let mut models: Vec<String> = Vec::new();
        for model in cassette.header.model.iter().chain(cassette.models.iter()) {
            if !models.contains(model) {
                models.push(model.clone());
            }
        }
        let wire = config
            .wire_api
            .or(cassette.header.wire_format)
            .unwrap_or_default();
        let mut server_config = ServerConfig::new(responder.clone())
            .wire_api(wire)
            .first_call_id(config.earlier_calls + 1);
        for model in &models {
            server_config = server_config.model(model.clone());
        }
        let model = server_config.models()[0].clone();
        let server =
            ModelServer::start(server_config)
                .await
                .map_err(|source| CassetteError::Server {
                    path: path.to_path_buf(),
                    source,
                })?;
        Ok(ReplaySession {
            cassette,
            responder,
            server,
            model,
        })
    }

    /// Offline run options pointing the runtime at this replay's server, carrying the replay
    /// check that turns a miss or an unconsumed cassette into
    /// [`StopReason::ReplayMismatch`](crate::StopReason::ReplayMismatch). Add
    /// `.runtime_path(..)` to choose the runtime.
    pub fn run_options(&self) -> RunOptions {
        RunOptions::offline(self.server.base_url()).replay_check(self.responder.clone())
    }

    /// The model id to run the eval with: the first of the catalog (the header's `model`, else
    /// the first of `models:`, else the server's default model).
    pub fn model(&self) -> &str {
        &self.model
    }

    /// One line per recorded conversation with a reply that was never served (see
    /// [`ReplayResponder::unconsumed`]); empty when the whole cassette was replayed.
    pub fn unconsumed(&self) -> Vec<String> {
        self.responder.unconsumed()
    }

    /// Every model request that could not be answered, in arrival order.
    pub fn misses(&self) -> Vec<ReplayMiss> {
        self.responder.misses()
    }

    /// Every runtime-injected tool call seen (see the [module documentation](self)).
    pub fn injected_calls(&self) -> Vec<InjectedCall> {
        self.responder.injected_calls()
    }

    /// Per recorded error answer of the cassette (`errors:`, in file order): how many model
    /// requests it answered (see [`ReplayResponder::errors_served`]).
    pub fn errors_served(&self) -> Vec<usize> {
        self.responder.errors_served()
    }

    /// The loaded cassette.
    pub fn cassette(&self) -> &Cassette {
        &self.cassette
    }

    /// The running server (its request log: [`ModelServer::requests`],
    /// [`ModelServer::model_requests`]).
    pub fn server(&self) -> &ModelServer {
        &self.server
    }

    /// Stops the server, waiting briefly for open connections (the future is boxed in this
    /// crate, [`ModelServer::shutdown`]'s).
    pub fn shutdown(self) -> BoxFuture<'static, ()> {
        self.server.shutdown()
    }
}
