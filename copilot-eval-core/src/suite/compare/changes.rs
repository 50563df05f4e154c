//! What differs between two suites apart from the evals' own inputs: the runtime, the SDK,
//! copilot-eval, the mode, the models, the settings and the commit ([`SuiteChange`]). A
//! difference of pass rate that comes with one of these may come from it, not from a skill:
//! the report names them first.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::eval::EvalComparison;
use crate::report::SuiteReport;

/// One difference between the two suites.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SuiteChange {
    /// What changed.
    pub kind: ChangeKind,
    /// The older side's value, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    /// The newer side's value, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// One sentence for people.
    pub detail: String,
}

/// The kind of a suite difference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// A file has no provenance (written before copilot-eval recorded it): its versions and
    /// inputs are unknown.
    ProvenanceUnknown,
    /// The Copilot runtime's version differs.
    Runtime,
    /// The `github-copilot-sdk` version differs.
    Sdk,
    /// The copilot-eval version differs.
    CopilotEval,
    /// One ran live, the other replayed.
    Mode,
    /// An eval's runs asked for other models.
    Model,
    /// A suite setting (`trials`, `models`, `min_pass_rate`, the pricing table) or an eval's
    /// run settings differ.
    Settings,
    /// The package's commit differs (expected between two versions of the inputs).
    Commit,
    /// A side ran on a tree with changes not committed.
    DirtyTree,
}

impl ChangeKind {
    /// The value as written: `provenance_unknown`, `runtime`, `sdk`, `copilot_eval`, `mode`,
    /// `model`, `settings`, `commit`, `dirty_tree`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ProvenanceUnknown => "provenance_unknown",
            Self::Runtime => "runtime",
            Self::Sdk => "sdk",
            Self::CopilotEval => "copilot_eval",
            Self::Mode => "mode",
            Self::Model => "model",
            Self::Settings => "settings",
            Self::Commit => "commit",
            Self::DirtyTree => "dirty_tree",
        }
    }

    /// Whether the change can explain a difference of pass rate by itself (everything but the
    /// commit and a dirty tree, which are how inputs change).
    pub fn is_loud(self) -> bool {
        !matches!(self, Self::Commit | Self::DirtyTree)
    }
}

fn change(
    kind: ChangeKind,
    before: Option<String>,
    after: Option<String>,
    detail: String,
) -> SuiteChange {
    SuiteChange {
        kind,
        before,
        after,
        detail,
    }
}

/// `value`, or `unknown`.
fn known(value: &Option<String>) -> &str {
    value.as_deref().unwrap_or("unknown")
}

/// The differences between the suites of `base` and `new` (each a file name and its report),
/// with the evals' model and settings changes (`evals`) summed up.
pub fn suite_changes(
    (base_file, base): (&String, &SuiteReport),
    (new_file, new): (&String, &SuiteReport),
    evals: &[EvalComparison],
) -> Vec<SuiteChange> {
    let mut out = Vec::new();
    for (file, report) in [(base_file, base), (new_file, new)] {
        if report.provenance.is_none() {
            out.push(change(
                ChangeKind::ProvenanceUnknown,
                None,
                None,
                format!(
                    "{file} has no provenance (written before copilot-eval recorded it): its SDK, commit and inputs are unknown, so what changed in them cannot be told"
                ),
            ));
        }
    }
    let runtime = |r: &SuiteReport| {
        r.provenance
            .as_ref()
            .and_then(|p| p.runtime_version.clone())
            .or_else(|| r.runtime.version.clone())
    };
    let (rb, ra) = (runtime(base), runtime(new));
    if rb != ra || base.runtime.version != new.runtime.version {
        let (rb, ra) = if rb != ra {
            (rb, ra)
        } else {
            (base.runtime.version.clone(), new.runtime.version.clone())
        };
        out.push(change(
            ChangeKind::Runtime,
            rb.clone(),
            ra.clone(),
            format!(
                "the Copilot runtime changed: {} -> {} (a runtime change, not a change of the evals' inputs)",
                known(&rb),
                known(&ra)
            ),
        ));
    }
    if let (Some(pb), Some(pa)) = (&base.provenance, &new.provenance)
        && pb.sdk_version != pa.sdk_version
    {
        out.push(change(
            ChangeKind::Sdk,
            Some(pb.sdk_version.clone()),
            Some(pa.sdk_version.clone()),
            format!(
                "the SDK changed: github-copilot-sdk {} -> {}",
                pb.sdk_version, pa.sdk_version
            ),
        ));
    }
    if base.tool.version != new.tool.version {
        out.push(change(
            ChangeKind::CopilotEval,
            Some(base.tool.version.clone()),
            Some(new.tool.version.clone()),
            format!(
                "copilot-eval changed: {} -> {}",
                base.tool.version, new.tool.version
            ),
        ));
    }
    if base.mode != new.mode {
        out.push(change(
            ChangeKind::Mode,
            Some(base.mode.clone()),
            Some(new.mode.clone()),
            format!("the mode changed: {} -> {}", base.mode, new.mode),
        ));
    }
    out.extend(model_changes(evals));
    out.extend(settings_changes(base, new, evals));
    out.extend(git_changes((base_file, base), (new_file, new)));
    out
}

/// One change per distinct pair of model lists, naming how many evals it affects.
fn model_changes(evals: &[EvalComparison]) -> Vec<SuiteChange> {
    let mut pairs: BTreeMap<(String, String), Vec<&str>> = BTreeMap::new();
    for eval in evals {
        if let Some([before, after]) = &eval.models {
            pairs
                .entry((before.join(", "), after.join(", ")))
                .or_default()
                .push(&eval.name);
        }
    }
    pairs
        .into_iter()
        .map(|((before, after), names)| {
            change(
                ChangeKind::Model,
                Some(before.clone()),
                Some(after.clone()),
                format!(
                    "the model changed: {before} -> {after} ({} eval(s): {})",
                    names.len(),
                    names.join(", ")
                ),
            )
        })
        .collect()
}

/// The suite's settings (from the provenance, and the pricing table) and the evals whose run
/// settings differ.
fn settings_changes(
    base: &SuiteReport,
    new: &SuiteReport,
    evals: &[EvalComparison],
) -> Vec<SuiteChange> {
    let mut out = Vec::new();
    let settings = |r: &SuiteReport| {
        let mut map = r
            .provenance
            .as_ref()
            .map(|p| p.settings.clone())
            .unwrap_or_default();
        if let Some(control) = &r.cost_control {
            map.insert("pricing".to_owned(), control.pricing.clone());
        }
        map
    };
    let (sb, sa) = (settings(base), settings(new));
    let keys: std::collections::BTreeSet<&String> = sb.keys().chain(sa.keys()).collect();
    for key in keys {
        let (b, a) = (sb.get(key).cloned(), sa.get(key).cloned());
        if b != a {
            out.push(change(
                ChangeKind::Settings,
                b.clone(),
                a.clone(),
                format!(
                    "the suite's {key} changed: {} -> {}",
                    b.as_deref().unwrap_or("not given"),
                    a.as_deref().unwrap_or("not given")
                ),
            ));
        }
    }
    let changed: Vec<&EvalComparison> = evals.iter().filter(|e| !e.settings.is_empty()).collect();
    if !changed.is_empty() {
        let names: Vec<String> = changed
            .iter()
            .map(|e| format!("{} ({})", e.name, e.settings.join("; ")))
            .collect();
        out.push(change(
            ChangeKind::Settings,
            None,
            None,
            format!(
                "the run settings changed for {} eval(s): {}",
                changed.len(),
                names.join(", ")
            ),
        ));
    }
    out
}

/// The commit, and a dirty tree on the newer side.
fn git_changes(
    (base_file, base): (&str, &SuiteReport),
    (new_file, new): (&str, &SuiteReport),
) -> Vec<SuiteChange> {
    let mut out = Vec::new();
    let (Some(pb), Some(pa)) = (&base.provenance, &new.provenance) else {
        return out;
    };
    if pb.git_commit != pa.git_commit {
        let short = |c: &Option<String>| {
            c.as_deref()
                .map_or("unknown", crate::report::provenance::short)
                .to_owned()
        };
        out.push(change(
            ChangeKind::Commit,
            pb.git_commit.clone(),
            pa.git_commit.clone(),
            format!(
                "the package's commit changed: {} -> {}",
                short(&pb.git_commit),
                short(&pa.git_commit)
            ),
        ));
    }
    for (file, provenance) in [(base_file, pb), (new_file, pa)] {
        if provenance.git_dirty == Some(true) {
            out.push(change(
                ChangeKind::DirtyTree,
                None,
                None,
                format!(
                    "{file} ran on a tree with changes not committed: its commit does not name all its inputs (the inputs' hashes do)"
                ),
            ));
        }
    }
    out
}
