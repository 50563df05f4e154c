//! The spike of issue 15 (warm runtimes): runtimes listening on a loopback port
//! (`copilot --server --port 0`, the offline environment of a run, a home of their own) and
//! clients in OTHER processes (`pool_spike client ...`) that connect to them
//! (`Transport::External`). Each client creates one session with its own working directory,
//! `config_directory`, chosen session id, the custom tool `get_weather`, a counting permission
//! handler and a pre-tool hook; the model calls the tool with the client's city, then answers
//! `answer of <city>`. A client is "only its own" when its tool call, hook and answer are its
//! own (and, where it has a model server of its own, that server answered both turns; where it
//! has a request handler, the handler saw only its own session). Phases, printed in order:
//!
//! - 0: `Client::start` of a fresh runtime over stdio, for the cost comparison;
//! - A: clients WITH a request handler each, two at once, then one after them (the runtime
//!   accepts one handler: the others fail in `Client::start`), and what the shared
//!   `COPILOT_HOME` holds;
//! - A2: a client without a handler on A's runtime once the handler's client is gone;
//! - B: clients without a handler, all answered by the runtime's `COPILOT_API_URL` server;
//! - C: as B, but `COPILOT_API_URL` is a routing front that sends each model request to the
//!   client's own server by its `x-client-session-id` header (session id `pool-<PORT>-<city>`);
//!   the runtime runs with `--log-level none`, and its log is checked for the sessions' prompts;
//! - D: as C, but the routing is done by this process's own client, the runtime's only request
//!   handler, by the handler context's session id.
//!
//! Usage: `cargo run -p copilot-eval-bench --bin pool_spike [-- RUNTIME]` (default: the
//! installed pinned runtime). Exit 0 when every client of B, C and D was only its own. The
//! findings are written up in `docs/performance.md`.

use std::collections::BTreeSet;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use copilot_eval_bench::{MODEL, parameters};
use copilot_eval_core::model_server::{
    ModelRequest, ModelServer, Reply, Responder, Script, ScriptedTurn, ServerConfig,
};
use copilot_eval_core::runtime;
use github_copilot_sdk::copilot_request_handler::{
    CopilotHttpRequest, CopilotHttpResponse, CopilotRequestContext, CopilotRequestError,
    CopilotRequestHandler, forward_http,
};
use github_copilot_sdk::handler::{PermissionHandler, PermissionResult};
use github_copilot_sdk::hooks::{HookContext, PreToolUseInput, PreToolUseOutput, SessionHooks};
use github_copilot_sdk::{
    Client, ClientOptions, MessageOptions, PermissionRequestData, RequestId, SessionConfig,
    SessionId, Transport,
};
use serde_json::{Value, json};

const TOKEN: &str = "pool-spike-offline-token";

/// Sends every model request to this client's own server; records what it saw.
struct Router {
    account_url: String,
    own_url: String,
    seen: Mutex<Vec<(Option<String>, String)>>,
}

#[async_trait]
impl CopilotRequestHandler for Router {
    async fn send_request(
        &self,
        mut request: CopilotHttpRequest,
        ctx: &CopilotRequestContext,
    ) -> Result<CopilotHttpResponse, CopilotRequestError> {
        self.seen
            .lock()
            .unwrap()
            .push((ctx.session_id.clone(), request.url.clone()));
        if let Some(rest) = request.url.strip_prefix(&self.account_url) {
            request.url = format!("{}{rest}", self.own_url);
        }
        forward_http(request).await
    }
}

/// The runtime-level model: calls `get_weather` for the city named last in the prompt, then
/// answers `answer of <city>` (so a session answered for another prompt is seen).
struct ByPrompt;

#[async_trait]
impl Responder for ByPrompt {
    async fn respond(&self, request: &ModelRequest) -> Reply {
        let text = request.last_user_text().unwrap_or_default();
        let tag = text
            .split_whitespace()
            .last()
            .unwrap_or_default()
            .trim_end_matches('?')
            .to_owned();
        if request.tool_results().is_empty() {
            Reply::Message(ScriptedTurn::tool_call("get_weather", json!({"city": tag})))
        } else {
            Reply::Message(ScriptedTurn::text(format!("answer of {tag}")))
        }
    }
}

struct Count(Arc<AtomicUsize>);

#[async_trait]
impl PermissionHandler for Count {
    async fn handle(
        &self,
        _session_id: SessionId,
        _request_id: RequestId,
        _data: PermissionRequestData,
    ) -> PermissionResult {
        self.0.fetch_add(1, Ordering::SeqCst);
        PermissionResult::approve_once()
    }
}

struct Hooks(Arc<Mutex<Vec<String>>>);

#[async_trait]
impl SessionHooks for Hooks {
    async fn on_pre_tool_use(
        &self,
        input: PreToolUseInput,
        _ctx: HookContext,
    ) -> Option<PreToolUseOutput> {
        self.0.lock().unwrap().push(input.tool_name.clone());
        None
    }
}

async fn client(
    port: u16,
    tag: &str,
    account_url: &str,
    exe: &str,
    mode: &str,
) -> Result<Value, String> {
    let with_handler = mode == "handler";
    let answer = format!("answer of {tag}");
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call("get_weather", json!({"city": tag})))
        .turn(ScriptedTurn::text(answer.clone()));
    let server = ModelServer::start(ServerConfig::new(Arc::new(script)).model(MODEL))
        .await
        .map_err(|e| e.to_string())?;
    let router = Arc::new(Router {
        account_url: account_url.to_owned(),
        own_url: server.base_url(),
        seen: Mutex::default(),
    });
    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    let config_dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(work.path().join(format!("{tag}.txt")), tag).map_err(|e| e.to_string())?;
    let cities = Arc::new(Mutex::new(Vec::<String>::new()));
    let tool_cities = cities.clone();
    let tool = copilot_eval_core::tools::function_tool(
        "get_weather",
        "The current weather of a city.",
        parameters(),
        move |args| {
            let cities = tool_cities.clone();
            async move {
                cities
                    .lock()
                    .unwrap()
                    .push(args["city"].as_str().unwrap_or_default().to_owned());
                Ok("sunny".to_owned())
            }
        },
    );
    let permissions = Arc::new(AtomicUsize::new(0));
    let hooks = Arc::new(Mutex::new(Vec::new()));

    let t = Instant::now();
    let mut options = ClientOptions::new()
        .with_transport(Transport::External {
            host: "127.0.0.1".into(),
            port,
            connection_token: None,
        })
        .with_program(github_copilot_sdk::CliProgram::Path(exe.into()));
    if with_handler {
        options = options.with_request_handler(router.clone());
    }
    let client = Client::start(options).await.map_err(|e| e.to_string())?;
    let connect_ms = t.elapsed().as_millis();
    let before: Vec<String> = client
        .list_sessions(None)
        .await
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|s| s.session_id.to_string())
        .collect();

    eprintln!("{tag}: connected in {connect_ms} ms");
    let t = Instant::now();
    let session = client
        .create_session(
            SessionConfig::default()
                .with_model(MODEL)
                .with_session_id(if mode == "routed" {
                    // The routing front reads the eval's model server from the session id.
                    format!("pool-{}-{tag}", server.local_addr().port())
                } else {
                    format!("spike-{tag}-{}", std::process::id())
                })
                .with_working_directory(work.path().to_path_buf())
                .with_config_directory(config_dir.path().to_path_buf())
                .with_tools([tool])
                .with_github_token(TOKEN)
                .with_permission_handler(Arc::new(Count(permissions.clone())))
                .with_hooks(Arc::new(Hooks(hooks.clone()))),
        )
        .await
        .map_err(|e| e.to_string())?;
    let session_ms = t.elapsed().as_millis();
    let during: Vec<String> = client
        .list_sessions(None)
        .await
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|s| s.session_id.to_string())
        .collect();
    eprintln!("{tag}: session in {session_ms} ms");
    let t = Instant::now();
    let reply = session
        .send_and_wait(
            MessageOptions::new(format!("Weather in {tag}?"))
                .with_wait_timeout(Duration::from_secs(if with_handler { 120 } else { 30 })),
        )
        .await
        .map_err(|e| e.to_string())?;
    let turns_ms = t.elapsed().as_millis();
    let text = serde_json::to_string(&reply.map(|e| e.data)).unwrap_or_default();
    let id = session.id().to_string();
    session.disconnect().await.map_err(|e| e.to_string())?;
    let t = Instant::now();
    client.stop().await.map_err(|e| format!("{e:?}"))?;
    let stop_ms = t.elapsed().as_millis();

    let seen = router.seen.lock().unwrap().clone();
    let session_ids: BTreeSet<String> = seen.iter().filter_map(|(s, _)| s.clone()).collect();
    let model_requests = server.model_requests();
    let mut config_files = Vec::new();
    tree(config_dir.path(), config_dir.path(), &mut config_files);
    config_files.sort();
    let result = json!({
        "tag": tag,
        "session_id": id,
        "answer_is_own": text.contains(&answer),
        "handler_session_ids": session_ids,
        "handler_requests": seen.iter().map(|(s, u)| format!("{s:?} {u}")).collect::<Vec<_>>(),
        "own_server_model_requests": model_requests.len(),
        "tool_cities": *cities.lock().unwrap(),
        "hooks": *hooks.lock().unwrap(),
        "permission_requests": permissions.load(Ordering::SeqCst),
        "sessions_listed_before_create": before,
        "sessions_listed_while_live": during,
        "config_directory_files": config_files,
        "ms": {"connect": connect_ms, "create_session": session_ms, "turns": turns_ms, "stop": stop_ms},
    });
    server.shutdown().await;
    Ok(result)
}

fn spawn_client(
    port: u16,
    tag: &str,
    account_url: &str,
    exe: &Path,
    mode: &str,
) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .stderr(Stdio::piped())
        .args(["client", &port.to_string(), tag, account_url])
        .arg(exe)
        .arg(mode)
        .stdout(Stdio::piped())
        .spawn()
        .expect("client starts")
}

fn collect(child: std::process::Child) -> Result<Value, String> {
    let out = child.wait_with_output().expect("client ends");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().last().unwrap_or_default();
    serde_json::from_str(line)
        .map_err(|_| format!("{}: {}", out.status, String::from_utf8_lossy(&out.stderr)))
}

fn tree(dir: &Path, root: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            tree(&path, root, out);
        } else {
            out.push(
                path.strip_prefix(root)
                    .unwrap_or(&path)
                    .display()
                    .to_string(),
            );
        }
    }
}

/// Prints, for each `*.log` under `home`, its size and which of `tags` (the prompts' cities) it
/// names; returns every file under `home`.
fn named_in_logs(phase: &str, home: &Path, tags: &[&str]) -> Vec<String> {
    let mut files = Vec::new();
    tree(home, home, &mut files);
    for file in files.iter().filter(|f| f.ends_with(".log")) {
        let text = std::fs::read_to_string(home.join(file)).unwrap_or_default();
        let named: Vec<&str> = tags
            .iter()
            .copied()
            .filter(|tag| text.contains(tag))
            .collect();
        println!(
            "{phase}: the shared log {file} ({} bytes) names the sessions of {named:?}",
            text.len()
        );
    }
    files
}

/// Phase D: the parent's own client is the runtime's only request handler; it sends a model
/// request of session `pool-<PORT>-...` to `http://127.0.0.1:<PORT>`, others unchanged.
struct BySession {
    account_url: String,
    seen: Mutex<Vec<(Option<String>, String)>>,
}

#[async_trait]
impl CopilotRequestHandler for BySession {
    async fn send_request(
        &self,
        mut request: CopilotHttpRequest,
        ctx: &CopilotRequestContext,
    ) -> Result<CopilotHttpResponse, CopilotRequestError> {
        self.seen
            .lock()
            .unwrap()
            .push((ctx.session_id.clone(), request.url.clone()));
        let port = ctx
            .session_id
            .as_deref()
            .and_then(|id| id.strip_prefix("pool-"))
            .and_then(|rest| rest.split('-').next());
        if let (Some(port), Some(rest)) = (port, request.url.strip_prefix(&self.account_url)) {
            request.url = format!("http://127.0.0.1:{port}{rest}");
        }
        forward_http(request).await
    }
}

/// A listening runtime: the process, its port, its home, how long until it listened (ms).
struct Listening {
    process: std::process::Child,
    port: u16,
    home: tempfile::TempDir,
    _cwd: tempfile::TempDir,
    listen_ms: u128,
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

fn listen(exe: &Path, url: &str, extra: &[&str]) -> Result<Listening, String> {
    let home = tempfile::tempdir().map_err(|e| e.to_string())?;
    let cwd = tempfile::tempdir().map_err(|e| e.to_string())?;
    let cache = runtime::runtime_cache_dir();
    let t = Instant::now();
    let mut process = Command::new(exe)
        .args([
            "--server",
            "--port",
            "0",
            "--no-auto-update",
            "--auth-token-env",
            "COPILOT_SDK_AUTH_TOKEN",
            "--no-auto-login",
        ])
        .args(extra)
        .current_dir(cwd.path())
        .env("COPILOT_SDK_AUTH_TOKEN", TOKEN)
        .envs([
            ("COPILOT_HOME", home.path().as_os_str()),
            ("GH_CONFIG_DIR", home.path().as_os_str()),
            ("XDG_CONFIG_HOME", home.path().as_os_str()),
            ("XDG_STATE_HOME", home.path().as_os_str()),
            ("XDG_CACHE_HOME", cache.as_os_str()),
            ("COPILOT_CACHE_HOME", cache.as_os_str()),
            ("COPILOT_API_URL", url.as_ref()),
            ("COPILOT_DEBUG_GITHUB_API_URL", url.as_ref()),
            ("GH_TOKEN", TOKEN.as_ref()),
            ("GITHUB_TOKEN", TOKEN.as_ref()),
            ("COPILOT_GITHUB_TELEMETRY_DISABLED", "true".as_ref()),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut lines = std::io::BufReader::new(process.stdout.take().unwrap()).lines();
    let port = loop {
        let Some(Ok(line)) = lines.next() else {
            let _ = process.kill();
            let _ = process.wait();
            return Err("the runtime ended before it listened".into());
        };
        if let Some(port) = line
            .split("listening on port ")
            .nth(1)
            .and_then(|p| p.trim().parse().ok())
        {
            break port;
        }
    };
    let listen_ms = t.elapsed().as_millis();
    std::thread::spawn(move || for _ in lines {});
    Ok(Listening {
        process,
        port,
        home,
        _cwd: cwd,
        listen_ms,
    })
}

/// Whether the client's session went only through its own client (tool, hook, answer; with a
/// handler also: the handler saw only its own session and its own server answered).
fn own(r: &Value, mode: &str) -> bool {
    let own_id = r["session_id"].as_str().unwrap_or_default();
    r["answer_is_own"] == true
        && r["tool_cities"] == json!([r["tag"]])
        && r["hooks"] == json!(["get_weather"])
        && match mode {
            "handler" => {
                r["handler_session_ids"] == json!([own_id]) && r["own_server_model_requests"] == 2
            }
            "routed" => r["own_server_model_requests"] == 2,
            _ => true,
        }
}

fn report(label: &str, outcome: &Result<Value, String>, mode: &str) -> bool {
    match outcome {
        Ok(r) => {
            let own = own(r, mode);
            println!(
                "{label} {}: completed; only its own client: {own}",
                r["tag"]
            );
            println!("  {r}");
            own
        }
        Err(e) => {
            let error = e.lines().find(|l| l.contains("Error")).unwrap_or(e);
            println!("{label}: failed: {error}");
            false
        }
    }
}

/// Phase C's routing front, the runtime's `COPILOT_API_URL`: a model request whose
/// `x-client-session-id` is `pool-<PORT>-...` goes to `http://127.0.0.1:<PORT>`, anything else
/// to the default server. Logs `(path, session id)` of every request.
struct Front {
    default_url: String,
    http: reqwest::Client,
    log: Mutex<Vec<(String, String)>>,
}

async fn route(
    axum::extract::State(front): axum::extract::State<Arc<Front>>,
    request: axum::extract::Request,
) -> axum::response::Response {
    let (parts, body) = request.into_parts();
    let session = parts
        .headers
        .get("x-client-session-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-")
        .to_owned();
    let path = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_default();
    front
        .log
        .lock()
        .unwrap()
        .push((parts.uri.path().to_owned(), session.clone()));
    let base = match session
        .strip_prefix("pool-")
        .and_then(|rest| rest.split('-').next())
    {
        Some(port) => format!("http://127.0.0.1:{port}"),
        None => front.default_url.clone(),
    };
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let mut upstream = front.http.request(parts.method, format!("{base}{path}"));
    for (name, value) in &parts.headers {
        if name != "host" && name != "content-length" {
            upstream = upstream.header(name, value);
        }
    }
    match upstream.body(body).send().await {
        Ok(answer) => {
            let mut response = axum::response::Response::builder().status(answer.status());
            for (name, value) in answer.headers() {
                if name != "content-length" && name != "transfer-encoding" {
                    response = response.header(name, value);
                }
            }
            let bytes = answer.bytes().await.unwrap_or_default();
            response.body(axum::body::Body::from(bytes)).unwrap()
        }
        Err(e) => axum::response::Response::builder()
            .status(502)
            .body(axum::body::Body::from(e.to_string()))
            .unwrap(),
    }
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("client") {
        let port: u16 = args[1].parse().map_err(|_| "PORT")?;
        let value = client(port, &args[2], &args[3], &args[4], &args[5]).await?;
        println!("{value}");
        return Ok(());
    }
    let exe: PathBuf = match args.first() {
        Some(path) => path.into(),
        None => runtime::resolve().map_err(|e| e.to_string())?.path,
    };
    // The runtime-level server: the account answer, and the model for clients without a
    // request handler.
    let account = ModelServer::start(ServerConfig::new(Arc::new(ByPrompt)).model(MODEL))
        .await
        .map_err(|e| e.to_string())?;
    let url = account.base_url();

    println!("== 0: for comparison, Client::start of a fresh runtime over stdio, then stop");
    {
        let home = tempfile::tempdir().map_err(|e| e.to_string())?;
        let cache = runtime::runtime_cache_dir();
        let options = ClientOptions::new()
            .with_program(github_copilot_sdk::CliProgram::Path(exe.clone()))
            .with_cwd(home.path().to_path_buf())
            .with_env([
                ("COPILOT_HOME", home.path().as_os_str()),
                ("XDG_CONFIG_HOME", home.path().as_os_str()),
                ("XDG_STATE_HOME", home.path().as_os_str()),
                ("XDG_CACHE_HOME", cache.as_os_str()),
                ("COPILOT_CACHE_HOME", cache.as_os_str()),
                ("COPILOT_API_URL", url.as_ref()),
                ("COPILOT_DEBUG_GITHUB_API_URL", url.as_ref()),
                ("COPILOT_GITHUB_TELEMETRY_DISABLED", "true".as_ref()),
            ])
            .with_github_token(TOKEN);
        let t = Instant::now();
        let client = Client::start(options).await.map_err(|e| e.to_string())?;
        let start_ms = t.elapsed().as_millis();
        let t = Instant::now();
        client.stop().await.map_err(|e| format!("{e:?}"))?;
        println!(
            "0: Client::start {start_ms} ms, stop {} ms",
            t.elapsed().as_millis()
        );
    }
    println!("== A: clients WITH a request handler (each its own model server)");
    let a = listen(&exe, &url, &[])?;
    println!("runtime listening after {} ms", a.listen_ms);
    let (one, two) = (
        spawn_client(a.port, "Alpha", &url, &exe, "handler"),
        spawn_client(a.port, "Bravo", &url, &exe, "handler"),
    );
    let (one, two) = (collect(one), collect(two));
    report("A concurrent", &one, "handler");
    report("A concurrent", &two, "handler");
    let three = collect(spawn_client(a.port, "Charlie", &url, &exe, "handler"));
    report("A after both ended", &three, "handler");
    let model_requests = account.model_requests().len();
    println!("A: the runtime-level server got {model_requests} model requests");
    let mut left = Vec::new();
    tree(a.home.path(), a.home.path(), &mut left);
    left.sort();
    println!("A: left in the shared COPILOT_HOME ({} files):", left.len());
    for file in &left {
        println!("  {file}");
    }
    println!("== A2: a client WITHOUT a handler on the runtime whose provider client is gone");
    let four = collect(spawn_client(a.port, "Delta", &url, &exe, "plain"));
    report("A2", &four, "plain");
    println!(
        "A2: the runtime-level server got {} model requests",
        account.model_requests().len() - model_requests
    );
    drop(a);

    println!("== B: clients WITHOUT a request handler (one runtime-level model server)");
    let b = listen(&exe, &url, &[])?;
    let before = account.model_requests().len();
    let (one, two) = (
        spawn_client(b.port, "Echo", &url, &exe, "plain"),
        spawn_client(b.port, "Foxtrot", &url, &exe, "plain"),
    );
    let (one, two) = (collect(one), collect(two));
    let mut ok = report("B concurrent", &one, "plain");
    ok &= report("B concurrent", &two, "plain");
    let three = collect(spawn_client(b.port, "Golf", &url, &exe, "plain"));
    ok &= report("B after both ended", &three, "plain");
    println!(
        "B: the runtime-level server got {} model requests",
        account.model_requests().len() - before
    );
    let mut left = Vec::new();
    tree(b.home.path(), b.home.path(), &mut left);
    left.sort();
    println!("B: left in the shared COPILOT_HOME ({} files):", left.len());
    for file in &left {
        println!("  {file}");
    }
    named_in_logs("B", b.home.path(), &["Echo", "Foxtrot", "Golf"]);
    if let Some(request) = account
        .requests()
        .iter()
        .rev()
        .find(|r| r.path == "/chat/completions")
    {
        let names: Vec<String> = request
            .headers
            .iter()
            .map(|(n, v)| format!("{n}={}", v.chars().take(60).collect::<String>()))
            .collect();
        println!("B: headers of a model request (session spike-Golf-*): {names:?}");
    }
    drop(b);

    println!(
        "== C: clients WITHOUT a handler; a routing front picks each session's server; the runtime runs with --log-level none"
    );
    let front = Arc::new(Front {
        default_url: url.clone(),
        http: reqwest::Client::new(),
        log: Mutex::default(),
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let front_url = format!(
        "http://{}",
        listener.local_addr().map_err(|e| e.to_string())?
    );
    let app = axum::Router::new()
        .fallback(route)
        .with_state(front.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let c = listen(&exe, &front_url, &["--log-level", "none"])?;
    let before = account.model_requests().len();
    let (one, two) = (
        spawn_client(c.port, "Hotel", &front_url, &exe, "routed"),
        spawn_client(c.port, "India", &front_url, &exe, "routed"),
    );
    let (one, two) = (collect(one), collect(two));
    ok &= report("C concurrent", &one, "routed");
    ok &= report("C concurrent", &two, "routed");
    let three = collect(spawn_client(c.port, "Juliet", &front_url, &exe, "routed"));
    ok &= report("C after both ended", &three, "routed");
    println!(
        "C: the default server got {} model requests",
        account.model_requests().len() - before
    );
    println!("C: requests through the front (path, x-client-session-id):");
    for (path, session) in front.log.lock().unwrap().iter() {
        println!("  {path} {session}");
    }
    println!(
        "C: files in the shared COPILOT_HOME: {:?}",
        named_in_logs("C", c.home.path(), &["Hotel", "India", "Juliet"])
    );
    drop(c);

    println!(
        "== D: the parent's client is the only request handler; clients WITHOUT a handler choose their session ids"
    );
    let d = listen(&exe, &url, &["--log-level", "none"])?;
    let by_session = Arc::new(BySession {
        account_url: url.clone(),
        seen: Mutex::default(),
    });
    let owner = Client::start(
        ClientOptions::new()
            .with_transport(Transport::External {
                host: "127.0.0.1".into(),
                port: d.port,
                connection_token: None,
            })
            .with_program(github_copilot_sdk::CliProgram::Path(exe.clone()))
            .with_request_handler(by_session.clone()),
    )
    .await
    .map_err(|e| e.to_string())?;
    let before = account.model_requests().len();
    let (one, two) = (
        spawn_client(d.port, "Kilo", &url, &exe, "routed"),
        spawn_client(d.port, "Lima", &url, &exe, "routed"),
    );
    let (one, two) = (collect(one), collect(two));
    ok &= report("D concurrent", &one, "routed");
    ok &= report("D concurrent", &two, "routed");
    let three = collect(spawn_client(d.port, "Mike", &url, &exe, "routed"));
    ok &= report("D after both ended", &three, "routed");
    println!(
        "D: the default server got {} model requests",
        account.model_requests().len() - before
    );
    println!("D: requests the owner's handler saw (session id, url):");
    for (session, url) in by_session.seen.lock().unwrap().iter() {
        println!("  {session:?} {url}");
    }
    let _ = owner.stop().await;
    drop(d);
    account.shutdown().await;
    if ok {
        Ok(())
    } else {
        Err("a check failed (see above)".into())
    }
}
