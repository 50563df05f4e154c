//! `init --skill PATH`: an eval test file for a skill's own `evals/evals.json`.
//!
//! The file is `tests/<skill>_evals.rs` in the package (the skill's front-matter `name`, with
//! every character other than an ASCII letter or digit written `_`). It holds one
//! `#[copilot_eval(skill_evals = "<PATH relative to the package root>")]` function,
//! `<skill>_skill(ctx: EvalContext, case: SkillCase)`, whose body runs the entry's prompt with
//! the skill and records a verdict for each expectation of each entry with `ctx.expect`. Every
//! verdict is `false` ("no check written yet") until the user writes the check: a scaffold never
//! passes on its own. The model is scripted (`ctx.offline(..)`: the skill invoked, then a
//! placeholder answer), so the scaffold runs offline from the start, with no cassette. When the skill also has a trigger set `evals/triggers.json`, the file holds
//! a second function, `<skill>_triggers(ctx: EvalContext, case: TriggerCase)` under
//! `#[copilot_eval(skill_triggers = "..")]`, whose check is the runtime's own evidence (whether
//! the run invoked the skill), so it needs no placeholder.

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use crate::customization::Skill;
use crate::customization::skill::SKILL_FILE;
use crate::customization::skill::evals_file::{
    EVALS_FILE, EvalsFile, ident_chars, parse_evals_file,
};
use crate::customization::skill::triggers_file::{TRIGGERS_FILE, parse_triggers_file};

/// The model the scaffold names (a live run needs one the account has).
const MODEL: &str = "claude-sonnet-4.5";

/// A skill folder whose `evals/evals.json` parsed: what the scaffold is written from.
pub(super) struct SkillEvals {
    /// The skill's front-matter `name`.
    name: String,
    /// The skill folder, canonical.
    folder: PathBuf,
    /// The parsed file.
    evals: EvalsFile,
    /// Whether the skill has a trigger set (`evals/triggers.json`, which parsed).
    triggers: bool,
}

/// Read the skill at `path` (relative to `cwd` unless absolute): it must exist, hold `SKILL.md`
/// that loads, and an `evals/evals.json` that parses. Errors name the file and the fix.
pub(super) fn read(path: &Path, cwd: &Path) -> Result<SkillEvals, String> {
    let given = cwd.join(path);
    if !given.is_dir() {
        return Err(format!(
            "--skill {}: no such folder; give the skill folder (the one holding {SKILL_FILE})",
            path.display()
        ));
    }
    if !given.join(SKILL_FILE).is_file() {
        return Err(format!(
            "--skill {}: has no {SKILL_FILE}, so it is no skill folder; give the folder that holds the skill's {SKILL_FILE}",
            path.display()
        ));
    }
    let file = given.join(EVALS_FILE);
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "--skill {}: has no {EVALS_FILE} to make eval tests from; write the skill's test cases there (the skill-creator format: {{\"skill_name\": ..., \"evals\": [{{\"id\": 1, \"prompt\": \"...\", \"expectations\": [...]}}]}}), see docs/skills-and-agents.md",
                path.display()
            ));
        }
        Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
    };
    let evals = parse_evals_file(&text).map_err(|message| {
        format!(
            "{}: {message} (`cargo copilot-eval lint {}` lists every problem)",
            file.display(),
            path.display()
        )
    })?;
    let triggers_path = given.join(TRIGGERS_FILE);
    let triggers = triggers_path.is_file();
    if triggers {
        let text = std::fs::read_to_string(&triggers_path)
            .map_err(|e| format!("cannot read {}: {e}", triggers_path.display()))?;
        parse_triggers_file(&text).map_err(|message| {
            format!(
                "{}: {message} (`cargo copilot-eval lint {}` lists every problem)",
                triggers_path.display(),
                path.display()
            )
        })?;
    }
    let skill = Skill::load(&given).map_err(|e| {
        format!(
            "--skill {}: its {SKILL_FILE} does not load: {e} (`cargo copilot-eval lint {}` lists every problem)",
            path.display(),
            path.display()
        )
    })?;
    let folder = given
        .canonicalize()
        .map_err(|e| format!("--skill {}: {e}", path.display()))?;
    Ok(SkillEvals {
        name: skill.name,
        folder,
        evals,
        triggers,
    })
}

impl SkillEvals {
    /// The skill's name as a Rust identifier: `release-notes` -> `release_notes`.
    fn ident(&self) -> String {
        let mut ident = ident_chars(&self.name);
        if !ident.starts_with(|c: char| c.is_ascii_lowercase()) {
            ident.insert_str(0, "skill_");
        }
        ident
    }

    /// The test file's path, relative to the package root.
    pub(super) fn test_path(&self) -> String {
        format!("tests/{}_evals.rs", self.ident())
    }

    /// The test function's name.
    pub(super) fn function(&self) -> String {
        format!("{}_skill", self.ident())
    }

    /// The skill folder relative to the package `root`, `/`-separated: the attribute's value.
    /// Error: the folder is not inside the package.
    pub(super) fn relative_to(&self, root: &Path) -> Result<String, String> {
        let root = root
            .canonicalize()
            .map_err(|e| format!("{}: {e}", root.display()))?;
        let inside = self.folder.strip_prefix(&root).map_err(|_| {
            format!(
                "--skill {}: the skill folder is outside the package {} (`skill_evals` reads it relative to the package root at compile time); move or copy the skill into the package, or give that package's Cargo.toml with --manifest-path",
                self.folder.display(),
                root.display()
            )
        })?;
        let parts: Vec<String> = inside
            .components()
            .filter_map(|c| match c {
                Component::Normal(part) => Some(part.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect();
        if parts.is_empty() {
            return Err(format!(
                "--skill {}: the skill folder is the package root itself; keep the skill in a folder of the package (e.g. skills/{})",
                self.folder.display(),
                self.name
            ));
        }
        Ok(parts.join("/"))
    }

    /// The test file's text, for the skill at `folder` (relative to the package root).
    // One piece: the test file is one `format!` template, read top to bottom as the file it writes.
    pub(super) fn render(&self, folder: &str) -> String {
        let function = self.function();
        let name = &self.name;
        // The scripted tool call's arguments, `{"skill": "<name>"}`.
        let invoke = serde_json::json!({ "skill": name }).to_string();
        let mut arms = String::new();
        for entry in &self.evals.evals {
            let _ = writeln!(arms, "        // {}: {:?}", entry.describe(), entry.prompt);
            if let Some(expected) = &entry.expected_output {
                let _ = writeln!(arms, "        // expected output: {expected:?}");
            }
            let _ = writeln!(arms, "        {:?} => vec![", entry.id);
            if entry.expectations.is_empty() {
                let _ = writeln!(
                    arms,
                    "            // No expectations in {EVALS_FILE}: add some there, or a Check here."
                );
            }
            for expectation in &entry.expectations {
                let _ = writeln!(
                    arms,
                    "            // TODO: replace `false` with your check of `result`."
                );
                let _ = writeln!(
                    arms,
                    "            Check::predicate({expectation:?}, |_result| false),"
                );
            }
            let _ = writeln!(arms, "        ],");
        }
        let (imports, triggers) = if self.triggers {
            (
                "Check, Control, EvalContext, SkillCase, TriggerCase",
                format!(
                    r#"
/// One test per query of `{folder}/{TRIGGERS_FILE}` (`{name}_triggers::invoke_<n>_<slug>` for a
/// query that should invoke the skill, `dormant_<n>_<slug>` for one that should not). The check
/// reads the run's `skill.invoked` events; the test fails when it does not hold. It is not
/// scripted: a scripted model invokes the skill when its script says so, and the check would
/// measure the script. Record the queries on a real model (`--record`), then replay them.
#[copilot_eval(skill_triggers = {folder:?}, model = {MODEL:?}, timeout_s = 300)]
async fn {name}_triggers(ctx: EvalContext, case: TriggerCase) {{
    let eval = ctx.eval().skill_directory({folder:?}).build().unwrap();
    let result = ctx.run(&eval, case.query.as_str()).await;
    result.assert_success();
    let check = case.check(&ctx, &result);
    assert!(check.held(), "{{check}}");
}}
"#,
                    name = self.ident()
                ),
            )
        } else {
            ("Check, Control, EvalContext, SkillCase", String::new())
        };
        format!(
            r#"//! The `{name}` skill's own test cases as evals, scaffolded by `cargo copilot-eval init --skill`
//! from `{folder}/{EVALS_FILE}`: `#[copilot_eval(skill_evals = ..)]` makes one eval test per
//! entry at compile time (`{function}::eval_<id>_<slug>`), copies each entry's `files` into its
//! working directory and hands the test its `SkillCase`.
//!
//! Every expectation below is a `Check` that FAILS until you replace its `false` with a check of
//! what the session really did (`result.file(..)`, `result.skill_was_invoked({name:?})`,
//! `result.tool_calls_for(..)`, `result.final_response`), so the scaffold never passes on its own.
//! An expectation that is never recorded fails the test too. Before the session, each check is
//! held to an empty-answer control: a check that accepts an empty answer fails the test, naming
//! it, without spending a session (add good and bad controls of your own beside it).
//!
//! It runs offline from the start: the model is scripted with `ctx.offline(..)` (each entry's
//! run invokes the skill, then gives a placeholder answer), so `cargo copilot-eval {function}`
//! runs every entry through the real runtime with no cassette and no account, and fails until
//! you write the checks. To measure the skill on a real model, delete the `ctx.offline(..)`
//! lines, record the entries live, then replay them offline:
//!
//! ```sh
//! cargo copilot-eval {function}
//! cargo copilot-eval --record {function}
//! cargo copilot-eval --replay {function}
//! ```

use copilot_eval_core::copilot_eval;
use copilot_eval_core::harness::{{{imports}}};
use copilot_eval_core::model_server::{{Script, ScriptedTurn}};

/// One test per entry of `{folder}/{EVALS_FILE}`.
#[copilot_eval(skill_evals = {folder:?}, model = {MODEL:?}, timeout_s = 300)]
async fn {function}(ctx: EvalContext, case: SkillCase) {{
    // One check per expectation of the entry, named as the expectation.
    let checks: Vec<Check> = match case.id.as_str() {{
{arms}        // An entry added to {EVALS_FILE} later: its expectations fail as unchecked until
        // you add its arm.
        _ => vec![],
    }};
    // Check the checks before spending a session: each must reject an empty answer.
    for check in &checks {{
        if !ctx.check_controls(check, &[Control::empty_answer()]) {{
            return;
        }}
    }}
    // Offline first: the model is scripted (invoke the skill, then a placeholder answer), so
    // this test runs offline at once, with no cassette and no account, and fails on the
    // placeholders above until you write them. A scripted run shows that the skill loads and
    // the session uses it, not that it helps the model: that takes recorded or live runs and
    // `--ablate skills` (docs/skills-and-agents.md). Delete these lines to record the entries
    // live with `--record` (a scripted run never records).
    ctx.offline(
        Script::new([])
            .turn(ScriptedTurn::tool_call("skill", {invoke:?}.parse().unwrap()))
            .turn(ScriptedTurn::text("TODO: the answer the skill leads to")),
    );
    let eval = ctx.eval().skill_directory({folder:?}).build().unwrap();
    let result = ctx.run(&eval, case.prompt.as_str()).await;
    result.assert_success();
    for check in &checks {{
        ctx.check(&result, check);
    }}
}}
{triggers}"#
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(evals: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("skills/release-notes");
        std::fs::create_dir_all(folder.join("evals")).unwrap();
        std::fs::write(
            folder.join(SKILL_FILE),
            "---\nname: release-notes\ndescription: Writes release notes.\n---\nWrite them.\n",
        )
        .unwrap();
        std::fs::write(folder.join(EVALS_FILE), evals).unwrap();
        (dir, folder)
    }

    #[test]
    fn a_trigger_set_adds_a_trigger_test_and_an_invalid_one_is_refused() {
        let evals = r#"{"evals": [{"id": 1, "prompt": "Write them"}]}"#;
        let (dir, folder) = skill(evals);
        let without = read(Path::new("skills/release-notes"), dir.path()).unwrap();
        let text = without.render("skills/release-notes");
        assert!(!text.contains("TriggerCase"), "{text}");

        std::fs::write(
            folder.join(TRIGGERS_FILE),
            r#"[{"query": "Write the release notes", "should_trigger": true}]"#,
        )
        .unwrap();
        let with = read(Path::new("skills/release-notes"), dir.path()).unwrap();
        let text = with.render("skills/release-notes");
        assert!(
            text.contains(
                "use copilot_eval_core::harness::{Check, Control, EvalContext, SkillCase, TriggerCase};"
            ),
            "{text}"
        );
        assert!(
            text.contains("#[copilot_eval(skill_triggers = \"skills/release-notes\", model = \"claude-sonnet-4.5\", timeout_s = 300)]\nasync fn release_notes_triggers(ctx: EvalContext, case: TriggerCase) {"),
            "{text}"
        );
        assert!(
            text.contains("    let check = case.check(&ctx, &result);\n"),
            "{text}"
        );

        std::fs::write(folder.join(TRIGGERS_FILE), r#"[{"query": "x"}]"#).unwrap();
        let Err(error) = read(Path::new("skills/release-notes"), dir.path()) else {
            panic!("an invalid trigger set is refused")
        };
        assert!(
            error.contains("evals/triggers.json: [0]: `should_trigger` is missing"),
            "{error}"
        );
    }

    #[test]
    fn the_scaffold_names_every_expectation_and_each_fails_until_checked() {
        let (dir, _) = skill(
            r#"{"evals": [
                {"id": 1, "prompt": "Write \"notes\"", "expectations": ["a \"quoted\" one", "b"]},
                {"id": "x-2", "prompt": "Other", "expected_output": "text"}
            ]}"#,
        );
        let read = read(Path::new("skills/release-notes"), dir.path()).unwrap();
        assert_eq!(read.test_path(), "tests/release_notes_evals.rs");
        let folder = read.relative_to(dir.path()).unwrap();
        assert_eq!(folder, "skills/release-notes");
        let text = read.render(&folder);
        assert!(
            text.contains("#[copilot_eval(skill_evals = \"skills/release-notes\", model = \"claude-sonnet-4.5\", timeout_s = 300)]\nasync fn release_notes_skill(ctx: EvalContext, case: SkillCase) {"),
            "{text}"
        );
        for line in [
            "        \"1\" => vec![",
            "            Check::predicate(\"a \\\"quoted\\\" one\", |_result| false),",
            "            Check::predicate(\"b\", |_result| false),",
            "        \"x-2\" => vec![",
            "        if !ctx.check_controls(check, &[Control::empty_answer()]) {",
            "        // expected output: \"text\"",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "no line {line:?} in:\n{text}"
            );
        }
        // Offline from the start: the model is scripted to invoke the skill.
        assert!(
            text.contains("            .turn(ScriptedTurn::tool_call(\"skill\", \"{\\\"skill\\\":\\\"release-notes\\\"}\".parse().unwrap()))\n"),
            "{text}"
        );
        // Every placeholder verdict is a failure.
        assert_eq!(text.matches("Check::predicate(").count(), 2);
        assert_eq!(text.matches(", |_result| false),").count(), 2);
    }

    #[test]
    fn a_skill_outside_the_package_is_refused() {
        let (dir, _) = skill(r#"{"evals": [{"id": 1, "prompt": "x"}]}"#);
        let other = tempfile::tempdir().unwrap();
        let read = read(Path::new("skills/release-notes"), dir.path()).unwrap();
        let error = read.relative_to(other.path()).unwrap_err();
        assert!(error.contains("is outside the package"), "{error}");
    }
}
