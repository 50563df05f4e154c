//! A judge in the artifacts: [`JudgeRecord`], one per `ctx.judge(..)` or `ctx.judge_pair(..)`
//! of a test: the rubric, the judged runs, each judge session (a run of the test labelled
//! [`JUDGE`], with its tokens, premium requests and estimated cost read from its run record) and
//! the verdicts. The JSON, the JUnit properties, the terminal summary and the HTML page all read
//! this one record.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::RunRecord;

/// The label of a judge session's run (`RunRecord::label`).
pub const JUDGE: &str = "judge";

/// Which kind of judge a record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JudgeKind {
    /// `ctx.judge(&result, &rubric)`: one session grades one result, `pass` or `fail` per
    /// criterion.
    Rubric,
    /// `ctx.judge_pair(&a, &b, &rubric)`: two sessions, the two results in both orders; a
    /// preference per criterion only when both orders agree.
    Pairwise,
}

impl JudgeKind {
    /// `rubric` or `pairwise`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Rubric => "rubric",
            Self::Pairwise => "pairwise",
        }
    }
}

/// A verdict on one criterion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JudgeVerdict {
    /// A rubric judge: the material meets the criterion.
    Pass,
    /// A rubric judge: the material does not meet it.
    Fail,
    /// A pairwise judge: both orders preferred the first result given (`a`).
    A,
    /// A pairwise judge: both orders preferred the second result given (`b`).
    B,
    /// A pairwise judge: both orders called it a tie.
    Tie,
    /// A pairwise judge: the two orders disagree (the judge's preference followed the position,
    /// not the material); no preference is reported.
    Inconsistent,
}

impl JudgeVerdict {
    /// The value as written: `pass`, `fail`, `a`, `b`, `tie`, `inconsistent`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Fail => "fail",
            Self::A => "a",
            Self::B => "b",
            Self::Tie => "tie",
            Self::Inconsistent => "inconsistent",
        }
    }
}

impl std::fmt::Display for JudgeVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One criterion of a rubric, as the judge was given it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RubricCriterionRecord {
    /// The criterion's name (the key of its answer).
    pub name: String,
    /// What the judge is asked to check.
    pub text: String,
    /// The score range the judge must give, `[min, max]` (integers); absent for a pass/fail
    /// criterion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<[i64; 2]>,
}

/// One judge session: a run of the test labelled `judge`, with its cost as its run record
/// says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct JudgeSession {
    /// The session's run: its number in the test's `runs`, from 1.
    pub run: u64,
    /// For a pairwise judge, the order the session saw the results in: `a_b` (the first
    /// result given as "Answer 1") or `b_a` (swapped); absent for a rubric judge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<String>,
    /// The run's `stop_reason`, as its text (`completed`, `timeout`, ...).
    pub stop_reason: String,
    /// The session's final response: the judge's answer as it gave it.
    pub answer: Option<String>,
    /// Model calls.
    pub model_calls: u64,
    /// Input tokens; `null` when unknown (a replay of a cassette without recorded usage).
    pub input_tokens: Option<u64>,
    /// Output tokens; `null` when unknown.
    pub output_tokens: Option<u64>,
    /// Premium requests as the runtime reported them; `null` when not reported.
    pub premium_requests: Option<f64>,
    /// The runner's estimate (its pricing table) in its currency; `null` when not priced (a
    /// scripted judge is never priced: see the run's `cost_not_applicable`).
    pub estimated_cost: Option<f64>,
    /// Whole run, milliseconds.
    pub duration_ms: u64,
}

impl JudgeSession {
    /// The session as `run` (its number `number` in the test's runs, from 1) shows it.
    pub fn of(number: u64, order: Option<&str>, run: &RunRecord) -> Self {
        let known = run.totals.tokens.is_reported();
        JudgeSession {
            run: number,
            order: order.map(str::to_owned),
            stop_reason: run.stop_reason.as_str().to_owned(),
            answer: run.final_response.clone(),
            model_calls: run.totals.model_calls,
            input_tokens: known.then_some(run.totals.input_tokens),
            output_tokens: known.then_some(run.totals.output_tokens),
            premium_requests: run.totals.premium_requests,
            estimated_cost: run.totals.estimated_cost,
            duration_ms: run.duration_ms,
        }
    }
}

/// The verdict on one criterion, with the judge's score and reasons.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct JudgeCriterionVerdict {
    /// The criterion's name.
    pub criterion: String,
    /// `pass` / `fail` (rubric judge); `a`, `b`, `tie` or `inconsistent` (pairwise).
    pub verdict: JudgeVerdict,
    /// The judge's score on the criterion's scale, for a scored criterion of a rubric judge;
    /// absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<i64>,
    /// The judge's reason, one per session (a pairwise judge: the `a_b` order's, then the
    /// `b_a` order's; a sampled rubric judge: each sample's, in order).
    pub reasons: Vec<String>,
    /// A rubric judge sampled N times (`Rubric::samples`, N > 1): how many of the N samples
    /// gave the majority verdict (`verdict`), e.g. 2 of 3; absent with one sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<SampleAgreement>,
}

/// How many of a sampled judge's samples gave the majority verdict on a criterion: the judge's
/// agreement with itself on the same material.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SampleAgreement {
    /// Samples whose verdict is the majority verdict (more than half of `samples`).
    pub agreeing: u32,
    /// Samples judged (the rubric's `samples`, an odd number; every one gave a verdict, or
    /// the judge has an `error` and no verdicts).
    pub samples: u32,
}

impl SampleAgreement {
    /// `2/3`.
    pub fn fraction(self) -> String {
        format!("{}/{}", self.agreeing, self.samples)
    }
}

/// One `ctx.judge(..)` or `ctx.judge_pair(..)` of a test ([`super::TestRecord::judges`]).
/// A judge is a model's statement about the material, not a check of the real output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct JudgeRecord {
    /// `rubric` or `pairwise`.
    pub kind: JudgeKind,
    /// What the judge read: `final response`, `files: a.md, b.md` or `text`.
    pub material: String,
    /// The judged runs by their number in the test's `runs` (from 1): one for a rubric judge,
    /// `[a, b]` for a pairwise one; empty when the judged material was a string or the result
    /// came from elsewhere.
    pub judged_runs: Vec<u64>,
    /// The model the judge sessions asked for (the rubric's `judge_model`, else the judged
    /// run's); `null`: the runtime's default.
    pub model: Option<String>,
    /// The tools the judge sessions were allowed (empty: none).
    pub tools: Vec<String>,
    /// How many times the judge judged the same material (`Rubric::samples`, an odd number
    /// above 1): one session per sample, each criterion's verdict by majority with its
    /// `agreement`; absent for one sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<u32>,
    /// The rubric's criteria, in order.
    pub rubric: Vec<RubricCriterionRecord>,
    /// Each judge session, in order (a pairwise judge: `a_b` then `b_a`).
    pub sessions: Vec<JudgeSession>,
    /// The verdicts, one per criterion in the rubric's order; empty when `error` is set.
    pub verdicts: Vec<JudgeCriterionVerdict>,
    /// Why the judge gave no verdicts: its session did not complete, or its answer did not
    /// parse (the message names the criterion); never a pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl JudgeRecord {
    /// Read the sessions' costs again from `runs` (the test's runs, after the runner priced
    /// them).
    pub fn refresh(&mut self, runs: &[RunRecord]) {
        for session in &mut self.sessions {
            if let Some(run) = runs.get(session.run as usize - 1) {
                *session = JudgeSession::of(session.run, session.order.as_deref(), run);
            }
        }
    }

    /// Whether the judge's verdicts are new over recorded runs: some judge session of it ran
    /// live (recorded again, `cargo copilot-eval --record=judges`) while a run it judged
    /// replayed its cassette. `runs` are the test's runs.
    pub fn rejudged(&self, runs: &[RunRecord]) -> bool {
        let mode = |number: u64| {
            (number as usize)
                .checked_sub(1)
                .and_then(|i| runs.get(i))
                .map(|r| r.mode.as_str())
        };
        self.sessions.iter().any(|s| mode(s.run) == Some("live"))
            && self.judged_runs.iter().any(|&r| mode(r) == Some("replay"))
    }

    /// Whether every criterion's verdict is `pass` (a rubric judge without an error).
    pub fn all_passed(&self) -> bool {
        self.error.is_none()
            && self
                .verdicts
                .iter()
                .all(|v| v.verdict == JudgeVerdict::Pass)
    }

    /// The verdicts in one line: `clear: pass (score 4), names the risk: fail`, or the error;
    /// a sampled judge adds each criterion's agreement: `clear: pass (score 4, 2/3 samples
    /// agree)`.
    pub fn verdicts_line(&self) -> String {
        if let Some(error) = &self.error {
            return format!("error: {error}");
        }
        self.verdicts
            .iter()
            .map(|v| {
                let notes: Vec<String> = [
                    v.score.map(|score| format!("score {score}")),
                    v.agreement
                        .map(|a| format!("{} samples agree", a.fraction())),
                ]
                .into_iter()
                .flatten()
                .collect();
                match notes.is_empty() {
                    true => format!("{}: {}", v.criterion, v.verdict),
                    false => format!("{}: {} ({})", v.criterion, v.verdict, notes.join(", ")),
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The sessions' cost in one line: `1 session (run 2), 1 model call, 180 tokens, premium
    /// requests 0, estimated cost not priced`.
    pub fn cost_line(&self) -> String {
        let runs: Vec<String> = self.sessions.iter().map(|s| s.run.to_string()).collect();
        let n = self.sessions.len();
        let calls: u64 = self.sessions.iter().map(|s| s.model_calls).sum();
        let tokens: Option<u64> = self
            .sessions
            .iter()
            .map(|s| Some(s.input_tokens? + s.output_tokens?))
            .sum();
        let premium: Option<f64> = self.sessions.iter().map(|s| s.premium_requests).sum();
        let estimated: Option<f64> = self.sessions.iter().map(|s| s.estimated_cost).sum();
        format!(
            "{n} {} (run{} {}), {calls} model call{}, {}, premium requests {}, estimated cost {}",
            if n == 1 { "session" } else { "sessions" },
            if n == 1 { "" } else { "s" },
            runs.join(", "),
            if calls == 1 { "" } else { "s" },
            tokens.map_or_else(|| "tokens unknown".to_owned(), |t| format!("{t} tokens")),
            premium.map_or_else(|| "unknown".to_owned(), crate::cost::format_amount),
            estimated.map_or_else(|| "not priced".to_owned(), crate::cost::format_amount),
        )
    }

    /// The judge in one line, as the terminal summary prints it: `rubric judge of run 1 on
    /// claude-sonnet-4.5 (final response): clear: pass, names the risk: fail; 1 session (run
    /// 2), ...`.
    pub fn line(&self) -> String {
        let judged = match self.judged_runs.as_slice() {
            [] => String::new(),
            [one] => format!(" of run {one}"),
            many => format!(
                " of runs {}",
                many.iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
        };
        format!(
            "{} judge{judged} on {} ({}): {}; {}",
            self.kind.as_str(),
            self.model.as_deref().unwrap_or("the default model"),
            self.material,
            self.verdicts_line(),
            self.cost_line()
        )
    }
}

/// The JUnit properties of a test's judges, per judge `N` (from 1):
/// `copilot_eval.judge.N.summary` ([`JudgeRecord::line`]), `copilot_eval.judge.N.cost`
/// ([`JudgeRecord::cost_line`]), `copilot_eval.judge.N.error` (when the judge gave no
/// verdicts) and `copilot_eval.judge.N.criterion.<name>` = `verdict=pass score=4 reason=...`
/// (a pairwise judge: both orders' reasons, joined with ` | `; a sampled judge:
/// `verdict=pass agreement=2/3 reason=...`, each sample's reason).
pub fn junit_properties(judges: &[JudgeRecord]) -> Vec<(String, String)> {
    let mut properties = Vec::new();
    for (index, judge) in judges.iter().enumerate() {
        let prefix = format!("copilot_eval.judge.{}", index + 1);
        properties.push((format!("{prefix}.summary"), judge.line()));
        properties.push((format!("{prefix}.cost"), judge.cost_line()));
        if let Some(error) = &judge.error {
            properties.push((format!("{prefix}.error"), error.clone()));
        }
        for verdict in &judge.verdicts {
            let score = [
                verdict.score.map(|s| format!(" score={s}")),
                verdict
                    .agreement
                    .map(|a| format!(" agreement={}", a.fraction())),
            ]
            .into_iter()
            .flatten()
            .collect::<String>();
            properties.push((
                format!("{prefix}.criterion.{}", verdict.criterion),
                format!(
                    "verdict={}{score} reason={}",
                    verdict.verdict,
                    verdict.reasons.join(" | ")
                ),
            ));
        }
    }
    properties
}

/// One line per judge of the suite's tests, in test order: `  judge BINARY TEST: LINE` (see
/// [`JudgeRecord::line`]), ending with ` [new verdicts: judged again over replayed runs]` when
/// the judge was re-judged ([`JudgeRecord::rejudged`]); then, when some judge gave no verdict, `  judge errors: 1 of 4
/// judges gave no verdict (neither a pass nor a fail of the agent)`; empty when no test judged.
pub fn summary_lines(tests: &[super::TestRecord]) -> String {
    let mut out = String::new();
    let all = tests.iter().map(|t| t.judges.len()).sum::<usize>();
    let errors = (tests.iter().flat_map(|t| &t.judges))
        .filter(|j| j.error.is_some())
        .count();
    for test in tests {
        let trial = test
            .trial
            .map(|t| format!(" {}", t.label()))
            .unwrap_or_default();
        for judge in &test.judges {
            let new = match judge.rejudged(&test.runs) {
                true => " [new verdicts: judged again over replayed runs]",
                false => "",
            };
            out.push_str(&format!(
                "  judge {} {}{trial}: {}{new}\n",
                test.binary,
                test.name,
                judge.line()
            ));
        }
    }
    if errors > 0 {
        out.push_str(&format!(
            "  judge errors: {errors} of {all} {} gave no verdict (neither a pass nor a fail of the agent)\n",
            if all == 1 { "judge" } else { "judges" }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(error: Option<&str>) -> JudgeRecord {
        JudgeRecord {
            kind: JudgeKind::Rubric,
            material: "final response".into(),
            judged_runs: vec![1],
            model: Some("m".into()),
            tools: Vec::new(),
            samples: None,
            rubric: Vec::new(),
            sessions: vec![JudgeSession {
                run: 2,
                order: None,
                stop_reason: "completed".into(),
                answer: None,
                model_calls: 1,
                input_tokens: Some(100),
                output_tokens: Some(20),
                premium_requests: Some(0.0),
                estimated_cost: None,
                duration_ms: 5,
            }],
            verdicts: if error.is_some() {
                Vec::new()
            } else {
                vec![
                    JudgeCriterionVerdict {
                        criterion: "clear".into(),
                        verdict: JudgeVerdict::Pass,
                        score: Some(4),
                        reasons: vec!["short".into()],
                        agreement: None,
                    },
                    JudgeCriterionVerdict {
                        criterion: "risk".into(),
                        verdict: JudgeVerdict::Fail,
                        score: None,
                        reasons: vec!["none named".into()],
                        agreement: None,
                    },
                ]
            },
            error: error.map(str::to_owned),
        }
    }

    /// A judge session is a run of the test: the runner prices it, counts its premium requests
    /// in the test's cost and the suite's cap, and the judge's record reads the estimate back.
    #[test]
    fn a_judge_session_is_priced_and_counted_towards_the_cost_cap() {
        use crate::cost::{CostControl, CostOptions, PricingTable};
        use crate::report::tests::{run, test};
        use crate::result::StopReason;
        let mut eval_run = run(StopReason::Completed, 1000);
        eval_run.totals.premium_requests = Some(1.0);
        let mut judge_run = run(StopReason::Completed, 400);
        judge_run.label = Some(JUDGE.into());
        judge_run.totals.premium_requests = Some(1.0);
        judge_run.usage = vec![crate::evidence::Usage {
            model: Some("claude-sonnet-4.5".into()),
            input_tokens: 400,
            output_tokens: 5,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            cost: None,
            duration_ms: None,
            agent_id: None,
        }];
        let mut record = test(
            "e",
            "pkg::evals",
            crate::report::Outcome::Passed,
            vec![eval_run],
        );
        record.runs.push(judge_run.clone());
        let mut judge = self::record(None);
        judge.sessions = vec![JudgeSession::of(2, None, &judge_run)];
        assert_eq!(judge.sessions[0].estimated_cost, None);
        record.judges = vec![judge];
        let options = CostOptions {
            pricing: PricingTable::builtin(),
            max_cost: None,
            max_premium_requests: Some(2.0),
        };
        let mut control = CostControl::new(&options);
        control.charge(&mut record);
        assert_eq!(control.spent().premium_requests, Some(2.0));
        assert!(
            control.cap_reached().is_some(),
            "the judge's request reaches the cap"
        );
        let estimate = record.runs[1]
            .totals
            .estimated_cost
            .expect("the judge run is priced");
        assert!(estimate > 0.0);
        assert_eq!(record.judges[0].sessions[0].estimated_cost, Some(estimate));
    }

    #[test]
    fn the_line_names_verdicts_and_cost_and_an_error_is_never_a_pass() {
        let judged = record(None);
        assert_eq!(
            judged.line(),
            "rubric judge of run 1 on m (final response): clear: pass (score 4), risk: fail; 1 session (run 2), 1 model call, 120 tokens, premium requests 0, estimated cost not priced"
        );
        assert!(!judged.all_passed());
        let broken = record(Some("criterion `clear`: no answer"));
        assert!(
            broken
                .line()
                .contains("(final response): error: criterion `clear`: no answer;"),
            "{}",
            broken.line()
        );
        assert!(!broken.all_passed());
    }
}
