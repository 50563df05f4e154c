//! # copilot-eval-core
//!
//! The engine of copilot-eval: it runs a task through a **real** GitHub Copilot runtime session
//! (the Copilot CLI driven by the official `github-copilot-sdk` crate), holds the session to its
//! configuration, records the live event stream as evidence, and returns a [`CopilotResult`]
//! that a test checks independently.
//!
//! The pipeline a run goes through, one module each:
//! - [`eval`]: the eval configuration ([`CopilotEval`], a validated builder);
//! - [`runtime`]: locating and installing the pinned Copilot CLI, and the per-run homes;
//! - [`run`](mod@run): the run lifecycle ([`run()`]): start, session, prompt, timeout, stop;
//! - [`evidence`]: mapping the live SDK event stream to turns, tool calls and usage;
//! - [`result`]: the [`CopilotResult`] and its helpers;
//! - [`model_server`]: the embedded loopback model server for offline runs.
#![deny(missing_docs)]

pub mod controls;
pub mod error;
pub mod eval;
pub mod evidence;
pub mod model_server;
pub mod result;
pub mod run;
pub mod runtime;
pub mod seam;
pub mod tools;

pub use error::ConfigError;
pub use eval::{ClientMode, CopilotEval, ImageDetail, ReasoningEffort, SystemMessageMode};
pub use result::{CopilotResult, StopReason, ToolCall, Turn, Usage};
pub use run::{RunOptions, run, run_with};

/// Re-export of the SDK crate this engine is built on (pinned), so users can build SDK tools,
/// hooks and handlers with the exact same types.
pub use github_copilot_sdk as sdk;
