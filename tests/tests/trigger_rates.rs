//! Trigger and dormancy evals of a skill (`ctx.expect_trigger`): each check is recorded as a
//! typed fact in its test's record (`triggers`), and the suite sums them per skill over every
//! case and trial. The scripted example's `triggers_the_release_notes_skill` has two cases that
//! should invoke the skill `release-notes` and two that should not; with `--trials 3` its
//! scripted model misses the skill once (`asks_for_release_notes`, trial 2) and invokes it
//! falsely once (`asks_for_a_capital`, trial 3), so every figure is known in advance: triggered
//! 5 of 6 (0.8333, Wilson 95% interval 0.4365-0.9699), false triggers 1 of 6 (0.1667,
//! 0.0301-0.5635). The fixture's trigger set `counted-greeting` has a query whose run times out
//! before its check: it stays in the figures, as not counted.

mod support;

use copilot_eval_core::report::{Outcome, Trigger, TriggerCheck};
use copilot_eval_e2e::runtime_for;
use support::{SuiteRun, workspace_root};

const EVAL: &str = "triggers_the_release_notes_skill";
const SKILL: &str = "release-notes";
/// The cases, in list order, with what each expects.
const CASES: [(&str, Trigger); 4] = [
    ("asks_for_a_capital", Trigger::Dormant),
    ("asks_for_release_notes", Trigger::Invoke),
    ("asks_for_the_changelog", Trigger::Invoke),
    ("asks_to_fix_a_typo", Trigger::Dormant),
];

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-4
}

/// The scripted example's trigger matrix with `--trials 3`.
fn trigger_matrix() -> SuiteRun {
    support::copilot_eval(
        &workspace_root(),
        &["-p", "scripted", EVAL, "--trials", "3", "-j", "2"],
        &[],
    )
}

#[test]
fn a_trigger_matrix_over_three_trials_gives_the_trigger_and_false_trigger_rates() {
    if runtime_for("a_trigger_matrix_over_three_trials_gives_the_trigger_and_false_trigger_rates")
        .is_none()
    {
        return;
    }
    let run = trigger_matrix();
    // The missed and the false trigger fail their trials: the test asserts each check.
    assert_eq!(run.status, 1, "{}", run.stderr);

    // Each trial's record holds its one check, as the run's evidence showed it.
    let mut expected = Vec::new();
    for (case, trigger) in CASES {
        for trial in 1..=3u32 {
            let missed = case == "asks_for_release_notes" && trial == 2;
            let false_trigger = case == "asks_for_a_capital" && trial == 3;
            let invoked = (trigger == Trigger::Invoke && !missed) || false_trigger;
            let outcome = if missed || false_trigger {
                Outcome::Failed
            } else {
                Outcome::Passed
            };
            let check = TriggerCheck {
                skill: SKILL.to_owned(),
                expected: trigger,
                invoked,
                preloaded: false,
                run: Some(1),
            };
            expected.push((format!("{EVAL}::{case}"), trial, outcome, vec![check]));
        }
    }
    let got: Vec<_> = run
        .report
        .tests
        .iter()
        .map(|t| {
            (
                t.name.clone(),
                t.trial.unwrap().trial,
                t.outcome,
                t.triggers.clone(),
            )
        })
        .collect();
    assert_eq!(got, expected);
    for test in &run.report.tests {
        // The check read the runtime's own evidence: a `skill.invoked` event.
        let invoked = test.runs[0]
            .skill_invocations
            .iter()
            .any(|s| s.name == SKILL);
        assert_eq!(invoked, test.triggers[0].invoked, "{test:#?}");
        if test.outcome == Outcome::Failed {
            let message = test.message.as_deref().unwrap_or_default();
            let says = if test.triggers[0].expected == Trigger::Invoke {
                "release-notes was not invoked although the prompt should trigger it"
            } else {
                "release-notes was invoked although the prompt should not trigger it (a false trigger)"
            };
            assert!(message.contains(says), "{message}");
        }
    }

    // The suite's figures for the skill, over 4 cases x 3 trials.
    let [skill] = &run.report.skill_triggers[..] else {
        panic!("{:#?}", run.report.skill_triggers)
    };
    assert_eq!(skill.skill, SKILL);
    let f = &skill.figures;
    assert_eq!(
        (
            f.should_trigger,
            f.triggered,
            f.should_not_trigger,
            f.false_triggers,
            f.not_counted
        ),
        (6, 5, 6, 1, 0)
    );
    assert!(close(f.trigger_rate.unwrap(), 5.0 / 6.0));
    let [low, high] = f.trigger_rate_interval.unwrap();
    assert!(close(low, 0.4365) && close(high, 0.9699), "{low} {high}");
    assert!(close(f.false_trigger_rate.unwrap(), 1.0 / 6.0));
    let [low, high] = f.false_trigger_rate_interval.unwrap();
    assert!(close(low, 0.0301) && close(high, 0.5635), "{low} {high}");
    assert!(skill.models.is_empty(), "no model matrix ran");

    // The terminal's line.
    let lines: Vec<&str> = run.stderr.lines().collect();
    let at = lines
        .iter()
        .position(|l| *l == "  skill triggers:")
        .unwrap_or_else(|| panic!("{}", run.stderr));
    assert_eq!(
        lines[at + 1],
        "    release-notes: triggered 5/6 (83%, 95% CI 44%-97%), false triggers 1/6 (17%, 95% CI 3%-56%), precision 5/6 (83%), recall 5/6 (83%)"
    );

    // JUnit: the figures on the testsuite, each check on its test case.
    let [suite] = &run.junit.test_suites[..] else {
        panic!("one testsuite: {}", run.junit_xml)
    };
    let property = |name: &str| {
        suite
            .properties
            .iter()
            .find(|p| p.name.as_str() == format!("copilot_eval.triggers.{SKILL}.{name}"))
            .map(|p| p.value.as_str().to_owned())
            .unwrap_or_else(|| panic!("no {name}: {}", run.junit_xml))
    };
    for (name, value) in [
        ("should_trigger", "6"),
        ("triggered", "5"),
        ("trigger_rate", "0.8333"),
        ("trigger_rate_interval", "0.4365-0.9699"),
        ("should_not_trigger", "6"),
        ("false_triggers", "1"),
        ("false_trigger_rate", "0.1667"),
        ("false_trigger_rate_interval", "0.0301-0.5635"),
        ("precision", "0.8333"),
        ("recall", "0.8333"),
    ] {
        assert_eq!(property(name), value, "{name}");
    }
    assert_eq!(
        run.junit_property(
            &format!("{EVAL}::asks_for_a_capital [trial 3/3]"),
            "copilot_eval.trigger.1"
        ),
        "release-notes expected=dormant invoked=yes held=no"
    );
    assert_eq!(
        run.junit_property(
            &format!("{EVAL}::asks_for_the_changelog [trial 1/3]"),
            "copilot_eval.trigger.1"
        ),
        "release-notes expected=invoke invoked=yes held=yes"
    );
}

/// The fixture's trigger set `counted-greeting` (`tests/fixture/tests/counting.rs`): query 1
/// invokes the skill, query 3 leaves it alone, and query 2's run times out, failing its test
/// on `assert_success` before its trigger check. The query is not dropped from the figures:
/// its record keeps the check it owed (`trigger_query`), and the skill's figures count it as
/// not counted beside triggered 1/1 and false triggers 0/1.
#[test]
fn a_trigger_set_query_that_times_out_before_its_check_is_counted() {
    if runtime_for("a_trigger_set_query_that_times_out_before_its_check_is_counted").is_none() {
        return;
    }
    const SET: &str = "counted_greeting_triggers";
    let run = support::fixture(&[SET, "-j", "2"], &[]);
    assert_eq!(run.status, 1, "query 2's test fails\n{}", run.stderr);
    // Each record: its name, outcome, checks made and the query it owes.
    type Row<'a> = (&'a str, Outcome, usize, Option<(u32, Trigger)>);
    let got: Vec<Row> = run
        .report
        .tests
        .iter()
        .map(|t| {
            (
                t.name.as_str(),
                t.outcome,
                t.triggers.len(),
                t.trigger_query.as_ref().map(|q| (q.number, q.expected)),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "counted_greeting_triggers::dormant_3_what_is_2_2",
                Outcome::Passed,
                1,
                Some((3, Trigger::Dormant))
            ),
            (
                "counted_greeting_triggers::invoke_1_greet_the_whole_team_warmly",
                Outcome::Passed,
                1,
                Some((1, Trigger::Invoke))
            ),
            (
                "counted_greeting_triggers::invoke_2_greet_the_new_colleague_then",
                Outcome::Failed,
                0,
                Some((2, Trigger::Invoke))
            ),
        ],
        "{}",
        run.stderr
    );
    let timed_out = run.test("counted_greeting_triggers::invoke_2_greet_the_new_colleague_then");
    assert_eq!(
        timed_out.runs[0].stop_reason,
        copilot_eval_core::StopReason::Timeout,
        "{:?}",
        timed_out.message
    );
    assert!(
        timed_out.runs[0].skill_invocations.is_empty(),
        "the hanging run invoked nothing"
    );

    let [skill] = &run.report.skill_triggers[..] else {
        panic!("{:#?}", run.report.skill_triggers)
    };
    assert_eq!(skill.skill, "counted-greeting");
    let f = &skill.figures;
    assert_eq!(
        (
            f.should_trigger,
            f.triggered,
            f.should_not_trigger,
            f.false_triggers,
            f.not_counted
        ),
        (1, 1, 1, 0, 1)
    );
    assert!(
        run.stderr.contains(
            "    counted-greeting: triggered 1/1 (100%, 95% CI 21%-100%), false triggers 0/1 (0%, 95% CI 0%-79%), precision 1/1 (100%), recall 1/1 (100%), 1 checks not counted (error, not run or never made)"
        ),
        "{}",
        run.stderr
    );
    let [suite] = &run.junit.test_suites[..] else {
        panic!("one testsuite: {}", run.junit_xml)
    };
    let not_counted = suite
        .properties
        .iter()
        .find(|p| p.name.as_str() == "copilot_eval.triggers.counted-greeting.not_counted")
        .map(|p| p.value.as_str().to_owned());
    assert_eq!(not_counted.as_deref(), Some("1"), "{}", run.junit_xml);
}
