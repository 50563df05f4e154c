//! Skill lift (`cargo copilot-eval --ablate skills`), end to end through the real runtime
//! (1.0.102) and scripted loopback models.
//!
//! - The ablated side's session never sees the skill: the runtime discovers none, and no model
//!   request it sends nor any tool result holds the skill's body or description, whether the
//!   skill came from the eval's skill directory or from the runtime home; the side with the
//!   skill receives both (the control). A working directory holding a copy of the skill is
//!   refused before the runtime starts.
//! - The scripted example's skill evals (`changelog_skill`, three entries) with `--ablate skills
//!   --trials 3 --benchmark`: entries 1 and 2 need the skill (their expectation "The changelog
//!   skill was invoked" fails without it), entry 3 passes either way. So every figure is known
//!   in advance: 3/3 against 0/3 (lift +100 pp, Fisher p = 0.1, underpowered) for entries 1 and
//!   2, 3/3 against 3/3 for entry 3 ("no signal about the skill"), 9/9 against 3/9 for the skill
//!   (p = 0.0090, helps); the exit status follows only the side with the skill (0).

mod browser;
mod support;

use std::path::Path;
use std::sync::Arc;

use copilot_eval_core::eval::Ablate;
use copilot_eval_core::model_server::{ModelServer, Script, ScriptedTurn, ServerConfig};
use copilot_eval_core::report::lift::LiftVerdict;
use copilot_eval_core::{CopilotEval, CopilotResult, RunOptions, StopReason, run_with};
use copilot_eval_e2e::{assert_no_runtime_left, runtime_for};
use serde_json::{Value, json};
use support::workspace_root;

const MODEL: &str = "claude-sonnet-4.5";
/// Unique words of the eval's skill: its description and its body.
const SKILL_DESCRIPTION: &str = "Writes lift-check notes (marker desc-5e1d)";
const SKILL_BODY: &str = "Body marker body-8c2f: number every note.";
/// Unique words of the skill in the runtime home.
const HOME_DESCRIPTION: &str = "Home notes helper (marker home-desc-41aa)";
const HOME_BODY: &str = "Home body marker home-body-77b0.";

fn write_skill(root: &Path, name: &str, description: &str, body: &str) {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n---\n\n{body}\n"),
    )
    .unwrap();
}

/// Run the eval (skill folder `skills`, the runtime home seeded from `seed`) with a model that
/// invokes both skills and answers; `ablate` as given. The result and every model request's
/// body as text.
async fn invoke_both(
    runtime: &Path,
    skills: &Path,
    seed: &Path,
    work: &Path,
    ablate: Vec<Ablate>,
) -> (CopilotResult, Vec<String>) {
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call(
            "skill",
            json!({"skill": "lift-notes"}),
        ))
        .turn(ScriptedTurn::tool_call(
            "skill",
            json!({"skill": "home-notes"}),
        ))
        .turn(ScriptedTurn::text("done"));
    let server = ModelServer::start(ServerConfig::new(Arc::new(script)).model(MODEL))
        .await
        .unwrap();
    let eval = CopilotEval::builder()
        .model(MODEL)
        .working_directory(work)
        .skill_directory(skills)
        // The runtime reads the home's skills (personal skills) only with config discovery on.
        .extra_session_config(|mut config| {
            config.enable_config_discovery = Some(true);
            config
        })
        .timeout_s(120.0)
        .build()
        .unwrap();
    let options = RunOptions::offline(server.base_url())
        .runtime_path(runtime)
        .home_seed(seed)
        .ablate(ablate);
    let result = run_with(&eval, "Write the notes.", &options).await;
    assert_no_runtime_left(&result);
    let requests = server
        .model_requests()
        .iter()
        .map(|r| serde_json::to_string(&r.messages).unwrap())
        .collect();
    (result, requests)
}

fn tool_results(result: &CopilotResult) -> String {
    result
        .tool_calls
        .iter()
        .filter_map(|c| c.result.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The side with the skills receives their descriptions and bodies (the eval's skill folder,
/// and the runtime home's `skills/`); the ablated side, through the same runtime, discovers no
/// skill and neither its model requests nor its tool results hold any of them.
#[tokio::test]
async fn the_ablated_side_never_sees_the_skills_body() {
    let Some(runtime) = runtime_for("the_ablated_side_never_sees_the_skills_body") else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let skills = root.path().join("skills");
    write_skill(&skills, "lift-notes", SKILL_DESCRIPTION, SKILL_BODY);
    let seed = root.path().join("home-seed");
    write_skill(
        &seed.join("skills"),
        "home-notes",
        HOME_DESCRIPTION,
        HOME_BODY,
    );
    let markers = [SKILL_DESCRIPTION, SKILL_BODY, HOME_DESCRIPTION, HOME_BODY];

    let work = tempfile::tempdir().unwrap();
    let (with, requests) =
        invoke_both(&runtime.path, &skills, &seed, work.path(), Vec::new()).await;
    assert!(with.success, "{}: {:?}", with.stop_reason, with.error);
    assert!(with.ablated.is_empty());
    assert_eq!(
        with.skill_invocations
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>(),
        ["lift-notes", "home-notes"]
    );
    let seen = requests.join("\n");
    for marker in markers {
        assert!(
            seen.contains(marker),
            "the side with the skills sees {marker:?}"
        );
    }

    let work = tempfile::tempdir().unwrap();
    let (without, requests) = invoke_both(
        &runtime.path,
        &skills,
        &seed,
        work.path(),
        vec![Ablate::Skills],
    )
    .await;
    assert_eq!(
        without.stop_reason,
        StopReason::Completed,
        "{:?}",
        without.error
    );
    assert_eq!(without.ablated, [Ablate::Skills]);
    assert!(without.skill_discovery.is_none());
    assert!(without.skill_invocations.is_empty());
    assert!(
        requests.len() >= 3,
        "the ablated side's model was asked every turn"
    );
    for (n, request) in requests.iter().enumerate() {
        for marker in markers {
            assert!(
                !request.contains(marker),
                "model request {} of the ablated side holds {marker:?}",
                n + 1
            );
        }
    }
    let results = tool_results(&without);
    for marker in markers {
        assert!(!results.contains(marker), "a tool result holds {marker:?}");
    }
    // The seed itself is untouched: only the run's copy lost the skill.
    assert!(seed.join("skills/home-notes/SKILL.md").is_file());
}

/// A working directory that holds a copy of the skill would let the ablated side read it off
/// disk: the run refuses it, naming the file, before the runtime starts.
#[tokio::test]
async fn an_ablated_run_refuses_a_working_directory_holding_the_skill() {
    let Some(runtime) = runtime_for("an_ablated_run_refuses_a_working_directory_holding_the_skill")
    else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    write_skill(
        &work.path().join(".github/skills"),
        "lift-notes",
        SKILL_DESCRIPTION,
        SKILL_BODY,
    );
    let eval = CopilotEval::builder()
        .model(MODEL)
        .working_directory(work.path())
        .build()
        .unwrap();
    let options = RunOptions::offline("http://127.0.0.1:9")
        .runtime_path(&runtime.path)
        .ablate(vec![Ablate::Skills]);
    let result = run_with(&eval, "hi", &options).await;
    assert_eq!(result.stop_reason, StopReason::ExecutionError);
    let error = result.error.clone().unwrap_or_default();
    assert!(
        error.contains(".github/skills/lift-notes/SKILL.md") && error.contains("without skills"),
        "{error}"
    );
    assert!(result.runtime_pid.is_none(), "no runtime started");
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-4
}

/// `--ablate skills --trials 3 --benchmark` over the scripted example's skill evals: the lift
/// per eval and per skill in the terminal, the JSON (schema-checked by the support), the HTML
/// and skill-creator's `benchmark.json`; the side without never holds the skill's body in a
/// tool result, while the side with it does.
#[test]
fn the_scripted_skill_evals_give_the_expected_lift() {
    if runtime_for("the_scripted_skill_evals_give_the_expected_lift").is_none() {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let benchmark = scratch.path().join("bm.json");
    let html = scratch.path().join("report.html");
    let run = support::copilot_eval(
        &workspace_root(),
        &[
            "-p",
            "scripted",
            "changelog_skill",
            "--ablate",
            "skills",
            "--trials",
            "3",
            "-j",
            "2",
            "--benchmark",
            benchmark.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ],
        &[],
    );
    // The side without fails entries 1 and 2: a measurement, not the verdict.
    assert_eq!(run.status, 0, "{}", run.stderr);
    let report = &run.report;
    assert_eq!(report.tests.len(), 18);
    let ablated: Vec<_> = report
        .tests
        .iter()
        .filter(|t| !t.ablated.is_empty())
        .collect();
    assert_eq!(ablated.len(), 9);
    for test in &ablated {
        assert!(test.name.ends_with(" (without skills)"), "{}", test.name);
        assert!(test.runs.iter().all(|r| r.ablated == [Ablate::Skills]));
        assert!(test.runs.iter().all(|r| r.skill_discovery.is_none()));
    }

    // The skill's body reached the scripted model (`ctx.model_requests()`, recorded by the
    // example as a property) on the side with it whenever an entry invoked the skill, and never
    // on the side without; no record of that side (its tool results included) holds it.
    let body = "Write the changelog into `CHANGELOG.md`";
    for test in &report.tests {
        let seen = &test.properties[0];
        assert_eq!(seen.name, "skill_body_reached_the_model");
        let invoking = !test.name.contains("eval_3_");
        let expected = test.ablated.is_empty() && invoking;
        assert_eq!(seen.value, expected, "{}", test.name);
        if !test.ablated.is_empty() {
            let text = serde_json::to_string(test).unwrap();
            assert!(!text.contains(body), "{}", test.name);
            assert!(!text.contains("# Changelog format"), "{}", test.name);
        }
    }

    let lift = report.skill_lift.as_ref().expect("a skill lift");
    let figures: Vec<(String, u32, u32, u32, u32, LiftVerdict)> = lift
        .evals
        .iter()
        .map(|e| {
            (
                e.eval.rsplit("::").next().unwrap().to_owned(),
                e.lift.with.passed,
                e.lift.with.trials,
                e.lift.without.passed,
                e.lift.without.trials,
                e.lift.verdict,
            )
        })
        .collect();
    let entry = |id: &str| {
        figures
            .iter()
            .find(|f| f.0.starts_with(&format!("eval_{id}_")))
            .cloned()
            .unwrap_or_else(|| panic!("entry {id} in {figures:?}"))
    };
    for id in ["1", "2"] {
        let e = entry(id);
        assert_eq!(
            (e.1, e.2, e.3, e.4, e.5),
            (3, 3, 0, 3, LiftVerdict::Underpowered)
        );
    }
    let e = entry("3");
    assert_eq!(
        (e.1, e.2, e.3, e.4, e.5),
        (3, 3, 3, 3, LiftVerdict::NoSignal)
    );
    assert_eq!(figures.len(), 3);
    for e in &lift.evals {
        assert_eq!(e.skill.as_deref(), Some("skills/changelog"));
        let id = e.eval.rsplit("::").next().unwrap();
        if id.starts_with("eval_3") {
            assert_eq!(e.lift.lift, Some(0.0));
            assert_eq!(e.lift.verdict, LiftVerdict::NoSignal);
        } else {
            assert_eq!(e.lift.lift, Some(1.0));
            assert!(close(e.lift.p_value, 0.1), "{}", e.lift.p_value);
            assert_eq!(e.lift.verdict, LiftVerdict::Underpowered);
            assert!(e.lift.trials_needed.is_some());
        }
        // Nothing passed without the skill: no cost per pass.
        if e.lift.without.passed == 0 {
            assert_eq!(e.lift.without.cost_per_pass, None);
        }
    }
    let [skill] = &lift.skills[..] else {
        panic!("{:?}", lift.skills)
    };
    assert_eq!(skill.skill, "skills/changelog");
    assert_eq!((skill.lift.with.passed, skill.lift.with.trials), (9, 9));
    assert_eq!(
        (skill.lift.without.passed, skill.lift.without.trials),
        (3, 9)
    );
    assert!(
        close(skill.lift.p_value, 0.009049),
        "{}",
        skill.lift.p_value
    );
    assert_eq!(skill.lift.verdict, LiftVerdict::Helps);
    assert_eq!(skill.no_signal.len(), 1);

    // The terminal.
    assert!(
        run.stderr.contains("skill lift (with / without"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .lines()
            .any(|l| l.contains("eval_3_") && l.contains("no signal about the skill")),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .lines()
            .any(|l| l.contains("skill skills/changelog")
                && l.contains("9/9 (100%)")
                && l.contains("3/9 (33%)")
                && l.contains("0.0090")),
        "{}",
        run.stderr
    );

    // The HTML page's table.
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<h2>Skill lift</h2>"));
    assert!(page.contains(r#"data-verdict="no_signal""#));
    assert!(page.contains(r#"<td class="lift-value">+100 pp</td>"#));
    assert!(page.contains(r#"<td class="p">0.0090</td>"#));
    assert!(page.contains(r#"class="ablated" data-ablated="skills""#));

    // The same table as a real browser lays it out.
    if let Some(chrome) =
        copilot_eval_e2e::chromium_for("the_scripted_skill_evals_give_the_expected_lift")
    {
        let profile = tempfile::tempdir().unwrap();
        let (browser, tab) = browser::open(chrome, &profile, &html);
        let rows: Vec<Vec<String>> =
            serde_json::from_value(browser::rows(&tab, "#skill-lift tr.lift-row")).unwrap();
        // Every column but the time per run (it varies): scripted runs spend nothing, so
        // cost per pass does not apply (never 0).
        let fixed: Vec<Vec<&str>> = (rows.iter())
            .map(|r| {
                let mut cells: Vec<&str> = r.iter().map(String::as_str).collect();
                let time = cells.remove(7);
                assert!(time.contains(" s / ") && time.ends_with(" s"), "{r:?}");
                cells
            })
            .collect();
        let n_a = "n/a (scripted model) / n/a (scripted model)";
        assert_eq!(
            fixed,
            [
                [
                    "changelog_skill::eval_1_write_the_changelog_for_the",
                    "3/3 (100%)",
                    "0/3 (0%)",
                    "+100 pp",
                    "0.1000",
                    "underpowered (needs 4 trials)",
                    "480 / 480",
                    n_a
                ],
                [
                    "changelog_skill::eval_2_add_a_changelog_entry_for",
                    "3/3 (100%)",
                    "0/3 (0%)",
                    "+100 pp",
                    "0.1000",
                    "underpowered (needs 4 trials)",
                    "360 / 360",
                    n_a
                ],
                [
                    "changelog_skill::eval_3_in_one_sentence_what_is",
                    "3/3 (100%)",
                    "3/3 (100%)",
                    "0 pp",
                    "1.0000",
                    "no signal about the skill",
                    "120 / 120",
                    n_a
                ],
                [
                    "skill skills/changelog",
                    "9/9 (100%)",
                    "3/9 (33%)",
                    "+67 pp",
                    "0.0090",
                    "helps",
                    "320 / 320",
                    n_a
                ],
            ]
        );
        assert_eq!(
            browser::eval_str(&tab, "document.querySelector('#skill-lift h2').innerText"),
            "Skill lift"
        );
        drop(tab);
        drop(browser);
    }

    // skill-creator's benchmark.json.
    let bm: Value = serde_json::from_str(&std::fs::read_to_string(&benchmark).unwrap()).unwrap();
    assert_eq!(bm["metadata"]["skill_name"], "changelog");
    assert_eq!(bm["metadata"]["runs_per_configuration"], 3);
    assert_eq!(bm["metadata"]["evals_run"], json!([1, 2, 3]));
    let runs = bm["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 18);
    for run in runs {
        for field in [
            "pass_rate",
            "passed",
            "failed",
            "total",
            "time_seconds",
            "tokens",
            "tool_calls",
            "errors",
        ] {
            assert!(run["result"].get(field).is_some(), "{field} in {run}");
        }
        assert!(run["expectations"].is_array());
        assert!((1..=3).contains(&run["run_number"].as_u64().unwrap()));
    }
    let configuration = |c: &str| runs.iter().filter(|r| r["configuration"] == c).count();
    assert_eq!(
        (configuration("with_skill"), configuration("without_skill")),
        (9, 9)
    );
    // Entry 1 without the skill: 2 of its 3 expectations hold.
    let entry_1_without = runs
        .iter()
        .find(|r| r["eval_id"] == 1 && r["configuration"] == "without_skill")
        .unwrap();
    assert_eq!(entry_1_without["result"]["passed"], 2);
    assert_eq!(entry_1_without["result"]["total"], 3);
    let summary = &bm["run_summary"];
    assert_eq!(summary["with_skill"]["pass_rate"]["mean"], 1.0);
    // Without: (3 x 2/3 + 3 x 1/2 + 3 x 1) / 9.
    let mean = summary["without_skill"]["pass_rate"]["mean"]
        .as_f64()
        .unwrap();
    assert!(close(mean, 6.5 / 9.0), "{mean}");
    for side in ["with_skill", "without_skill"] {
        for metric in ["pass_rate", "time_seconds", "tokens"] {
            for stat in ["mean", "stddev", "min", "max"] {
                assert!(
                    summary[side][metric][stat].is_number(),
                    "{side}.{metric}.{stat}: {summary}"
                );
            }
        }
    }
    assert_eq!(summary["delta"]["pass_rate"], "+0.28");
}

/// A recorded eval replays its own cassette per side: the side without the skill reads
/// `<test>.ablate-skills.yaml`, and when it was never recorded that side ends in a setup error
/// naming the file and the command that records it; the side with the skill replays its own
/// cassette and passes, and the exit status follows it alone.
#[test]
fn a_recorded_evals_ablated_side_needs_its_own_cassette() {
    if runtime_for("a_recorded_evals_ablated_side_needs_its_own_cassette").is_none() {
        return;
    }
    let run = support::copilot_eval(
        &workspace_root(),
        &[
            "-p",
            "quickstart",
            "follows_the_release_notes_skill",
            "--ablate",
            "skills",
            "--no-fail-fast",
        ],
        &[],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    let with = run.test("follows_the_release_notes_skill");
    assert_eq!(with.outcome, copilot_eval_core::report::Outcome::Passed);
    let without = run.test("follows_the_release_notes_skill (without skills)");
    assert_eq!(without.outcome, copilot_eval_core::report::Outcome::Error);
    let message = without.message.clone().unwrap_or_default();
    assert!(
        message.contains("follows_the_release_notes_skill.ablate-skills.yaml")
            && message.contains(
                "cargo copilot-eval --record --ablate skills follows_the_release_notes_skill"
            ),
        "{message}"
    );
}
