//! The cassette [`Recorder`] as the run's [`ExchangeTap`]: the request proxy hands it every
//! model exchange it forwards. Each method calls the recorder's own intake method of the same
//! name.

use std::sync::Arc;

use github_copilot_sdk::copilot_request_handler::CopilotHttpResponse;
use serde_json::Value;

use super::Recorder;
use crate::run::ExchangeTap;
use crate::wire::Api;

impl ExchangeTap for Recorder {
    fn http_request(&self, api: Api, body: Option<&Value>) -> usize {
        Recorder::http_request(self, api, body)
    }

    fn http_response(
        self: Arc<Self>,
        index: usize,
        response: CopilotHttpResponse,
    ) -> CopilotHttpResponse {
        Recorder::http_response(&self, index, response)
    }

    fn http_failed(&self, index: usize, error: &str) {
        Recorder::http_failed(self, index, error)
    }

    fn websocket(&self) -> u64 {
        Recorder::websocket(self)
    }

    fn ws_request(&self, socket: u64, message: &Value) {
        Recorder::ws_request(self, socket, message)
    }

    fn ws_event(&self, socket: u64, text: &str) {
        Recorder::ws_event(self, socket, text)
    }

    fn ws_closed(&self, socket: u64) {
        Recorder::ws_closed(self, socket)
    }

    fn working_directory(&self, folders: &crate::run::RunFolders) {
        Recorder::set_working_directory(self, folders)
    }
}
