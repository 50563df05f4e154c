//! Skill evals from the skill's own `evals/evals.json` (`#[copilot_eval(skill_evals = "..")]`):
//! the entry a generated test runs ([`SkillCaseSpec`], [`SkillCase`]), its input files copied
//! into the working directory, and the expectations the test checks ([`EvalContext::expect`]).

use std::path::{Path, PathBuf};

use super::EvalContext;
use crate::report::{CheckKind, ExpectationRecord};

/// One entry of a skill's `evals/evals.json`, as the attribute writes it into its test (all
/// texts as the file gives them). See
/// [`evals_file`](crate::customization::skill::evals_file) for the format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkillCaseSpec {
    /// The skill folder, relative to the package root (the attribute's `skill_evals` value).
    pub skill: &'static str,
    /// The entry's `id` (an integer written as text, or the string given).
    pub id: &'static str,
    /// `prompt`: the task the session gets.
    pub prompt: &'static str,
    /// `expected_output`: a description of the expected result, when given.
    pub expected_output: Option<&'static str>,
    /// `files`: input files, relative to the skill folder.
    pub files: &'static [&'static str],
    /// `expectations`: the statements the test checks with [`EvalContext::expect`].
    pub expectations: &'static [&'static str],
}

/// The entry a `skill_evals` test runs, handed to the test function as its second parameter
/// (`async fn release_notes(ctx: EvalContext, case: SkillCase)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillCase {
    /// The skill folder (absolute: the package root joined with the attribute's value).
    pub skill_dir: PathBuf,
    /// The entry's `id`.
    pub id: String,
    /// `prompt`: the task; pass it to `ctx.run`.
    pub prompt: String,
    /// `expected_output`, when given.
    pub expected_output: Option<String>,
    /// `files` as copied into the test's working directory: each at the same relative path
    /// there as in the skill folder (`evals/files/CHANGES.txt` ->
    /// `<workdir>/evals/files/CHANGES.txt`), in the file's order.
    pub files: Vec<PathBuf>,
    /// `expectations`, in order: each must be checked with [`EvalContext::expect`] (an
    /// unchecked one fails the test).
    pub expectations: Vec<String>,
}

impl EvalContext {
    /// The skill eval entry this test runs (`skill_evals = ".."` under the attribute); `None`
    /// for other tests.
    pub fn skill_case(&self) -> Option<SkillCase> {
        let spec = self.test_config().skill_case_spec()?;
        Some(SkillCase {
            skill_dir: self.package_path(spec.skill),
            id: spec.id.to_owned(),
            prompt: spec.prompt.to_owned(),
            expected_output: spec.expected_output.map(str::to_owned),
            files: spec.files.iter().map(|f| self.workdir().join(f)).collect(),
            expectations: spec.expectations.iter().map(|e| (*e).to_owned()).collect(),
        })
    }

    /// Record the verdict of one expectation, decided by the test's own check of the real
    /// output (the tool never grades by itself): `text` (for a skill eval, one of its
    /// `expectations` as written), whether it `passed`, and the `evidence` the verdict rests on
    /// (what the check saw, e.g. a file's first line). Returns `passed`.
    ///
    /// The verdicts go to the JSON (`expectations` of the test), the JUnit properties, the HTML
    /// report and `--grading DIR`'s `grading.json`. The test fails, after its body, when any
    /// expectation failed or, for a skill eval, when one of the entry's `expectations` was
    /// never recorded. Recording the same `text` again adds another verdict beside the first:
    /// each is kept in the order recorded and a failure stays (a later pass of the same text
    /// does not undo it; the test fails).
    pub fn expect(
        &self,
        text: impl Into<String>,
        passed: bool,
        evidence: impl Into<String>,
    ) -> bool {
        let record = ExpectationRecord {
            text: text.into(),
            passed,
            evidence: evidence.into(),
            kind: CheckKind::Expectation,
        };
        self.update_evidence(|e| e.expectations.push(record));
        passed
    }

    /// The failure of a test whose body passed although an expectation failed or a skill
    /// eval's expectation was not checked; `None` otherwise.
    pub(crate) fn expectations_failure(&self) -> Option<String> {
        let recorded = self.evidence().expectations;
        let mut lines: Vec<String> = recorded
            .iter()
            .filter(|x| !x.passed)
            .map(|x| match x.kind {
                CheckKind::Control => format!("control failed: {}", x.evidence),
                CheckKind::Trajectory => {
                    format!("trajectory check failed: {} ({})", x.text, x.evidence)
                }
                CheckKind::Expectation => {
                    format!("expectation failed: {} (evidence: {})", x.text, x.evidence)
                }
            })
            .collect();
        if let Some(spec) = self.test_config().skill_case_spec() {
            let strays = stray_expectations(&recorded, spec.expectations);
            for wanted in spec.expectations {
                if !recorded.iter().any(|x| x.text == *wanted) {
                    let fix = match crate::suggest::nearest(wanted, strays.iter().copied()) {
                        Some(near) => format!(
                            "ctx.expect was given {near:?}, which evals.json does not hold: give the expectation's text as evals.json writes it"
                        ),
                        None => format!(
                            "record its verdict with ctx.expect({wanted:?}, passed, evidence)"
                        ),
                    };
                    lines.push(format!("expectation not checked: {wanted} ({fix})"));
                }
            }
        }
        (!lines.is_empty()).then(|| lines.join("\n"))
    }

    /// For a skill eval: the warning naming the `ctx.expect` texts its evals.json does not hold
    /// ([`stray_warning`]); `None` for other tests and when every text is the file's.
    pub(crate) fn stray_expectations_warning(&self) -> Option<String> {
        let spec = self.test_config().skill_case_spec()?;
        stray_warning(&self.evidence().expectations, spec.expectations)
    }
}

/// The record of the skill eval entry `config` runs (`skill_evals = ".."`), its skill's name
/// read from its SKILL.md (`None` when it does not load); `None` for other tests.
pub(super) fn skill_eval_record(
    config: &super::TestConfig,
) -> Option<crate::report::SkillEvalRecord> {
    let spec = config.skill_case_spec()?;
    let skill = Path::new(config.manifest_dir).join(spec.skill);
    Some(crate::report::SkillEvalRecord {
        name: (crate::customization::skill::Skill::load(skill).ok()).map(|skill| skill.name),
        skill: spec.skill.to_owned(),
        id: spec.id.to_owned(),
        prompt: spec.prompt.to_owned(),
        expected_output: spec.expected_output.map(str::to_owned),
    })
}

/// The texts given to `ctx.expect` that are none of the skill eval's `expectations` (a near
/// miss of one is named in the failure; the others are flagged by [`stray_warning`]).
fn stray_expectations<'a>(recorded: &'a [ExpectationRecord], wanted: &[&str]) -> Vec<&'a str> {
    recorded
        .iter()
        .filter(|x| x.kind == CheckKind::Expectation && !wanted.contains(&x.text.as_str()))
        .map(|x| x.text.as_str())
        .collect()
}

/// The warning for a skill eval whose test gave `ctx.expect` texts its evals.json does not
/// hold (recorded, but grading.json matches expectations by text); `None` when there are none.
pub(crate) fn stray_warning(recorded: &[ExpectationRecord], wanted: &[&str]) -> Option<String> {
    let strays = stray_expectations(recorded, wanted);
    (!strays.is_empty()).then(|| {
        format!(
            "ctx.expect was given text that is not among this skill eval's expectations in evals.json: {}",
            strays
                .iter()
                .map(|t| format!("{t:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// Copy a skill eval's `files` from the skill folder under `package_root` into `workdir`, each at
/// its relative path. Errors name the file and the entry.
pub(crate) fn copy_files(
    spec: &SkillCaseSpec,
    package_root: &Path,
    workdir: &Path,
) -> Result<(), String> {
    let skill = package_root.join(spec.skill);
    for file in spec.files {
        let from = skill.join(file);
        let to = workdir.join(file);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::copy(&from, &to).map_err(|e| {
            format!(
                "cannot copy the input file {} of the skill eval {} (id {}) into the working directory: {e}",
                from.display(),
                spec.skill,
                spec.id
            )
        })?;
    }
    Ok(())
}
