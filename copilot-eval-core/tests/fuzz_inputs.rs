//! Fuzz-style property tests (stable Rust, proptest) of every parser of outside input: front
//! matter (skills, agents, instructions), cassettes, the audit's request bodies (HTTP and
//! WebSocket), the pricing table, the evidence side file and `merge` inputs.
//!
//! Inputs are real files with random edits (characters inserted, deleted, replaced, the text
//! cut) or arbitrary text. Each parser must return (no panic), and an error must name the file
//! and, when the text is not even well-formed (YAML, TOML or JSON), the position.

use std::path::{Path, PathBuf};

use copilot_eval_core::cassette::Cassette;
use copilot_eval_core::cost::{DEFAULT_PRICING, PricingTable};
use copilot_eval_core::customization::{AgentFile, InstructionsFile, Skill};
use copilot_eval_core::harness::{EVIDENCE_FORMAT, EvidenceStatus, TestEvidence};
use copilot_eval_core::report::merge::read_shard;
use copilot_eval_core::report::{
    Outcome, Property, SCHEMA_VERSION, SuiteReport, SuiteTotals, TestRecord, ToolInfo,
};
use copilot_eval_core::run::proxy::audit::{RequestOrigin, inspect_http, inspect_websocket};
use copilot_eval_core::wire::Route;
use proptest::prelude::*;
use serde_json::{Value, json};

const CASSETTE: &str =
    include_str!("../../examples/quickstart/tests/cassettes/evals/creates_a_greeting_file.yaml");
const SKILL: &str = include_str!("../../examples/quickstart/skills/release-notes/SKILL.md");
const AGENT: &str =
    include_str!("../../examples/quickstart/copilot-config/.github/agents/reviewer.agent.md");
const CHAT_REQUEST: &str = r#"{"model":"gpt-4.1","messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA==","detail":"low"}}]}],"tools":[],"stream":true}"#;
const RESPONSES_REQUEST: &str = r#"{"type":"response.create","model":"gpt-5","instructions":"be brief","input":[{"role":"user","content":[{"type":"input_text","text":"hi"},{"type":"input_image","image_url":"data:image/png;base64,AA=="}]}],"tools":[]}"#;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 96,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn edit_char() -> impl Strategy<Value = char> {
    prop_oneof![
        any::<char>(),
        prop::sample::select(
            &[
                ':', '-', ' ', '\n', '\t', '"', '\'', '{', '}', '[', ']', ',', '#', '&', '*', '!',
                '|', '>', '=', '\\', '\0', '\u{feff}', '\u{ffff}'
            ][..]
        ),
    ]
}

/// One edit: where (a fraction of the length), what (0 insert, 1 delete, 2 replace, 3 cut the
/// rest), and the character.
type Edit = (f64, u8, char);

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    prop::collection::vec((0.0..1.0f64, 0u8..4, edit_char()), 1..8)
}

fn apply(seed: &str, edits: &[Edit]) -> String {
    let mut chars: Vec<char> = seed.chars().collect();
    for &(at, op, c) in edits {
        let i = ((chars.len() as f64) * at) as usize;
        match op {
            0 => chars.insert(i.min(chars.len()), c),
            1 if i < chars.len() => {
                chars.remove(i);
            }
            2 if i < chars.len() => chars[i] = c,
            3 => chars.truncate(i),
            _ => {}
        }
    }
    chars.into_iter().collect()
}

/// A seed with random edits, or arbitrary text.
fn input(seed: &'static str) -> impl Strategy<Value = String> {
    prop_oneof![
        4 => edits().prop_map(move |e| apply(seed, &e)),
        1 => any::<String>(),
    ]
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

fn not_yaml(text: &str) -> bool {
    serde_saphyr::from_str::<Value>(text).is_err()
}

fn has_position(message: &str) -> bool {
    message.contains("line") || message.split(':').any(|p| p.trim().parse::<u32>().is_ok())
}

fn evidence_seed() -> &'static str {
    let evidence = TestEvidence {
        provenance: None,
        format: EVIDENCE_FORMAT.into(),
        test_id: "t::__copilot_eval".into(),
        name: "t".into(),
        status: EvidenceStatus::Running,
        pid: 1,
        deadline_unix_ms: 2,
        mode: "replay".into(),
        properties: vec![Property {
            name: "p".into(),
            value: json!({"a": [1, "b"]}),
        }],
        runs: vec![],
        running: Some("e".into()),
        failure: None,
        setup_error: None,
        workdir: Some("/w".into()),
        workdir_kept: false,
        cassette: "/c.yaml".into(),
        comparisons: Vec::new(),
        triggers: Vec::new(),
        judges: Vec::new(),
        source: None,
        model: None,
        trial_ask: None,
        expectations: Vec::new(),
        skill_eval: None,
        trigger_query: None,
    };
    Box::leak(
        serde_json::to_string_pretty(&evidence)
            .unwrap()
            .into_boxed_str(),
    )
}

fn results_seed() -> &'static str {
    let tests = vec![TestRecord {
        provenance: None,
        attempt: None,
        stopped_early: None,
        arm: None,
        trial: None,
        model: None,
        name: "t".into(),
        test_id: "t::__copilot_eval".into(),
        binary: "pkg::evals".into(),
        outcome: Outcome::Failed,
        error_kind: None,
        duration_ms: 1,
        message: Some("boom".into()),
        properties: vec![],
        runs: vec![],
        workdir: None,
        cassette: None,
        exit: None,
        output: None,
        cost: None,
        comparisons: Vec::new(),
        triggers: Vec::new(),
        judges: Vec::new(),
        source: None,
        skill_eval: None,
        trigger_query: None,
        ablated: Vec::new(),
        expectations: Vec::new(),
    }];
    let report = SuiteReport {
        provenance: None,
        trial_summaries: Vec::new(),
        model_matrix: Vec::new(),
        skill_triggers: Vec::new(),
        skill_lift: None,
        discrimination: None,
        judge_labels: None,
        noise_floor: None,
        baseline: None,
        schema_version: SCHEMA_VERSION.into(),
        tool: ToolInfo {
            name: "copilot-eval".into(),
            version: "0.1.0".into(),
        },
        runtime: Default::default(),
        mode: "replay".into(),
        requested_mode: None,
        started_at: "2026-01-31T09:15:02Z".into(),
        duration_ms: 1,
        totals: SuiteTotals::of(&tests),
        cost_control: None,
        partition: None,
        pool: None,
        tests,
    };
    Box::leak(
        serde_json::to_string_pretty(&report)
            .unwrap()
            .into_boxed_str(),
    )
}

#[test]
fn the_seeds_are_valid() {
    let dir = tempfile::tempdir().unwrap();
    Cassette::parse(CASSETTE, Path::new("c.yaml")).unwrap();
    Skill::load(write(dir.path(), "release-notes/SKILL.md", SKILL)).unwrap();
    AgentFile::load(write(dir.path(), "reviewer.agent.md", AGENT)).unwrap();
    PricingTable::parse(DEFAULT_PRICING, "p.toml").unwrap();
    TestEvidence::read(&write(dir.path(), "e.json", evidence_seed())).unwrap();
    read_shard(&write(dir.path(), "r.json", results_seed())).unwrap();
    let origin = RequestOrigin::default();
    inspect_http(
        Route::of("POST", "/chat/completions"),
        "POST",
        "/chat/completions",
        None,
        CHAT_REQUEST.as_bytes(),
        None,
        &origin,
    )
    .unwrap();
    inspect_websocket(RESPONSES_REQUEST.as_bytes(), false, None, &origin).unwrap();
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn front_matter_of_skills_agents_and_instructions(skill in input(SKILL), agent in input(AGENT)) {
        let dir = tempfile::tempdir().unwrap();
        let skill_path = write(dir.path(), "release-notes/SKILL.md", &skill);
        if let Err(e) = Skill::load(&skill_path) {
            for problem in e.errors() {
                prop_assert!(problem.file.ends_with("SKILL.md") || problem.file.ends_with("release-notes"), "{problem}");
            }
            prop_assert!(!e.to_string().is_empty());
        }
        for name in ["reviewer.agent.md", "a.instructions.md"] {
            let path = write(dir.path(), name, &agent);
            let problems = match name {
                "reviewer.agent.md" => AgentFile::load(&path).err(),
                _ => InstructionsFile::load(&path).err(),
            };
            for problem in problems.iter().flat_map(|e| e.errors()) {
                prop_assert_eq!(&problem.file, &path, "{}", problem);
                if problem.rule == "front-matter-yaml" {
                    prop_assert!(problem.line.is_some(), "no line: {}", problem);
                }
            }
        }
    }

    #[test]
    fn cassettes(text in input(CASSETTE)) {
        let path = Path::new("dir/c.yaml");
        if let Err(e) = Cassette::parse(&text, path) {
            let message = e.to_string();
            prop_assert!(message.starts_with("dir/c.yaml"), "{}", message);
            if not_yaml(&text) {
                let line = message
                    .strip_prefix("dir/c.yaml:")
                    .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
                prop_assert!(line, "no position: {}", message);
            }
        }
    }

    #[test]
    fn pricing_tables(text in input(DEFAULT_PRICING)) {
        if let Err(e) = PricingTable::parse(&text, "dir/prices.toml") {
            let message = e.to_string();
            prop_assert!(message.contains("dir/prices.toml"), "{}", message);
            if toml::from_str::<toml::Table>(&text).is_err() {
                prop_assert!(has_position(&message), "no position: {}", message);
            }
        }
    }

    #[test]
    fn evidence_side_files(text in input(evidence_seed())) {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "evidence.json", &text);
        if let Err(error) = TestEvidence::read(&path) {
            let message = error.to_string();
            prop_assert!(message.contains(&path.display().to_string()), "{}", message);
            if serde_json::from_str::<Value>(&text).is_err() {
                prop_assert!(has_position(&message), "no position: {}", message);
            }
        }
    }

    #[test]
    fn merge_inputs(text in input(results_seed())) {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "shard.json", &text);
        if let Err(e) = read_shard(&path) {
            let message = e.to_string();
            prop_assert!(message.contains(&path.display().to_string()), "{}", message);
            if serde_json::from_str::<Value>(&text).is_err() {
                prop_assert!(has_position(&message), "no position: {}", message);
            }
        }
    }

    #[test]
    fn audited_request_bodies(chat in input(CHAT_REQUEST), responses in input(RESPONSES_REQUEST), binary in any::<bool>()) {
        let origin = RequestOrigin::default();
        for (path, body) in [("/chat/completions", &chat), ("/responses", &responses), ("/v1/x", &chat)] {
            if let Err(e) = inspect_http(Route::of("POST", path), "POST", path, None, body.as_bytes(), None, &origin) {
                let message = e.to_string();
                prop_assert!(!message.is_empty());
                if path != "/v1/x" && serde_json::from_str::<Value>(body).is_err() {
                    prop_assert!(has_position(&message), "no position: {}", message);
                }
            }
        }
        if let Err(e) = inspect_websocket(responses.as_bytes(), binary, None, &origin) {
            let message = e.to_string();
            if !binary && serde_json::from_str::<Value>(&responses).is_err() {
                prop_assert!(has_position(&message), "no position: {}", message);
            }
        }
    }
}
