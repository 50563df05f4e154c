//! Unit tests of the loaders: one small input per rule.

use std::path::{Path, PathBuf};

use github_copilot_sdk::McpServerConfig;

use super::skill::requested_skills;
use super::*;

/// Write `files` (relative path, contents) under a fresh temporary folder.
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, contents) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }
    dir
}

/// The rule ids of `problems`, in order.
fn rules(problems: &[Problem]) -> Vec<&'static str> {
    problems.iter().map(|p| p.rule).collect()
}

fn find<'a>(problems: &'a [Problem], rule: &str) -> &'a Problem {
    problems
        .iter()
        .find(|p| p.rule == rule)
        .unwrap_or_else(|| panic!("no {rule} problem in {problems:#?}"))
}

const SKILL_BODY: &str = "\n# Instructions\n\nDo the thing.\n";

/// Load the skill `folder` whose SKILL.md is `front_matter` + a body; all problems on error.
fn skill_problems(folder: &str, front_matter: &str) -> Vec<Problem> {
    let dir = tree(&[(
        &format!("{folder}/SKILL.md"),
        &format!("---\n{front_matter}---\n{SKILL_BODY}"),
    )]);
    match Skill::load(dir.path().join(folder)) {
        Ok(skill) => skill.warnings,
        Err(e) => e.problems,
    }
}

#[test]
fn a_complete_skill_loads_every_field() {
    let dir = tree(&[
        (
            "pdf-tools/SKILL.md",
            "---\nname: pdf-tools\ndescription: Fill PDF forms.\nlicense: MIT\ncompatibility: Needs Python 3.\nmetadata:\n  version: \"1.2\"\nallowed-tools: view bash\nargument-hint: a PDF path\nuser-invocable: true\ndisable-model-invocation: false\n---\n\nRead [the guide](references/guide.md) and ![logo](assets/logo.png \"Logo\").\nSee <https://example.com> and [a section](#usage).\n",
        ),
        ("pdf-tools/references/guide.md", "# Guide\n"),
        ("pdf-tools/assets/logo.png", "png"),
    ]);
    let skill = Skill::load(dir.path().join("pdf-tools")).unwrap();
    assert!(skill.warnings.is_empty(), "{:#?}", skill.warnings);
    assert_eq!(skill.name, "pdf-tools");
    assert_eq!(skill.description, "Fill PDF forms.");
    assert_eq!(skill.license.as_deref(), Some("MIT"));
    assert_eq!(skill.compatibility.as_deref(), Some("Needs Python 3."));
    assert_eq!(
        skill.metadata.get("version").map(String::as_str),
        Some("1.2")
    );
    assert_eq!(skill.allowed_tools, ["view", "bash"]);
    assert_eq!(skill.argument_hint.as_deref(), Some("a PDF path"));
    assert_eq!(skill.user_invocable, Some(true));
    assert_eq!(skill.disable_model_invocation, Some(false));
    assert_eq!(skill.files, ["assets/logo.png", "references/guide.md"]);
    assert!(skill.body.starts_with("Read [the guide]"));
    // Also by its SKILL.md path.
    let again = Skill::load(dir.path().join("pdf-tools/SKILL.md")).unwrap();
    assert_eq!(again.name, "pdf-tools");
}

#[test]
fn front_matter_must_exist_close_parse_and_be_a_mapping() {
    let dir = tree(&[
        ("none/SKILL.md", "# no front matter\n"),
        ("open/SKILL.md", "---\nname: open\n\nbody\n"),
        (
            "bad/SKILL.md",
            "---\nname: bad\ndescription: [unclosed\n---\nbody\n",
        ),
        (
            "dup/SKILL.md",
            "---\nname: dup\nname: dup\ndescription: d\n---\nbody\n",
        ),
        ("list/SKILL.md", "---\n- a\n- b\n---\nbody\n"),
    ]);
    let err = |name: &str| Skill::load(dir.path().join(name)).unwrap_err().problems;
    let p = err("none");
    assert_eq!(rules(&p), ["front-matter-missing"]);
    assert_eq!(p[0].line, Some(1));
    assert_eq!(rules(&err("open")), ["front-matter-unclosed"]);
    let p = err("bad");
    assert_eq!(rules(&p), ["front-matter-yaml"]);
    assert!(p[0].line.is_some_and(|l| (3..=4).contains(&l)), "{p:?}");
    let p = err("dup");
    assert_eq!(rules(&p), ["front-matter-duplicate-key"]);
    assert_eq!(
        p[0].message,
        "appears twice (first on line 2); a key may appear once in the front matter: keep one of them"
    );
    assert_eq!(p[0].field.as_deref(), Some("name"));
    assert_eq!(p[0].line, Some(3), "the second `name` is on line 3: {p:?}");
    // The runtime loads a skill whose front matter is a list, as if it had none.
    let list = Skill::load(dir.path().join("list")).unwrap();
    assert_eq!(rules(&list.warnings), ["front-matter-not-mapping"]);
    assert_eq!(
        (list.name.as_str(), list.description.as_str()),
        ("list", "body")
    );
}

#[test]
fn byte_order_mark_and_crlf_lines_are_accepted() {
    let dir = tree(&[(
        "crlf/SKILL.md",
        "\u{feff}---\r\nname: crlf\r\ndescription: Windows line ends.\r\n---\r\n\r\nBody.\r\n",
    )]);
    let skill = Skill::load(dir.path().join("crlf")).unwrap();
    assert_eq!(skill.description, "Windows line ends.");
    assert_eq!(skill.body, "Body.");
}

#[test]
fn files_must_be_utf8_and_readable() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("bin")).unwrap();
    std::fs::write(
        dir.path().join("bin/SKILL.md"),
        b"---\nname: bin\ndescription: \xff\xfe\n---\n",
    )
    .unwrap();
    // The runtime loads it with U+FFFD for the invalid bytes: a warning.
    let skill = Skill::load(dir.path().join("bin")).unwrap();
    let p = &skill.warnings;
    assert_eq!(rules(p), ["utf8", "body-empty"]);
    assert_eq!(p[0].line, Some(3));
    assert_eq!(skill.description, "\u{fffd}\u{fffd}");
    let p = AgentFile::load(dir.path().join("missing.agent.md"))
        .unwrap_err()
        .problems;
    assert_eq!(rules(&p), ["read"]);
}

#[test]
fn skill_name_and_description_are_required_and_non_empty() {
    let p = skill_problems("x", "license: MIT\n");
    assert_eq!(rules(&p), ["required", "required"]);
    assert_eq!(p[0].field.as_deref(), Some("name"));
    assert_eq!(p[1].field.as_deref(), Some("description"));
    let p = skill_problems("x", "name: x\ndescription: \"  \"\n");
    assert_eq!(rules(&p), ["empty"]);
    let p = skill_problems("x", "name:\ndescription: d\n");
    assert_eq!(rules(&p), ["empty"]);
    assert_eq!(p[0].line, Some(2));
}

#[test]
fn skill_name_format_rules() {
    // The Agent Skills format's stricter form: warnings, the runtime loads these.
    for odd in ["PDF-tools", "pdf_tools", "pdf-", "pdf--tools", "pdf tools"] {
        let p = skill_problems(odd, &format!("name: {odd:?}\ndescription: d\n"));
        assert_eq!(rules(&p), ["skill-name-format"], "{odd}: {p:#?}");
        assert!(!p[0].is_error());
        assert_eq!(p[0].field.as_deref(), Some("name"));
        assert_eq!(p[0].line, Some(2));
    }
    // The runtime's own rule: errors.
    for bad in ["-pdf", "ünï", "pdf/tools"] {
        let p = skill_problems(bad, &format!("name: {bad:?}\ndescription: d\n"));
        let errors: Vec<&str> = p.iter().filter(|p| p.is_error()).map(|p| p.rule).collect();
        assert_eq!(errors, ["skill-name-chars"], "{bad}: {p:#?}");
    }
    for good in ["pdf", "pdf-tools", "a1-b2-c3", "0"] {
        assert!(skill_problems(good, &format!("name: {good:?}\ndescription: d\n")).is_empty());
    }
}

#[test]
fn skill_name_length_and_folder() {
    let long = "a".repeat(65);
    let p = skill_problems(&long, &format!("name: {long}\ndescription: d\n"));
    assert_eq!(rules(&p), ["skill-name-length"]);
    let ok = "a".repeat(64);
    assert!(skill_problems(&ok, &format!("name: {ok}\ndescription: d\n")).is_empty());
    let p = skill_problems("folder", "name: other\ndescription: d\n");
    assert_eq!(rules(&p), ["skill-name-folder"]);
    assert!(p[0].message.contains("\"folder\""), "{}", p[0]);
}

#[test]
fn skill_description_and_compatibility_lengths() {
    let p = skill_problems(
        "x",
        &format!("name: x\ndescription: {}\n", "d".repeat(1025)),
    );
    assert_eq!(rules(&p), ["description-length"]);
    assert!(
        skill_problems(
            "x",
            &format!("name: x\ndescription: {}\n", "d".repeat(1024))
        )
        .is_empty()
    );
    let p = skill_problems(
        "x",
        &format!(
            "name: x\ndescription: d\ncompatibility: {}\n",
            "c".repeat(501)
        ),
    );
    assert_eq!(rules(&p), ["compatibility-length"]);
}

#[test]
fn skill_field_types() {
    let p = skill_problems("x", "name: x\ndescription: 42\n");
    assert_eq!(rules(&p), ["type"]);
    assert!(
        p[0].message.contains("a number") && p[0].message.contains("quote it"),
        "{}",
        p[0]
    );
    let p = skill_problems("x", "name: x\ndescription: d\nuser-invocable: \"yes\"\n");
    assert_eq!(rules(&p), ["type"]);
    assert_eq!(p[0].field.as_deref(), Some("user-invocable"));
    let p = skill_problems("x", "name: x\ndescription: d\nallowed-tools: 3\n");
    assert_eq!(rules(&p), ["type"]);
    let p = skill_problems(
        "x",
        "name: x\ndescription: d\nallowed-tools: [view, \"\"]\n",
    );
    assert_eq!(rules(&p), ["empty"]);
    let p = skill_problems("x", "name: x\ndescription: d\nmetadata: [a, b]\n");
    assert_eq!(rules(&p), ["type"]);
}

#[test]
fn skill_warnings_metadata_unknown_keys_and_empty_body() {
    let p = skill_problems(
        "x",
        "name: x\ndescription: d\nmetadata:\n  version: 1.3\n  tags: [a]\ncategory: testing\n",
    );
    assert_eq!(
        rules(&p),
        ["metadata-value", "metadata-value", "unknown-key"]
    );
    assert!(p.iter().all(|p| !p.is_error()));
    let unknown = find(&p, "unknown-key");
    assert_eq!(unknown.field.as_deref(), Some("category"));
    assert_eq!(unknown.line, Some(7));
    let dir = tree(&[("x/SKILL.md", "---\nname: x\ndescription: d\n---\n\n")]);
    let skill = Skill::load(dir.path().join("x")).unwrap();
    assert_eq!(rules(&skill.warnings), ["body-empty"]);
    assert_eq!(skill.warnings[0].field.as_deref(), Some("body"));
}

#[test]
fn skill_references_stay_inside_the_folder() {
    let dir = tree(&[
        (
            "x/SKILL.md",
            "---\nname: x\ndescription: d\n---\nSee [up](../secret.md).\nAnd [abs](/etc/passwd).\nAnd [ok](references/a.md), [gone](references/missing.md).\n```\n[in a fence](../ignored.md)\n```\nInline `[code](../ignored.md)` and [web](https://example.com/x.md) and [mail](mailto:a@b.c).\n[def]: ../defined.md \"Title\"\n",
        ),
        (
            "x/references/a.md",
            "Back to [the skill](../SKILL.md); out to [the parent](../../y/SKILL.md).\n",
        ),
        ("secret.md", "secret"),
    ]);
    // The runtime loads such a skill: leaving links are warnings.
    let p = Skill::load(dir.path().join("x")).unwrap().warnings;
    let found: Vec<(&str, Option<u32>)> = p.iter().map(|p| (p.rule, p.line)).collect();
    assert_eq!(
        found,
        [
            ("reference-escapes", Some(5)),
            ("reference-escapes", Some(6)),
            ("reference-missing", Some(7)),
            ("reference-escapes", Some(12)),
            ("reference-escapes", Some(1)),
        ],
        "{p:#?}"
    );
    assert!(p[4].file.ends_with("references/a.md"), "{:?}", p[4].file);
    assert!(
        p[0].to_string()
            .contains("warning[reference-escapes] `body`: links to \"../secret.md\""),
        "{}",
        p[0]
    );
}

#[cfg(unix)]
#[test]
fn symbolic_links_leaving_the_skill_folder_are_warned_about() {
    let dir = tree(&[
        (
            "x/SKILL.md",
            "---\nname: x\ndescription: d\n---\nSee [linked](data/leak.md).\n",
        ),
        ("outside.md", "outside"),
    ]);
    std::fs::create_dir(dir.path().join("x/data")).unwrap();
    std::os::unix::fs::symlink(
        dir.path().join("outside.md"),
        dir.path().join("x/data/leak.md"),
    )
    .unwrap();
    // The runtime loads such a skill (tests/tests/conformance.rs, row symlinked).
    let p = Skill::load(dir.path().join("x")).unwrap().warnings;
    assert_eq!(
        rules(&p),
        ["reference-escapes", "reference-escapes"],
        "{p:#?}"
    );
    assert!(p.iter().any(|p| p.file.ends_with("x/data/leak.md")));
}

#[test]
fn a_folder_without_skill_md_is_no_skill() {
    let dir = tree(&[("x/README.md", "hi")]);
    let p = Skill::load(dir.path().join("x")).unwrap_err().problems;
    assert_eq!(rules(&p), ["skill-md-missing"]);
    let p = Skill::load(dir.path().join("nope")).unwrap_err().problems;
    assert_eq!(rules(&p), ["path-missing"]);
}

#[test]
fn requested_skill_folders() {
    let dir = tree(&[
        ("set/a/SKILL.md", "---\nname: a\ndescription: A.\n---\nA.\n"),
        ("set/b/SKILL.md", "---\nname: b\ndescription: B.\n---\nB.\n"),
        ("set/notes/README.md", "not a skill"),
        (
            "single/SKILL.md",
            "---\nname: single\ndescription: One.\n---\nOne.\n",
        ),
        ("empty/README.md", "nothing"),
        (
            "other/a/SKILL.md",
            "---\nname: a\ndescription: A again.\n---\nA.\n",
        ),
        ("broken/c/SKILL.md", "---\nname: c\n---\nC.\n"),
    ]);
    let p = |name: &str| dir.path().join(name);
    let skills = requested_skills(&[p("set"), p("single")]).unwrap();
    let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "single"]);
    let e = requested_skills(&[p("empty")]).unwrap_err();
    assert_eq!(rules(&e.problems), ["skill-md-missing"]);
    let e = requested_skills(&[p("set"), p("other")]).unwrap_err();
    assert_eq!(rules(&e.problems), ["skill-name-duplicate"]);
    let e = requested_skills(&[p("broken"), p("missing")]).unwrap_err();
    assert_eq!(rules(&e.problems), ["path-missing", "required"]);
    assert!(
        e.problems[1]
            .to_string()
            .contains("broken/c/SKILL.md: warning[required] `description`"),
        "{e}"
    );
}

fn agent(file: &str, contents: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tree(&[(file, contents)]);
    let path = dir.path().join(file);
    (dir, path)
}

fn agent_problems(front_matter: &str, body: &str) -> Vec<Problem> {
    let (_dir, path) = agent(
        "helper.agent.md",
        &format!("---\n{front_matter}---\n{body}"),
    );
    match AgentFile::load(&path) {
        Ok(a) => a.warnings,
        Err(e) => e.problems,
    }
}

#[test]
fn an_agent_file_maps_to_the_sdk_configuration() {
    let (_dir, path) = agent(
        "reviewer.agent.md",
        "---\nname: Code Reviewer\ndescription: Reviews diffs.\ntools: 'view, grep , db/*'\nmodel: claude-sonnet-4.5\ndisable-model-invocation: true\nuser-invocable: false\ntarget: github-copilot\nskills: [style-guide]\nargument-hint: a diff\nmetadata:\n  owner: team\nmcp-servers:\n  db:\n    command: db-mcp\n    args: [--ro]\n    env: {MODE: ro}\n    tools: ['*']\n  docs:\n    type: sse\n    url: https://docs.example/mcp\n    headers: {X-Key: abc}\n    timeout: 5000\nhandoffs:\n  - label: Fix it\n    agent: fixer\n---\n\nYou review code.\n",
    );
    let file = AgentFile::load(&path).unwrap();
    // The id is the front-matter `name`, as the runtime names the agent.
    assert_eq!(rules(&file.warnings), ["agent-id"], "{:#?}", file.warnings);
    assert!(
        file.warnings[0]
            .message
            .contains("`agent_type: \"Code Reviewer\"`")
    );
    let c = &file.config;
    assert_eq!(file.name(), "Code Reviewer");
    assert_eq!(c.display_name.as_deref(), Some("Code Reviewer"));
    assert_eq!(c.description.as_deref(), Some("Reviews diffs."));
    assert_eq!(c.prompt, "You review code.");
    assert_eq!(
        c.tools.as_deref(),
        Some(&["view".to_owned(), "grep".into(), "db/*".into()][..])
    );
    assert_eq!(c.model.as_deref(), Some("claude-sonnet-4.5"));
    assert_eq!(c.infer, Some(false), "disable-model-invocation: true");
    assert_eq!(c.skills.as_deref(), Some(&["style-guide".to_owned()][..]));
    let servers = c.mcp_servers.as_ref().unwrap();
    match &servers["db"] {
        McpServerConfig::Stdio(s) => {
            assert_eq!(s.command, "db-mcp");
            assert_eq!(s.args, ["--ro"]);
            assert_eq!(s.env["MODE"], "ro");
        }
        other => panic!("{other:?}"),
    }
    match &servers["docs"] {
        McpServerConfig::Sse(s) => {
            assert_eq!(s.url, "https://docs.example/mcp");
            assert_eq!(s.timeout, Some(5000));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(file.front_matter["target"], "github-copilot");
}

#[test]
fn agent_description_is_required_and_the_prompt_non_empty() {
    let p = agent_problems("name: Helper\n", "You help.\n");
    assert_eq!(rules(&p), ["required", "agent-id"]);
    assert_eq!(p[0].field.as_deref(), Some("description"));
    // The runtime loads an agent without a prompt.
    let p = agent_problems("description: Helps.\n", "\n  \n");
    assert_eq!(rules(&p), ["body-empty"]);
    assert!(!p[0].is_error());
    let (_dir, path) = agent(
        "plain.agent.md",
        "You help, but there is no front matter.\n",
    );
    let p = AgentFile::load(&path).unwrap_err().problems;
    assert_eq!(rules(&p), ["front-matter-missing"]);
}

#[test]
fn agent_names_come_from_the_file_name() {
    let (_dir, path) = agent(".agent.md", "---\ndescription: d\n---\nPrompt.\n");
    assert_eq!(
        rules(&AgentFile::load(&path).unwrap_err().problems),
        ["agent-name"]
    );
    let (_dir, path) = agent("my/helper.agent.md", "---\ndescription: d\n---\nPrompt.\n");
    let file = AgentFile::load(&path).unwrap();
    assert_eq!(file.name(), "helper");
    let (_dir, path) = agent("my helper?.agent.md", "---\ndescription: d\n---\nPrompt.\n");
    let file = AgentFile::load(&path).unwrap();
    assert_eq!(file.name(), "my helper?");
    assert_eq!(rules(&file.warnings), ["agent-name-chars"]);
    assert_eq!(agent::agent_name(Path::new("a/b/x.md")), "x");
    assert_eq!(
        agent::agent_name(Path::new("x/agents/sub/deep.agent.md")),
        "sub--deep"
    );
    // A front-matter `name` is the id; an empty one falls back to the file name.
    let (_dir, path) = agent(
        "planner.agent.md",
        "---\nname: Planner\ndescription: d\n---\nP.\n",
    );
    let file = AgentFile::load(&path).unwrap();
    assert_eq!(file.name(), "Planner");
    assert_eq!(rules(&file.warnings), ["agent-id"]);
    let (_dir, path) = agent(
        "planner.agent.md",
        "---\nname: planner\ndescription: d\n---\nP.\n",
    );
    assert!(AgentFile::load(&path).unwrap().warnings.is_empty());
    let (_dir, path) = agent(
        "planner.agent.md",
        "---\nname: ''\ndescription: d\n---\nP.\n",
    );
    let file = AgentFile::load(&path).unwrap();
    assert_eq!(file.name(), "planner");
    assert_eq!(rules(&file.warnings), ["empty"]);
}

#[test]
fn agent_values_and_types() {
    let p = agent_problems("description: d\ntarget: cli\n", "P.\n");
    assert_eq!(rules(&p), ["value"]);
    assert!(p[0].message.contains("vscode, github-copilot"));
    let p = agent_problems("description: d\ntools: 7\n", "P.\n");
    assert_eq!(rules(&p), ["type"]);
    let p = agent_problems("description: d\ninfer: \"no\"\n", "P.\n");
    assert_eq!(rules(&p), ["type", "deprecated"]);
    let p = agent_problems("description: d\nhandoffs: fixer\n", "P.\n");
    assert_eq!(rules(&p), ["type"]);
    let p = agent_problems("description: d\nmcp-servers: [a]\n", "P.\n");
    assert_eq!(rules(&p), ["type"]);
}

#[test]
fn agent_warnings() {
    let p = agent_problems(
        "description: d\nmodel: [gpt-5, claude-sonnet-4.5]\ninfer: true\nmode: agent\n",
        "P.\n",
    );
    assert_eq!(rules(&p), ["model-list", "deprecated", "unknown-key"]);
    assert_eq!(p[2].field.as_deref(), Some("mode"));
    assert_eq!(p[2].line, Some(5));
    let long = "p".repeat(agent::MAX_PROMPT_CHARS + 1);
    let p = agent_problems("description: d\n", &long);
    assert_eq!(rules(&p), ["prompt-length"]);
    let (_dir, path) = agent(
        "x.agent.md",
        "---\ndescription: d\ninfer: true\ndisable-model-invocation: true\n---\nP.\n",
    );
    assert_eq!(AgentFile::load(&path).unwrap().config.infer, Some(false));
}

#[test]
fn agent_mcp_servers_are_checked() {
    let cases = [
        (
            "remote:\n    type: remote\n    command: npx\n",
            "\"remote\" is not one of",
        ),
        (
            "s:\n    type: stdio\n    url: http://x\n",
            "needs a `command`",
        ),
        ("h:\n    type: http\n    command: x\n", "needs a `url`"),
        ("both:\n    command: x\n    url: http://x\n", "has both"),
        ("none:\n    args: []\n", "needs a `type`"),
        (
            "env:\n    command: x\n    env: {A: 1}\n",
            "`env.A` must be a string",
        ),
        ("t:\n    command: x\n    timeout: -1\n", "`timeout`"),
    ];
    for (server, expected) in cases {
        let p = agent_problems(&format!("description: d\nmcp-servers:\n  {server}"), "P.\n");
        assert_eq!(rules(&p), ["mcp-server"], "{server}: {p:#?}");
        assert!(p[0].message.contains(expected), "{server}: {}", p[0]);
        assert!(p[0].field.as_deref().unwrap().starts_with("mcp-servers."));
        assert_eq!(p[0].line, Some(3));
    }
}

#[test]
fn repository_instructions() {
    let dir = tree(&[
        ("a/copilot-instructions.md", "Use tabs.\n"),
        (
            "b/copilot-instructions.md",
            "---\napplyTo: '**'\n---\nUse spaces.\n",
        ),
        ("c/copilot-instructions.md", "\n"),
    ]);
    let a = InstructionsFile::load(dir.path().join("a/copilot-instructions.md")).unwrap();
    assert_eq!(a.kind, InstructionsKind::Repository);
    assert_eq!(a.text, "Use tabs.");
    let b = InstructionsFile::load(dir.path().join("b/copilot-instructions.md")).unwrap();
    assert_eq!(
        b.text, "Use spaces.",
        "front matter is not part of the text"
    );
    assert_eq!(rules(&b.warnings), ["unknown-key"]);
    let c = InstructionsFile::load(dir.path().join("c/copilot-instructions.md")).unwrap();
    assert_eq!(rules(&c.warnings), ["body-empty"]);
}

#[test]
fn path_instructions() {
    let dir = tree(&[
        (
            "rust.instructions.md",
            "---\napplyTo: 'src/**/*.rs, tests/**'\ndescription: Rust.\n---\nUse clippy.\n",
        ),
        (
            "bad.instructions.md",
            "---\napplyTo: 'src/[a'\nexcludeAgent: everyone\n---\nX.\n",
        ),
    ]);
    let f = InstructionsFile::load(dir.path().join("rust.instructions.md")).unwrap();
    assert_eq!(f.kind, InstructionsKind::Path);
    assert_eq!(f.apply_to, ["src/**/*.rs", "tests/**"]);
    assert_eq!(f.description.as_deref(), Some("Rust."));
    // The runtime loads every instructions file: problems are warnings.
    let bad = InstructionsFile::load(dir.path().join("bad.instructions.md")).unwrap();
    let p = &bad.warnings;
    assert_eq!(rules(p), ["apply-to-glob", "value"]);
    assert_eq!(p[0].line, Some(2));
    assert!(
        bad.apply_to.is_empty(),
        "an unknown excludeAgent: no applyTo"
    );
    // A comma inside braces belongs to the pattern.
    assert_eq!(
        instructions::split_patterns("**/*.{ts,tsx}, src/{a,b}/**"),
        ["**/*.{ts,tsx}", "src/{a,b}/**"]
    );
}

fn repo() -> tempfile::TempDir {
    tree(&[
        (".github/copilot-instructions.md", "Answer in English.\n"),
        (
            ".github/agents/reviewer.agent.md",
            "---\ndescription: Reviews.\n---\nYou review.\n",
        ),
        (
            ".github/agents/team/writer.agent.md",
            "---\ndescription: Writes.\ntools: [create]\n---\nYou write.\n",
        ),
        (".github/agents/README.md", "not an agent"),
        (
            ".github/skills/style/SKILL.md",
            "---\nname: style\ndescription: House style.\n---\nBe terse.\n",
        ),
        (
            ".github/instructions/rust.instructions.md",
            "---\napplyTo: '**/*.rs'\n---\nUse clippy.\n",
        ),
    ])
}

#[test]
fn a_repository_configuration_applies_to_a_builder() {
    let dir = repo();
    let config = RepoConfig::load(dir.path()).unwrap();
    assert_eq!(config.agent_names(), ["reviewer", "team--writer"]);
    assert_eq!(
        config.instructions_text.as_deref(),
        Some("Answer in English.")
    );
    assert_eq!(config.skills.len(), 1);
    assert_eq!(config.path_instructions.len(), 1);
    assert!(config.warnings().is_empty());
    let eval = config.builder().name("repo").build().unwrap();
    let snapshot = eval.snapshot();
    assert_eq!(snapshot.custom_agents, ["reviewer", "team--writer"]);
    assert_eq!(snapshot.instructions.as_deref(), Some("Answer in English."));
    assert_eq!(snapshot.skill_directories.len(), 1);
    // The .github folder itself works as the root too.
    let same = RepoConfig::load(dir.path().join(".github")).unwrap();
    assert_eq!(same.agent_names(), ["reviewer", "team--writer"]);
}

#[test]
fn repository_overrides() {
    let dir = repo();
    let config = RepoConfig::load(dir.path())
        .unwrap()
        .override_agent("team--writer", |a| a.with_model("gpt-5"))
        .unwrap()
        .without_agents(["reviewer"])
        .unwrap()
        .append_instructions("Be brief.");
    assert_eq!(config.agent_names(), ["team--writer"]);
    assert_eq!(config.agents[0].config.model.as_deref(), Some("gpt-5"));
    assert_eq!(
        config.instructions_text.as_deref(),
        Some("Answer in English.\n\nBe brief.")
    );
    let none = config.clone().with_instructions(None);
    assert!(
        none.builder()
            .build()
            .unwrap()
            .snapshot()
            .instructions
            .is_none()
    );
    let err = config.clone().only_agents(["nobody"]).unwrap_err();
    assert_eq!(err.field, "custom_agents");
    assert!(err.message.contains("loaded: team--writer"), "{err}");
    let err = config
        .override_agent("team--writer", |mut a| {
            a.name = "other".into();
            a
        })
        .unwrap_err();
    assert!(err.message.contains("renamed"), "{err}");
}

#[test]
fn repository_errors_are_all_reported() {
    let dir = tree(&[
        (
            ".github/agents/a.agent.md",
            "---\nname: Twin\ndescription: One.\n---\nP.\n",
        ),
        (
            ".github/agents/b.agent.md",
            "---\nname: Twin\ndescription: Two.\n---\nP.\n",
        ),
        (".github/agents/bad.agent.md", "---\nname: Bad\n---\nP.\n"),
        (
            ".github/skills/s/SKILL.md",
            "---\nname: t\ndescription: d\n---\nB.\n",
        ),
    ]);
    let e = RepoConfig::load(dir.path()).unwrap_err();
    let mut found: Vec<&str> = e.errors().map(|p| p.rule).collect();
    found.sort_unstable();
    assert_eq!(found, ["agent-name-duplicate", "required"]);
    let e = RepoConfig::load(dir.path().join("missing")).unwrap_err();
    assert_eq!(rules(&e.problems), ["path-missing"]);
    let empty = tempfile::tempdir().unwrap();
    let config = RepoConfig::load(empty.path()).unwrap();
    assert!(config.agents.is_empty() && config.instructions_text.is_none());
}

#[test]
fn problems_display_file_line_severity_rule_and_field() {
    let p = Problem::error(
        Path::new("skills/pdf/SKILL.md"),
        "skill-name-folder",
        "is wrong",
    )
    .at(Some(2))
    .field("name");
    assert_eq!(
        p.to_string(),
        "skills/pdf/SKILL.md:2: error[skill-name-folder] `name`: is wrong"
    );
    let p = Problem::warning(Path::new("skills/x"), "skill-md-missing", "no skill");
    assert_eq!(
        p.to_string(),
        "skills/x: warning[skill-md-missing]: no skill"
    );
}

#[test]
fn yaml_errors_say_how_to_fix_the_common_cases() {
    for (value, first) in [
        ("*foo", '*'),
        ("[unclosed", '['),
        ("@handle it", '@'),
        ("`code` first", '`'),
    ] {
        let p = skill_problems("x", &format!("name: x\ndescription: {value}\n"));
        assert_eq!(rules(&p), ["front-matter-yaml"], "{value}: {p:#?}");
        assert!(
            p[0].message.starts_with(&format!(
                "is not valid YAML: the value of `description` starts with `{first}`, which YAML reads as syntax; quote the value: description: \""
            )),
            "{value}: {}",
            p[0].message
        );
        assert_eq!(p[0].line, Some(3));
    }
    let p = skill_problems("x", "name: x\ndescription: Use it: when asked\n");
    assert!(p[0].message.contains("contains `: `"), "{}", p[0].message);
    let p = skill_problems("x", "name: x\ndescription: d\nmetadata:\n\tk: v\n");
    assert!(
        p[0].message.contains("indented with a tab"),
        "{}",
        p[0].message
    );
}

#[test]
fn a_duplicate_key_is_said_in_our_words_and_hides_nothing() {
    let p = skill_problems(
        "x",
        "name: Other\nname: x\ndescription: d\nlicense: 5\ncategory: c\n",
    );
    assert_eq!(
        rules(&p),
        [
            "front-matter-duplicate-key",
            "skill-name-format",
            "skill-name-folder",
            "type",
            "unknown-key"
        ],
        "{p:#?}"
    );
    assert!(
        !p[0].message.contains("DuplicateKeyPolicy"),
        "{}",
        p[0].message
    );
    let p = agent_problems("description: A.\ndescription: B.\ntools: 5\n", "P.\n");
    assert_eq!(rules(&p), ["front-matter-duplicate-key", "type"], "{p:#?}");
}

#[test]
fn an_empty_required_description_gets_advice_that_is_right() {
    let p = agent_problems("description:\n", "P.\n");
    assert_eq!(rules(&p), ["empty"]);
    assert_eq!(
        p[0].message,
        "has no value; give it a text value (the key is required)"
    );
    assert!(!p[0].message.contains("remove"));
    let p = skill_problems("x", "name: x\ndescription:\n");
    assert_eq!(
        p[0].message,
        "has no value; give it a text value (the key is required)"
    );
    // An optional key may still be removed.
    let p = skill_problems("x", "name: x\ndescription: d\nlicense:\n");
    assert!(
        p[0].message.ends_with("or remove the key"),
        "{}",
        p[0].message
    );
}

#[test]
fn links_in_constructs_that_are_not_links_are_not_checked() {
    let body = "<!-- [old](../old.md)\nstill a comment [x](../x.md) -->\nUse `[a](../a.md)` and ``[b](../b.md)`` and ```[c](../c.md)```.\n\n    [d](../d.md)\n\n````\n[e](../e.md)\n```\n[f](../f.md)\n````\n~~~~\n[g](../g.md)\n~~~~\nBut [real](../real.md) is one.\n";
    let dir = tree(&[(
        "x/SKILL.md",
        &format!("---\nname: x\ndescription: d\n---\n{body}"),
    )]);
    let skill = Skill::load(dir.path().join("x")).unwrap();
    let found: Vec<(&str, Option<u32>)> = skill.warnings.iter().map(|p| (p.rule, p.line)).collect();
    assert_eq!(
        found,
        [("reference-escapes", Some(19))],
        "{:#?}",
        skill.warnings
    );
}

#[test]
fn limits_count_utf16_code_units() {
    // 600 emoji: 600 characters, 1,200 UTF-16 units (the runtime's unit, over 1,024).
    let emoji = "😀".repeat(600);
    let p = skill_problems("x", &format!("name: x\ndescription: {emoji}\n"));
    assert_eq!(rules(&p), ["description-length"]);
    assert!(
        p[0].message.starts_with("has 1200 UTF-16 code units"),
        "{}",
        p[0].message
    );
    // 1,024 two-byte characters: 2,048 bytes, 1,024 units: loads.
    let e = "é".repeat(1024);
    assert!(skill_problems("x", &format!("name: x\ndescription: {e}\n")).is_empty());
}

mod evals_file {
    use crate::customization::skill::evals_file::{parse_evals_file, stays_inside};

    #[test]
    fn a_complete_file_reads_every_field_and_keeps_unknown_keys() {
        let file = parse_evals_file(
            r#"{"skill_name": "changelog", "version": 2, "evals": [
                {"id": 1, "prompt": "Write the changelog.", "expected_output": "CHANGELOG.md",
                 "files": ["evals/files/a.txt"], "expectations": ["It exists"], "notes": "x"},
                {"id": "smoke-test", "prompt": "Hi"}
            ]}"#,
        )
        .unwrap();
        assert_eq!(file.skill_name.as_deref(), Some("changelog"));
        assert_eq!(file.unknown, ["version"]);
        let [first, second] = file.evals.as_slice() else {
            panic!("{:?}", file.evals)
        };
        assert_eq!(first.id, "1");
        assert_eq!(first.files, ["evals/files/a.txt"]);
        assert_eq!(first.expectations, ["It exists"]);
        assert_eq!(first.expected_output.as_deref(), Some("CHANGELOG.md"));
        assert_eq!(first.unknown, ["notes"]);
        assert_eq!(first.label(), "eval_1_write_the_changelog");
        assert_eq!(second.label(), "eval_smoke_test_hi");
        assert_eq!(second.describe(), "evals[1] (id smoke-test)");
    }

    #[test]
    fn each_malformed_entry_is_named_with_its_field() {
        let cases = [
            ("[]", "one JSON object"),
            ("{}", "`evals` is missing"),
            (r#"{"evals": []}"#, "`evals` is empty"),
            (r#"{"evals": [3]}"#, "evals[0] must be an object"),
            (
                r#"{"evals": [{"prompt": "x"}]}"#,
                "evals[0]: `id` is missing",
            ),
            (
                r#"{"evals": [{"id": -1, "prompt": "x"}]}"#,
                "evals[0]: `id` must be",
            ),
            (
                r#"{"evals": [{"id": 1}]}"#,
                "evals[0] (id 1): `prompt` is missing",
            ),
            (
                r#"{"evals": [{"id": 1, "prompt": " "}]}"#,
                "`prompt` is blank",
            ),
            (
                r#"{"evals": [{"id": 1, "prompt": "x", "files": "a"}]}"#,
                "`files` must be an array of strings",
            ),
            (
                r#"{"evals": [{"id": 1, "prompt": "x", "expectations": ["ok", ""]}]}"#,
                "evals[0] (id 1): `expectations`[1] is blank",
            ),
            (
                r#"{"evals": [{"id": 1, "prompt": "x"}, {"id": 1, "prompt": "y"}]}"#,
                "evals[1]: `id` 1 is also the id of evals[0]",
            ),
            (
                r#"{"evals": [{"id": "a-b", "prompt": "x"}, {"id": "a_b", "prompt": "x"}]}"#,
                "would be named `eval_a_b_x` like evals[0]'s",
            ),
            ("{", "not valid JSON"),
        ];
        for (text, wanted) in cases {
            let error = parse_evals_file(text).expect_err(text).to_string();
            assert!(error.contains(wanted), "{text}: {error}");
        }
    }

    #[test]
    fn input_files_stay_inside_the_skill_folder() {
        assert!(stays_inside("evals/files/a.txt"));
        assert!(stays_inside("./a.txt"));
        assert!(!stays_inside("../a.txt"));
        assert!(!stays_inside("/etc/passwd"));
        assert!(!stays_inside("evals/../../a.txt"));
    }
}

mod triggers_file {
    use crate::customization::skill::triggers_file::parse_triggers_file;

    #[test]
    fn both_forms_read_to_the_same_queries_and_labels() {
        let array = parse_triggers_file(
            r#"[{"query": "Write the changelog for 1.3.0", "should_trigger": true},
                {"query": "What is the capital of Norway?", "should_trigger": false, "note": "x"}]"#,
        )
        .unwrap();
        let object = parse_triggers_file(
            r#"{"skill_name": "changelog", "owner": "docs", "evals": [
                {"prompt": "Write the changelog for 1.3.0", "should_trigger": true},
                {"query": "What is the capital of Norway?", "should_trigger": false, "note": "x"}]}"#,
        )
        .unwrap();
        assert_eq!(array.queries, object.queries);
        assert_eq!(array.skill_name, None);
        assert_eq!(object.skill_name.as_deref(), Some("changelog"));
        assert_eq!(object.unknown, ["owner"]);
        assert_eq!(array.queries[1].unknown, ["note"]);
        let labels: Vec<String> = array.queries.iter().map(|q| q.label()).collect();
        assert_eq!(
            labels,
            [
                "invoke_1_write_the_changelog_for_1",
                "dormant_2_what_is_the_capital_of"
            ]
        );
    }

    #[test]
    fn each_malformed_file_names_the_entry_and_the_key() {
        let cases = [
            ("{", "not valid JSON"),
            ("7", "must hold an array of queries"),
            ("[]", "the trigger set is empty"),
            (r#"{"queries": []}"#, "the object has no `evals`"),
            (r#"{"evals": {}}"#, "`evals` must be an array"),
            (r#"[1]"#, "[0] must be an object"),
            (r#"[{"should_trigger": true}]"#, "[0]: `query` is missing"),
            (
                r#"[{"query": " ", "should_trigger": true}]"#,
                "[0]: `query` is blank",
            ),
            (
                r#"[{"query": "a", "prompt": "a", "should_trigger": true}]"#,
                "[0] gives both `query` and `prompt`",
            ),
            (
                r#"[{"prompt": 3, "should_trigger": true}]"#,
                "[0]: `prompt` must be a string",
            ),
            (r#"[{"query": "a"}]"#, "[0]: `should_trigger` is missing"),
            (
                r#"[{"query": "a", "should_trigger": "yes"}]"#,
                "[0]: `should_trigger` must be `true`",
            ),
            (
                r#"[{"query": "a", "should_trigger": true}, {"query": "a", "should_trigger": false}]"#,
                "[1]: the query \"a\" is also [0], with the opposite `should_trigger`",
            ),
            (
                r#"{"skill_name": 1, "evals": []}"#,
                "`skill_name` must be a string",
            ),
        ];
        for (text, wanted) in cases {
            let error = parse_triggers_file(text).expect_err(text).to_string();
            assert!(error.contains(wanted), "{text}: {error}");
        }
    }
}
