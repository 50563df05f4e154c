//! A skill's own test cases as evals: `skills/changelog/evals/evals.json` (the skill-creator
//! format) holds three entries; `#[copilot_eval(skill_evals = "skills/changelog")]` makes one
//! eval test per entry at compile time (`changelog_skill::eval_1_write_the_changelog_for_the`,
//! ...), copies each entry's `files` into its working directory, and hands the test its
//! [`SkillCase`]. The test decides each expectation with its own check of the real output and
//! records the verdict with `ctx.expect`; `cargo copilot-eval --grading DIR` writes each
//! entry's `grading.json`.
//!
//! The model is scripted per entry (offline in every mode); the real runtime loads the skill,
//! runs the tool calls and writes the files the checks read.
//!
//! The skill's trigger set `skills/changelog/evals/triggers.json` (two queries that should
//! invoke it, two that should not) becomes four more eval tests under
//! `#[copilot_eval(skill_triggers = "skills/changelog")]` (`changelog_triggers::invoke_1_...`,
//! `changelog_triggers::dormant_3_...`); each checks its run with `case.check(&ctx, &result)`,
//! and the report sums the checks into the skill's trigger and false-trigger rates.
//!
//! ```sh
//! cargo copilot-eval -p scripted changelog_skill --grading results/grading
//! cargo copilot-eval -p scripted changelog_triggers --trials 3
//! ```

use copilot_eval_core::CopilotResult;
use copilot_eval_core::copilot_eval;
use copilot_eval_core::harness::{EvalContext, SkillCase, TriggerCase};
use copilot_eval_core::model_server::{Script, ScriptedTurn};
use serde_json::json;

/// A line of the body of `skills/changelog/SKILL.md`.
const SKILL_BODY: &str = "Write the changelog into `CHANGELOG.md`";

/// The scripted model's turns for each entry: it invokes the skill, reads the input file, and
/// writes `CHANGELOG.md` (entries 1 and 2); it answers in one sentence (entry 3).
fn script(ctx: &EvalContext, case: &SkillCase) -> Script {
    let changelog = ctx.workdir().join("CHANGELOG.md");
    let skill = ScriptedTurn::tool_call("skill", json!({"skill": "changelog"}));
    match case.id.as_str() {
        "1" => Script::new([])
            .turn(skill)
            .turn(ScriptedTurn::tool_call("view", json!({"path": case.files[0]})))
            .turn(ScriptedTurn::tool_call(
                "create",
                json!({"path": changelog, "file_text": "## 1.3.0\n- Fix the login timeout\n- Add dark mode\n"}),
            ))
            .turn(ScriptedTurn::text("Wrote CHANGELOG.md.")),
        "2" => Script::new([])
            .turn(skill)
            .turn(ScriptedTurn::tool_call(
                "create",
                json!({"path": changelog, "file_text": "## 1.2.1\n- Fix the crash on start\n"}),
            ))
            .turn(ScriptedTurn::text("Added the 1.2.1 entry.")),
        _ => Script::new([]).turn(ScriptedTurn::text(
            "The changelog skill turns a list of changes into a CHANGELOG.md section.",
        )),
    }
}

/// The skill's eval entries. Each expectation of `evals.json` is decided here by a check of
/// what the session really did (the runtime's `skill.invoked` event, its tool calls, the files
/// in the working directory) and recorded with `ctx.expect`.
#[copilot_eval(
    skill_evals = "skills/changelog",
    model = "claude-sonnet-4.5",
    timeout_s = 120,
    max_tool_calls = 5
)]
async fn changelog_skill(ctx: EvalContext, case: SkillCase) {
    ctx.offline(script(&ctx, &case));
    let eval = ctx.eval().skill_directory("skills").build().unwrap();
    let result = ctx.run(&eval, case.prompt.as_str()).await;
    result.assert_success();
    // What reached the scripted model: the skill's body once the skill was invoked. On the side
    // without the skill (`cargo copilot-eval --ablate skills`) it never does.
    let body_seen = ctx.model_requests().iter().any(|request| {
        request
            .messages
            .iter()
            .any(|message| message.to_string().contains(SKILL_BODY))
    });
    ctx.record_property("skill_body_reached_the_model", body_seen);
    for expectation in &case.expectations {
        let (passed, evidence) = check(&result, &case, expectation);
        ctx.expect(expectation, passed, evidence);
    }
}

/// One expectation's verdict and the evidence it rests on.
fn check(result: &CopilotResult, case: &SkillCase, expectation: &str) -> (bool, String) {
    let changelog = result.file("CHANGELOG.md").unwrap_or_default();
    match expectation {
        "The changelog skill was invoked" => (
            result.skill_was_invoked("changelog"),
            format!(
                "skills invoked: {:?}",
                result
                    .skill_invocations
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
            ),
        ),
        "The session read CHANGES.txt" => {
            // The runtime's `view` tool read the copy of the input file in the working
            // directory: its result holds the file's lines.
            let read = result
                .tool_calls_for("view")
                .iter()
                .filter_map(|call| call.result.as_deref())
                .any(|text| text.contains("fix the login timeout"));
            (
                read,
                format!("view calls: {}", result.tool_call_count("view")),
            )
        }
        "CHANGELOG.md lists every change of CHANGES.txt under ## 1.3.0" => {
            let input = std::fs::read_to_string(&case.files[0]).unwrap_or_default();
            let changes: Vec<&str> = input.lines().skip(1).collect();
            let listed = changelog.starts_with("## 1.3.0\n")
                && changes
                    .iter()
                    .all(|change| changelog.to_lowercase().contains(&format!("- {change}")));
            (listed, format!("CHANGELOG.md: {changelog:?}"))
        }
        "CHANGELOG.md has a ## 1.2.1 section with one bullet" => (
            changelog.starts_with("## 1.2.1\n")
                && changelog.lines().filter(|l| l.starts_with("- ")).count() == 1,
            format!("CHANGELOG.md: {changelog:?}"),
        ),
        "The answer says what the skill is for" => {
            let answer = result.final_response.clone().unwrap_or_default();
            (
                answer.contains("CHANGELOG.md"),
                format!("answer: {answer:?}"),
            )
        }
        "No file was written" => {
            let files = result.files_matching("**/*").unwrap_or_default();
            // Relative to the working directory; the entry has no input files to leave aside.
            let written: Vec<_> = files.iter().filter(|f| !f.starts_with("evals")).collect();
            (
                written.is_empty(),
                format!("files besides the inputs: {written:?}"),
            )
        }
        other => (false, format!("no check is written for {other:?}")),
    }
}

/// The skill's trigger set: one test per query of `evals/triggers.json`. The scripted model
/// stands in for a live one with a plain policy (it invokes the `changelog` skill when the
/// query names a changelog); whether the skill really was invoked is read from the runtime's
/// `skill.invoked` events, and the test fails when that differs from the query's
/// `should_trigger`.
#[copilot_eval(
    skill_triggers = "skills/changelog",
    model = "claude-sonnet-4.5",
    timeout_s = 120,
    max_tool_calls = 3
)]
async fn changelog_triggers(ctx: EvalContext, case: TriggerCase) {
    let script = if case.query.to_lowercase().contains("changelog") {
        Script::new([])
            .turn(ScriptedTurn::tool_call(
                "skill",
                json!({"skill": "changelog"}),
            ))
            .turn(ScriptedTurn::text(
                "I will write the changelog in the team's format.",
            ))
    } else {
        Script::new([]).turn(ScriptedTurn::text("Done."))
    };
    ctx.offline(script);
    let eval = ctx.eval().skill_directory("skills").build().unwrap();
    let result = ctx.run(&eval, case.query.as_str()).await;
    result.assert_success();
    let check = case.check(&ctx, &result);
    assert!(check.held(), "{check}");
}
