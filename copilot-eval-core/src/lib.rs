//! # copilot-eval-core
//!
//! The engine of copilot-eval: it runs a task through a **real** GitHub Copilot runtime session
//! (the Copilot CLI driven by the official `github-copilot-sdk` crate), holds the session to its
//! configuration, records the live event stream as evidence, and returns a [`CopilotResult`]
//! that a test checks independently.
//!
//! A test with the attribute, scripted offline (run it with `cargo copilot-eval`, which gives it a
//! runtime; the getting-started chapter of the book walks through it):
//!
//! ```no_run
//! use copilot_eval_core::copilot_eval;
//! use copilot_eval_core::harness::EvalContext;
//! use copilot_eval_core::model_server::{Script, ScriptedTurn};
//! use serde_json::json;
//!
//! #[copilot_eval(model = "claude-sonnet-4.5", max_tool_calls = 3, timeout_s = 120)]
//! async fn creates_a_greeting_file(ctx: EvalContext) {
//!     let file = ctx.workdir().join("hello.txt");
//!     ctx.offline(
//!         Script::new([])
//!             .turn(ScriptedTurn::tool_call(
//!                 "create",
//!                 json!({"path": file.to_str().unwrap(), "file_text": "hello\n"}),
//!             ))
//!             .turn(ScriptedTurn::text("Created hello.txt.")),
//!     );
//!     let eval = ctx.eval().build().unwrap();
//!     let result = ctx.run(&eval, "Create hello.txt saying hello.").await;
//!     assert!(result.success, "{:?}: {:?}", result.stop_reason, result.error);
//!     // Verify the real output, not the model's claim.
//!     assert_eq!(std::fs::read_to_string(&file).unwrap(), "hello\n");
//! }
//! # fn main() {}
//! ```
//!
//! The pipeline a run goes through, one module each:
//! - [`eval`]: the eval configuration ([`CopilotEval`], a validated builder);
//! - [`runtime`]: locating and installing the pinned Copilot CLI, and the per-run homes;
//! - [`run`](mod@run): the run lifecycle ([`run()`]): start, session, prompt, timeout, stop;
//!   with its budget and guards ([`run::controls`]) and its request proxy ([`run::proxy`]);
//! - [`evidence`]: the evidence data (events, turns, tool calls, usage, skill invocations,
//!   subagent dispatches) and its mapping from the live SDK event stream;
//! - [`result`]: the [`CopilotResult`], composed from the evidence, and its helpers;
//! - [`model_server`]: the embedded loopback model server for offline runs;
//! - the request audit: what went on the wire for each model request, inspected by the request
//!   proxy ([`run::proxy::audit`]), its record in [`evidence::audit`];
//! - [`cassette`]: replaying recorded conversations through the real runtime, and recording them.
//!
//! Around the run, for tests and suites:
//! - [`harness`]: what a `#[copilot_eval]` test runs: its [`EvalContext`](harness::EvalContext)
//!   and the evidence side file it writes for the runner;
//! - `suite` (feature `runner`): the runner behind `cargo copilot-eval`: discovery, one process
//!   per eval, deadlines, fail-fast, exit statuses, the artifacts;
//! - [`report`]: the versioned JSON results (with its JSON Schema), and with the feature
//!   `runner` the JUnit XML and `merge`;
//! - [`cost`]: the pricing table, cost estimates, the cost totals the results keep, and the
//!   suite's cost caps.
//!
//! Commands and helpers: `doctor` (feature `runner`: the checks behind `cargo copilot-eval
//! doctor`), `init` (feature `runner`: the planning behind `cargo copilot-eval init`), [`tools`]
//! (ready-made SDK tools for evals), [`error`] (the configuration error [`ConfigError`]).
//!
//! The cargo feature `runner` is for the `cargo copilot-eval` command; a test binary does not need
//! it. Where each stage lives and which module may import which: `ARCHITECTURE.md`.
//!
//! Skills, custom agents and instructions:
//! - [`customization`]: loaders for `SKILL.md`, `*.agent.md`, instructions files and a repository's
//!   `.github/` configuration; `lint` (feature `runner`): the checks behind `cargo copilot-eval
//!   lint`;
//! - [`run::skills`]: skill discovery before the first model request (skill invocations and
//!   discovery data are in [`evidence::skills`]);
//! - [`evidence::subagents`]: custom-agent dispatch evidence.
#![deny(missing_docs)]

pub mod artifact;
pub mod cassette;
pub mod cost;
pub mod customization;
#[cfg(feature = "runner")]
pub mod doctor;
pub mod error;
pub mod eval;
pub mod evidence;
pub mod harness;
#[cfg(feature = "runner")]
pub mod init;
#[cfg(feature = "runner")]
pub mod lint;
pub mod mcp;
pub mod model_server;
pub mod report;
pub mod result;
pub mod run;
/// Warm runtimes (the pool lives in the run stage: [`run::pool`]).
pub use run::pool;
pub mod runtime;
mod secrets;
pub mod stats;
/// "Did you mean ...?": the nearest of several names to what a user wrote, and the nearest
/// existing sibling of a folder that does not exist (a leaf: it imports no module of the crate).
mod suggest;
#[cfg(feature = "runner")]
pub mod suite;
pub mod tools;
pub mod wire;

pub use error::ConfigError;
pub use eval::{
    AgentMode, ClientMode, CopilotEval, ImageDetail, PreToolGuard, Prompt, ReasoningEffort,
    SYSTEM_PROMPT_SECTIONS, SectionAction, SystemMessageMode, guard_fn,
};
pub use result::{CopilotResult, Denial, PromptTurn, StopClass, StopReason, ToolCall, Turn, Usage};
pub use run::{RunOptions, run, run_turns, run_with};

/// Old path of [`evidence::subagents`] (kept so `copilot_eval_core::subagents::SubagentStatus`
/// still resolves).
#[doc(hidden)]
pub use evidence::subagents;

/// The `#[copilot_eval]` test attribute (from `copilot-eval-macros`): see [`harness`] for what
/// the generated test does and `docs/attribute.md` for its keys.
pub use copilot_eval_macros::copilot_eval;

/// Re-export of the SDK crate this engine is built on (pinned), so users can build SDK tools,
/// hooks and handlers with the exact same types.
pub use github_copilot_sdk as sdk;

/// The customization-file loaders under their former name.
#[deprecated(note = "renamed: use `copilot_eval_core::customization`")]
#[doc(hidden)]
pub mod config {
    pub use crate::customization::*;
}
