//! Comparing two configurations on one task: [`EvalContext::compare`] runs a baseline and a
//! treatment eval on the same prompt, each in its own working directory, and returns a
//! [`Comparison`]: both results, what differs ([`ComparisonDifferences`]), and
//! [`Comparison::check`], which applies ONE criterion to both sides and records its verdicts.
//!
//! # Same criteria
//!
//! A criterion is a closure over a [`CopilotResult`] given once to [`Comparison::check`]; the
//! comparison applies that same closure to the baseline and to the treatment, records both
//! verdicts in the artifacts, and hands them back as a [`Verdict`] for the test to assert on
//! (`assert!(verdict.improved())`). A test cannot apply one check to one side and another check
//! to the other by accident, and a reader of the artifacts sees what each side met. Criteria
//! that read files use `result.working_directory` (each side's own directory).
//!
//! # Isolation
//!
//! The two evals must not share a working directory (nor may one's be inside the other's):
//! [`Side::workdir`] gives each side a fresh folder inside the test's working directory
//! (`<workdir>/baseline`, `<workdir>/treatment`) where the test puts the side's setup files
//! before building its eval. An eval without a working directory gets a fresh temporary one per
//! run, which is isolated as well.
//!
//! # One side reading the other's inputs
//!
//! Separate working directories do not stop a session from reading outside its own: a baseline
//! whose agent `view`s the treatment's `SKILL.md` gets the skill anyway, and the comparison then
//! shows no difference for the wrong reason. After both runs, every tool call of each side (main
//! agent and subagents) is read for a path at or under the other side's inputs: its
//! `skill_directories`, its agent files (`custom_agent_file`, a repository's agents) and its
//! instructions files (a repository's), when they are not this side's inputs too. A path counts
//! when an argument names it (absolute, or relative to the side's working directory; a `bash`
//! command's words one by one) or a tool's result holds it absolute. Each such call is a
//! warning in the comparison's `warnings` (and its summary line), printed on stderr too.
//!
//! # Cassettes
//!
//! The sides are two runs of the test, run one after the other (baseline first): in replay and
//! record mode each replays or records its own cassette by the run numbering of
//! [`TestConfig::cassette_path_for_run`](super::TestConfig::cassette_path_for_run). For a test
//! whose first runs are a comparison that is `<test>.yaml` for the baseline and
//! `<test>-2.yaml` for the treatment.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use super::EvalContext;
use crate::eval::CopilotEval;
use crate::report::{
    BASELINE, ComparisonDifferences, ComparisonRecord, ComparisonSide, CriterionRecord, TREATMENT,
};
use crate::result::CopilotResult;

/// At most this many files of a working directory are looked at for `files_written`.
const MAX_FILES: usize = 20_000;

/// A side of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The configuration compared against (e.g. without the skill).
    Baseline,
    /// The configuration under test (e.g. with the skill).
    Treatment,
}

impl Side {
    /// `baseline` or `treatment`: the run's `label` in the artifacts.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Baseline => BASELINE,
            Side::Treatment => TREATMENT,
        }
    }

    /// This side's own working directory, `<ctx.workdir()>/baseline` or `.../treatment`,
    /// created when missing: put the side's setup files there and give it to the side's eval
    /// (`ctx.eval().working_directory(&dir)`).
    ///
    /// Panics (recorded as a setup error): the folder cannot be created.
    pub fn workdir(self, ctx: &EvalContext) -> PathBuf {
        let dir = ctx.workdir().join(self.as_str());
        if let Err(e) = std::fs::create_dir_all(&dir) {
            ctx.setup_failure(format!(
                "cannot create the {} working directory {}: {e}",
                self.as_str(),
                dir.display()
            ));
        }
        dir
    }
}

/// The verdicts of one criterion on both sides ([`Comparison::check`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The criterion's name.
    pub name: String,
    /// Whether the baseline met it.
    pub baseline: bool,
    /// Whether the treatment met it.
    pub treatment: bool,
}

impl Verdict {
    /// The treatment meets the criterion and the baseline does not.
    pub fn improved(&self) -> bool {
        self.treatment && !self.baseline
    }
    /// The baseline meets the criterion and the treatment does not.
    pub fn regressed(&self) -> bool {
        self.baseline && !self.treatment
    }
    /// Both sides meet it.
    pub fn both(&self) -> bool {
        self.baseline && self.treatment
    }
}

/// What [`EvalContext::compare`] returns: both results, their differences, and
/// [`check`](Self::check) for criteria applied to both. The artifacts hold the same data (the
/// test's `comparisons`, and each side's run labelled `baseline` / `treatment`).
pub struct Comparison {
    /// The baseline's result.
    pub baseline: CopilotResult,
    /// The treatment's result.
    pub treatment: CopilotResult,
    record: Mutex<ComparisonRecord>,
    index: usize,
    ctx: EvalContext,
}

impl std::fmt::Debug for Comparison {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Comparison")
            .field("record", &self.record())
            .finish_non_exhaustive()
    }
}

impl Comparison {
    /// The comparison as the artifacts hold it (both sides, differences, criteria so far,
    /// summary). Estimated costs are `None` here: the runner prices the runs afterwards.
    pub fn record(&self) -> ComparisonRecord {
        self.record.lock().expect("comparison lock").clone()
    }

    /// Treatment minus baseline: outcome, tool calls, tools, files written, model calls, tokens,
    /// costs, duration.
    pub fn differences(&self) -> ComparisonDifferences {
        self.record().differences
    }

    /// What the baseline did (run number, outcome, tools, files written, tokens, ...).
    pub fn baseline_side(&self) -> ComparisonSide {
        self.record().baseline
    }

    /// What the treatment did.
    pub fn treatment_side(&self) -> ComparisonSide {
        self.record().treatment
    }

    /// What makes the comparison doubtful (a side's session read the other side's inputs; see
    /// the module documentation), one line each; empty when nothing was seen.
    pub fn warnings(&self) -> Vec<String> {
        self.record().warnings
    }

    /// The comparison in one line (both sides, then the criteria's verdicts, then the
    /// warnings): handy in an assertion's message.
    pub fn summary(&self) -> String {
        self.record().summary
    }

    /// Apply `criterion` to the baseline's result, then to the treatment's, record both verdicts
    /// under `name` in the artifacts, and return them. This is how a test keeps its criteria
    /// the same for both sides (see the module documentation).
    ///
    /// ```no_run
    /// # async fn example(ctx: copilot_eval_core::harness::EvalContext,
    /// #     baseline: copilot_eval_core::CopilotEval, treatment: copilot_eval_core::CopilotEval) {
    /// let comparison = ctx.compare(&baseline, &treatment, "Announce version 2.4.1.").await;
    /// let tagged = comparison.check("starts with the house tag line", |result| {
    ///     result.final_response.as_deref().unwrap_or_default().starts_with("SHIPPED-WITH-CARE")
    /// });
    /// assert!(tagged.improved(), "{}", comparison.summary());
    /// # }
    /// ```
    pub fn check(
        &self,
        name: impl Into<String>,
        criterion: impl Fn(&CopilotResult) -> bool,
    ) -> Verdict {
        let verdict = Verdict {
            name: name.into(),
            baseline: criterion(&self.baseline),
            treatment: criterion(&self.treatment),
        };
        let criterion = CriterionRecord {
            name: verdict.name.clone(),
            baseline: verdict.baseline,
            treatment: verdict.treatment,
        };
        let record = {
            let mut record = self.record.lock().expect("comparison lock");
            record.add_criterion(criterion);
            record.clone()
        };
        let index = self.index;
        self.ctx.update_evidence(|evidence| {
            if let Some(stored) = evidence.comparisons.get_mut(index) {
                *stored = record;
            }
        });
        verdict
    }
}

impl EvalContext {
    /// Run `baseline` and then `treatment` on the same `prompt`, each in its own working
    /// directory (see [`Side::workdir`]), and compare them: each side is one run of the test,
    /// recorded like [`run`](Self::run) and labelled `baseline` / `treatment`; the comparison
    /// (both sides, their differences, the files each wrote) goes to the artifacts' test
    /// `comparisons`. Apply criteria with [`Comparison::check`].
    ///
    /// Where model requests go is as for [`run`](Self::run): a script given to
    /// [`offline`](Self::offline) serves both sides in turn (the baseline's replies first);
    /// in replay and record mode each side has its own cassette (the module documentation of
    /// [`compare`](super::compare) names them).
    ///
    /// Panics (recorded as a setup error): the two evals share a working directory, or one's is
    /// inside the other's (the message says how to give each its own); otherwise as
    /// [`run`](Self::run).
    pub async fn compare(
        &self,
        baseline: &CopilotEval,
        treatment: &CopilotEval,
        prompt: impl Into<String>,
    ) -> Comparison {
        self.compare_boxed(baseline, treatment, prompt.into()).await
    }

    /// [`compare`](Self::compare)'s work, boxed in this crate (docs/performance.md, "The edit
    /// loop": a test binary awaiting it then does not compile both sides' runs again).
    fn compare_boxed<'a>(
        &'a self,
        baseline: &'a CopilotEval,
        treatment: &'a CopilotEval,
        prompt: String,
    ) -> futures::future::BoxFuture<'a, Comparison> {
        Box::pin(self.compare_unboxed(baseline, treatment, prompt))
    }

    async fn compare_unboxed(
        &self,
        baseline: &CopilotEval,
        treatment: &CopilotEval,
        prompt: String,
    ) -> Comparison {
        if let (Some(b), Some(t)) = (baseline.working_directory(), treatment.working_directory())
            && (b.starts_with(t) || t.starts_with(b))
        {
            let how = if b == t {
                format!("share the working directory {}", b.display())
            } else {
                format!(
                    "overlap: the baseline works in {} and the treatment in {}",
                    b.display(),
                    t.display()
                )
            };
            self.setup_failure(format!(
                "ctx.compare: the baseline and the treatment {how}; give each its own folder: `let dir = Side::Baseline.workdir(&ctx);` (and `Side::Treatment`), then `ctx.eval().working_directory(&dir)`"
            ));
        }
        let (baseline_result, baseline_run, baseline_files) =
            self.compare_side(Side::Baseline, baseline, &prompt).await;
        let (treatment_result, treatment_run, treatment_files) =
            self.compare_side(Side::Treatment, treatment, &prompt).await;
        let runs = self.evidence().runs;
        let mut warnings = cross_reads(
            Side::Baseline,
            &baseline_result,
            &inputs(baseline),
            &inputs(treatment),
        );
        warnings.extend(cross_reads(
            Side::Treatment,
            &treatment_result,
            &inputs(treatment),
            &inputs(baseline),
        ));
        for warning in &warnings {
            eprintln!("copilot-eval: warning: ctx.compare: {warning}");
        }
        let mut record = ComparisonRecord::new(
            &prompt,
            (baseline_run as u64 + 1, &runs[baseline_run], baseline_files),
            (
                treatment_run as u64 + 1,
                &runs[treatment_run],
                treatment_files,
            ),
        );
        record.add_warnings(warnings);
        let index = self.update_evidence(|evidence| {
            evidence.comparisons.push(record.clone());
            evidence.comparisons.len() - 1
        });
        Comparison {
            baseline: baseline_result,
            treatment: treatment_result,
            record: Mutex::new(record),
            index,
            ctx: self.clone(),
        }
    }

    /// One side: run it, label its run record, and list the files it wrote. Returns the
    /// result, the run's index in the evidence, and the files.
    async fn compare_side(
        &self,
        side: Side,
        eval: &CopilotEval,
        prompt: &str,
    ) -> (CopilotResult, usize, Vec<String>) {
        let before = eval.working_directory().map(snapshot).unwrap_or_default();
        let result = self.run(eval, prompt).await;
        let after = snapshot(&result.working_directory);
        let index = self.update_evidence(|evidence| {
            let index = evidence.runs.len() - 1;
            evidence.runs[index].label = Some(side.as_str().to_owned());
            index
        });
        (result, index, written(&before, &after))
    }
}

/// One input of a side: a path on disk its configuration comes from, and what it is.
struct Input {
    /// As the eval names it (absolute).
    path: PathBuf,
    /// Symbolic links resolved (the path itself when it cannot be resolved).
    canonical: PathBuf,
    /// `skill directory`, `agent or instructions file`.
    what: &'static str,
}

/// The inputs of `eval` on disk: its skill directories, agent files and instructions files.
fn inputs(eval: &CopilotEval) -> Vec<Input> {
    let input = |path: &PathBuf, what| Input {
        canonical: path.canonicalize().unwrap_or_else(|_| path.clone()),
        path: path.clone(),
        what,
    };
    eval.skill_directories
        .iter()
        .map(|dir| input(dir, "skill directory"))
        .chain(
            eval.input_files
                .iter()
                .map(|file| input(file, "agent or instructions file")),
        )
        .collect()
}

/// The warnings for `side`'s tool calls that read a path of `others` (the other side's
/// inputs) that is not one of `own`: one line per call, naming the call, its run and the path.
fn cross_reads(side: Side, result: &CopilotResult, own: &[Input], others: &[Input]) -> Vec<String> {
    let foreign: Vec<&Input> = others
        .iter()
        .filter(|o| !own.iter().any(|i| i.canonical == o.canonical))
        .collect();
    if foreign.is_empty() {
        return Vec::new();
    }
    let other = match side {
        Side::Baseline => Side::Treatment,
        Side::Treatment => Side::Baseline,
    };
    let run = result
        .origin
        .as_ref()
        .map(|o| format!(" (run {})", o.run))
        .unwrap_or_default();
    let mut warnings = Vec::new();
    for call in &result.tool_calls {
        let mut words = Vec::new();
        strings(&call.arguments, &mut words);
        let named = words
            .iter()
            .flat_map(|text| path_words(text))
            .find_map(|word| {
                let path = normalize(&result.working_directory.join(word));
                let canonical = path.canonicalize().unwrap_or_else(|_| path.clone());
                foreign
                    .iter()
                    .find(|i| path.starts_with(&i.path) || canonical.starts_with(&i.canonical))
                    .map(|input| (path, *input))
            })
            .or_else(|| {
                let result = call.result.as_deref()?;
                foreign.iter().find_map(|i| {
                    [&i.path, &i.canonical]
                        .into_iter()
                        .find(|p| result.contains(&*p.to_string_lossy()))
                        .map(|p| (p.clone(), *i))
                })
            });
        if let Some((path, input)) = named {
            warnings.push(format!(
                "the {side}'s session{run} read the {other}'s inputs: its `{tool}` call named {path}, under the {other}'s {what} {input}; the comparison does not isolate the {other}'s configuration",
                side = side.as_str(),
                other = other.as_str(),
                tool = call.name,
                path = path.display(),
                what = input.what,
                input = input.path.display(),
            ));
        }
    }
    warnings
}

/// Every string of `value`, recursively.
fn strings<'a>(value: &'a serde_json::Value, out: &mut Vec<&'a str>) {
    match value {
        serde_json::Value::String(s) => out.push(s),
        serde_json::Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// The words of `text` that may be paths: the whole text, and its words split at white space,
/// quotes and shell punctuation, each up to a glob character (`*`, `?`, `[`, `{`).
fn path_words(text: &str) -> Vec<&str> {
    let separator = |c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '"' | '\'' | '`' | '=' | ';' | '|' | '&' | '(' | ')' | '<' | '>' | ','
            )
    };
    std::iter::once(text.trim())
        .chain(text.split(separator))
        .map(|word| word.split(['*', '?', '[', '{']).next().unwrap_or(""))
        .filter(|word| !word.is_empty() && !word.contains('\n'))
        .collect()
}

/// `path` with its `.` and `..` components resolved lexically.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Each regular file under `dir` (recursively, symbolic links not followed), by its path
/// relative to `dir` (`/`-separated), with the SHA-256 of its content. Unreadable entries are
/// left out; at most [`MAX_FILES`] files.
fn snapshot(dir: &Path) -> BTreeMap<String, [u8; 32]> {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_file() && files.len() < MAX_FILES {
                let Ok(content) = std::fs::read(&path) else {
                    continue;
                };
                let Ok(relative) = path.strip_prefix(dir) else {
                    continue;
                };
                let name = relative
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                files.insert(name, Sha256::digest(&content).into());
            }
        }
    }
    files
}

/// The files of `after` that are new or whose content differs from `before`, sorted.
fn written(before: &BTreeMap<String, [u8; 32]>, after: &BTreeMap<String, [u8; 32]>) -> Vec<String> {
    after
        .iter()
        .filter(|(name, hash)| before.get(*name) != Some(hash))
        .map(|(name, _)| name.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_written_are_the_new_and_the_changed_ones() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".skills/notes")).unwrap();
        std::fs::write(dir.path().join(".skills/notes/SKILL.md"), "kept").unwrap();
        std::fs::write(dir.path().join("changed.txt"), "before").unwrap();
        let before = snapshot(dir.path());
        std::fs::write(dir.path().join("changed.txt"), "after").unwrap();
        std::fs::create_dir_all(dir.path().join("out")).unwrap();
        std::fs::write(dir.path().join("out/new.md"), "new").unwrap();
        let after = snapshot(dir.path());
        assert_eq!(written(&before, &after), ["changed.txt", "out/new.md"]);
        assert_eq!(written(&after, &after), Vec::<String>::new());
    }

    #[test]
    fn verdicts_name_their_direction() {
        let v = |baseline, treatment| Verdict {
            name: "c".into(),
            baseline,
            treatment,
        };
        assert!(v(false, true).improved() && !v(false, true).regressed());
        assert!(v(true, false).regressed() && !v(true, false).improved());
        assert!(v(true, true).both() && !v(true, true).improved());
        assert!(!v(false, false).both() && !v(false, false).regressed());
    }
}
