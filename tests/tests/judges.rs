//! Judges (`ctx.judge`, `ctx.judge_pair`) end to end, through the real `cargo copilot-eval`,
//! the real runtime and the scripted example's `tests/judges.rs`:
//!
//! - a rubric judge's verdicts, scores, reasons and cost are in the JSON (valid against the
//!   committed schema), the JUnit properties, the terminal summary and the HTML page; its
//!   session is a run labelled `judge`, counted in the test's cost;
//! - a judge whose answer is not JSON gives an error naming the criterion, never a verdict;
//! - a pairwise judge whose two orders agree reports the preference, one whose orders disagree
//!   reports `inconsistent`;
//! - in trials, each rubric criterion's pass rate over the trials;
//! - each `JudgeError` as documented, in process: a rubric that cannot be used, material that
//!   cannot be read (no session is run), a judge session that did not complete, an answer that
//!   gives one criterion two verdicts; `judge_model` (the judge's request goes to that model)
//!   and `tools` (the judge's request offers exactly those tools);
//! - over trials, a judge error stays out of the pass rate (`passed 2/2`, 1 judge error);
//! - a changed judge prompt makes the judge's replay stop with `replay_mismatch`, and the judge
//!   reports the session's error, never a verdict;
//! - the quick-start's `judges_the_announcement`, recorded with a scripted model standing in
//!   for the model service (`--record`: the eval's run into `<test>.yaml`, the judge's into
//!   `<test>-2.yaml`, the example's committed cassettes; set `COPILOT_EVAL_UPDATE_CASSETTES=1`
//!   to write them there instead, then re-run), replays offline with the same verdicts.

use std::path::Path;
use std::sync::Arc;

use copilot_eval_core::StopReason;
use copilot_eval_core::harness::judge::{JudgeError, Material, Rubric};
use copilot_eval_core::harness::{EvalContext, TestConfig};
use copilot_eval_core::model_server::{
    ModelServer, Script, ScriptCatalog, ScriptedTurn, ScriptedUsage, ServerConfig,
};
use copilot_eval_core::report::{JudgeKind, JudgeVerdict, Outcome};
use copilot_eval_e2e::runtime_for;
use serde_json::json;

mod support;

use support::{command_path, workspace_root};

#[test]
fn judges_appear_in_every_report_with_their_verdicts_reasons_and_cost() {
    let test = "judges_appear_in_every_report_with_their_verdicts_reasons_and_cost";
    if runtime_for(test).is_none() {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let html = out.path().join("report.html");
    // `support::copilot_eval` checks the JSON against the committed schema.
    let run = support::copilot_eval(
        &workspace_root(),
        &[
            "-p",
            "scripted",
            "--html",
            html.to_str().unwrap(),
            "judge",
            "prefers_an_answer",
        ],
        &[],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(
        run.outcomes(),
        [
            (
                "a_judge_answer_that_is_not_json_is_an_error",
                Outcome::Passed
            ),
            (
                "a_judge_sampled_three_times_reports_its_agreement",
                Outcome::Passed
            ),
            ("judges_the_release_notes", Outcome::Passed),
            ("prefers_an_answer_in_both_orders", Outcome::Passed),
        ]
    );

    // The rubric judge: a run labelled judge, and the record with verdicts, scores, reasons.
    let judged = run.test("judges_the_release_notes");
    let labels: Vec<Option<&str>> = judged.runs.iter().map(|r| r.label.as_deref()).collect();
    assert_eq!(labels, [None, Some("judge")]);
    assert!(
        judged.runs[1].working_directory.ends_with("judge-1"),
        "{}",
        judged.runs[1].working_directory.display()
    );
    assert_eq!(judged.judges.len(), 1, "{judged:#?}");
    let judge = &judged.judges[0];
    assert_eq!(judge.kind, JudgeKind::Rubric);
    assert_eq!(judge.material, "files: NOTES.md");
    assert_eq!(judge.judged_runs, [1]);
    assert_eq!(judge.model.as_deref(), Some("claude-sonnet-4.5"));
    assert!(judge.tools.is_empty());
    assert_eq!(judge.error, None);
    let verdicts: Vec<(&str, JudgeVerdict, Option<i64>, &str)> = judge
        .verdicts
        .iter()
        .map(|v| {
            (
                v.criterion.as_str(),
                v.verdict,
                v.score,
                v.reasons[0].as_str(),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            (
                "names the version",
                JudgeVerdict::Pass,
                None,
                "The heading names 2.4.1."
            ),
            (
                "clear",
                JudgeVerdict::Pass,
                Some(4),
                "One short, plain line."
            ),
        ]
    );
    // Its cost: the judge session's own tokens, and counted in the test's.
    let session = &judge.sessions[0];
    assert_eq!(session.run, 2);
    assert_eq!(
        (session.input_tokens, session.output_tokens),
        (Some(900), Some(60))
    );
    assert_eq!(session.model_calls, 1);
    let cost = judged.cost.as_ref().expect("a cost");
    assert_eq!(cost.input_tokens, 5000 + 5100 + 900, "{cost:?}");
    assert_eq!(judged.runs[1].totals.input_tokens, 900);

    // JUnit: the run's label, each criterion, the summary and the cost.
    let name = "judges_the_release_notes";
    assert_eq!(
        run.junit_property(name, "copilot_eval.run.2.label"),
        "judge"
    );
    assert_eq!(
        run.junit_property(name, "copilot_eval.judge.1.criterion.clear"),
        "verdict=pass score=4 reason=One short, plain line."
    );
    assert_eq!(
        run.junit_property(name, "copilot_eval.judge.1.criterion.names the version"),
        "verdict=pass reason=The heading names 2.4.1."
    );
    assert_eq!(
        run.junit_property(name, "copilot_eval.judge.1.cost"),
        "1 session (run 2), 1 model call, 960 tokens, premium requests 0, estimated cost not priced"
    );
    let line = judge.line();
    assert_eq!(
        run.junit_property(name, "copilot_eval.judge.1.summary"),
        line
    );
    // The terminal summary.
    assert!(
        run.stderr
            .contains(&format!("\n  judge scripted::judges {name}: {line}\n")),
        "{}",
        run.stderr
    );
    assert!(
        line.starts_with(
            "rubric judge of run 1 on claude-sonnet-4.5 (files: NOTES.md): names the version: pass, clear: pass (score 4); 1 session (run 2)"
        ),
        "{line}"
    );

    // An answer that is not JSON: an error naming the criterion, and no verdict.
    let broken = &run
        .test("a_judge_answer_that_is_not_json_is_an_error")
        .judges[0];
    assert!(broken.verdicts.is_empty(), "{broken:#?}");
    let error = broken.error.as_deref().expect("an error");
    assert!(
        error.starts_with("the judge's answer (run 2) is not the JSON object asked for")
            && error.ends_with("first criterion: `names the version`"),
        "{error}"
    );
    assert_eq!(
        run.junit_property(
            "a_judge_answer_that_is_not_json_is_an_error",
            "copilot_eval.judge.1.error"
        ),
        error
    );

    // The pairwise judges: both orders each; a preference only when they agree.
    let pair = run.test("prefers_an_answer_in_both_orders");
    assert_eq!(pair.judges.len(), 2);
    /// A pairwise judge's verdict on its one criterion, its sessions' runs and their orders.
    type PairOutcome<'a> = (JudgeVerdict, Vec<u64>, Vec<Option<&'a str>>);
    let outcome: Vec<PairOutcome> = pair
        .judges
        .iter()
        .map(|j| {
            assert_eq!(j.kind, JudgeKind::Pairwise);
            assert_eq!(j.judged_runs, [1, 2]);
            (
                j.verdicts[0].verdict,
                j.sessions.iter().map(|s| s.run).collect(),
                j.sessions.iter().map(|s| s.order.as_deref()).collect(),
            )
        })
        .collect();
    assert_eq!(
        outcome,
        [
            (JudgeVerdict::A, vec![3, 4], vec![Some("a_b"), Some("b_a")]),
            (
                JudgeVerdict::Inconsistent,
                vec![5, 6],
                vec![Some("a_b"), Some("b_a")]
            ),
        ]
    );
    assert_eq!(
        run.junit_property(
            "prefers_an_answer_in_both_orders",
            "copilot_eval.judge.2.criterion.informative"
        ),
        "verdict=inconsistent reason=Answer 1 comes first. | Answer 1 comes first."
    );

    // A judge sampled three times that disagrees with itself once: the majority verdict with
    // 2/3 agreement, in the JSON, the JUnit, the terminal and the page.
    let sampled_name = "a_judge_sampled_three_times_reports_its_agreement";
    let sampled = &run.test(sampled_name).judges[0];
    assert_eq!(sampled.samples, Some(3));
    assert_eq!(
        (sampled.sessions.iter().map(|s| s.run)).collect::<Vec<_>>(),
        [2, 3, 4]
    );
    let verdict = &sampled.verdicts[0];
    assert_eq!(verdict.verdict, JudgeVerdict::Pass);
    let agreement = verdict.agreement.expect("an agreement");
    assert_eq!((agreement.agreeing, agreement.samples), (2, 3));
    assert_eq!(
        run.junit_property(
            sampled_name,
            "copilot_eval.judge.1.criterion.names the version"
        ),
        "verdict=pass agreement=2/3 reason=It names 2.4.1. | No version is named. | 2.4.1 is there."
    );
    let sampled_line = sampled.line();
    assert!(
        sampled_line.contains(
            "(final response): names the version: pass (2/3 samples agree); 3 sessions (runs 2, 3, 4)"
        ),
        "{sampled_line}"
    );
    assert!(
        run.stderr.contains(&format!(
            "\n  judge scripted::judges {sampled_name}: {sampled_line}\n"
        )),
        "{}",
        run.stderr
    );

    // The page: a judge table per judge, with each criterion's verdict, and the cost.
    let page = std::fs::read_to_string(&html).unwrap();
    for expected in [
        "<table class=\"judge\" data-judge=\"1\" data-kind=\"rubric\">",
        "<tr class=\"judge-criterion\" data-criterion=\"clear\" data-verdict=\"pass\">",
        "<td class=\"score\">4</td>",
        "One short, plain line.",
        "<table class=\"judge\" data-judge=\"2\" data-kind=\"pairwise\">",
        "data-criterion=\"informative\" data-verdict=\"inconsistent\"",
        "1 session (run 2), 1 model call, 960 tokens, premium requests 0, estimated cost not priced",
        "data-label=\"judge\"",
        "3 samples, verdict by majority",
        "<td class=\"agreement\">2&#x2f;3</td>",
    ] {
        assert!(page.contains(expected), "the page lacks {expected:?}");
    }
}

#[test]
fn over_trials_each_rubric_criterion_has_its_pass_rate() {
    let test = "over_trials_each_rubric_criterion_has_its_pass_rate";
    if runtime_for(test).is_none() {
        return;
    }
    let name = "judges_the_release_notes";
    let out = tempfile::tempdir().unwrap();
    let html = out.path().join("report.html");
    let run = support::copilot_eval(
        &workspace_root(),
        &[
            "-p",
            "scripted",
            "--exact",
            name,
            "--trials",
            "3",
            "-j",
            "2",
            "--html",
            html.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.report.tests.len(), 3);
    // A verdict per trial: the judge found the notes unclear in trial 2 only.
    let clear: Vec<(u32, JudgeVerdict)> = run
        .report
        .tests
        .iter()
        .map(|t| (t.trial.unwrap().trial, t.judges[0].verdicts[1].verdict))
        .collect();
    assert_eq!(
        clear,
        [
            (1, JudgeVerdict::Pass),
            (2, JudgeVerdict::Fail),
            (3, JudgeVerdict::Pass)
        ]
    );
    let summary = &run.report.trial_summaries[0];
    let rates: Vec<(u32, &str, u32, u32, u32)> = summary
        .judge_criteria
        .iter()
        .map(|c| {
            (
                c.judge,
                c.criterion.as_str(),
                c.passed,
                c.trials,
                c.judge_errors,
            )
        })
        .collect();
    assert_eq!(
        rates,
        [(1, "names the version", 3, 3, 0), (1, "clear", 2, 3, 0)]
    );
    let clear = &summary.judge_criteria[1];
    assert!((clear.pass_rate.unwrap() - 2.0 / 3.0).abs() < 1e-9);
    let line = copilot_eval_core::report::judge_trials::line(clear);
    assert_eq!(line, "judge 1, clear: passed 2/3 (67%, 95% CI 21%-94%)");
    assert!(
        run.stderr.contains(&format!("\n      {line}\n")),
        "{}",
        run.stderr
    );
    assert_eq!(
        run.junit_property(
            &format!("{name} [trial 1/3]"),
            "copilot_eval.trials.judge.1.criterion.clear"
        ),
        "passed=2/3 pass_rate=0.6667 interval=0.2077-0.9385 judge_errors=0"
    );
    // The page's "Judges over trials" table.
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<table class=\"trial-judges\">"),
        "no judges table"
    );
    assert!(
        page.contains(&format!(
            "<tr class=\"trial-judge\" data-name=\"{name}\" data-criterion=\"clear\">"
        )),
        "no row for clear"
    );
    // minijinja escapes `/` in the page.
    assert!(page.contains("<td class=\"passed\">2&#x2f;3</td>"));
}

const QUICKSTART: &str = "judges_the_announcement";

fn usage(input_tokens: u64, output_tokens: u64) -> ScriptedUsage {
    ScriptedUsage {
        input_tokens,
        output_tokens,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
    }
}

/// The cassette file without its comment lines and its `recorded:` date.
fn undated(path: &Path) -> String {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim_start().starts_with("recorded:"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_session_records_its_own_cassette_with_a_scripted_model() {
    if runtime_for("a_judge_session_records_its_own_cassette_with_a_scripted_model").is_none() {
        return;
    }
    // The model service's side: the eval's answer, then the judge's.
    let script = Script::new([])
        .turn(
            ScriptedTurn::text("ferris-cli 2.4.1 is out: startup is twice as fast.")
                .with_usage(usage(5120, 14)),
        )
        .turn(
            ScriptedTurn::text(
                json!({"criteria": [
                    {"name": "names the version", "verdict": "pass", "score": null,
                     "reason": "It names 2.4.1."},
                    {"name": "one line", "verdict": "pass", "score": 5,
                     "reason": "One plain line."}
                ]})
                .to_string(),
            )
            .with_usage(usage(610, 52)),
        );
    let server = ModelServer::start(ServerConfig::new(Arc::new(script)).model("claude-sonnet-4.5"))
        .await
        .unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("cassette-root");
    let json = scratch.path().join("record.json");
    let mut command = std::process::Command::new(command_path());
    command
        .args([
            "copilot-eval",
            "-p",
            "quickstart",
            "--plain",
            "--record=all",
        ])
        .arg("--cassette-root")
        .arg(&root)
        .arg("--json")
        .arg(&json)
        .args(["--exact", QUICKSTART])
        .current_dir(workspace_root())
        .env("TMPDIR", scratch.path())
        .env_remove("CI")
        .env_remove("COPILOT_EVAL_MODE")
        .env(
            copilot_eval_core::harness::ENV_LIVE_BASE_URL,
            server.base_url(),
        );
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    server.shutdown().await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("cassettes: 2 recorded, 0 kept (replayed), 0 not written"),
        "{stderr}"
    );
    let report: copilot_eval_core::report::SuiteReport =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let test = &report.tests[0];
    assert_eq!(test.judges.len(), 1, "{test:#?}");
    assert!(test.judges[0].all_passed(), "{:#?}", test.judges[0]);
    let folder = root.join("tests/cassettes/evals");
    let expected = [
        (
            None,
            folder.join(format!("{QUICKSTART}.yaml")),
            "startup is twice as fast",
        ),
        (
            Some("judge"),
            folder.join(format!("{QUICKSTART}-2.yaml")),
            "One plain line.",
        ),
    ];
    assert_eq!(test.runs.len(), 2);
    for (run, (label, cassette, answer)) in test.runs.iter().zip(&expected) {
        assert_eq!(run.label.as_deref(), *label);
        let recording = run.recording.as_ref().expect("a recording");
        assert!(recording.written, "{label:?}: {recording:?}");
        assert_eq!(Path::new(&recording.cassette), cassette.as_path());
        let text = std::fs::read_to_string(cassette).unwrap();
        assert!(text.contains(answer), "{label:?}: {text}");
    }
    // The judge's cassette holds the judge prompt, and no tool was offered to it.
    let judge = undated(&expected[1].1);
    assert!(judge.contains("You are a judge."), "{judge}");

    let committed = workspace_root().join("examples/quickstart/tests/cassettes/evals");
    let update = std::env::var("COPILOT_EVAL_UPDATE_CASSETTES").as_deref() == Ok("1");
    for (label, recorded, _) in &expected {
        let what = label.unwrap_or("eval");
        let target = committed.join(recorded.file_name().unwrap());
        if update {
            let body = std::fs::read_to_string(recorded).unwrap();
            let body: Vec<&str> = body.lines().filter(|l| !l.starts_with('#')).collect();
            std::fs::write(
                &target,
                format!(
                    "# Cassette of the {what} run of quickstart's `{QUICKSTART}`, recorded by\n# tests/tests/judges.rs with a scripted model standing in for the model service.\n{}\n",
                    body.join("\n")
                ),
            )
            .unwrap();
        }
        assert_eq!(
            undated(recorded),
            undated(&target),
            "{what}: the recording differs from {} (re-record with COPILOT_EVAL_UPDATE_CASSETTES=1)",
            target.display()
        );
    }
}

/// Re-judging without running the agent again: the quick-start's cassettes copied, the
/// judge's recorded prompt changed (as a changed rubric changes the prompt), then
/// `--record=judges` with a scripted model standing in for the model service that holds ONLY
/// the judge's new answer. The agent's run replays its cassette (had it gone live, it would
/// have taken the judge's answer and the judge would have found its script exhausted); the
/// judge session runs live and records its cassette again; the summary marks its verdicts new.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_judges_re_runs_only_the_judge_sessions() {
    if runtime_for("record_judges_re_runs_only_the_judge_sessions").is_none() {
        return;
    }
    let script = Script::new([]).turn(
        ScriptedTurn::text(
            json!({"criteria": [
                {"name": "names the version", "verdict": "pass", "score": null,
                 "reason": "Judged again: it names 2.4.1."},
                {"name": "one line", "verdict": "pass", "score": 4,
                 "reason": "Judged again: one line."}
            ]})
            .to_string(),
        )
        .with_usage(usage(610, 52)),
    );
    let server = ModelServer::start(ServerConfig::new(Arc::new(script)).model("claude-sonnet-4.5"))
        .await
        .unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("cassette-root");
    let folder = root.join("tests/cassettes/evals");
    std::fs::create_dir_all(&folder).unwrap();
    let committed = workspace_root().join("examples/quickstart/tests/cassettes/evals");
    for file in [format!("{QUICKSTART}.yaml"), format!("{QUICKSTART}-2.yaml")] {
        let mut text = std::fs::read_to_string(committed.join(&file)).unwrap();
        if file.ends_with("-2.yaml") {
            let criterion = "The announcement names the released version.";
            assert!(text.contains(criterion), "the judge's prompt is recorded");
            text = text.replace(criterion, "The announcement names the new version.");
        }
        std::fs::write(folder.join(&file), text).unwrap();
    }
    let agent_cassette =
        std::fs::read_to_string(folder.join(format!("{QUICKSTART}.yaml"))).unwrap();
    let json = scratch.path().join("record.json");
    let mut command = std::process::Command::new(command_path());
    command
        .args([
            "copilot-eval",
            "-p",
            "quickstart",
            "--plain",
            "--record=judges",
        ])
        .arg("--cassette-root")
        .arg(&root)
        .arg("--json")
        .arg(&json)
        .args(["--exact", QUICKSTART])
        .current_dir(workspace_root())
        .env("TMPDIR", scratch.path())
        .env_remove("CI")
        .env_remove("COPILOT_EVAL_MODE")
        .env(
            copilot_eval_core::harness::ENV_LIVE_BASE_URL,
            server.base_url(),
        );
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    server.shutdown().await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("cassettes: 1 recorded, 1 kept (replayed), 0 not written"),
        "{stderr}"
    );
    let report: copilot_eval_core::report::SuiteReport =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let test = &report.tests[0];
    let modes: Vec<(&str, Option<&str>)> = (test.runs.iter())
        .map(|r| (r.mode.as_str(), r.label.as_deref()))
        .collect();
    assert_eq!(modes, [("replay", None), ("live", Some("judge"))]);
    let judge = &test.judges[0];
    assert!(judge.all_passed(), "{judge:#?}");
    assert_eq!(judge.verdicts[1].reasons, ["Judged again: one line."]);
    assert!(judge.rejudged(&test.runs));
    assert!(
        stderr.contains(&format!(
            "  judge quickstart::evals {QUICKSTART}: {} [new verdicts: judged again over replayed runs]\n",
            judge.line()
        )),
        "{stderr}"
    );
    // The judge's cassette now holds the current prompt and the new answer; the agent's is
    // untouched.
    let judge_cassette =
        std::fs::read_to_string(folder.join(format!("{QUICKSTART}-2.yaml"))).unwrap();
    assert!(judge_cassette.contains("The announcement names the released version."));
    assert!(judge_cassette.contains("Judged again: one line."));
    assert_eq!(
        std::fs::read_to_string(folder.join(format!("{QUICKSTART}.yaml"))).unwrap(),
        agent_cassette
    );
}

#[test]
fn the_quickstart_judge_replays_offline_with_its_verdicts() {
    if runtime_for("the_quickstart_judge_replays_offline_with_its_verdicts").is_none() {
        return;
    }
    let run = support::copilot_eval(
        &workspace_root(),
        &["-p", "quickstart", "--exact", QUICKSTART],
        &[],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    let test = run.test(QUICKSTART);
    let files: Vec<(Option<&str>, &str, String)> = test
        .runs
        .iter()
        .map(|r| {
            let cassette = &r.replay.as_ref().expect("replayed").cassette;
            (
                r.label.as_deref(),
                r.mode.as_str(),
                Path::new(cassette)
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
            )
        })
        .collect();
    assert_eq!(
        files,
        [
            (None, "replay", format!("{QUICKSTART}.yaml")),
            (Some("judge"), "replay", format!("{QUICKSTART}-2.yaml")),
        ]
    );
    let judge = &test.judges[0];
    let verdicts: Vec<(&str, JudgeVerdict, Option<i64>)> = judge
        .verdicts
        .iter()
        .map(|v| (v.criterion.as_str(), v.verdict, v.score))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("names the version", JudgeVerdict::Pass, None),
            ("one line", JudgeVerdict::Pass, Some(5)),
        ]
    );
    // Replayed usage: the judge's tokens, priced by the runner like any replayed run.
    let session = &judge.sessions[0];
    assert_eq!(
        (session.input_tokens, session.output_tokens),
        (Some(610), Some(52))
    );
    assert_eq!(
        session.estimated_cost, test.runs[1].totals.estimated_cost,
        "{session:?}"
    );
    assert!(session.estimated_cost.is_some_and(|c| c > 0.0));
}

/// The context of the in-process test `$function` of this file.
macro_rules! context {
    ($function:literal) => {
        EvalContext::new(TestConfig::new(
            $function,
            concat!("judges::", $function),
            env!("CARGO_MANIFEST_DIR"),
        ))
    };
}

/// A judge's answer as its prompt asks for it.
fn answer(entries: serde_json::Value) -> ScriptedTurn {
    ScriptedTurn::text(json!({ "criteria": entries }).to_string())
}

/// Every judge error of docs/judges.md, through the real runtime: never a verdict, recorded in
/// the test's `judges` with its text as `error`.
#[tokio::test]
async fn each_judge_error_is_returned_and_recorded_never_a_pass() {
    if runtime_for("each_judge_error_is_returned_and_recorded_never_a_pass").is_none() {
        return;
    }
    let ctx = context!("each_judge_error_is_returned_and_recorded_never_a_pass");
    ctx.offline(
        Script::new([])
            .turn(ScriptedTurn::text("ferris-cli 2.4.1 is out."))
            .turn(ScriptedTurn::text("ferris-cli 2.4.0 was last week."))
            // The judge that gives one criterion two opposite verdicts.
            .turn(answer(json!([
                {"name": "names the version", "verdict": "pass", "reason": "It says 2.4.1."},
                {"name": "names the version", "verdict": "fail", "reason": "No version."}
            ]))),
        // No reply is left for the last judge session: it cannot complete.
    );
    let eval = ctx
        .eval()
        .model("claude-sonnet-4.5")
        .timeout_s(120.0)
        .build()
        .unwrap();
    let result = ctx.run(&eval, "Announce ferris-cli 2.4.1.").await;
    let other = ctx.run(&eval, "Announce ferris-cli 2.4.0.").await;
    assert!(result.success && other.success);
    let version =
        || Rubric::new(Material::FinalResponse).criterion("names the version", "It names 2.4.1.");

    // Rubric: no criterion; a score range upside down; judge_pair on Material::Text.
    let error = ctx
        .judge(&result, &Rubric::new(Material::FinalResponse))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, JudgeError::Rubric(why) if why.contains("it has no criterion")),
        "{error}"
    );
    let upside_down = Rubric::new(Material::FinalResponse).scored("clear", "Plain.", 5, 1);
    let error = ctx.judge(&result, &upside_down).await.unwrap_err();
    assert!(
        error.to_string().contains("has the score range 5 to 1"),
        "{error}"
    );
    let text = Rubric::new(Material::Text("same".into())).criterion("c", "x");
    let error = ctx.judge_pair(&result, &other, &text).await.unwrap_err();
    assert!(
        matches!(&error, JudgeError::Rubric(why) if why.contains("not Material::Text")),
        "{error}"
    );
    // Rubric: an even number of samples (a majority could tie); samples on judge_pair.
    let error = ctx.judge(&result, &version().samples(2)).await.unwrap_err();
    assert!(
        matches!(&error, JudgeError::Rubric(why) if why.starts_with("samples(2) is not odd")),
        "{error}"
    );
    let error = ctx
        .judge_pair(&result, &other, &version().samples(3))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, JudgeError::Rubric(why) if why.starts_with("samples(3) is for ctx.judge")),
        "{error}"
    );
    // Material: a file the judged run never wrote; no judge session is run.
    let files = Rubric::new(Material::Files(vec!["NOTES.md".into()])).criterion("c", "x");
    let error = ctx.judge(&result, &files).await.unwrap_err();
    assert!(
        matches!(&error, JudgeError::Material { detail } if detail.starts_with("cannot read the file NOTES.md")),
        "{error}"
    );
    assert_eq!(ctx.evidence().runs.len(), 2, "no judge session ran");

    // Malformed: one criterion, two opposite verdicts: neither is taken.
    let error = ctx.judge(&result, &version()).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "the judge's answer (run 3) for criterion `names the version` is malformed: the answer has 2 entries for it that disagree (`pass` and `fail`): which one the judge meant cannot be told"
    );
    // Session: the judge session could not complete (the script has no reply left for it).
    let error = ctx.judge(&result, &version()).await.unwrap_err();
    assert!(
        matches!(&error, JudgeError::Session { run: 4, stop_reason, .. }
            if *stop_reason == StopReason::ScriptExhausted.to_string()),
        "{error}"
    );

    // Each is recorded as the judge's error, with no verdict.
    let judges = ctx.evidence().judges;
    assert_eq!(judges.len(), 8);
    for (judge, error) in judges.iter().zip([
        "the rubric cannot be used: it has no criterion",
        "the rubric cannot be used: criterion `clear` has the score range 5 to 1",
        "the rubric cannot be used: ctx.judge_pair compares two results' material",
        "the rubric cannot be used: samples(2) is not odd",
        "the rubric cannot be used: samples(3) is for ctx.judge",
        "the judged material: cannot read the file NOTES.md",
        "the judge's answer (run 3) for criterion `names the version` is malformed",
        "the judge session (run 4) ended with script_exhausted",
    ]) {
        assert!(judge.verdicts.is_empty(), "{judge:#?}");
        let recorded = judge.error.as_deref().unwrap_or_default();
        assert!(recorded.starts_with(error), "{recorded}");
        assert!(!judge.all_passed());
    }
}

/// `judge_model`: the judge's session runs on that model (its request goes there, and the
/// record names it), whatever model the judged run used; `tools`: the judge's request offers
/// exactly the tools given (none by default).
#[tokio::test]
async fn a_judge_runs_on_its_judge_model_with_exactly_its_tools() {
    if runtime_for("a_judge_runs_on_its_judge_model_with_exactly_its_tools").is_none() {
        return;
    }
    const JUDGE_MODEL: &str = "claude-haiku-4.5";
    let ctx = context!("a_judge_runs_on_its_judge_model_with_exactly_its_tools");
    let verdict =
        || answer(json!([{"name": "names the version", "verdict": "pass", "reason": "2.4.1."}]));
    ctx.offline(
        ScriptCatalog::new(
            Script::new([])
                .turn(ScriptedTurn::text("ferris-cli 2.4.1 is out."))
                // The judge on the judged run's model, with its default tools (none).
                .turn(verdict()),
        )
        .model(
            JUDGE_MODEL,
            // The judges on the judge model: without and with tools.
            Script::new([]).turn(verdict()).turn(verdict()),
        ),
    );
    let eval = ctx
        .eval()
        .model("claude-sonnet-4.5")
        .timeout_s(120.0)
        .build()
        .unwrap();
    let result = ctx.run(&eval, "Announce ferris-cli 2.4.1.").await;
    assert!(result.success, "{:?}", result.error);
    let rubric =
        Rubric::new(Material::FinalResponse).criterion("names the version", "It names 2.4.1.");
    let same_model = ctx.judge(&result, &rubric).await.unwrap();
    let judge_model = ctx
        .judge(&result, &rubric.clone().judge_model(JUDGE_MODEL))
        .await
        .unwrap();
    let with_tools = ctx
        .judge(
            &result,
            &rubric
                .clone()
                .judge_model(JUDGE_MODEL)
                .tools(["view", "grep"]),
        )
        .await
        .unwrap();
    for judgement in [&same_model, &judge_model, &with_tools] {
        assert!(
            judgement.passed("names the version"),
            "{}",
            judgement.summary()
        );
    }
    assert_eq!(
        same_model.record.model.as_deref(),
        Some("claude-sonnet-4.5")
    );
    assert_eq!(judge_model.record.model.as_deref(), Some(JUDGE_MODEL));
    assert_eq!(with_tools.record.tools, ["view", "grep"]);
    // What each judge's request was: its model and the tools it offered.
    let requests = ctx.model_requests();
    let seen: Vec<(Option<&str>, Vec<&str>)> = requests
        .iter()
        .map(|r| {
            let mut tools: Vec<&str> = r.tool_names.iter().map(String::as_str).collect();
            tools.sort();
            (r.model.as_deref(), tools)
        })
        .collect();
    assert_eq!(
        seen[1..],
        [
            (Some("claude-sonnet-4.5"), vec![]),
            (Some(JUDGE_MODEL), vec![]),
            (Some(JUDGE_MODEL), vec!["grep", "view"]),
        ]
    );
}

/// `--judge-labels FILE` over trials: a person's labels against the rubric judge's verdicts,
/// per criterion the agreement and Cohen's kappa with n, in the JSON, the terminal and the
/// page; and the pairwise judges' position consistency over the same trials.
///
/// `judges_the_release_notes` in 3 trials: the judge says `clear` pass, fail, pass; the labels
/// say pass, fail, fail. By hand: n = 3, both pass 1, judge pass and label fail 1, both fail 1;
/// p_o = 2/3; the judge passes 2/3, the labels 1/3, p_e = 2/3 * 1/3 + 1/3 * 2/3 = 4/9; kappa =
/// (6/9 - 4/9) / (1 - 4/9) = (2/9) / (5/9) = 0.4. `names the version`: judge and labels pass
/// all 3: agreement 3/3 but kappa undefined (p_e = 1). A label for a criterion no judge has is
/// listed unmatched. `prefers_an_answer_in_both_orders` in 3 trials: its first pairwise judge's
/// orders agree in 3/3, its second's (always answer 1) in 0/3.
#[test]
fn judge_labels_give_agreement_and_kappa_and_pairs_their_position_consistency() {
    let test = "judge_labels_give_agreement_and_kappa_and_pairs_their_position_consistency";
    if runtime_for(test).is_none() {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let html = out.path().join("report.html");
    let labels = out.path().join("labels.json");
    let name = "judges_the_release_notes";
    let label = |trial: u32, criterion: &str, label: &str| json!({"eval": name, "trial": trial, "criterion": criterion, "label": label});
    std::fs::write(
        &labels,
        json!({"labels": [
            label(1, "clear", "pass"), label(2, "clear", "fail"), label(3, "clear", "fail"),
            label(1, "names the version", "pass"), label(2, "names the version", "pass"),
            label(3, "names the version", "pass"), label(1, "tone", "pass"),
        ]})
        .to_string(),
    )
    .unwrap();
    let run = support::copilot_eval(
        &workspace_root(),
        &[
            "-p",
            "scripted",
            "--exact",
            name,
            "prefers_an_answer_in_both_orders",
            "--trials",
            "3",
            "-j",
            "2",
            "--judge-labels",
            labels.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    let report = run.report.judge_labels.as_ref().expect("judge_labels");
    assert_eq!(report.labels, 7);
    assert_eq!(report.unmatched, [format!("{name}, trial 1, tone")]);
    let rows: Vec<(&str, u32, [u32; 4], Option<f64>)> = (report.criteria.iter())
        .map(|r| {
            (
                r.criterion.as_str(),
                r.n,
                [
                    r.both_pass,
                    r.judge_pass_label_fail,
                    r.judge_fail_label_pass,
                    r.both_fail,
                ],
                r.agreement,
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("names the version", 3, [3, 0, 0, 0], Some(1.0)),
            ("clear", 3, [1, 1, 0, 1], Some(2.0 / 3.0)),
        ]
    );
    let (p_o, p_e) = (2.0 / 3.0, 2.0 / 3.0 * (1.0 / 3.0) + 1.0 / 3.0 * (2.0 / 3.0));
    let kappa = report.criteria[1].kappa.expect("a kappa");
    assert!((kappa - (p_o - p_e) / (1.0 - p_e)).abs() < 1e-12 && (kappa - 0.4).abs() < 1e-12);
    assert_eq!(report.criteria[0].kappa, None);
    for line in [
        format!(
            "    scripted::judges {name} judge 1, clear: agreed 2/3 (67%), Cohen's kappa 0.40 (n = 3)\n"
        ),
        format!(
            "    scripted::judges {name} judge 1, names the version: agreed 3/3 (100%), Cohen's kappa undefined (one rating throughout) (n = 3)\n"
        ),
    ] {
        assert!(
            run.stderr.contains(&line),
            "{line:?} not in:\n{}",
            run.stderr
        );
    }
    assert!(
        run.stderr.contains(&format!(
            "  judge labels ({}, 7 labels):\n",
            labels.display()
        )),
        "{}",
        run.stderr
    );

    // The pairwise judges' position consistency over the 3 trials.
    let pairs = &(run.report.trial_summaries.iter())
        .find(|s| s.name == "prefers_an_answer_in_both_orders")
        .expect("the pairwise eval's summary")
        .pair_criteria;
    let consistency: Vec<(u32, u32, u32)> = pairs
        .iter()
        .map(|c| (c.judge, c.consistent, c.judged))
        .collect();
    assert_eq!(consistency, [(1, 3, 3), (2, 0, 3)]);
    let line = copilot_eval_core::report::judge_trials::pair_line(&pairs[1]);
    assert_eq!(
        line,
        "judge 2 (pairwise), informative: both orders agreed in 0/3 (0%, 95% CI 0%-56%)"
    );
    assert!(
        run.stderr.contains(&format!("\n      {line}\n")),
        "{}",
        run.stderr
    );

    let page = std::fs::read_to_string(&html).unwrap();
    for expected in [
        "<table class=\"judge-labels\">",
        "data-criterion=\"clear\">",
        "<td class=\"kappa\">0.40</td>",
        "<td class=\"kappa\">undefined</td>",
        "<table class=\"trial-pairs\">",
        "<td class=\"consistent\">0&#x2f;3</td>",
    ] {
        assert!(page.contains(expected), "the page lacks {expected:?}");
    }
}

/// A labels file that is wrong: the command stops before building, naming the file, the
/// entry's field and the fix.
#[test]
fn a_bad_judge_labels_file_is_a_usage_error_naming_file_and_field() {
    let out = tempfile::tempdir().unwrap();
    let labels = out.path().join("labels.json");
    std::fs::write(
        &labels,
        r#"{"labels": [{"eval": "e", "trial": 1, "criterion": "clear", "label": "yes"}]}"#,
    )
    .unwrap();
    let output = std::process::Command::new(command_path())
        .args([
            "copilot-eval",
            "--replay",
            "-p",
            "scripted",
            "--judge-labels",
        ])
        .arg(&labels)
        .current_dir(workspace_root())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        format!(
            "error: --judge-labels: {}: labels[0].label: \"yes\" is not \"pass\" or \"fail\"; write \"pass\" or \"fail\"",
            labels.display()
        )
    );
}

/// Over trials, a trial whose judge gave no verdict (its answer was not JSON) is a judge error,
/// counted apart: the criterion passed 2 of the 2 trials judged, not 2 of 3.
#[test]
fn over_trials_a_judge_error_stays_out_of_the_pass_rate() {
    let test = "over_trials_a_judge_error_stays_out_of_the_pass_rate";
    if runtime_for(test).is_none() {
        return;
    }
    let name = "grades_the_notes_while_one_answer_is_broken";
    let run = support::copilot_eval(
        &workspace_root(),
        &[
            "-p", "scripted", "--exact", name, "--trials", "3", "-j", "2",
        ],
        &[],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    let errors: Vec<(u32, bool)> = run
        .report
        .tests
        .iter()
        .map(|t| (t.trial.unwrap().trial, t.judges[0].error.is_some()))
        .collect();
    assert_eq!(errors, [(1, false), (2, true), (3, false)]);
    let c = &run.report.trial_summaries[0].judge_criteria[0];
    assert_eq!(
        (c.trials, c.judged, c.passed, c.judge_errors),
        (3, 2, 2, 1),
        "{c:?}"
    );
    assert_eq!(c.pass_rate, Some(1.0));
    let line = copilot_eval_core::report::judge_trials::line(c);
    assert_eq!(
        line,
        "judge 1, names the version: passed 2/2 (100%, 95% CI 34%-100%), 1 judge error (not in the rate)"
    );
    assert!(
        run.stderr.contains(&format!("\n      {line}\n")),
        "{}",
        run.stderr
    );
    assert_eq!(
        run.junit_property(
            &format!("{name} [trial 1/3]"),
            "copilot_eval.trials.judge.1.criterion.names the version"
        ),
        "passed=2/2 pass_rate=1.0000 interval=0.3424-1.0000 judge_errors=1"
    );
}

/// A changed judge prompt no longer matches the judge's cassette: its replay stops with
/// `replay_mismatch` (the test is an `error`), and the judge reports that session's error,
/// never a verdict. The
/// quick-start's cassettes are copied and the judge's recorded prompt changed (one word of a
/// criterion), as a change to the rubric would change the prompt.
#[test]
fn a_changed_judge_prompt_is_a_replay_mismatch_never_a_verdict() {
    if runtime_for("a_changed_judge_prompt_is_a_replay_mismatch_never_a_verdict").is_none() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let folder = root.path().join("tests/cassettes/evals");
    std::fs::create_dir_all(&folder).unwrap();
    let committed = workspace_root().join("examples/quickstart/tests/cassettes/evals");
    for file in [format!("{QUICKSTART}.yaml"), format!("{QUICKSTART}-2.yaml")] {
        let mut text = std::fs::read_to_string(committed.join(&file)).unwrap();
        if file.ends_with("-2.yaml") {
            let criterion = "The announcement names the released version.";
            assert!(text.contains(criterion), "the judge's prompt is recorded");
            text = text.replace(criterion, "The announcement names the new version.");
        }
        std::fs::write(folder.join(&file), text).unwrap();
    }
    let run = support::copilot_eval(
        &workspace_root(),
        &[
            "-p",
            "quickstart",
            "--exact",
            QUICKSTART,
            "--cassette-root",
            root.path().to_str().unwrap(),
        ],
        &[],
    );
    let test = run.test(QUICKSTART);
    // A replay mismatch is an infrastructure stop: the test is an error, never a pass.
    assert_eq!(test.outcome, Outcome::Error, "{}", run.stderr);
    let stops: Vec<StopReason> = test.runs.iter().map(|r| r.stop_reason).collect();
    assert_eq!(stops, [StopReason::Completed, StopReason::ReplayMismatch]);
    let judge = &test.judges[0];
    assert!(judge.verdicts.is_empty(), "{judge:#?}");
    let error = judge.error.as_deref().unwrap_or_default();
    assert!(
        error.starts_with("the judge session (run 2) ended with replay_mismatch"),
        "{error}"
    );
}
