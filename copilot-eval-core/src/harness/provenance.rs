//! The test process's side of provenance ([`crate::report::provenance`]): after each run, the
//! input files of the run's eval are hashed into the evidence (its skill folders, custom agent
//! and instructions files, the skill's `evals.json` / `triggers.json`, the cassette it replayed,
//! and the package files the test named with `ctx.package_path`); before each write of the
//! evidence, the models, settings digests and judges' rubrics are computed again from the runs.

use std::path::{Path, PathBuf};

use super::TestConfig;
use super::side_file::TestEvidence;
use crate::eval::CopilotEval;
use crate::report::RunRecord;
use crate::report::provenance::{EvalProvenance, InputKind, Roots};

/// The folders the test's input paths are named against.
pub(super) fn roots(config: &TestConfig, workdir: &Path) -> Roots {
    Roots {
        package: PathBuf::from(config.manifest_dir),
        workdir: (!workdir.as_os_str().is_empty()).then(|| workdir.to_path_buf()),
        cassette_root: std::env::var_os(super::ENV_CASSETTE_ROOT)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
    }
}

/// Hash the inputs of `eval`'s run `record` into `evidence` (the package files the test named
/// so far are `package_paths`).
pub(super) fn note_run(
    evidence: &mut TestEvidence,
    eval: &CopilotEval,
    record: &RunRecord,
    config: &TestConfig,
    roots: &Roots,
    package_paths: &[PathBuf],
) {
    let provenance = evidence
        .provenance
        .get_or_insert_with(EvalProvenance::default);
    if let Some(spec) = config.skill_case_spec() {
        let file = roots.package.join(spec.skill).join("evals/evals.json");
        provenance.add_path(&file, InputKind::EvalsJson, roots);
    }
    if let Some(spec) = config.trigger_case_spec() {
        let file = roots
            .package
            .join(spec.skill_dir)
            .join("evals/triggers.json");
        provenance.add_path(&file, InputKind::TriggersJson, roots);
    }
    for dir in &eval.skill_directories {
        provenance.add_path(dir, InputKind::Skill, roots);
    }
    for file in &eval.input_files {
        let kind = if file.to_string_lossy().ends_with(".agent.md") {
            InputKind::Agent
        } else {
            InputKind::Instructions
        };
        provenance.add_path(file, kind, roots);
    }
    if let Some(replay) = &record.replay {
        provenance.add_path(Path::new(&replay.cassette), InputKind::Cassette, roots);
    }
    for path in package_paths {
        provenance.add_path(path, InputKind::TestFile, roots);
    }
}

/// Compute the models, settings digests and rubrics of `evidence` again from its runs and
/// judges (when it has a provenance: from its first run on).
pub(super) fn refresh(evidence: &mut TestEvidence, roots: &Roots) {
    if let Some(provenance) = evidence.provenance.as_mut() {
        provenance.refresh(&evidence.runs, &evidence.judges, roots);
    }
}
