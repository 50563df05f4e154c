//! Provenance: what a results file measured, so that two runs can be told apart by what changed
//! between them, not only by how they ended.
//!
//! Per eval ([`EvalProvenance`], on each [`TestRecord`](super::TestRecord)): the sha256 of every
//! input that shaped its sessions ([`InputFile`]: each file of its skill folders, custom agent
//! and instructions files, the skill's `evals/evals.json` or `evals/triggers.json`, each cassette
//! replayed, each judge's rubric, and each package file the test named with
//! `ctx.package_path`), the models its runs asked for and a digest of each run's settings
//! ([`SettingsDigest`]). The test process collects the files (it knows the eval); the digests are
//! computed from the run records ([`EvalProvenance::refresh`]).
//!
//! Per suite ([`SuiteProvenance`], on the [`SuiteReport`](super::SuiteReport)): the runtime, SDK
//! and copilot-eval versions, the package's git commit and whether its tree was dirty, and the
//! suite's own settings.
//!
//! Nothing machine-specific is written: a path is relative to the package root (`skills/x/
//! SKILL.md`), a file under the test's working directory is `${workdir}/...` (as the cassettes
//! write it), a cassette under `--cassette-root` is relative to that root, and anything else is
//! relative to the package root through `..`.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{JudgeRecord, RunRecord};

/// The version of the `github-copilot-sdk` crate this copilot-eval is built with (the
/// workspace pins it exactly; a unit test keeps the two equal).
pub const SDK_VERSION: &str = "1.0.28";

/// At most this many files of one folder are hashed (a skill folder, a package folder the test
/// named); past it the eval's `notes` say the folder was cut.
pub const MAX_FILES_PER_FOLDER: usize = 2000;

/// The prefix of a path under the test's working directory.
pub const WORKDIR_PREFIX: &str = "${workdir}/";

/// What one eval's sessions were made of ([`TestRecord::provenance`](super::TestRecord::provenance)).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EvalProvenance {
    /// Every input file, sorted by path, each once.
    pub inputs: Vec<InputFile>,
    /// The models the test's runs asked for, in order of first use (`default`: the runtime's
    /// default model).
    pub models: Vec<String>,
    /// A digest of each distinct run configuration, in order of first use.
    pub settings: Vec<SettingsDigest>,
    /// What could not be hashed (an unreadable file, a folder cut at
    /// `MAX_FILES_PER_FOLDER` files); absent when nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One input file of an eval and its content's hash.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub struct InputFile {
    /// Where it is, relative to the package root (`skills/release-notes/SKILL.md`), or under the
    /// test's working directory (`${workdir}/.skills/release-notes/SKILL.md`); a judge's rubric
    /// is `judges[N].rubric` (N from 1).
    pub path: String,
    /// What it is to the eval.
    pub kind: InputKind,
    /// The sha256 of its content, lowercase hex (a rubric: of its criteria as JSON).
    pub sha256: String,
}

/// What an input file is to the eval.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum InputKind {
    /// A file of a skill folder the eval gave the session (`skill_directory`).
    Skill,
    /// A custom agent file (`custom_agent_file`, a repository's `.github/agents/`).
    Agent,
    /// An instructions file (a repository's `.github/copilot-instructions.md`, `*.instructions.md`).
    Instructions,
    /// The skill's `evals/evals.json` a `skill_evals` test runs an entry of.
    EvalsJson,
    /// The skill's `evals/triggers.json` a `skill_triggers` test runs a query of.
    TriggersJson,
    /// A cassette a run replayed.
    Cassette,
    /// A judge's rubric (`ctx.judge`, `ctx.judge_pair`).
    Rubric,
    /// A package file the test named with `ctx.package_path` (e.g. a `SKILL.md` it copies into
    /// the working directory).
    TestFile,
}

impl InputKind {
    /// The value as written: `skill`, `agent`, `instructions`, `evals_json`, `triggers_json`,
    /// `cassette`, `rubric`, `test_file`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Skill => "skill",
            Self::Agent => "agent",
            Self::Instructions => "instructions",
            Self::EvalsJson => "evals_json",
            Self::TriggersJson => "triggers_json",
            Self::Cassette => "cassette",
            Self::Rubric => "rubric",
            Self::TestFile => "test_file",
        }
    }
}

/// The digest of one run configuration of an eval (its `configuration` in the run record,
/// machine-specific paths left out).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SettingsDigest {
    /// The eval's name (`configuration.name`).
    pub eval: String,
    /// The run's label (`baseline`, `treatment`, `judge`), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The model asked for (`default`: the runtime's default).
    pub model: String,
    /// The sha256 of the configuration as canonical JSON (sorted keys), without its working
    /// directory and with its skill folders written as input paths.
    pub sha256: String,
}

/// Where a suite ran and with what ([`SuiteReport::provenance`](super::SuiteReport::provenance)).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SuiteProvenance {
    /// The version of copilot-eval that ran the suite.
    pub copilot_eval_version: String,
    /// The version of the `github-copilot-sdk` crate it drives the runtime with.
    pub sdk_version: String,
    /// The runtime's version, when it answered (as `runtime.version`).
    pub runtime_version: Option<String>,
    /// The commit checked out in the package's git repository (`git rev-parse HEAD`), when it is
    /// one.
    pub git_commit: Option<String>,
    /// Whether the repository had changes not committed when the suite started (`git status
    /// --porcelain` printed anything, untracked files included); absent without a commit.
    pub git_dirty: Option<bool>,
    /// Why the commit is unknown (not a git repository, no `git`), when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_error: Option<String>,
    /// The suite's settings that change what is measured: `mode`, `trials`, `models`,
    /// `min_pass_rate` (each written as the command got it, absent when not given).
    pub settings: BTreeMap<String, String>,
}

impl SuiteProvenance {
    /// One line for people and the JUnit property: `copilot-eval 0.1.0, SDK 1.0.28, runtime
    /// 1.0.102, git 0123abcd (dirty)`.
    pub fn line(&self) -> String {
        let git = match (&self.git_commit, self.git_dirty) {
            (Some(commit), Some(true)) => format!("git {} (dirty)", short(commit)),
            (Some(commit), _) => format!("git {}", short(commit)),
            (None, _) => "git unknown".to_owned(),
        };
        format!(
            "copilot-eval {}, SDK {}, runtime {}, {git}",
            self.copilot_eval_version,
            self.sdk_version,
            self.runtime_version.as_deref().unwrap_or("unknown"),
        )
    }
}

/// The first 12 characters of a commit or hash.
pub fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

impl EvalProvenance {
    /// The sha256 of the whole provenance as canonical JSON, lowercase hex: equal for two evals
    /// whose inputs, models and settings are all equal (the JUnit property).
    pub fn digest(&self) -> String {
        let value = serde_json::to_value(self).expect("provenance serialises");
        sha256_hex(canonical_json(&value).as_bytes())
    }

    /// Add `file` (kind `kind`) unless its path is already listed (the first kind stays).
    pub fn add(&mut self, file: InputFile) {
        if let Err(at) = self.inputs.binary_search_by(|f| f.path.cmp(&file.path)) {
            self.inputs.insert(at, file);
        }
    }

    /// Hash `path` (a file, or every file under a folder) as inputs of `kind`, named by
    /// `roots`; what cannot be read is a note.
    pub fn add_path(&mut self, path: &Path, kind: InputKind, roots: &Roots) {
        if path.is_dir() {
            let mut files = Vec::new();
            let cut = walk(path, &mut files);
            files.sort();
            for file in files {
                self.add_file(&file, kind, roots);
            }
            if cut {
                self.note(format!(
                    "{}: only the first {MAX_FILES_PER_FOLDER} files were hashed",
                    roots.name(path)
                ));
            }
        } else if path.exists() {
            self.add_file(path, kind, roots);
        }
    }

    fn add_file(&mut self, file: &Path, kind: InputKind, roots: &Roots) {
        match std::fs::read(file) {
            Ok(bytes) => self.add(InputFile {
                path: roots.name(file),
                kind,
                sha256: sha256_hex(&bytes),
            }),
            Err(e) => self.note(format!("{}: not hashed: {e}", roots.name(file))),
        }
    }

    fn note(&mut self, note: String) {
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }

    /// Compute `models` and `settings` again from the test's `runs`, and add each judge's rubric
    /// (`judges[N].rubric`) as an input. `roots` names the skill folders of the configurations.
    pub fn refresh(&mut self, runs: &[RunRecord], judges: &[JudgeRecord], roots: &Roots) {
        self.models.clear();
        self.settings.clear();
        for run in runs {
            let model = run
                .configuration
                .model
                .clone()
                .unwrap_or_else(|| "default".to_owned());
            if !self.models.contains(&model) {
                self.models.push(model.clone());
            }
            let digest = SettingsDigest {
                eval: run.configuration.name.clone(),
                label: run.label.clone(),
                model,
                sha256: sha256_hex(canonical_json(&settings_value(run, roots)).as_bytes()),
            };
            if !self.settings.contains(&digest) {
                self.settings.push(digest);
            }
        }
        for (index, judge) in judges.iter().enumerate() {
            let mut rubric = serde_json::json!({
                "kind": judge.kind,
                "material": judge.material,
                "model": judge.model,
                "tools": judge.tools,
                "rubric": judge.rubric,
            });
            // A sampled judge measures differently; one sample keeps the earlier hash.
            if let Some(samples) = judge.samples {
                rubric["samples"] = samples.into();
            }
            let path = format!("judges[{}].rubric", index + 1);
            self.inputs.retain(|f| f.path != path);
            self.add(InputFile {
                path,
                kind: InputKind::Rubric,
                sha256: sha256_hex(canonical_json(&rubric).as_bytes()),
            });
        }
    }

    /// Each input's hash by its path.
    pub fn hashes(&self) -> BTreeMap<&str, &InputFile> {
        self.inputs.iter().map(|f| (f.path.as_str(), f)).collect()
    }
}

/// A run's configuration as the settings digest reads it: the snapshot as JSON without its
/// `working_directory`, its `skill_directories` named by `roots`.
pub fn settings_value(run: &RunRecord, roots: &Roots) -> Value {
    let mut value = serde_json::to_value(&run.configuration).expect("a snapshot serialises");
    if let Value::Object(map) = &mut value {
        map.remove("working_directory");
        if let Some(Value::Array(dirs)) = map.get_mut("skill_directories") {
            for dir in dirs.iter_mut() {
                if let Value::String(text) = dir {
                    *text = roots.name(Path::new(text.as_str()));
                }
            }
        }
    }
    value
}

/// The folders input paths are written against.
#[derive(Debug, Clone, Default)]
pub struct Roots {
    /// The package root (the folder of its `Cargo.toml`).
    pub package: PathBuf,
    /// The test's working directory, when known.
    pub workdir: Option<PathBuf>,
    /// The folder `--cassette-root` gave, when given.
    pub cassette_root: Option<PathBuf>,
}

impl Roots {
    /// `path` as an input path: `${workdir}/rest` under the working directory, `rest` under the
    /// package root or the cassette root, else relative to the package root through `..`
    /// (a relative `path` is taken as relative to the package root). Separators are `/`.
    pub fn name(&self, path: &Path) -> String {
        let path = normalize(&self.package.join(path));
        if let Some(workdir) = &self.workdir
            && let Ok(rest) = path.strip_prefix(normalize(workdir))
        {
            return format!("{WORKDIR_PREFIX}{}", slashes(rest));
        }
        let package = normalize(&self.package);
        if let Ok(rest) = path.strip_prefix(&package) {
            return slashes(rest);
        }
        if let Some(root) = &self.cassette_root
            && let Ok(rest) = path.strip_prefix(normalize(root))
        {
            return slashes(rest);
        }
        let common = package
            .components()
            .zip(path.components())
            .take_while(|(a, b)| a == b)
            .count();
        let ups = package.components().count() - common;
        let mut parts: Vec<String> = vec!["..".to_owned(); ups];
        parts.extend(
            path.components()
                .skip(common)
                .map(|c| c.as_os_str().to_string_lossy().into_owned()),
        );
        parts.join("/")
    }
}

/// `path` with `.` and `..` components resolved lexically.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn slashes(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// Every file under `dir` (symbolic links to folders not followed), at most
/// [`MAX_FILES_PER_FOLDER`]; returns whether the walk was cut there.
fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for entry in entries {
        let is_dir = std::fs::symlink_metadata(&entry).is_ok_and(|m| m.is_dir());
        if is_dir {
            if walk(&entry, files) {
                return true;
            }
        } else if entry.is_file() {
            if files.len() >= MAX_FILES_PER_FOLDER {
                return true;
            }
            files.push(entry);
        }
    }
    false
}

/// The sha256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// `value` as JSON text with every object's keys sorted (the same text for the same value
/// whatever order its maps were built in).
pub fn canonical_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| {
                    format!(
                        "{}:{}",
                        Value::String(k.clone()),
                        canonical_json(&map[k.as_str()])
                    )
                })
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(canonical_json)
                .collect::<Vec<_>>()
                .join(",")
        ),
        other => other.to_string(),
    }
}

/// The JUnit properties of `test`'s provenance and attempt: `copilot_eval.provenance`
/// (`sha256:<digest> (N inputs; models a, b)`) when it recorded one, `copilot_eval.attempt`
/// (`2 (earlier: failed)`) for a new attempt of `--rerun-failed`.
pub fn junit_properties(test: &super::TestRecord) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some(provenance) = &test.provenance {
        out.push((
            "copilot_eval.provenance",
            format!(
                "sha256:{} ({} inputs; models {})",
                provenance.digest(),
                provenance.inputs.len(),
                provenance.models.join(", ")
            ),
        ));
    }
    if let Some(attempt) = &test.attempt {
        out.push((
            "copilot_eval.attempt",
            format!(
                "{} (earlier: {})",
                attempt.number,
                attempt.previous_outcome.as_str()
            ),
        ));
    }
    out
}

/// The suite's provenance: the versions, and the git state of the repository holding `package`
/// (asked with `git -C <package> rev-parse HEAD` and `git status --porcelain`).
#[cfg(feature = "runner")]
pub fn suite_provenance(
    package: &Path,
    runtime_version: Option<String>,
    settings: BTreeMap<String, String>,
) -> SuiteProvenance {
    let git = |args: &[&str]| -> Result<String, String> {
        let output = std::process::Command::new("git")
            .arg("-C")
            .arg(package)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| format!("cannot run git: {e}"))?;
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).into_owned())
        } else {
            let stderr = String::from_utf8_lossy(&output.stderr);
            Err(format!(
                "git {}: {}",
                args.join(" "),
                stderr.lines().next().unwrap_or("failed").trim()
            ))
        }
    };
    let (git_commit, git_dirty, git_error) = match git(&["rev-parse", "HEAD"]) {
        Ok(commit) => {
            let dirty = git(&["status", "--porcelain"]).map(|text| !text.trim().is_empty());
            match dirty {
                Ok(dirty) => (Some(commit.trim().to_owned()), Some(dirty), None),
                Err(e) => (Some(commit.trim().to_owned()), None, Some(e)),
            }
        }
        Err(e) => (None, None, Some(e)),
    };
    SuiteProvenance {
        copilot_eval_version: env!("CARGO_PKG_VERSION").to_owned(),
        sdk_version: SDK_VERSION.to_owned(),
        runtime_version,
        git_commit,
        git_dirty,
        git_error,
        settings,
    }
}

#[cfg(test)]
mod tests;
