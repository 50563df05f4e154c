//! Recording sessions into cassettes, end to end through the real runtime: a scripted loopback
//! model server stands in for the model service while a run records through the request seam
//! ([`RunOptions::record`]); the cassette is written, read back, and replayed through the real
//! runtime in a fresh working directory; the two runs' evidence must be the same apart from
//! timings, working directories and generated ids. The stand-in reports distinct, non-default
//! token usage on every turn, so the replay must answer with the recorded usage.
//!
//! Sessions: a text answer; built-in and custom tools with parallel calls over two turns (on each
//! wire format); a subagent dispatched with `task`. And a canary: secrets never reach a cassette.

use std::path::Path;
use std::sync::Arc;

use copilot_eval_core::cassette::{Cassette, CassetteHeader, RecordError, Recorder, ReplaySession};
use copilot_eval_core::eval::CopilotEvalBuilder;
use copilot_eval_core::model_server::{
    DEFAULT_USAGE, ModelServer, Script, ScriptedTurn, ScriptedUsage, ServerConfig, WireApi,
};
use copilot_eval_core::report::{Redactor, RunRecord};
use copilot_eval_core::sdk::CustomAgentConfig;
use copilot_eval_core::tools::function_tool;
use copilot_eval_core::{CopilotEval, CopilotResult, RunOptions, StopReason, run_turns};
use copilot_eval_e2e::{assert_no_runtime_left, comparable_evidence, runtime_for, scrub_evidence};
use serde_json::{Value, json};

const MODEL: &str = "claude-sonnet-4.5";

/// A custom tool that answers `noted: <text>`.
fn note_tool() -> copilot_eval_core::sdk::Tool {
    function_tool(
        "note",
        "Write down a note.",
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        |args| async move { Ok(format!("noted: {}", args["text"].as_str().unwrap_or(""))) },
    )
}

/// One session to record and replay: the eval (without model and working directory), its
/// prompts (one turn each), and the script standing in for the model, given the working
/// directory of the recording.
struct Session {
    name: &'static str,
    wire: WireApi,
    eval: fn() -> CopilotEvalBuilder,
    prompts: &'static [&'static str],
    script: fn(&Path) -> Script,
}

/// Records `session` against the scripted stand-in, writes the cassette, replays it in a fresh
/// working directory, and checks both runs; returns the cassette text.
async fn record_then_replay(session: &Session) -> String {
    let test = format!("record_then_replay({})", session.name);
    let Some(runtime) = runtime_for(&test) else {
        return String::new();
    };
    let prompts: Vec<String> = session.prompts.iter().map(|p| (*p).to_owned()).collect();

    // 1. Record: the scripted server stands in for the model service.
    let recording_dir = tempfile::tempdir().unwrap();
    let server = ModelServer::start(
        ServerConfig::new(Arc::new((session.script)(recording_dir.path())))
            .wire_api(session.wire)
            .model(MODEL),
    )
    .await
    .unwrap();
    let recorder = Recorder::new();
    let eval = (session.eval)()
        .model(MODEL)
        .working_directory(recording_dir.path())
        .build()
        .unwrap();
    let recorded = run_turns(
        &eval,
        &prompts,
        &RunOptions::offline(server.base_url())
            .runtime_path(&runtime.path)
            .record(recorder.clone()),
    )
    .await;
    server.shutdown().await;
    assert!(
        recorded.success,
        "{test}: recording run: {}: {:?}",
        recorded.stop_reason, recorded.error
    );
    assert_no_runtime_left(&recorded);
    let header = CassetteHeader {
        runtime_version: Some("1.0.102".to_owned()),
        ..Default::default()
    };
    let cassette = recorder
        .cassette(header, &Redactor::default())
        .unwrap_or_else(|e| panic!("{test}: {e}\n{:#?}", recorder.exchanges()));
    assert_eq!(cassette.header.wire_format, Some(session.wire), "{test}");
    assert_eq!(cassette.header.model.as_deref(), Some(MODEL), "{test}");
    let store = tempfile::tempdir().unwrap();
    let path = store.path().join(format!("{}.yaml", session.name));
    cassette
        .write(&path, &format!("recorded by the {test} test"))
        .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let recording_dir_text = recording_dir.path().display().to_string();
    assert!(
        !text.contains(&recording_dir_text),
        "{test}: the working directory became ${{workdir}}:\n{text}"
    );
    assert!(text.starts_with("# recorded by the"), "{text}");

    // 2. Replay in a fresh working directory.
    let replay_dir = tempfile::tempdir().unwrap();
    let replay = ReplaySession::start(&path)
        .await
        .unwrap_or_else(|e| panic!("{test}: {e}\n{text}"));
    let eval = (session.eval)()
        .model(replay.model())
        .working_directory(replay_dir.path())
        .build()
        .unwrap();
    let replayed = run_turns(
        &eval,
        &prompts,
        &replay.run_options().runtime_path(&runtime.path),
    )
    .await;
    let unconsumed = replay.unconsumed();
    replay.shutdown().await;
    assert_eq!(
        replayed.stop_reason,
        StopReason::Completed,
        "{test}: replay: {:?}\n{text}",
        replayed.error
    );
    assert!(unconsumed.is_empty(), "{test}: {unconsumed:?}");
    assert_no_runtime_left(&replayed);

    // 3. The same evidence, the recorded (non-default) token usage included.
    let tokens = |result: &CopilotResult| -> Vec<(Option<String>, ScriptedUsage)> {
        result
            .usage
            .iter()
            .map(|u| {
                let usage = ScriptedUsage {
                    input_tokens: u.input_tokens,
                    output_tokens: u.output_tokens,
                    cache_read_tokens: u.cache_read_tokens,
                    cache_write_tokens: u.cache_write_tokens,
                };
                (u.model.clone(), usage)
            })
            .collect()
    };
    let recorded_tokens = tokens(&recorded);
    assert!(!recorded_tokens.is_empty(), "{test}: no usage was recorded");
    assert!(
        recorded_tokens.iter().all(|(_, u)| *u != DEFAULT_USAGE),
        "{test}: the stand-in reported the default usage: {recorded_tokens:?}"
    );
    assert!(text.contains("usage:"), "{test}: no usage stored:\n{text}");
    assert_eq!(
        recorded_tokens,
        tokens(&replayed),
        "{test}: recorded and replayed usage differ\n{text}"
    );
    assert_eq!(
        comparable_evidence(&recorded, recording_dir.path()),
        comparable_evidence(&replayed, replay_dir.path()),
        "{test}: recorded and replayed evidence differ\n{text}"
    );
    text
}

fn plain_eval() -> CopilotEvalBuilder {
    CopilotEval::builder().timeout_s(90.0)
}

fn tools_eval() -> CopilotEvalBuilder {
    CopilotEval::builder().timeout_s(90.0).tool(note_tool())
}

fn subagent_eval() -> CopilotEvalBuilder {
    CopilotEval::builder().timeout_s(90.0).custom_agent(
        CustomAgentConfig::new("writer", "You write reviews into files.")
            .with_description("Writes reviews"),
    )
}

/// Distinct, non-default usage for the stand-in's turn `n` (from 1), so that a replay answering
/// with the default usage, or with another turn's, is seen.
fn usage(n: u64) -> ScriptedUsage {
    ScriptedUsage {
        input_tokens: 1000 + 111 * n,
        output_tokens: 10 + 7 * n,
        cache_read_tokens: 500 + 13 * n,
        cache_write_tokens: 3 * n,
    }
}

fn text_script(_: &Path) -> Script {
    Script::new([]).turn(ScriptedTurn::text("Hello, Ferris!").with_usage(usage(1)))
}

/// Turn 1: a built-in `create`, then an answer. Turn 2: three calls in one reply (two custom
/// `note` calls and a built-in `view` of the file), then an answer.
fn tools_script(workdir: &Path) -> Script {
    let file = workdir.join("plan.txt");
    let file = file.to_str().unwrap();
    Script::new([])
        .turn(
            ScriptedTurn::tool_call(
                "create",
                json!({"path": file, "file_text": "step one\nstep two\n"}),
            )
            .with_usage(usage(1)),
        )
        .turn(ScriptedTurn::text("Wrote plan.txt.").with_usage(usage(2)))
        .turn(
            ScriptedTurn::tool_call("note", json!({"text": "first"}))
                .with_tool_call("note", json!({"text": "second"}))
                .with_tool_call("view", json!({"path": file}))
                .with_text("Taking notes while reading the plan.")
                .with_usage(usage(3)),
        )
        .turn(ScriptedTurn::text(format!("Noted both; {file} has two steps.")).with_usage(usage(4)))
}

fn subagent_script(workdir: &Path) -> Script {
    let target = workdir.join("review.txt");
    Script::new([])
        .turn(ScriptedTurn::tool_call(
            "task",
            json!({"agent_type": "writer", "name": "writer", "prompt": "Write the review.", "description": "Write a review"}),
        ).with_usage(usage(1)))
        .turn(ScriptedTurn::tool_call(
            "create",
            json!({"path": target.to_str().unwrap(), "file_text": "LGTM\n"}),
        ).with_usage(usage(2)))
        .turn(ScriptedTurn::text("review written").with_usage(usage(3)))
        .turn(ScriptedTurn::text("The writer wrote the review.").with_usage(usage(4)))
}

const TOOL_PROMPTS: &[&str] = &[
    "Write the plan into plan.txt.",
    "Take two notes and read the plan back.",
];

#[tokio::test]
async fn a_text_answer_records_and_replays_to_the_same_evidence() {
    let text = record_then_replay(&Session {
        name: "text",
        wire: WireApi::ChatCompletions,
        eval: plain_eval,
        prompts: &["Greet Ferris."],
        script: text_script,
    })
    .await;
    if text.is_empty() {
        return;
    }
    for needle in [
        "runtime_version: \"1.0.102\"",
        "model: claude-sonnet-4.5",
        "wire_format: chat_completions",
        "recorded: \"20",
        "content: ${system}",
        "content: Greet Ferris.",
        "content: Hello, Ferris!",
    ] {
        assert!(text.contains(needle), "{needle:?} missing:\n{text}");
    }
    let cassette = Cassette::parse(&text, Path::new("text.yaml")).unwrap();
    assert_eq!(cassette.conversations.len(), 1);
    assert_eq!(cassette.conversations[0].messages.len(), 3);
}

#[tokio::test]
async fn tools_parallel_calls_and_two_turns_record_and_replay_over_chat_completions() {
    let text = record_then_replay(&Session {
        name: "tools-chat",
        wire: WireApi::ChatCompletions,
        eval: tools_eval,
        prompts: TOOL_PROMPTS,
        script: tools_script,
    })
    .await;
    if text.is_empty() {
        return;
    }
    let cassette = Cassette::parse(&text, Path::new("tools.yaml")).unwrap();
    // The second turn's last request holds the whole session: one conversation is left.
    assert_eq!(cassette.conversations.len(), 1, "{text}");
    let messages = &cassette.conversations[0].messages;
    let calls: Vec<&str> = messages
        .iter()
        .flat_map(|m| m.tool_calls.iter())
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(calls, ["create", "note", "note", "view"], "{text}");
    assert!(text.contains("${workdir}/plan.txt"), "{text}");
}

#[tokio::test]
async fn tools_parallel_calls_and_two_turns_record_and_replay_over_responses() {
    record_then_replay(&Session {
        name: "tools-responses",
        wire: WireApi::Responses,
        eval: tools_eval,
        prompts: TOOL_PROMPTS,
        script: tools_script,
    })
    .await;
}

#[tokio::test]
async fn tools_parallel_calls_and_two_turns_record_and_replay_over_websocket() {
    record_then_replay(&Session {
        name: "tools-websocket",
        wire: WireApi::WebSocketResponses,
        eval: tools_eval,
        prompts: TOOL_PROMPTS,
        script: tools_script,
    })
    .await;
}

#[tokio::test]
async fn a_subagent_session_records_and_replays_to_the_same_evidence() {
    let text = record_then_replay(&Session {
        name: "subagent",
        wire: WireApi::ChatCompletions,
        eval: subagent_eval,
        prompts: &["Have the writer write a review."],
        script: subagent_script,
    })
    .await;
    if text.is_empty() {
        return;
    }
    let cassette = Cassette::parse(&text, Path::new("subagent.yaml")).unwrap();
    // The main agent's chain and the writer's own chain.
    assert_eq!(cassette.conversations.len(), 2, "{text}");
    assert!(text.contains("Write the review."), "{text}");
}

/// Secrets never reach a cassette: the system prompt (with the eval's instructions) is stored as
/// `${system}`, and a credential value that a tool handed to the model is redacted, though it
/// really went through the session. Headers (the runtime's token) are never recorded.
#[tokio::test]
async fn a_recorded_cassette_holds_no_canary_secret() {
    let Some(runtime) = runtime_for("a_recorded_cassette_holds_no_canary_secret") else {
        return;
    };
    const CANARY: &str = "canary-token-7f3a9c1e5b";
    const INSTRUCTIONS_CANARY: &str = "canary-instructions-51d2";
    let work = tempfile::tempdir().unwrap();
    let lookup = function_tool(
        "read_config",
        "Reads the deployment configuration.",
        json!({"type": "object", "properties": {}}),
        |_| async { Ok(format!("deploy_token={CANARY}")) },
    );
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call("read_config", json!({})).with_usage(usage(1)))
        .turn(ScriptedTurn::text("The configuration is read.").with_usage(usage(2)));
    let server = ModelServer::start(ServerConfig::new(Arc::new(script)).model(MODEL))
        .await
        .unwrap();
    let recorder = Recorder::new();
    let eval = CopilotEval::builder()
        .model(MODEL)
        .working_directory(work.path())
        .instructions(format!("Never reveal {INSTRUCTIONS_CANARY}."))
        .tool(lookup)
        .timeout_s(90.0)
        .build()
        .unwrap();
    let result = run_turns(
        &eval,
        &["Read the configuration.".to_owned()],
        &RunOptions::offline(server.base_url())
            .runtime_path(&runtime.path)
            .record(recorder.clone()),
    )
    .await;
    assert!(result.success, "{:?}", result.error);
    // Both canaries really went through the session.
    let sent: String = server
        .model_requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    assert!(sent.contains(CANARY) && sent.contains(INSTRUCTIONS_CANARY));
    server.shutdown().await;

    let cassette = recorder
        .cassette(
            CassetteHeader::default(),
            &Redactor::with_secrets([CANARY.to_owned()]),
        )
        .unwrap();
    let store = tempfile::tempdir().unwrap();
    let path = store.path().join("canary.yaml");
    cassette.write(&path, "").unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    for needle in [
        CANARY,
        INSTRUCTIONS_CANARY,
        "Bearer",
        "authorization",
        "127.0.0.1",
        "http",
    ] {
        assert!(
            !text.contains(needle),
            "the cassette holds {needle:?}:\n{text}"
        );
    }
    assert!(text.contains("deploy_token=[redacted]"), "{text}");

    // A run that never reached the model gives no cassette.
    let empty = Recorder::new();
    assert_eq!(
        empty.cassette(CassetteHeader::default(), &Redactor::default()),
        Err(RecordError::Empty { requests: 0 })
    );
}

// --- the runner: `cargo copilot-eval --record` ---------------------------------------------------

fn workspace_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The `cargo-copilot-eval` executable, built once per test process.
fn command_path() -> &'static Path {
    static PATH: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let output = std::process::Command::new(cargo)
            .args([
                "build",
                "-p",
                "cargo-copilot-eval",
                "--bin",
                "cargo-copilot-eval",
            ])
            .args(["--message-format", "json"])
            .current_dir(workspace_root())
            .output()
            .expect("cargo runs");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|m| m["executable"].as_str().map(std::path::PathBuf::from))
            .next_back()
            .expect("cargo reports the executable")
    })
}

/// One `cargo copilot-eval -p quickstart ARGS --json <scratch>/<name>.json` invocation, run off
/// the async runtime (the stand-in server keeps answering meanwhile); returns the exit status,
/// stderr and the JSON results (when written).
async fn quickstart(
    scratch: &Path,
    name: &str,
    args: &[&str],
    env: Vec<(&'static str, String)>,
) -> (i32, String, Option<copilot_eval_core::report::SuiteReport>) {
    let json = scratch.join(format!("{name}.json"));
    let mut command = std::process::Command::new(command_path());
    command
        .args(["copilot-eval", "-p", "quickstart", "--plain"])
        .args(args)
        .arg("--json")
        .arg(&json)
        .current_dir(workspace_root())
        .env("TMPDIR", scratch)
        .env_remove("CI")
        .env_remove("COPILOT_EVAL_MODE")
        .env_remove(copilot_eval_core::harness::ENV_LIVE_BASE_URL);
    for (key, value) in env {
        command.env(key, value);
    }
    let output = tokio::task::spawn_blocking(move || command.output().expect("the command runs"))
        .await
        .unwrap();
    let report = std::fs::read_to_string(&json)
        .ok()
        .map(|text| serde_json::from_str(&text).unwrap());
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        report,
    )
}

/// A run of the artifacts with what differs between a recording and its replay taken out: the
/// mode and its details, timings, the working directory, generated agent ids.
fn comparable_run(run: &RunRecord) -> Value {
    let mut value = serde_json::to_value(run).unwrap();
    let object = value.as_object_mut().unwrap();
    for key in ["mode", "replay", "recording"] {
        object.remove(key);
    }
    scrub_evidence(&mut value, &run.working_directory.to_string_lossy());
    // Tool-call ids are issued by the serving model (server-unique): numbered by appearance.
    let ids: Vec<&str> = run.tool_calls.iter().map(|c| c.id.as_str()).collect();
    rename_ids(&mut value, &ids);
    value
}

fn rename_ids(value: &mut Value, ids: &[&str]) {
    match value {
        Value::String(s) => {
            if let Some(n) = ids.iter().position(|id| id == s) {
                *s = format!("tool-call-{n}");
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rename_ids(v, ids)),
        Value::Object(map) => map.values_mut().for_each(|v| rename_ids(v, ids)),
        _ => {}
    }
}

const QUICKSTART_LIVE: [&str; 9] = [
    "creates_a_greeting_file",
    "follows_the_release_notes_skill",
    "looks_up_a_release_with_a_custom_tool",
    // A conversation of two prompts: recorded into one cassette, replayed as one session.
    "remembers_the_file_it_wrote",
    // A prompt with a file and a selection attached.
    "writes_the_selected_version",
    // A comparison: two runs, each recorded into its own cassette (`<name>.yaml`, `<name>-2.yaml`).
    "compares_with_and_without_the_skill",
    // A judged eval: the eval's run and the judge session, each its own cassette.
    "judges_the_announcement",
    // The two cases of a case matrix: each its own test and cassette (`<function>/<label>.yaml`).
    "says_hello_in::french",
    "says_hello_in::german",
];

/// A quick-start test's cassette file name without `.yaml`, relative to the cassette folder:
/// the test's name, a case's `function::label` as `function/label`.
fn cassette_stem(name: &str) -> String {
    name.replace("::", "/")
}

/// `cassette` with `${workdir}` standing for the session's working directory: the stand-in
/// server below runs outside any run, so it knows the session's folder only from the system
/// prompt, while the comparison's recordings (their sessions work in `baseline/` and
/// `treatment/` below the test's root folder) name those subfolders.
fn session_meaning(mut cassette: Cassette) -> Cassette {
    let messages = cassette
        .conversations
        .iter_mut()
        .flat_map(|c| c.messages.iter_mut());
    for message in messages {
        for side in ["baseline", "treatment"] {
            let from = format!("${{workdir}}/{side}/");
            if let Some(content) = &mut message.content {
                *content = content.replace(&from, "${workdir}/");
            }
            for call in &mut message.tool_calls {
                call.arguments = call.arguments.replace(&from, "${workdir}/");
            }
        }
    }
    cassette
}

/// `cargo copilot-eval --record` end to end on the quick-start example: a loopback server
/// answering like the model service did (from the example's hand-written cassettes) stands in
/// for it; the recorded cassettes replay to the same evidence; `--record` keeps existing
/// cassettes (replaying them), `--record=all` replaces them; CI refuses to record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runner_records_cassettes_that_replay_and_refuses_to_record_under_ci() {
    if runtime_for("the_runner_records_cassettes_that_replay_and_refuses_to_record_under_ci")
        .is_none()
    {
        return;
    }
    const CANARY: &str = "canary-github-token-0c7d21aa";
    let examples = workspace_root().join("examples/quickstart/tests/cassettes/evals");
    let mut stand_in =
        Cassette::load(&examples.join(format!("{}.yaml", QUICKSTART_LIVE[0]))).unwrap();
    for name in QUICKSTART_LIVE {
        let stem = cassette_stem(name);
        for file in [format!("{stem}.yaml"), format!("{stem}-2.yaml")] {
            let path = examples.join(file);
            if path == examples.join(format!("{}.yaml", QUICKSTART_LIVE[0])) || !path.exists() {
                continue;
            }
            let other = session_meaning(Cassette::load(&path).unwrap());
            stand_in.conversations.extend(other.conversations);
        }
    }
    let responder = Arc::new(copilot_eval_core::cassette::ReplayResponder::new(Arc::new(
        stand_in,
    )));
    let server = ModelServer::start(ServerConfig::new(responder).model(MODEL))
        .await
        .unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("cassette-root");
    let root_arg = root.display().to_string();
    let live = || {
        vec![
            (
                copilot_eval_core::harness::ENV_LIVE_BASE_URL,
                server.base_url(),
            ),
            ("GITHUB_TOKEN", CANARY.to_owned()),
        ]
    };
    let cassette = |name: &str| {
        root.join(format!(
            "tests/cassettes/evals/{}.yaml",
            cassette_stem(name)
        ))
    };

    // 1. Record into an empty cassette root.
    let (status, stderr, report) = quickstart(
        scratch.path(),
        "record",
        &["--record", "--cassette-root", &root_arg],
        live(),
    )
    .await;
    assert_eq!(status, 0, "{stderr}");
    let recorded = report.expect("record results");
    // The suite's mode is where its runs' model requests went: the scripted eval's runs are
    // scripted, the others live, so `mixed`; what the command asked is kept apart.
    assert_eq!(recorded.mode, "mixed");
    assert_eq!(recorded.requested_mode.as_deref(), Some("record"));
    assert!(
        stderr.contains("cassettes: 11 recorded, 0 kept (replayed), 0 not written"),
        "{stderr}"
    );
    for name in QUICKSTART_LIVE {
        let test = recorded.tests.iter().find(|t| t.name == name).unwrap();
        let run = &test.runs[0];
        assert_eq!(run.mode, "live", "{name}");
        let recording = run.recording.as_ref().expect("a recording");
        assert!(recording.written, "{name}: {recording:?}");
        assert_eq!(Path::new(&recording.cassette), cassette(name));
        let text = std::fs::read_to_string(cassette(name)).unwrap();
        for needle in [
            "runtime_version: \"1.0.102\"",
            "model: claude-sonnet-4.5",
            "wire_format: chat_completions",
            "recorded: \"20",
            "content: ${system}",
        ] {
            assert!(text.contains(needle), "{name}: {needle:?} missing:\n{text}");
        }
        assert!(!text.contains(CANARY), "{name}: the token leaked:\n{text}");
        assert!(
            !text.contains("http"),
            "{name}: a URL was recorded:\n{text}"
        );
    }
    // The conversation of two prompts is one run and one cassette of one conversation that
    // holds both prompts, in order.
    let conversation = recorded
        .tests
        .iter()
        .find(|t| t.name == "remembers_the_file_it_wrote")
        .unwrap();
    assert_eq!(conversation.runs.len(), 1);
    assert_eq!(conversation.runs[0].prompts.len(), 2);
    assert_eq!(
        conversation.runs[0]
            .recording
            .as_ref()
            .unwrap()
            .conversations,
        1
    );
    let recorded_prompts: Vec<String> = Cassette::load(&cassette("remembers_the_file_it_wrote"))
        .unwrap()
        .conversations[0]
        .messages
        .iter()
        .filter(|m| m.role == copilot_eval_core::cassette::Role::User)
        .filter_map(|m| m.content.clone())
        .collect();
    let sent: Vec<&str> = (conversation.runs[0].prompts.iter())
        .map(|p| p.text.as_str())
        .collect();
    assert_eq!(recorded_prompts, sent);
    // The scripted eval stays scripted and writes nothing.
    let scripted = recorded
        .tests
        .iter()
        .find(|t| t.name == "loads_the_repository_configuration")
        .unwrap();
    assert_eq!(scripted.runs[0].mode, "scripted");
    assert!(!cassette("loads_the_repository_configuration").exists());

    // 2. The recordings replay (no server needed) to the same evidence.
    let (status, stderr, report) = quickstart(
        scratch.path(),
        "replay",
        &["--replay", "--cassette-root", &root_arg],
        vec![],
    )
    .await;
    assert_eq!(status, 0, "{stderr}");
    let replayed = report.expect("replay results");
    for name in QUICKSTART_LIVE {
        let live_runs = &recorded.tests.iter().find(|t| t.name == name).unwrap().runs;
        let replay_runs = &replayed.tests.iter().find(|t| t.name == name).unwrap().runs;
        assert_eq!(live_runs.len(), replay_runs.len(), "{name}");
        for (live_run, replay_run) in live_runs.iter().zip(replay_runs) {
            assert_eq!(replay_run.mode, "replay");
            assert!(replay_run.replay.as_ref().unwrap().unconsumed.is_empty());
            assert_eq!(
                comparable_run(live_run),
                comparable_run(replay_run),
                "{name}: recorded and replayed evidence differ"
            );
        }
    }
    // The comparison's treatment replays its own cassette, the test's second.
    let treatment = &replayed
        .tests
        .iter()
        .find(|t| t.name == "compares_with_and_without_the_skill")
        .unwrap()
        .runs[1];
    assert_eq!(treatment.label.as_deref(), Some("treatment"));
    assert_eq!(
        Path::new(&treatment.replay.as_ref().unwrap().cassette),
        root.join("tests/cassettes/evals/compares_with_and_without_the_skill-2.yaml")
    );

    // 3. --record=all records again (one eval, filtered).
    let undated = |name: &str| {
        let text = std::fs::read_to_string(cassette(name)).unwrap();
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("recorded:"))
            .collect();
        lines.join("\n")
    };
    let before = undated(QUICKSTART_LIVE[0]);
    let (status, stderr, report) = quickstart(
        scratch.path(),
        "record-all",
        &[
            "--record=all",
            "--cassette-root",
            &root_arg,
            QUICKSTART_LIVE[0],
        ],
        live(),
    )
    .await;
    assert_eq!(status, 0, "{stderr}");
    let run = &report.unwrap().tests[0].runs[0];
    assert_eq!(run.mode, "live");
    assert!(run.recording.as_ref().unwrap().written);
    assert_eq!(
        undated(QUICKSTART_LIVE[0]),
        before,
        "the same session records the same cassette"
    );
    server.shutdown().await;

    // 4. With the stand-in gone, --record keeps (replays) existing cassettes: nothing goes live.
    let (status, stderr, report) = quickstart(
        scratch.path(),
        "record-missing",
        &[
            "--record",
            "--cassette-root",
            &root_arg,
            QUICKSTART_LIVE[0],
            QUICKSTART_LIVE[2],
        ],
        vec![(
            copilot_eval_core::harness::ENV_LIVE_BASE_URL,
            "http://127.0.0.1:9".to_owned(),
        )],
    )
    .await;
    assert_eq!(status, 0, "{stderr}");
    for test in &report.unwrap().tests {
        assert_eq!(test.runs[0].mode, "replay", "{}", test.name);
        assert!(test.runs[0].recording.is_none());
    }
    assert!(
        stderr.contains("cassettes: 0 recorded, 2 kept (replayed), 0 not written"),
        "{stderr}"
    );

    // 5. Under CI, cassettes are read-only.
    let (status, stderr, report) = quickstart(
        scratch.path(),
        "ci",
        &["--record", "--cassette-root", &root_arg],
        vec![("CI", "true".to_owned())],
    )
    .await;
    assert_eq!(status, 2, "{stderr}");
    assert!(
        stderr.contains("cassettes are read-only under CI"),
        "{stderr}"
    );
    assert!(report.is_none(), "nothing ran");
}

/// `cargo copilot-eval --record` when a recording must not become a cassette, end to end through
/// the runner on the quick-start's `creates_a_greeting_file` (a scripted loopback server stands
/// in for the model service): a run that does not complete writes nothing and says why; with
/// `--strict`, a completed run whose session holds a value no normaliser covers (here a path
/// under /tmp with a uuid, in a tool call) writes nothing and is a setup error; without it, the
/// cassette is written and the value is a warning naming its line, in the JSON results and the
/// summary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runner_writes_no_cassette_of_an_unfinished_run_nor_a_strict_one_with_stray_values() {
    if runtime_for(
        "the_runner_writes_no_cassette_of_an_unfinished_run_nor_a_strict_one_with_stray_values",
    )
    .is_none()
    {
        return;
    }
    const STRAY: &str = "3f2b8c1e-9d4a-4e6b-8c2d-7a1e5f9b0c3d";
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("cassette-root");
    let cassette = root.join(format!("tests/cassettes/evals/{GREETING}.yaml"));

    // 1. The model service fails: the run stops with execution_error, no cassette is written.
    let (status, stderr, test) = record_greeting(
        scratch.path(),
        "unfinished",
        &root,
        &[],
        Script::new([]).error(400, "scripted bad request"),
    )
    .await;
    assert_eq!(status, 3, "{stderr}");
    assert_eq!(test.outcome.as_str(), "error", "{stderr}");
    let recording = test.runs[0].recording.as_ref().expect("a recording record");
    assert!(!recording.written);
    assert_eq!(
        recording.error.as_deref(),
        Some("no cassette written: the run stopped with execution_error")
    );
    assert!(!cassette.exists(), "an unfinished run wrote a cassette");
    assert!(
        stderr.contains("cassettes: 0 recorded, 0 kept (replayed), 1 not written"),
        "{stderr}"
    );

    // 2. A completed run whose model looks at a path under /tmp holding a uuid (in the tool
    // call's arguments and result, so in the next request), --strict: refused, nothing written.
    let stray = || {
        Script::new([])
            .turn(ScriptedTurn::tool_call(
                "view",
                json!({"path": format!("/tmp/{STRAY}/notes.txt")}),
            ))
            .turn(ScriptedTurn::text("There are no notes."))
    };
    let (status, stderr, test) =
        record_greeting(scratch.path(), "strict", &root, &["--strict"], stray()).await;
    assert_eq!(status, 3, "{stderr}");
    assert_eq!(test.outcome.as_str(), "error", "{stderr}");
    let recording = test.runs[0].recording.as_ref().expect("a recording record");
    assert!(!recording.written);
    let error = recording.error.as_deref().unwrap();
    assert!(
        error.contains("--strict: the cassette") && error.contains("was not written"),
        "{error}"
    );
    assert!(
        !cassette.exists(),
        "a strict recording wrote {}",
        cassette.display()
    );

    // 3. The same without --strict: written, the uuid a warning naming the cassette line.
    let (_, stderr, test) = record_greeting(scratch.path(), "lenient", &root, &[], stray()).await;
    // The test's own check fails (no file was created); the cassette is still written.
    assert_eq!(test.outcome.as_str(), "failed", "{stderr}");
    let recording = test.runs[0].recording.as_ref().expect("a recording record");
    assert!(recording.written, "{recording:?}");
    assert!(!recording.warnings.is_empty(), "{recording:?}");
    let text = std::fs::read_to_string(&cassette).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains(STRAY))
        .expect("the uuid is in the cassette")
        + 1;
    assert!(
        recording.warnings[0].contains(&format!("{}:{line}", cassette.display())),
        "{:?} does not name line {line}",
        recording.warnings[0]
    );
    assert!(
        stderr.contains(&format!(
            "{} value(s) no normaliser covers",
            recording.warnings.len()
        )),
        "{stderr}"
    );
}

/// The quick-start eval the record-mode failure test records.
const GREETING: &str = "creates_a_greeting_file";

/// `cargo copilot-eval --record=all [EXTRA] --cassette-root ROOT --exact GREETING` with a loopback
/// server answering `script` standing in for the model service; returns the exit status, stderr
/// and the eval's record.
async fn record_greeting(
    scratch: &Path,
    name: &str,
    root: &Path,
    extra: &[&str],
    script: Script,
) -> (i32, String, copilot_eval_core::report::TestRecord) {
    let server = ModelServer::start(ServerConfig::new(Arc::new(script)).model(MODEL))
        .await
        .unwrap();
    let root = root.display().to_string();
    let mut args = vec![
        "--record=all",
        "--cassette-root",
        &root,
        "--exact",
        GREETING,
    ];
    args.extend(extra);
    let live = vec![(
        copilot_eval_core::harness::ENV_LIVE_BASE_URL,
        server.base_url(),
    )];
    let (status, stderr, report) = quickstart(scratch, name, &args, live).await;
    server.shutdown().await;
    let report = report.unwrap_or_else(|| panic!("no results: {stderr}"));
    let test = report
        .tests
        .into_iter()
        .find(|t| t.name == GREETING)
        .expect("the eval's record");
    (status, stderr, test)
}
