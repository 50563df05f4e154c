//! `cargo copilot-eval init --ci github` (issue 34): the GitHub Actions workflow it writes, run
//! through the real command in a scratch repository, parsed as YAML.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

mod support;

/// Where the workflow goes in the repository.
const WORKFLOW: &str = ".github/workflows/copilot-eval.yml";
/// A copilot-eval-core dependency from git at a revision, as a manifest's lines.
const GIT_CORE: &str = "\n[dev-dependencies]\ncopilot-eval-core = { git = \"https://github.com/example/copilot-eval\", rev = \"0123456789abcdef0123456789abcdef01234567\" }\n";
/// The install that dependency pins.
const GIT_PIN: &str =
    "--git https://github.com/example/copilot-eval --rev 0123456789abcdef0123456789abcdef01234567";

/// Run actionlint on `workflow` (in its repository `repo`): no finding, or the test fails with
/// them. `None`: no actionlint here (skipped; a failure under COPILOT_EVAL_REQUIRE_RUNTIME=1).
fn actionlint(test: &str, repo: &Path, workflow: &Path) -> Option<()> {
    let actionlint = copilot_eval_e2e::actionlint_for(test)?;
    let output = Command::new(actionlint)
        .args(["-no-color", "-oneline"])
        .arg(workflow)
        .current_dir(repo)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "actionlint finds problems in {}:\n{}{}\n{}",
        workflow.display(),
        text(&output.stdout),
        text(&output.stderr),
        std::fs::read_to_string(workflow).unwrap()
    );
    Some(())
}

/// Every `actions/*` step of the workflow is at the current major of its action (node24; the
/// node20 majors are deprecated and actionlint flags them).
fn current_majors(workflow: &Value) {
    for job in workflow["jobs"].as_object().unwrap().keys() {
        for step in steps(workflow, job) {
            let Some(used) = step["uses"].as_str() else {
                continue;
            };
            if let Some(action) = used.strip_prefix("actions/") {
                assert!(
                    [
                        "checkout@v7",
                        "setup-node@v7",
                        "cache@v6",
                        "upload-artifact@v7",
                        "download-artifact@v8"
                    ]
                    .contains(&action),
                    "{used} is not its action's current major"
                );
            }
        }
    }
}

/// A scratch git repository (a `.git` folder is all `init --ci` looks for) holding a package at
/// `package` (relative to the repository) whose manifest has `extra` appended.
fn repository(package: &str, extra: &str) -> (tempfile::TempDir, PathBuf) {
    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir(repo.path().join(".git")).unwrap();
    let dir = repo.path().join(package);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!("[package]\nname = \"evals\"\nversion = \"0.1.0\"\nedition = \"2024\"\n{extra}"),
    )
    .unwrap();
    (repo, dir)
}

/// `cargo copilot-eval ARGS` in `dir`.
fn command(dir: &Path, args: &[&str]) -> Output {
    Command::new(support::command_path())
        .arg("copilot-eval")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The steps of a job, as parsed.
fn steps<'a>(workflow: &'a Value, job: &str) -> &'a Vec<Value> {
    workflow["jobs"][job]["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("job {job} has no steps: {workflow:#}"))
}

/// The index of the first step of `job` for which `matches` holds.
/// Whether `step` caches `path` (one line of its `with.path`).
fn caches(step: &Value, path: &str) -> bool {
    step["with"]["path"]
        .as_str()
        .is_some_and(|p| p.lines().any(|l| l == path))
}

/// The `evals` job's cache step of cargo's registry, with its index.
fn cargo_cache(workflow: &Value) -> (usize, &Value) {
    step(workflow, "evals", |s| {
        uses("actions/cache")(s) && caches(s, "~/.cargo/registry")
    })
}

fn step<'a>(
    workflow: &'a Value,
    job: &str,
    matches: impl Fn(&Value) -> bool,
) -> (usize, &'a Value) {
    steps(workflow, job)
        .iter()
        .enumerate()
        .find(|(_, s)| matches(s))
        .unwrap_or_else(|| panic!("no such step in job {job}: {workflow:#}"))
}

fn uses(action: &str) -> impl Fn(&Value) -> bool + '_ {
    move |s| {
        s["uses"]
            .as_str()
            .is_some_and(|u| u.split('@').next() == Some(action))
    }
}

fn runs(prefix: &str) -> impl Fn(&Value) -> bool + '_ {
    move |s| s["run"].as_str().is_some_and(|r| r.starts_with(prefix))
}

/// Every `run:` command of the workflow.
fn run_lines(workflow: &Value) -> Vec<String> {
    workflow["jobs"]
        .as_object()
        .unwrap()
        .keys()
        .flat_map(|job| steps(workflow, job))
        .filter_map(|s| s["run"].as_str().map(str::to_owned))
        .collect()
}

/// The workflow for a package at the repository's root: its jobs and steps; every `cargo
/// copilot-eval` option it passes is in that command's `--help`; docs/recording-and-ci.md shows
/// it exactly as written, so each of its commands is the documented one.
#[test]
fn init_ci_github_writes_the_documented_workflow() {
    let (repo, package) = repository(".", GIT_CORE);
    let output = command(&package, &["init", "--ci", "github"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let path = repo.path().join(WORKFLOW);
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains(&format!("created {}", path.display())),
        "{stdout}"
    );
    let written = std::fs::read_to_string(&path).unwrap();
    let workflow: Value = serde_saphyr::from_str(&written)
        .unwrap_or_else(|e| panic!("the workflow is not YAML: {e}\n{written}"));

    // Triggers, and the shard jobs' matrix.
    assert!(
        workflow["on"]["pull_request"].is_null() && workflow["on"].get("pull_request").is_some()
    );
    let evals = &workflow["jobs"]["evals"];
    let shards = evals["strategy"]["matrix"]["shard"].as_array().unwrap();
    assert!(shards.len() >= 2, "{evals:#}");
    assert_eq!(evals["strategy"]["fail-fast"], Value::Bool(false));
    // Rust, Node.js 24 (the current LTS; only npm runs on it: the runtime brings its own), the command, then the runtime from its cache keyed by its version.
    let (checkout, _) = step(&workflow, "evals", uses("actions/checkout"));
    let (rust, _) = step(&workflow, "evals", uses("dtolnay/rust-toolchain"));
    let (node, node_step) = step(&workflow, "evals", uses("actions/setup-node"));
    assert_eq!(node_step["with"]["node-version"], Value::from(24));
    let (install, install_step) = step(&workflow, "evals", runs("cargo install "));
    // The command from the dependency's revision, cached under it.
    assert_eq!(
        install_step["run"],
        Value::from(format!(
            "cargo install --locked {GIT_PIN} cargo-copilot-eval"
        ))
    );
    let (command_cache, command_step) = step(&workflow, "evals", |s| {
        uses("actions/cache")(s) && s["with"]["path"] == "~/.cargo/bin/cargo-copilot-eval"
    });
    assert_eq!(
        command_step["with"]["key"],
        Value::from(
            "cargo-copilot-eval-git-0123456789abcdef0123456789abcdef01234567-${{ runner.os }}"
        )
    );
    assert!(command_cache < install);
    // The runtime, installed and unpacked, keyed on the command's revision (its pinned runtime).
    let (cache, cache_step) = step(&workflow, "evals", |s| {
        uses("actions/cache")(s)
            && s["with"]["path"]
                .as_str()
                .is_some_and(|p| p.lines().any(|l| l == "~/.cache/copilot-eval/runtime"))
    });
    assert!(
        cache_step["with"]["path"]
            .as_str()
            .unwrap()
            .lines()
            .any(|l| l == "~/.cache/copilot-eval/runtime-cache/pkg"),
        "{cache_step:#}"
    );
    assert!(
        cache_step["with"]["key"]
            .as_str()
            .unwrap()
            .contains("git-0123456789abcdef0123456789abcdef01234567"),
        "{cache_step:#}"
    );
    // Cargo's registry and the build folder.
    let (cargo_cache_at, cargo_step) = cargo_cache(&workflow);
    assert!(caches(cargo_step, "target"), "{cargo_step:#}");
    assert!(checkout < cargo_cache_at);
    // Read-only permissions, current action majors, and actionlint finds nothing.
    assert_eq!(workflow["permissions"]["contents"], Value::from("read"));
    current_majors(&workflow);
    actionlint(
        "init_ci_github_writes_the_documented_workflow",
        repo.path(),
        &path,
    );
    // The `ci` profile the workflow runs with.
    let profile = std::fs::read_to_string(repo.path().join(".config/copilot-eval.toml")).unwrap();
    assert!(profile.contains("[profile.ci]\n"), "{profile}");
    assert!(profile.contains("\nreplay = true\n"), "{profile}");
    let (runtime, _) = step(
        &workflow,
        "evals",
        runs("cargo copilot-eval runtime install"),
    );
    let (replay, replay_step) = step(&workflow, "evals", runs("cargo copilot-eval --"));
    assert!(checkout < rust && rust < install && node < runtime && cache < runtime);
    assert!(install < replay && runtime < replay);
    let replay_line = replay_step["run"].as_str().unwrap();
    let shard_json = "results/shard-${{ matrix.shard }}.json";
    for part in [
        "--workspace",
        "--profile ci",
        "--partition hash:${{ matrix.shard }}/${{ strategy.job-total }}",
        &format!("--json {shard_json}"),
    ] {
        assert!(replay_line.contains(part), "{replay_line}");
    }
    assert!(!replay_line.contains("--manifest-path"), "{replay_line}");
    let (upload, upload_step) = step(&workflow, "evals", uses("actions/upload-artifact"));
    assert!(replay < upload);
    assert_eq!(upload_step["with"]["path"], Value::from(shard_json));
    assert_eq!(upload_step["if"], Value::from("always()"));

    // The report job: after every shard, whatever their outcome; merge, upload all three.
    let report = &workflow["jobs"]["report"];
    assert_eq!(report["needs"], Value::from("evals"));
    assert_eq!(report["if"], Value::from("always()"));
    let (download, download_step) = step(&workflow, "report", uses("actions/download-artifact"));
    assert_eq!(download_step["with"]["merge-multiple"], Value::Bool(true));
    let (merge, merge_step) = step(&workflow, "report", runs("cargo copilot-eval merge "));
    let merge_line = merge_step["run"].as_str().unwrap();
    let (uploaded, uploaded_step) = step(&workflow, "report", uses("actions/upload-artifact"));
    assert!(download < merge && merge < uploaded);
    let results = uploaded_step["with"]["path"].as_str().unwrap();
    for flag in ["--json", "--junit", "--html"] {
        let file = merge_line
            .split(&format!("{flag} "))
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or_else(|| panic!("merge writes no {flag}: {merge_line}"));
        assert!(file.starts_with(results), "{file} is not under {results}");
    }
    let (_, in_report) = step(&workflow, "report", runs("cargo install "));
    assert_eq!(in_report["run"], steps(&workflow, "evals")[install]["run"]);

    // Every option of a `cargo copilot-eval` step is in that command's --help.
    let lines = run_lines(&workflow);
    assert!(lines.len() >= 5, "{lines:#?}");
    for line in &lines {
        let Some(rest) = line.strip_prefix("cargo copilot-eval ") else {
            assert!(line.starts_with("cargo install --locked --git "), "{line}");
            assert!(line.contains(GIT_PIN), "{line}");
            continue;
        };
        let words: Vec<&str> = rest.split_whitespace().collect();
        let subcommand: Vec<&str> = match words.first() {
            Some(&"runtime") => words[..2].to_vec(),
            Some(&"merge") => vec!["merge"],
            _ => Vec::new(),
        };
        let help = command(Path::new("."), &[&subcommand[..], &["--help"]].concat());
        let help = text(&help.stdout);
        for flag in words.iter().filter(|w| w.starts_with("--")) {
            let flag = flag.split('=').next().unwrap();
            // An option's own line: `  -p, --package <PKG>` or `      --json <PATH>` (not a
            // description that mentions it).
            let defined = help.lines().map(str::trim_start).any(|l| {
                l.starts_with('-')
                    && l.split([' ', ','])
                        .take_while(|w| w.is_empty() || w.starts_with('-'))
                        .any(|w| w == flag)
            });
            assert!(
                defined,
                "`{line}` passes {flag}, which `cargo copilot-eval {} --help` does not list:\n{help}",
                subcommand.join(" ")
            );
        }
    }
    let cargo_install = Command::new(support::cargo())
        .args(["install", "--help"])
        .output()
        .unwrap();
    let cargo_install = text(&cargo_install.stdout);
    assert!(cargo_install.contains("--locked") && cargo_install.contains("--git"));

    // The docs' CI section shows the workflow as written.
    let docs = std::fs::read_to_string(support::workspace_root().join("docs/recording-and-ci.md"))
        .unwrap();
    assert!(
        docs.contains(&format!("```yaml\n{written}```")),
        "docs/recording-and-ci.md does not show the workflow `init --ci github` writes:\n{written}"
    );
}

/// An existing workflow file is kept (exit 1, naming it and `--force`), and replaced with
/// `--force`.
#[test]
fn an_existing_workflow_is_kept_unless_forced() {
    let (repo, package) = repository(".", GIT_CORE);
    let path = repo.path().join(WORKFLOW);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "mine\n").unwrap();
    let output = command(&package, &["init", "--ci", "github"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains(&format!("{} already exists", path.display())),
        "{stderr}"
    );
    assert!(stderr.contains("--force"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "mine\n");
    // The starter files were not written either: --ci writes the workflow only.
    assert!(!package.join("tests/evals.rs").exists());

    let output = command(&package, &["init", "--ci", "github", "--force"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains(&format!("replaced {}", path.display())));
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .starts_with("# Written by")
    );
}

/// A package below the repository's root: the workflow goes to the root and selects the package
/// by its manifest; a copilot-eval-core path dependency outside the repository is named.
#[test]
fn a_package_below_the_root_is_selected_by_its_manifest() {
    let core = support::workspace_root().join("copilot-eval-core");
    let extra = format!(
        "\n[dev-dependencies]\ncopilot-eval-core = {{ path = \"{}\" }}\n",
        core.display()
    );
    let (repo, package) = repository("crates/evals", &extra);
    let output = command(&package, &["init", "--ci", "github"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let written = std::fs::read_to_string(repo.path().join(WORKFLOW)).unwrap();
    let workflow: Value = serde_saphyr::from_str(&written).unwrap();
    let (_, replay) = step(&workflow, "evals", runs("cargo copilot-eval --"));
    assert!(
        replay["run"].as_str().unwrap().starts_with(
            "cargo copilot-eval --manifest-path crates/evals/Cargo.toml --workspace --profile ci "
        ),
        "{replay:#}"
    );
    // The path outside the repository: a warning naming the manifest's line; the command is
    // pinned to the commit of that checkout.
    let stdout = text(&output.stdout);
    let head = git_head(&core);
    assert!(
        stdout.contains(&format!(
            "warning: {}:7: `copilot-eval-core = {{ path = \"{}\" }}` is a path outside the repository; CI cannot build the package.",
            package.join("Cargo.toml").canonicalize().unwrap().display(),
            core.display()
        )),
        "{stdout}"
    );
    let (_, install) = step(&workflow, "evals", runs("cargo install "));
    assert!(
        install["run"]
            .as_str()
            .unwrap()
            .contains(&format!("--rev {head} ")),
        "{install:#}"
    );
    // The cache keeps the nested package's build folder.
    let (_, cargo_step) = cargo_cache(&workflow);
    assert!(caches(cargo_step, "crates/evals/target"), "{cargo_step:#}");
}

/// The commit the git checkout holding `folder` is at.
fn git_head(folder: &Path) -> String {
    let output = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(folder)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    text(&output.stdout).trim().to_owned()
}

/// `cargo copilot-eval ARGS` in `dir` building into this workspace's target folder, offline
/// (the package shares this workspace's lock file: no registry access).
fn suite_command(dir: &Path, args: &[&str]) -> Output {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap();
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    Command::new(support::command_path())
        .arg("copilot-eval")
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .env("CARGO_NET_OFFLINE", "true")
        .env("TMPDIR", &tmp)
        .env_remove("COPILOT_EVAL_MODE")
        .env_remove("COPILOT_EVAL_PROFILE")
        .env_remove("COPILOT_SKIP_CLI_DOWNLOAD")
        .output()
        .unwrap()
}

/// Issue 54's "done when": a skill author's first hour, in a package outside this repository
/// (its own git repository, depending on this checkout's copilot-eval-core by path). `init`,
/// `init --skill`, `init --ci github`: the skill's scaffold runs offline at once (its model
/// scripted) and fails until its checks are written; the workflow passes actionlint, pins the
/// command to the commit this checkout is at (the dependency's), caches cargo and the runtime;
/// the warning names the path dependency's Cargo.toml line, and `--core-git URL` rewrites that
/// line keeping the file; the `ci` profile exists and a `--profile ci` run uses it (replay).
#[test]
fn a_skill_authors_first_hour_outside_the_repository() {
    let test = "a_skill_authors_first_hour_outside_the_repository";
    if copilot_eval_e2e::runtime_for(test).is_none() {
        return;
    }
    let core = support::workspace_root().join("copilot-eval-core");
    let repo = tempfile::Builder::new()
        .prefix("first-hour-")
        .tempdir()
        .unwrap();
    let dir = repo.path();
    std::fs::create_dir(dir.join(".git")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"first_hour\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n# my comment\n[dependencies]\n",
    )
    .unwrap();
    std::fs::create_dir(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), "//! A user's crate.\n").unwrap();
    std::fs::copy(
        support::workspace_root().join("Cargo.lock"),
        dir.join("Cargo.lock"),
    )
    .unwrap();
    let skill = dir.join("skills/greeter");
    std::fs::create_dir_all(skill.join("evals")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: greeter\ndescription: Greets people by name. Use when asked to greet someone.\n---\nGreet the person by name, warmly.\n",
    )
    .unwrap();
    std::fs::write(
        skill.join("evals/evals.json"),
        r#"{"skill_name": "greeter", "evals": [{"id": 1, "prompt": "Greet Ferris.", "expectations": ["The answer greets Ferris by name"]}]}"#,
    )
    .unwrap();

    let core_arg = core.to_str().unwrap();
    let output = command(dir, &["init", "--core-path", core_arg]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let output = command(dir, &["init", "--skill", "skills/greeter"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(
        text(&output.stdout)
            .contains("`cargo copilot-eval greeter_skill` runs the entries offline now"),
        "{}",
        text(&output.stdout)
    );
    let output = command(dir, &["init", "--ci", "github"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    let manifest = dir.join("Cargo.toml").canonicalize().unwrap();
    let line = format!("copilot-eval-core = {{ path = \"{}\" }}", core.display());
    let number = 1 + std::fs::read_to_string(&manifest)
        .unwrap()
        .lines()
        .position(|l| l == line)
        .expect("init added the path dependency");
    assert!(
        stdout.contains(&format!(
            "warning: {}:{number}: `{line}` is a path outside the repository; CI cannot build the package.",
            manifest.display()
        )),
        "{stdout}"
    );

    // The workflow: actionlint-clean, the command pinned to this checkout's commit, caches.
    let workflow_path = dir.join(WORKFLOW);
    let written = std::fs::read_to_string(&workflow_path).unwrap();
    let workflow: Value = serde_saphyr::from_str(&written).unwrap();
    let head = git_head(&core);
    let (_, install) = step(&workflow, "evals", runs("cargo install "));
    // From copilot-eval's repository (the path is not in this package's repository), at the
    // commit of the checkout the path dependency names.
    let install = install["run"].as_str().unwrap();
    assert!(
        install.starts_with("cargo install --locked --git https://")
            && install.ends_with(&format!(" --rev {head} cargo-copilot-eval")),
        "{install}"
    );
    let caches: Vec<String> = steps(&workflow, "evals")
        .iter()
        .filter(|s| uses("actions/cache")(s))
        .map(|s| {
            format!(
                "{} {}",
                s["with"]["path"].as_str().unwrap(),
                s["with"]["key"].as_str().unwrap()
            )
        })
        .collect();
    for needle in [
        "~/.cargo/registry\n",
        "\ntarget\n",
        "runtime-cache/pkg\n",
        &format!("cargo-copilot-eval-git-{head}-"),
    ] {
        assert!(
            caches.iter().any(|c| c.contains(needle)),
            "no cache of {needle:?}: {caches:#?}"
        );
    }
    current_majors(&workflow);
    actionlint(test, dir, &workflow_path);
    let (_, replay) = step(&workflow, "evals", runs("cargo copilot-eval --"));
    assert!(
        replay["run"].as_str().unwrap().contains("--profile ci "),
        "{replay:#}"
    );

    // The `ci` profile, used by a `--profile ci` run: the starter eval replays its cassette (a
    // run without --replay and without the profile would go live), the skill's scaffold runs
    // offline, its model scripted, and fails on its unwritten check.
    assert!(dir.join(".config/copilot-eval.toml").is_file());
    let run = suite_command(
        dir,
        &["--profile", "ci", "--plain", "--json", "results/ci.json"],
    );
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "profile ci ({}): --replay --no-fail-fast",
            dir.join(".config/copilot-eval.toml")
                .canonicalize()
                .unwrap()
                .display()
        )),
        "{stderr}"
    );
    let report: copilot_eval_core::report::SuiteReport =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results/ci.json")).unwrap())
            .unwrap();
    assert_eq!(report.requested_mode.as_deref(), Some("replay"), "{stderr}");
    use copilot_eval_core::report::Outcome;
    let outcome = |name: &str| {
        let test = report
            .tests
            .iter()
            .find(|t| t.name.contains(name))
            .unwrap_or_else(|| panic!("no {name}: {stderr}"));
        (
            test.outcome,
            test.runs.first().map(|r| r.mode.clone()),
            test.message.clone(),
        )
    };
    let (starter, starter_mode, _) = outcome("writes_a_greeting");
    assert_eq!(
        (starter, starter_mode.as_deref()),
        (Outcome::Passed, Some("replay")),
        "{stderr}"
    );
    let (scaffold, scaffold_mode, message) = outcome("eval_1");
    assert_eq!(
        (scaffold, scaffold_mode.as_deref()),
        (Outcome::Failed, Some("scripted")),
        "{stderr}"
    );
    assert!(
        format!("{message:?}").contains("The answer greets Ferris by name"),
        "{message:?}"
    );

    // `--core-git URL` rewrites the path dependency to git at the same commit, keeping the
    // file; the workflow installs from there.
    let before = std::fs::read_to_string(&manifest).unwrap();
    // The checkout's commit now (a commit made while this test ran moves it).
    let head = git_head(&core);
    let output = command(
        dir,
        &[
            "init",
            "--ci",
            "github",
            "--force",
            "--core-git",
            "https://example.com/copilot-eval.git",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let after = std::fs::read_to_string(&manifest).unwrap();
    assert_eq!(
        after,
        before.replace(&line, &format!("copilot-eval-core = {{ git = \"https://example.com/copilot-eval.git\", rev = \"{head}\" }}"))
    );
    assert!(after.contains("# my comment\n"), "{after}");
    let written = std::fs::read_to_string(&workflow_path).unwrap();
    assert!(
        written.contains(&format!("cargo install --locked --git https://example.com/copilot-eval.git --rev {head} cargo-copilot-eval")),
        "{written}"
    );
}

/// `init --core-git URL` in a package that has its scaffold does not refuse: it rewrites the
/// path dependency to git at that checkout's commit, keeping the manifest's formatting, and
/// keeps the scaffold's files as they are.
#[test]
fn init_core_git_rewrites_the_dependency_of_a_scaffolded_package() {
    let core = support::workspace_root().join("copilot-eval-core");
    let line = format!(
        "copilot-eval-core = {{ path = \"{}\" }} # mine",
        core.display()
    );
    let (_repo, package) = repository(".", &format!("\n[dev-dependencies]\n{line}\n"));
    for file in [
        "tests/evals.rs",
        "tests/cassettes/evals/writes_a_greeting.yaml",
    ] {
        let path = package.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "// the user's own\n").unwrap();
    }
    let before = std::fs::read_to_string(package.join("Cargo.toml")).unwrap();
    let output = command(
        &package,
        &["init", "--core-git", "https://example.com/ce.git"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let head = git_head(&core);
    assert_eq!(
        std::fs::read_to_string(package.join("Cargo.toml")).unwrap(),
        before.replace(
            &line,
            &format!("copilot-eval-core = {{ git = \"https://example.com/ce.git\", rev = \"{head}\" }} # mine")
        )
    );
    assert_eq!(
        std::fs::read_to_string(package.join("tests/evals.rs")).unwrap(),
        "// the user's own\n"
    );
    assert!(text(&output.stdout).contains("rewrote the dependency copilot-eval-core"));
}
