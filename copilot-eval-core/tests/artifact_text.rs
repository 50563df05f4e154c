//! Property tests: whatever text a model, a tool or a test hands back, the JUnit XML is valid XML
//! 1.0 (read back with `roxmltree`, a parser that rejects every code point XML forbids) and the
//! JSON results validate against the published schema and keep the exact text.

use copilot_eval_core::StopReason;
use copilot_eval_core::report::{
    CapturedOutput, Outcome, Property, Redactor, RunRecord, RunTotals, SCHEMA_VERSION, SuiteReport,
    SuiteTotals, TestRecord, ToolInfo, json_schema, write_json, write_junit,
};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Code points XML 1.0's `Char` production leaves out, which Rust strings can hold.
const FORBIDDEN: &[char] = &[
    '\u{0}', '\u{1}', '\u{8}', '\u{b}', '\u{c}', '\u{e}', '\u{1b}', '\u{1f}', '\u{fffe}',
    '\u{ffff}',
];

/// Characters with a meaning in XML markup, whitespace XML normalises, and the replacement
/// character that lossy UTF-8 decoding leaves for a lone surrogate.
const MARKUP: &[char] = &[
    '<', '>', '&', '"', '\'', ']', '\r', '\n', '\t', ' ', '\u{fffd}', '\u{85}', '\u{2028}',
];

fn any_char() -> impl Strategy<Value = char> {
    prop_oneof![
        3 => any::<char>(),
        2 => prop::sample::select(FORBIDDEN),
        2 => prop::sample::select(MARKUP),
        1 => prop::char::range('a', 'z'),
    ]
}

/// Arbitrary text: any code point, biased to forbidden and markup ones, sometimes one very long
/// line.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::collection::vec(any_char(), 0..40).prop_map(|c| c.into_iter().collect()),
        1 => (any_char(), 20_000usize..70_000).prop_map(|(c, n)| std::iter::repeat_n(c, n).collect()),
    ]
}

/// Text without control characters (which the JUnit writer removes, with ANSI escapes): what it
/// keeps, so the XML must carry it back unchanged but for U+FFFE and U+FFFF.
fn visible_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            any::<char>(),
            prop::sample::select(&['\u{fffe}', '\u{ffff}', '<', '&', ']', '>'][..]),
        ]
        .prop_filter("no control characters", |c| !c.is_control()),
        1..40,
    )
    .prop_map(|c| c.into_iter().collect())
}

/// A run record as the JSON results hold it (a record is the run's result serialized, which
/// only the crate builds: it is read back from its JSON here).
fn run(stop: StopReason, model: String, prompt: String, response: String) -> RunRecord {
    let configuration = copilot_eval_core::CopilotEval::builder()
        .name("e")
        .build()
        .unwrap()
        .snapshot();
    serde_json::from_value(json!({
        "eval_name": "e",
        "mode": "replay",
        "prompt": prompt,
        "prompts": [prompt],
        "model_requested": model,
        "model_used": model,
        "success": false,
        "stop_reason": stop,
        "error": null,
        "capture_errors": [],
        "evidence_complete": true,
        "cleanup_errors": [],
        "tool_handler_failures": [],
        "tool_calls_admitted": 0,
        "configuration": configuration,
        "turns": [],
        "tool_calls": [],
        "final_response": response,
        "usage": [],
        "totals": RunTotals::default(),
        "duration_ms": 1,
        "timings": copilot_eval_core::result::Timings::default(),
        "working_directory": "/w",
        "skills_invoked": [],
    }))
    .expect("a run record")
}

fn record(name: String, outcome: Outcome, message: Option<String>) -> TestRecord {
    TestRecord {
        provenance: None,
        attempt: None,
        stopped_early: None,
        arm: None,
        trial: None,
        model: None,
        test_id: format!("{name}::__copilot_eval"),
        name,
        binary: "pkg::evals".into(),
        outcome,
        error_kind: None,
        duration_ms: 1,
        message,
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
    }
}

fn suite(tests: Vec<TestRecord>) -> SuiteReport {
    SuiteReport {
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
    }
}

/// Write both artifacts of `report`; check the JSON against the schema and that it reads back
/// equal; parse the XML strictly. Returns the XML text.
fn write_and_check(report: &SuiteReport) -> String {
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("r.json");
    let xml_path = dir.path().join("r.xml");
    write_json(&json_path, report, &Redactor::default()).unwrap();
    write_junit(&xml_path, report, &Redactor::default()).unwrap();
    let text = std::fs::read_to_string(&json_path).unwrap();
    let value: Value = serde_json::from_str(&text).unwrap();
    let schema: Value = serde_json::from_str(&json_schema()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let problems: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(problems.is_empty(), "schema: {problems:?}");
    let back: SuiteReport = serde_json::from_value(value).unwrap();
    assert_eq!(&back, report, "the JSON keeps the exact text");
    let xml = std::fs::read_to_string(&xml_path).unwrap();
    if let Err(e) = roxmltree::Document::parse(&xml) {
        panic!("the JUnit XML is not well-formed: {e}");
    }
    xml
}

/// What the JUnit keeps of text without control characters.
fn xml_kept(text: &str) -> String {
    text.replace(['\u{fffe}', '\u{ffff}'], "\u{fffd}")
}

#[test]
fn one_u_ffff_in_a_property_of_a_passing_eval_keeps_the_junit_parseable() {
    let mut passing = record("t".into(), Outcome::Passed, None);
    passing.properties.push(Property {
        name: "note".into(),
        value: json!("a\u{ffff}b"),
    });
    let report = suite(vec![passing]);
    let xml = write_and_check(&report);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let value = doc
        .descendants()
        .find(|n| n.attribute("name") == Some("property.note"))
        .and_then(|n| n.attribute("value"))
        .expect("the property is in the JUnit");
    assert_eq!(value, "\"a\u{fffd}b\"");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_text_field_yields_valid_xml_and_schema_valid_exact_json(
        name in text(),
        message in text(),
        property_name in text(),
        property_value in text(),
        stdout in text(),
        stderr in text(),
        stop in prop::sample::select(&StopReason::PRECEDENCE[..]),
        model in text(),
        prompt in text(),
        response in text(),
        outcome in prop::sample::select(&[Outcome::Passed, Outcome::Failed, Outcome::Error, Outcome::NotRun][..]),
    ) {
        let mut test = record(name, outcome, Some(message));
        test.properties.push(Property { name: property_name.clone(), value: json!(property_value) });
        test.properties.push(Property { name: "nested".into(), value: json!({ property_name: [property_value] }) });
        test.output = Some(CapturedOutput { stdout, stderr });
        test.runs.push(run(stop, model, prompt, response));
        let report = suite(vec![test]);
        let xml = write_and_check(&report);
        let doc = roxmltree::Document::parse(&xml).unwrap();
        prop_assert_eq!(doc.descendants().filter(|n| n.has_tag_name("testcase")).count(), 1);
    }

    #[test]
    fn visible_text_reaches_the_xml_unchanged_but_for_forbidden_code_points(
        name in visible_text(),
        message in visible_text(),
        value in visible_text(),
    ) {
        let mut test = record(name.clone(), Outcome::Failed, Some(message.clone()));
        test.properties.push(Property { name: "p".into(), value: json!(value) });
        let xml = write_and_check(&suite(vec![test]));
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let case = doc.descendants().find(|n| n.has_tag_name("testcase")).unwrap();
        prop_assert_eq!(case.attribute("name").map(str::to_owned), Some(xml_kept(&name)));
        let failure = case.children().find(|n| n.has_tag_name("failure")).unwrap();
        prop_assert_eq!(failure.attribute("message").map(str::to_owned), Some(xml_kept(&message)));
        prop_assert_eq!(failure.text().map(str::to_owned), Some(xml_kept(&message)));
        let property = case.descendants().find(|n| n.attribute("name") == Some("property.p")).unwrap();
        prop_assert_eq!(
            property.attribute("value").map(str::to_owned),
            Some(xml_kept(&json!(value).to_string()))
        );
    }
}
