//! "Can this eval tell?" (docs/can-this-eval-tell.md), end to end through the runner and the
//! real runtime:
//!
//! - `--stop-early` on the quick-start's recorded trials of `creates_a_greeting_file` (trial 2
//!   and 4 write the wrong greeting): every trial must pass, so trial 2 decides "failed" and
//!   trials 3 to 5 are skipped, never run; with `--min-pass-rate 40` (2 of 5 needed), trial 3
//!   is the second pass and decides "passed";
//! - `plan --detect 20`: the runs the options cost and the trials per side a 20-point
//!   difference needs at 50%, nothing run (the quick-start's tests are built, as for a run);
//! - `--aa`: the scripted `names_the_capital_in_most_trials` (wrong in trials 2 and 4 by
//!   `ctx.trial()`) gives the same verdict on both arms in every trial: a flip rate of 0.

mod support;

use copilot_eval_core::report::aa::Arm;
use copilot_eval_core::report::{Outcome, TrialOf};
use copilot_eval_e2e::runtime_for;
use support::{command_path, workspace_root};

const GREETING: &str = "creates_a_greeting_file";

/// `--replay --trials 5 --stop-early -j 1` on the recorded flaky eval with `extra`.
fn stop_early(extra: &[&str]) -> support::SuiteRun {
    let args = [
        &[
            "-p",
            "quickstart",
            "--exact",
            GREETING,
            "--trials",
            "5",
            "--stop-early",
            "-j",
            "1",
        ][..],
        extra,
    ]
    .concat();
    support::copilot_eval(&workspace_root(), &args, &[])
}

#[test]
fn stop_early_ends_an_evals_trials_once_its_verdict_cannot_change() {
    if runtime_for("stop_early_ends_an_evals_trials_once_its_verdict_cannot_change").is_none() {
        return;
    }
    // Every trial must pass: trial 1 passes, trial 2 fails, and nothing can undo that.
    let run = stop_early(&[]);
    assert_eq!(run.status, 1, "the eval fails: {}", run.stderr);
    let outcomes: Vec<(u32, Outcome, usize)> = (run.report.tests.iter())
        .map(|t| (t.trial.unwrap().trial, t.outcome, t.runs.len()))
        .collect();
    assert_eq!(
        outcomes,
        vec![
            (1, Outcome::Passed, 1),
            (2, Outcome::Failed, 1),
            (3, Outcome::NotRun, 0),
            (4, Outcome::NotRun, 0),
            (5, Outcome::NotRun, 0),
        ],
        "exactly two trials ran, one session each"
    );
    let why = "1 trial failed and every trial must pass: it fails whatever the 3 trials left give";
    for skipped in &run.report.tests[2..] {
        let early = skipped.stopped_early.as_ref().expect("skipped by the rule");
        assert_eq!((early.after_trial, early.verdict), (2, Outcome::Failed));
        assert_eq!(early.reason, why);
        let label = format!(
            "{GREETING} {}",
            TrialOf {
                trial: skipped.trial.unwrap().trial,
                trials: 5
            }
            .label()
        );
        assert_eq!(run.junit_kind(&label), "skipped");
        assert_eq!(
            run.junit_message(&label),
            format!("skipped: stopped early after trial 2 of 5 (--stop-early): {why}")
        );
    }
    let [summary] = &run.report.trial_summaries[..] else {
        panic!("one summary: {:#?}", run.report.trial_summaries)
    };
    assert_eq!(
        (
            summary.passed,
            summary.failed,
            summary.not_run,
            summary.skipped
        ),
        (1, 1, 0, 3)
    );
    assert_eq!(summary.verdict, Outcome::Failed);
    assert!(
        run.stderr.contains(&format!(
            "quickstart::evals {GREETING}: 1/2 passed (50%, 95% CI 9%-91%), flaky, pass@1 0.50, pass@2 1.00, pass^1 0.50, pass^2 0.00 -> failed (every trial must pass); failed trials: 2; stopped early after trial 2 (--stop-early): {why}; 3 trials skipped"
        )),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!(
            "    SKIP [   0.000s] quickstart::evals {GREETING} [trial 3/5]\n             skipped: stopped early after trial 2 of 5 (--stop-early): {why}\n"
        )),
        "each skipped trial has its line: {}",
        run.stderr
    );
    assert!(
        run.stderr.contains(
            "5 tests: 1 passed, 1 failed, 0 errors, 0 not run, 3 skipped (--stop-early)\n"
        ),
        "{}",
        run.stderr
    );

    // Needs 40% of 5, 2 passes: trials 1 and 3 pass, so trial 3 decides "passed".
    let run = stop_early(&["--min-pass-rate", "40"]);
    assert_eq!(run.status, 0, "the eval passes: {}", run.stderr);
    let ran: Vec<Outcome> = (run.report.tests.iter())
        .filter(|t| t.stopped_early.is_none())
        .map(|t| t.outcome)
        .collect();
    assert_eq!(ran, vec![Outcome::Passed, Outcome::Failed, Outcome::Passed]);
    let [summary] = &run.report.trial_summaries[..] else {
        panic!("one summary")
    };
    assert_eq!((summary.skipped, summary.verdict), (2, Outcome::Passed));
    assert_eq!(
        summary.stopped_early.as_ref().unwrap().reason,
        "2 of 5 trials passed already and the eval needs 40% of 5 (2): it passes whatever the 2 trials left give"
    );
}

/// `plan` builds and lists, runs nothing, and prints the count and the power calculation.
#[test]
fn plan_prints_the_runs_and_the_trials_a_20_point_difference_needs() {
    let output = std::process::Command::new(command_path())
        .args(["copilot-eval", "plan", "-p", "quickstart", "--replay"])
        .args([
            "--exact", GREETING, "--trials", "5", "--aa", "--detect", "20",
        ])
        .current_dir(workspace_root())
        .output()
        .expect("the command runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // 1 eval x 5 trials x 2 sides (--aa) = 10 runs.
    assert!(
        stdout.starts_with(&format!(
            "plan: 1 eval x 5 trials x 2 sides (--aa: arm A and arm B) = 10 runs (nothing runs now)\n     10 runs  est. unknown      quickstart::evals {GREETING}\n"
        )),
        "{stdout}"
    );
    // By hand (two-proportion test, alpha 0.05 two-sided, power 0.8): p1 = 0.5, p2 = 0.7,
    // p̄ = 0.6; z(0.975) = 1.959964, z(0.8) = 0.841621;
    // (1.959964 * sqrt(2 * 0.6 * 0.4) + 0.841621 * sqrt(0.5 * 0.5 + 0.7 * 0.3))²
    // = (1.959964 * 0.692820 + 0.841621 * 0.678233)² = (1.357903 + 0.570815)² = 3.719953,
    // / 0.2² = 92.999, rounded up: 93 trials per side.
    assert!(
        stdout.contains(
            "  at a 50% base rate (assumed, --base-rate): 93 trials per side (this plan: 5, too few)\n"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("spend: none: --replay"), "{stdout}");
}

/// `plan` applies the profile a suite run would (`--profile NAME` of the nearest
/// `.config/copilot-eval.toml`), and the command line still wins over it: a profile giving
/// `--trials 3` plans 3 runs, and `--trials 2` on the command line plans 2.
#[test]
fn plan_applies_the_profile_a_run_would() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::create_dir(folder.path().join(".config")).unwrap();
    std::fs::write(
        folder.path().join(".config/copilot-eval.toml"),
        "[profile.three]\ntrials = 3\n",
    )
    .unwrap();
    let manifest = workspace_root().join("Cargo.toml");
    let plan = |extra: &[&str]| {
        let output = std::process::Command::new(command_path())
            .args(["copilot-eval", "plan", "--manifest-path"])
            .arg(&manifest)
            .args(["-p", "quickstart", "--replay", "--exact", GREETING])
            .args(["--profile", "three"])
            .args(extra)
            // The workspace's .cargo/config.toml is not found from this folder: its [env].
            .env("COPILOT_SKIP_CLI_DOWNLOAD", "1")
            .current_dir(folder.path())
            .output()
            .expect("the command runs");
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert_eq!(output.status.code(), Some(0), "{stdout}{stderr}");
        (stdout, stderr)
    };
    let (stdout, stderr) = plan(&[]);
    assert!(
        stderr.contains(&format!(
            "profile three ({}): --trials 3\n",
            folder.path().join(".config/copilot-eval.toml").display()
        )),
        "{stderr}"
    );
    assert!(
        stdout.starts_with("plan: 1 eval x 3 trials x 1 side = 3 runs (nothing runs now)\n"),
        "{stdout}"
    );
    let (stdout, _) = plan(&["--trials", "2"]);
    assert!(
        stdout.starts_with("plan: 1 eval x 2 trials x 1 side = 2 runs (nothing runs now)\n"),
        "{stdout}"
    );
}

#[test]
fn aa_gives_the_flip_rate_between_two_arms_of_the_same_configuration() {
    if runtime_for("aa_gives_the_flip_rate_between_two_arms_of_the_same_configuration").is_none() {
        return;
    }
    let args = [
        "-p",
        "scripted",
        "--exact",
        "names_the_capital_in_most_trials",
        "--trials",
        "5",
        "--aa",
        "-j",
        "2",
    ];
    let run = support::copilot_eval(&workspace_root(), &args, &[]);
    // Arm A fails trials 2 and 4 (every trial must pass): status 1; arm B never counts.
    assert_eq!(run.status, 1, "{}", run.stderr);
    let arms: Vec<(Option<Arm>, u32, Outcome)> = (run.report.tests.iter())
        .map(|t| (t.arm, t.trial.unwrap().trial, t.outcome))
        .collect();
    assert_eq!(arms.len(), 10, "{arms:?}");
    for arm in [Arm::A, Arm::B] {
        let failed: Vec<u32> = (arms.iter())
            .filter(|(a, _, o)| *a == Some(arm) && *o == Outcome::Failed)
            .map(|(_, trial, _)| *trial)
            .collect();
        assert_eq!(failed, vec![2, 4], "{arm:?}");
    }
    assert!(
        (run.report.tests.iter())
            .filter(|t| t.arm == Some(Arm::B))
            .all(|t| t.name == "names_the_capital_in_most_trials (arm B)")
    );
    let floor = run.report.noise_floor.as_ref().expect("a noise floor");
    assert_eq!((floor.pairs, floor.flips, floor.not_compared), (5, 0, 0));
    assert_eq!(floor.flip_rate, Some(0.0));
    assert!(
        run.stderr.contains("  noise floor (A/A: the same configuration as arm A and arm B):\n    0 of 5 (eval, trial) pairs flipped: flip rate 0% (95% CI 0%-43%)\n"),
        "{}",
        run.stderr
    );
}
