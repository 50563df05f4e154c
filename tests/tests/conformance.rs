//! probe
use std::path::Path;
use std::sync::Arc;

use copilot_eval_core::model_server::{ModelServer, Script, ServerConfig};
use copilot_eval_core::sdk::{self, CliProgram, Client, ClientOptions, SessionConfig};
use copilot_eval_core::runtime;
use copilot_eval_e2e::runtime_for;

const MODEL: &str = "claude-sonnet-4.5";

async fn probe(runtime: &Path, work: &Path) -> serde_json::Value {
    use copilot_eval_core::model_server::ScriptedTurn;
    let task = std::env::var("PROBE_TASK").ok();
    let script = match &task {
        Some(t) => Script::new([]).turn(ScriptedTurn::tool_call("task", serde_json::json!({"agent_type": t, "name": "x", "prompt": "Do it.", "description": "Do it"}))).turn(ScriptedTurn::text("sub done")).turn(ScriptedTurn::text("main done")),
        None => Script::new([]),
    };
    let server = ModelServer::start(ServerConfig::new(Arc::new(script)).model(MODEL)).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let cache = runtime::runtime_cache_dir();
    let base = server.base_url();
    let token = copilot_eval_core::run::OFFLINE_TOKEN;
    let env: Vec<(std::ffi::OsString, std::ffi::OsString)> = vec![
        ("COPILOT_HOME".into(), home.path().into()),
        ("GH_CONFIG_DIR".into(), home.path().into()),
        ("XDG_CONFIG_HOME".into(), home.path().into()),
        ("XDG_STATE_HOME".into(), home.path().into()),
        ("XDG_CACHE_HOME".into(), cache.clone().into()),
        ("COPILOT_CACHE_HOME".into(), cache.into()),
        ("COPILOT_GITHUB_TELEMETRY_DISABLED".into(), "true".into()),
        ("COPILOT_API_URL".into(), base.clone().into()),
        ("COPILOT_DEBUG_GITHUB_API_URL".into(), base.into()),
        ("GH_TOKEN".into(), token.into()),
        ("GITHUB_TOKEN".into(), token.into()),
    ];
    let options = ClientOptions::new()
        .with_program(CliProgram::Path(runtime.to_path_buf()))
        .with_cwd(work.to_path_buf())
        .with_github_token(token)
        .with_env(env);
    let client = Client::start(options).await.unwrap();
    let config = SessionConfig::default()
        .with_working_directory(work)
        .with_enable_config_discovery(true)
        .with_trust_working_directory(sdk::WorkingDirectoryTrust::Session)
        .with_github_token(token)
        .with_model(MODEL)
        .with_permission_handler(Arc::new(sdk::handler::ApproveAllHandler));
    let session = client.create_session(config).await.unwrap();
    let rpc = session.rpc();
    let diag = rpc.skills().reload().await.map(|d| serde_json::to_value(d).unwrap()).unwrap_or_else(|e| serde_json::json!(e.to_string()));
    let skills = rpc.skills().list().await.map(|d| serde_json::to_value(d).unwrap()).unwrap_or_else(|e| serde_json::json!(e.to_string()));
    let agents = rpc.agent().list().await.map(|d| serde_json::to_value(d).unwrap()).unwrap_or_else(|e| serde_json::json!(e.to_string()));
    let instr = rpc.instructions().get_sources().await.map(|d| serde_json::to_value(d).unwrap()).unwrap_or_else(|e| serde_json::json!(e.to_string()));
    let mut reqs = Vec::new();
    if task.is_some() {
        let r = session.send_and_wait("go").await;
        reqs.push(serde_json::json!(format!("{r:?}").chars().take(300).collect::<String>()));
        for q in server.model_requests() {
            reqs.push(serde_json::json!({"tools": q.tool_names, "last": q.messages.last(), "sys": q.messages.first().map(|m| m.to_string().chars().take(200).collect::<String>())}));
        }
        let first = server.model_requests().first().map(|q| q.body.to_string()).unwrap_or_default();
        if let Some(i) = first.find("agent_type") { reqs.push(serde_json::json!(first[i.saturating_sub(3000)..(i+1500).min(first.len())].to_string())); }
    }
    let _ = session.disconnect().await;
    let _ = client.stop().await;
    serde_json::json!({"diag": diag, "skills": skills, "agents": agents, "instructions": instr, "reqs": reqs})
}

fn write(root: &Path, files: &[(&str, &str)]) {
    for (p, c) in files {
        let p = root.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, c).unwrap();
    }
}

#[tokio::test]
async fn probe_runtime() {
    let Some(rt) = runtime_for("probe_runtime") else { return };
    let work = tempfile::tempdir().unwrap();
    let files: Vec<(String, String)> = serde_json::from_str(&std::fs::read_to_string(std::env::var("PROBE").unwrap()).unwrap()).unwrap();
    let files: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    write(work.path(), &files);
    let out = probe(&rt.path, work.path()).await;
    println!("PROBE-OUT {}", serde_json::to_string_pretty(&out).unwrap());
}
