//! A rubric judge sampled N times ([`Rubric::samples`]): each criterion's verdict by majority
//! over the samples' answers, with its agreement (how many samples gave it), and the median of
//! a scored criterion's scores.

use super::Rubric;
use super::answer::Entry;
use crate::report::{JudgeCriterionVerdict, JudgeVerdict, SampleAgreement};

/// The verdicts of `rubric`'s criteria from `answers`, one parsed answer per sample (each in
/// the rubric's order, as `answer::parse` returns them; their number is odd and at least 1).
/// A criterion's verdict is `pass` when more than half of the samples said `pass`, else
/// `fail`; its `agreement` (absent for one sample) counts the samples that gave it; its score
/// is the median of the samples' scores (the middle one: the number is odd); its reasons are
/// each sample's, in order.
pub(super) fn verdicts(rubric: &Rubric, answers: Vec<Vec<Entry>>) -> Vec<JudgeCriterionVerdict> {
    let samples = answers.len() as u32;
    let mut per_criterion: Vec<Vec<Entry>> = rubric.criteria.iter().map(|_| Vec::new()).collect();
    for answer in answers {
        for (column, entry) in per_criterion.iter_mut().zip(answer) {
            column.push(entry);
        }
    }
    rubric
        .criteria
        .iter()
        .zip(per_criterion)
        .map(|(criterion, entries)| {
            let passes = entries.iter().filter(|e| e.verdict == "pass").count() as u32;
            let (verdict, agreeing) = if 2 * passes > samples {
                (JudgeVerdict::Pass, passes)
            } else {
                (JudgeVerdict::Fail, samples - passes)
            };
            let mut scores: Vec<i64> = entries.iter().filter_map(|e| e.score).collect();
            scores.sort_unstable();
            JudgeCriterionVerdict {
                criterion: criterion.name.clone(),
                verdict,
                score: scores.get(scores.len() / 2).copied(),
                reasons: entries.into_iter().map(|e| e.reason).collect(),
                agreement: (samples > 1).then_some(SampleAgreement { agreeing, samples }),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::judge::Material;

    fn entry(verdict: &str, score: Option<i64>) -> Entry {
        Entry {
            verdict: verdict.into(),
            score,
            reason: format!("{verdict} {score:?}"),
        }
    }

    /// Three samples, one of which disagrees: the majority verdict with 2/3 agreement, the
    /// median score; one sample: no agreement recorded.
    #[test]
    fn the_verdict_is_the_majority_and_its_agreement_is_counted() {
        let rubric = Rubric::new(Material::FinalResponse)
            .criterion("names the version", "It names 2.4.1.")
            .scored("clear", "It is plain.", 1, 5)
            .samples(3);
        let verdicts = verdicts(
            &rubric,
            vec![
                vec![entry("pass", None), entry("pass", Some(4))],
                vec![entry("fail", None), entry("fail", Some(2))],
                vec![entry("pass", None), entry("fail", Some(3))],
            ],
        );
        let got: Vec<(JudgeVerdict, Option<i64>, Option<SampleAgreement>)> = verdicts
            .iter()
            .map(|v| (v.verdict, v.score, v.agreement))
            .collect();
        let agree = |agreeing| {
            Some(SampleAgreement {
                agreeing,
                samples: 3,
            })
        };
        assert_eq!(
            got,
            [
                (JudgeVerdict::Pass, None, agree(2)),
                (JudgeVerdict::Fail, Some(3), agree(2)),
            ]
        );
        assert_eq!(verdicts[1].reasons.len(), 3);
        let once = super::verdicts(
            &rubric,
            vec![vec![entry("fail", None), entry("pass", Some(5))]],
        );
        assert_eq!(once[1].agreement, None);
        assert_eq!(
            (once[1].verdict, once[1].score),
            (JudgeVerdict::Pass, Some(5))
        );
    }
}
