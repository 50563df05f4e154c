//! Facts the code keeps typed, in one place, checked on the workspace's source (every `.rs` file
//! of the product crates, their tests, the end-to-end tests, the examples and the benches):
//! - the run's words for a denial and a stop (`tool-call budget ...`, `the eval stopped; ...`)
//!   are spelled only in `copilot-eval-core/src/evidence/denial.rs`: no other file has a string
//!   literal holding them, so nothing can tell a denial's kind from its text (it reads
//!   `Denial::kind`);
//! - a stop reason's text (`replay_mismatch`, `execution_error`, ...) is spelled only in
//!   `copilot-eval-core/src/result/stop.rs` within the product crates (`StopReason::as_str`,
//!   `StopReason::class`), so no list of reasons lives elsewhere;
//! - nowhere is a `stop_reason` or `expected_stop` compared with a string literal (compare the
//!   `StopReason`);
//! - an SDK event's type is turned from its text into the SDK's `SessionEventType` only in
//!   `copilot-eval-core/src/evidence/events.rs` (`RawEvent::kind`): elsewhere no string literal
//!   the pinned SDK reads as an event type (`"tool.execution_complete"`, ...) is matched or
//!   compared, and no `event_type` text is compared, matched or tested by prefix (match on
//!   `RawEvent::kind`). Building an event from its text (a test's fixture) is fine.
//!
//! - the typed-event rule: runtime events are read through the pinned SDK's generated types
//!   (`ToolExecutionStartData`, ...; `RawEvent::read`): no string literal of core's non-test
//!   source is a camelCase key (`"toolCallId"`), except in the modules of [`CAMEL_CASE_HOMES`]:
//!   the one module that reads an event by its keys, naming each such field with why
//!   (`evidence/untyped.rs`), and the instructions file's front matter (a file format the runtime
//!   reads, not an event). The tool-result protocol keys (`resultType`, `textResultForLlm`) are
//!   spelled only in tests (core builds a result through the SDK's `ToolResult`), so no module
//!   is allowed them.
//!
//! - no `pub fn` of `copilot-eval-core/src` returns `Result<_, String>`: a public failure is a
//!   typed error (a `thiserror` enum of its stage) a caller can match on. `pub(crate)` and
//!   `pub(super)` functions may keep a text; a `String` a caller's own closure returns (a tool
//!   handler's, a guard's) is the caller's, not the crate's error, and is not looked at.
//!
//! Comments are not code: a doc comment may name these words.

use copilot_eval_core::evidence::SessionEventType;

mod support;
use support::{Source, code_lines, lex, root, rust_files};

/// The folders scanned, from the workspace root.
const SCANNED: &[&str] = &[
    "copilot-eval-core/src",
    "copilot-eval-core/tests",
    "copilot-eval-macros/src",
    "cargo-copilot-eval/src",
    "cargo-copilot-eval/tests",
    "tests/src",
    "tests/tests",
    "tests/fixture",
    "examples",
    "benches",
];

/// The product's folders, where a stop reason's text may not be spelled outside its module.
const PRODUCT: &[&str] = &[
    "copilot-eval-core/src",
    "copilot-eval-macros/src",
    "cargo-copilot-eval/src",
];

/// Where the denial and stop words live.
const DENIAL_MODULE: &str = "copilot-eval-core/src/evidence/denial.rs";
/// Where the stop reasons' texts live.
const STOP_MODULE: &str = "copilot-eval-core/src/result/stop.rs";
/// Where an event's type text becomes its kind.
const EVENT_MODULE: &str = "copilot-eval-core/src/evidence/events.rs";
/// This file, which names what it looks for.
const THIS_FILE: &str = "copilot-eval-core/tests/one_place.rs";

/// The files of core's source that may spell a camelCase key, each with why.
const CAMEL_CASE_HOMES: &[(&str, &str)] = &[
    (
        "copilot-eval-core/src/evidence/untyped.rs",
        "the event fields the pinned SDK does not type, each named with why",
    ),
    (
        "copilot-eval-core/src/customization/instructions.rs",
        "an instructions file's front-matter keys (`applyTo`, `excludeAgent`), as the runtime reads the file: a file format, not an event",
    ),
    (
        "copilot-eval-core/src/cassette/format.rs",
        "a cassette's `errors:` entries spell their keys as the copilot-sdk's snapshot format does (`retryAfterSeconds`): a file format, not an event",
    ),
    (
        "copilot-eval-core/src/cassette/write.rs",
        "writes a cassette's `errors:` entries with the copilot-sdk's keys (`retryAfterSeconds`): a file format, not an event",
    ),
];

/// Text a string literal outside [`DENIAL_MODULE`] may not hold.
const DENIAL_WORDS: &[&str] = &["tool-call budget", "the eval stopped"];

/// The stop reasons' texts that are not also common words (`completed` and `timeout` are: a
/// response item's status, a configuration key), which a product string literal may not be
/// outside [`STOP_MODULE`].
const STOP_TEXTS: &[&str] = &[
    "execution_error",
    "skill_setup_error",
    "mcp_setup_error",
    "script_exhausted",
    "model_unavailable",
    "tool_budget_exceeded",
    "replay_mismatch",
    "runtime_substitution",
    "request_audit_error",
    "cleanup_error",
    "pending_tool_call",
];

/// What the rules find in `source`, the file at `relative` (workspace-relative, `/`-separated).
fn violations(relative: &str, source: &Source) -> Vec<String> {
    let mut found = Vec::new();
    if relative != DENIAL_MODULE && relative != THIS_FILE {
        for literal in &source.literals {
            for words in DENIAL_WORDS {
                if literal.text.contains(words) {
                    found.push(format!(
                        "{relative}:{}: the string {:?} spells the run's words for a denial or stop ({words:?}); use the constructors and functions of copilot_eval_core::evidence::denial, and Denial::kind instead of its text",
                        literal.line, literal.text
                    ));
                }
            }
        }
    }
    let product = PRODUCT.iter().any(|p| relative.starts_with(p));
    if product && relative != STOP_MODULE {
        for literal in &source.literals {
            if STOP_TEXTS.contains(&literal.text.as_str()) {
                found.push(format!(
                    "{relative}:{}: the string {:?} is a stop reason's text; use StopReason (its as_str or class, in result/stop.rs)",
                    literal.line, literal.text
                ));
            }
        }
    }
    if relative != THIS_FILE {
        let compare = regex::Regex::new(
            r#"(stop_reason|expected_stop)[\w.()]*\s*(==|!=)\s*"|"[^"\n]*"\s*(==|!=)\s*[\w.&*()]*(stop_reason|expected_stop)"#,
        )
        .unwrap();
        for m in compare.find_iter(&source.code) {
            let line = source.code[..m.start()].matches('\n').count() + 1;
            found.push(format!(
                "{relative}:{line}: `{}` compares a stop reason with a string; compare the StopReason",
                m.as_str()
            ));
        }
    }
    if relative != EVENT_MODULE && relative != THIS_FILE {
        found.extend(event_type_matches(relative, source));
    }
    found
}

/// Whether the pinned SDK reads `text` as the type of one of its session events.
fn is_event_type(text: &str) -> bool {
    serde_json::from_value::<SessionEventType>(serde_json::Value::String(text.to_owned()))
        .is_ok_and(|kind| kind != SessionEventType::Unknown)
}

/// The event types matched by their text in `source`: a string literal the SDK reads as an
/// event type next to `==`, `!=`, `=>`, `|` or `if` (a comparison, a match arm or a pattern
/// list), and an `event_type` field compared, matched, or tested by prefix, suffix or
/// substring (which also catches a helper that takes the text and compares it).
fn event_type_matches(relative: &str, source: &Source) -> Vec<String> {
    let line_of = |at: usize| source.code[..at].matches('\n').count() + 1;
    let mut found = Vec::new();
    let literal = regex::Regex::new(r#""([A-Za-z_.]+)""#).unwrap();
    for m in literal.captures_iter(&source.code) {
        let whole = m.get(0).unwrap();
        let text = m.get(1).unwrap().as_str();
        let before = source.code[..whole.start()].trim_end();
        let after = source.code[whole.end()..].trim_start();
        let compared = ["==", "!="].iter().any(|op| before.ends_with(op))
            || (before.ends_with('|') && !before.ends_with("||"))
            || ["=>", "==", "!=", "if "]
                .iter()
                .any(|op| after.starts_with(op))
            || (after.starts_with('|') && !after.starts_with("||"));
        if compared && is_event_type(text) {
            found.push(format!(
                "{relative}:{}: the event type {text:?} is matched by its text; match on RawEvent::kind (the SDK's SessionEventType, evidence/events.rs)",
                line_of(whole.start())
            ));
        }
    }
    let field = regex::Regex::new(
        r"event_type\s*(==|!=)|event_type\s*\.\s*(starts_with|ends_with|contains|strip_prefix)\s*\(|match\s+[\w.&*]*event_type\b",
    )
    .unwrap();
    for m in field.find_iter(&source.code) {
        found.push(format!(
            "{relative}:{}: `{}` reads an event's kind from its type text; match on RawEvent::kind (the SDK's SessionEventType, evidence/events.rs)",
            line_of(m.start()),
            m.as_str()
        ));
    }
    found
}

/// The `pub fn`s of `source` (not `pub(crate)`, `pub(super)`, `pub(in ..)`) whose return type is
/// a `Result` whose error is `String`: `file:line: name`. The signature runs from `pub` to its
/// body's `{` or its `;`; only what follows its top-level `->` (before a `where`) is read.
fn string_errors(relative: &str, source: &Source) -> Vec<String> {
    let line_of = |at: usize| source.code[..at].matches('\n').count() + 1;
    let signature =
        regex::Regex::new(r"\bpub\s+(?:(?:const|async|unsafe|extern)\s+)*fn\s+(\w+)[^{;]*")
            .unwrap();
    let where_clause = regex::Regex::new(r"\bwhere\b").unwrap();
    let mut found = Vec::new();
    for m in signature.captures_iter(&source.code) {
        let whole = m.get(0).unwrap();
        let text = whole.as_str();
        // The return type: after the `->` at bracket depth 0.
        let mut depth = 0i32;
        let mut returns = None;
        let bytes = text.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            match b {
                b'(' | b'<' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b'>' if i > 0 && bytes[i - 1] == b'-' => {
                    returns = returns.or((depth == 0).then(|| &text[i + 1..]));
                }
                b'>' => depth -= 1,
                _ => {}
            }
        }
        let Some(returns) = returns else { continue };
        let returns = where_clause.split(returns).next().unwrap_or("");
        if result_error_is_string(returns) {
            found.push(format!(
                "{relative}:{}: `pub fn {}` returns `{}`: a public failure is a typed error (a thiserror enum of its stage, with the same message), not a String",
                line_of(whole.start()),
                &m[1],
                returns.split_whitespace().collect::<Vec<_>>().join(" ")
            ));
        }
    }
    found
}

/// Whether a `Result<..>` in `ty` has `String` as its error (its last top-level argument).
fn result_error_is_string(ty: &str) -> bool {
    let mut rest = ty;
    while let Some(at) = rest.find("Result<") {
        let after = &rest[at + "Result<".len()..];
        let mut depth = 0i32;
        let mut args = vec![String::new()];
        for c in after.chars() {
            match c {
                '<' | '(' | '[' => depth += 1,
                '>' | ')' | ']' if depth == 0 => break,
                '>' | ')' | ']' => depth -= 1,
                ',' if depth == 0 => {
                    args.push(String::new());
                    continue;
                }
                _ => {}
            }
            args.last_mut().unwrap().push(c);
        }
        let error = args.last().map(|a| a.trim()).unwrap_or("");
        if args.len() >= 2 && matches!(error, "String" | "std::string::String") {
            return true;
        }
        rest = after;
    }
    false
}

/// What `rule` finds in every Rust file under `dirs` (relative to the workspace root), each
/// file named by its path relative to the root. Fails when `dirs` hold `at_least` files or
/// fewer: the scan would be looking in the wrong place.
fn scan(dirs: &[&str], at_least: usize, rule: fn(&str, &Source) -> Vec<String>) -> Vec<String> {
    let root = root();
    let mut files = Vec::new();
    for dir in dirs {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(
        files.len() > at_least,
        "only {} files found under {} in {}: the scan is looking in the wrong place",
        files.len(),
        dirs.join(", "),
        root.display()
    );
    let mut found = Vec::new();
    for file in &files {
        let relative = file
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(file).unwrap();
        found.extend(rule(&relative, &lex(&text)));
    }
    found
}

/// Whether `text` is a camelCase key: a lowercase letter first, then letters and digits with at
/// least one uppercase letter (`toolCallId`, `inputTokens`).
fn is_camel_case(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && text.chars().all(|c| c.is_ascii_alphanumeric())
        && text.chars().any(|c| c.is_ascii_uppercase())
}

/// The camelCase keys `source` (the file at `relative`, its test blocks already blanked) spells
/// outside [`CAMEL_CASE_HOMES`].
fn camel_case_keys(relative: &str, source: &Source) -> Vec<String> {
    if CAMEL_CASE_HOMES.iter().any(|(home, _)| *home == relative) {
        return Vec::new();
    }
    source
        .literals
        .iter()
        .filter(|l| is_camel_case(&l.text))
        .map(|l| {
            format!(
                "{relative}:{}: the string {:?} is a camelCase key: read the event through the pinned SDK's generated type (`RawEvent::read::<ToolExecutionStartData>()`, ...); a field the SDK does not type is read in copilot-eval-core/src/evidence/untyped.rs, with why",
                l.line, l.text
            )
        })
        .collect()
}

/// Core's non-test source reads runtime events through the SDK's types: no camelCase key outside
/// [`CAMEL_CASE_HOMES`]. Test files (`tests.rs`, `*_tests.rs`) and inline `#[cfg(test)]` modules
/// are left out: a test builds events as the runtime sends them.
#[test]
fn events_are_read_through_the_sdk_types() {
    let root = root();
    let mut files = Vec::new();
    rust_files(&root.join("copilot-eval-core/src"), &mut files);
    assert!(files.len() > 50, "only {} files found", files.len());
    let mut found = Vec::new();
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy();
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let relative = file
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(file).unwrap();
        found.extend(camel_case_keys(&relative, &lex(&code_lines(&text))));
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
    for (home, _) in CAMEL_CASE_HOMES {
        assert!(
            root.join(home).is_file(),
            "{home} does not exist: update CAMEL_CASE_HOMES"
        );
    }
}

/// The typed-event rule finds a camelCase key in code and attributes, and leaves comments, test
/// modules, other spellings and the homes alone.
#[test]
fn the_typed_event_rule_finds_camel_case_keys() {
    let code = r#"
        let id = data.get("toolCallId");
        // data.get("inputTokens") in a comment
        let text = "a sentence naming toolCallId";
        let snake = value["tool_call_id"];
        let kebab = "excludeAgent-x";
        #[serde(rename = "newModel")]
        let header = "Content-Type";
        #[cfg(test)]
        mod tests {
            fn event() { json!({"toolCallId": "c1"}); }
        }
    "#;
    let source = lex(&code_lines(code));
    let found = camel_case_keys("copilot-eval-core/src/evidence/map.rs", &source);
    let lines: Vec<&str> = found
        .iter()
        .map(|f| f.split(": ").next().unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            "copilot-eval-core/src/evidence/map.rs:2",
            "copilot-eval-core/src/evidence/map.rs:7",
        ],
        "{found:#?}"
    );
    assert!(found[0].contains("\"toolCallId\""), "{}", found[0]);
    assert!(camel_case_keys("copilot-eval-core/src/evidence/untyped.rs", &source).is_empty());
}

/// No public function of core returns a text as its error.
#[test]
fn public_functions_return_typed_errors() {
    let found = scan(&["copilot-eval-core/src"], 50, string_errors);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The rule finds a public `Result<_, String>` over several lines and in a future, and leaves
/// restricted visibility, closures' and parameters' texts and other error types alone.
#[test]
fn the_string_error_rule_finds_public_text_errors() {
    let code = r#"
        pub fn one() -> Result<Vec<String>, String> {}
        pub async fn two(
            a: &str,
        ) -> Result<Option<(u16, String)>, String> {
        }
        pub(crate) fn three() -> Result<(), String> {}
        pub(super) fn four() -> Result<(), String> {}
        pub fn five(check: &dyn Fn(&Path) -> Result<(), String>) -> Result<(), RuntimeError> {}
        pub fn six<F>(f: F) -> Tool where F: Fn() -> Result<String, String> {}
        pub fn seven() -> Result<String, ModeError>;
        // pub fn eight() -> Result<(), String> {}
        pub fn nine() -> std::result::Result<(), std::string::String> {}
    "#;
    let found = string_errors("copilot-eval-core/src/x.rs", &lex(code));
    let names: Vec<&str> = found.iter().map(|f| f.split('`').nth(1).unwrap()).collect();
    assert_eq!(
        names,
        ["pub fn one", "pub fn two", "pub fn nine"],
        "{found:#?}"
    );
    assert!(
        found[1].starts_with("copilot-eval-core/src/x.rs:3:"),
        "{}",
        found[1]
    );
}

/// The rules hold over the workspace's source.
#[test]
fn denial_words_and_stop_reasons_are_spelled_in_one_place() {
    let found = scan(SCANNED, 100, violations);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The lexer and the rules find what they are for, and leave comments and other files alone.
#[test]
fn the_rules_find_what_they_look_for() {
    let code = r##"
        // "the eval stopped; in a comment"
        /// `tool-call budget` in a doc comment
        let c = '"';
        let q = '\'';
        let s = "tool-call budget exhausted (max_tool_calls = 2); x was not run";
        let r = r#"the eval stopped; "quoted" x"#;
        if run.stop_reason.as_str() == "replay_mismatch" {}
        if "completed" != record.expected_stop.unwrap().as_str() {}
        let fine = StopReason::ReplayMismatch;
    "##;
    let source = lex(code);
    let texts: Vec<&str> = source.literals.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "tool-call budget exhausted (max_tool_calls = 2); x was not run",
            "the eval stopped; \"quoted\" x",
            "replay_mismatch",
            "completed",
        ]
    );
    let found = violations("copilot-eval-core/src/report/x.rs", &source);
    assert_eq!(found.len(), 5, "{found:#?}");
    assert!(found[0].contains(":6: the string"), "{}", found[0]);
    assert!(found[2].contains("is a stop reason's text"), "{}", found[2]);
    assert!(
        found[3].contains(":8: `stop_reason.as_str() == \""),
        "{}",
        found[3]
    );
    assert!(
        found[4].contains(":9: `\"completed\" != record.expected_stop"),
        "{}",
        found[4]
    );
    // The defining modules may spell their own words.
    let denial = violations(DENIAL_MODULE, &lex(r#"let s = "the eval stopped; x";"#));
    assert!(denial.is_empty(), "{denial:?}");
    let stop = violations(
        STOP_MODULE,
        &lex(r#"Self::ReplayMismatch => "replay_mismatch","#),
    );
    assert!(stop.is_empty(), "{stop:?}");
    // A test may compare the JSON's text; only the product may not spell a reason.
    let test = violations(
        "tests/tests/x.rs",
        &lex(r#"assert_eq!(v["stop_reason"], "replay_mismatch");"#),
    );
    assert!(test.is_empty(), "{test:?}");
}

/// The event-type rule finds matching by text (match arms, pattern lists, comparisons, prefix
/// tests) and leaves building an event from its text, other dotted strings and the defining
/// module alone.
#[test]
fn the_event_type_rule_finds_matching_by_text() {
    let code = r#"
        match event.event_type.as_str() {
            "session.idle" if root => {}
            "tool.execution_start" | "tool.execution_complete" => {}
            _ => {}
        }
        let b = e.kind() == SessionEventType::SkillInvoked || x == "skill.invoked";
        let mcp = e.event_type.starts_with("session.mcp_");
        // "assistant.message" => in a comment
        let fixture = event("assistant.message", json!({}));
        let logged = ("session.start", None, json!({}));
        let other = x == "response.create" || y == "session.update";
    "#;
    let found = event_type_matches("copilot-eval-core/src/run/x.rs", &lex(code));
    let lines: Vec<&str> = found
        .iter()
        .map(|f| f.split(": ").next().unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            "copilot-eval-core/src/run/x.rs:3",
            "copilot-eval-core/src/run/x.rs:4",
            "copilot-eval-core/src/run/x.rs:4",
            "copilot-eval-core/src/run/x.rs:7",
            "copilot-eval-core/src/run/x.rs:2",
            "copilot-eval-core/src/run/x.rs:8",
        ],
        "{found:#?}"
    );
    assert!(violations(EVENT_MODULE, &lex(code)).is_empty());
}
