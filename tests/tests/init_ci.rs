//! `cargo copilot-eval init --ci github` (issue 34): the GitHub Actions workflow it writes, run
//! through the real command in a scratch repository, parsed as YAML.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use copilot_eval_core::runtime::PINNED_RUNTIME_VERSION;
use serde_json::Value;

mod support;

/// Where the workflow goes in the repository.
const WORKFLOW: &str = ".github/workflows/copilot-eval.yml";

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
    let (repo, package) = repository(".", "");
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
    // Rust, Node.js 20, the command, then the runtime from its cache keyed by its version.
    let (checkout, _) = step(&workflow, "evals", uses("actions/checkout"));
    let (rust, _) = step(&workflow, "evals", uses("dtolnay/rust-toolchain"));
    let (node, node_step) = step(&workflow, "evals", uses("actions/setup-node"));
    assert_eq!(node_step["with"]["node-version"], Value::from(20));
    let (install, _) = step(&workflow, "evals", runs("cargo install "));
    let (cache, cache_step) = step(&workflow, "evals", |s| {
        uses("actions/cache")(s)
            && s["with"]["path"]
                .as_str()
                .is_some_and(|p| p.ends_with(&format!("/runtime/{PINNED_RUNTIME_VERSION}")))
    });
    assert!(
        cache_step["with"]["key"]
            .as_str()
            .unwrap()
            .contains(PINNED_RUNTIME_VERSION),
        "{cache_step:#}"
    );
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
        "--replay",
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
    let (repo, package) = repository(".", "");
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
            "cargo copilot-eval --manifest-path crates/evals/Cargo.toml --workspace --replay "
        ),
        "{replay:#}"
    );
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains(&format!(
            "depends on copilot-eval-core at the path {}, outside the repository",
            core.display()
        )),
        "{stdout}"
    );
}
