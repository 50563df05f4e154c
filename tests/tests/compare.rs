//! Comparing configurations (`ctx.compare`) end to end, through the real `cargo copilot-eval`,
//! the real runtime and the quick-start's `compares_with_and_without_the_skill` (the same prompt
//! with and without the release-notes skill):
//!
//! - recorded with a scripted model standing in for the model service (`--record`): each side
//!   records its own cassette, `<test>.yaml` for the baseline and `<test>-2.yaml` for the
//!   treatment, and the recordings are the example's committed cassettes (set
//!   `COPILOT_EVAL_UPDATE_CASSETTES=1` to write them there instead, then re-run); the
//!   treatment's session works in a subfolder, and its cassette's `${workdir}` is the test's
//!   root folder (the copilot-sdk's meaning), while the same cassettes written in the meaning of
//!   before the header's `workdir` field still replay;
//! - replayed offline (`--replay`): the JSON (valid against the committed schema) has both runs
//!   labelled and the comparison's differences and verdicts, the JUnit has them as properties,
//!   the terminal summary has the comparison's lines, and the HTML page, rendered in Chromium
//!   when there is one, shows the comparison table and the two labelled runs side by side;
//! - a baseline whose session reads the treatment's skill file (scripted, in process): the
//!   comparison warns, naming the call and the path, instead of reporting "no difference" in
//!   silence.

use std::path::Path;
use std::sync::Arc;

use copilot_eval_core::model_server::{
    ModelServer, Script, ScriptedTurn, ScriptedUsage, ServerConfig,
};
use copilot_eval_e2e::runtime_for;
use serde_json::json;

mod browser;
mod support;

use support::{command_path, workspace_root};

const EVAL: &str = "compares_with_and_without_the_skill";
const MODEL: &str = "claude-sonnet-4.5";

fn usage(input_tokens: u64, output_tokens: u64) -> ScriptedUsage {
    ScriptedUsage {
        input_tokens,
        output_tokens,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
    }
}

/// The model's side of the example: the baseline (no skill) answers plainly; the treatment
/// loads the skill, then answers in its house style. Distinct usage on every reply, so the
/// replay reports known tokens.
fn script() -> Script {
    Script::new([])
        .turn(ScriptedTurn::text("ferris-cli 2.4.1 is out.").with_usage(usage(5120, 9)))
        .turn(
            ScriptedTurn::tool_call("skill", json!({"skill": "release-notes"}))
                .with_usage(usage(5480, 18)),
        )
        .turn(
            ScriptedTurn::text("SHIPPED-WITH-CARE\n- ferris-cli 2.4.1 is out.")
                .with_usage(usage(5630, 14)),
        )
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
async fn each_side_of_a_comparison_records_its_own_cassette_with_a_scripted_model() {
    if runtime_for("each_side_of_a_comparison_records_its_own_cassette_with_a_scripted_model")
        .is_none()
    {
        return;
    }
    let server = ModelServer::start(ServerConfig::new(Arc::new(script())).model(MODEL))
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
        .args(["--exact", EVAL])
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
    let folder = root.join("tests/cassettes/evals");
    let expected = [
        (
            "baseline",
            folder.join(format!("{EVAL}.yaml")),
            "ferris-cli 2.4.1 is out.",
        ),
        (
            "treatment",
            folder.join(format!("{EVAL}-2.yaml")),
            "SHIPPED-WITH-CARE",
        ),
    ];
    assert_eq!(test.runs.len(), 2);
    for (run, (label, cassette, answer)) in test.runs.iter().zip(&expected) {
        assert_eq!(run.label.as_deref(), Some(*label));
        let recording = run.recording.as_ref().expect("a recording");
        assert!(recording.written, "{label}: {recording:?}");
        assert_eq!(
            Path::new(&recording.cassette),
            cassette.as_path(),
            "{label}"
        );
        let text = std::fs::read_to_string(cassette).unwrap();
        assert!(text.contains(answer), "{label}: {text}");
    }
    // Only the treatment's cassette holds the skill's call.
    assert!(!undated(&expected[0].1).contains("name: skill"));
    assert!(undated(&expected[1].1).contains("name: skill"));

    let committed = workspace_root().join("examples/quickstart/tests/cassettes/evals");
    let update = std::env::var("COPILOT_EVAL_UPDATE_CASSETTES").as_deref() == Ok("1");
    for (label, recorded, _) in &expected {
        let target = committed.join(recorded.file_name().unwrap());
        if update {
            let body = std::fs::read_to_string(recorded).unwrap();
            let body: Vec<&str> = body.lines().filter(|l| !l.starts_with('#')).collect();
            std::fs::write(
                &target,
                format!(
                    "# Cassette of the {label} of quickstart's `{EVAL}`, recorded by\n# tests/tests/compare.rs with a scripted model standing in for the model service.\n{}\n",
                    body.join("\n")
                ),
            )
            .unwrap();
        }
        assert_eq!(
            undated(recorded),
            undated(&target),
            "{label}: the recording differs from {} (re-record with COPILOT_EVAL_UPDATE_CASSETTES=1)",
            target.display()
        );
    }

    // `${workdir}` is the test's root folder, the copilot-sdk's meaning: the treatment's session
    // works in `<ctx.workdir()>/treatment`, and its cassette names the skill's folder below it.
    let treatment = std::fs::read_to_string(&expected[1].1).unwrap();
    assert!(
        treatment.contains("  workdir: test_root\n")
            && treatment.contains("${workdir}/treatment/.skills/release-notes"),
        "{treatment}"
    );
    // A cassette recorded before the header's `workdir` field meant the session's working
    // directory (`${workdir}/.skills/...` here); it still replays, as it meant.
    let old_root = scratch.path().join("old-root");
    let old_folder = old_root.join("tests/cassettes/evals");
    std::fs::create_dir_all(&old_folder).unwrap();
    for (_, recorded, _) in &expected {
        let text = std::fs::read_to_string(recorded).unwrap();
        let old = text
            .replace("  workdir: test_root\n", "")
            .replace("${workdir}/treatment/", "${workdir}/");
        std::fs::write(old_folder.join(recorded.file_name().unwrap()), old).unwrap();
    }
    let old_root = old_root.to_str().unwrap().to_owned();
    let replayed = tokio::task::spawn_blocking(move || {
        support::copilot_eval(
            &workspace_root(),
            &[
                "-p",
                "quickstart",
                "--cassette-root",
                &old_root,
                "--exact",
                EVAL,
            ],
            &[],
        )
    })
    .await
    .unwrap();
    assert_eq!(replayed.status, 0, "{}", replayed.stderr);
    let runs = &replayed.test(EVAL).runs;
    assert!(
        runs.len() == 2 && runs.iter().all(|r| r.replay.is_some()),
        "{runs:#?}"
    );
}

/// Open `html` in headless Chromium, open the comparison's eval, and return what the page
/// shows: the comparison table's rows (each a list of cell texts, the row's class first) and
/// each run's label with its box (left, top).
fn rendered(chrome: std::path::PathBuf, html: &Path) -> serde_json::Value {
    let profile = tempfile::tempdir().unwrap();
    let (browser, tab) = browser::open(chrome, &profile, html);
    let script = format!(
        r#"JSON.stringify((() => {{
            const eval_ = document.querySelector('details.eval[data-name="{EVAL}"]');
            eval_.querySelector('summary').click();
            const rows = [...eval_.querySelectorAll('table.comparison tr')].map(tr =>
                [tr.className, ...[...tr.children].map(c => c.innerText.trim())]);
            const runs = [...eval_.querySelectorAll('section.run')].map(s => {{
                const box = s.getBoundingClientRect();
                return [s.dataset.label, s.querySelector('h3').innerText, Math.round(box.left), Math.round(box.top), box.width > 0];
            }});
            return {{ rows, runs }};
        }})())"#
    );
    let text = browser::eval_str(&tab, &script);
    drop(tab);
    drop(browser);
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_comparison_replays_offline_with_both_runs_labelled_in_every_artifact() {
    let test = "a_comparison_replays_offline_with_both_runs_labelled_in_every_artifact";
    if runtime_for(test).is_none() {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let html = out.path().join("report.html");
    let html_arg = html.to_str().unwrap();
    // `support::copilot_eval` adds --replay and checks the JSON against the committed schema.
    let run = support::copilot_eval(
        &workspace_root(),
        &["-p", "quickstart", "--html", html_arg, "--exact", EVAL],
        &[],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    let record = run.test(EVAL);

    // Both runs, labelled, each replayed from its own cassette.
    let sides: Vec<(Option<&str>, &str, String)> = record
        .runs
        .iter()
        .map(|r| {
            let cassette = r.replay.as_ref().expect("replayed").cassette.clone();
            let file = Path::new(&cassette)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (r.label.as_deref(), r.mode.as_str(), file)
        })
        .collect();
    assert_eq!(
        sides,
        [
            (Some("baseline"), "replay", format!("{EVAL}.yaml")),
            (Some("treatment"), "replay", format!("{EVAL}-2.yaml")),
        ]
    );
    assert!(record.runs[0].working_directory.ends_with("baseline"));
    assert!(record.runs[1].working_directory.ends_with("treatment"));

    // The comparison: sides, differences and verdicts, from the recorded usage.
    assert_eq!(record.comparisons.len(), 1, "{record:#?}");
    let c = &record.comparisons[0];
    // Neither side read the other's inputs (the baseline never saw the treatment's skill).
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_eq!(
        c.prompt,
        "Announce version 2.4.1 of ferris-cli in one line."
    );
    assert_eq!((c.baseline.run, c.treatment.run), (1, 2));
    assert_eq!(c.baseline.tool_calls, 0);
    assert_eq!(c.treatment.tools.get("skill"), Some(&1));
    assert_eq!(
        (c.baseline.input_tokens, c.baseline.output_tokens),
        (Some(5120), Some(9))
    );
    assert_eq!(
        (c.treatment.input_tokens, c.treatment.output_tokens),
        (Some(5480 + 5630), Some(18 + 14))
    );
    let d = &c.differences;
    assert!(!d.outcome_changed);
    assert_eq!(d.tool_calls, 1);
    assert_eq!(d.model_calls, 1);
    assert_eq!(d.tools_only_in_treatment, ["skill"]);
    assert!(d.tools_only_in_baseline.is_empty());
    assert_eq!(d.input_tokens, Some(5480 + 5630 - 5120));
    assert_eq!(d.output_tokens, Some(18 + 14 - 9));
    assert_eq!(
        d.duration_ms,
        record.runs[1].duration_ms as i64 - record.runs[0].duration_ms as i64
    );
    // The runner priced both runs; the comparison carries the estimates.
    let (b, t) = (
        record.runs[0].totals.estimated_cost.expect("priced"),
        record.runs[1].totals.estimated_cost.expect("priced"),
    );
    assert_eq!(c.baseline.estimated_cost, Some(b));
    let difference = d.estimated_cost.expect("both priced");
    assert!(
        (difference - (t - b)).abs() < 1e-9,
        "{difference} vs {}",
        t - b
    );
    let verdicts: Vec<(&str, bool, bool)> = c
        .criteria
        .iter()
        .map(|k| (k.name.as_str(), k.baseline, k.treatment))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("completed", true, true),
            ("starts with the house tag line", false, true)
        ]
    );
    let json: serde_json::Value = serde_json::from_str(&run.json).unwrap();
    assert_eq!(json["tests"][0]["runs"][1]["label"], "treatment");
    assert_eq!(
        json["tests"][0]["comparisons"][0]["differences"]["tools_only_in_treatment"],
        json!(["skill"])
    );

    // JUnit: the labels, the summary, the differences and each criterion.
    assert_eq!(
        run.junit_property(EVAL, "copilot_eval.run.1.label"),
        "baseline"
    );
    assert_eq!(
        run.junit_property(EVAL, "copilot_eval.run.2.label"),
        "treatment"
    );
    assert_eq!(
        run.junit_property(EVAL, "copilot_eval.comparison.1.summary"),
        c.summary
    );
    assert_eq!(
        run.junit_property(
            EVAL,
            "copilot_eval.comparison.1.criterion.starts with the house tag line"
        ),
        "baseline=no treatment=yes"
    );
    let differences = run.junit_property(EVAL, "copilot_eval.comparison.1.differences");
    assert_eq!(
        differences,
        format!(
            "outcome same; tool calls +1 (tools only in treatment: skill); files written: none differ; model calls +1; tokens +5990 input, +23 output; estimated cost +{}",
            copilot_eval_core::cost::format_amount(difference)
        )
    );

    // The terminal summary's comparison lines.
    assert_eq!(
        c.summary,
        "baseline (run 1): completed, 0 tool calls, 0 files written, 5129 tokens; \
         treatment (run 2): completed, 1 tool call (skill 1), 0 files written, 11142 tokens; \
         criteria: completed: baseline yes, treatment yes; starts with the house tag line: baseline no, treatment yes"
    );
    assert!(
        run.stderr.contains(&format!(
            "  compare quickstart::evals {EVAL}: {}\n          differences: {differences}; duration {:+.1} s ({:.1} s -> {:.1} s)\n",
            c.summary,
            d.duration_ms as f64 / 1000.0,
            c.baseline.duration_ms as f64 / 1000.0,
            c.treatment.duration_ms as f64 / 1000.0,
        )),
        "{}",
        run.stderr
    );

    // The page: the comparison table and the two labelled runs side by side.
    let Some(chrome) = copilot_eval_e2e::chromium_for(&format!("{test} (its page check)")) else {
        return;
    };
    let page = rendered(chrome, &html);
    let rows = page["rows"].as_array().unwrap();
    let row = |what: &str| {
        rows.iter()
            .find(|r| r[1] == what)
            .unwrap_or_else(|| panic!("no row {what}: {rows:#?}"))
            .clone()
    };
    assert_eq!(
        row("tool calls"),
        json!([
            "measure changed",
            "tool calls",
            "0",
            "1 (skill ×1)",
            "+1 (only treatment: skill)"
        ])
    );
    assert_eq!(
        row("outcome"),
        json!(["measure", "outcome", "completed", "completed", "same"])
    );
    assert_eq!(
        row("criterion: starts with the house tag line"),
        json!([
            "criterion improved",
            "criterion: starts with the house tag line",
            "no",
            "yes",
            "improved"
        ])
    );
    let runs = page["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{page}");
    assert_eq!(runs[0][0], "baseline");
    assert_eq!(runs[1][0], "treatment");
    assert!(
        runs[0][1].as_str().unwrap().starts_with("run 1 baseline"),
        "{page}"
    );
    assert_eq!(runs[0][4], true, "visible once the eval is opened: {page}");
    assert!(
        runs[0][2].as_i64() < runs[1][2].as_i64() && runs[0][3] == runs[1][3],
        "side by side, baseline left: {page}"
    );
}

/// A baseline whose agent reads the treatment's `SKILL.md` from disk (an absolute `view`, and a
/// `bash` `cat` of a path relative to its own working directory): both sides then follow the
/// skill and the criterion shows no difference. The comparison says why instead of passing it
/// in silence: a warning per call naming the path, in `warnings`, the record and its summary.
#[tokio::test]
async fn a_baseline_that_reads_the_treatments_skill_is_a_warning_not_a_silent_no_difference() {
    use copilot_eval_core::harness::{EvalContext, Side, TestConfig};
    let test = "a_baseline_that_reads_the_treatments_skill_is_a_warning_not_a_silent_no_difference";
    if runtime_for(test).is_none() {
        return;
    }
    let ctx = EvalContext::new(TestConfig::new(
        test,
        "compare::a_baseline_that_reads_the_treatments_skill_is_a_warning_not_a_silent_no_difference",
        env!("CARGO_MANIFEST_DIR"),
    ));
    let baseline_dir = Side::Baseline.workdir(&ctx);
    let treatment_dir = Side::Treatment.workdir(&ctx);
    let skill = treatment_dir.join(".skills/release-notes/SKILL.md");
    std::fs::create_dir_all(skill.parent().unwrap()).unwrap();
    std::fs::write(
        &skill,
        "---\nname: release-notes\ndescription: Writes release notes in the house style.\n---\nStart with SHIPPED-WITH-CARE.\n",
    )
    .unwrap();
    ctx.offline(
        Script::new([])
            // The baseline reads the treatment's skill file twice, then answers in its style.
            .turn(ScriptedTurn::tool_call(
                "view",
                json!({"path": skill.to_str().unwrap()}),
            ))
            .turn(ScriptedTurn::tool_call(
                "bash",
                json!({"command": "cat ../treatment/.skills/release-notes/SKILL.md", "description": "Read the notes skill"}),
            ))
            .turn(ScriptedTurn::text("SHIPPED-WITH-CARE ferris-cli 2.4.1 is out."))
            // The treatment loads its skill.
            .turn(ScriptedTurn::tool_call("skill", json!({"skill": "release-notes"})))
            .turn(ScriptedTurn::text("SHIPPED-WITH-CARE ferris-cli 2.4.1 is out.")),
    );
    let baseline = ctx
        .eval()
        .model(MODEL)
        .timeout_s(120.0)
        .working_directory(&baseline_dir)
        // The sandbox keeps a side out of the other's folders (the read would be refused);
        // this test lets the baseline read the treatment's skill to show the warning.
        .sandbox_allow_read(treatment_dir.join(".skills"))
        .build()
        .unwrap();
    let treatment = ctx
        .eval()
        .model(MODEL)
        .timeout_s(120.0)
        .working_directory(&treatment_dir)
        .skill_directory(treatment_dir.join(".skills"))
        .build()
        .unwrap();
    let comparison = ctx
        .compare(&baseline, &treatment, "Announce ferris-cli 2.4.1.")
        .await;
    assert!(comparison.baseline.success && comparison.treatment.success);
    // The baseline really read the file: its calls succeeded and returned the skill's text.
    for call in &comparison.baseline.tool_calls {
        assert_eq!(call.success, Some(true), "{call:#?}");
        assert!(
            call.result
                .as_deref()
                .unwrap_or_default()
                .contains("SHIPPED-WITH-CARE"),
            "{call:#?}"
        );
    }
    let tagged = comparison.check("starts with the tag line", |r| {
        r.final_response
            .as_deref()
            .unwrap_or_default()
            .starts_with("SHIPPED-WITH-CARE")
    });
    assert!(tagged.both(), "no difference: {}", comparison.summary());
    let skills_dir = treatment_dir.join(".skills");
    let warnings = comparison.warnings();
    assert_eq!(
        warnings,
        [
            format!(
                "the baseline's session (run 1) read the treatment's inputs: its `view` call named {}, under the treatment's skill directory {}; the comparison does not isolate the treatment's configuration",
                skill.display(),
                skills_dir.display()
            ),
            format!(
                "the baseline's session (run 1) read the treatment's inputs: its `bash` call named {}, under the treatment's skill directory {}; the comparison does not isolate the treatment's configuration",
                skill.display(),
                skills_dir.display()
            ),
        ],
        "{}",
        comparison.summary()
    );
    // The record (the artifacts' comparison) and its one-line summary carry them.
    let record = comparison.record();
    assert_eq!(record.warnings, warnings);
    assert!(
        record
            .summary
            .ends_with(&format!("; warnings: {}", warnings.join("; "))),
        "{}",
        record.summary
    );
}

/// The quick-start's comparison over 3 trials, each replaying the same two cassettes: the
/// criterion "completed" holds on both sides in every trial, so it does not discriminate; the
/// house tag line holds only on the treatment, so it does. The terminal, the JSON (valid
/// against the committed schema), the GitHub job summary and the HTML page (in Chromium, when
/// there is one) all say so, with each side's counts and "1 of 2 criteria discriminate".
#[test]
fn over_trials_a_criterion_both_sides_always_meet_does_not_discriminate() {
    use copilot_eval_core::report::discrimination::{Discrimination, Surface};
    let test = "over_trials_a_criterion_both_sides_always_meet_does_not_discriminate";
    if runtime_for(test).is_none() {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let html = out.path().join("report.html");
    let step_summary = out.path().join("step-summary.md");
    let run = support::copilot_eval(
        &workspace_root(),
        &[
            "-p",
            "quickstart",
            "--trials",
            "3",
            "--html",
            html.to_str().unwrap(),
            "--exact",
            EVAL,
        ],
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", step_summary.to_str().unwrap()),
        ],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.report.tests.len(), 3, "{}", run.stderr);

    // JSON: each criterion with each side's count and its verdict.
    let report = run.report.discrimination.as_ref().expect("discrimination");
    /// A criterion, its runs, its comparison, each side's `(side, held, trials)`, its verdict.
    type Entry<'a> = (
        &'a str,
        Surface,
        Option<u32>,
        Vec<(&'a str, u32, u32)>,
        Discrimination,
    );
    let entries: Vec<Entry> = report
        .entries
        .iter()
        .map(|e| {
            (
                e.criterion.as_str(),
                e.surface,
                e.comparison,
                e.sides
                    .iter()
                    .map(|s| (s.side.as_str(), s.held, s.trials))
                    .collect(),
                e.verdict,
            )
        })
        .collect();
    assert_eq!(
        entries,
        [
            (
                "completed",
                Surface::Comparison,
                Some(1),
                vec![("baseline", 3, 3), ("treatment", 3, 3)],
                Discrimination::DoesNotDiscriminate
            ),
            (
                "starts with the house tag line",
                Surface::Comparison,
                Some(1),
                vec![("baseline", 0, 3), ("treatment", 3, 3)],
                Discrimination::Discriminates
            ),
        ]
    );
    assert_eq!((report.discriminating, report.criteria), (1, 2));
    let json: serde_json::Value = serde_json::from_str(&run.json).unwrap();
    assert_eq!(
        json["discrimination"]["entries"][0]["verdict"],
        "does_not_discriminate"
    );
    assert_eq!(
        json["discrimination"]["entries"][1]["verdict"],
        "discriminates"
    );

    // The terminal summary.
    let lines = [
        "  criteria (does each tell the sides apart? not when it holds, or fails, on every side in every trial):".to_owned(),
        format!("    quickstart::evals {EVAL}, comparison 1, completed: baseline 3/3, treatment 3/3 -> does not discriminate (holds on every side in every trial)"),
        format!("    quickstart::evals {EVAL}, comparison 1, starts with the house tag line: baseline 0/3, treatment 3/3 -> discriminates"),
        "    1 of 2 criteria discriminate".to_owned(),
    ];
    assert!(
        run.stderr.contains(&(lines.join("\n") + "\n")),
        "{}",
        run.stderr
    );

    // The GitHub job summary: the count, and the criterion that does not discriminate.
    let summary = std::fs::read_to_string(&step_summary).unwrap();
    assert!(
        summary.contains("**1 of 2 criteria discriminate**"),
        "{summary}"
    );
    assert!(
        summary.contains(&format!(
            "| `quickstart::evals` {EVAL} | comparison 1, completed | baseline 3/3, treatment 3/3 | does not discriminate (holds on every side in every trial) |"
        )),
        "{summary}"
    );
    assert!(!summary.contains("house tag line |"), "{summary}");

    // The page: the Criteria table's rows and its count.
    let Some(chrome) = copilot_eval_e2e::chromium_for(&format!("{test} (its page check)")) else {
        return;
    };
    let profile = tempfile::tempdir().unwrap();
    let (browser, tab) = browser::open(chrome, &profile, &html);
    let page = browser::eval_json(
        &tab,
        r#"{
            count: document.querySelector('#criteria .discrimination-count').innerText,
            rows: [...document.querySelectorAll('#criteria tr.criterion-row')].map(tr =>
                [tr.dataset.verdict, ...[...tr.children].map(c => c.innerText.trim())]),
        }"#,
    );
    drop(tab);
    drop(browser);
    assert!(
        page["count"]
            .as_str()
            .unwrap()
            .starts_with("1 of 2 criteria discriminate."),
        "{page}"
    );
    assert_eq!(
        page["rows"],
        json!([
            [
                "does_not_discriminate",
                format!("{EVAL}\nquickstart::evals"),
                "comparison",
                "comparison 1, completed",
                "baseline 3/3, treatment 3/3",
                "does not discriminate (holds on every side in every trial)"
            ],
            [
                "discriminates",
                format!("{EVAL}\nquickstart::evals"),
                "comparison",
                "comparison 1, starts with the house tag line",
                "baseline 0/3, treatment 3/3",
                "discriminates"
            ]
        ])
    );
}
