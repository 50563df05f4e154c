//! Cassette replay end to end: the 12 recorded copilot-sdk sessions (`tests/cassettes/`) replayed
//! through the real runtime, each with its setup files, prompts and custom tools, each checked
//! independently (files read from disk, handler calls observed here, the final answer); the
//! negative cases that must end in `replay_mismatch`; and the determinism of repeated replays.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use copilot_eval_core::cassette::{ReplayConfig, ReplaySession};
use copilot_eval_core::evidence::SessionEventType;
use copilot_eval_core::model_server::WireApi;
use copilot_eval_core::run::{SessionClock, TestFaults};
use copilot_eval_core::sdk::{CustomAgentConfig, Tool};
use copilot_eval_core::tools::function_tool;
use copilot_eval_core::{CopilotEval, CopilotResult, StopReason, run_turns};
use copilot_eval_e2e::{after_the_session, assert_no_runtime_left, runtime_for};
use serde_json::{Value, json};

/// The recorded cassettes, copied into the repository with their license.
fn cassette(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("cassettes/copilot-sdk")
        .join(format!("{name}.yaml"))
}

const SKILL_MD: &str = "---\nname: test-skill\ndescription: A test skill that adds a marker to responses\n---\n\n# Test Skill Instructions\n\nIMPORTANT: You MUST include the exact text \"PINEAPPLE_COCONUT_42\" somewhere in EVERY response you give. This is a mandatory requirement. Include it naturally in your response.\n";

const DB_ROWS: &str = r#"[{"cityName":"Passos","countryId":19,"population":135460},{"cityName":"San Lorenzo","countryId":12,"population":204356}]"#;

/// The custom tools of the cases (names, descriptions and schemas as recorded).
#[derive(Debug, Clone, Copy, PartialEq)]
enum CustomTool {
    EncryptString,
    LookupCity,
    LookupCountry,
    DbQuery,
}

/// One recorded case: what the working directory holds, what is sent, which tools exist.
struct Case {
    id: &'static str,
    cassette: &'static str,
    setup: &'static [(&'static str, &'static str)],
    prompts: &'static [&'static str],
    tools: &'static [CustomTool],
    skill: bool,
    agent: bool,
}

const CASES: &[Case] = &[
    Case {
        id: "create",
        cassette: "builtin_tools/should_create_a_new_file",
        setup: &[],
        prompts: &[
            "Create a file called 'new_file.txt' with the content 'Created by test'. Then read it back to confirm.",
        ],
        tools: &[],
        skill: false,
        agent: false,
    },
    Case {
        id: "edit",
        cassette: "builtin_tools/should_edit_a_file_successfully",
        setup: &[("edit_me.txt", "Hello World\nGoodbye World\n")],
        prompts: &[
            "Edit the file 'edit_me.txt': replace 'Hello World' with 'Hi Universe'. Then read it back and tell me its contents.",
        ],
        tools: &[],
        skill: false,
        agent: false,
    },
    Case {
        id: "shell",
        cassette: "builtin_tools/should_capture_exit_code_in_output",
        setup: &[],
        prompts: &["Run 'echo hello && echo world'. Tell me the exact output."],
        tools: &[],
        skill: false,
        agent: false,
    },
    Case {
        id: "grep",
        cassette: "builtin_tools/should_search_for_patterns_in_files",
        setup: &[("data.txt", "apple\nbanana\napricot\ncherry\n")],
        prompts: &[
            "Search for lines starting with 'ap' in the file 'data.txt'. Tell me which lines matched.",
        ],
        tools: &[],
        skill: false,
        agent: false,
    },
    Case {
        id: "glob",
        cassette: "builtin_tools/should_find_files_by_pattern",
        setup: &[
            ("src/index.ts", "export const index = 1;"),
            ("README.md", "# Readme"),
        ],
        prompts: &[
            "Find all .ts files in this directory (recursively). List the filenames you found.",
        ],
        tools: &[],
        skill: false,
        agent: false,
    },
    Case {
        id: "custom-tool",
        cassette: "tools/invokes_custom_tool",
        setup: &[],
        prompts: &["Use encrypt_string to encrypt this string: Hello"],
        tools: &[CustomTool::EncryptString],
        skill: false,
        agent: false,
    },
    Case {
        id: "parallel-tools",
        cassette: "tools/should_execute_multiple_custom_tools_in_parallel_single_turn",
        setup: &[],
        prompts: &[
            "Use lookup_city with 'Paris' and lookup_country with 'France' at the same time, then combine both results in your reply.",
        ],
        tools: &[CustomTool::LookupCity, CustomTool::LookupCountry],
        skill: false,
        agent: false,
    },
    Case {
        id: "complex-types",
        cassette: "tools/can_receive_and_return_complex_types",
        setup: &[],
        prompts: &[
            "Perform a DB query for the 'cities' table using IDs 12 and 19, sorting ascending. Reply only with lines of the form: [cityname] [population]",
        ],
        tools: &[CustomTool::DbQuery],
        skill: false,
        agent: false,
    },
    Case {
        id: "two-turn-file",
        cassette: "multi_turn/should_handle_file_creation_then_reading_across_turns",
        setup: &[],
        prompts: &[
            "Create a file called 'greeting.txt' with the content 'Hello from multi-turn test'.",
            "Read the file 'greeting.txt' and tell me its exact contents.",
        ],
        tools: &[],
        skill: false,
        agent: false,
    },
    Case {
        id: "stateful",
        cassette: "session/should_have_stateful_conversation",
        setup: &[],
        prompts: &["What is 1+1?", "Now if you double that, what do you get?"],
        tools: &[],
        skill: false,
        agent: false,
    },
    Case {
        id: "skill",
        cassette: "skills/should_load_and_apply_skill_from_skilldirectories",
        setup: &[(".test_skills/test-skill/SKILL.md", SKILL_MD)],
        prompts: &["Say hello briefly using the test skill."],
        tools: &[],
        skill: true,
        agent: false,
    },
    Case {
        id: "custom-agent",
        cassette: "mcp_and_agents/should_accept_custom_agent_configuration_on_session_create",
        setup: &[],
        prompts: &["What is 5+5?"],
        tools: &[],
        skill: false,
        agent: true,
    },
];

fn case(id: &str) -> &'static Case {
    CASES.iter().find(|c| c.id == id).expect("a known case")
}

/// What a test may change to make a replay go wrong on purpose.
#[derive(Default, Clone)]
struct Tweak {
    /// Replace the prompts.
    prompts: Option<Vec<String>>,
    /// Do not create the setup files.
    skip_setup: bool,
    /// Append this to every custom tool's result.
    result_suffix: Option<&'static str>,
}

/// Handler calls observed in the test: `(tool name, arguments)`, in call order.
type Calls = Arc<Mutex<Vec<(String, Value)>>>;

fn custom_tool(kind: CustomTool, calls: &Calls, suffix: Option<&'static str>) -> Tool {
    let (name, description, parameters) = match kind {
        CustomTool::EncryptString => (
            "encrypt_string",
            "Encrypts a string",
            json!({"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]}),
        ),
        CustomTool::LookupCity => (
            "lookup_city",
            "Looks up city information",
            json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        ),
        CustomTool::LookupCountry => (
            "lookup_country",
            "Looks up country information",
            json!({"type": "object", "properties": {"country": {"type": "string"}}, "required": ["country"]}),
        ),
        CustomTool::DbQuery => (
            "db_query",
            "Performs a database query",
            json!({
                "type": "object",
                "properties": {"query": {
                    "type": "object",
                    "properties": {
                        "table": {"type": "string"},
                        "ids": {"type": "array", "items": {"type": "integer"}},
                        "sortAscending": {"type": "boolean"}
                    },
                    "required": ["table", "ids", "sortAscending"]
                }},
                "required": ["query"]
            }),
        ),
    };
    let calls = calls.clone();
    function_tool(name, description, parameters, move |args: Value| {
        let calls = calls.clone();
        async move {
            calls.lock().unwrap().push((name.to_owned(), args.clone()));
            let text = |key: &str| args[key].as_str().unwrap_or_default().to_uppercase();
            let result = match kind {
                CustomTool::EncryptString => text("input"),
                CustomTool::LookupCity => format!("CITY_{}", text("city")),
                CustomTool::LookupCountry => format!("COUNTRY_{}", text("country")),
                CustomTool::DbQuery => DB_ROWS.to_owned(),
            };
            Ok(result + suffix.unwrap_or(""))
        }
    })
}

/// Everything one replay produced.
struct Replayed {
    result: CopilotResult,
    calls: Vec<(String, Value)>,
    unconsumed: Vec<String>,
    misses: usize,
    injected: usize,
    model_requests: usize,
    /// Wire format and streaming flag of each model request, in order.
    wires: Vec<(WireApi, bool)>,
    elapsed: Duration,
    _work: tempfile::TempDir,
}

async fn replay(
    case: &Case,
    runtime: &Path,
    streaming: bool,
    wire: Option<WireApi>,
    tweak: Tweak,
) -> Replayed {
    let work = tempfile::tempdir().unwrap();
    if !tweak.skip_setup {
        for (path, text) in case.setup {
            let path = work.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }
    let mut config = ReplayConfig::default();
    if let Some(wire) = wire {
        config = config.wire_api(wire);
    }
    let session = ReplaySession::start_with(&cassette(case.cassette), config)
        .await
        .unwrap();
    let calls: Calls = Arc::default();
    let mut eval = CopilotEval::builder()
        .name(case.id)
        .model(session.model())
        .working_directory(work.path())
        .streaming(streaming)
        .timeout_s(60.0);
    for kind in case.tools {
        eval = eval.tool(custom_tool(*kind, &calls, tweak.result_suffix));
    }
    if case.skill {
        let skills = work.path().join(".test_skills");
        std::fs::create_dir_all(&skills).unwrap();
        eval = eval.skill_directory(skills);
    }
    if case.agent {
        eval = eval.custom_agent(
            CustomAgentConfig::new("test-agent", "You are a helpful test agent.")
                .with_display_name("Test Agent")
                .with_description("A test agent for SDK testing")
                .with_infer(true),
        );
    }
    let eval = eval.build().unwrap();
    let prompts: Vec<String> = tweak
        .prompts
        .unwrap_or_else(|| case.prompts.iter().map(|p| p.to_string()).collect());
    let started = Instant::now();
    // The eval's 60 s count from the session's creation: a slow runtime start on a loaded
    // machine cannot use them up, and a miss that waited for the timeout shows in `turns_ms`.
    let faults = TestFaults {
        clock_starts_at_session: Some(SessionClock::default()),
        ..TestFaults::default()
    };
    let result = run_turns(
        &eval,
        &prompts,
        &session
            .run_options()
            .runtime_path(runtime)
            .test_faults(faults),
    )
    .await;
    let elapsed = started.elapsed();
    let replayed = Replayed {
        calls: calls.lock().unwrap().clone(),
        unconsumed: session.unconsumed(),
        misses: session.misses().len(),
        injected: session.injected_calls().len(),
        model_requests: session.server().model_requests().len(),
        wires: session
            .server()
            .model_requests()
            .iter()
            .map(|r| (r.wire, r.streaming))
            .collect(),
        result,
        elapsed,
        _work: work,
    };
    session.shutdown().await;
    assert_no_runtime_left(&replayed.result);
    replayed
}

/// The case's "afterwards" column, checked independently of the trace.
fn check_afterwards(case: &Case, r: &Replayed) {
    let id = case.id;
    let result = &r.result;
    assert!(
        result.success && result.stop_reason == StopReason::Completed,
        "{id}: {:?}\n{}",
        result.stop_reason,
        result.error.as_deref().unwrap_or("")
    );
    assert!(r.unconsumed.is_empty(), "{id}: {:?}", r.unconsumed);
    assert_eq!(r.misses, 0, "{id}");
    assert_eq!(
        r.injected, 0,
        "{id}: runtime 1.0.102 injects no calls in these sessions"
    );
    assert!(
        result.evidence_complete,
        "{id}: {:?}",
        result.capture_errors
    );
    let answer = result.final_response.clone().unwrap_or_default();
    let file = |path: &str| std::fs::read_to_string(result.working_directory.join(path)).unwrap();
    let calls_to = |name: &str| -> Vec<Value> {
        r.calls
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, a)| a.clone())
            .collect()
    };
    let has = |needle: &str| {
        assert!(
            answer.contains(needle),
            "{id}: {needle:?} not in {answer:?}"
        )
    };
    match id {
        "create" => {
            assert_eq!(file("new_file.txt"), "Created by test");
            has("new_file.txt");
        }
        "edit" => {
            assert_eq!(file("edit_me.txt"), "Hi Universe\nGoodbye World\n");
            has("Hi Universe");
        }
        "shell" => {
            has("hello");
            has("world");
        }
        "grep" => {
            has("apple");
            has("apricot");
        }
        "glob" => has("index.ts"),
        "custom-tool" => {
            assert_eq!(calls_to("encrypt_string"), [json!({"input": "Hello"})]);
            has("HELLO");
        }
        "parallel-tools" => {
            assert_eq!(calls_to("lookup_city"), [json!({"city": "Paris"})]);
            assert_eq!(calls_to("lookup_country"), [json!({"country": "France"})]);
            has("CITY_PARIS");
            has("COUNTRY_FRANCE");
        }
        "complex-types" => {
            assert_eq!(
                calls_to("db_query"),
                [json!({"query": {"table": "cities", "ids": [12, 19], "sortAscending": true}})]
            );
            has("Passos");
            has("San Lorenzo");
        }
        "two-turn-file" => {
            assert_eq!(file("greeting.txt"), "Hello from multi-turn test");
            has("Hello from multi-turn test");
        }
        "stateful" => has("4"),
        "skill" => has("PINEAPPLE_COCONUT_42"),
        "custom-agent" => has("10"),
        other => panic!("no checks for case {other}"),
    }
    if case.tools.is_empty() {
        assert!(r.calls.is_empty(), "{id}: {:?}", r.calls);
    }
}

async fn replay_checked(id: &str, streaming: bool, wire: Option<WireApi>) {
    let test = format!("replay {id} (streaming={streaming}, wire={wire:?})");
    let Some(runtime) = runtime_for(&test) else {
        return;
    };
    let case = case(id);
    let replayed = replay(case, &runtime.path, streaming, wire, Tweak::default()).await;
    check_afterwards(case, &replayed);
    let expected = match wire.unwrap_or(WireApi::ChatCompletions) {
        // WebSocket turns are always streamed.
        WireApi::WebSocketResponses => (WireApi::WebSocketResponses, true),
        other => (other, streaming),
    };
    assert!(
        replayed.wires.iter().all(|w| *w == expected),
        "{test}: every model request arrives as {expected:?}: {:?}",
        replayed.wires
    );
    eprintln!(
        "{test}: {} model requests in {:?}",
        replayed.model_requests, replayed.elapsed
    );
}

// --- streaming sessions, and the Responses wire formats ------------------------------------

#[tokio::test]
async fn create_streaming() {
    replay_checked("create", true, None).await;
}

#[tokio::test]
async fn parallel_tools_streaming() {
    replay_checked("parallel-tools", true, None).await;
}

#[tokio::test]
async fn two_turn_file_streaming() {
    replay_checked("two-turn-file", true, None).await;
}

#[tokio::test]
async fn two_turn_file_over_responses() {
    replay_checked("two-turn-file", true, Some(WireApi::Responses)).await;
}

#[tokio::test]
async fn create_over_responses_without_streaming() {
    replay_checked("create", false, Some(WireApi::Responses)).await;
}

#[tokio::test]
async fn parallel_tools_over_websocket() {
    replay_checked("parallel-tools", true, Some(WireApi::WebSocketResponses)).await;
}

// --- misses ----------------------------------------------------------------------------------

/// Runs a case with `tweak` and checks it ends promptly in `replay_mismatch` whose diagnosis
/// names `first_difference` (e.g. `first difference at message 2 (user)`) and shows `shown`.
async fn assert_mismatch(id: &str, tweak: Tweak, first_difference: &str, shown: &[&str]) {
    let test = format!("replay mismatch {id}");
    let Some(runtime) = runtime_for(&test) else {
        return;
    };
    let replayed = replay(case(id), &runtime.path, false, None, tweak).await;
    let result = &replayed.result;
    let error = result.error.clone().unwrap_or_default();
    assert!(!result.success, "{test}");
    assert_eq!(
        result.stop_reason,
        StopReason::ReplayMismatch,
        "{test}: {error}"
    );
    assert!(
        error.contains("replay mismatch: model request"),
        "{test}: {error}"
    );
    assert!(error.contains(first_difference), "{test}: {error}");
    // The run keeps the diagnosis typed (what `drift` classifies): its text is the error's, and
    // one of its conversations departs where the error says.
    let diagnosis = result
        .replay_diagnosis
        .as_ref()
        .unwrap_or_else(|| panic!("{test}: no typed diagnosis beside {error}"));
    assert!(
        error.contains(&diagnosis.to_string()),
        "{test}: {diagnosis}"
    );
    let copilot_eval_core::cassette::ReplayMismatch::Miss { first, .. } = diagnosis else {
        panic!("{test}: a miss, not {diagnosis:?}");
    };
    assert!(
        first
            .conversations
            .iter()
            .any(|c| c.departure.to_string().starts_with(first_difference)),
        "{test}: {first:?}"
    );
    for needle in shown {
        assert!(error.contains(needle), "{test}: {needle:?} not in\n{error}");
    }
    assert_eq!(
        replayed.misses, 1,
        "{test}: one miss, then the session ended"
    );
    // After the session's creation, where the 60 s timeout starts (the runtime's start does not
    // count): far from the timeout.
    let after = after_the_session(result);
    assert!(
        after < Duration::from_secs(30),
        "{test}: a miss fails fast, not at the timeout ({after:?})"
    );
    eprintln!("{test} ended in {:?}:\n{error}", replayed.elapsed);
}

#[tokio::test]
async fn changed_prompt_is_a_mismatch() {
    assert_mismatch(
        "create",
        Tweak {
            prompts: Some(vec![
                "Create a file called 'other_file.txt' with the content 'Created by test'. Then read it back to confirm.".into(),
            ]),
            ..Tweak::default()
        },
        "first difference at message 2 (user)",
        &["other_file.txt", "new_file.txt"],
    )
    .await;
}

#[tokio::test]
async fn missing_setup_file_is_a_mismatch() {
    assert_mismatch(
        "edit",
        Tweak {
            skip_setup: true,
            ..Tweak::default()
        },
        "first difference at message 5 (tool)",
        &["File ${workdir}/edit_me.txt updated with changes."],
    )
    .await;
}

#[tokio::test]
async fn different_tool_result_is_a_mismatch() {
    assert_mismatch(
        "custom-tool",
        Tweak {
            result_suffix: Some(" (salted)"),
            ..Tweak::default()
        },
        "first difference at message 4 (tool)",
        &["HELLO (salted)"],
    )
    .await;
}

#[tokio::test]
async fn one_prompt_of_a_two_turn_recording_is_reported_unconsumed() {
    let Some(runtime) = runtime_for("one_prompt_of_a_two_turn_recording_is_reported_unconsumed")
    else {
        return;
    };
    let case = case("stateful");
    let replayed = replay(
        case,
        &runtime.path,
        false,
        None,
        Tweak {
            prompts: Some(vec![case.prompts[0].to_owned()]),
            ..Tweak::default()
        },
    )
    .await;
    let result = &replayed.result;
    let error = result.error.clone().unwrap_or_default();
    assert_eq!(result.stop_reason, StopReason::ReplayMismatch, "{error}");
    assert_eq!(result.final_response.as_deref(), Some("1+1 = 2"));
    assert_eq!(replayed.misses, 0);
    assert_eq!(replayed.unconsumed.len(), 1, "{:?}", replayed.unconsumed);
    assert!(
        error.contains("was fully replayed") && error.contains("conversation 1 of 1"),
        "{error}"
    );
    match &result.replay_diagnosis {
        Some(copilot_eval_core::cassette::ReplayMismatch::Unconsumed {
            never_requested, ..
        }) => assert_eq!(never_requested, &replayed.unconsumed),
        other => panic!("an unconsumed cassette, typed: {other:?}"),
    }
}

// --- determinism -----------------------------------------------------------------------------

/// What a replay produced, without timings and generated ids: the trace, the answer, the files,
/// the handler calls and the replay's own record. The working directory becomes `${workdir}`.
fn evidence(r: &Replayed) -> Value {
    let result = &r.result;
    let dir = result.working_directory.to_string_lossy().into_owned();
    let clean = |text: &str| text.replace(&dir, "${workdir}");
    let clean_value =
        |v: &Value| -> Value { serde_json::from_str(&clean(&v.to_string())).expect("still JSON") };
    let mut files: Vec<(String, String)> = Vec::new();
    let mut stack = vec![result.working_directory.clone()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let relative = path.strip_prefix(&result.working_directory).unwrap();
                files.push((
                    relative.to_string_lossy().into_owned(),
                    std::fs::read_to_string(&path).unwrap_or_else(|_| "<binary>".into()),
                ));
            }
        }
    }
    files.sort();
    // The runtime runs the calls of one turn in parallel: the order in which our handlers start
    // is timing, so they are compared as a sorted list (the trace keeps request order).
    let mut handler_calls: Vec<String> = r.calls.iter().map(|c| json!(c).to_string()).collect();
    handler_calls.sort();
    json!({
        "success": result.success,
        "stop_reason": result.stop_reason.as_str(),
        "error": result.error,
        "model_used": result.model_used,
        "turns": result.turns.iter().map(|t| json!([t.role, clean(&t.content), t.tool_call_ids.len()])).collect::<Vec<_>>(),
        "tool_calls": result.tool_calls.iter().map(|c| json!({
            "name": c.name,
            "arguments": clean_value(&c.arguments),
            "result": c.result.as_deref().map(clean),
            "success": c.success,
            "error": c.error,
            "agent": c.agent_id.is_some(),
            "completed": c.completed,
            "denied": c.denied.as_ref().map(|d| &d.reason),
        })).collect::<Vec<_>>(),
        "final_response": result.final_response,
        "usage": result.usage.iter().map(|u| json!([u.model, u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens])).collect::<Vec<_>>(),
        "files": files,
        "handler_calls": handler_calls,
        "model_requests": r.model_requests,
        "unconsumed": r.unconsumed,
        "misses": r.misses,
        "injected": r.injected,
        "evidence_complete": result.evidence_complete,
    })
}

const REPEATS: usize = 5;

/// Replays `case` once and checks it: `Err` with the case id and what failed.
async fn replay_and_check(case: &'static Case, runtime: &Path) -> Result<Value, String> {
    let replayed = replay(case, runtime, false, None, Tweak::default()).await;
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        check_afterwards(case, &replayed)
    }))
    .map_err(|panic| {
        let text = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        format!("{}: {text}", case.id)
    })?;
    Ok(evidence(&replayed))
}

/// All 12 cases, each replayed 5 times (two at a time: the runtime is CPU-bound and CI has two
/// cores). Every replay is checked against the case's "afterwards" column, and every replay's
/// evidence must equal the case's first replay's.
#[tokio::test]
async fn every_case_replays_five_times_with_identical_evidence() {
    let Some(runtime) = runtime_for("every_case_replays_five_times_with_identical_evidence") else {
        return;
    };
    let started = Instant::now();
    let mut evidence: Vec<Vec<Value>> = vec![Vec::new(); CASES.len()];
    let mut failures: Vec<String> = Vec::new();
    let indices: Vec<usize> = (0..CASES.len()).collect();
    for round in 0..REPEATS {
        for pair in indices.chunks(2) {
            let first = replay_and_check(&CASES[pair[0]], &runtime.path);
            let second = async {
                match pair.get(1) {
                    Some(i) => Some(replay_and_check(&CASES[*i], &runtime.path).await),
                    None => None,
                }
            };
            let (a, b) = tokio::join!(first, second);
            for (i, outcome) in pair.iter().zip([Some(a), b].into_iter().flatten()) {
                match outcome {
                    Ok(value) => evidence[*i].push(value),
                    Err(failure) => failures.push(format!("replay {}: {failure}", round + 1)),
                }
            }
        }
    }
    for (case, runs) in CASES.iter().zip(&evidence) {
        let Some(first) = runs.first() else {
            continue;
        };
        for (n, run) in runs.iter().enumerate().skip(1) {
            let differing: Vec<String> = first
                .as_object()
                .unwrap()
                .iter()
                .filter(|(key, value)| run.get(key.as_str()) != Some(value))
                .map(|(key, value)| {
                    format!(
                        "    {key}: first {value}\n    {key}: this  {}",
                        run[key.as_str()]
                    )
                })
                .collect();
            if !differing.is_empty() {
                failures.push(format!(
                    "{}: replay {} differs from the first:\n{}",
                    case.id,
                    n + 1,
                    differing.join("\n")
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!(
        "{} cases x {REPEATS} replays: {:?}",
        CASES.len(),
        started.elapsed()
    );
}

// --- recorded error answers (the copilot-sdk format's `errors:`) --------------------------------

/// A cassette in the copilot-sdk's snapshot format, written by the test, whose `errors:` answers
/// the first request (for the recorded model) with `status`; no conversation follows (the
/// recording ends with the error).
fn recorded_error_cassette(dir: &Path, status: u16) -> PathBuf {
    let path = dir.join(format!("error_{status}.yaml"));
    std::fs::write(
        &path,
        format!(
            "models:\n  - claude-sonnet-4.5\nerrors:\n  - model: claude-sonnet-4.5\n    status: {status}\n    code: user_weekly_rate_limited\n    message: You've reached your weekly rate limit.\n    retryAfterSeconds: 1\n    messages:\n      - role: system\n        content: ${{system}}\n      - role: user\n        content: Explain that auto mode recovered from a rate limit in one short sentence.\nconversations: []\n"
        ),
    )
    .unwrap();
    path
}

/// Replays the recorded error cassette for `status`: the result, how many requests the error
/// answered, and the statuses of the model answers as the server logged them.
async fn replay_recorded_error(runtime: &Path, status: u16) -> (CopilotResult, usize, Vec<u16>) {
    let dir = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let session = ReplaySession::start(&recorded_error_cassette(dir.path(), status))
        .await
        .unwrap();
    let eval = CopilotEval::builder()
        .name("recorded_error")
        .model(session.model())
        .working_directory(work.path())
        .timeout_s(120.0)
        .build()
        .unwrap();
    let prompt = "Explain that auto mode recovered from a rate limit in one short sentence.";
    let result = run_turns(
        &eval,
        &[prompt.to_owned()],
        &session.run_options().runtime_path(runtime),
    )
    .await;
    let served = session.errors_served()[0];
    let statuses: Vec<u16> = session
        .server()
        .requests()
        .iter()
        .filter(|r| r.path == "/chat/completions")
        .map(|r| r.status)
        .collect();
    assert!(session.misses().is_empty(), "{:?}", session.misses());
    session.shutdown().await;
    assert_no_runtime_left(&result);
    (result, served, statuses)
}

/// The data of the run's first event of `kind`.
fn first_event(result: &CopilotResult, kind: SessionEventType) -> Value {
    result
        .raw_events
        .iter()
        .find(|e| e.kind() == kind)
        .map(|e| e.data.clone())
        .unwrap_or_else(|| panic!("no {kind:?} event"))
}

/// A recorded 429 is answered with its status, code, message and `retry-after` every time the
/// same request comes: the real runtime retries it (its own policy), then ends the turn with a
/// `session.error` carrying the recorded status and code and asks for an auto mode switch; a
/// recorded 400 is not retried.
#[tokio::test]
async fn a_recorded_error_is_served_and_the_runtime_retries_then_stops() {
    let Some(runtime) = runtime_for("replay of a recorded 429") else {
        return;
    };
    let (result, served, statuses) = replay_recorded_error(&runtime.path, 429).await;
    assert_eq!(
        result.stop_reason,
        StopReason::ExecutionError,
        "{:?}",
        result.error
    );
    let error = result.error.clone().unwrap_or_default();
    assert!(error.contains("weekly rate limit"), "{error}");
    assert!(
        served >= 2,
        "the runtime retried the 429: {served} answered"
    );
    assert_eq!(
        statuses,
        vec![429; served],
        "every model request got the recorded 429"
    );
    let session_error = first_event(&result, SessionEventType::SessionError);
    assert_eq!(session_error["statusCode"], 429, "{session_error}");
    assert_eq!(
        session_error["errorCode"], "user_weekly_rate_limited",
        "{session_error}"
    );
    let switch = first_event(&result, SessionEventType::AutoModeSwitchRequested);
    assert_eq!(
        switch["retryAfterSeconds"], 1,
        "the recorded retry-after: {switch}"
    );
    assert!(result.evidence_complete);

    let (result, served, statuses) = replay_recorded_error(&runtime.path, 400).await;
    assert_eq!(
        result.stop_reason,
        StopReason::ExecutionError,
        "{:?}",
        result.error
    );
    assert!(
        result
            .error
            .unwrap_or_default()
            .contains("weekly rate limit")
    );
    assert_eq!((served, statuses), (1, vec![400]), "a 400 is not retried");
}
