use super::*;
use crate::report::tests::test;

fn check(skill: &str, expected: Trigger, invoked: bool) -> TriggerCheck {
    TriggerCheck {
        skill: skill.to_owned(),
        expected,
        invoked,
        preloaded: false,
        run: Some(1),
    }
}

fn record(outcome: Outcome, model: Option<&str>, checks: Vec<TriggerCheck>) -> TestRecord {
    let mut record = test("t", "b", outcome, Vec::new());
    record.model = model.map(str::to_owned);
    record.triggers = checks;
    record
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-4
}

#[test]
fn a_check_holds_when_the_invocation_matches_the_expectation() {
    assert!(check("s", Trigger::Invoke, true).held());
    assert!(!check("s", Trigger::Invoke, false).held());
    assert!(check("s", Trigger::Dormant, false).held());
    assert!(!check("s", Trigger::Dormant, true).held());
    assert_eq!(
        check("release-notes", Trigger::Invoke, false).to_string(),
        "release-notes was not invoked although the prompt should trigger it"
    );
    assert_eq!(
        check("release-notes", Trigger::Dormant, true).to_string(),
        "release-notes was invoked although the prompt should not trigger it (a false trigger)"
    );
}

#[test]
fn figures_count_should_trigger_and_dormant_checks_per_skill_and_model() {
    let tests = vec![
        record(
            Outcome::Passed,
            Some("a"),
            vec![check("notes", Trigger::Invoke, true)],
        ),
        record(
            Outcome::Failed,
            Some("b"),
            vec![check("notes", Trigger::Invoke, false)],
        ),
        record(
            Outcome::Failed,
            Some("a"),
            vec![
                check("notes", Trigger::Dormant, true),
                check("other", Trigger::Dormant, false),
            ],
        ),
        record(
            Outcome::Passed,
            Some("b"),
            vec![check("notes", Trigger::Dormant, false)],
        ),
        // An infrastructure error says nothing about the skill.
        record(
            Outcome::Error,
            Some("a"),
            vec![check("notes", Trigger::Dormant, true)],
        ),
    ];
    let skills = of(&tests);
    let names: Vec<&str> = skills.iter().map(|s| s.skill.as_str()).collect();
    assert_eq!(names, ["notes", "other"]);
    let notes = &skills[0].figures;
    assert_eq!(
        (
            notes.should_trigger,
            notes.triggered,
            notes.should_not_trigger,
            notes.false_triggers,
            notes.not_counted
        ),
        (2, 1, 2, 1, 1)
    );
    assert_eq!(notes.trigger_rate, Some(0.5));
    assert_eq!(notes.false_trigger_rate, Some(0.5));
    let [low, high] = notes.trigger_rate_interval.unwrap();
    assert!(close(low, 0.0945) && close(high, 0.9055), "{low} {high}");
    let models: Vec<(&str, u32, u32, u32, u32)> = skills[0]
        .models
        .iter()
        .map(|m| {
            let f = &m.figures;
            (
                m.model.as_str(),
                f.should_trigger,
                f.triggered,
                f.should_not_trigger,
                f.false_triggers,
            )
        })
        .collect();
    assert_eq!(models, [("a", 1, 1, 1, 1), ("b", 1, 0, 1, 0)]);
    // No should-trigger check: no trigger rate.
    let other = &skills[1].figures;
    assert_eq!(
        (other.trigger_rate, other.false_trigger_rate),
        (None, Some(0.0))
    );
    assert_eq!(
        lines(&skills, "  "),
        "  notes: triggered 1/2 (50%, 95% CI 9%-91%), false triggers 1/2 (50%, 95% CI 9%-91%), precision 1/2 (50%), recall 1/2 (50%), 1 checks not counted (error, not run or never made)\n\
         \x20   notes@a: triggered 1/1 (100%, 95% CI 21%-100%), false triggers 1/1 (100%, 95% CI 21%-100%), precision 1/2 (50%), recall 1/1 (100%), 1 checks not counted (error, not run or never made)\n\
         \x20   notes@b: triggered 0/1 (0%, 95% CI 0%-79%), false triggers 0/1 (0%, 95% CI 0%-79%), precision n/a (never invoked), recall 0/1 (0%)\n\
         \x20 other: triggered 0/0, false triggers 0/1 (0%, 95% CI 0%-79%), precision n/a (never invoked), recall n/a (no should-trigger run)\n\
         \x20   other@a: triggered 0/0, false triggers 0/1 (0%, 95% CI 0%-79%), precision n/a (never invoked), recall n/a (no should-trigger run)\n"
    );
    assert!(of(&[record(Outcome::Passed, None, Vec::new())]).is_empty());
}

#[test]
fn a_preload_is_said_apart_and_never_counted_as_a_trigger() {
    let mut preloaded = check("release-notes", Trigger::Dormant, false);
    preloaded.preloaded = true;
    assert!(preloaded.held());
    assert_eq!(
        preloaded.to_string(),
        "release-notes stayed dormant, as the prompt should not trigger it (release-notes was preloaded by a custom agent's `skills:`, which is not a trigger)"
    );
    let figures = of(&[record(Outcome::Passed, None, vec![preloaded])]);
    assert_eq!(
        (
            figures[0].figures.should_not_trigger,
            figures[0].figures.false_triggers
        ),
        (1, 0)
    );
}

/// A record that owes a check and never made it (its run failed, timed out or was not run
/// first) is in `not_counted`: the check of its trigger-set query, or one its eval's other
/// trials made. It never disappears from the figures.
#[test]
fn an_owed_check_never_made_is_not_counted_never_dropped() {
    let query = |number, expected| {
        Some(TriggerQueryRecord {
            skill: "greeting".into(),
            number,
            expected,
        })
    };
    // A trigger set: query 1 checked and triggered, query 2 failed before its check, query 3
    // (dormant) not run.
    let mut one = record(
        Outcome::Passed,
        None,
        vec![check("greeting", Trigger::Invoke, true)],
    );
    one.name = "set::invoke_1".into();
    one.trigger_query = query(1, Trigger::Invoke);
    let mut two = record(Outcome::Failed, None, Vec::new());
    two.name = "set::invoke_2".into();
    two.trigger_query = query(2, Trigger::Invoke);
    let mut three = record(Outcome::NotRun, None, Vec::new());
    three.name = "set::dormant_3".into();
    three.trigger_query = query(3, Trigger::Dormant);
    let skills = of(&[one, two, three]);
    let [skill] = &skills[..] else {
        panic!("{skills:#?}")
    };
    let f = &skill.figures;
    assert_eq!(
        (
            f.should_trigger,
            f.triggered,
            f.should_not_trigger,
            f.not_counted
        ),
        (1, 1, 0, 2)
    );
    assert_eq!(
        lines(&skills, ""),
        "greeting: triggered 1/1 (100%, 95% CI 21%-100%), false triggers 0/0, precision 1/1 (100%), recall 1/1 (100%), 2 checks not counted (error, not run or never made)\n"
    );

    // Trials of an eval that checks by hand (`ctx.expect_trigger`, no query): trial 2 died
    // before its check; the check trials 1 and 3 made is owed by trial 2 too, per model.
    let trials: Vec<TestRecord> = [
        (Outcome::Passed, true),
        (Outcome::Failed, false),
        (Outcome::Passed, true),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (outcome, checked))| {
        let checks = if checked {
            vec![check("notes", Trigger::Invoke, true)]
        } else {
            Vec::new()
        };
        let mut record = record(outcome, Some("m"), checks);
        record.trial = Some(crate::report::TrialOf {
            trial: i as u32 + 1,
            trials: 3,
        });
        record
    })
    .collect();
    let skills = of(&trials);
    let f = &skills[0].figures;
    assert_eq!((f.should_trigger, f.triggered, f.not_counted), (2, 2, 1));
    assert_eq!(skills[0].models[0].figures.not_counted, 1);
    // Another eval's records owe nothing, nor a record of the same name run once: only the
    // trials of the same binary and name.
    let mut other = record(Outcome::Failed, Some("m"), Vec::new());
    other.name = "other".into();
    other.trial = trials[0].trial;
    let once = record(Outcome::Failed, Some("m"), Vec::new());
    let mut with_others = trials.clone();
    with_others.extend([other, once]);
    assert_eq!(of(&with_others)[0].figures.not_counted, 1);
}

/// Precision and recall per skill, by hand: 5 should-trigger runs of which 4 invoked the skill,
/// 6 should-not runs of which 2 invoked it (a `failed` record counts; an `error` one does not).
/// Recall = 4 / 5 = 0.8 (the trigger rate); precision = 4 / (4 + 2) = 0.6667: a third of the
/// skill's invocations were false triggers. A skill never invoked has no precision.
#[test]
fn precision_and_recall_per_skill_are_computed_from_the_counted_checks() {
    let mut tests = Vec::new();
    for invoked in [true, true, true, true, false] {
        let outcome = if invoked {
            Outcome::Passed
        } else {
            Outcome::Failed
        };
        tests.push(record(
            outcome,
            None,
            vec![check("notes", Trigger::Invoke, invoked)],
        ));
    }
    for invoked in [true, true, false, false, false, false] {
        let outcome = if invoked {
            Outcome::Failed
        } else {
            Outcome::Passed
        };
        tests.push(record(
            outcome,
            None,
            vec![check("notes", Trigger::Dormant, invoked)],
        ));
    }
    // Not counted: says nothing about the skill.
    tests.push(record(
        Outcome::Error,
        None,
        vec![check("notes", Trigger::Dormant, true)],
    ));
    tests.push(record(
        Outcome::Passed,
        None,
        vec![check("quiet", Trigger::Dormant, false)],
    ));
    let skills = of(&tests);
    let notes = &skills[0].figures;
    assert_eq!(notes.recall, Some(0.8));
    assert_eq!(notes.recall, notes.trigger_rate);
    assert!(close(notes.precision.unwrap(), 4.0 / 6.0));
    assert_eq!(precision_text(notes), "4/6 (67%)");
    assert_eq!(recall_text(notes), "4/5 (80%)");
    let quiet = &skills[1].figures;
    assert_eq!((quiet.precision, quiet.recall), (None, None));
    let json = serde_json::to_value(notes).unwrap();
    assert!(close(json["precision"].as_f64().unwrap(), 0.6667));
    assert_eq!(json["recall"], 0.8);
    assert!(
        serde_json::to_value(quiet)
            .unwrap()
            .get("precision")
            .is_none()
    );
}
