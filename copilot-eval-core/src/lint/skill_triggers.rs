//! A skill's trigger set `evals/triggers.json` under `lint` (read by
//! [`triggers_file`](crate::customization::skill::triggers_file), the reader the
//! `skill_triggers` attribute compiles too). The runtime never reads the file; what is an error
//! here is what makes the attribute refuse the file.
//!
//! | rule | severity | checks |
//! |---|---|---|
//! | `triggers-invalid` | error | the file parses (the parser's message names the query, the key and what to write) |
//! | `triggers-duplicate-query` | warning | no query repeats an earlier one (the repeat adds runs, not information) |
//! | `triggers-unknown-field` | warning | every key (top level and per query) is one the format defines |
//! | `triggers-skill-name` | error | `skill_name`, when given, is the skill's folder name (its `name`) |
//! | `triggers-no-near-miss` | warning | some should-not-trigger query is a near miss (shares a word with the skill's name or description: `trigger_coverage`) |
//! | `triggers-names-skill` | warning | not every should-trigger query names the skill (`trigger_coverage`) |

use std::path::Path;

use super::SkillFolder;
use crate::customization::Problem;
use crate::customization::skill::triggers_file::{
    QUERY_KEYS, TRIGGERS_FILE, TriggersFile, parse_triggers_file,
};

/// The file does not parse.
pub(crate) const INVALID: &str = "triggers-invalid";
/// A query listed twice.
pub(crate) const DUPLICATE_QUERY: &str = "triggers-duplicate-query";
/// A key the format does not define.
pub(crate) const UNKNOWN_FIELD: &str = "triggers-unknown-field";
/// `skill_name` is not the skill's name.
pub(crate) const SKILL_NAME: &str = "triggers-skill-name";

/// Every rule of this module, for the rule tables' test.
#[cfg(test)]
pub(crate) const RULES: &[&str] = &[
    INVALID,
    DUPLICATE_QUERY,
    UNKNOWN_FIELD,
    SKILL_NAME,
    super::trigger_coverage::NO_NEAR_MISS,
    super::trigger_coverage::NAMES_SKILL,
];

/// The problems of the skill's `evals/triggers.json`; none when the skill has no such file.
pub(super) fn check(skill: &SkillFolder<'_>) -> Vec<Problem> {
    let mut read = match skill.read_own_file(
        TRIGGERS_FILE,
        parse_triggers_file,
        INVALID,
        "skill_triggers",
    ) {
        Ok(Some(read)) => read,
        Ok(None) => return Vec::new(),
        Err(problems) => return problems,
    };
    let mut problems = std::mem::take(&mut read.problems);
    let file = &read.parsed;
    problems.extend(duplicates(&read.path, file));
    problems.extend(read.unknown_keys(
        UNKNOWN_FIELD,
        TRIGGERS_FILE,
        &["skill_name", "evals"],
        &file.unknown,
        file.queries.iter().map(|query| {
            (
                query.describe(),
                format!("[{}]", query.index),
                query.unknown.as_slice(),
            )
        }),
        ("a query", QUERY_KEYS),
    ));
    // The attribute compares `skill_name` with the folder's name; the runtime requires the
    // skill's `name` to be that name (`skill-name-folder`).
    let folder = skill
        .directory
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    let name = skill.name.map(str::to_owned).or(folder);
    problems.extend(read.skill_name(
        SKILL_NAME,
        file.skill_name.as_ref(),
        name.as_deref(),
        |name| format!("the skill's name {name:?} (its folder's name and SKILL.md's `name`)"),
    ));
    if let Some(name) = name.as_deref() {
        problems.extend(super::trigger_coverage::check(
            &read.path,
            file,
            name,
            skill.description,
        ));
    }
    problems
}

/// A warning per query that repeats an earlier one (same text after trimming, same
/// `should_trigger`; opposite ones are a parse error).
fn duplicates(path: &Path, file: &TriggersFile) -> Vec<Problem> {
    let mut problems = Vec::new();
    for (i, query) in file.queries.iter().enumerate() {
        if let Some(first) = file.queries[..i]
            .iter()
            .find(|q| q.query.trim() == query.query.trim())
        {
            problems.push(
                Problem::warning(
                    path,
                    DUPLICATE_QUERY,
                    format!(
                        "{}: the query {:?} is also {}: remove the repeat (to run a query several times, use trials: `--trials N`)",
                        query.describe(),
                        query.query,
                        first.describe()
                    ),
                )
                .field(format!("[{}]", query.index)),
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

    /// A skill folder `skills/changelog` holding `SKILL.md` and `evals/triggers.json`.
    fn skill(triggers: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("skills/changelog");
        std::fs::create_dir_all(folder.join("evals")).unwrap();
        std::fs::write(
            folder.join("SKILL.md"),
            "---\nname: changelog\ndescription: Writes CHANGELOG.md sections.\n---\nWrite them.\n",
        )
        .unwrap();
        std::fs::write(folder.join(TRIGGERS_FILE), triggers).unwrap();
        (dir, folder)
    }

    #[test]
    fn each_problem_of_a_trigger_set_is_reported_with_its_field_and_fix() {
        let (_dir, folder) = skill(
            r#"{"skill_name": "changelogs", "owner": "docs", "evals": [
                {"prompt": "Write up what changed in 1.2.", "should_trigger": true},
                {"prompt": "Explain what a CHANGELOG.md section is for.", "should_trigger": false, "why": "near miss"},
                {"query": " Write up what changed in 1.2. ", "should_trigger": true}]}"#,
        );
        let report = lint(std::slice::from_ref(&folder));
        let found: Vec<(Severity, &str, Option<&str>)> = report
            .problems
            .iter()
            .map(|p| (p.severity, p.rule, p.field.as_deref()))
            .collect();
        assert_eq!(
            found,
            [
                (Severity::Warning, DUPLICATE_QUERY, Some("[2]")),
                (Severity::Warning, UNKNOWN_FIELD, Some("owner")),
                (Severity::Warning, UNKNOWN_FIELD, Some("[1].why")),
                (Severity::Error, SKILL_NAME, Some("skill_name")),
            ],
            "{:#?}",
            report.problems
        );
        assert!(
            report
                .problems
                .iter()
                .all(|p| p.file == folder.join(TRIGGERS_FILE))
        );
        let message = |rule: &str| {
            report
                .problems
                .iter()
                .find(|p| p.rule == rule)
                .map(|p| p.message.as_str())
                .unwrap()
        };
        assert_eq!(
            message(DUPLICATE_QUERY),
            "[2]: the query \" Write up what changed in 1.2. \" is also [0]: remove the repeat (to run a query several times, use trials: `--trials N`)"
        );
        assert_eq!(
            message(SKILL_NAME),
            "\"changelogs\" is not the skill's name \"changelog\" (its folder's name and SKILL.md's `name`): write \"skill_name\": \"changelog\", or remove `skill_name`"
        );
        assert!(
            report.problems[2].message.starts_with(
                "[1]: `why` is not a key of a query (known: query, prompt, should_trigger)"
            ),
            "{}",
            report.problems[2].message
        );
    }

    #[test]
    fn a_trigger_set_that_does_not_parse_is_one_error_with_the_parsers_message() {
        let (_dir, folder) = skill(r#"[{"query": "Write the changelog."}]"#);
        let report = lint(std::slice::from_ref(&folder));
        let [problem] = report.problems.as_slice() else {
            panic!("one problem: {:#?}", report.problems)
        };
        assert_eq!((problem.severity, problem.rule), (Severity::Error, INVALID));
        assert!(
            problem
                .message
                .starts_with("[0]: `should_trigger` is missing"),
            "{}",
            problem.message
        );
        assert!(
            problem
                .message
                .ends_with("(the `skill_triggers` attribute refuses the file too)")
        );
    }

    /// The scripted example's set parses cleanly; its coverage is what its scripted model
    /// needs (the model invokes the skill when a query names a changelog), and lint says so:
    /// both should-trigger queries name the skill, and both should-not queries are off topic.
    #[test]
    fn the_examples_trigger_set_has_only_its_coverage_warnings() {
        let example =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/scripted/skills/changelog");
        assert!(example.join(TRIGGERS_FILE).is_file());
        let report = lint(std::slice::from_ref(&example));
        let rules: Vec<(Severity, &str)> = report
            .problems
            .iter()
            .map(|p| (p.severity, p.rule))
            .collect();
        assert_eq!(
            rules,
            [
                (
                    Severity::Warning,
                    crate::lint::trigger_coverage::NO_NEAR_MISS
                ),
                (
                    Severity::Warning,
                    crate::lint::trigger_coverage::NAMES_SKILL
                ),
            ],
            "{:#?}",
            report.problems
        );
    }

    /// Each rule of this module has its row in the rule tables.
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
