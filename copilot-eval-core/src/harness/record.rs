//! Record mode of the harness (`cargo copilot-eval --record`): each run of an eval test either
//! replays its existing cassette or runs live while its model exchanges are recorded
//! ([`crate::cassette::Recorder`]) and written as the cassette.
//!
//! Also here: where cassettes live ([`ENV_CASSETTE_ROOT`]), the read-only rule under CI
//! ([`recording_refused`]), and the testing knob that points "live" at a loopback model server
//! ([`ENV_LIVE_BASE_URL`]).

use std::path::{Path, PathBuf};

use super::ModeError;
use crate::cassette::{Cassette, CassetteHeader, Recorder, temp_folders, volatile_values};
use crate::eval::CopilotEval;
use crate::report::{RecordingOutcome, Redactor, SuiteReport};
use crate::result::{CopilotResult, StopReason};
use crate::run::{RunOptions, run_turns};

/// Environment variable choosing which cassettes a record run writes (with
/// `COPILOT_EVAL_MODE=record`): `missing` (the default when unset or empty) or `all`
/// ([`RecordPolicy`]).
pub const ENV_RECORD: &str = "COPILOT_EVAL_RECORD";

/// Environment variable making a record run strict (set from `--record --strict`): `1`, `true`
/// or `yes` (case-insensitive) refuse to write a cassette that holds a value no normaliser
/// covers (see [`crate::cassette::volatile_values`]); unset, empty or anything else: such a
/// cassette is written with a warning per value.
pub const ENV_RECORD_STRICT: &str = "COPILOT_EVAL_RECORD_STRICT";

/// Whether [`ENV_RECORD_STRICT`] asks for strict recording.
pub fn record_strict() -> bool {
    strict_value(std::env::var(ENV_RECORD_STRICT).ok().as_deref())
}

fn strict_value(value: Option<&str>) -> bool {
    value
        .map(|v| v.trim().to_ascii_lowercase())
        .is_some_and(|v| matches!(v.as_str(), "1" | "true" | "yes"))
}

/// Environment variable naming a folder that replaces the package root when cassette paths are
/// resolved (for reading and for writing): the default cassette of a test becomes
/// `<folder>/tests/cassettes/<crate>/<modules...>/<function>.yaml`, and a relative `cassette`
/// key is resolved against the folder. Unset or empty: the package root.
pub const ENV_CASSETTE_ROOT: &str = "COPILOT_EVAL_CASSETTE_ROOT";

/// Testing knob, for copilot-eval's own tests: a loopback base URL (`http://127.0.0.1:PORT`,
/// `http://localhost:PORT` or `http://[::1]:PORT`) that stands in for the model service in live
/// and record mode. The runtime then talks to that server exactly as in an offline run (with the
/// offline placeholder token); runs still count as live. Any other URL is a setup error.
pub const ENV_LIVE_BASE_URL: &str = "COPILOT_EVAL_LIVE_BASE_URL";

/// Which cassettes a record run writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordPolicy {
    /// Record only the runs whose cassette does not exist yet; a run whose cassette exists
    /// replays it (no model cost, and it checks that the recording still matches). The default
    /// of `--record`.
    Missing,
    /// Record every run live, replacing existing cassettes (`--record=all`).
    All,
    /// Record every judge session live again (replacing its cassette) while the other runs
    /// replay theirs, recording only those that have none (`--record=judges`): re-judging
    /// recorded agent runs after a rubric changed, without running the agent again.
    Judges,
}

impl RecordPolicy {
    /// The policy named by [`ENV_RECORD`]: unset or empty is `missing`.
    ///
    /// Errors: any value other than `missing`, `all` or `judges` (the message names them).
    pub fn from_env() -> Result<RecordPolicy, ModeError> {
        match std::env::var(ENV_RECORD).ok().as_deref().map(str::trim) {
            None | Some("") | Some("missing") => Ok(RecordPolicy::Missing),
            Some("all") => Ok(RecordPolicy::All),
            Some("judges") => Ok(RecordPolicy::Judges),
            Some(other) => Err(ModeError::UnknownRecordPolicy {
                value: other.to_owned(),
            }),
        }
    }

    /// `missing`, `all` or `judges`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Missing => "missing",
            Self::All => "all",
            Self::Judges => "judges",
        }
    }
}

/// Whether `CI` says this is a CI machine: set to anything but empty, `0`, `false` or `no`
/// (case-insensitive). GitHub Actions, GitLab CI, Buildkite, CircleCI and most others set
/// `CI=true`.
pub fn is_ci() -> bool {
    ci_value(std::env::var("CI").ok().as_deref())
}

fn ci_value(value: Option<&str>) -> bool {
    value
        .map(|v| v.trim().to_ascii_lowercase())
        .is_some_and(|v| !matches!(v.as_str(), "" | "0" | "false" | "no"))
}

/// Why recording is refused here, or `None`: under CI ([`is_ci`]) cassettes are read-only, so
/// nothing can spend model requests or change the recordings behind the reviewers' backs.
pub fn recording_refused() -> Option<String> {
    is_ci().then(|| RECORDING_REFUSED.to_owned())
}

/// What [`recording_refused`] says.
pub(crate) const RECORDING_REFUSED: &str = "cassettes are read-only under CI (the CI environment variable is set): recording is refused; record locally with `cargo copilot-eval --record` and commit the cassettes, or run with --replay";

/// The folder that replaces the package root for cassette paths ([`ENV_CASSETTE_ROOT`]), if
/// set.
pub fn cassette_root() -> Option<PathBuf> {
    std::env::var_os(ENV_CASSETTE_ROOT)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The run options of a live run: GitHub Copilot, or the loopback server of
/// [`ENV_LIVE_BASE_URL`].
///
/// Errors: [`ENV_LIVE_BASE_URL`] holds something other than a loopback `http://` URL.
pub(crate) fn live_options() -> Result<RunOptions, ModeError> {
    live_options_for(std::env::var(ENV_LIVE_BASE_URL).ok().as_deref())
}

/// [`live_options`] for the value of [`ENV_LIVE_BASE_URL`].
fn live_options_for(url: Option<&str>) -> Result<RunOptions, ModeError> {
    let Some(url) = url.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(RunOptions::live());
    };
    let host = url
        .strip_prefix("http://")
        .map(|rest| rest.split(['/', '?', '#']).next().unwrap_or(""))
        .unwrap_or("");
    let host = match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => host,
    };
    if matches!(host, "127.0.0.1" | "localhost" | "[::1]") {
        Ok(RunOptions::offline(url))
    } else {
        Err(ModeError::NotLoopback {
            url: url.to_owned(),
        })
    }
}

/// What a record-mode run does with its cassette.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Plan {
    /// The cassette exists and the policy keeps it: replay it.
    Replay(PathBuf),
    /// Run live and write the cassette.
    Record(PathBuf),
}

/// The plan of a record-mode run whose cassette is `cassette`; `judge`: the run is a judge
/// session (`ctx.judge`, `ctx.judge_pair`).
pub(crate) fn plan(policy: RecordPolicy, cassette: PathBuf, judge: bool) -> Plan {
    let keep = match policy {
        RecordPolicy::Missing => true,
        RecordPolicy::All => false,
        RecordPolicy::Judges => !judge,
    };
    if keep && cassette.is_file() {
        Plan::Replay(cassette)
    } else {
        Plan::Record(cassette)
    }
}

/// Run `eval` on `prompts` (one session) live while recording, then write the cassette at `cassette` when the
/// run completed (stop reason `completed`, whatever the test checks afterwards). The comment at
/// the top of the file names `test` and the run's number (`run`, from 1).
///
/// Returns the result and what happened to the cassette. The recording's `error` says why no
/// cassette was written; `fatal` is true when the run completed but its recording could not be
/// made into a cassette or written (the test then reports a setup error).
///
/// `adjust` adds the run's home and a session to resume to the run's options.
///
/// Errors: the live target is invalid ([`ENV_LIVE_BASE_URL`]).
pub(crate) async fn record_run(
    eval: &CopilotEval,
    prompts: &[crate::eval::Prompt],
    cassette: &Path,
    test: &str,
    run: usize,
    adjust: &(dyn Fn(RunOptions) -> RunOptions + Sync),
) -> Result<(CopilotResult, RecordingOutcome, bool), String> {
    let recorder = Recorder::new();
    let options = adjust(
        live_options()
            .map_err(|e| e.to_string())?
            .record(recorder.clone()),
    );
    let result = run_turns(eval, prompts, &options).await;
    let mut recording = RecordingOutcome {
        cassette: cassette.display().to_string(),
        written: false,
        conversations: 0,
        model_requests: recorder.model_requests() as u64,
        error: None,
        warnings: Vec::new(),
    };
    if result.stop_reason != StopReason::Completed {
        recording.error = Some(format!(
            "no cassette written: the run stopped with {}",
            result.stop_reason.as_str()
        ));
        return Ok((result, recording, false));
    }
    let header = CassetteHeader {
        runtime_version: result
            .runtime_path
            .as_deref()
            .and_then(|path| crate::runtime::version(path).ok()),
        model: eval.model().map(str::to_owned),
        wire_format: None,
        recorded: None,
        workdir: crate::cassette::WorkdirMeaning::TestRoot,
    };
    let comment = format!(
        "Recorded by copilot-eval {} (`cargo copilot-eval --record`) from a live session of\n`{test}` (run {run}). Replay: `cargo copilot-eval --replay`; record again:\n`cargo copilot-eval --record=all {test}`.",
        env!("CARGO_PKG_VERSION")
    );
    let written = recorder
        .cassette(header, &Redactor::from_env())
        .map_err(|e| e.to_string())
        .and_then(|c| {
            let (written, warnings) = write_checked(
                &c,
                cassette,
                &comment,
                &temp_folders(&std::env::temp_dir()),
                record_strict(),
            );
            for warning in &warnings {
                eprintln!("copilot-eval: warning: {warning}");
            }
            recording.warnings = warnings;
            written
        });
    let fatal = match written {
        Ok(conversations) => {
            recording.written = true;
            recording.conversations = conversations as u64;
            false
        }
        Err(e) => {
            recording.error = Some(format!("recording failed: {e}"));
            true
        }
    };
    Ok((result, recording, fatal))
}

/// Writes `cassette` at `path` after `comment`, unless `strict` and it holds values no
/// normaliser covers (`temp`: the temporary folders, [`temp_folders`]). Returns the number of
/// conversations written (or why nothing was written) and one warning per such value
/// (`file:line: ...`).
pub(crate) fn write_checked(
    cassette: &Cassette,
    path: &Path,
    comment: &str,
    temp: &[String],
    strict: bool,
) -> (Result<usize, String>, Vec<String>) {
    let text = match cassette.to_text(comment) {
        Ok(text) => text,
        Err(e) => return (Err(e.to_string()), Vec::new()),
    };
    let warnings: Vec<String> = match volatile_values(&text, path, temp) {
        Ok(found) => found.iter().map(ToString::to_string).collect(),
        Err(e) => return (Err(e.to_string()), Vec::new()),
    };
    if strict && !warnings.is_empty() {
        let error = format!(
            "--strict: the cassette {} was not written: it holds {} value(s) no normaliser covers (first: {}); make the session deterministic (a fixed name instead of a temp path, uuid or time), or record without --strict to accept them",
            path.display(),
            warnings.len(),
            warnings[0]
        );
        return (Err(error), warnings);
    }
    let written = Cassette::write_text(path, &text)
        .map(|()| cassette.conversations.len())
        .map_err(|e| e.to_string());
    (written, warnings)
}

/// The summary line of a record run, from its report: how many runs were recorded, how many
/// replayed an existing cassette, and how many recordings were not written. `None` when no run
/// was recorded or replayed in record mode.
pub fn recording_summary(report: &SuiteReport) -> Option<String> {
    if report.requested_mode.as_deref().unwrap_or(&report.mode) != "record" {
        return None;
    }
    let runs = report.tests.iter().flat_map(|t| t.runs.iter());
    let (mut written, mut replayed, mut failed) = (0, 0, 0);
    for run in runs {
        match &run.recording {
            Some(r) if r.written => written += 1,
            Some(_) => failed += 1,
            None if run.replay.is_some() => replayed += 1,
            None => {}
        }
    }
    let warnings: Vec<&String> = report
        .tests
        .iter()
        .flat_map(|t| t.runs.iter())
        .filter_map(|r| r.recording.as_ref())
        .flat_map(|r| r.warnings.iter())
        .collect();
    let mut text = format!(
        "  cassettes: {written} recorded, {replayed} kept (replayed), {failed} not written\n"
    );
    if !warnings.is_empty() {
        text.push_str(&format!(
            "  {} value(s) no normaliser covers (they will likely not replay elsewhere; --strict refuses them):\n",
            warnings.len()
        ));
        for warning in warnings {
            text.push_str(&format!("    {warning}\n"));
        }
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_values() {
        for yes in ["1", "true", "TRUE", " yes "] {
            assert!(strict_value(Some(yes)), "{yes}");
        }
        for no in [None, Some(""), Some("0"), Some("false"), Some("no")] {
            assert!(!strict_value(no), "{no:?}");
        }
    }

    /// A cassette with a uuid in a tool result: written with a warning naming its line, or,
    /// strict, not written at all; a clean one is written without warnings either way.
    #[test]
    fn strict_recording_refuses_a_cassette_with_a_value_no_normaliser_covers() {
        let text = "conversations:\n  - messages:\n      - role: system\n        content: ${system}\n      - role: user\n        content: Look it up.\n      - role: assistant\n        tool_calls:\n          - id: toolcall_0\n            type: function\n            function:\n              name: lookup\n              arguments: '{}'\n      - role: tool\n        tool_call_id: toolcall_0\n        content: id 5f45b499-74b4-411b-9969-a2fc1daca794\n      - role: assistant\n        content: Found it.\n";
        let volatile = Cassette::parse(text, Path::new("x.yaml")).unwrap();
        let clean = Cassette::parse(
            &text.replace("5f45b499-74b4-411b-9969-a2fc1daca794", "42"),
            Path::new("y.yaml"),
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let temp = temp_folders(&std::env::temp_dir());

        // Lenient: written, with a warning naming the line the uuid is on in the file.
        let path = dir.path().join("lenient.yaml");
        let (written, warnings) = write_checked(&volatile, &path, "a comment", &temp, false);
        assert_eq!(written, Ok(1));
        let file = std::fs::read_to_string(&path).unwrap();
        let line = 1 + file.lines().position(|l| l.contains("5f45b499")).unwrap();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let expected = format!("{}:{line}: a uuid `5f45b499", path.display());
        assert!(warnings[0].starts_with(&expected), "{warnings:?}\n{file}");

        // Strict: nothing written; the error names the same line.
        let path = dir.path().join("strict.yaml");
        let (written, warnings) = write_checked(&volatile, &path, "a comment", &temp, true);
        let error = written.unwrap_err();
        assert!(
            !path.exists(),
            "a strict recording wrote {}",
            path.display()
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let expected = format!("{}:{line}: a uuid `5f45b499", path.display());
        assert!(warnings[0].starts_with(&expected), "{warnings:?}");
        assert!(
            error.contains("--strict") && error.contains(&expected),
            "{error}"
        );

        let path = dir.path().join("clean.yaml");
        let (written, warnings) = write_checked(&clean, &path, "a comment", &temp, true);
        assert_eq!(written, Ok(1));
        assert!(warnings.is_empty(), "{warnings:?}");

        // A cassette that cannot be written (its folder would be a regular file): the error
        // names the file, which `record_run` reports as the test's setup error.
        let blocker = dir.path().join("a-file");
        std::fs::write(&blocker, "not a folder").unwrap();
        let path = blocker.join("c.yaml");
        let (written, _) = write_checked(&clean, &path, "a comment", &temp, false);
        let error = written.unwrap_err();
        assert!(error.contains(&*path.to_string_lossy()), "{error}");
        assert!(!path.exists());
    }

    #[test]
    fn ci_values() {
        for yes in ["true", "1", "TRUE", "yes", "anything"] {
            assert!(ci_value(Some(yes)), "{yes}");
        }
        for no in [
            None,
            Some(""),
            Some("0"),
            Some("false"),
            Some("False"),
            Some("no"),
        ] {
            assert!(!ci_value(no), "{no:?}");
        }
    }

    #[test]
    fn live_runs_go_to_a_loopback_stand_in_only() {
        use crate::run::Target;
        assert_eq!(live_options_for(None).unwrap().target, Target::Live);
        assert_eq!(live_options_for(Some(" ")).unwrap().target, Target::Live);
        for url in [
            "http://127.0.0.1:4567",
            "http://localhost:80/",
            "http://[::1]:9",
        ] {
            assert!(
                matches!(
                    live_options_for(Some(url)).unwrap().target,
                    Target::Offline { .. }
                ),
                "{url}"
            );
        }
        for url in [
            "https://127.0.0.1:4567",
            "http://example.com",
            "http://127.0.0.1.example.com:80",
            "127.0.0.1:80",
        ] {
            let err = live_options_for(Some(url)).unwrap_err().to_string();
            assert!(err.contains("not a loopback"), "{url}: {err}");
        }
    }

    #[test]
    fn a_cassette_root_replaces_the_package_root() {
        let config = crate::harness::TestConfig::new("writes_file", "evals::writes_file", "/pkg");
        let root = Path::new("/shared");
        assert_eq!(
            config.cassette_path_in(Some(root)),
            Path::new("/shared/tests/cassettes/evals/writes_file.yaml")
        );
        assert_eq!(
            config
                .cassette("fixtures/c.yaml")
                .cassette_path_in(Some(root)),
            Path::new("/shared/fixtures/c.yaml")
        );
    }

    #[test]
    fn missing_replays_an_existing_cassette_and_all_records_it() {
        let dir = tempfile::tempdir().unwrap();
        let existing = dir.path().join("a.yaml");
        std::fs::write(&existing, "conversations: []").unwrap();
        let absent = dir.path().join("b.yaml");
        assert_eq!(
            plan(RecordPolicy::Missing, existing.clone(), false),
            Plan::Replay(existing.clone())
        );
        assert_eq!(
            plan(RecordPolicy::Missing, absent.clone(), false),
            Plan::Record(absent.clone())
        );
        assert_eq!(
            plan(RecordPolicy::All, existing.clone(), false),
            Plan::Record(existing.clone())
        );
        // `judges`: a judge session records again; any other run replays its cassette, or
        // records when it has none.
        assert_eq!(
            plan(RecordPolicy::Judges, existing.clone(), true),
            Plan::Record(existing.clone())
        );
        assert_eq!(
            plan(RecordPolicy::Judges, existing.clone(), false),
            Plan::Replay(existing)
        );
        assert_eq!(
            plan(RecordPolicy::Judges, absent.clone(), false),
            Plan::Record(absent)
        );
    }
}
