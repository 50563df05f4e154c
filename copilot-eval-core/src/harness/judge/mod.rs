//! Model-graded checks: [`EvalContext::judge`] asks a separate, real Copilot session to grade
//! a result against a [`Rubric`]; [`EvalContext::judge_pair`] asks it which of two results is
//! better, in both orders. A judge's verdict is a model's statement about the material, not a
//! check of what the agent really did: keep an independent check (a file's content, a tool
//! call) beside it.
//!
//! # The judge session
//!
//! Each judge session is one run of the test ([`EvalContext::run`]), labelled `judge` in the
//! artifacts: the test's eval settings ([`EvalContext::eval`]) with
//! - its own, fresh working directory `<workdir>/judge-N` (N counts the test's judge
//!   sessions from 1);
//! - no tools (`allowed_tools` empty) unless the rubric gives some ([`Rubric::tools`]);
//! - the model of [`Rubric::judge_model`], else the judged run's requested model, else the
//!   eval's;
//! - the prompt [`Rubric::prompt`] (its exact shape is documented there).
//!
//! Being a run, it is scripted by [`EvalContext::offline`] (the judge's answer is the script's
//! next reply, after the judged run's), replayed and recorded by the test's run numbering
//! (`<test>-2.yaml` for a judge after one run), counted in the test's cost, the suite's cost
//! caps and premium-request totals, and listed in the test's `runs` (label `judge`) and
//! `judges` ([`JudgeRecord`]).
//!
//! # The answer
//!
//! The judge must answer with one JSON object (a fenced json block around it is accepted):
//!
//! ```json
//! {"criteria": [{"name": "clear", "verdict": "pass", "score": 4, "reason": "Two short lines."}]}
//! ```
//!
//! one entry per criterion, by name: `verdict` is `pass` or `fail` (a pairwise judge: `1`, `2`
//! or `tie`, the answer it prefers), `score` an integer on the criterion's scale (required for
//! a scored criterion, else `null` or absent), `reason` a string. Anything else is a
//! [`JudgeError`] naming the criterion: never a pass.

use std::path::PathBuf;

use super::EvalContext;
use crate::eval::CopilotEval;
use crate::report::{
    JUDGE, JudgeCriterionVerdict, JudgeKind, JudgeRecord, JudgeSession, JudgeVerdict,
    RubricCriterionRecord,
};
use crate::result::CopilotResult;
use answer::{pair_verdict, parse};

mod answer;
mod samples;

/// What a judge reads: chosen explicitly for each rubric.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Material {
    /// The judged run's final response (an empty text when it gave none).
    FinalResponse,
    /// These files of the judged run's working directory, by their path relative to it (`/`
    /// separated), each with its content; a missing or unreadable file is a
    /// [`JudgeError::Material`].
    Files(Vec<String>),
    /// This text, whatever the run did (for `judge_pair`, not allowed: both sides would be the
    /// same).
    Text(String),
}

impl Material {
    /// How the artifacts name it: `final response`, `files: a.md, b.md`, `text`.
    pub fn describe(&self) -> String {
        match self {
            Material::FinalResponse => "final response".to_owned(),
            Material::Files(files) => format!("files: {}", files.join(", ")),
            Material::Text(_) => "text".to_owned(),
        }
    }

    /// The material of `result` as the prompt holds it.
    fn of(&self, result: &CopilotResult) -> Result<String, JudgeError> {
        match self {
            Material::FinalResponse => Ok(format!(
                "--- final response ---\n{}\n--- end ---",
                result.final_response.as_deref().unwrap_or_default()
            )),
            Material::Files(files) => {
                let mut out = Vec::new();
                for file in files {
                    let path = result.working_directory.join(file);
                    let text =
                        std::fs::read_to_string(&path).map_err(|e| JudgeError::Material {
                            detail: format!(
                                "cannot read the file {file} ({}): {e}",
                                path.display()
                            ),
                        })?;
                    out.push(format!("--- file {file} ---\n{text}\n--- end ---"));
                }
                Ok(out.join("\n"))
            }
            Material::Text(text) => Ok(format!("--- text ---\n{text}\n--- end ---")),
        }
    }
}

/// One criterion of a rubric.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Criterion {
    /// Its name: the key of its answer, and how the artifacts name it.
    pub name: String,
    /// What the judge is asked to check.
    pub text: String,
    /// The inclusive score range `(min, max)` of a scored criterion; `None`: pass or fail only.
    pub scale: Option<(i64, i64)>,
}

/// A list of named criteria, the material they are applied to, and the judge's model and
/// tools. Built with [`Rubric::new`] and its methods.
///
/// ```
/// use copilot_eval_core::harness::judge::{Material, Rubric};
/// let rubric = Rubric::new(Material::FinalResponse)
///     .criterion("names the version", "The text names the released version.")
///     .scored("clear", "The text is short and plain.", 1, 5);
/// assert!(rubric.prompt("--- text ---\nhi\n--- end ---").contains("2. clear (score 1 to 5)"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rubric {
    material: Material,
    criteria: Vec<Criterion>,
    judge_model: Option<String>,
    tools: Vec<String>,
    samples: u32,
}

impl Rubric {
    /// A rubric without criteria that judges `material`.
    pub fn new(material: Material) -> Self {
        Rubric {
            material,
            criteria: Vec::new(),
            judge_model: None,
            tools: Vec::new(),
            samples: 1,
        }
    }

    /// Add a pass/fail criterion `name`: the judge answers `pass` or `fail` on `text`.
    pub fn criterion(mut self, name: impl Into<String>, text: impl Into<String>) -> Self {
        self.criteria.push(Criterion {
            name: name.into(),
            text: text.into(),
            scale: None,
        });
        self
    }

    /// Add a scored criterion `name`: the judge gives an integer score from `min` to `max`
    /// (inclusive) and `pass` or `fail`.
    pub fn scored(
        mut self,
        name: impl Into<String>,
        text: impl Into<String>,
        min: i64,
        max: i64,
    ) -> Self {
        self.criteria.push(Criterion {
            name: name.into(),
            text: text.into(),
            scale: Some((min, max)),
        });
        self
    }

    /// Run the judge sessions on `model` (default: the judged run's requested model, else the
    /// eval's).
    pub fn judge_model(mut self, model: impl Into<String>) -> Self {
        self.judge_model = Some(model.into());
        self
    }

    /// Allow the judge sessions these tools (by name, as `allowed_tools` takes them; default:
    /// none).
    pub fn tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools = tools.into_iter().map(Into::into).collect();
        self
    }

    /// Judge the same material `n` times, one judge session per sample (default 1), to measure
    /// the judge: each criterion's verdict is the one more than half of the samples gave (the
    /// majority), recorded with its agreement (`2/3`: two of three samples gave it); a scored
    /// criterion's score is the median of the samples' scores. `n` must be odd, so that a
    /// pass/fail majority always exists: an even `n` (or 0) is a [`JudgeError::Rubric`]. Any
    /// sample's error (its answer does not parse, its session did not complete) is the judge's
    /// error: no verdict. Only for [`EvalContext::judge`]; [`EvalContext::judge_pair`] refuses
    /// `n` above 1.
    pub fn samples(mut self, n: u32) -> Self {
        self.samples = n;
        self
    }

    /// How many times the judge judges the material ([`Rubric::samples`]).
    pub fn sample_count(&self) -> u32 {
        self.samples
    }

    /// The material.
    pub fn material(&self) -> &Material {
        &self.material
    }

    /// The criteria, in order.
    pub fn criteria(&self) -> &[Criterion] {
        &self.criteria
    }

    /// The rubric's criteria as the artifacts list them.
    fn records(&self) -> Vec<RubricCriterionRecord> {
        self.criteria
            .iter()
            .map(|c| RubricCriterionRecord {
                name: c.name.clone(),
                text: c.text.clone(),
                scale: c.scale.map(|(min, max)| [min, max]),
            })
            .collect()
    }

    /// The numbered criteria lines of a prompt.
    fn criteria_lines(&self) -> String {
        self.criteria
            .iter()
            .enumerate()
            .map(|(i, c)| match c.scale {
                Some((min, max)) => {
                    format!("{}. {} (score {min} to {max}): {}", i + 1, c.name, c.text)
                }
                None => format!("{}. {} (pass or fail): {}", i + 1, c.name, c.text),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The prompt of a rubric judge session, around `material` (the material as
    /// [`Material`] writes it: each part between a `--- final response ---`, `--- file
    /// PATH ---` or `--- text ---` line and an `--- end ---` line). Exactly:
    ///
    /// ```text
    /// You are a judge. Grade the material below against each criterion of the rubric.
    /// Answer with one JSON object and nothing else, of this shape:
    /// {"criteria": [{"name": "NAME", "verdict": "pass" or "fail", "score": INTEGER or null, "reason": "WHY"}]}
    /// with one entry per criterion, named as in the rubric; give a score only for a criterion with a score range, within it.
    ///
    /// Rubric:
    /// 1. NAME (pass or fail): TEXT
    /// 2. NAME (score MIN to MAX): TEXT
    ///
    /// Material:
    /// MATERIAL
    /// ```
    pub fn prompt(&self, material: &str) -> String {
        format!(
            "You are a judge. Grade the material below against each criterion of the rubric.\n\
             Answer with one JSON object and nothing else, of this shape:\n\
             {{\"criteria\": [{{\"name\": \"NAME\", \"verdict\": \"pass\" or \"fail\", \"score\": INTEGER or null, \"reason\": \"WHY\"}}]}}\n\
             with one entry per criterion, named as in the rubric; give a score only for a criterion with a score range, within it.\n\
             \n\
             Rubric:\n{}\n\
             \n\
             Material:\n{material}",
            self.criteria_lines()
        )
    }

    /// The prompt of a pairwise judge session, around the two answers (each as [`Material`]
    /// writes it). Exactly:
    ///
    /// ```text
    /// You are a judge. Compare answer 1 and answer 2 below on each criterion of the rubric.
    /// Answer with one JSON object and nothing else, of this shape:
    /// {"criteria": [{"name": "NAME", "verdict": "1" or "2" or "tie", "reason": "WHY"}]}
    /// with one entry per criterion, named as in the rubric; the verdict is the answer that meets the criterion better.
    ///
    /// Rubric:
    /// 1. NAME (pass or fail): TEXT
    ///
    /// Answer 1:
    /// MATERIAL
    ///
    /// Answer 2:
    /// MATERIAL
    /// ```
    pub fn pair_prompt(&self, first: &str, second: &str) -> String {
        format!(
            "You are a judge. Compare answer 1 and answer 2 below on each criterion of the rubric.\n\
             Answer with one JSON object and nothing else, of this shape:\n\
             {{\"criteria\": [{{\"name\": \"NAME\", \"verdict\": \"1\" or \"2\" or \"tie\", \"reason\": \"WHY\"}}]}}\n\
             with one entry per criterion, named as in the rubric; the verdict is the answer that meets the criterion better.\n\
             \n\
             Rubric:\n{}\n\
             \n\
             Answer 1:\n{first}\n\
             \n\
             Answer 2:\n{second}",
            self.criteria_lines()
        )
    }
}

/// Why a judge gave no verdicts. Never a pass: [`EvalContext::judge`] returns it, and the
/// judge's record in the artifacts carries its text as `error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JudgeError {
    /// The rubric has no criterion, a name twice, a score range whose minimum is not below its
    /// maximum, an even number of [`Rubric::samples`], or `judge_pair` was given
    /// [`Material::Text`] or samples above 1.
    #[error("the rubric cannot be used: {0}")]
    Rubric(String),
    /// The material could not be read (a named file is missing).
    #[error("the judged material: {detail}")]
    Material {
        /// What could not be read, and why.
        detail: String,
    },
    /// A judge session did not complete (`run` is its number in the test's runs).
    #[error("the judge session (run {run}) ended with {stop_reason}: {error}")]
    Session {
        /// The session's run number, from 1.
        run: u64,
        /// Its stop reason.
        stop_reason: String,
        /// Its error, if any.
        error: String,
    },
    /// The judge's answer is not one JSON object holding a `criteria` list.
    #[error(
        "the judge's answer (run {run}) is not the JSON object asked for ({detail}); no criterion was judged, first criterion: `{criterion}`"
    )]
    NotJson {
        /// The session's run number, from 1.
        run: u64,
        /// The first criterion of the rubric (none was judged).
        criterion: String,
        /// What the parser said.
        detail: String,
    },
    /// The answer has no entry for a criterion.
    #[error("the judge's answer (run {run}) has no entry for criterion `{criterion}`")]
    MissingCriterion {
        /// The session's run number, from 1.
        run: u64,
        /// The criterion's name.
        criterion: String,
    },
    /// A criterion's entry is malformed: a verdict, score or reason missing or out of range.
    #[error("the judge's answer (run {run}) for criterion `{criterion}` is malformed: {detail}")]
    MalformedCriterion {
        /// The session's run number, from 1.
        run: u64,
        /// The criterion's name.
        criterion: String,
        /// What is wrong.
        detail: String,
    },
}

/// What [`EvalContext::judge`] or [`EvalContext::judge_pair`] returns: the verdicts, and the
/// judge's whole record (as the artifacts hold it).
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    /// The record (rubric, sessions, verdicts, cost) as the test's `judges` holds it.
    pub record: JudgeRecord,
}

impl Judgement {
    /// The verdict on criterion `name`; `None` when the rubric has none of that name.
    pub fn verdict(&self, name: &str) -> Option<JudgeVerdict> {
        self.record
            .verdicts
            .iter()
            .find(|v| v.criterion == name)
            .map(|v| v.verdict)
    }

    /// Whether the verdict on criterion `name` is `pass`.
    pub fn passed(&self, name: &str) -> bool {
        self.verdict(name) == Some(JudgeVerdict::Pass)
    }

    /// Whether every criterion's verdict is `pass`.
    pub fn all_passed(&self) -> bool {
        self.record.all_passed()
    }

    /// The judge in one line (verdicts and cost): handy in an assertion's message.
    pub fn summary(&self) -> String {
        self.record.line()
    }
}

impl EvalContext {
    /// Grade `result` against `rubric` with a judge: a separate real Copilot session (see the
    /// module documentation of [`judge`](super::judge): its working directory, tools, model,
    /// prompt and answer), recorded as a run labelled `judge` and in the test's `judges`.
    ///
    /// Returns the verdicts, or a [`JudgeError`] (recorded in the artifacts as the judge's
    /// `error`) when the material cannot be read, the session does not complete, or the answer
    /// does not parse: never a pass.
    ///
    /// ```no_run
    /// # async fn example(ctx: copilot_eval_core::harness::EvalContext) {
    /// use copilot_eval_core::harness::judge::{Material, Rubric};
    /// let eval = ctx.eval().build().unwrap();
    /// let result = ctx.run(&eval, "Write release notes for 2.4.1.").await;
    /// let rubric = Rubric::new(Material::FinalResponse)
    ///     .criterion("names the version", "The notes name version 2.4.1.");
    /// let judgement = ctx.judge(&result, &rubric).await.unwrap();
    /// assert!(judgement.all_passed(), "{}", judgement.summary());
    /// # }
    /// ```
    ///
    /// Panics: as [`run`](Self::run) (a setup error: no cassette in replay mode, ...).
    pub async fn judge(
        &self,
        result: &CopilotResult,
        rubric: &Rubric,
    ) -> Result<Judgement, JudgeError> {
        self.judge_boxed(result, rubric).await
    }

    /// [`judge`](Self::judge)'s work, boxed in this crate (docs/performance.md, "The edit
    /// loop": a test binary awaiting it then does not compile the judge's sessions again).
    fn judge_boxed<'a>(
        &'a self,
        result: &'a CopilotResult,
        rubric: &'a Rubric,
    ) -> futures::future::BoxFuture<'a, Result<Judgement, JudgeError>> {
        Box::pin(async move {
            let mut record = self.judge_record(JudgeKind::Rubric, rubric, &[result]);
            let outcome = self.judge_rubric(result, rubric, &mut record).await;
            self.finish_judge(record, outcome)
        })
    }

    /// Ask a judge which of `a` and `b` meets each criterion of `rubric` better: two separate
    /// judge sessions, one given `a` as answer 1 and `b` as answer 2 (order `a_b`), the other
    /// the swap (order `b_a`) (see [`Rubric::pair_prompt`]). A criterion's verdict is `a`, `b`
    /// or `tie` when both orders agree, else `inconsistent`: a judge that prefers whatever
    /// comes first reports no preference.
    ///
    /// Errors: as [`judge`](Self::judge); also [`JudgeError::Rubric`] for
    /// [`Material::Text`] (both answers would be the same text).
    pub async fn judge_pair(
        &self,
        a: &CopilotResult,
        b: &CopilotResult,
        rubric: &Rubric,
    ) -> Result<Judgement, JudgeError> {
        self.judge_pair_boxed(a, b, rubric).await
    }

    /// [`judge_pair`](Self::judge_pair)'s work, boxed in this crate (as
    /// [`judge`](Self::judge)).
    fn judge_pair_boxed<'a>(
        &'a self,
        a: &'a CopilotResult,
        b: &'a CopilotResult,
        rubric: &'a Rubric,
    ) -> futures::future::BoxFuture<'a, Result<Judgement, JudgeError>> {
        Box::pin(async move {
            let mut record = self.judge_record(JudgeKind::Pairwise, rubric, &[a, b]);
            let outcome = self.judge_pairwise(a, b, rubric, &mut record).await;
            self.finish_judge(record, outcome)
        })
    }

    /// The record of a judge before its sessions.
    fn judge_record(
        &self,
        kind: JudgeKind,
        rubric: &Rubric,
        judged: &[&CopilotResult],
    ) -> JudgeRecord {
        let judged_runs = if matches!(rubric.material, Material::Text(_)) {
            Vec::new()
        } else {
            judged
                .iter()
                .filter_map(|r| r.origin.as_ref())
                .filter(|o| o.test == self.test_name())
                .map(|o| o.run as u64)
                .collect()
        };
        JudgeRecord {
            kind,
            material: rubric.material.describe(),
            judged_runs,
            model: rubric.judge_model.clone().or_else(|| {
                judged
                    .first()
                    .and_then(|r| r.model_requested.clone())
                    .or_else(|| self.model())
            }),
            tools: rubric.tools.clone(),
            samples: (rubric.samples != 1).then_some(rubric.samples),
            rubric: rubric.records(),
            sessions: Vec::new(),
            verdicts: Vec::new(),
            error: None,
        }
    }

    /// Record `record` in the evidence, with `outcome`'s verdicts or error.
    fn finish_judge(
        &self,
        mut record: JudgeRecord,
        outcome: Result<Vec<JudgeCriterionVerdict>, JudgeError>,
    ) -> Result<Judgement, JudgeError> {
        match &outcome {
            Ok(verdicts) => record.verdicts = verdicts.clone(),
            Err(e) => record.error = Some(e.to_string()),
        }
        let stored = record.clone();
        self.update_evidence(|evidence| evidence.judges.push(stored));
        outcome.map(|_| Judgement { record })
    }

    async fn judge_rubric(
        &self,
        result: &CopilotResult,
        rubric: &Rubric,
        record: &mut JudgeRecord,
    ) -> Result<Vec<JudgeCriterionVerdict>, JudgeError> {
        check(rubric)?;
        let material = rubric.material.of(result)?;
        let mut answers = Vec::new();
        for _ in 0..rubric.samples {
            let (run, answer) = self
                .judge_session(rubric, record, None, rubric.prompt(&material))
                .await?;
            answers.push(parse(
                rubric,
                run,
                answer.as_deref(),
                &["pass", "fail"],
                true,
            )?);
        }
        Ok(samples::verdicts(rubric, answers))
    }

    async fn judge_pairwise(
        &self,
        a: &CopilotResult,
        b: &CopilotResult,
        rubric: &Rubric,
        record: &mut JudgeRecord,
    ) -> Result<Vec<JudgeCriterionVerdict>, JudgeError> {
        check(rubric)?;
        if rubric.samples != 1 {
            return Err(JudgeError::Rubric(format!(
                "samples({}) is for ctx.judge: a pairwise judge already judges twice, once per order; leave Rubric::samples out for ctx.judge_pair",
                rubric.samples
            )));
        }
        if matches!(rubric.material, Material::Text(_)) {
            return Err(JudgeError::Rubric(
                "ctx.judge_pair compares two results' material: use Material::FinalResponse or Material::Files, not Material::Text".into(),
            ));
        }
        let (first, second) = (rubric.material.of(a)?, rubric.material.of(b)?);
        let words = ["1", "2", "tie"];
        let (run, answer) = self
            .judge_session(
                rubric,
                record,
                Some("a_b"),
                rubric.pair_prompt(&first, &second),
            )
            .await?;
        let a_b = parse(rubric, run, answer.as_deref(), &words, false)?;
        let (run, answer) = self
            .judge_session(
                rubric,
                record,
                Some("b_a"),
                rubric.pair_prompt(&second, &first),
            )
            .await?;
        let b_a = parse(rubric, run, answer.as_deref(), &words, false)?;
        Ok(rubric
            .criteria
            .iter()
            .zip(a_b.into_iter().zip(b_a))
            .map(|(c, (x, y))| JudgeCriterionVerdict {
                criterion: c.name.clone(),
                verdict: pair_verdict(&x.verdict, &y.verdict),
                score: None,
                reasons: vec![x.reason, y.reason],
                agreement: None,
            })
            .collect())
    }

    /// Run one judge session on `prompt`, label its run `judge` and add it to `record`.
    /// Returns its run number and its final response.
    async fn judge_session(
        &self,
        rubric: &Rubric,
        record: &mut JudgeRecord,
        order: Option<&str>,
        prompt: String,
    ) -> Result<(u64, Option<String>), JudgeError> {
        let number = self
            .evidence()
            .judges
            .iter()
            .map(|j| j.sessions.len())
            .sum::<usize>()
            + record.sessions.len()
            + 1;
        let dir: PathBuf = self.workdir().join(format!("judge-{number}"));
        if let Err(e) = std::fs::create_dir_all(&dir) {
            self.setup_failure(format!(
                "cannot create the judge's working directory {}: {e}",
                dir.display()
            ));
        }
        let base = self.eval().build().map(|e| e.name().to_owned());
        let mut builder = self
            .eval()
            .working_directory(&dir)
            .allowed_tools(rubric.tools.clone());
        if let Ok(name) = base {
            builder = builder.name(format!("{name}.judge"));
        }
        if let Some(model) = &record.model {
            builder = builder.model(model.clone());
        }
        let eval: CopilotEval = builder.build().unwrap_or_else(|e| {
            self.setup_failure(format!("the judge's eval does not build: {e}"))
        });
        let result = self.run_judge_session(&eval, prompt).await;
        let (run, session) = self.update_evidence(|evidence| {
            let index = evidence.runs.len() - 1;
            evidence.runs[index].label = Some(JUDGE.to_owned());
            (
                index as u64 + 1,
                JudgeSession::of(index as u64 + 1, order, &evidence.runs[index]),
            )
        });
        record.sessions.push(session);
        if !result.success {
            return Err(JudgeError::Session {
                run,
                stop_reason: result.stop_reason.to_string(),
                error: result.error.clone().unwrap_or_default(),
            });
        }
        Ok((run, result.final_response.clone()))
    }
}

/// A rubric must have a criterion, names must be unique (answers are matched by name), and
/// its samples an odd number (a majority always exists).
fn check(rubric: &Rubric) -> Result<(), JudgeError> {
    if rubric.samples.is_multiple_of(2) {
        return Err(JudgeError::Rubric(format!(
            "samples({}) is not odd: the verdict is the majority of the samples, and an even number can tie; give 1, 3, 5, ...",
            rubric.samples
        )));
    }
    if rubric.criteria.is_empty() {
        return Err(JudgeError::Rubric(
            "it has no criterion; add one with Rubric::criterion or Rubric::scored".into(),
        ));
    }
    for (i, c) in rubric.criteria.iter().enumerate() {
        if rubric.criteria[..i].iter().any(|d| d.name == c.name) {
            return Err(JudgeError::Rubric(format!(
                "criterion `{}` is named twice; give each criterion its own name",
                c.name
            )));
        }
        if let Some((min, max)) = c.scale
            && min >= max
        {
            return Err(JudgeError::Rubric(format!(
                "criterion `{}` has the score range {min} to {max}; the minimum must be below the maximum",
                c.name
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
