//! The `scripted` example (examples/scripted): the authoring features — a conversation, a
//! resumed session, a prompt with attachments, a case matrix, a baseline/treatment comparison,
//! a two-model catalog with a custom agent from its file, assertions on what reached the model
//! and a guard's denial — with a scripted model,
//! run by the real `cargo copilot-eval` in replay mode and in live mode with nothing live
//! reachable. Both runs pass, make no live call and write the same evidence; the artifacts
//! validate against the published schema and show each feature. (The same features replayed
//! from recorded cassettes: the quick-start's test in runner.rs.)

mod support;

use copilot_eval_core::StopReason;
use copilot_eval_core::evidence::denial::DenialKind;
use copilot_eval_core::report::Outcome;
use copilot_eval_e2e::runtime_for;
use support::{SuiteRun, copilot_eval, copilot_eval_live_unreachable, workspace_root};

/// The example's eval tests, in the order of the results.
const TESTS: [&str; 35] = [
    "compares_the_house_style_over_trials",
    "compares_with_and_without_the_skill",
    "keeps_the_canary_from_the_model",
    "keeps_the_model_out_of_the_shell",
    "names_the_capital_in_most_trials",
    "names_the_capital_per_model::france@claude-sonnet-4.5",
    "names_the_capital_per_model::france@gpt-5",
    "names_the_capital_per_model::italy@claude-sonnet-4.5",
    "names_the_capital_per_model::italy@gpt-5",
    "remembers_the_file_it_wrote",
    "resumes_the_session_later",
    "reviews_with_an_agent_on_another_model",
    "says_hello_in::french",
    "says_hello_in::german",
    "triggers_the_release_notes_skill::asks_for_a_capital",
    "triggers_the_release_notes_skill::asks_for_release_notes",
    "triggers_the_release_notes_skill::asks_for_the_changelog",
    "triggers_the_release_notes_skill::asks_to_fix_a_typo",
    "writes_the_selected_version",
    // tests/judges.rs, the example's second test binary.
    "a_judge_answer_that_is_not_json_is_an_error",
    "a_judge_sampled_three_times_reports_its_agreement",
    "grades_the_notes_while_one_answer_is_broken",
    "judges_the_release_notes",
    "prefers_an_answer_in_both_orders",
    // tests/mcp.rs: MCP evals with an in-process mock server (both ends, two faults, an
    // injection a guard stops).
    "answers_from_the_weather_mock",
    "gives_up_on_a_hanging_weather_tool",
    "refuses_the_command_a_tool_result_injects",
    "reports_the_weather_service_error",
    // tests/skill_evals.rs: one eval per entry of skills/changelog/evals/evals.json.
    "changelog_skill::eval_1_write_the_changelog_for_the",
    "changelog_skill::eval_2_add_a_changelog_entry_for",
    "changelog_skill::eval_3_in_one_sentence_what_is",
    // ... and one eval per query of skills/changelog/evals/triggers.json.
    "changelog_triggers::dormant_3_what_is_the_capital_of",
    "changelog_triggers::dormant_4_rename_the_variable_x_to",
    "changelog_triggers::invoke_1_write_the_changelog_for_the",
    "changelog_triggers::invoke_2_add_a_changelog_entry_for",
];

/// What both runs must show.
fn check(run: &SuiteRun, mode: &str) {
    assert_eq!(run.status, 0, "{mode}: {}", run.stderr);
    // Every run is scripted, whatever the command asked for: the suite's mode says so.
    assert_eq!(run.report.mode, "scripted", "{mode}");
    assert_eq!(run.report.requested_mode.as_deref(), Some(mode));
    let names: Vec<&str> = run.report.tests.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, TESTS, "{mode}");
    for test in &run.report.tests {
        assert_eq!(test.outcome, Outcome::Passed, "{mode}: {test:#?}");
        assert_eq!(
            test.cassette, None,
            "{mode}: a scripted test reads no cassette"
        );
        for record in &test.runs {
            assert_eq!(record.mode, "scripted", "{mode}: {}", test.name);
            assert_eq!(
                record.stop_reason,
                StopReason::Completed,
                "{mode}: {}",
                test.name
            );
            assert!(
                record.warnings.is_empty(),
                "{mode}: {}: every scripted reply was used: {:?}",
                test.name,
                record.warnings
            );
        }
    }

    // The conversation: one run of two prompts, each message numbered by its prompt.
    let conversation = &run.test("remembers_the_file_it_wrote").runs;
    assert_eq!(conversation.len(), 1, "{mode}");
    assert_eq!(conversation[0].prompts.len(), 2, "{mode}");
    let written = serde_json::to_value(&conversation[0]).unwrap();
    let numbered: Vec<Option<u64>> = (written["turns"].as_array().expect("turns").iter())
        .map(|t| t["prompt"].as_u64())
        .collect();
    assert!(
        numbered.contains(&Some(1)) && numbered.contains(&Some(2)),
        "{mode}: {numbered:?}"
    );
    assert_eq!(
        run.test("remembers_the_file_it_wrote").properties[0].value,
        "I created todo.txt; it says \"Ship 2.4.1\".",
        "{mode}"
    );

    // The resumed session: two runs of one session, the second naming the first.
    let resumed = run.test("resumes_the_session_later");
    assert_eq!(resumed.runs.len(), 2, "{mode}");
    let session_id = resumed.runs[0].session_id.clone().expect("a session id");
    assert_eq!(resumed.runs[0].resumed_from, None, "{mode}");
    assert_eq!(
        resumed.runs[1].resumed_from,
        Some(copilot_eval_core::report::ResumedFrom {
            run: 1,
            session_id: session_id.clone()
        }),
        "{mode}"
    );
    assert_eq!(resumed.runs[1].session_id, Some(session_id), "{mode}");
    assert_eq!(
        resumed.properties[0].value, "The code word is PLUM.",
        "{mode}"
    );

    // The attachments: in the run record, the selection with the text the run sent.
    let attached = &run.test("writes_the_selected_version").runs[0];
    assert_eq!(
        serde_json::to_value(attached).unwrap()["prompt_options"],
        serde_json::json!([{"prompt": 1, "attachments": [
            {"type": "file", "path": "CHANGELOG.md"},
            {"type": "selection", "path": "CHANGELOG.md", "start_line": 3, "end_line": 3,
             "text": "## 2.4.1 - 2026-11-02"}
        ]}]),
        "{mode}"
    );

    // The two-model catalog: the subagent's request went to its own model, with its tools.
    let reviewed = run.test("reviews_with_an_agent_on_another_model");
    let invocation = &reviewed.runs[0].subagent_invocations[0];
    assert_eq!(
        invocation.model.as_deref(),
        Some("claude-haiku-4.5"),
        "{mode}"
    );
    let tools = reviewed.properties[0].value.as_array().expect("tool names");
    assert!(
        tools.contains(&serde_json::json!("view")),
        "{mode}: {tools:?}"
    );

    // The guard's denial: on the call in the run record, and as the test read it.
    let guarded = run.test("keeps_the_model_out_of_the_shell");
    let bash = &guarded.runs[0].tool_calls[0];
    assert_eq!(bash.name, "bash", "{mode}: {bash:?}");
    let denial = bash.denied.as_ref().expect("the call was denied");
    assert_eq!(denial.kind, DenialKind::Guard, "{mode}: {bash:?}");
    assert_eq!(denial.reason, "no shell in this eval", "{mode}");
    assert_eq!(
        guarded.properties[0].value, "no shell in this eval",
        "{mode}"
    );

    // The case matrix: one test per case, each with its own values, in JSON and JUnit.
    for (case, word) in [("french", "Bonjour"), ("german", "Hallo")] {
        let name = format!("says_hello_in::{case}");
        assert_eq!(run.test(&name).properties[0].value, word, "{mode}");
        assert_eq!(run.junit_kind(&name), "success", "{mode}");
    }

    // The trigger matrix and the changelog skill's trigger set, run once: every should-trigger
    // case invoked its skill, no other did.
    let mut figures: Vec<(&str, u32, u32, u32, u32)> = run
        .report
        .skill_triggers
        .iter()
        .map(|skill| {
            let f = &skill.figures;
            (
                skill.skill.as_str(),
                f.should_trigger,
                f.triggered,
                f.should_not_trigger,
                f.false_triggers,
            )
        })
        .collect();
    figures.sort();
    assert_eq!(
        figures,
        [("changelog", 2, 2, 2, 0), ("release-notes", 2, 2, 2, 0)],
        "{mode}"
    );

    // The comparison: both runs labelled, the criteria judged on both sides.
    let compared = run.test("compares_with_and_without_the_skill");
    let labels: Vec<Option<&str>> = compared.runs.iter().map(|r| r.label.as_deref()).collect();
    assert_eq!(labels, [Some("baseline"), Some("treatment")], "{mode}");
    assert_eq!(compared.comparisons.len(), 1, "{mode}");
    let comparison = &compared.comparisons[0];
    let criteria: Vec<(&str, bool, bool)> = comparison
        .criteria
        .iter()
        .map(|c| (c.name.as_str(), c.baseline, c.treatment))
        .collect();
    assert_eq!(
        criteria,
        [
            ("completed", true, true),
            ("starts with the house tag line", false, true)
        ],
        "{mode}"
    );
    assert_eq!(
        run.junit_property(
            "compares_with_and_without_the_skill",
            "copilot_eval.comparison.1.criterion.starts with the house tag line"
        ),
        "baseline=no treatment=yes",
        "{mode}"
    );
}

#[test]
fn the_scripted_example_passes_offline_with_and_without_replay() {
    if runtime_for("the_scripted_example_passes_offline_with_and_without_replay").is_none() {
        return;
    }
    let replayed = copilot_eval(&workspace_root(), &["-p", "scripted"], &[]);
    check(&replayed, "replay");
    let live = copilot_eval_live_unreachable(&workspace_root(), &["-p", "scripted"]);
    check(&live, "live");
    // Live mode warns once, before the first test's line, in the runner's own words (any other
    // "live" in the output, e.g. the mode in the summary, does not count); replay mode does not
    // warn. Nothing went live (a live request could not succeed).
    let warnings: Vec<&str> = live
        .stderr
        .lines()
        .filter(|l| l.starts_with(LIVE_WARNING))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", live.stderr);
    // The requests go to the unreachable stand-in, and the warning says so instead of promising
    // premium requests that nothing can spend.
    assert!(
        warnings[0].contains("(COPILOT_EVAL_LIVE_BASE_URL), not to GitHub Copilot")
            && !warnings[0].contains("spend premium requests")
            && warnings[0].contains("scripted evals stay offline"),
        "{}",
        warnings[0]
    );
    let warned_at = live.stderr.find(LIVE_WARNING).unwrap();
    let first_test = live.stderr.find("PASS").expect("the tests' lines");
    assert!(warned_at < first_test, "{}", live.stderr);
    assert!(
        !replayed.stderr.contains(LIVE_WARNING),
        "{}",
        replayed.stderr
    );
}

/// How the runner's live-mode warning begins (`suite::live_banner`).
const LIVE_WARNING: &str = "note: live mode: the selected evals send model requests to ";
