//! Unit tests of the cassette reader, the normalisers and the matcher (no runtime needed; the
//! end-to-end replays are in `tests/tests/replay.rs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};

use super::context::workdir_from_system_prompt;
use super::normalize::{
    Context, NormalMessage, normalize, rewrite_exit_markers, spellings, strip_line_numbers,
};
use super::*;
use crate::model_server::{ModelRequest, Reply, WireApi};
use crate::run::{ReplayCheck, RunFolders};

const WORKDIR: &str = "/ws/replay-work";

/// The run's error text for the replay's failure (`None`: the replay does not fail the run).
fn failure(r: &ReplayResponder, turns_finished: bool) -> Option<String> {
    r.mismatch(turns_finished).map(|m| m.to_string())
}

fn cassettes_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/cassettes/copilot-sdk")
}

fn parse(text: &str) -> Result<Cassette, CassetteError> {
    Cassette::parse(text, Path::new("t.yaml"))
}

fn malformed(text: &str) -> (Option<u32>, Option<u32>, String, String) {
    match parse(text) {
        Err(e @ CassetteError::Malformed { .. }) => {
            let shown = e.to_string();
            let CassetteError::Malformed {
                line,
                column,
                message,
                ..
            } = e
            else {
                unreachable!()
            };
            (line, column, message, shown)
        }
        other => panic!("expected a malformed cassette, got {other:?}"),
    }
}

// --- reading -----------------------------------------------------------------------------------

#[test]
fn every_recorded_cassette_reads() {
    let mut found = 0;
    let mut stack = vec![cassettes_dir()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml") {
                let cassette = Cassette::load(&path).unwrap();
                assert_eq!(cassette.models, ["claude-sonnet-4.5"], "{}", path.display());
                assert_eq!(cassette.header, CassetteHeader::default());
                assert_eq!(cassette.model(), Some("claude-sonnet-4.5"));
                found += 1;
            }
        }
    }
    assert_eq!(found, 12);
}

#[test]
fn yaml_scalars_are_read_as_yaml_says() {
    let cassette = Cassette::load(
        &cassettes_dir().join("skills/should_load_and_apply_skill_from_skilldirectories.yaml"),
    )
    .unwrap();
    let messages = &cassette.conversations[0].messages;
    // A folded block scalar: blank lines are line breaks, single breaks are spaces.
    assert_eq!(
        messages[4].content.as_deref().unwrap(),
        "<skill-context name=\"test-skill\">\nBase directory for this skill: ${workdir}/.test_skills/test-skill\n\n# Test Skill Instructions\n\nIMPORTANT: You MUST include the exact text \"PINEAPPLE_COCONUT_42\" somewhere in EVERY response you give. This is a mandatory requirement. Include it naturally in your response.\n\n</skill-context>"
    );
    assert_eq!((messages[4].line, messages[4].column), (19, 9));
    let cassette =
        Cassette::load(&cassettes_dir().join("tools/can_receive_and_return_complex_types.yaml"))
            .unwrap();
    // A single-quoted scalar folded over two lines.
    assert!(
        cassette.conversations[0].messages[3]
            .content
            .as_deref()
            .unwrap()
            .contains("\"cityName\":\"San Lorenzo\"")
    );
}

#[test]
fn the_header_is_optional_and_read_when_present() {
    let cassette = parse(
        "copilot_eval:\n  runtime_version: 1.0.102\n  model: claude-sonnet-4.5\n  wire_format: websocket_responses\n  recorded: 2026-11-30\nconversations:\n  - messages:\n      - role: user\n        content: 4\n",
    )
    .unwrap();
    assert_eq!(
        cassette.header,
        CassetteHeader {
            runtime_version: Some("1.0.102".into()),
            model: Some("claude-sonnet-4.5".into()),
            wire_format: Some(WireApi::WebSocketResponses),
            recorded: Some("2026-11-30".into()),
            // Written before the header's `workdir`: the session's working directory.
            workdir: WorkdirMeaning::Session,
        }
    );
    let explicit = "copilot_eval:\n  workdir: test_root\nconversations:\n  - messages:\n      - role: user\n        content: 4\n";
    assert_eq!(
        parse(explicit).unwrap().header.workdir,
        WorkdirMeaning::TestRoot
    );
    let sdk = "conversations:\n  - messages:\n      - role: user\n        content: 4\n";
    assert_eq!(parse(sdk).unwrap().header.workdir, WorkdirMeaning::TestRoot);
    assert!(cassette.models.is_empty());
    assert_eq!(cassette.model(), Some("claude-sonnet-4.5"));
    // A plain scalar that looks like a number is still the text.
    assert_eq!(
        cassette.conversations[0].messages[0].content.as_deref(),
        Some("4")
    );
}

#[test]
fn malformed_cassettes_name_file_position_and_problem() {
    let (line, column, message, shown) = malformed(
        "models: [m]\nconversations:\n  - messages:\n      - role: bot\n        content: x\n",
    );
    assert_eq!((line, column), (Some(4), Some(15)));
    assert!(message.contains("unknown variant `bot`"), "{message}");
    assert!(shown.starts_with("t.yaml:4:15: "), "{shown}");

    let (line, _, message, _) =
        malformed("conversations:\n  - messages:\n      - role: user\n        contents: x\n");
    assert_eq!(line, Some(4));
    assert!(message.contains("unknown field `contents`"), "{message}");

    let (line, column, message, _) =
        malformed("conversations:\n  - messages:\n      - role: user\n");
    assert_eq!((line, column), (Some(3), Some(9)));
    assert!(message.contains("needs `content`"), "{message}");

    let (line, _, message, _) = malformed(
        "conversations:\n  - messages:\n      - role: user\n        content: hi\n      - role: tool\n        content: r\n",
    );
    assert_eq!(line, Some(5));
    assert!(message.contains("needs `tool_call_id`"), "{message}");

    let (_, _, message, _) = malformed(
        "conversations:\n  - messages:\n      - role: user\n        content: hi\n        tool_call_id: x\n",
    );
    assert!(message.contains("only tool messages"), "{message}");

    let (line, _, message, _) = malformed("conversations: []\n");
    assert_eq!(line, Some(1));
    assert!(message.contains("at least one conversation"), "{message}");

    let (_, _, message, _) = malformed("copilot_eval:\n  runtime: 1\nconversations: []\n");
    assert!(message.contains("unknown field `runtime`"), "{message}");

    let (line, _, _, _) = malformed("conversations:\n  - messages: [\n");
    assert!(line.is_some(), "a syntax error has a position");

    let err = Cassette::load(Path::new("/nonexistent/x.yaml")).unwrap_err();
    assert!(matches!(err, CassetteError::Io { .. }));
    assert!(err.to_string().contains("/nonexistent/x.yaml"));
}

// --- normalisers -------------------------------------------------------------------------------

fn normalised(messages: Vec<Value>, workdir: Option<&str>) -> Vec<NormalMessage> {
    let mut normal: Vec<NormalMessage> = messages
        .iter()
        .map(|m| NormalMessage::from_request(m).unwrap())
        .collect();
    normalize(
        &mut normal,
        &Context {
            workdirs: workdir.map(str::to_owned).into_iter().collect(),
            workdir: workdir.map(str::to_owned),
            live: false,
        },
    );
    normal
}

#[test]
fn the_datetime_after_a_selection_and_the_session_folder_are_normalised() {
    let home = std::env::temp_dir().join("copilot-eval-home-Xy12");
    let request = vec![
        json!({"role": "user", "content": "<ide_selection>\nFile: a.rs (line 2)\n</ide_selection>\n\n<current_datetime>2026-12-01T07:27:46.804+00:00</current_datetime>\n\nRead it."}),
        json!({"role": "user", "content": format!("<current_datetime>x</current_datetime>\n\nSave the plan to: {}/session-state/285e2773-2840-49fa-89fe-ab46aab131bd/plan.md", home.display())}),
        json!({"role": "user", "content": "Before <current_datetime>x</current_datetime> is kept."}),
    ];
    let contents: Vec<Option<String>> = normalised(request, None)
        .into_iter()
        .map(|m| m.content)
        .collect();
    assert_eq!(
        contents,
        [
            Some(
                "<ide_selection>\nFile: a.rs (line 2)\n</ide_selection>\n\n\n\nRead it.".to_owned()
            ),
            Some("Save the plan to: ${session_folder}/plan.md".to_owned()),
            Some("Before  is kept.".to_owned()),
        ]
    );
}

#[test]
fn the_list_is_named_versioned_and_starts_its_compat_entries_with_the_measured_drift() {
    let compat: Vec<&str> = NORMALIZERS
        .iter()
        .filter(|n| n.kind == NormalizerKind::Compat)
        .map(|n| n.name)
        .collect();
    assert_eq!(
        compat[..3],
        [
            "view_line_numbers",
            "unknown_tool_list",
            "shell_exit_marker"
        ]
    );
    let mut names: Vec<&str> = NORMALIZERS.iter().map(|n| n.name).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), NORMALIZERS.len(), "names are unique");
    assert!(
        NORMALIZERS
            .iter()
            .all(|n| n.version >= 1 && !n.runtime_versions.is_empty() && !n.description.is_empty())
    );
}

#[test]
fn format_normalisers() {
    let system = format!("You are...\n* Current working directory: {WORKDIR}\nmore");
    let request = vec![
        json!({"role": "system", "content": system, "copilot_cache_control": {"type": "ephemeral"}}),
        json!({"role": "user", "content": "<current_datetime>2026-11-30T11:28:59.041+00:00</current_datetime>\n\nDo it."}),
        json!({"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_7", "type": "function", "function": {"name": "bash", "arguments": format!("{{ \"description\": \"d\", \"command\": \"ls {WORKDIR}\" }}")}},
            {"id": "call_8", "type": "function", "function": {"name": "read_bash", "arguments": "{\"shellId\":\"0\"}"}}
        ]}),
        json!({"role": "tool", "tool_call_id": "call_8", "content": format!("{WORKDIR}/a")}),
        json!({"role": "tool", "tool_call_id": "call_7", "content": "ok"}),
    ];
    assert_eq!(
        workdir_from_system_prompt(&request).as_deref(),
        Some(WORKDIR)
    );
    let normal = normalised(request.clone(), Some(WORKDIR));
    let rendered: Vec<String> = normal.iter().map(NormalMessage::render).collect();
    assert_eq!(
        rendered,
        [
            r#"system "${system}""#,
            r#"user "Do it.""#,
            r#"assistant calls: [toolcall_0 ${shell} {"command":"ls ${workdir}","description":"d"}, toolcall_1 ${read_shell} {"shellId":"0"}]"#,
            r#"tool[toolcall_1] "${workdir}/a""#,
            r#"tool[toolcall_0] "ok""#,
        ]
    );
    // The recorded form of the same conversation normalises to the same messages.
    let recorded = parse(
        r#"conversations:
  - messages:
      - role: system
        content: ${system}
      - role: user
        content: Do it.
      - role: assistant
        tool_calls:
          - id: toolcall_0
            type: function
            function:
              name: ${shell}
              arguments: '{"command":"ls ${workdir}","description":"d"}'
      - role: assistant
        tool_calls:
          - id: toolcall_1
            type: function
            function:
              name: ${read_shell}
              arguments: '{"shellId": "0"}'
      - role: tool
        tool_call_id: toolcall_1
        content: ${workdir}/a
      - role: tool
        tool_call_id: toolcall_0
        content: ok
"#,
    )
    .unwrap();
    let mut stored: Vec<NormalMessage> = recorded.conversations[0]
        .messages
        .iter()
        .map(NormalMessage::from_recorded)
        .collect();
    normalize(&mut stored, &Context::default());
    assert_eq!(stored, normal);
}

#[test]
fn compat_normalisers_for_runtime_1_0_102() {
    assert_eq!(
        strip_line_numbers("1. Hi Universe\n2. Goodbye World\n3.").as_deref(),
        Some("Hi Universe\nGoodbye World\n")
    );
    assert_eq!(strip_line_numbers("10. a\n11. b").as_deref(), Some("a\nb"));
    assert_eq!(strip_line_numbers("1. a\n3. b"), None, "not consecutive");
    assert_eq!(strip_line_numbers("Created by test"), None);
    assert_eq!(
        rewrite_exit_markers("hello\nworld\n<shellId: 0 completed with exit code 0>"),
        "hello\nworld\n<exited with exit code 0>"
    );
    assert_eq!(
        rewrite_exit_markers("<shellId: 3 completed with exit code -1> <shellId: x>"),
        "<exited with exit code -1> <shellId: x>"
    );

    let recorded = vec![
        json!({"role": "assistant", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "view", "arguments": "{}"}},
            {"id": "b", "type": "function", "function": {"name": "report_intent", "arguments": "{}"}},
            {"id": "c", "type": "function", "function": {"name": "bash", "arguments": "{}"}},
            {"id": "d", "type": "function", "function": {"name": "grep", "arguments": "{}"}}
        ]}),
        json!({"role": "tool", "tool_call_id": "a", "content": "1. Created by test"}),
        json!({"role": "tool", "tool_call_id": "b", "content": "Tool 'report_intent' does not exist. Available tools that can be called are ${shell}, view."}),
        json!({"role": "tool", "tool_call_id": "c", "content": "hi\n<exited with exit code 0>"}),
        json!({"role": "tool", "tool_call_id": "d", "content": "1. not a view result"}),
    ];
    let live = vec![
        recorded[0].clone(),
        json!({"role": "tool", "tool_call_id": "a", "content": "Created by test"}),
        json!({"role": "tool", "tool_call_id": "b", "content": "Tool 'report_intent' does not exist. Available tools that can be called are bash, read_bash, view, create."}),
        json!({"role": "tool", "tool_call_id": "c", "content": "hi\n<shellId: 0 completed with exit code 0>"}),
        json!({"role": "tool", "tool_call_id": "d", "content": "1. not a view result"}),
    ];
    let recorded = normalised(recorded, None);
    assert_eq!(recorded, normalised(live, None));
    assert_eq!(
        recorded[2].content.as_deref(),
        Some("Tool 'report_intent' does not exist.")
    );
    assert_eq!(recorded[4].content.as_deref(), Some("1. not a view result"));
    // What the compat entries do not cover still differs.
    let other = normalised(
        vec![
            json!({"role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": {"name": "view", "arguments": "{}"}}]}),
            json!({"role": "tool", "tool_call_id": "a", "content": "Created by tests"}),
        ],
        None,
    );
    assert_ne!(other[1], recorded[1]);
}

// --- matching ----------------------------------------------------------------------------------

const CASSETTE: &str = r#"models: [claude-sonnet-4.5]
conversations:
  - messages:
      - role: system
        content: ${system}
      - role: user
        content: Make the file.
      - role: assistant
        content: "I'll make it. "
      - role: assistant
        tool_calls:
          - id: toolcall_0
            type: function
            function:
              name: create
              arguments: '{"path":"${workdir}/a \"b\".txt","file_text":"x"}'
  - messages:
      - role: system
        content: ${system}
      - role: user
        content: Make the file.
      - role: assistant
        content: "I'll make it. "
        tool_calls:
          - id: toolcall_0
            type: function
            function:
              name: create
              arguments: '{"path":"${workdir}/a \"b\".txt","file_text":"x"}'
      - role: tool
        tool_call_id: toolcall_0
        content: Created file ${workdir}/a "b".txt with 1 characters
      - role: assistant
        tool_calls:
          - id: toolcall_1
            type: function
            function:
              name: ${shell}
              arguments: '{"command":"cat a*"}'
      - role: tool
        tool_call_id: toolcall_1
        content: |-
          x
          <exited with exit code 0>
      - role: assistant
        content: Done in ${workdir}.
"#;

fn responder() -> ReplayResponder {
    ReplayResponder::new(Arc::new(
        Cassette::parse(CASSETTE, Path::new("case.yaml")).unwrap(),
    ))
}

fn request(messages: Vec<Value>) -> ModelRequest {
    let mut all = vec![
        json!({"role": "system", "content": format!("Be good.\n* Current working directory: {WORKDIR}\n")}),
        json!({"role": "user", "content": "<current_datetime>2026-11-30T00:00:00Z</current_datetime>\n\nMake the file."}),
    ];
    all.extend(messages);
    ModelRequest {
        wire: WireApi::ChatCompletions,
        streaming: false,
        model: Some("claude-sonnet-4.5".into()),
        messages: all,
        tool_names: vec!["bash".into(), "create".into()],
        previous_response_id: None,
        initiator: None,
        interaction_type: None,
        body: Value::Null,
    }
}

fn turn(reply: Reply) -> crate::model_server::ScriptedTurn {
    match reply {
        Reply::Message(turn) => turn,
        other => panic!("expected a reply, got {other:?}"),
    }
}

fn first_call() -> Value {
    json!({"role": "assistant", "content": "I'll make it. ", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "create", "arguments": format!("{{\"path\":\"{WORKDIR}/a \\\"b\\\".txt\",\"file_text\":\"x\"}}")}}
    ]})
}

#[test]
fn a_whole_recording_replays_and_is_consumed() {
    let r = responder();
    // 1: merged reply (text + call), `${workdir}` resolved inside the JSON string.
    let t = turn(r.answer(&request(vec![])));
    assert_eq!(t.text_content(), Some("I'll make it. "));
    assert_eq!(t.tool_calls().len(), 1);
    assert_eq!(t.tool_calls()[0].name, "create");
    assert_eq!(
        t.tool_calls()[0].arguments,
        json!(format!(
            "{{\"path\":\"{WORKDIR}/a \\\"b\\\".txt\",\"file_text\":\"x\"}}"
        ))
    );
    assert_eq!(r.unconsumed().len(), 1, "conversation 1 is done, 2 is not");
    // 2: the shell placeholder becomes the session's shell tool.
    let t = turn(r.answer(&request(vec![
        first_call(),
        json!({"role": "tool", "tool_call_id": "call_1", "content": format!("Created file {WORKDIR}/a \"b\".txt with 1 characters")}),
    ])));
    assert_eq!(t.tool_calls()[0].name, "bash");
    // 3: the final answer, with the live exit marker of 1.0.102.
    let t = turn(r.answer(&request(vec![
        first_call(),
        json!({"role": "tool", "tool_call_id": "call_1", "content": format!("Created file {WORKDIR}/a \"b\".txt with 1 characters")}),
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_2", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"cat a*\"}"}}]}),
        json!({"role": "tool", "tool_call_id": "call_2", "content": "x\n<shellId: 0 completed with exit code 0>"}),
    ])));
    assert_eq!(
        t.text_content(),
        Some(format!("Done in {WORKDIR}.").as_str())
    );
    assert!(r.unconsumed().is_empty(), "{:?}", r.unconsumed());
    assert!(r.misses().is_empty());
    assert_eq!(failure(&r, true), None);
}

#[test]
fn a_miss_is_a_400_with_a_diagnosis_per_conversation() {
    let r = responder();
    turn(r.answer(&request(vec![])));
    let reply = r.answer(&request(vec![
        first_call(),
        json!({"role": "tool", "tool_call_id": "call_1", "content": "Parent directory does not exist"}),
    ]));
    let Reply::Error { status, message } = reply else {
        panic!("a miss is an error reply: {reply:?}");
    };
    assert_eq!(status, 400);
    assert!(message.contains("model request 2"), "{message}");
    let misses = r.misses();
    assert_eq!(misses.len(), 1);
    let miss = &misses[0];
    assert_eq!(miss.request, 2);
    assert_eq!(miss.conversations.len(), 2);
    assert_eq!(
        miss.conversations[0].departure,
        Departure::PastEnd { message: 4 }
    );
    assert_eq!(miss.conversations[0].departure.first_difference(), Some(4));
    assert_eq!(miss.conversations[1].departure.first_difference(), Some(4));
    assert_eq!(
        miss.conversations[1].departure.to_string(),
        "first difference at message 4 (tool)"
    );
    assert_eq!(
        miss.conversations[1].recorded.as_deref(),
        Some(r#"tool[toolcall_0] "Created file ${workdir}/a \"b\".txt with 1 characters""#)
    );
    assert_eq!(
        miss.conversations[1].requested.as_deref(),
        Some(r#"tool[toolcall_0] "Parent directory does not exist""#)
    );
    let failure = failure(&r, false).expect("a miss fails even after a stop");
    assert!(
        failure.starts_with("replay mismatch: model request 2 matches no recorded conversation"),
        "{failure}"
    );
    assert!(
        failure.contains("conversation 2 of 2 (7 messages): first difference at message 4 (tool)"),
        "{failure}"
    );
}

#[test]
fn a_different_prompt_or_argument_misses_and_order_is_never_forgiven() {
    let r = responder();
    let mut req = request(vec![]);
    req.messages[1] = json!({"role": "user", "content": "Make the files."});
    assert!(matches!(r.answer(&req), Reply::Error { .. }));
    let diff = &r.misses()[0].conversations[0];
    assert_eq!(
        diff.departure,
        Departure::Differs {
            message: 2,
            recorded_role: Role::User,
            request_role: Role::User,
            changed_parts: Vec::new()
        }
    );
    assert_eq!(
        diff.departure.to_string(),
        "first difference at message 2 (user)"
    );
    assert_eq!(diff.recorded.as_deref(), Some(r#"user "Make the file.""#));
    assert_eq!(diff.requested.as_deref(), Some(r#"user "Make the files.""#));

    // The same messages in another order are a miss too (no order-only matching).
    let r = responder();
    let mut req = request(vec![]);
    req.messages.swap(0, 1);
    assert!(matches!(r.answer(&req), Reply::Error { .. }));
}

#[test]
fn injected_calls_are_taken_out_and_reported() {
    let r = responder();
    turn(r.answer(&request(vec![])));
    let mut with_injected = first_call();
    with_injected["tool_calls"]
        .as_array_mut()
        .unwrap()
        .push(json!({"id": "toolu_runtime", "type": "function", "function": {"name": "view", "arguments": "{\"path\":\"/x\"}"}}));
    let t = turn(r.answer(&request(vec![
        with_injected,
        json!({"role": "tool", "tool_call_id": "toolu_runtime", "content": "whatever the runtime saw"}),
        json!({"role": "tool", "tool_call_id": "call_1", "content": format!("Created file {WORKDIR}/a \"b\".txt with 1 characters")}),
    ])));
    assert_eq!(t.tool_calls()[0].name, "bash");
    let injected = r.injected_calls();
    assert_eq!(injected.len(), 1);
    assert_eq!(injected[0].id, "toolu_runtime");
    assert_eq!(injected[0].name, "view");
    assert_eq!(injected[0].request, 2);
    assert_eq!(
        injected[0].result.as_deref(),
        Some("whatever the runtime saw")
    );

    // An id the server has not issued *yet* is not ours either.
    let r = responder();
    let reply = r.answer(&request(vec![
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "view", "arguments": "{}"}}]}),
        json!({"role": "tool", "tool_call_id": "call_1", "content": "x"}),
    ]));
    assert!(matches!(reply, Reply::Message(_)), "{reply:?}");
    assert_eq!(r.injected_calls()[0].id, "call_1");
}

#[test]
fn unconsumed_conversations_fail_only_a_run_whose_turns_finished() {
    let r = responder();
    turn(r.answer(&request(vec![])));
    assert_eq!(
        failure(&r, false),
        None,
        "a stopped run keeps its own reason"
    );
    let failure = failure(&r, true).expect("an unfinished replay fails a finished run");
    assert!(failure.contains("was fully replayed"), "{failure}");
    assert!(
        failure.contains(
            "conversation 2 of 2 (7 messages): 2 of 3 replies not served; the first is message 5"
        ),
        "{failure}"
    );
}

#[test]
fn shortening_keeps_the_first_difference_in_view() {
    let a = format!("{}A tail", "x".repeat(300));
    let b = format!("{}B tail", "x".repeat(300));
    let (sa, sb) = super::replay::shorten_pair(&a, &b);
    assert!(sa.starts_with('…') && sb.starts_with('…'));
    assert!(
        sa.contains("A tail") && sb.contains("B tail"),
        "{sa} / {sb}"
    );
    assert!(sa.chars().count() <= 170);
}

#[tokio::test]
async fn a_session_serves_the_cassettes_model_and_points_runs_at_it() {
    let path = cassettes_dir().join("tools/invokes_custom_tool.yaml");
    let session = ReplaySession::start(&path).await.unwrap();
    assert_eq!(session.model(), "claude-sonnet-4.5");
    assert_eq!(session.server().models(), ["claude-sonnet-4.5"]);
    assert_eq!(session.server().wire_api(), WireApi::ChatCompletions);
    assert_eq!(session.unconsumed().len(), 1);
    let options = format!("{:?}", session.run_options());
    assert!(options.contains(&session.server().base_url()), "{options}");
    assert!(options.contains("ReplayResponder"), "{options}");
    session.shutdown().await;

    let err = ReplaySession::start(Path::new("no/such.yaml"))
        .await
        .unwrap_err();
    assert!(matches!(err, CassetteError::Io { .. }));
}

// --- values that differ between machines -------------------------------------------------------

/// The tool result runtime 1.0.102 gave the model for a custom tool returning 61,200 bytes
/// (measured; preview shortened here).
const LARGE_OUTPUT: &str = "Output too large to read at once (59.8 KB). Saved to: /tmp/1796080158565-copilot-tool-output-caa0942272c743838721dba39aef5b59.txt\nConsider using tools like grep (for searching), head/tail (for viewing start/end), view with view_range (for specific sections), or jq (for JSON) to examine portions of the output.\n\nPreview (first 500 chars):\n0123456789abcdef\n";

#[test]
fn the_large_output_file_becomes_a_placeholder_wherever_the_temp_folder_is() {
    let expected = LARGE_OUTPUT.replace(
        "/tmp/1796080158565-copilot-tool-output-caa0942272c743838721dba39aef5b59.txt",
        "${tool_output_file}",
    );
    assert_eq!(tool_output_file::replace(LARGE_OUTPUT), expected);
    // Another machine: another folder (with a space), time and name.
    let elsewhere = LARGE_OUTPUT.replace(
        "/tmp/1796080158565-copilot-tool-output-caa0942272c743838721dba39aef5b59",
        "/Users/a b/T/1700000000001-copilot-tool-output-0123456789abcdef0123456789abcdef",
    );
    assert_eq!(tool_output_file::replace(&elsewhere), expected);
    // Not the runtime's file name: kept.
    for kept in [
        "see x-copilot-tool-output-abc.txt",
        "/tmp/12-copilot-tool-output-.txt",
        "/tmp/12-copilot-tool-output-abc.log",
    ] {
        assert_eq!(tool_output_file::replace(kept), kept);
    }
    // Only tool results are touched, through the list.
    let normal = normalised(
        vec![
            json!({"role": "user", "content": "Dump it."}),
            json!({"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "dump", "arguments": "{}"}}]}),
            json!({"role": "tool", "tool_call_id": "call_1", "content": elsewhere}),
        ],
        None,
    );
    assert_eq!(normal[2].content.as_deref(), Some(expected.as_str()));
}

#[cfg(unix)]
#[test]
fn every_spelling_of_a_symlinked_working_directory_becomes_the_placeholder() {
    let root = tempfile::tempdir().unwrap();
    let real = root.path().join("real");
    std::fs::create_dir_all(real.join("work")).unwrap();
    let link = root.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let lexical = link.join("work");
    let canonical = std::fs::canonicalize(&lexical).unwrap();
    assert_ne!(lexical, canonical);
    let spelled = spellings(&lexical);
    assert!(
        spelled.contains(&lexical.display().to_string()),
        "{spelled:?}"
    );
    assert!(
        spelled.contains(&canonical.display().to_string()),
        "{spelled:?}"
    );
    // A directory that is gone is resolved through its existing ancestor.
    let gone = spellings(&link.join("gone"));
    assert!(
        gone.contains(&canonical.with_file_name("gone").display().to_string()),
        "{gone:?}"
    );

    // The run's directory is known without any system prompt line (`replace` mode).
    let request = vec![
        json!({"role": "system", "content": "You are a terse assistant."}),
        json!({"role": "user", "content": format!("Work in {}.", lexical.display())}),
        json!({"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"pwd\"}"}}]}),
        json!({"role": "tool", "tool_call_id": "call_1", "content": format!("{}\n<shellId: 0 completed with exit code 0>", canonical.display())}),
    ];
    let context = Context::for_request(&request, Some(&RunFolders::new(&lexical, None)));
    assert_eq!(context.workdir, Some(lexical.display().to_string()));
    let mut normal: Vec<NormalMessage> = request
        .iter()
        .map(|m| NormalMessage::from_request(m).unwrap())
        .collect();
    normalize(&mut normal, &context);
    assert_eq!(normal[1].content.as_deref(), Some("Work in ${workdir}."));
    assert_eq!(
        normal[3].content.as_deref(),
        Some("${workdir}\n<exited with exit code 0>")
    );
    // Without the run's directory, nothing is known.
    let context = Context::for_request(&request, None);
    assert!(context.workdirs.is_empty() && context.workdir.is_none());
}

/// `${workdir}` is the test's root folder (the copilot-sdk's meaning): a session working in
/// `root/sub` writes `${workdir}/sub/...`, also when the system prompt spells the session's
/// folder canonically (the root's spelling is found from it), and a reply's `${workdir}` is
/// filled with the root; a session outside the root has `${workdir}` for its own folder.
#[cfg(unix)]
#[test]
fn the_workdir_placeholder_stands_for_the_test_root_with_the_session_in_a_subfolder() {
    let temp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(temp.path().join("real/top/sub")).unwrap();
    std::os::unix::fs::symlink(temp.path().join("real"), temp.path().join("link")).unwrap();
    let root = temp.path().join("link/top");
    let session = root.join("sub");
    let canonical_root = std::fs::canonicalize(&root).unwrap();
    let canonical_session = canonical_root.join("sub");
    let folders = RunFolders::new(&session, Some(&root));
    assert_eq!(folders.root, root);
    let request = vec![
        json!({"role": "system", "content": format!("Be good.\n* Current working directory: {}\n", canonical_session.display())}),
        json!({"role": "user", "content": format!("Read {}/notes.txt and {}/top.txt", session.display(), root.display())}),
    ];
    let normalised = |folders: &RunFolders| {
        let context = Context::for_request(&request, Some(folders));
        let mut normal: Vec<NormalMessage> = request
            .iter()
            .map(|m| NormalMessage::from_request(m).unwrap())
            .collect();
        normalize(&mut normal, &context);
        (context.workdir, normal[1].content.clone())
    };
    assert_eq!(
        normalised(&folders),
        (
            Some(canonical_root.display().to_string()),
            Some("Read ${workdir}/sub/notes.txt and ${workdir}/top.txt".to_owned())
        )
    );
    // The old meaning (a cassette recorded before the header's `workdir`).
    assert_eq!(
        normalised(&folders.session_only()),
        (
            Some(canonical_session.display().to_string()),
            Some(format!(
                "Read ${{workdir}}/notes.txt and {}/top.txt",
                root.display()
            ))
        )
    );
    // A session outside the given root: the root is the session's own folder.
    let elsewhere = temp.path().join("elsewhere");
    assert_eq!(RunFolders::new(&elsewhere, Some(&root)).root, elsewhere);
}

/// A reply served without recorded `usage:` makes the run's token usage unknown (the server
/// answers it with its made-up default); with recorded usage everywhere it is known.
#[test]
fn replies_without_recorded_usage_make_the_usage_unknown() {
    let r = responder();
    assert!(!r.usage_unknown(), "nothing served yet");
    turn(r.answer(&request(vec![])));
    assert_eq!(r.replies_without_usage(), 1);
    assert!(r.usage_unknown());

    let with_usage = CASSETTE.replace(
        "      - role: assistant\n        content: \"I'll make it. \"\n      - role: assistant\n",
        "      - role: assistant\n        content: \"I'll make it. \"\n        usage: {input_tokens: 7, output_tokens: 3, cache_read_tokens: 0, cache_write_tokens: 0}\n      - role: assistant\n",
    );
    assert_ne!(with_usage, CASSETTE);
    let r = ReplayResponder::new(Arc::new(
        Cassette::parse(&with_usage, Path::new("usage.yaml")).unwrap(),
    ));
    let t = turn(r.answer(&request(vec![])));
    assert_eq!(t.usage().input_tokens, 7);
    assert_eq!(r.replies_without_usage(), 0);
    assert!(!r.usage_unknown());
}

/// Every miss of a run is in its failure text: the first with its whole diagnosis, each later
/// one with its request number and reason.
#[test]
fn every_miss_is_named_in_the_failure() {
    let r = responder();
    let mut first = request(vec![]);
    first.messages[1] = json!({"role": "user", "content": "Make the files."});
    assert!(matches!(r.answer(&first), Reply::Error { .. }));
    let mut second = request(vec![]);
    second.messages[1] = json!({"role": "user", "content": "Make no file."});
    assert!(matches!(r.answer(&second), Reply::Error { .. }));
    assert_eq!(r.misses().len(), 2);
    let failure = failure(&r, true).unwrap();
    assert!(
        failure.starts_with("replay mismatch: model request 1 matches no recorded conversation"),
        "{failure}"
    );
    assert!(
        failure.contains(r#"request:  user "Make the files.""#),
        "{failure}"
    );
    assert!(
        failure.ends_with(
            "\n  1 later model requests could not be answered either (the run's replay record has each diagnosis):\n    model request 2 matches no recorded conversation"
        ),
        "{failure}"
    );
}

/// A cassette of two independent sessions, replayed by one run: the failure says how to split
/// it (one session per file, the second run's file named).
#[test]
fn an_unused_session_in_a_cassette_says_how_to_split_the_file() {
    let two_sessions = "conversations:\n  - messages:\n      - role: system\n        content: ${system}\n      - role: user\n        content: Make the file.\n      - role: assistant\n        content: Made.\n  - messages:\n      - role: system\n        content: ${system}\n      - role: user\n        content: Say bye.\n      - role: assistant\n        content: Bye.\n";
    let r = ReplayResponder::new(Arc::new(
        Cassette::parse(two_sessions, Path::new("dir/greets.yaml")).unwrap(),
    ));
    assert_eq!(
        turn(r.answer(&request(vec![]))).text_content(),
        Some("Made.")
    );
    let failure = failure(&r, true).unwrap();
    assert!(
        failure.ends_with("\n  conversation 2 of 2 was not used at all: a cassette replays ONE session; if this file holds several recorded sessions, split it: `cargo copilot-eval cassette split dir/greets.yaml --force --session 1 --session 2` keeps the conversations this run used in dir/greets.yaml and moves the unused ones into dir/greets-2.yaml (the cassette of the test's second run); without --session it finds the sessions itself, one file per session (greets-2.yaml, greets-3.yaml, ...)"),
        "{failure}"
    );
    // A run that used nothing gets no split advice (the whole file is unused).
    let r = ReplayResponder::new(Arc::new(
        Cassette::parse(two_sessions, Path::new("dir/greets.yaml")).unwrap(),
    ));
    assert!(!self::failure(&r, true).unwrap().contains("split it"));
}

/// A cassette recorded from a resumed session: the earlier session's conversation is history in
/// its first request (the earlier session's tool calls are not in it: the recorder keeps only
/// the calls its own session's model made).
const RESUMED: &str = r#"
conversations:
  - messages:
      - role: system
        content: ${system}
      - role: user
        content: Make the file.
      - role: assistant
        content: Made it.
      - role: user
        content: What is in it?
      - role: assistant
        tool_calls:
          - id: toolcall_0
            type: function
            function: {name: "${shell}", arguments: '{"command":"cat a.txt"}'}
      - role: tool
        tool_call_id: toolcall_0
        content: x
      - role: assistant
        content: It says x.
"#;

/// The requests of a resumed session: the earlier session's turns (its call `call_1` and its
/// answer) as history, then the resumed session's own turn; `own` is its messages so far.
fn resumed_request(own: Vec<Value>) -> ModelRequest {
    let mut messages = vec![
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "create", "arguments": "{\"path\":\"a.txt\",\"file_text\":\"x\"}"}}]}),
        json!({"role": "tool", "tool_call_id": "call_1", "content": "Created file a.txt"}),
        json!({"role": "assistant", "content": "Made it."}),
        json!({"role": "user", "content": "What is in it?"}),
    ];
    messages.extend(own);
    request(messages)
}

/// A resumed session replays: replies carried as history count as served (not unconsumed),
/// and the earlier session's calls (`call_1`) are history, not this server's calls, even
/// once this server issued `call_2`.
#[test]
fn a_resumed_session_replays_with_its_history_served() {
    let cassette = || Arc::new(Cassette::parse(RESUMED, Path::new("resumed.yaml")).unwrap());
    let r = ReplayResponder::new(cassette()).earlier_calls(1);
    let t = turn(r.answer(&resumed_request(vec![])));
    assert_eq!(t.tool_calls()[0].name, "bash");
    let own = vec![
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_2", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"cat a.txt\"}"}}]}),
        json!({"role": "tool", "tool_call_id": "call_2", "content": "x"}),
    ];
    let t = turn(r.answer(&resumed_request(own.clone())));
    assert_eq!(t.text_content(), Some("It says x."));
    assert!(r.misses().is_empty(), "{:?}", r.misses());
    assert!(r.unconsumed().is_empty(), "{:?}", r.unconsumed());
    assert!(r.injected_calls().is_empty(), "{:?}", r.injected_calls());
    assert_eq!(failure(&r, true), None);

    // Without being told, the earlier `call_1` looks like this server's first call once it
    // issued one, and the request no longer matches the recording.
    let r = ReplayResponder::new(cassette());
    turn(r.answer(&resumed_request(vec![])));
    let own = vec![
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"cat a.txt\"}"}}]}),
        json!({"role": "tool", "tool_call_id": "call_1", "content": "x"}),
    ];
    assert!(matches!(
        r.answer(&resumed_request(own)),
        Reply::Error { .. }
    ));
}

// --- roles -------------------------------------------------------------------------------------

/// A cassette holds the four roles only: another is refused when the file is read, naming the
/// file, the line and column, the field and the roles it may hold.
#[test]
fn an_unknown_role_in_a_cassette_is_refused_naming_the_field() {
    let (line, column, message, shown) = malformed(
        "conversations:\n  - messages:\n      - role: user\n        content: hi\n      - role: developer\n        content: be terse\n",
    );
    assert_eq!((line, column), (Some(5), Some(15)), "{shown}");
    assert!(message.contains("developer"), "{message}");
    assert!(
        ["system", "user", "assistant", "tool"]
            .iter()
            .all(|role| message.contains(role)),
        "{message}"
    );
    assert!(shown.contains("t.yaml"), "{shown}");
}

/// Each role reads and is written back as the cassette spells it (lower case), unchanged.
#[test]
fn roles_are_written_as_they_are_read() {
    for role in [Role::System, Role::User, Role::Assistant, Role::Tool] {
        let yaml = serde_saphyr::to_string(&role).unwrap();
        assert_eq!(yaml.trim(), role.as_str());
        assert_eq!(serde_saphyr::from_str::<Role>(&yaml).unwrap(), role);
        assert_eq!(Role::from_name(role.as_str()), Some(role));
    }
    assert_eq!(Role::from_name("developer"), None);
}

/// A request message of a role no cassette holds matches nothing: the replay misses, naming
/// the role and the message, and diagnoses the rest of the request.
#[test]
fn a_request_message_of_an_unknown_role_is_a_miss_naming_it() {
    let r = responder();
    let mut req = request(vec![]);
    req.messages
        .insert(1, json!({"role": "developer", "content": "Be terse."}));
    assert!(matches!(r.answer(&req), Reply::Error { .. }));
    let miss = &r.misses()[0];
    assert_eq!(
        miss.reason,
        "matches no recorded conversation: message 2 has the role `developer`, which no cassette holds (system, user, assistant, tool)"
    );
    assert_eq!(miss.request_messages.len(), 2, "{miss}");
    assert!(failure(&r, true).unwrap().contains("`developer`"));
}
