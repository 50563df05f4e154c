//! The interfaces a run offers to what observes it from outside: a model-side replay check
//! ([`ReplayCheck`], asked after cleanup) and a tap on the model exchanges the request proxy
//! forwards ([`ExchangeTap`]). The run owns these traits; the cassette module implements them
//! (`ReplayResponder` and `Recorder`), so the run never depends on the cassette.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use github_copilot_sdk::copilot_request_handler::CopilotHttpResponse;
use serde_json::Value;

use crate::result::replay::ReplayMismatch;
use crate::wire::Api;

/// What a run asks a model-side replay after its turns, to report a failure the session itself
/// cannot see (set with [`RunOptions::replay_check`](super::RunOptions::replay_check);
/// `cassette::ReplaySession::run_options` sets it).
pub trait ReplayCheck: Send + Sync + std::fmt::Debug {
    /// The replay failure of the run, typed, or `None`. `turns_finished` is `true` when the
    /// session's turns ended on their own (idle, possibly after a `session.error`), `false`
    /// after a timeout, a budget stop or another stop. A `Some` makes the run's `stop_reason`
    /// [`StopReason::ReplayMismatch`](crate::StopReason::ReplayMismatch), its text the run's
    /// `error` and the value its `replay_diagnosis`. Called once, after cleanup, when no model
    /// request can arrive any more.
    fn mismatch(&self, turns_finished: bool) -> Option<ReplayMismatch>;

    /// The run's folders ([`RunFolders`]: the session's working directory and the folder a
    /// cassette's `${workdir}` stands for), called once before the session starts. The replay
    /// uses them to know every spelling of the directory, also when the system prompt does not
    /// state it (`replace` mode). Default: ignored.
    fn working_directory(&self, _folders: &RunFolders) {}

    /// Whether the token usage the runtime reported for this run was made up by the replay
    /// rather than recorded: at least one reply was served without recorded usage (the server
    /// then answers with its default). Asked once, after cleanup; `true` sets the result's
    /// `usage_unknown`. Default: `false`.
    fn usage_unknown(&self) -> bool {
        false
    }
}

/// What the request proxy ([`RequestProxy`](super::proxy::RequestProxy)) hands every model
/// exchange it forwards to, when a run records ([`RunOptions::record`](super::RunOptions::record)).
/// The cassette's `Recorder` implements it.
///
/// The proxy classifies each request once ([`Route`](crate::wire::Route)) and reads its JSON once
/// (the audit's, when the run inspects), and hands the tap what it read. It calls, per HTTP
/// model request: [`http_request`](Self::http_request), then
/// [`http_response`](Self::http_response) or [`http_failed`](Self::http_failed); per WebSocket:
/// [`websocket`](Self::websocket) once, [`ws_request`](Self::ws_request) per text message sent,
/// [`ws_event`](Self::ws_event) per text message received, [`ws_closed`](Self::ws_closed) at the
/// end. While a tap is installed, the runtime's `accept-encoding` header is not forwarded on a
/// recorded HTTP request, so that answers arrive unencoded.
pub trait ExchangeTap: Send + Sync + std::fmt::Debug {
    /// An HTTP model request of `api` about to be forwarded, with its body's JSON as forwarded
    /// (`None` when the body is not JSON): the exchange's index for the calls below. Other
    /// requests (the catalog, ...) are forwarded without the tap.
    fn http_request(&self, api: Api, body: Option<&Value>) -> usize;

    /// The upstream answer of recorded exchange `index`. Returns the response to pass on to the
    /// runtime; its status, headers and body bytes must be unchanged (the tap may copy the body
    /// as it streams).
    fn http_response(
        self: Arc<Self>,
        index: usize,
        response: CopilotHttpResponse,
    ) -> CopilotHttpResponse;

    /// Forwarding recorded exchange `index` failed with `error`.
    fn http_failed(&self, index: usize, error: &str);

    /// A new upstream WebSocket connection; returns its id for the calls below.
    fn websocket(&self) -> u64;

    /// A text message the runtime sends on WebSocket `socket`, as the JSON forwarded (after any
    /// rewrite); a message that is not JSON is not handed over.
    fn ws_request(&self, socket: u64, message: &Value);

    /// A text message the upstream sends on WebSocket `socket`.
    fn ws_event(&self, socket: u64, text: &str);

    /// WebSocket `socket` closed.
    fn ws_closed(&self, socket: u64);

    /// The run's folders, called once before the session starts (see
    /// [`ReplayCheck::working_directory`]). Default: ignored.
    fn working_directory(&self, _folders: &RunFolders) {}
}

/// The folders a run hands its [`ReplayCheck`] and [`ExchangeTap`] before the session starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFolders {
    /// The session's working directory, exactly as the run hands it to the runtime (the eval's
    /// `working_directory`, or the temporary directory the run created).
    pub session: PathBuf,
    /// The folder a cassette's `${workdir}` stands for, the copilot-sdk's meaning: the test's
    /// root folder ([`RunOptions::workdir_root`](super::RunOptions::workdir_root); the test
    /// context gives `ctx.workdir()`), when `session` is that folder or inside it; otherwise
    /// `session` itself.
    pub root: PathBuf,
}

impl RunFolders {
    /// The folders of a run whose session works in `session`, given the test's root folder
    /// `root` (if any): `root` is kept only when `session` is inside it (compared as given,
    /// component by component).
    pub fn new(session: &Path, root: Option<&Path>) -> RunFolders {
        let root = root
            .filter(|root| session.starts_with(root))
            .unwrap_or(session);
        RunFolders {
            session: session.to_path_buf(),
            root: root.to_path_buf(),
        }
    }

    /// The same session with `${workdir}` standing for the session's working directory (the
    /// meaning of cassettes recorded before the cassette header's `workdir` field).
    pub fn session_only(&self) -> RunFolders {
        RunFolders {
            session: self.session.clone(),
            root: self.session.clone(),
        }
    }
}
