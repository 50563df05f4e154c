//! Recorded trials (`--record --trials N`, `--replay --trials N`; docs/trials.md), end to end
//! through the runner and the real runtime on the quick-start's `creates_a_greeting_file`:
//!
//! - recording: a loopback server stands in for the model service and answers each trial's
//!   session differently (the file's content), so each trial records its own cassette,
//!   `<cassette root>/tests/cassettes/evals/creates_a_greeting_file/trial-K.yaml`. These are the
//!   quick-start's committed trial cassettes (the test checks they are the same;
//!   `COPILOT_EVAL_UPDATE_TRIALS=1` writes them there);
//! - `--record` again keeps (replays) them; `--replay` without `--trials` of an eval that has
//!   only trial cassettes, and `--replay --trials N` past the recorded trials, are setup errors
//!   naming the missing files and the fix;
//! - the committed trial set replays five times to the same figures: 3 of 5 passed.

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use copilot_eval_core::cassette::{Cassette, ReplayResponder};
use copilot_eval_core::model_server::{ModelServer, ServerConfig};
use copilot_eval_core::report::{Outcome, SuiteReport, TrialOf};
use copilot_eval_e2e::runtime_for;
use support::{command_path, workspace_root};

const EVAL: &str = "creates_a_greeting_file";

/// What the stand-in's model writes into greeting.txt in each trial, and the length the
/// runtime's `create` tool reports. The eval checks the file's content without its trailing
/// line breaks: trials 2 and 4 fail.
const WRITTEN: [(&str, usize); 5] = [
    ("Hello, Ferris!", 14),
    ("Hello, Ferrus!", 14),
    ("Hello, Ferris!\\n", 15),
    ("Hello, Ferris", 13),
    ("Hello, Ferris!\\n\\n", 16),
];

/// The quick-start's committed trial cassettes of the eval.
fn committed_folder() -> PathBuf {
    workspace_root().join(format!("examples/quickstart/tests/cassettes/evals/{EVAL}"))
}

/// The stand-in for the model service: one recorded conversation per trial, in trial order.
/// Their first replies differ, so the replay responder serves trial K's session from
/// conversation K (the first whose reply was not served yet).
fn stand_in() -> Cassette {
    let mut text = String::from("models:\n  - claude-sonnet-4.5\nconversations:\n");
    for (written, characters) in WRITTEN {
        text.push_str(&format!(
            r#"  - messages:
      - role: system
        content: ${{system}}
      - role: user
        content: Create a file called 'greeting.txt' with the content 'Hello, Ferris!'.
      - role: assistant
        tool_calls:
          - id: toolcall_0
            type: function
            function:
              name: create
              arguments: '{{"file_text":"{written}","path":"${{workdir}}/greeting.txt"}}'
      - role: tool
        tool_call_id: toolcall_0
        content: Created file ${{workdir}}/greeting.txt with {characters} characters
      - role: assistant
        content: Created greeting.txt.
"#
        ));
    }
    Cassette::parse(&text, Path::new("stand-in.yaml")).unwrap()
}

/// `cargo copilot-eval -p quickstart --plain --exact creates_a_greeting_file -j 1 ARGS --json ..`
/// with `env`; returns the exit status, stderr and the results.
async fn quickstart(
    scratch: &Path,
    name: &str,
    args: &[&str],
    env: Vec<(&'static str, String)>,
) -> (i32, String, Option<SuiteReport>) {
    let json = scratch.join(format!("{name}.json"));
    let mut command = std::process::Command::new(command_path());
    command
        .args(["copilot-eval", "-p", "quickstart", "--plain", "-j", "1"])
        .args(["--exact", EVAL])
        .args(args)
        .arg("--json")
        .arg(&json)
        .current_dir(workspace_root())
        .env("TMPDIR", scratch)
        .env_remove("CI")
        .env_remove("COPILOT_EVAL_MODE")
        .env_remove(copilot_eval_core::harness::ENV_LIVE_BASE_URL);
    for (key, value) in env {
        command.env(key, value);
    }
    let output = tokio::task::spawn_blocking(move || command.output().expect("the command runs"))
        .await
        .unwrap();
    let report = std::fs::read_to_string(&json)
        .ok()
        .map(|text| serde_json::from_str(&text).unwrap());
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        report,
    )
}

/// A cassette's text without its comment lines and its `recorded:` date.
fn comparable(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim_start().starts_with("recorded:"))
        .collect();
    lines.join("\n")
}

/// The comment the committed trial cassettes carry instead of the recording's.
fn committed_comment(trial: usize) -> String {
    let (written, _) = WRITTEN[trial - 1];
    let verdict = if trial.is_multiple_of(2) {
        "fails"
    } else {
        "passes"
    };
    format!(
        "Trial {trial} of 5 of quickstart's `{EVAL}`, recorded by `cargo copilot-eval --record\n--trials 5` against a loopback stand-in for the model service, NOT live Copilot\n(tests/tests/recorded_trials.rs): its model writes \"{written}\" into greeting.txt, so the\neval {verdict} in this trial. Recreate: COPILOT_EVAL_UPDATE_TRIALS=1 cargo test -p\ncopilot-eval-e2e --test recorded_trials; replay: cargo copilot-eval -p quickstart --replay\n--trials 5 {EVAL}."
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_trial_records_its_own_cassette_and_a_replay_names_missing_ones() {
    if runtime_for("each_trial_records_its_own_cassette_and_a_replay_names_missing_ones").is_none()
    {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("cassette-root");
    let root_arg = root.display().to_string();
    let folder = root.join(format!("tests/cassettes/evals/{EVAL}"));
    let trial_file = |k: u32| folder.join(format!("trial-{k}.yaml"));

    // 1. Record five trials into an empty cassette root, the stand-in serving trial K's session
    // from its conversation K.
    let server = ModelServer::start(
        ServerConfig::new(Arc::new(ReplayResponder::new(Arc::new(stand_in()))))
            .model("claude-sonnet-4.5"),
    )
    .await
    .unwrap();
    let live = vec![(
        copilot_eval_core::harness::ENV_LIVE_BASE_URL,
        server.base_url(),
    )];
    let (status, stderr, report) = quickstart(
        scratch.path(),
        "record",
        &["--record", "--trials", "5", "--cassette-root", &root_arg],
        live,
    )
    .await;
    server.shutdown().await;
    assert_eq!(status, 1, "two trials fail: {stderr}");
    let report = report.expect("record results");
    let outcomes: Vec<(Option<u32>, Outcome)> = report
        .tests
        .iter()
        .map(|t| (t.trial.map(|t| t.trial), t.outcome))
        .collect();
    assert_eq!(
        outcomes,
        [
            (Some(1), Outcome::Passed),
            (Some(2), Outcome::Failed),
            (Some(3), Outcome::Passed),
            (Some(4), Outcome::Failed),
            (Some(5), Outcome::Passed),
        ],
        "{stderr}"
    );
    assert!(
        stderr.contains("cassettes: 5 recorded, 0 kept (replayed), 0 not written"),
        "{stderr}"
    );
    for (test, k) in report.tests.iter().zip(1..) {
        let recording = test.runs[0].recording.as_ref().expect("a recording");
        assert!(recording.written, "trial {k}: {recording:?}");
        assert_eq!(Path::new(&recording.cassette), trial_file(k));
        assert_eq!(
            test.cassette.as_deref().map(Path::new),
            Some(&*trial_file(k))
        );
    }
    assert!(
        !root
            .join(format!("tests/cassettes/evals/{EVAL}.yaml"))
            .exists(),
        "no single cassette is written in trials"
    );

    // They are the quick-start's committed trial set (or become it).
    for k in 1..=5 {
        let recorded = std::fs::read_to_string(trial_file(k)).unwrap();
        let committed = committed_folder().join(format!("trial-{k}.yaml"));
        if std::env::var("COPILOT_EVAL_UPDATE_TRIALS").as_deref() == Ok("1") {
            let cassette = Cassette::load(&trial_file(k)).unwrap();
            cassette
                .write(&committed, &committed_comment(k as usize))
                .unwrap();
        }
        let committed_text = std::fs::read_to_string(&committed).unwrap_or_default();
        assert_eq!(
            comparable(&committed_text),
            comparable(&recorded),
            "{} is not what `--record --trials 5` records; recreate it with COPILOT_EVAL_UPDATE_TRIALS=1",
            committed.display()
        );
    }

    // 2. With the stand-in gone, --record keeps (replays) every trial's cassette.
    let closed = vec![(
        copilot_eval_core::harness::ENV_LIVE_BASE_URL,
        "http://127.0.0.1:9".to_owned(),
    )];
    let (status, stderr, report) = quickstart(
        scratch.path(),
        "record-missing",
        &["--record", "--trials", "5", "--cassette-root", &root_arg],
        closed,
    )
    .await;
    assert_eq!(status, 1, "{stderr}");
    assert!(
        stderr.contains("cassettes: 0 recorded, 5 kept (replayed), 0 not written"),
        "{stderr}"
    );
    for (test, k) in report.unwrap().tests.iter().zip(1..) {
        let replay = test.runs[0].replay.as_ref().expect("replayed");
        assert_eq!(Path::new(&replay.cassette), trial_file(k));
    }

    // 3. --replay without --trials: the eval has only trial cassettes; the error says how to
    // replay them.
    let (status, stderr, report) = quickstart(
        scratch.path(),
        "replay-once",
        &["--replay", "--cassette-root", &root_arg],
        vec![],
    )
    .await;
    assert_eq!(status, 3, "a setup error: {stderr}");
    let test = &report.unwrap().tests[0];
    assert_eq!(test.outcome, Outcome::Error);
    let message = test.message.clone().unwrap_or_default();
    for needle in [
        "the eval has only trial cassettes (trial-1, trial-2, trial-3, trial-4, trial-5 in",
        "replay them with `cargo copilot-eval --replay --trials 5`",
        "no live request was made",
    ] {
        assert!(message.contains(needle), "{needle:?} not in {message}");
    }

    // 4. --replay --trials 7: trials 1 to 5 replay as recorded, trial 6 is a setup error naming
    // both missing cassettes and the fix, trial 7 is not run.
    let (status, stderr, report) = quickstart(
        scratch.path(),
        "replay-more",
        &["--replay", "--trials", "7", "--cassette-root", &root_arg],
        vec![],
    )
    .await;
    assert_eq!(status, 3, "{stderr}");
    let report = report.unwrap();
    let outcomes: Vec<Outcome> = report.tests.iter().map(|t| t.outcome).collect();
    assert_eq!(
        outcomes,
        [
            Outcome::Passed,
            Outcome::Failed,
            Outcome::Passed,
            Outcome::Failed,
            Outcome::Passed,
            Outcome::Error,
            Outcome::NotRun
        ]
    );
    let message = report.tests[5].message.clone().unwrap_or_default();
    for needle in [
        format!(
            "no cassette for trial 6 of 7: missing {}, {}",
            trial_file(6).display(),
            trial_file(7).display()
        ),
        "replay the 5 recorded ones (`--trials 5`)".to_owned(),
        format!("`cargo copilot-eval --record --trials 7 {EVAL}`"),
    ] {
        assert!(message.contains(&needle), "{needle:?} not in {message}");
    }
}

/// The quick-start's committed trial set replays five times to the same figures: 3 of 5
/// passed (trials 2 and 4 failed), each trial from its own cassette.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_quickstart_trial_set_replays_to_the_same_figures_every_time() {
    if runtime_for("the_quickstart_trial_set_replays_to_the_same_figures_every_time").is_none() {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let mut summaries = Vec::new();
    for replay in 1..=5 {
        let (status, stderr, report) = quickstart(
            scratch.path(),
            &format!("replay-{replay}"),
            &["--replay", "--trials", "5", "--min-pass-rate", "60"],
            vec![],
        )
        .await;
        assert_eq!(status, 0, "3 of 5 pass at --min-pass-rate 60: {stderr}");
        // The line docs/trials.md shows.
        assert!(
            stderr.contains("    quickstart::evals creates_a_greeting_file: 3/5 passed (60%, 95% CI 23%-88%), flaky, pass@1 0.60, pass@5 1.00, pass^1 0.60, pass^5 0.00 -> passed (needs 60%); failed trials: 2, 4\n"),
            "{stderr}"
        );
        let report = report.unwrap();
        let [summary] = &report.trial_summaries[..] else {
            panic!("one summary: {:#?}", report.trial_summaries)
        };
        assert_eq!(summary.pass_rate, Some(0.6), "{summary:#?}");
        assert_eq!(summary.failed_trials, [2, 4], "{summary:#?}");
        assert_eq!(summary.verdict, Outcome::Passed, "{summary:#?}");
        for (test, k) in report.tests.iter().zip(1..) {
            assert_eq!(
                test.trial,
                Some(TrialOf {
                    trial: k,
                    trials: 5
                })
            );
            let cassette = &test.runs[0].replay.as_ref().expect("replayed").cassette;
            assert_eq!(
                Path::new(cassette),
                committed_folder().join(format!("trial-{k}.yaml"))
            );
        }
        summaries.push(serde_json::to_value(summary).unwrap());
    }
    assert!(
        summaries.iter().all(|s| *s == summaries[0]),
        "the replays' figures differ: {summaries:#?}"
    );
}
