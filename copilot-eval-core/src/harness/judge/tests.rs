//! The judge's own checks: parsing answers, the pairwise verdict, the rubric's checks, the
//! prompt.

use super::*;

fn rubric() -> Rubric {
    Rubric::new(Material::FinalResponse)
        .criterion("names the version", "It names 2.4.1.")
        .scored("clear", "It is plain.", 1, 5)
}

#[test]
fn a_valid_answer_parses_plain_or_fenced() {
    let answer = r#"{"criteria": [{"name": "clear", "verdict": "pass", "score": 4, "reason": "short"}, {"name": "names the version", "verdict": "FAIL", "score": null, "reason": "no version"}]}"#;
    let entries = parse(&rubric(), 2, Some(answer), &["pass", "fail"], true).unwrap();
    assert_eq!(entries[0].verdict, "fail");
    assert_eq!(entries[0].score, None);
    assert_eq!(
        (entries[1].verdict.as_str(), entries[1].score),
        ("pass", Some(4))
    );
    let fenced = format!("Here is my grading:\n```json\n{answer}\n```\n");
    assert!(parse(&rubric(), 2, Some(&fenced), &["pass", "fail"], true).is_ok());
}

#[test]
fn an_answer_that_does_not_parse_names_the_criterion() {
    let not_json = parse(
        &rubric(),
        2,
        Some("It all looks fine!"),
        &["pass", "fail"],
        true,
    )
    .err()
    .unwrap();
    assert!(
        matches!(&not_json, JudgeError::NotJson { criterion, run: 2, .. } if criterion == "names the version"),
        "{not_json:?}"
    );
    let missing =
        r#"{"criteria": [{"name": "names the version", "verdict": "pass", "reason": "yes"}]}"#;
    let error = parse(&rubric(), 3, Some(missing), &["pass", "fail"], true)
        .err()
        .unwrap();
    assert_eq!(
        error.to_string(),
        "the judge's answer (run 3) has no entry for criterion `clear`"
    );
    let out_of_range = r#"{"criteria": [{"name": "names the version", "verdict": "pass", "reason": "yes"}, {"name": "clear", "verdict": "pass", "score": 9, "reason": "yes"}]}"#;
    let error = parse(&rubric(), 3, Some(out_of_range), &["pass", "fail"], true)
        .err()
        .unwrap();
    assert_eq!(
        error.to_string(),
        "the judge's answer (run 3) for criterion `clear` is malformed: `score` 9 is outside 1 to 5"
    );
    let bad_verdict = r#"{"criteria": [{"name": "names the version", "verdict": "maybe", "reason": "yes"}, {"name": "clear", "verdict": "pass", "score": 3, "reason": "yes"}]}"#;
    let error = parse(&rubric(), 3, Some(bad_verdict), &["pass", "fail"], true)
        .err()
        .unwrap();
    assert!(
        error
            .to_string()
            .contains("criterion `names the version` is malformed: `verdict` is \"maybe\""),
        "{error}"
    );
}

#[test]
fn a_pair_prefers_only_when_both_orders_agree() {
    assert_eq!(pair_verdict("1", "2"), JudgeVerdict::A);
    assert_eq!(pair_verdict("2", "1"), JudgeVerdict::B);
    assert_eq!(pair_verdict("tie", "tie"), JudgeVerdict::Tie);
    // The judge always preferred the first answer shown: position, not material.
    assert_eq!(pair_verdict("1", "1"), JudgeVerdict::Inconsistent);
    assert_eq!(pair_verdict("1", "tie"), JudgeVerdict::Inconsistent);
}

#[test]
fn a_rubric_without_criteria_or_with_a_name_twice_is_refused() {
    assert!(check(&Rubric::new(Material::FinalResponse)).is_err());
    let twice = Rubric::new(Material::FinalResponse)
        .criterion("a", "x")
        .criterion("a", "y");
    assert!(
        check(&twice)
            .unwrap_err()
            .to_string()
            .contains("`a` is named twice")
    );
    assert!(check(&rubric()).is_ok());
}

/// A sampled judge's verdict is a majority: an even number of samples could tie, so it is
/// refused, naming the fix; an odd number is taken.
#[test]
fn an_even_number_of_samples_is_refused() {
    for even in [0, 2, 4] {
        let error = check(&rubric().samples(even)).unwrap_err().to_string();
        assert_eq!(
            error,
            format!(
                "the rubric cannot be used: samples({even}) is not odd: the verdict is the majority of the samples, and an even number can tie; give 1, 3, 5, ..."
            )
        );
    }
    assert!(check(&rubric().samples(3)).is_ok());
    assert_eq!(rubric().sample_count(), 1);
}

#[test]
fn the_prompt_lists_the_criteria_and_the_material() {
    let prompt = rubric().prompt("--- final response ---\nhi\n--- end ---");
    assert!(prompt.starts_with("You are a judge. Grade the material below"));
    assert!(prompt.contains(
        "Rubric:\n1. names the version (pass or fail): It names 2.4.1.\n2. clear (score 1 to 5): It is plain.\n\nMaterial:\n--- final response ---\nhi\n--- end ---"
    ));
}

#[test]
fn a_criterion_given_two_verdicts_is_malformed_not_its_first() {
    // The same criterion twice with opposite verdicts: neither is taken.
    let twice = r#"{"criteria": [{"name": "names the version", "verdict": "pass", "reason": "yes"}, {"name": "clear", "verdict": "pass", "score": 4, "reason": "ok"}, {"name": "names the version", "verdict": "fail", "reason": "no"}]}"#;
    let error = parse(&rubric(), 2, Some(twice), &["pass", "fail"], true)
        .err()
        .expect("an error, not the first verdict");
    assert_eq!(
        error.to_string(),
        "the judge's answer (run 2) for criterion `names the version` is malformed: the answer has 2 entries for it that disagree (`pass` and `fail`): which one the judge meant cannot be told"
    );
    // Two scores for one scored criterion disagree too.
    let scores = r#"{"criteria": [{"name": "names the version", "verdict": "pass", "reason": "yes"}, {"name": "clear", "verdict": "pass", "score": 4, "reason": "ok"}, {"name": "clear", "verdict": "pass", "score": 2, "reason": "meh"}]}"#;
    let error = parse(&rubric(), 2, Some(scores), &["pass", "fail"], true)
        .err()
        .unwrap();
    assert!(
        error
            .to_string()
            .contains("(`pass` (score 4) and `pass` (score 2))"),
        "{error}"
    );
    // A pairwise judge that says `1` and `2` for one criterion.
    let pair = r#"{"criteria": [{"name": "names the version", "verdict": "1", "reason": "a"}, {"name": "names the version", "verdict": "2", "reason": "b"}]}"#;
    let one = Rubric::new(Material::FinalResponse).criterion("names the version", "x");
    assert!(matches!(
        parse(&one, 3, Some(pair), &["1", "2", "tie"], false),
        Err(JudgeError::MalformedCriterion { .. })
    ));
    // The same entry repeated alike is one verdict.
    let alike = r#"{"criteria": [{"name": "names the version", "verdict": "1", "reason": "a"}, {"name": "names the version", "verdict": "1", "reason": "again"}]}"#;
    let entries = parse(&one, 3, Some(alike), &["1", "2", "tie"], false).unwrap();
    assert_eq!(
        (entries[0].verdict.as_str(), entries[0].reason.as_str()),
        ("1", "a")
    );
}
