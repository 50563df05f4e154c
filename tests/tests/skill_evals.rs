//! Skill evals from the skill's own files: examples/scripted's `changelog_skill` is generated
//! from `skills/changelog/evals/evals.json` (three entries, the first with an input file), and
//! `--grading DIR` writes each entry's skill-creator `grading.json`. Each file is compared with
//! the expected one in `tests/fixtures/grading/` (all but `timing`, which is the test process's
//! duration, and `execution_metrics.transcript_chars`, which counts machine paths); the
//! expectations' verdicts are in the JSON (valid against the schema) and JUnit.

mod support;

use copilot_eval_core::report::Outcome;
use copilot_eval_e2e::runtime_for;
use serde_json::Value;
use support::workspace_root;

const ENTRIES: [&str; 3] = [
    "changelog_skill::eval_1_write_the_changelog_for_the",
    "changelog_skill::eval_2_add_a_changelog_entry_for",
    "changelog_skill::eval_3_in_one_sentence_what_is",
];

#[test]
fn each_entry_of_the_skills_evals_json_is_an_eval_with_its_grading_json() {
    if runtime_for("each_entry_of_the_skills_evals_json_is_an_eval_with_its_grading_json").is_none()
    {
        return;
    }
    let grading = tempfile::tempdir().unwrap();
    let folder = grading.path().join("grading");
    let run = support::copilot_eval(
        &workspace_root(),
        &[
            "-p",
            "scripted",
            "changelog_skill",
            "--grading",
            folder.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    let mut names: Vec<&str> = run.report.tests.iter().map(|t| t.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ENTRIES, "one eval per entry of evals.json");

    for (index, name) in ENTRIES.iter().enumerate() {
        let test = run.test(name);
        assert_eq!(test.outcome, Outcome::Passed, "{name}: {:?}", test.message);
        let entry = test.skill_eval.as_ref().expect("the entry is in the JSON");
        assert_eq!(entry.skill, "skills/changelog");
        assert_eq!(entry.id, (index + 1).to_string());
        assert!(
            !test.expectations.is_empty() && test.expectations.iter().all(|x| x.passed),
            "{name}: {:?}",
            test.expectations
        );
        // Each expectation is a JUnit property of its test case.
        assert_eq!(
            run.junit_property(name, "copilot_eval.expectation.1"),
            format!(
                "passed: {} (evidence: {})",
                test.expectations[0].text, test.expectations[0].evidence
            )
        );
        assert_eq!(
            run.junit_property(name, "copilot_eval.skill_eval"),
            format!("skills/changelog id {}", index + 1)
        );

        // grading.json: as expected, but for the process's duration.
        let file = name.replace("::", "__");
        let written: Value = serde_json::from_str(
            &std::fs::read_to_string(folder.join(&file).join("grading.json"))
                .unwrap_or_else(|e| panic!("{name}: no grading.json ({e}): {}", run.stderr)),
        )
        .unwrap();
        let mut compared = written.clone();
        let seconds = compared
            .as_object_mut()
            .unwrap()
            .remove("timing")
            .and_then(|t| t["total_duration_seconds"].as_f64());
        assert!(seconds.is_some_and(|s| s > 0.0), "{written}");
        // The transcript holds the working directory's path, whose length is the machine's.
        let transcript = compared["execution_metrics"]
            .as_object_mut()
            .unwrap()
            .remove("transcript_chars")
            .and_then(|n| n.as_u64());
        assert!(transcript.is_some_and(|n| n > 0), "{written}");
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(
                workspace_root()
                    .join("tests/fixtures/grading")
                    .join(&file)
                    .join("grading.json"),
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(compared, expected, "{name}");
    }
    assert!(
        run.stderr.contains("wrote 3 grading.json under"),
        "{}",
        run.stderr
    );
}

/// The trigger set's queries, in file order, with whether each should invoke the skill.
const QUERIES: [(&str, bool); 4] = [
    (
        "changelog_triggers::invoke_1_write_the_changelog_for_the",
        true,
    ),
    (
        "changelog_triggers::invoke_2_add_a_changelog_entry_for",
        true,
    ),
    (
        "changelog_triggers::dormant_3_what_is_the_capital_of",
        false,
    ),
    (
        "changelog_triggers::dormant_4_rename_the_variable_x_to",
        false,
    ),
];

#[test]
fn each_query_of_the_skills_trigger_set_is_an_eval_counted_in_the_trigger_rates() {
    if runtime_for("each_query_of_the_skills_trigger_set_is_an_eval_counted_in_the_trigger_rates")
        .is_none()
    {
        return;
    }
    let run = support::copilot_eval(
        &workspace_root(),
        &[
            "-p",
            "scripted",
            "changelog_triggers",
            "--trials",
            "2",
            "-j",
            "2",
        ],
        &[],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    // One record per query and trial, each with the one check its run made, read from the
    // runtime's `skill.invoked` events.
    let mut got: Vec<(String, u32, bool, bool)> = run
        .report
        .tests
        .iter()
        .map(|t| {
            assert_eq!(t.outcome, Outcome::Passed, "{}: {:?}", t.name, t.message);
            assert_eq!(t.triggers.len(), 1, "{}: {:?}", t.name, t.triggers);
            let check = &t.triggers[0];
            assert_eq!(check.skill, "changelog");
            let should = check.expected == copilot_eval_core::report::Trigger::Invoke;
            (
                t.name.clone(),
                t.trial.unwrap().trial,
                should,
                check.invoked,
            )
        })
        .collect();
    got.sort();
    let mut expected: Vec<(String, u32, bool, bool)> = QUERIES
        .iter()
        .flat_map(|(name, should)| {
            (1..=2).map(move |trial| (name.to_string(), trial, *should, *should))
        })
        .collect();
    expected.sort();
    assert_eq!(got, expected);

    // The suite's figures for the skill: 4 should-trigger runs, all triggered; 4 should-not
    // runs, no false trigger.
    let skill = run
        .report
        .skill_triggers
        .iter()
        .find(|s| s.skill == "changelog")
        .expect("the changelog skill's trigger figures");
    let f = &skill.figures;
    assert_eq!(
        (
            f.should_trigger,
            f.triggered,
            f.should_not_trigger,
            f.false_triggers
        ),
        (4, 4, 4, 0)
    );
    assert_eq!(f.trigger_rate, Some(1.0));
    assert_eq!(f.false_trigger_rate, Some(0.0));
}
