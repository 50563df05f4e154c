//! A skill's own `evals/evals.json` under `lint` (read by
//! [`evals_file`](crate::customization::skill::evals_file), the reader the `skill_evals`
//! attribute compiles too). The runtime never reads the file; what is an error here is what
//! makes the attribute refuse the file, or run the entries against another skill.
//!
//! | rule | severity | checks |
//! |---|---|---|
//! | `evals-invalid` | error | the file parses (the parser's message names the entry, the key and what to write) |
//! | `evals-duplicate-id` | error | no entry repeats an earlier entry's `id` or test name |
//! | `evals-unknown-field` | warning | every key (top level and per entry) is one the format defines |
//! | `evals-file-missing` | error | each entry's `files` stay inside the skill folder and exist there |
//! | `evals-skill-name` | error | `skill_name`, when given, is the skill's front-matter `name` |

use std::path::Path;

use super::SkillFolder;
use crate::customization::Problem;
use crate::customization::skill::evals_file::{
    ENTRY_KEYS, EVALS_FILE, EvalsFile, FILE_KEYS, clashes, read_evals_file, stays_inside,
};

/// The file does not parse.
pub(crate) const INVALID: &str = "evals-invalid";
/// Two entries share an id (or a test name).
pub(crate) const DUPLICATE_ID: &str = "evals-duplicate-id";
/// A key the format does not define.
pub(crate) const UNKNOWN_FIELD: &str = "evals-unknown-field";
/// An input file that is missing or outside the skill folder.
pub(crate) const FILE_MISSING: &str = "evals-file-missing";
/// `skill_name` is not the skill's `name`.
pub(crate) const SKILL_NAME: &str = "evals-skill-name";

/// Every rule of this module, for the rule tables' test.
#[cfg(test)]
pub(crate) const RULES: &[&str] = &[
    INVALID,
    DUPLICATE_ID,
    UNKNOWN_FIELD,
    FILE_MISSING,
    SKILL_NAME,
];

/// The problems of the skill's `evals/evals.json`; none when the skill has no such file.
pub(super) fn check(skill: &SkillFolder<'_>) -> Vec<Problem> {
    let mut read = match skill.read_own_file(EVALS_FILE, read_evals_file, INVALID, "skill_evals") {
        Ok(Some(read)) => read,
        Ok(None) => return Vec::new(),
        Err(problems) => return problems,
    };
    let mut problems = std::mem::take(&mut read.problems);
    let (path, file) = (&read.path, &read.parsed);
    problems.extend(
        clashes(&file.evals)
            .into_iter()
            .map(|message| Problem::error(path, DUPLICATE_ID, message).field("evals")),
    );
    problems.extend(read.unknown_keys(
        UNKNOWN_FIELD,
        EVALS_FILE,
        FILE_KEYS,
        &file.unknown,
        file.evals.iter().map(|entry| {
            (
                entry.describe(),
                format!("evals[{}]", entry.index),
                entry.unknown.as_slice(),
            )
        }),
        ("an eval entry", ENTRY_KEYS),
    ));
    problems.extend(missing_files(path, skill.directory, file));
    problems.extend(
        read.skill_name(SKILL_NAME, file.skill_name.as_ref(), skill.name, |name| {
            format!("the skill's `name` {name:?} (its SKILL.md's front matter)")
        }),
    );
    problems
}

/// An error per input file (`files`) that leaves the skill folder or does not exist in it.
fn missing_files(path: &Path, directory: &Path, file: &EvalsFile) -> Vec<Problem> {
    let mut problems = Vec::new();
    for entry in &file.evals {
        for (i, written) in entry.files.iter().enumerate() {
            let message = if !stays_inside(written) {
                format!(
                    "{}: `files`[{i}] {written:?} is not a relative path inside the skill folder {}: move the file into the folder and write its path relative to it (e.g. \"evals/files/input.txt\")",
                    entry.describe(),
                    directory.display()
                )
            } else {
                let looked = directory.join(written);
                if looked.is_file() {
                    continue;
                }
                format!(
                    "{}: `files`[{i}] {written:?} does not exist (looked for {}): add the file, or fix the path (relative to the skill folder)",
                    entry.describe(),
                    looked.display()
                )
            };
            problems.push(
                Problem::error(path, FILE_MISSING, message)
                    .field(format!("evals[{}].files[{i}]", entry.index)),
            );
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::customization::Severity;
    use crate::lint::lint;

    /// A skill folder `skills/<name>` holding `SKILL.md` (front-matter `name: changelog`) and
    /// `files`.
    fn skill(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("skills/changelog");
        let all = [(
            "SKILL.md",
            "---\nname: changelog\ndescription: Writes CHANGELOG.md sections.\n---\nWrite them.\n",
        )];
        for (path, text) in all.iter().chain(files) {
            let path = folder.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        (dir, folder)
    }

    /// The four problems the brief names, in one file: an unknown key (top level and in an
    /// entry), a repeated id, an input file that is missing and one that leaves the folder, a
    /// `skill_name` of another skill.
    const BROKEN: &str = r#"{
  "skill_name": "chnagelog",
  "version": 2,
  "evals": [
    {"id": 1, "prompt": "Write the changelog.", "files": ["evals/files/CHANGES.txt", "evals/files/gone.txt"]},
    {"id": 2, "prompt": "Add 1.2.1.", "rubric": "strict"},
    {"id": 3, "prompt": "Explain the skill.", "files": ["../secrets.txt"]},
    {"id": 1, "prompt": "Write it again."}
  ]
}"#;

    #[test]
    fn each_problem_of_an_evals_file_is_reported_with_its_field_and_fix() {
        let (dir, folder) = skill(&[
            ("evals/evals.json", BROKEN),
            ("evals/files/CHANGES.txt", "1.3.0\nfix the login timeout\n"),
        ]);
        let report = lint(&[dir.path().to_path_buf()]);
        let evals = folder.join(EVALS_FILE);
        let found: Vec<(Severity, &str, Option<&str>)> = report
            .problems
            .iter()
            .map(|p| (p.severity, p.rule, p.field.as_deref()))
            .collect();
        assert_eq!(
            found,
            [
                (Severity::Error, DUPLICATE_ID, Some("evals")),
                (Severity::Warning, UNKNOWN_FIELD, Some("version")),
                (Severity::Warning, UNKNOWN_FIELD, Some("evals[1].rubric")),
                (Severity::Error, FILE_MISSING, Some("evals[0].files[1]")),
                (Severity::Error, FILE_MISSING, Some("evals[2].files[0]")),
                (Severity::Error, SKILL_NAME, Some("skill_name")),
            ],
            "{:#?}",
            report.problems
        );
        assert!(
            report.problems.iter().all(|p| p.file == evals),
            "{:#?}",
            report.problems
        );
        let message = |rule: &str, field: &str| {
            report
                .problems
                .iter()
                .find(|p| p.rule == rule && p.field.as_deref() == Some(field))
                .map(|p| p.message.as_str())
                .unwrap()
        };
        assert_eq!(
            message(DUPLICATE_ID, "evals"),
            "evals[3]: `id` 1 is also the id of evals[0]; give each entry its own id"
        );
        assert_eq!(
            message(UNKNOWN_FIELD, "version"),
            "is not a top-level key of evals/evals.json (known: skill_name, evals); copilot-eval ignores it: remove it, or fix its spelling"
        );
        assert_eq!(
            message(UNKNOWN_FIELD, "evals[1].rubric"),
            "evals[1] (id 2): `rubric` is not a key of an eval entry (known: id, prompt, expected_output, files, expectations); copilot-eval ignores it: remove it, or fix its spelling"
        );
        assert_eq!(
            message(FILE_MISSING, "evals[0].files[1]"),
            format!(
                "evals[0] (id 1): `files`[1] \"evals/files/gone.txt\" does not exist (looked for {}): add the file, or fix the path (relative to the skill folder)",
                folder.join("evals/files/gone.txt").display()
            )
        );
        assert!(
            message(FILE_MISSING, "evals[2].files[0]").starts_with(
                "evals[2] (id 3): `files`[0] \"../secrets.txt\" is not a relative path inside the skill folder"
            ),
            "{}",
            message(FILE_MISSING, "evals[2].files[0]")
        );
        assert_eq!(
            message(SKILL_NAME, "skill_name"),
            "\"chnagelog\" is not the skill's `name` \"changelog\" (its SKILL.md's front matter): write \"skill_name\": \"changelog\", or remove `skill_name`"
        );
        // The skill's own row counts its evals file's problems.
        let summary = report.summary();
        assert_eq!(
            (
                summary.skills,
                summary.rejected,
                summary.errors,
                summary.warnings
            ),
            (1, 1, 4, 2),
            "{summary}"
        );
    }

    #[test]
    fn an_evals_file_that_does_not_parse_is_one_error_with_the_parsers_message() {
        let (_dir, folder) = skill(&[(
            "evals/evals.json",
            r#"{"evals": [{"id": 1, "prompt": "x", "files": "a.txt"}]}"#,
        )]);
        let report = lint(std::slice::from_ref(&folder));
        let [problem] = report.problems.as_slice() else {
            panic!("one problem: {:#?}", report.problems)
        };
        assert_eq!((problem.severity, problem.rule), (Severity::Error, INVALID));
        assert_eq!(problem.file, folder.join(EVALS_FILE));
        assert_eq!(
            problem.message,
            "evals[0] (id 1): `files` must be an array of strings (the `skill_evals` attribute refuses the file too)"
        );
    }

    #[test]
    fn a_skill_without_an_evals_file_or_with_a_clean_one_has_no_evals_problem() {
        let (_dir, folder) = skill(&[]);
        let report = lint(std::slice::from_ref(&folder));
        assert!(report.problems.is_empty(), "{:#?}", report.problems);
        assert_eq!(report.summary().skills, 1);
        // The scripted example's skill, whose evals.json the example's tests run.
        let example =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/scripted/skills/changelog");
        assert!(example.join(EVALS_FILE).is_file());
        let report = lint(std::slice::from_ref(&example));
        assert_eq!(report.summary().skills, 1);
        // Its trigger set's coverage warnings are the trigger set's (`skill_triggers`).
        let evals: Vec<_> = (report.problems.iter())
            .filter(|p| !p.rule.starts_with("triggers-"))
            .collect();
        assert!(evals.is_empty(), "{:#?}", report.problems);
    }

    /// Each rule of this module has its row in the rule tables: the customization module's
    /// docs and the user guide's.
    #[test]
    fn every_rule_is_in_the_rule_tables() {
        let module = include_str!("../customization/mod.rs");
        let guide = include_str!("../../../docs/skills-and-agents.md");
        for rule in RULES {
            let row = format!("| `{rule}` |");
            assert!(
                module.contains(&format!("//! {row}")),
                "copilot-eval-core/src/customization/mod.rs has no row {row}"
            );
            assert!(
                guide.contains(&row),
                "docs/skills-and-agents.md has no row {row}"
            );
        }
    }
}
