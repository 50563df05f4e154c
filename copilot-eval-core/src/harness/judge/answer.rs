//! The judge's answer: its JSON read from the final response, one entry per criterion of the
//! rubric, and the pairwise verdict from the two orders' words. Anything the rubric's criteria
//! cannot be read from unambiguously is a [`JudgeError`], never a verdict.

use serde_json::Value;

use super::{Criterion, JudgeError, Rubric};
use crate::report::JudgeVerdict;

/// One criterion's entry in an answer: verdict word, score, reason.
pub(super) struct Entry {
    pub(super) verdict: String,
    pub(super) score: Option<i64>,
    pub(super) reason: String,
}

/// The JSON of `answer`: the whole text, else the content of its first fenced block.
fn answer_json(answer: &str) -> Result<Value, String> {
    let trimmed = answer.trim();
    match serde_json::from_str::<Value>(trimmed) {
        Ok(value) => Ok(value),
        Err(whole) => {
            let Some(start) = trimmed.find("```") else {
                return Err(whole.to_string());
            };
            let after = &trimmed[start + 3..];
            let body = after.split_once('\n').map_or("", |(_, rest)| rest);
            let Some(end) = body.find("```") else {
                return Err(format!("{whole}; a fenced block is not closed"));
            };
            serde_json::from_str(body[..end].trim()).map_err(|e| format!("the fenced block: {e}"))
        }
    }
}

/// Parse a judge's `answer` (session `run`) into one entry per criterion of `rubric`, in the
/// rubric's order. `verdicts` are the verdict words allowed; `scored` whether a scored
/// criterion's score is required (rubric judges). A criterion the answer lists twice with
/// different verdicts or scores is malformed: which entry the judge meant cannot be told, so
/// neither is taken.
pub(super) fn parse(
    rubric: &Rubric,
    run: u64,
    answer: Option<&str>,
    verdicts: &[&str],
    scored: bool,
) -> Result<Vec<Entry>, JudgeError> {
    let first = rubric
        .criteria
        .first()
        .map(|c| c.name.clone())
        .unwrap_or_default();
    let not_json = |detail: String| JudgeError::NotJson {
        run,
        criterion: first.clone(),
        detail,
    };
    let answer = answer.ok_or_else(|| not_json("the session gave no final response".into()))?;
    let value = answer_json(answer).map_err(not_json)?;
    let list = value
        .get("criteria")
        .and_then(Value::as_array)
        .ok_or_else(|| not_json("no `criteria` list".into()))?;
    let mut entries = Vec::new();
    for criterion in &rubric.criteria {
        let items: Vec<&Value> = list
            .iter()
            .filter(|i| i.get("name").and_then(Value::as_str) == Some(criterion.name.as_str()))
            .collect();
        if items.is_empty() {
            return Err(JudgeError::MissingCriterion {
                run,
                criterion: criterion.name.clone(),
            });
        }
        let mut read = Vec::new();
        for item in items {
            read.push(entry(criterion, run, item, verdicts, scored)?);
        }
        let first = read.remove(0);
        if let Some(other) = read
            .iter()
            .find(|e| e.verdict != first.verdict || e.score != first.score)
        {
            let said = |e: &Entry| match e.score {
                Some(score) => format!("`{}` (score {score})", e.verdict),
                None => format!("`{}`", e.verdict),
            };
            return Err(JudgeError::MalformedCriterion {
                run,
                criterion: criterion.name.clone(),
                detail: format!(
                    "the answer has {} entries for it that disagree ({} and {}): which one the judge meant cannot be told",
                    read.len() + 1,
                    said(&first),
                    said(other)
                ),
            });
        }
        entries.push(first);
    }
    Ok(entries)
}

/// One entry of `criterion` read from `item`: its verdict word (one of `verdicts`), its score
/// (required on a scored criterion when `scored`) and its reason.
fn entry(
    criterion: &Criterion,
    run: u64,
    item: &Value,
    verdicts: &[&str],
    scored: bool,
) -> Result<Entry, JudgeError> {
    let malformed = |detail: String| JudgeError::MalformedCriterion {
        run,
        criterion: criterion.name.clone(),
        detail,
    };
    let verdict = match item.get("verdict") {
        Some(Value::String(s)) => s.trim().to_ascii_lowercase(),
        Some(Value::Number(n)) => n.to_string(),
        _ => return Err(malformed("no `verdict` string".into())),
    };
    if !verdicts.contains(&verdict.as_str()) {
        return Err(malformed(format!(
            "`verdict` is {verdict:?}, not one of {}",
            verdicts.join(", ")
        )));
    }
    let score = match (item.get("score"), criterion.scale, scored) {
        (Some(Value::Number(n)), Some((min, max)), true) => {
            let score = n
                .as_i64()
                .ok_or_else(|| malformed(format!("`score` {n} is not an integer")))?;
            if !(min..=max).contains(&score) {
                return Err(malformed(format!(
                    "`score` {score} is outside {min} to {max}"
                )));
            }
            Some(score)
        }
        (_, Some((min, max)), true) => {
            return Err(malformed(format!(
                "no `score` (an integer from {min} to {max})"
            )));
        }
        _ => None,
    };
    let reason = item
        .get("reason")
        .and_then(Value::as_str)
        .ok_or_else(|| malformed("no `reason` string".into()))?;
    Ok(Entry {
        verdict,
        score,
        reason: reason.to_owned(),
    })
}

/// The verdict of a pairwise criterion from its two orders' words (`1`, `2`, `tie`): in order
/// `a_b` answer 1 is `a`; in order `b_a` answer 1 is `b`. A preference only when both agree.
pub(super) fn pair_verdict(a_b: &str, b_a: &str) -> JudgeVerdict {
    let a_b = match a_b {
        "1" => JudgeVerdict::A,
        "2" => JudgeVerdict::B,
        _ => JudgeVerdict::Tie,
    };
    let b_a = match b_a {
        "1" => JudgeVerdict::B,
        "2" => JudgeVerdict::A,
        _ => JudgeVerdict::Tie,
    };
    if a_b == b_a {
        a_b
    } else {
        JudgeVerdict::Inconsistent
    }
}
