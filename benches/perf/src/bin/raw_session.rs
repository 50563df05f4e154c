//! The benchmark's floor: the scenario of `copilot_eval_bench::script` as one session driven
//! by the SDK directly, with no harness (no budgets, audit, evidence, artifacts): a loopback
//! model server, `Client::start`, one session with the `get_weather` tool, the prompt, the
//! answer, stop. The runtime environment is what a copilot-eval run gives it (private home, the
//! shared unpack cache, the loopback URLs), and the session leaves out what an offline
//! copilot-eval session leaves out, so both sides run the same session on the same runtime.
//!
//! Usage: `raw_session [RUNTIME]` (default: the installed pinned runtime). Exit 0 when the
//! answer is the scripted one.

use std::sync::Arc;
use std::time::Duration;

use copilot_eval_bench::{ANSWER, MODEL, PROMPT, get_weather, script};
use copilot_eval_core::model_server::{ModelServer, ServerConfig};
use copilot_eval_core::runtime;
use github_copilot_sdk::{CliProgram, Client, ClientOptions, SessionConfig};

/// The token the offline runtime is given (never sent anywhere but the loopback server).
const PLACEHOLDER_TOKEN: &str = "raw-session-offline-token";

#[tokio::main]
async fn main() -> Result<(), String> {
    let exe = match std::env::args_os().nth(1) {
        Some(path) => path.into(),
        None => runtime::resolve().map_err(|e| e.to_string())?.path,
    };
    let server = ModelServer::start(ServerConfig::new(Arc::new(script())).model(MODEL))
        .await
        .map_err(|e| e.to_string())?;
    let home = tempfile::tempdir().map_err(|e| e.to_string())?;
    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    let cache = runtime::runtime_cache_dir();
    let url = server.base_url();
    let options = ClientOptions::new()
        .with_program(CliProgram::Path(exe))
        .with_cwd(work.path().to_path_buf())
        .with_env([
            ("COPILOT_HOME", home.path().as_os_str()),
            ("GH_CONFIG_DIR", home.path().as_os_str()),
            ("XDG_CONFIG_HOME", home.path().as_os_str()),
            ("XDG_STATE_HOME", home.path().as_os_str()),
            ("XDG_CACHE_HOME", cache.as_os_str()),
            ("COPILOT_CACHE_HOME", cache.as_os_str()),
            ("COPILOT_API_URL", url.as_ref()),
            ("COPILOT_DEBUG_GITHUB_API_URL", url.as_ref()),
            ("GH_TOKEN", PLACEHOLDER_TOKEN.as_ref()),
            ("GITHUB_TOKEN", PLACEHOLDER_TOKEN.as_ref()),
            ("COPILOT_GITHUB_TELEMETRY_DISABLED", "true".as_ref()),
        ])
        .with_github_token(PLACEHOLDER_TOKEN);
    let client = Client::start(options).await.map_err(|e| e.to_string())?;
    let config = SessionConfig::default()
        .with_model(MODEL)
        .with_working_directory(work.path().to_path_buf())
        .with_tools([get_weather()])
        .with_github_token(PLACEHOLDER_TOKEN)
        // As copilot-eval configures an offline session (`offline_settings` in
        // copilot-eval-core's run/session.rs): the builtin GitHub MCP server and the session
        // telemetry left out, since neither can work against the loopback server.
        .with_disabled_mcp_servers(["github-mcp-server"])
        .with_enable_session_telemetry(false)
        .approve_all_permissions();
    let session = client
        .create_session(config)
        .await
        .map_err(|e| e.to_string())?;
    let answer = session
        .send_and_wait(
            github_copilot_sdk::MessageOptions::new(PROMPT)
                .with_wait_timeout(Duration::from_secs(120)),
        )
        .await
        .map_err(|e| e.to_string())?;
    let text = serde_json::to_string(&answer.map(|event| event.data)).unwrap_or_default();
    session.disconnect().await.map_err(|e| e.to_string())?;
    client.stop().await.map_err(|e| format!("{e:?}"))?;
    if text.contains(ANSWER) {
        Ok(())
    } else {
        Err(format!("unexpected answer: {text}"))
    }
}
