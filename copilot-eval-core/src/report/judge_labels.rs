//! Judges against a person's labels (`cargo copilot-eval --judge-labels FILE`): a labels file
//! says, per eval, trial and criterion, what a person judged (`pass` or `fail`); the report
//! gives, per eval, rubric judge and criterion, how often the judge's verdict matched the label
//! and Cohen's kappa ([`crate::stats::cohen_kappa`]), with n, the labelled trials the judge gave
//! a verdict on ([`JudgeLabelsReport`], the results' `judge_labels`).
//!
//! The file (JSON):
//!
//! ```json
//! {"labels": [
//!   {"eval": "judges_the_release_notes", "trial": 1, "criterion": "clear", "label": "pass"},
//!   {"eval": "judges_the_release_notes", "trial": 2, "criterion": "clear", "label": "fail"}
//! ]}
//! ```
//!
//! `eval` is the test's name as the results write it (`name`), `trial` its trial from 1 (an
//! eval run once is trial 1), `criterion` a rubric criterion's name, `label` `pass` or `fail`.
//! A label is compared with every rubric judge of that test that has the criterion. A label no
//! such judge gave a verdict on is not in n: a judge's error is counted apart
//! (`judge_errors`), a label that matches no judged criterion of the suite is listed in
//! `unmatched` (a misspelt eval or criterion, or an eval that was not run).

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{JudgeKind, JudgeVerdict, TestRecord};

/// One person's label: the eval, trial and criterion it is about, and its verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgeLabel {
    /// The test's name, as the results' `name` writes it.
    pub eval: String,
    /// The trial, from 1 (an eval run once: 1).
    pub trial: u32,
    /// The rubric criterion's name.
    pub criterion: String,
    /// `true`: the person judged `pass`; `false`: `fail`.
    pub pass: bool,
}

/// Why a labels file cannot be used: its message names the file, the field and the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct JudgeLabelsError {
    /// `labels.json: labels[2].label: "yes" is not "pass" or "fail"; write "pass" or "fail"`.
    pub message: String,
}

/// A labels file read and checked ([`JudgeLabels::read`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgeLabels {
    /// The file as given.
    pub file: String,
    /// Its labels, in file order (no two about the same eval, trial and criterion).
    pub labels: Vec<JudgeLabel>,
}

impl JudgeLabels {
    /// Read and check the labels file at `path`. Errors name the file, the field
    /// (`labels[2].label`) and the fix.
    pub fn read(path: &Path) -> Result<Self, JudgeLabelsError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| JudgeLabelsError {
            message: format!("{file}: cannot read the judge labels file: {e}"),
        })?;
        Self::parse(&file, &text)
    }

    /// Check `text`, the content of the labels file `file` (see the module documentation).
    pub fn parse(file: &str, text: &str) -> Result<Self, JudgeLabelsError> {
        Self::parse_text(file, text).map_err(|message| JudgeLabelsError { message })
    }

    /// [`JudgeLabels::parse`] with its error as text.
    fn parse_text(file: &str, text: &str) -> Result<Self, String> {
        let value: Value = serde_json::from_str(text).map_err(|e| {
            format!("{file}: not JSON ({e}); write {{\"labels\": [{{\"eval\": ..., \"trial\": 1, \"criterion\": ..., \"label\": \"pass\"}}]}}")
        })?;
        let Some(list) = value.get("labels").and_then(Value::as_array) else {
            return Err(format!(
                "{file}: labels: missing or not a list; the file is one object {{\"labels\": [..]}}, one entry per eval, trial and criterion"
            ));
        };
        let mut labels: Vec<JudgeLabel> = Vec::new();
        for (i, item) in list.iter().enumerate() {
            let label = entry(item).map_err(|(field, fix)| match field.is_empty() {
                true => format!("{file}: labels[{i}]: {fix}"),
                false => format!("{file}: labels[{i}].{field}: {fix}"),
            })?;
            if let Some(j) = labels.iter().position(|l| {
                (&l.eval, l.trial, &l.criterion) == (&label.eval, label.trial, &label.criterion)
            }) {
                return Err(format!(
                    "{file}: labels[{i}]: eval `{}`, trial {}, criterion `{}` is labelled already by labels[{j}]; keep one label per eval, trial and criterion",
                    label.eval, label.trial, label.criterion
                ));
            }
            labels.push(label);
        }
        Ok(JudgeLabels {
            file: file.to_owned(),
            labels,
        })
    }
}

/// One entry of the file, or the field that is wrong and how to fix it.
fn entry(item: &Value) -> Result<JudgeLabel, (String, String)> {
    let Some(object) = item.as_object() else {
        return Err((
            String::new(),
            "not an object; each entry is {\"eval\": .., \"trial\": 1, \"criterion\": .., \"label\": \"pass\"}".into(),
        ));
    };
    if let Some(key) =
        (object.keys()).find(|k| !["eval", "trial", "criterion", "label"].contains(&k.as_str()))
    {
        return Err((
            key.clone(),
            "unknown field; an entry has eval, trial, criterion and label".into(),
        ));
    }
    let text = |field: &str, what: &str| match object.get(field) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        _ => Err((
            field.to_owned(),
            format!("missing or not a non-empty string; give the {what}"),
        )),
    };
    let eval = text("eval", "test's name as the results write it (`name`)")?;
    let criterion = text("criterion", "rubric criterion's name")?;
    let trial = match object.get("trial") {
        None => 1,
        Some(v) => v
            .as_u64()
            .and_then(|t| u32::try_from(t).ok())
            .filter(|&t| t >= 1)
            .ok_or_else(|| {
                (
                    "trial".to_owned(),
                    format!(
                        "{v} is not a trial number; give an integer from 1 (1 for an eval run once)"
                    ),
                )
            })?,
    };
    let pass = match object.get("label").and_then(Value::as_str) {
        Some("pass") => true,
        Some("fail") => false,
        other => {
            return Err((
                "label".to_owned(),
                format!(
                    "{} is not \"pass\" or \"fail\"; write \"pass\" or \"fail\"",
                    other.map_or_else(
                        || object
                            .get("label")
                            .map_or("missing".to_owned(), Value::to_string),
                        |s| format!("{s:?}")
                    )
                ),
            ));
        }
    };
    Ok(JudgeLabel {
        eval,
        trial,
        criterion,
        pass,
    })
}

/// The suite's judges against a labels file: the `judge_labels` of the results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct JudgeLabelsReport {
    /// The labels file as given (`--judge-labels FILE`).
    pub file: String,
    /// Labels in the file.
    pub labels: u32,
    /// Per eval, rubric judge and criterion that has labels: the agreement and kappa; in the
    /// order of the suite's tests, then of the judges and their rubrics.
    pub criteria: Vec<JudgeLabelAgreement>,
    /// Labels that matched no rubric judge's criterion of a test in the suite, as `eval, trial
    /// N, criterion` (a misspelt eval or criterion, an eval not run); absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmatched: Vec<String>,
}

/// One rubric judge's criterion of one eval against the person's labels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct JudgeLabelAgreement {
    /// The test binary (`package::target`).
    pub binary: String,
    /// The test's name.
    pub eval: String,
    /// The judge's position in the test, from 1.
    pub judge: u32,
    /// The criterion's name.
    pub criterion: String,
    /// n: labelled trials the judge gave a verdict on (the sum of the four counts below).
    pub n: u32,
    /// Trials the judge and the label both passed.
    pub both_pass: u32,
    /// Trials the judge passed and the label failed.
    pub judge_pass_label_fail: u32,
    /// Trials the judge failed and the label passed.
    pub judge_fail_label_pass: u32,
    /// Trials the judge and the label both failed.
    pub both_fail: u32,
    /// Labelled trials whose judge gave no verdict (its error): not in n.
    pub judge_errors: u32,
    /// `(both_pass + both_fail) / n`, the observed agreement p_o; absent when n is 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<f64>,
    /// Cohen's kappa, (p_o - p_e) / (1 - p_e) (`stats::cohen_kappa`); absent when n is 0 or
    /// undefined (judge and labels each gave one rating throughout: p_e = 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kappa: Option<f64>,
}

/// Compare `labels` with the rubric judges of `tests` (a suite's records).
pub fn agreement(tests: &[TestRecord], labels: &JudgeLabels) -> JudgeLabelsReport {
    let mut criteria: Vec<JudgeLabelAgreement> = Vec::new();
    let mut unmatched = Vec::new();
    for label in &labels.labels {
        let mut matched = false;
        let records = tests
            .iter()
            .filter(|t| t.name == label.eval && t.trial.map_or(1, |t| t.trial) == label.trial);
        for test in records {
            for (index, judge) in test.judges.iter().enumerate() {
                if judge.kind != JudgeKind::Rubric
                    || !judge.rubric.iter().any(|c| c.name == label.criterion)
                {
                    continue;
                }
                matched = true;
                let row = row_of(&mut criteria, test, index as u32 + 1, &label.criterion);
                let verdict = (judge.error.is_none())
                    .then(|| {
                        judge
                            .verdicts
                            .iter()
                            .find(|v| v.criterion == label.criterion)
                    })
                    .flatten()
                    .map(|v| v.verdict == JudgeVerdict::Pass);
                match (verdict, label.pass) {
                    (None, _) => row.judge_errors += 1,
                    (Some(true), true) => row.both_pass += 1,
                    (Some(true), false) => row.judge_pass_label_fail += 1,
                    (Some(false), true) => row.judge_fail_label_pass += 1,
                    (Some(false), false) => row.both_fail += 1,
                }
            }
        }
        if !matched {
            unmatched.push(format!(
                "{}, trial {}, {}",
                label.eval, label.trial, label.criterion
            ));
        }
    }
    for row in &mut criteria {
        let counts = [
            row.both_pass,
            row.judge_pass_label_fail,
            row.judge_fail_label_pass,
            row.both_fail,
        ];
        row.n = counts.iter().sum();
        row.agreement =
            (row.n > 0).then(|| f64::from(row.both_pass + row.both_fail) / f64::from(row.n));
        row.kappa = crate::stats::cohen_kappa(
            counts[0].into(),
            counts[1].into(),
            counts[2].into(),
            counts[3].into(),
        );
    }
    // The suite's test order, then the judges', then each rubric's.
    let order = |r: &JudgeLabelAgreement| {
        let test = (tests.iter()).position(|t| t.binary == r.binary && t.name == r.eval);
        let criterion = test
            .and_then(|t| tests[t].judges.get(r.judge as usize - 1))
            .and_then(|j| j.rubric.iter().position(|c| c.name == r.criterion));
        (test, r.judge, criterion)
    };
    criteria.sort_by_key(order);
    JudgeLabelsReport {
        file: labels.file.clone(),
        labels: labels.labels.len() as u32,
        criteria,
        unmatched,
    }
}

/// The row of `test`'s judge `judge` and `criterion` in `rows`, added when missing.
fn row_of<'a>(
    rows: &'a mut Vec<JudgeLabelAgreement>,
    test: &TestRecord,
    judge: u32,
    criterion: &str,
) -> &'a mut JudgeLabelAgreement {
    let at = rows.iter().position(|r| {
        r.binary == test.binary
            && r.eval == test.name
            && r.judge == judge
            && r.criterion == criterion
    });
    let at = at.unwrap_or_else(|| {
        rows.push(JudgeLabelAgreement {
            binary: test.binary.clone(),
            eval: test.name.clone(),
            judge,
            criterion: criterion.to_owned(),
            n: 0,
            both_pass: 0,
            judge_pass_label_fail: 0,
            judge_fail_label_pass: 0,
            both_fail: 0,
            judge_errors: 0,
            agreement: None,
            kappa: None,
        });
        rows.len() - 1
    });
    &mut rows[at]
}

/// One criterion for the terminal: `pkg::evals e judge 1, clear: agreed 8/10 (80%), Cohen's
/// kappa 0.60 (n = 10)`, then `, 1 judge error (not in n)`; `kappa undefined` when judge and
/// labels each gave one rating throughout; `no verdict to compare` when n is 0.
pub fn line(r: &JudgeLabelAgreement) -> String {
    let agreeing = r.both_pass + r.both_fail;
    let mut line = format!(
        "{} {} judge {}, {}: ",
        r.binary, r.eval, r.judge, r.criterion
    );
    match r.agreement {
        Some(agreement) => line.push_str(&format!(
            "agreed {agreeing}/{} ({:.0}%), {} (n = {})",
            r.n,
            agreement * 100.0,
            r.kappa.map_or_else(
                || "Cohen's kappa undefined (one rating throughout)".to_owned(),
                |k| format!("Cohen's kappa {k:.2}")
            ),
            r.n
        )),
        None => line.push_str("no verdict to compare (n = 0)"),
    }
    if r.judge_errors > 0 {
        line.push_str(&format!(
            ", {} judge error{} (not in n)",
            r.judge_errors,
            if r.judge_errors == 1 { "" } else { "s" }
        ));
    }
    line
}

/// The terminal's lines: `  judge labels (FILE, 12 labels):`, one line per criterion
/// ([`line()`]), then `    unmatched: ...` when some label matched nothing.
pub fn summary_lines(report: &JudgeLabelsReport) -> String {
    let mut out = format!(
        "  judge labels ({}, {} label{}):\n",
        report.file,
        report.labels,
        if report.labels == 1 { "" } else { "s" }
    );
    for row in &report.criteria {
        out.push_str(&format!("    {}\n", line(row)));
    }
    if !report.unmatched.is_empty() {
        out.push_str(&format!(
            "    unmatched (no rubric judge of that eval, trial and criterion ran): {}\n",
            report.unmatched.join("; ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{
        JudgeCriterionVerdict, JudgeRecord, Outcome, RubricCriterionRecord, TrialOf, tests::test,
    };

    /// Trial `trial` of eval `e` whose rubric judge said `verdict` on `clear` (`None`: the
    /// judge's error).
    fn judged(trial: u32, verdict: Option<JudgeVerdict>) -> TestRecord {
        let mut record = test("e", "pkg::evals", Outcome::Passed, Vec::new());
        record.trial = Some(TrialOf { trial, trials: 11 });
        record.judges = vec![JudgeRecord {
            kind: JudgeKind::Rubric,
            material: "final response".into(),
            judged_runs: vec![1],
            model: None,
            tools: Vec::new(),
            samples: None,
            rubric: vec![RubricCriterionRecord {
                name: "clear".into(),
                text: "t".into(),
                scale: None,
            }],
            sessions: Vec::new(),
            verdicts: (verdict.into_iter())
                .map(|verdict| JudgeCriterionVerdict {
                    criterion: "clear".into(),
                    verdict,
                    score: None,
                    reasons: vec!["r".into()],
                    agreement: None,
                })
                .collect(),
            error: verdict.is_none().then(|| "not JSON".to_owned()),
        }];
        record
    }

    /// A labels file with known agreement, through the file: 10 trials judged and labelled,
    /// judge pass and label pass 5, judge pass and label fail 2, judge fail and label pass 1,
    /// both fail 2; trial 11's judge gave no verdict; one label names a criterion no judge has.
    ///
    /// By hand: n = 10; p_o = (5 + 2) / 10 = 0.7; the judge passes 7/10, the labels 6/10, so
    /// p_e = 0.7 * 0.6 + 0.3 * 0.4 = 0.42 + 0.12 = 0.54; kappa = (0.7 - 0.54) / (1 - 0.54) =
    /// 0.16 / 0.46 = 0.3478.
    #[test]
    fn a_labels_file_with_known_agreement_gives_the_kappa_computed_by_hand() {
        use JudgeVerdict::{Fail, Pass};
        // (judge, label) per trial 1..=10.
        let table = [
            (Pass, "pass"),
            (Pass, "pass"),
            (Pass, "pass"),
            (Pass, "pass"),
            (Pass, "pass"),
            (Pass, "fail"),
            (Pass, "fail"),
            (Fail, "pass"),
            (Fail, "fail"),
            (Fail, "fail"),
        ];
        let mut tests: Vec<TestRecord> = (table.iter().enumerate())
            .map(|(i, (verdict, _))| judged(i as u32 + 1, Some(*verdict)))
            .collect();
        tests.push(judged(11, None));
        let mut entries: Vec<serde_json::Value> = (table.iter().enumerate())
            .map(|(i, (_, label))| {
                serde_json::json!({"eval": "e", "trial": i + 1, "criterion": "clear", "label": label})
            })
            .collect();
        entries.push(
            serde_json::json!({"eval": "e", "trial": 11, "criterion": "clear", "label": "pass"}),
        );
        entries.push(
            serde_json::json!({"eval": "e", "trial": 1, "criterion": "claer", "label": "pass"}),
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("labels.json");
        std::fs::write(&path, serde_json::json!({ "labels": entries }).to_string()).unwrap();
        let labels = JudgeLabels::read(&path).unwrap();
        let report = agreement(&tests, &labels);
        assert_eq!(report.labels, 12);
        assert_eq!(report.unmatched, ["e, trial 1, claer"]);
        assert_eq!(report.criteria.len(), 1, "{report:#?}");
        let row = &report.criteria[0];
        assert_eq!(
            (
                row.n,
                row.both_pass,
                row.judge_pass_label_fail,
                row.judge_fail_label_pass,
                row.both_fail,
                row.judge_errors
            ),
            (10, 5, 2, 1, 2, 1)
        );
        let p_o: f64 = 0.7;
        let p_e = 0.7 * 0.6 + 0.3 * 0.4;
        let by_hand = (p_o - p_e) / (1.0 - p_e);
        assert!((by_hand - 0.16 / 0.46).abs() < 1e-12);
        assert!(
            (row.kappa.unwrap() - by_hand).abs() < 1e-12,
            "{:?}",
            row.kappa
        );
        assert_eq!(row.agreement, Some(0.7));
        assert_eq!(
            line(row),
            "pkg::evals e judge 1, clear: agreed 7/10 (70%), Cohen's kappa 0.35 (n = 10), 1 judge error (not in n)"
        );
        let lines = summary_lines(&report);
        assert!(
            lines.starts_with(&format!(
                "  judge labels ({}, 12 labels):\n",
                path.display()
            )),
            "{lines}"
        );
    }

    /// A bad file: an error naming the file, the field and the fix.
    #[test]
    fn a_bad_labels_file_names_the_file_the_field_and_the_fix() {
        let cases = [
            (
                "[1, 2]",
                "f.json: labels: missing or not a list; the file is one object {\"labels\": [..]}, one entry per eval, trial and criterion",
            ),
            (
                r#"{"labels": [{"eval": "e", "criterion": "clear", "label": "maybe"}]}"#,
                "f.json: labels[0].label: \"maybe\" is not \"pass\" or \"fail\"; write \"pass\" or \"fail\"",
            ),
            (
                r#"{"labels": [{"eval": "e", "criterion": "clear", "label": "pass"}, {"eval": "e", "trial": 0, "criterion": "clear", "label": "pass"}]}"#,
                "f.json: labels[1].trial: 0 is not a trial number; give an integer from 1 (1 for an eval run once)",
            ),
            (
                r#"{"labels": [{"criterion": "clear", "label": "pass"}]}"#,
                "f.json: labels[0].eval: missing or not a non-empty string; give the test's name as the results write it (`name`)",
            ),
            (
                r#"{"labels": [{"eval": "e", "criterion": "clear", "verdict": "pass"}]}"#,
                "f.json: labels[0].verdict: unknown field; an entry has eval, trial, criterion and label",
            ),
            (
                r#"{"labels": [{"eval": "e", "criterion": "clear", "label": "pass"}, {"eval": "e", "trial": 1, "criterion": "clear", "label": "fail"}]}"#,
                "f.json: labels[1]: eval `e`, trial 1, criterion `clear` is labelled already by labels[0]; keep one label per eval, trial and criterion",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(
                JudgeLabels::parse("f.json", text).unwrap_err().to_string(),
                expected
            );
        }
        assert_eq!(
            JudgeLabels::parse("f.json", r#"{"labels": [1]}"#)
                .unwrap_err()
                .to_string(),
            "f.json: labels[0]: not an object; each entry is {\"eval\": .., \"trial\": 1, \"criterion\": .., \"label\": \"pass\"}"
        );
        let not_json = JudgeLabels::parse("f.json", "{").unwrap_err().to_string();
        assert!(not_json.starts_with("f.json: not JSON ("), "{not_json}");
        let missing = JudgeLabels::read(Path::new("/nonexistent/labels.json"))
            .unwrap_err()
            .to_string();
        assert!(
            missing.starts_with("/nonexistent/labels.json: cannot read the judge labels file:"),
            "{missing}"
        );
    }
}
