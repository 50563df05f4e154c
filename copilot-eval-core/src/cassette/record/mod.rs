//! Recording model exchanges through the request seam, and turning them into a cassette
//! (see [`Recorder`]).
//!
//! [`tap`] is what sees each model exchange pass (the seam's calls, a copy of each answer);
//! [`build`] turns the captured exchanges into a [`Cassette`](super::Cassette).

mod build;
mod tap;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

use crate::model_server::{ScriptedUsage, WireApi};

/// One model request the recorder saw, with its reply.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedExchange {
    /// The wire format of the request: Chat Completions (`POST …/chat/completions`), Responses
    /// (`POST …/responses`) or WebSocket Responses (a `response.create` message).
    pub wire: WireApi,
    /// The `model` member of the request body.
    pub model: Option<String>,
    /// The request's whole conversation as Chat Completions messages (`{role, content,
    /// tool_calls?, tool_call_id?}`), as sent (before normalisation). Responses input items are
    /// converted the way the loopback model server converts them; a continuation
    /// (`previous_response_id`) is preceded by the conversation of the response it continues.
    pub request: Vec<Value>,
    /// The reply as Chat Completions assistant messages (one per choice, in choice order), once
    /// a successful answer arrived whole; `None` otherwise.
    pub reply: Option<Vec<Value>>,
    /// The token usage the answer reported (Chat Completions `usage`, Responses
    /// `response.usage`), when it had one; stored on the reply in the cassette.
    pub usage: Option<ScriptedUsage>,
    /// Why the exchange has no reply: an error status or error event, a transport failure, or
    /// an answer the runtime stopped reading (`None` while it is pending or when it has one).
    /// Such exchanges are left out of the cassette.
    pub skipped: Option<String>,
    /// Why the exchange cannot be recorded faithfully (a successful answer whose body could not
    /// be read, a compressed body, a role the cassette format has no room for, an unknown
    /// continuation). Any such exchange makes [`Recorder::cassette`] fail.
    pub unrecordable: Option<String>,
}

/// Why a recording gives no cassette.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// No model request got a complete, successful reply (no request was made, or all failed).
    #[error(
        "no model exchange was recorded ({requests} model requests seen, none with a complete successful reply)"
    )]
    Empty {
        /// How many model requests the recorder saw.
        requests: usize,
    },
    /// A model exchange could not be recorded faithfully, so no cassette is made from the
    /// session (see [`RecordedExchange::unrecordable`]).
    #[error("model request {request} cannot be recorded: {reason}")]
    Unrecordable {
        /// The request's number in the session, from 1.
        request: usize,
        /// What is wrong.
        reason: String,
    },
}

/// Collects the model exchanges of one run, and makes the cassette. Shared as `Arc<Recorder>`;
/// give a fresh one to each run.
///
/// A recorder is given to a run with [`RunOptions::record`](crate::RunOptions::record). The
/// run then installs the request proxy ([`crate::run::proxy`]), which hands the recorder every model
/// request it forwards (HTTP Chat Completions, HTTP Responses, WebSocket `response.create`) and
/// a copy of every upstream answer, chunk by chunk, while the answer streams on to the runtime
/// unchanged. Nothing else is kept: no header, no URL, no token; the model-catalog `GET` is not
/// recorded.
///
/// [`Recorder::cassette`] then builds the cassette the replay engine reads:
///
/// 1. every exchange whose answer arrived whole and successful gives one conversation: the
///    request's messages (every wire format in Chat Completions shape, a WebSocket continuation
///    rebuilt from the responses it continues) followed by the reply;
/// 2. runtime-injected tool calls are taken out: an assistant tool call whose id no recorded
///    reply carries was put there by the runtime, not the model (the replay engine takes such
///    calls out of requests too);
/// 3. the conversation is normalised by the replay's own list
///    ([`NORMALIZERS`](super::NORMALIZERS)): `${system}`, `${workdir}` (every spelling of the
///    directory the run gave the runtime, as given and canonical, and of the system prompt's
///    working directory line), `${tool_output_file}`, shell tool placeholders, `toolcall_N`
///    ids, canonical JSON arguments, no datetime prefix;
/// 4. a conversation that is a prefix of another one (an earlier request of the same chain), or
///    equal to an earlier one (a retried request), is dropped;
/// 5. every text is passed through a [`Redactor`](crate::artifact::Redactor): a credential value
///    from the environment becomes `[redacted]`.
#[derive(Debug, Default)]
pub struct Recorder {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    exchanges: Vec<RecordedExchange>,
    /// Responses input items of each exchange (for storing its response's conversation).
    items: Vec<Option<Vec<Value>>>,
    /// Response id -> the whole conversation as Responses items (input, then output).
    responses: HashMap<String, Vec<Value>>,
    /// WebSocket id -> (the exchange in flight on it, the events received for it so far).
    sockets: HashMap<u64, Option<(usize, Vec<Value>)>>,
    next_socket: u64,
    /// The run's folders, when the run said
    /// ([`ExchangeTap::working_directory`](crate::run::ExchangeTap::working_directory)).
    folders: Option<crate::run::RunFolders>,
}

impl Recorder {
    /// A recorder with nothing recorded yet.
    pub fn new() -> Arc<Recorder> {
        Arc::new(Recorder::default())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every model request seen so far, in arrival order.
    pub fn exchanges(&self) -> Vec<RecordedExchange> {
        self.lock().exchanges.clone()
    }

    /// Sets the run's folders: each spelling of their root (the test's root folder, the
    /// copilot-sdk's `${workdir}`) becomes `${workdir}` in the cassette, whether or not the
    /// system prompt states the session's working directory. A run that records calls this
    /// itself ([`RunOptions::record`](crate::RunOptions::record)).
    pub fn set_working_directory(&self, folders: &crate::run::RunFolders) {
        self.lock().folders = Some(folders.clone());
    }

    /// How many model requests were seen so far.
    pub fn model_requests(&self) -> usize {
        self.lock().exchanges.len()
    }
}
