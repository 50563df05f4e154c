//! `cargo copilot-eval init`: what it writes, what it refuses, and that its scaffold runs offline
//! with `cargo copilot-eval --replay` right after it is created (through the real runtime).

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_cargo-copilot-eval");

struct Output {
    status: i32,
    stdout: String,
    stderr: String,
}

fn run(cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let output = Command::new(BIN)
        .arg("copilot-eval")
        .args(args)
        .current_dir(cwd)
        .envs(env.iter().map(|(k, v)| (*k, v.as_os_str())))
        .env_remove("COPILOT_EVAL_MODE")
        .output()
        .unwrap();
    Output {
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn core_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../copilot-eval-core")
        .canonicalize()
        .unwrap()
}

/// A fresh library package `name` (outside any workspace) in a temporary folder.
fn package(name: &str, extra_files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("copilot-eval-init-")
        .tempdir()
        .unwrap();
    let files = [
        (
            "Cargo.toml",
            format!(
                "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n# keep this comment\n[dependencies]\n"
            ),
        ),
        ("src/lib.rs", "//! A user's crate.\n".to_owned()),
    ];
    for (path, text) in files
        .iter()
        .map(|(p, t)| (*p, t.as_str()))
        .chain(extra_files.iter().copied())
    {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

fn read(dir: &Path, path: &str) -> String {
    std::fs::read_to_string(dir.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn init_writes_the_scaffold_and_keeps_what_is_there() {
    let dir = package(
        "scaffolded",
        &[
            (".gitignore", "/target"),
            (".cargo/config.toml", "[build]\njobs = 2 # mine\n"),
        ],
    );
    let core = core_dir();
    let out = run(
        dir.path(),
        &["init", "--core-path", core.to_str().unwrap()],
        &[],
    );
    assert_eq!(out.status, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("created tests/evals.rs"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("created tests/cassettes/evals/writes_a_greeting.yaml"),
        "{}",
        out.stdout
    );

    let test = read(dir.path(), "tests/evals.rs");
    assert!(test.contains("async fn writes_a_greeting(ctx: EvalContext)"));
    let cassette = read(dir.path(), "tests/cassettes/evals/writes_a_greeting.yaml");
    assert!(cassette.contains("Create a file called 'greeting.txt'"));

    let manifest = read(dir.path(), "Cargo.toml");
    assert!(manifest.contains("# keep this comment"), "{manifest}");
    let expected = format!(
        "[dev-dependencies]\ncopilot-eval-core = {{ path = \"{}\" }}\n",
        core.display()
    );
    assert!(manifest.contains(&expected), "{manifest}");

    let config = read(dir.path(), ".cargo/config.toml");
    assert!(config.starts_with("[build]\njobs = 2 # mine\n"), "{config}");
    assert!(
        config.contains("[env]\nCOPILOT_SKIP_CLI_DOWNLOAD = \"1\"\n"),
        "{config}"
    );
    assert_eq!(
        read(dir.path(), ".gitignore"),
        "/target\n# copilot-eval artifacts (cargo copilot-eval --json/--junit)\nresults/\n"
    );
}

#[test]
fn init_from_a_subfolder_finds_the_package_above() {
    let dir = package("nested", &[("src/deep/mod.rs", "")]);
    let core = core_dir();
    let out = run(
        &dir.path().join("src/deep"),
        &["init", "--core-path", core.to_str().unwrap()],
        &[],
    );
    assert_eq!(out.status, 0, "{}{}", out.stdout, out.stderr);
    // The scaffold lands in the package root, not in the folder init was run from.
    read(dir.path(), "tests/evals.rs");
    assert!(!dir.path().join("src/deep/tests").exists());
    assert!(read(dir.path(), "Cargo.toml").contains("copilot-eval-core = {"));
    let manifest = dir.path().join("Cargo.toml");
    assert!(
        out.stdout
            .contains(&format!("--manifest-path {}", manifest.display())),
        "the next command must name the package found above: {}",
        out.stdout
    );
}

#[test]
fn init_outside_a_package_creates_one() {
    let dir = tempfile::Builder::new()
        .prefix("copilot-eval-init-empty-")
        .tempdir()
        .unwrap();
    let folder = dir.path().join("my_evals");
    std::fs::create_dir(&folder).unwrap();
    let core = core_dir();
    let out = run(
        &folder,
        &["init", "--core-path", core.to_str().unwrap()],
        &[],
    );
    assert_eq!(out.status, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("created a library package in"),
        "{}",
        out.stdout
    );
    let manifest = read(&folder, "Cargo.toml");
    assert!(manifest.contains("name = \"my_evals\""), "{manifest}");
    assert!(manifest.contains("copilot-eval-core = {"), "{manifest}");
    read(&folder, "src/lib.rs");
    read(&folder, "tests/evals.rs");
    assert!(
        out.stdout.contains("created tests/evals.rs"),
        "paths are shown relative to the folder init ran in: {}",
        out.stdout
    );
}

#[test]
fn init_refuses_to_overwrite_and_changes_nothing() {
    for existing in [
        "tests/evals.rs",
        "tests/cassettes/evals/writes_a_greeting.yaml",
    ] {
        let dir = package("occupied", &[(existing, "// the user's own file\n")]);
        let before = read(dir.path(), "Cargo.toml");
        let manifest = dir.path().join("Cargo.toml");
        // From another folder, through --manifest-path.
        let out = run(
            Path::new("/"),
            &["init", "--manifest-path", manifest.to_str().unwrap()],
            &[],
        );
        assert_eq!(out.status, 1, "{}{}", out.stdout, out.stderr);
        let named = dir.path().join(existing);
        assert!(
            out.stderr.contains(&format!(
                "error: {} already exists; init never overwrites a file",
                named.display()
            )),
            "{}",
            out.stderr
        );
        assert_eq!(read(dir.path(), existing), "// the user's own file\n");
        assert_eq!(read(dir.path(), "Cargo.toml"), before);
        assert!(!dir.path().join(".gitignore").exists());
        assert!(!dir.path().join(".cargo").exists());
    }

    // A manifest that already depends on copilot-eval-core keeps its dependency as it is.
    let dir = package("depends", &[]);
    let manifest = dir.path().join("Cargo.toml");
    let text = read(dir.path(), "Cargo.toml") + "\n[dev-dependencies]\ncopilot-eval-core = \"9\"\n";
    std::fs::write(&manifest, &text).unwrap();
    let out = run(dir.path(), &["init"], &[]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert_eq!(read(dir.path(), "Cargo.toml"), text);
    assert!(
        out.stdout
            .contains("it already depends on copilot-eval-core"),
        "{}",
        out.stdout
    );

    // A virtual workspace manifest is refused.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), "[workspace]\nmembers = []\n").unwrap();
    let out = run(dir.path(), &["init"], &[]);
    assert_eq!(out.status, 1);
    assert!(out.stderr.contains("has no [package]"), "{}", out.stderr);
}

/// The done-when of `init`, and the book's first chapter (docs/getting-started.md): scaffold a
/// fresh crate that depends on copilot-eval-core by path, add the chapter's own eval verbatim,
/// then run `cargo copilot-eval --replay` on it at once: both evals pass. The crate shares this workspace's
/// target folder (only the crate itself and copilot-eval-core are compiled) and its lock file
/// (no registry access).
#[test]
fn the_scaffold_replays_offline_right_after_init() {
    if copilot_eval_core::runtime::require_for_test("the_scaffold_replays_offline_right_after_init")
        .is_none()
    {
        return;
    }
    let dir = package("starter_user", &[]);
    let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock");
    std::fs::copy(&lock, dir.path().join("Cargo.lock")).unwrap();
    let core = core_dir();
    let out = run(
        dir.path(),
        &["init", "--core-path", core.to_str().unwrap()],
        &[],
    );
    assert_eq!(out.status, 0, "{}", out.stderr);
    // The getting-started chapter's eval, as the chapter shows it, with the dev-dependency it
    // names.
    let chapter = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/getting-started.md"),
    )
    .unwrap();
    let (_, code) = chapter
        .split_once("```rust,ignore\n")
        .expect("the chapter has its eval");
    let (code, _) = code.split_once("```").unwrap();
    std::fs::write(dir.path().join("tests/first_eval.rs"), code).unwrap();
    let manifest = read(dir.path(), "Cargo.toml");
    assert!(manifest.trim_end().ends_with('}'), "{manifest}");
    std::fs::write(
        dir.path().join("Cargo.toml"),
        format!("{}\nserde_json = \"1\"\n", manifest.trim_end()),
    )
    .unwrap();

    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let output = Command::new(BIN)
        .args(["copilot-eval", "--replay", "--plain"])
        .args(["--json", "results/native.json"])
        .current_dir(dir.path())
        .env("CARGO_TARGET_DIR", target)
        .env("CARGO_NET_OFFLINE", "true")
        .env("TMPDIR", &tmp)
        .env_remove("COPILOT_EVAL_MODE")
        .env_remove("COPILOT_SKIP_CLI_DOWNLOAD")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("PASS [") && stderr.contains("starter_user::evals writes_a_greeting"),
        "{stderr}"
    );
    let report: copilot_eval_core::report::SuiteReport =
        serde_json::from_str(&read(dir.path(), "results/native.json")).unwrap();
    // The starter eval replays its cassette, the chapter's eval scripts its model: the suite
    // ran both ways, asked for replay.
    assert_eq!(report.mode, "mixed");
    assert_eq!(report.requested_mode.as_deref(), Some("replay"));
    let [test, chapter] = report.tests.as_slice() else {
        panic!("two evals: {:#?}", report.tests)
    };
    assert_eq!(test.name, "writes_a_greeting");
    assert_eq!(test.runs[0].mode, "replay");
    assert_eq!(
        test.runs[0].stop_reason,
        copilot_eval_core::StopReason::Completed
    );
    assert_eq!(test.properties[0].value, "Hello, Ferris!");
    assert_eq!(chapter.name, "writes_the_changelog");
    assert_eq!(
        chapter.outcome,
        copilot_eval_core::report::Outcome::Passed,
        "{chapter:#?}"
    );
    assert_eq!(chapter.runs[0].mode, "scripted");
}

/// `init`'s last line names `runtime install` only when no runtime resolves: with the pinned
/// runtime installed it names the replay command alone; with an empty cache it names the install
/// first.
#[test]
fn init_names_runtime_install_only_when_it_is_needed() {
    if copilot_eval_core::runtime::require_for_test(
        "init_names_runtime_install_only_when_it_is_needed",
    )
    .is_none()
    {
        return;
    }
    let core = core_dir();
    let dir = package("installed", &[]);
    let out = run(
        dir.path(),
        &["init", "--core-path", core.to_str().unwrap()],
        &[],
    );
    assert_eq!(out.status, 0, "{}", out.stderr);
    let last = out.stdout.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("next: `cargo copilot-eval --replay`"),
        "{last}"
    );
    assert!(!last.contains("runtime install"), "{last}");

    let empty_cache = tempfile::tempdir().unwrap();
    let dir = package("not_installed", &[]);
    let out = run(
        dir.path(),
        &["init", "--core-path", core.to_str().unwrap()],
        &[("COPILOT_EVAL_CACHE_DIR", empty_cache.path())],
    );
    assert_eq!(out.status, 0, "{}", out.stderr);
    let last = out.stdout.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("next: `cargo copilot-eval runtime install` (once), then"),
        "{last}"
    );
}

/// Copy the folder `from` to `to`, recursively.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// `init --skill` on a copy of the scripted example's skill in a fresh package: the test file
/// names every expectation of the skill's evals.json in a failing placeholder, and the package's
/// tests compile with it (warnings included: none in the generated file). The package shares
/// this workspace's target folder and lock file (no registry access).
#[test]
fn init_skill_scaffolds_a_skill_evals_test_that_compiles() {
    let example =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/scripted/skills/changelog");
    let dir = package("skill_user", &[]);
    copy_tree(&example, &dir.path().join("skills/changelog"));
    let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock");
    std::fs::copy(&lock, dir.path().join("Cargo.lock")).unwrap();
    let core = core_dir();
    let out = run(
        dir.path(),
        &[
            "init",
            "--skill",
            "skills/changelog",
            "--core-path",
            core.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("created tests/changelog_evals.rs"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("`cargo copilot-eval --record changelog_skill`"),
        "{}",
        out.stdout
    );
    // Only the skill's test file: no starter eval.
    assert!(!dir.path().join("tests/evals.rs").exists());
    assert!(read(dir.path(), "Cargo.toml").contains("copilot-eval-core = {"));

    let test = read(dir.path(), "tests/changelog_evals.rs");
    assert!(
        test.contains("#[copilot_eval(skill_evals = \"skills/changelog\", model = \"claude-sonnet-4.5\", timeout_s = 300)]\nasync fn changelog_skill(ctx: EvalContext, case: SkillCase) {"),
        "{test}"
    );
    let evals = copilot_eval_core::customization::skill::evals_file::parse_evals_file(&read(
        dir.path(),
        "skills/changelog/evals/evals.json",
    ))
    .unwrap();
    let mut placeholders = 0;
    for entry in &evals.evals {
        assert!(
            test.contains(&format!("        {:?} => vec![\n", entry.id)),
            "no arm for {}:\n{test}",
            entry.describe()
        );
        for expectation in &entry.expectations {
            let line = format!("Check::predicate({expectation:?}, |_result| false),");
            assert!(test.contains(&line), "no {line} in:\n{test}");
            placeholders += 1;
        }
    }
    // Every check of the file is one of those failing placeholders, each held to an
    // empty-answer control before the session.
    assert_eq!(
        test.matches("Check::predicate(").count(),
        placeholders,
        "{test}"
    );
    assert!(
        test.contains("ctx.check_controls(check, &[Control::empty_answer()])"),
        "{test}"
    );
    assert!(placeholders >= 7, "{placeholders}");

    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["build", "--tests", "--offline", "--message-format", "short"])
        .current_dir(dir.path())
        .env("CARGO_TARGET_DIR", target)
        .env_remove("COPILOT_EVAL_MODE")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        !stderr.contains("tests/changelog_evals.rs"),
        "the generated file compiles without warnings:\n{stderr}"
    );
}

/// `init --skill` refuses, changing nothing: a missing folder, one without SKILL.md, without
/// evals/evals.json, with an invalid one (the parser's message), and an existing test file.
#[test]
fn init_skill_refuses_and_changes_nothing() {
    let skill_md = "---\nname: notes\ndescription: Writes notes.\n---\nWrite them.\n";
    let valid =
        r#"{"evals": [{"id": 1, "prompt": "Write notes.", "expectations": ["notes exist"]}]}"#;
    let cases: [(&[(&str, &str)], &str); 5] = [
        (
            &[],
            "error: --skill skills/notes: no such folder; give the skill folder",
        ),
        (
            &[("skills/notes/README.md", "no skill")],
            "error: --skill skills/notes: has no SKILL.md, so it is no skill folder",
        ),
        (
            &[("skills/notes/SKILL.md", skill_md)],
            "error: --skill skills/notes: has no evals/evals.json to make eval tests from",
        ),
        (
            &[
                ("skills/notes/SKILL.md", skill_md),
                (
                    "skills/notes/evals/evals.json",
                    r#"{"evals": [{"id": 1, "prompt": "a"}, {"id": 1, "prompt": "b"}]}"#,
                ),
            ],
            "skills/notes/evals/evals.json: evals[1]: `id` 1 is also the id of evals[0]; give each entry its own id (`cargo copilot-eval lint skills/notes` lists every problem)",
        ),
        (
            &[
                ("skills/notes/SKILL.md", skill_md),
                ("skills/notes/evals/evals.json", valid),
                ("tests/notes_evals.rs", "// the user's own file\n"),
            ],
            "tests/notes_evals.rs already exists; init never overwrites a file (nothing was changed). Move it away, or add the `skill_evals` function to it by hand",
        ),
    ];
    for (files, wanted) in cases {
        let dir = package("skill_refused", files);
        let before = read(dir.path(), "Cargo.toml");
        let out = run(dir.path(), &["init", "--skill", "skills/notes"], &[]);
        assert_eq!(out.status, 1, "{wanted}: {}{}", out.stdout, out.stderr);
        assert!(out.stderr.contains(wanted), "{wanted}:\n{}", out.stderr);
        assert_eq!(read(dir.path(), "Cargo.toml"), before);
        assert!(!dir.path().join(".cargo").exists());
        assert!(!dir.path().join(".gitignore").exists());
    }
    // The valid skill is accepted once the test file is out of the way.
    let dir = package(
        "skill_accepted",
        &[
            ("skills/notes/SKILL.md", skill_md),
            ("skills/notes/evals/evals.json", valid),
        ],
    );
    let out = run(dir.path(), &["init", "--skill", "skills/notes"], &[]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(
        read(dir.path(), "tests/notes_evals.rs")
            .contains("Check::predicate(\"notes exist\", |_result| false),")
    );
}
