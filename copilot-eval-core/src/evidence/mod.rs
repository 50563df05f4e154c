//! Evidence: the live event log of a run, and its mapping to turns, tool calls and usage.
//!
//! The run records every SDK event from a subscription taken *before* the session starts (so
//! ephemeral events such as `assistant.usage`, `model.*` and `session.idle` are kept; the
//! persisted history from `get_events` lacks them). [`map_events`] is a pure function from that
//! log to [`Evidence`]: event types it does not know are kept raw and never fail the mapping.
//! Every reader of the log matches an event by its kind, [`RawEvent::kind`] (the pinned SDK's
//! [`SessionEventType`], `Unknown` for a type the SDK does not know), never by its type text.
//!
//! Each event's data is read through the pinned SDK's generated type of its kind
//! ([`RawEvent::typed_data`]; inside the crate, a read that tolerates a lacking required field);
//! the few fields the SDK does not type, or loses, are read by their keys in one module,
//! `untyped`, which names each and why. Event fields read (camelCase as sent by the runtime):
//! - `user.message`: `content` → a user [`Turn`];
//! - `assistant.message`: `content`, `toolRequests[] {toolCallId, name, arguments}` → an assistant
//!   turn and the tool calls it requested (root agent only for turns; subagent calls are kept in
//!   `tool_calls` with their `agent_id`);
//! - `tool.execution_start`: `toolCallId`, `toolName`, `arguments`;
//! - `tool.execution_complete`: `toolCallId`, `success`, `result.content`, `error.{message,code}`;
//! - `assistant.usage`: `model`, `inputTokens`, `outputTokens`, `cacheReadTokens`,
//!   `cacheWriteTokens`, `cost`, `duration` (ms);
//! - `session.start` / `session.model_change`: `selectedModel` / `newModel`;
//! - `session.error`: `errorType`, `message`;
//! - `session.idle`: the end of the turns;
//! - `session.mcp_*`: the status and tool count of each configured MCP server ([`mcp`]);
//! - `skill.invoked` and `subagent.*`: skill invocations and subagent dispatches, mapped by
//!   [`skills`] and [`subagents`];
//! - what the runtime substituted for the model's tool names ([`substitutions`]);
//! - why the run's pre-tool-use hook denied a call ([`denial`]: recorded by the run, not read
//!   from an event);
//! - `session.shutdown` / `session.usage_checkpoint`: `totalPremiumRequests`, the premium
//!   requests the session used ([`reported_premium_requests`]).
//!
//! The parts: the plain data ([`RawEvent`], [`Role`], [`Turn`], [`ToolCall`], [`Usage`]); the
//! mapper ([`map_events`]) builds [`Evidence`] from them, with [`skills`] and [`subagents`]
//! for their events. This module depends on no other stage of a run: the result
//! ([`crate::result`]) composes it, the report mirrors it.

pub mod audit;
pub mod denial;
mod events;
mod map;
pub mod mcp;
pub mod offered;
mod premium;
pub mod sandbox;
pub mod skills;
pub mod subagents;
pub mod substitutions;
pub(crate) mod untyped;

pub use denial::Denial;
pub use events::{CutForModel, Permission, RawEvent, Role, ToolCall, Turn, Usage};
pub use github_copilot_sdk::session_events::SessionEventType;
pub use map::{Evidence, LoggedEvent, map_events};
pub use premium::reported_premium_requests;
