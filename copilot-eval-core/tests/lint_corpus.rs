//! `lint` over the real corpus of skills and custom agents (github/awesome-copilot, MIT), which CI
//! places beside the repository at `../shared/corpus/awesome-copilot`.
//!
//! Without the corpus the test prints a skip line; with `COPILOT_EVAL_REQUIRE_RUNTIME=1` (CI) it
//! fails instead.

use std::path::{Path, PathBuf};

use copilot_eval_core::customization::Severity;
use copilot_eval_core::lint::{Summary, lint};

fn corpus() -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/awesome-copilot");
    if path.is_dir() {
        return Some(path);
    }
    let message = format!(
        "the corpus is not at {} (clone the repository beside `shared/`)",
        path.display()
    );
    if std::env::var("COPILOT_EVAL_REQUIRE_RUNTIME").is_ok_and(|v| v == "1") {
        panic!("{message}; COPILOT_EVAL_REQUIRE_RUNTIME=1 forbids skipping");
    }
    eprintln!("skipping the corpus lint: {message}");
    None
}

#[test]
fn lint_over_the_whole_corpus() {
    let Some(root) = corpus() else { return };
    let report = lint(std::slice::from_ref(&root));
    let summary = report.summary();
    assert_eq!(
        summary,
        Summary {
            files: 374,
            skills: 239,
            agents: 135,
            instructions: 0,
            accepted: 371,
            rejected: 3,
            errors: 3,
            warnings: 38,
        },
        "{summary}"
    );

    // Every rejected file has an error naming the file, the field and the rule.
    for problem in report
        .problems
        .iter()
        .filter(|p| p.severity == Severity::Error)
    {
        assert!(problem.file.exists(), "{problem}");
        assert!(problem.field.is_some(), "no field: {problem}");
        assert!(!problem.rule.is_empty(), "{problem}");
    }

    let lines: Vec<String> = report
        .problems
        .iter()
        .map(|p| p.to_string().replace(&format!("{}/", root.display()), ""))
        .collect();
    let errors: Vec<&String> = lines.iter().filter(|l| l.contains(": error[")).collect();
    assert_eq!(
        errors,
        [
            "agents/declarative-agents-architect.agent.md: error[required] `description`: is required; add it to the front matter",
            "agents/elasticsearch-observability.agent.md:11: error[mcp-server] `mcp-servers.elastic-mcp`: `type` \"remote\" is not one of: stdio, local, http, sse",
            "skills/qdrant-scaling/scaling-data-volume/vertical-scaling/SKILL.md:46: error[reference-escapes] `body`: links to \"../../../qdrant-monitoring/SKILL.md\", which leaves the skill folder; a skill may only refer to files inside its folder",
        ]
    );
    for expected in [
        "agents/dotnet-self-learning-architect.agent.md:4: warning[model-list] `model`: is a list of 4 models (a VS Code feature); the runtime takes one model, so \"GPT-5.3-Codex\" is used",
        "agents/gem-critic.agent.md:7: warning[unknown-key] `mode`: is not a custom agent front-matter key",
        "skills/acquire-codebase-knowledge/SKILL.md:6: warning[metadata-value] `metadata`: `enhancements` is a list; the format expects text values",
        "skills/acquire-codebase-knowledge/SKILL.md:159: warning[reference-missing] `body`: links to \"scripts/scan.py\", which does not exist in the skill folder",
        "skills/quality-playbook: warning[skill-md-missing]: is a folder under skills/ without a SKILL.md",
        "skills/unit-test-vue-pinia/SKILL.md:3: warning[unknown-key] `category`: is not a SKILL.md front-matter key",
    ] {
        assert!(
            lines.iter().any(|l| l.starts_with(expected)),
            "missing {expected:?} in:\n{}",
            lines.join("\n")
        );
    }
    let count = |rule: &str| report.problems.iter().filter(|p| p.rule == rule).count();
    assert_eq!(count("unknown-key"), 21);
    assert_eq!(count("reference-missing"), 13);
}
