use super::*;
use crate::eval::Ablate;
use crate::report::tests::{run, test};
use crate::report::{
    ComparisonRecord, CriterionRecord, ExpectationRecord, JudgeCriterionVerdict, TrialOf,
};
use crate::result::StopReason;

/// A comparison of runs 1 (baseline) and 2 (treatment) whose criteria are `(name, baseline
/// met, treatment met)`.
fn comparison(criteria: &[(&str, bool, bool)]) -> ComparisonRecord {
    let side = run(StopReason::Completed, 10);
    let mut record = ComparisonRecord::new("p", (1, &side, vec![]), (2, &side, vec![]));
    for &(name, baseline, treatment) in criteria {
        record.add_criterion(CriterionRecord {
            name: name.into(),
            baseline,
            treatment,
        });
    }
    record
}

/// A rubric judge of run `run` whose verdicts are `(criterion, pass)`.
fn judge(run: u64, verdicts: &[(&str, bool)]) -> JudgeRecord {
    JudgeRecord {
        kind: JudgeKind::Rubric,
        material: "final response".into(),
        judged_runs: vec![run],
        model: None,
        tools: Vec::new(),
        rubric: Vec::new(),
        sessions: Vec::new(),
        verdicts: verdicts
            .iter()
            .map(|&(criterion, pass)| JudgeCriterionVerdict {
                criterion: criterion.into(),
                verdict: if pass {
                    JudgeVerdict::Pass
                } else {
                    JudgeVerdict::Fail
                },
                score: None,
                reasons: Vec::new(),
                agreement: None,
            })
            .collect(),
        error: None,
        samples: None,
    }
}

/// Trial `trial` of 3 of the eval `compares` with `outcome`.
fn trial(trial: u32, outcome: Outcome, comparisons: Vec<ComparisonRecord>) -> TestRecord {
    let mut record = test("compares", "pkg::evals", outcome, Vec::new());
    record.trial = Some(TrialOf { trial, trials: 3 });
    record.comparisons = comparisons;
    record
}

/// Each entry as `(label, sides, verdict)`.
fn rows(report: &DiscriminationReport) -> Vec<(String, String, Discrimination)> {
    (report.entries.iter())
        .map(|e| (label(e), sides_text(e), e.verdict))
        .collect()
}

/// The quick-start's comparison over 3 trials: "completed" holds on both sides every time, the
/// tag line only on the treatment; a criterion that never holds; an `error` trial (whose
/// verdicts would make "completed" vary) is left out; the judges of each side's run are matched
/// per side.
#[test]
fn a_comparisons_criteria_over_trials_are_classified_by_each_sides_counts() {
    let criteria = [
        ("completed", true, true),
        ("starts with the house tag line", false, true),
        ("under 10 words", false, false),
    ];
    let mut records: Vec<TestRecord> = (1..=3)
        .map(|n| trial(n, Outcome::Passed, vec![comparison(&criteria)]))
        .collect();
    records[1].outcome = Outcome::Failed;
    for record in &mut records {
        record.judges = vec![
            judge(1, &[("tone", true), ("concise", true)]),
            judge(2, &[("tone", true), ("concise", false)]),
        ];
    }
    records.push(trial(
        4,
        Outcome::Error,
        vec![comparison(&[("completed", false, false)])],
    ));
    let report = of(&records).expect("criteria");
    assert_eq!(
        rows(&report),
        [
            (
                "comparison 1, completed".to_owned(),
                "baseline 3/3, treatment 3/3".to_owned(),
                Discrimination::DoesNotDiscriminate
            ),
            (
                "comparison 1, starts with the house tag line".to_owned(),
                "baseline 0/3, treatment 3/3".to_owned(),
                Discrimination::Discriminates
            ),
            (
                "comparison 1, under 10 words".to_owned(),
                "baseline 0/3, treatment 0/3".to_owned(),
                Discrimination::DoesNotDiscriminate
            ),
            (
                "comparison 1, judge 1, tone".to_owned(),
                "baseline 3/3, treatment 3/3".to_owned(),
                Discrimination::DoesNotDiscriminate
            ),
            (
                "comparison 1, judge 1, concise".to_owned(),
                "baseline 3/3, treatment 0/3".to_owned(),
                Discrimination::Discriminates
            ),
        ]
    );
    assert!(
        report
            .entries
            .iter()
            .all(|e| e.surface == Surface::Comparison)
    );
    assert_eq!((report.discriminating, report.criteria), (2, 5));
    assert_eq!(count_text(&report), "2 of 5 criteria discriminate");
    assert_eq!(
        line(&report.entries[0]),
        "pkg::evals compares, comparison 1, completed: baseline 3/3, treatment 3/3 -> does not \
         discriminate (holds on every side in every trial)"
    );
    assert_eq!(
        verdict_text(&report.entries[2]),
        "does not discriminate (fails on every side in every trial)"
    );
    assert_eq!(verdict_text(&report.entries[1]), "discriminates");
    // One trial that varies is enough: the tag line held on the baseline once.
    records[2].comparisons = vec![comparison(&[("completed", true, false)])];
    let report = of(&records).unwrap();
    assert_eq!(report.entries[0].verdict, Discrimination::Discriminates);
    assert_eq!(
        sides_text(&report.entries[0]),
        "baseline 3/3, treatment 2/3"
    );
    // A record without comparisons, ablations or models has no criteria to classify.
    assert!(of(&[test("a", "pkg::evals", Outcome::Passed, Vec::new())]).is_none());
}

/// The expectations and judges' criteria of an eval with and without its skill (`--ablate`):
/// one only the side with the skill meets, one both meet every time; a side that never
/// recorded a criterion leaves it unclassified.
#[test]
fn an_ablations_expectations_are_classified_with_and_without() {
    let expect = |text: &str, passed: bool| ExpectationRecord {
        text: text.into(),
        passed,
        evidence: String::new(),
        kind: Default::default(),
    };
    let side = |ablated: bool, invoked: bool| {
        let mut record = test(
            "eval_1",
            "scripted::skill_evals",
            Outcome::Passed,
            Vec::new(),
        );
        record.expectations = vec![
            expect("The changelog skill was invoked", invoked),
            expect("CHANGELOG.md was written", true),
        ];
        record.judges = vec![judge(1, &[("format", invoked)])];
        if ablated {
            record.name = crate::report::lift::ablated_name("eval_1", &[Ablate::Skills]);
            record.ablated = vec![Ablate::Skills];
            record.outcome = Outcome::Failed;
            record.expectations.push(expect("only here", true));
        }
        record
    };
    let tests = vec![
        side(false, true),
        side(false, true),
        side(true, false),
        side(true, false),
    ];
    let report = of(&tests).unwrap();
    assert_eq!(
        rows(&report),
        [
            (
                "expectation \"The changelog skill was invoked\"".to_owned(),
                "with 2/2, without skills 0/2".to_owned(),
                Discrimination::Discriminates
            ),
            (
                "expectation \"CHANGELOG.md was written\"".to_owned(),
                "with 2/2, without skills 2/2".to_owned(),
                Discrimination::DoesNotDiscriminate
            ),
            (
                "judge 1, format".to_owned(),
                "with 2/2, without skills 0/2".to_owned(),
                Discrimination::Discriminates
            ),
            (
                "expectation \"only here\"".to_owned(),
                "with 0/0, without skills 2/2".to_owned(),
                Discrimination::NotOnEverySide
            ),
        ]
    );
    assert!(
        report
            .entries
            .iter()
            .all(|e| e.surface == Surface::Ablation)
    );
    assert!(report.entries.iter().all(|e| e.eval == "eval_1"));
    assert_eq!(
        count_text(&report),
        "2 of 3 criteria discriminate; 1 not on every side (not counted)"
    );
}

/// A model matrix's sides are its models, in the order they ran; an expectation every model
/// meets in every trial does not discriminate.
#[test]
fn a_model_matrixs_expectations_are_classified_per_model() {
    let cell = |model: &str, trial: u32, capital: bool| {
        let mut record = test(
            &format!("names_the_capital@{model}"),
            "scripted::evals",
            Outcome::Passed,
            Vec::new(),
        );
        record.model = Some(model.into());
        record.trial = Some(TrialOf { trial, trials: 2 });
        record.expectations = vec![
            ExpectationRecord {
                text: "names Oslo".into(),
                passed: capital,
                evidence: String::new(),
                kind: Default::default(),
            },
            ExpectationRecord {
                text: "completed".into(),
                passed: true,
                evidence: String::new(),
                kind: Default::default(),
            },
        ];
        record
    };
    let tests = vec![
        cell("claude-sonnet-4.5", 1, true),
        cell("claude-sonnet-4.5", 2, true),
        cell("gpt-5", 1, true),
        cell("gpt-5", 2, false),
    ];
    let report = of(&tests).unwrap();
    assert_eq!(
        rows(&report),
        [
            (
                "expectation \"names Oslo\"".to_owned(),
                "claude-sonnet-4.5 2/2, gpt-5 1/2".to_owned(),
                Discrimination::Discriminates
            ),
            (
                "expectation \"completed\"".to_owned(),
                "claude-sonnet-4.5 2/2, gpt-5 2/2".to_owned(),
                Discrimination::DoesNotDiscriminate
            ),
        ]
    );
    assert_eq!(report.entries[0].eval, "names_the_capital");
    assert_eq!(report.entries[0].surface, Surface::ModelMatrix);
    assert_eq!(count_text(&report), "1 of 2 criteria discriminate");
    assert_eq!(
        lines(&report, "  "),
        "  scripted::evals names_the_capital, expectation \"names Oslo\": claude-sonnet-4.5 2/2, gpt-5 1/2 -> discriminates\n\
         \x20 scripted::evals names_the_capital, expectation \"completed\": claude-sonnet-4.5 2/2, gpt-5 2/2 -> does not discriminate (holds on every side in every trial)\n\
         \x20 1 of 2 criteria discriminate\n"
    );
}

/// The definition at its edges, on the counts alone.
#[test]
fn the_definition() {
    let sides = |counts: &[(u32, u32)]| -> Vec<SideCount> {
        (counts.iter())
            .map(|&(held, trials)| SideCount {
                side: "s".into(),
                held,
                trials,
            })
            .collect()
    };
    use Discrimination::*;
    assert_eq!(classify(&sides(&[(3, 3), (3, 3)])), DoesNotDiscriminate);
    assert_eq!(classify(&sides(&[(0, 3), (0, 3)])), DoesNotDiscriminate);
    // Held every time on one side, never on the other: the clearest discrimination.
    assert_eq!(classify(&sides(&[(0, 3), (3, 3)])), Discriminates);
    // Varies within a side, at the same rate on both: its outcome still differs in some trial.
    assert_eq!(classify(&sides(&[(2, 3), (2, 3)])), Discriminates);
    // A side that recorded it in fewer trials still counts when it agrees.
    assert_eq!(classify(&sides(&[(3, 3), (1, 1)])), DoesNotDiscriminate);
    assert_eq!(classify(&sides(&[(3, 3), (0, 0)])), NotOnEverySide);
    assert_eq!(classify(&sides(&[(3, 3)])), NotOnEverySide);
}
