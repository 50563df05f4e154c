//! Deciding across runs (issue 50, docs/deciding.md), end to end through the real command and
//! the real runtime:
//!
//! - the quick-start run twice, once plain and once with `--trials 5` replaying its recorded
//!   trials: `compare` lists both evals, gives the exact p-value of 1/1 against 3/5, calls it
//!   underpowered with the trials it would need, and exits 0 with `--fail-on-regression`; the
//!   same two files with the runtime version edited in one: `compare` names the runtime change;
//! - a crate outside the workspace whose evals script their model: a skill file edited between
//!   two runs changes its hash in the results, and `compare` names the file for each eval that
//!   used it (not for the one that did not); the edit breaks one eval in all its trials, a
//!   significant regression: `--fail-on-regression` exits 1, and in GitHub Actions the job
//!   summary names it and a `::warning` is printed; `--rerun-failed` runs only that eval again,
//!   as new attempts, and `--baseline` compares as the run finishes.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use copilot_eval_core::report::{InputKind, Outcome, SuiteReport};
use copilot_eval_core::stats;
use copilot_eval_e2e::runtime_for;
use serde_json::Value;
use support::{command_path, copilot_eval, schema_problems, workspace_root};

/// `cargo copilot-eval ARGS` in `cwd` with `env`: (exit status, stdout, stderr).
fn command(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let output = Command::new(command_path())
        .arg("copilot-eval")
        .args(args)
        .current_dir(cwd)
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("COPILOT_EVAL_MODE")
        .envs(env.iter().copied())
        .output()
        .expect("cargo-copilot-eval runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Where `value` (a `compare --json` document) breaks `docs/schema/compare.schema.json`.
fn compare_schema_problems(value: &Value) -> Vec<String> {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(workspace_root().join("docs/schema/compare.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the compare schema compiles");
    validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

fn read(path: &Path) -> SuiteReport {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let value: Value = serde_json::from_str(&text).unwrap();
    let problems = schema_problems(&value);
    assert!(problems.is_empty(), "{problems:#?}");
    serde_json::from_value(value).unwrap()
}

const GREETING: &str = "creates_a_greeting_file";
const LOOKUP: &str = "looks_up_a_release_with_a_custom_tool";

/// The quick-start's two evals replayed, with `extra` arguments, into `json`.
fn quickstart(scratch: &Path, json: &Path, extra: &[&str]) -> (i32, String) {
    let tmp = scratch.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let json = json.display().to_string();
    let tmp = tmp.display().to_string();
    let mut args = vec![
        "-p",
        "quickstart",
        "--replay",
        "--plain",
        "-j",
        "1",
        "--exact",
        GREETING,
        LOOKUP,
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--json", &json]);
    let (status, _, stderr) = command(&workspace_root(), &args, &[("TMPDIR", &tmp)]);
    (status, stderr)
}

#[test]
fn the_quickstart_plain_then_in_five_trials_is_underpowered_and_a_runtime_edit_is_named() {
    if runtime_for(
        "the_quickstart_plain_then_in_five_trials_is_underpowered_and_a_runtime_edit_is_named",
    )
    .is_none()
    {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let base = scratch.path().join("base.json");
    let new = scratch.path().join("new.json");
    let (status, stderr) = quickstart(scratch.path(), &base, &[]);
    assert_eq!(status, 0, "{stderr}");
    let (status, stderr) = quickstart(scratch.path(), &new, &["--trials", "5"]);
    assert_eq!(status, 1, "trials 2 and 4 of the greeting fail: {stderr}");

    // Each results file says what it measured: the cassettes replayed, with package-relative
    // paths, and the suite's versions and commit.
    let (base_report, new_report) = (read(&base), read(&new));
    let greeting = base_report
        .tests
        .iter()
        .find(|t| t.name == GREETING)
        .unwrap();
    let provenance = greeting.provenance.as_ref().expect("provenance recorded");
    let cassette = &provenance.inputs[0];
    assert_eq!(
        (cassette.path.as_str(), cassette.kind),
        (
            "tests/cassettes/evals/creates_a_greeting_file.yaml",
            InputKind::Cassette
        ),
        "{provenance:#?}"
    );
    let committed = std::fs::read(
        workspace_root()
            .join("examples/quickstart")
            .join(&cassette.path),
    )
    .unwrap();
    assert_eq!(
        cassette.sha256,
        copilot_eval_core::report::provenance::sha256_hex(&committed)
    );
    assert_eq!(provenance.models, ["claude-sonnet-4.5"]);
    let third = new_report
        .tests
        .iter()
        .find(|t| t.name == GREETING && t.trial.is_some_and(|t| t.trial == 3))
        .unwrap();
    assert_eq!(
        third.provenance.as_ref().unwrap().inputs[0].path,
        "tests/cassettes/evals/creates_a_greeting_file/trial-3.yaml"
    );
    let suite = new_report.provenance.as_ref().expect("suite provenance");
    assert_eq!(suite.sdk_version, "1.0.28");
    assert_eq!(suite.runtime_version, new_report.runtime.version);
    assert!(suite.git_commit.is_some(), "{suite:#?}");
    assert_eq!(suite.settings.get("trials").map(String::as_str), Some("5"));
    let text = std::fs::read_to_string(&new).unwrap();
    assert!(
        provenance_has_no_machine_path(&base_report),
        "{base_report:#?}"
    );
    assert!(
        provenance_has_no_machine_path(&new_report),
        "{new_report:#?}"
    );

    // compare: both evals, the exact p-value of 1/1 against 3/5, underpowered with the trials
    // that difference needs; exit 0 with --fail-on-regression.
    let out = scratch.path().join("compare.json");
    let (status, _, stderr) = command(
        scratch.path(),
        &[
            "compare",
            &base.display().to_string(),
            &new.display().to_string(),
            "--fail-on-regression",
            "--json",
            &out.display().to_string(),
        ],
        &[],
    );
    assert_eq!(status, 0, "{stderr}");
    let needed = stats::trials_needed(1.0, 0.6);
    for needle in [
        format!("underpowered  quickstart::evals {GREETING}"),
        "1/1 (100%)".to_owned(),
        "3/5 (60%)".to_owned(),
        "-40 pp  1.000".to_owned(),
        format!(
            "underpowered: the observed difference (100% -> 60%) needs {needed} trials per side to reach p < 0.05"
        ),
        format!("unchanged     quickstart::evals {LOOKUP}"),
        "0 regressed, 0 improved, 1 underpowered, 1 unchanged (of 2 evals)".to_owned(),
        // The plain replay's cassette has no recorded usage: its tokens are unknown, never 0.
        "unknown -> 240".to_owned(),
    ] {
        assert!(stderr.contains(&needle), "{needle:?} not in:\n{stderr}");
    }
    let value: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let problems = compare_schema_problems(&value);
    assert!(problems.is_empty(), "{problems:#?}");
    let evals = value["evals"].as_array().unwrap();
    assert_eq!(evals.len(), 2);
    assert_eq!(evals[0]["verdict"], "underpowered");
    // Fisher's exact test of 1/1 against 3/5, by hand: with the margins fixed (one trial
    // before, four passes in six trials), the before side passes with probability
    // C(4,1)C(2,0)/C(6,1) = 4/6 (observed) or fails with C(4,0)C(2,1)/C(6,1) = 2/6; both are
    // no more likely than the observed table, so the two-sided p-value is 4/6 + 2/6 = 1.
    let exact = hypergeometric_two_sided(1, 0, 3, 2);
    assert!((exact - 1.0).abs() < 1e-12, "{exact}");
    assert_eq!(evals[0]["p_value"], exact);
    assert_eq!(stats::fisher_exact(1, 0, 3, 2), exact);
    assert_eq!(evals[0]["trials_needed"], needed);

    // The same files, the runtime version edited in one: the runtime change is named.
    let mut edited: Value = serde_json::from_str(&text).unwrap();
    edited["runtime"]["version"] = "9.9.9".into();
    let edited_path = scratch.path().join("new-edited.json");
    std::fs::write(&edited_path, serde_json::to_string(&edited).unwrap()).unwrap();
    let (status, _, stderr) = command(
        scratch.path(),
        &[
            "compare",
            &base.display().to_string(),
            &edited_path.display().to_string(),
        ],
        &[],
    );
    assert_eq!(status, 0, "{stderr}");
    let was = base_report.runtime.version.clone().unwrap();
    assert!(
        stderr.contains(&format!(
            "  !! the Copilot runtime changed: {was} -> 9.9.9 (a runtime change, not a change of the evals' inputs)"
        )),
        "{stderr}"
    );
}

/// The two-sided p-value of Fisher's exact test of the table `[[a, b], [c, d]]`, summed over
/// every table with the same margins no more likely than the observed one (written out here so
/// that the test does not take core's value on trust).
fn hypergeometric_two_sided(a: u64, b: u64, c: u64, d: u64) -> f64 {
    fn choose(n: u64, k: u64) -> f64 {
        (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
    }
    let (row, passes, n) = (a + b, a + c, a + b + c + d);
    let p = |x: u64| choose(passes, x) * choose(n - passes, row - x) / choose(n, row);
    let observed = p(a);
    let low = row.saturating_sub(n - passes);
    (low..=row.min(passes))
        .map(p)
        .filter(|&q| q <= observed * (1.0 + 1e-9))
        .sum()
}

/// No input path of `report` is absolute (machine-specific).
fn provenance_has_no_machine_path(report: &SuiteReport) -> bool {
    report
        .tests
        .iter()
        .filter_map(|t| t.provenance.as_ref())
        .flat_map(|p| &p.inputs)
        .all(|f| !f.path.starts_with('/') && !f.path.contains(":\\"))
}

/// The evals of the crate outside the workspace: two are given the package's `skills` folder
/// (one checks that the skill's rule reached the model, the other only has it at hand), one is
/// given no skill. Each scripts its model.
const EVALS: &str = r#"use copilot_eval_core::copilot_eval;
use copilot_eval_core::harness::EvalContext;
use copilot_eval_core::model_server::{Script, ScriptedTurn};

#[copilot_eval(timeout_s = 120)]
async fn follows_the_greeter(ctx: EvalContext) {
    ctx.offline(
        Script::new([])
            .turn(ScriptedTurn::tool_call("skill", serde_json::json!({"skill": "greeter"})))
            .turn(ScriptedTurn::text("Hello!")),
    );
    let eval = ctx.eval().skill_directory("skills").build().unwrap();
    let result = ctx.run(&eval, "Greet me with the greeter skill.").await;
    result.assert_success();
    let requests = ctx.model_requests();
    assert!(
        requests.iter().any(|r| r.mentions("GREETER-V1")),
        "the greeter's V1 rule did not reach the model"
    );
}

#[copilot_eval(timeout_s = 120)]
async fn has_the_greeter_at_hand(ctx: EvalContext) {
    ctx.offline(Script::new([]).turn(ScriptedTurn::text("Hi.")));
    let eval = ctx.eval().skill_directory("skills").build().unwrap();
    ctx.run(&eval, "Say hi.").await.assert_success();
}

#[copilot_eval(timeout_s = 120)]
async fn needs_no_skill(ctx: EvalContext) {
    ctx.offline(Script::new([]).turn(ScriptedTurn::text("Hi.")));
    let eval = ctx.eval().build().unwrap();
    ctx.run(&eval, "Say hi.").await.assert_success();
}
"#;

fn skill(version: &str) -> String {
    format!(
        "---\nname: greeter\ndescription: Greets people. Use it when asked to greet someone.\n---\n\nStart every greeting with GREETER-{version}.\n"
    )
}

/// The crate outside the workspace, sharing this workspace's target folder, lock file and
/// debug-info profile (so that its dependencies are the ones already built).
fn skill_crate() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("copilot-eval-decide-")
        .tempdir()
        .unwrap();
    let core = workspace_root().join("copilot-eval-core");
    let files = [
        (
            "Cargo.toml",
            format!(
                "[package]\nname = \"decide\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n[dev-dependencies]\ncopilot-eval-core = {{ path = \"{}\" }}\nserde_json = \"1\"\n\n[profile.dev]\ndebug = \"line-tables-only\"\n\n[profile.dev.package.\"*\"]\ndebug = false\n",
                core.display()
            ),
        ),
        ("src/lib.rs", String::new()),
        ("tests/evals.rs", EVALS.to_owned()),
        ("skills/greeter/SKILL.md", skill("V1")),
        (
            ".cargo/config.toml",
            "[env]\nCOPILOT_SKIP_CLI_DOWNLOAD = \"1\"\n".to_owned(),
        ),
    ];
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::fs::copy(
        workspace_root().join("Cargo.lock"),
        dir.path().join("Cargo.lock"),
    )
    .unwrap();
    dir
}

fn target_dir() -> String {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .display()
        .to_string()
}

/// The input `path` of the first record of `name` in `report`: its kind and hash.
fn input(report: &SuiteReport, name: &str, path: &str) -> Option<(InputKind, String)> {
    let test = report.tests.iter().find(|t| t.name == name).unwrap();
    test.provenance
        .as_ref()
        .expect("provenance recorded")
        .inputs
        .iter()
        .find(|f| f.path == path)
        .map(|f| (f.kind, f.sha256.clone()))
}

#[test]
fn a_skill_edit_is_named_for_each_eval_that_used_it_and_its_regression_fails_the_comparison() {
    if runtime_for(
        "a_skill_edit_is_named_for_each_eval_that_used_it_and_its_regression_fails_the_comparison",
    )
    .is_none()
    {
        return;
    }
    let krate = skill_crate();
    let target = target_dir();
    let env = [
        ("CARGO_TARGET_DIR", target.as_str()),
        ("CARGO_NET_OFFLINE", "true"),
    ];
    let scratch = tempfile::tempdir().unwrap();
    let save = |name: &str, json: &str| -> PathBuf {
        let path = scratch.path().join(name);
        std::fs::write(&path, json).unwrap();
        path
    };

    // 1. Five trials with SKILL.md at V1: every eval passes.
    let first = copilot_eval(krate.path(), &["--trials", "5"], &env);
    assert_eq!(first.status, 0, "{}", first.stderr);
    let base = save("base.json", &first.json);
    const SKILL: &str = "skills/greeter/SKILL.md";
    let v1 = copilot_eval_core::report::provenance::sha256_hex(skill("V1").as_bytes());
    assert_eq!(
        input(&first.report, "follows_the_greeter", SKILL),
        Some((InputKind::Skill, v1.clone()))
    );
    assert_eq!(
        input(&first.report, "has_the_greeter_at_hand", SKILL),
        Some((InputKind::Skill, v1.clone()))
    );
    assert_eq!(input(&first.report, "needs_no_skill", SKILL), None);
    let suite = first.report.provenance.as_ref().unwrap();
    assert_eq!(suite.git_commit, None, "not a git repository: {suite:#?}");
    assert!(suite.git_error.is_some(), "{suite:#?}");
    assert!(
        first.junit_xml.contains("copilot_eval.provenance"),
        "{}",
        first.junit_xml
    );

    // 2. SKILL.md edited to V2: its hash differs, and the eval that checks its rule fails in
    // every trial.
    std::fs::write(krate.path().join(SKILL), skill("V2")).unwrap();
    let html = scratch.path().join("second.html");
    let html_arg = html.display().to_string();
    let second = copilot_eval(krate.path(), &["--trials", "5", "--html", &html_arg], &env);
    assert_eq!(second.status, 1, "{}", second.stderr);
    let new = save("new.json", &second.json);
    let v2 = copilot_eval_core::report::provenance::sha256_hex(skill("V2").as_bytes());
    assert_eq!(
        input(&second.report, "follows_the_greeter", SKILL),
        Some((InputKind::Skill, v2))
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains(r#"<details class="fold provenance" id="provenance">"#),
        "{page}"
    );
    assert!(
        page.contains(&format!(r#"data-path="{}""#, SKILL.replace('/', "&#x2f;"))),
        "{page}"
    );

    // compare names the file for each eval that used it, and the significant regression.
    let (base_arg, new_arg) = (base.display().to_string(), new.display().to_string());
    let (status, _, stderr) = command(scratch.path(), &["compare", &base_arg, &new_arg], &[]);
    assert_eq!(status, 0, "no --fail-on-regression: {stderr}");
    assert_eq!(
        stderr
            .matches(&format!("      {SKILL} changed (skill)\n"))
            .count(),
        2,
        "{stderr}"
    );
    let table: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("    "))
        .collect();
    let row = |verdict: &str, name: &str| {
        table
            .iter()
            .position(|l| {
                l.starts_with(&format!("  {verdict}"))
                    && l.contains(&format!("decide::evals {name} "))
            })
            .unwrap_or_else(|| panic!("no {verdict} row for {name}:\n{stderr}"))
    };
    let regressed = row("regressed", "follows_the_greeter");
    assert!(
        regressed < row("unchanged", "needs_no_skill"),
        "regressions first"
    );
    assert!(table[regressed].contains("5/5 (100%)") && table[regressed].contains("0/5 (0%)"));
    assert!(table[regressed].contains("0.008"), "{}", table[regressed]);
    let lines: Vec<&str> = stderr.lines().collect();
    let below = |name: &str| -> Vec<&str> {
        let at = lines
            .iter()
            .position(|l| l.contains(&format!("decide::evals {name} ")))
            .unwrap();
        lines[at + 1..]
            .iter()
            .take_while(|l| l.starts_with("      "))
            .copied()
            .collect()
    };
    assert_eq!(
        below("follows_the_greeter"),
        [format!("      {SKILL} changed (skill)")]
    );
    assert_eq!(
        below("has_the_greeter_at_hand"),
        [format!("      {SKILL} changed (skill)")]
    );
    assert!(below("needs_no_skill").is_empty(), "{stderr}");

    // --fail-on-regression in GitHub Actions: exit 1, the job summary names the regression and
    // a warning is printed for it.
    let summary = scratch.path().join("summary.md");
    let summary_arg = summary.display().to_string();
    let gh = [
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_STEP_SUMMARY", summary_arg.as_str()),
    ];
    let (status, stdout, stderr) = command(
        scratch.path(),
        &["compare", &base_arg, &new_arg, "--fail-on-regression"],
        &gh,
    );
    assert_eq!(status, 1, "{stderr}");
    let summary_text = std::fs::read_to_string(&summary).unwrap();
    assert!(
        summary_text.contains(
            "| regressed | `decide::evals` follows_the_greeter | 5/5 (100%) | 0/5 (0%) |"
        ),
        "{summary_text}"
    );
    let warnings: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("::warning"))
        .collect();
    assert_eq!(warnings.len(), 1, "{stdout}");
    assert!(
        warnings[0].starts_with("::warning title=copilot-eval%3A regressed follows_the_greeter::"),
        "{}",
        warnings[0]
    );
    assert!(
        warnings[0].contains(&format!("changed: {SKILL}")),
        "{}",
        warnings[0]
    );

    // 3. --rerun-failed: only the failing eval, its five trials each a new attempt;
    // --baseline compares with the first run as this one finishes, the evals not run again
    // listed as removed.
    let (status, _, stderr) = command(
        krate.path(),
        &[
            "--replay",
            "--plain",
            "--trials",
            "5",
            "--rerun-failed",
            &new_arg,
            "--baseline",
            &base_arg,
            "--fail-on-regression",
            "--json",
            &scratch.path().join("rerun.json").display().to_string(),
        ],
        &env,
    );
    assert_eq!(status, 1, "{stderr}");
    assert!(
        stderr.contains("rerun-failed: 1 of the 1 evals that did not pass in"),
        "{stderr}"
    );
    let rerun = read(&scratch.path().join("rerun.json"));
    assert_eq!(rerun.tests.len(), 5, "{:#?}", rerun.tests);
    for test in &rerun.tests {
        assert_eq!(test.name, "follows_the_greeter");
        assert_eq!(test.outcome, Outcome::Failed);
        let attempt = test.attempt.as_ref().expect("labelled as a new attempt");
        assert_eq!(attempt.number, 2);
        assert_eq!(attempt.previous_outcome, Outcome::Failed);
        assert_eq!(attempt.previous_started_at, second.report.started_at);
    }
    assert!(
        stderr.contains("regressed  decide::evals follows_the_greeter"),
        "{stderr}"
    );
    assert!(
        stderr.contains("removed    decide::evals needs_no_skill"),
        "{stderr}"
    );
    assert!(
        stderr.contains("compare: ") && stderr.contains(" -> this run"),
        "{stderr}"
    );
    // The summary leads with the decision against the baseline, before the comparison's
    // table: the baseline's line under the headline, each eval's verdict against it.
    let verdict = stderr.find("     Verdict ").expect("the verdict table");
    assert!(verdict < stderr.find("compare: ").unwrap(), "{stderr}");
    assert!(
        stderr.contains(&format!("             vs {base_arg} (")),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "             - vs baseline: regressed, 5/5 (100%) -> 0/5 (0%), -100 pp, p = 0.008\n"
        ),
        "{stderr}"
    );
    // The results keep it: the baseline file, and each eval of either side with its verdict.
    let baseline = rerun.baseline.expect("the baseline record");
    assert_eq!(baseline.file, base_arg);
    let verdicts: Vec<(&str, &str)> = (baseline.evals.iter())
        .map(|e| (e.name.as_str(), e.verdict.as_str()))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("follows_the_greeter", "regressed"),
            ("has_the_greeter_at_hand", "removed"),
            ("needs_no_skill", "removed")
        ]
    );
}
