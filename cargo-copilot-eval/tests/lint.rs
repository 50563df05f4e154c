//! `cargo copilot-eval lint`: output lines, summary and exit statuses of the real binary.

use std::path::{Path, PathBuf};
use std::process::Command;

struct Output {
    status: i32,
    stdout: String,
    stderr: String,
}

fn lint(args: &[&str], paths: &[&Path]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_cargo-copilot-eval"))
        .arg("copilot-eval")
        .arg("lint")
        .args(args)
        .args(paths)
        .output()
        .unwrap();
    Output {
        status: output.status.code().unwrap(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// A fresh folder holding `files`.
fn tree(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("lint-{name}"));
    let _ = std::fs::remove_dir_all(&root);
    for (path, contents) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }
    root
}

#[test]
fn a_clean_configuration_exits_zero() {
    let config =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/quickstart/copilot-config");
    let out = lint(&["--deny-warnings"], &[&config]);
    assert_eq!(out.status, 0, "{}{}", out.stdout, out.stderr);
    // No warning; the one note (shown with --verbose only) tells which id the model must use
    // for the agent.
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        "lint: 2 files checked (0 skills, 1 agent, 1 instruction): 2 accepted, 0 with errors; 0 errors, 0 warnings, 1 note\n"
    );
    let out = lint(&["--verbose"], &[&config]);
    assert_eq!(out.status, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.ends_with("reviewer.agent.md:2: note[agent-id] `name`: makes the agent's id \"Release Reviewer\", not the file name's \"reviewer\": the runtime lists the agent as \"Release Reviewer\" and the model must pass `agent_type: \"Release Reviewer\"` to `task` (a scripted or recorded dispatch too)\n"),
        "{}",
        out.stdout
    );
    assert_eq!(out.stdout.lines().count(), 1);
}

#[test]
fn errors_exit_one_with_one_line_each() {
    let root = tree(
        "errors",
        &[
            (
                "skills/pdf/SKILL.md",
                "---\nname: pdf\ndescription: *PDFs\n---\nUse it.\n",
            ),
            (
                "agents/helper.agent.md",
                "---\ndescription: Helps.\nmode: agent\n---\nHelp.\n",
            ),
        ],
    );
    let out = lint(&[], &[&root]);
    assert_eq!(out.status, 1, "{}{}", out.stdout, out.stderr);
    let prefix = format!("{}/", root.display());
    let lines: Vec<String> = out.stdout.lines().map(|l| l.replace(&prefix, "")).collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].starts_with("agents/helper.agent.md:3: warning[unknown-key] `mode`: "),
        "{}",
        lines[0]
    );
    // A YAML error says how to fix it, in our words (the runtime refuses such a skill).
    assert!(
        lines[1].starts_with(
            "skills/pdf/SKILL.md:3: error[front-matter-yaml]: is not valid YAML: the value of `description` starts with `*`, which YAML reads as syntax; quote the value: description: \"*PDFs\""
        ),
        "{}",
        lines[1]
    );
    assert!(out.stderr.contains("2 files checked (1 skill, 1 agent, 0 instructions): 1 accepted, 1 with errors; 1 error, 1 warning"), "{}", out.stderr);

    let quiet = lint(&["--quiet"], &[&root]);
    assert_eq!((quiet.status, quiet.stdout.as_str()), (1, ""));
}

#[test]
fn warnings_pass_unless_denied_and_missing_paths_fail() {
    let root = tree(
        "warnings",
        &[(
            "agents/helper.agent.md",
            "---\ndescription: Helps.\nhidden: true\n---\nHelp.\n",
        )],
    );
    assert_eq!(lint(&[], &[&root]).status, 0);
    assert_eq!(lint(&["--deny-warnings"], &[&root]).status, 1);
    let out = lint(&[], &[&root.join("nope")]);
    assert_eq!(out.status, 1);
    assert!(
        out.stdout.contains("error[path-missing]: does not exist"),
        "{}",
        out.stdout
    );
}

/// A skill's `evals/evals.json` is linted with its skill: one line per problem, each naming the
/// file, the rule, the field and the fix; the skill is rejected.
#[test]
fn a_skills_evals_file_is_checked_with_the_skill() {
    let root = tree(
        "skill-evals",
        &[
            (
                "skills/changelog/SKILL.md",
                "---\nname: changelog\ndescription: Writes CHANGELOG.md sections.\n---\nWrite them.\n",
            ),
            (
                "skills/changelog/evals/evals.json",
                r#"{
  "skill_name": "release-notes",
  "evals": [
    {"id": 1, "prompt": "Write the changelog.", "files": ["evals/files/CHANGES.txt"], "grader": "me"},
    {"id": 1, "prompt": "Add 1.2.1."}
  ]
}"#,
            ),
        ],
    );
    let out = lint(&[], &[&root]);
    assert_eq!(out.status, 1, "{}{}", out.stdout, out.stderr);
    let prefix = format!("{}/", root.display());
    let lines: Vec<String> = out.stdout.lines().map(|l| l.replace(&prefix, "")).collect();
    let file = "skills/changelog/evals/evals.json";
    assert_eq!(
        lines,
        [
            format!(
                "{file}: error[evals-duplicate-id] `evals`: evals[1]: `id` 1 is also the id of evals[0]; give each entry its own id"
            ),
            format!(
                "{file}: warning[evals-unknown-field] `evals[0].grader`: evals[0] (id 1): `grader` is not a key of an eval entry (known: id, prompt, expected_output, files, expectations); copilot-eval ignores it: remove it, or fix its spelling"
            ),
            format!(
                "{file}: error[evals-file-missing] `evals[0].files[0]`: evals[0] (id 1): `files`[0] \"evals/files/CHANGES.txt\" does not exist (looked for skills/changelog/evals/files/CHANGES.txt): add the file, or fix the path (relative to the skill folder)"
            ),
            format!(
                "{file}: error[evals-skill-name] `skill_name`: \"release-notes\" is not the skill's `name` \"changelog\" (its SKILL.md's front matter): write \"skill_name\": \"changelog\", or remove `skill_name`"
            ),
        ]
    );
    assert!(
        out.stderr.contains("1 file checked (1 skill, 0 agents, 0 instructions): 0 accepted, 1 with errors; 3 errors, 1 warning"),
        "{}",
        out.stderr
    );
}

/// The scripted example's skill and its valid `evals/evals.json` have no error. Its trigger set
/// is minimal on purpose (its scripted model invokes the skill when a query says "changelog"),
/// so trigger coverage warns twice: no near-miss query that should not trigger, and every
/// should-trigger query names the skill.
#[test]
fn the_example_skill_has_no_error_and_its_minimal_trigger_set_draws_the_coverage_warnings() {
    let skill = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/scripted/skills/changelog");
    assert!(skill.join("evals/evals.json").is_file());
    let out = lint(&[], &[&skill]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let warnings: Vec<&str> = (out.stdout.lines())
        .filter_map(|l| l.split_once(": warning[")?.1.split_once(']'))
        .map(|(id, _)| id)
        .collect();
    assert_eq!(
        warnings,
        ["triggers-no-near-miss", "triggers-names-skill"],
        "{}",
        out.stdout
    );
    assert!(
        out.stderr
            .contains("1 file checked (1 skill, 0 agents, 0 instructions): 1 accepted, 0 with errors; 0 errors, 2 warnings"),
        "{}",
        out.stderr
    );
}
