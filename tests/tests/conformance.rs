//! Runtime conformance: small skill, custom agent and instructions files, each run through BOTH
//! copilot-eval's loaders (and `lint`) and the pinned runtime's own discovery, which must agree
//! on whether the file loads and on the name, description and `applyTo` the runtime derives.
//!
//! All rows go into one working directory's `.github/` and one runtime session with config
//! discovery on (a loopback model server answers the account requests; nothing reaches the
//! network). The runtime's answers come from its own lists: `session.skills.reload` (errors
//! for refused skills) and `session.skills.list`, `session.agent.list`, and
//! `session.instructions.getSources`. A refused agent is simply absent from its list.
//!
//! Every `lint` rule that says "error" about a file must be backed here by a row the runtime
//! refuses too ([`ERROR_RULES`]); the rules the runtime does not enforce are warnings whose
//! messages say what it does instead.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use copilot_eval_core::customization::{AgentFile, InstructionsFile, Skill};
use copilot_eval_core::model_server::{ModelServer, Script, ScriptedTurn, ServerConfig};
use copilot_eval_core::runtime;
use copilot_eval_core::sdk::{self, CliProgram, Client, ClientOptions, SessionConfig};
use copilot_eval_e2e::runtime_for;
use serde_json::{Value, json};

const MODEL: &str = "claude-sonnet-4.5";

/// What a row is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Skill,
    Agent,
    Instructions,
}

/// One file: its kind, its path under `.github/`, its bytes, and the error rules our loader
/// reports for it (empty: it loads; the runtime must then load it too).
struct Row {
    kind: Kind,
    path: String,
    bytes: Vec<u8>,
    errors: &'static [&'static str],
}

fn skill(id: &str, text: &str, errors: &'static [&'static str]) -> Row {
    Row {
        kind: Kind::Skill,
        path: format!("skills/{id}/SKILL.md"),
        bytes: text.as_bytes().to_vec(),
        errors,
    }
}

fn agent(file: &str, text: &str, errors: &'static [&'static str]) -> Row {
    Row {
        kind: Kind::Agent,
        path: format!("agents/{file}"),
        bytes: text.as_bytes().to_vec(),
        errors,
    }
}

fn instructions(file: &str, text: &str) -> Row {
    Row {
        kind: Kind::Instructions,
        path: format!("instructions/{file}"),
        bytes: text.as_bytes().to_vec(),
        errors: &[],
    }
}

fn fm(name: &str, description: &str, extra: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n{extra}---\n{body}")
}

/// The error rules `lint` reports about a file's contents, each backed by a refused row below.
/// (`read` and `path-missing` are about the file system, not a file's contents.)
const ERROR_RULES: &[&str] = &[
    "front-matter-missing",
    "front-matter-unclosed",
    "front-matter-yaml",
    "front-matter-duplicate-key",
    "front-matter-not-mapping",
    "required",
    "type",
    "empty",
    "skill-name-chars",
    "skill-name-length",
    "description-length",
    "agent-name",
    "mcp-server",
];

fn rows() -> Vec<Row> {
    let mut rows = vec![
        // Skills the runtime loads.
        skill("good", &fm("good", "Good.", "", "Body.\n"), &[]),
        skill(
            "bom",
            &format!("\u{feff}{}", fm("bom", "Bom.", "", "Body.\n")),
            &[],
        ),
        skill(
            "crlf",
            &fm("crlf", "Crlf.", "", "Body.\n").replace('\n', "\r\n"),
            &[],
        ),
        skill(
            "tabsep",
            "---\nname:\ttabsep\ndescription:\tT.\n---\nBody.\n",
            &[],
        ),
        skill(
            "desc1024",
            &fm("desc1024", &"a".repeat(1024), "", "B.\n"),
            &[],
        ),
        // 1,024 characters of two bytes each: the limit is not in bytes.
        skill(
            "desc1024e",
            &fm("desc1024e", &"é".repeat(1024), "", "B.\n"),
            &[],
        ),
        skill(&"a".repeat(64), &fm(&"a".repeat(64), "N.", "", "B.\n"), &[]),
        skill("Upper-Case", &fm("Upper-Case", "Upper.", "", "B.\n"), &[]),
        skill(
            "double--hyphen",
            &fm("double--hyphen", "D.", "", "B.\n"),
            &[],
        ),
        skill(
            "folder-x",
            &fm("other-name", "Named unlike its folder.", "", "B.\n"),
            &[],
        ),
        skill("noname", "---\ndescription: No name.\n---\nB.\n", &[]),
        skill(
            "nodesc",
            "---\nname: nodesc\n---\n# Title\n\nFirst line\nsecond line.\n\nMore.\n",
            &[],
        ),
        skill(
            "emptydesc",
            "---\nname: emptydesc\ndescription: \"\"\n---\nB.\n",
            &[],
        ),
        skill("notmap", "---\n- a\n- b\n---\nBody text.\n", &[]),
        skill(
            "comment",
            &fm("comment", "C.", "", "<!-- [old](../old/SKILL.md) -->\n"),
            &[],
        ),
        skill(
            "codespan",
            &fm(
                "codespan",
                "C.",
                "",
                "Use `[x](../x.md)` and ``[y](../y.md)``.\n",
            ),
            &[],
        ),
        skill(
            "fenced",
            &fm("fenced", "C.", "", "````\n[x](../x.md)\n````\n"),
            &[],
        ),
        skill(
            "indented",
            &fm("indented", "C.", "", "Text.\n\n    [x](../x.md)\n"),
            &[],
        ),
        skill(
            "escapes",
            &fm("escapes", "C.", "", "See [other](../good/SKILL.md).\n"),
            &[],
        ),
        skill(
            "absolute",
            &fm("absolute", "C.", "", "See [p](/etc/passwd).\n"),
            &[],
        ),
        skill(
            "compat501",
            &fm(
                "compat501",
                "C.",
                &format!("compatibility: {}\n", "c".repeat(501)),
                "B.\n",
            ),
            &[],
        ),
        skill(
            "license-num",
            &fm("license-num", "C.", "license: 5\n", "B.\n"),
            &[],
        ),
        skill(
            "metanum",
            &fm("metanum", "C.", "metadata:\n  v: 1\n", "B.\n"),
            &[],
        ),
        skill(
            "unknownkey",
            &fm("unknownkey", "C.", "category: x\n", "B.\n"),
            &[],
        ),
        skill("emptybody", &fm("emptybody", "C.", "", ""), &[]),
        skill(
            "folded",
            &fm("folded", ">\n  folded line\n  second", "", "B.\n"),
            &[],
        ),
        // Skills the runtime refuses.
        skill(
            "desc1025",
            &fm("desc1025", &"a".repeat(1025), "", "B.\n"),
            &["description-length"],
        ),
        // 600 emoji are 600 characters but 1,200 UTF-16 code units: the runtime's unit.
        skill(
            "emoji600",
            &fm("emoji600", &"😀".repeat(600), "", "B.\n"),
            &["description-length"],
        ),
        skill(
            &"b".repeat(65),
            &fm(&"b".repeat(65), "N.", "", "B.\n"),
            &["skill-name-length"],
        ),
        skill(
            "accent",
            &fm(&"é".repeat(3), "E.", "", "B.\n"),
            &["skill-name-chars"],
        ),
        skill(
            "emptyname",
            "---\nname: \"\"\ndescription: E.\n---\nB.\n",
            &["empty"],
        ),
        skill(
            "nulldesc",
            "---\nname: nulldesc\ndescription:\n---\nB.\n",
            &["empty"],
        ),
        skill(
            "numname",
            "---\nname: 123\ndescription: N.\n---\nB.\n",
            &["type"],
        ),
        skill(
            "listdesc",
            "---\nname: listdesc\ndescription: [a, b]\n---\nB.\n",
            &["type"],
        ),
        skill(
            "toolsnum",
            &fm("toolsnum", "C.", "allowed-tools: 5\n", "B.\n"),
            &["type"],
        ),
        skill(
            "invstr",
            &fm("invstr", "C.", "user-invocable: \"yes\"\n", "B.\n"),
            &["type"],
        ),
        skill(
            "alias",
            "---\nname: alias\ndescription: *foo\n---\nB.\n",
            &["front-matter-yaml"],
        ),
        skill(
            "flow",
            "---\nname: flow\ndescription: [unclosed\n---\nB.\n",
            &["front-matter-yaml"],
        ),
        skill(
            "atsign",
            "---\nname: atsign\ndescription: @handles it\n---\nB.\n",
            &["front-matter-yaml"],
        ),
        skill(
            "backtick",
            "---\nname: backtick\ndescription: `code` first\n---\nB.\n",
            &["front-matter-yaml"],
        ),
        skill(
            "colon",
            "---\nname: colon\ndescription: Use it: when asked\n---\nB.\n",
            &["front-matter-yaml"],
        ),
        skill(
            "tabindent",
            "---\nname: tabindent\ndescription: T.\nmetadata:\n\tk: v\n---\nB.\n",
            &["front-matter-yaml"],
        ),
        skill(
            "dupkey",
            "---\nname: dupkey\ndescription: One.\ndescription: Two.\n---\nB.\n",
            &["front-matter-duplicate-key"],
        ),
        skill("nofm", "# Just Markdown\n", &["front-matter-missing"]),
        skill(
            "unclosed",
            "---\nname: unclosed\ndescription: U.\nB.\n",
            &["front-matter-unclosed"],
        ),
        // Agents the runtime loads.
        agent(
            "spaced.agent.md",
            "---\nname: Release Reviewer\ndescription: Reviews.\n---\nReview.\n",
            &[],
        ),
        agent(
            "planner.agent.md",
            "---\nname: Planner\ndescription: Plans.\n---\nPlan.\n",
            &[],
        ),
        agent(
            "stemonly.agent.md",
            "---\ndescription: Stem.\n---\nStem.\n",
            &[],
        ),
        agent(
            "emptyname.agent.md",
            "---\nname: \"\"\ndescription: E.\n---\nP.\n",
            &[],
        ),
        agent(
            "emptydesc.agent.md",
            "---\ndescription: \"\"\n---\nP.\n",
            &[],
        ),
        agent(
            "emptybody.agent.md",
            "---\ndescription: Empty body.\n---\n",
            &[],
        ),
        agent(
            "badtarget.agent.md",
            "---\ndescription: T.\ntarget: bogus\n---\nP.\n",
            &[],
        ),
        agent(
            "handoffs.agent.md",
            "---\ndescription: H.\nhandoffs: 3\n---\nP.\n",
            &[],
        ),
        agent(
            "bomcrlf.agent.md",
            &"\u{feff}---\nname: BomCrlf\ndescription: B.\n---\nP.\n".replace('\n', "\r\n"),
            &[],
        ),
        agent(
            "modellist.agent.md",
            "---\ndescription: M.\nmodel: [a, b]\n---\nP.\n",
            &[],
        ),
        agent(
            "sub/deep.agent.md",
            "---\ndescription: Deep.\n---\nP.\n",
            &[],
        ),
        // Agents the runtime refuses (they are missing from its list).
        agent(
            "nodesc.agent.md",
            "---\nname: NoDesc\n---\nP.\n",
            &["required"],
        ),
        agent(
            "nulldesc.agent.md",
            "---\ndescription:\n---\nP.\n",
            &["empty"],
        ),
        agent(
            "descnum.agent.md",
            "---\ndescription: 5\n---\nP.\n",
            &["type"],
        ),
        agent(
            "numname.agent.md",
            "---\nname: 123\ndescription: N.\n---\nP.\n",
            &["type"],
        ),
        agent(
            "toolsnum.agent.md",
            "---\ndescription: T.\ntools: 5\n---\nP.\n",
            &["type"],
        ),
        agent(
            "infer.agent.md",
            "---\ndescription: I.\ninfer: \"no\"\n---\nP.\n",
            &["type"],
        ),
        agent(
            "remote.agent.md",
            "---\ndescription: R.\nmcp-servers:\n  x:\n    type: remote\n    url: https://example.invalid\n---\nP.\n",
            &["mcp-server"],
        ),
        agent(
            "mcpnocmd.agent.md",
            "---\ndescription: M.\nmcp-servers:\n  x:\n    type: stdio\n---\nP.\n",
            &["mcp-server"],
        ),
        agent(
            "badyaml.agent.md",
            "---\ndescription: [oops\n---\nP.\n",
            &["front-matter-yaml"],
        ),
        agent(
            "dupkey.agent.md",
            "---\ndescription: A.\ndescription: B.\n---\nP.\n",
            &["front-matter-duplicate-key"],
        ),
        agent(
            "notmap.agent.md",
            "---\n- a\n---\nP.\n",
            &["front-matter-not-mapping"],
        ),
        agent(
            "nofm.agent.md",
            "Just a prompt.\n",
            &["front-matter-missing"],
        ),
        agent(
            "unclosed.agent.md",
            "---\ndescription: U.\nP.\n",
            &["front-matter-unclosed"],
        ),
        agent(
            ".agent.md",
            "---\ndescription: Nameless.\n---\nP.\n",
            &["agent-name"],
        ),
        // Instructions: the runtime loads every one.
        instructions(
            "brace.instructions.md",
            "---\napplyTo: \"**/*.{ts,tsx}\"\n---\nTS.\n",
        ),
        instructions(
            "multi.instructions.md",
            "---\napplyTo: \"**/*.rs, **/*.toml\"\ndescription: Rust\n---\nRS.\n",
        ),
        instructions(
            "nested-brace.instructions.md",
            "---\napplyTo: \"src/{a,b}/**/*.{js,jsx}, docs/**\"\n---\nN.\n",
        ),
        instructions(
            "list.instructions.md",
            "---\napplyTo: [\"a/**\", \"b/**\"]\n---\nL.\n",
        ),
        instructions(
            "badglob.instructions.md",
            "---\napplyTo: \"[abc\"\n---\nG.\n",
        ),
        instructions(
            "badexclude.instructions.md",
            "---\napplyTo: \"**\"\nexcludeAgent: bogus\n---\nE.\n",
        ),
        instructions("number.instructions.md", "---\napplyTo: 5\n---\nN.\n"),
        instructions(
            "bomcrlf.instructions.md",
            &"\u{feff}---\napplyTo: \"**/*.md\"\ndescription: Docs\n---\nD.\n"
                .replace('\n', "\r\n"),
        ),
        instructions("unclosed.instructions.md", "---\napplyTo: \"**\"\nU.\n"),
        instructions("nofm.instructions.md", "Plain instructions.\n"),
        instructions("badyaml.instructions.md", "---\napplyTo: [oops\n---\nY.\n"),
    ];
    // Not UTF-8: the runtime loads it, the invalid byte replaced by U+FFFD (a `utf8` warning).
    rows.push(Row {
        kind: Kind::Skill,
        path: "skills/latin1/SKILL.md".into(),
        bytes: b"---\nname: latin1\ndescription: caf\xe9\n---\nB.\n".to_vec(),
        errors: &[],
    });
    // A symbolic link out of the skill folder (made by the test): the runtime loads the skill.
    rows.push(Row {
        kind: Kind::Skill,
        path: "skills/symlinked/SKILL.md".into(),
        bytes: fm("symlinked", "S.", "", "See [leak](leak.md).\n").into_bytes(),
        errors: &[],
    });
    rows
}

/// What the runtime derived for one file.
#[derive(Debug, Default)]
struct Seen {
    name: Option<String>,
    description: Option<String>,
    apply_to: Option<Vec<String>>,
}

/// The runtime's view of `work/.github`: loaded files by path relative to `.github/`, and the
/// skill errors it reported.
async fn runtime_view(runtime: &Path, work: &Path) -> (BTreeMap<String, Seen>, Vec<String>) {
    let server = ModelServer::start(ServerConfig::new(Arc::new(Script::new([]))).model(MODEL))
        .await
        .expect("the loopback model server starts");
    let home = tempfile::tempdir().unwrap();
    let client = start_client(runtime, work, home.path(), &server.base_url()).await;
    let session = client
        .create_session(session_config(work))
        .await
        .expect("the session starts");
    let rpc = session.rpc();
    let diagnostics = rpc.skills().reload().await.expect("skills reload");
    let skills = rpc.skills().list().await.expect("skills list");
    let agents = rpc.agent().list().await.expect("agent list");
    let sources = rpc
        .instructions()
        .get_sources()
        .await
        .expect("instruction sources");
    let _ = session.disconnect().await;
    let _ = client.stop().await;

    let github = work.canonicalize().unwrap().join(".github");
    let relative = |p: &str| {
        let p = PathBuf::from(p);
        let p = p.canonicalize().unwrap_or(p);
        p.strip_prefix(&github)
            .map(|r| r.to_string_lossy().into_owned())
            .ok()
    };
    let mut seen = BTreeMap::new();
    for s in skills.skills {
        if let Some(path) = s.path.as_deref().and_then(relative) {
            seen.insert(
                path,
                Seen {
                    name: Some(s.name),
                    description: Some(s.description),
                    apply_to: None,
                },
            );
        }
    }
    for a in agents.agents {
        if let Some(path) = a.path.as_deref().and_then(relative) {
            seen.insert(
                path,
                Seen {
                    name: Some(a.name),
                    description: Some(a.description),
                    apply_to: None,
                },
            );
        }
    }
    for i in sources.sources {
        if let Some(path) = i.source_path.strip_prefix(".github/") {
            seen.insert(
                path.to_owned(),
                Seen {
                    name: None,
                    description: i.description,
                    apply_to: i.apply_to,
                },
            );
        }
    }
    (seen, diagnostics.errors)
}

async fn start_client(runtime: &Path, work: &Path, home: &Path, base_url: &str) -> Client {
    let token = copilot_eval_core::run::OFFLINE_TOKEN;
    let cache = runtime::runtime_cache_dir();
    let env: Vec<(std::ffi::OsString, std::ffi::OsString)> = vec![
        ("COPILOT_HOME".into(), home.into()),
        ("GH_CONFIG_DIR".into(), home.into()),
        ("XDG_CONFIG_HOME".into(), home.into()),
        ("XDG_STATE_HOME".into(), home.into()),
        ("XDG_CACHE_HOME".into(), cache.clone().into()),
        ("COPILOT_CACHE_HOME".into(), cache.into()),
        ("COPILOT_GITHUB_TELEMETRY_DISABLED".into(), "true".into()),
        ("COPILOT_API_URL".into(), base_url.into()),
        ("COPILOT_DEBUG_GITHUB_API_URL".into(), base_url.into()),
        ("GH_TOKEN".into(), token.into()),
        ("GITHUB_TOKEN".into(), token.into()),
        ("GH_ENTERPRISE_TOKEN".into(), "".into()),
        ("GITHUB_ENTERPRISE_TOKEN".into(), "".into()),
    ];
    let options = ClientOptions::new()
        .with_program(CliProgram::Path(runtime.to_path_buf()))
        .with_cwd(work.to_path_buf())
        .with_github_token(token)
        .with_env(env);
    Client::start(options).await.expect("the runtime starts")
}

/// Config discovery on, in `work`, offline.
fn session_config(work: &Path) -> SessionConfig {
    SessionConfig::default()
        .with_working_directory(work)
        .with_enable_config_discovery(true)
        .with_trust_working_directory(sdk::WorkingDirectoryTrust::Session)
        .with_github_token(copilot_eval_core::run::OFFLINE_TOKEN)
        .with_model(MODEL)
        .with_permission_handler(Arc::new(sdk::handler::ApproveAllHandler))
}

/// Our verdict on one row: `Ok(seen)` when our loader loads it, else the error rules.
fn ours(row: &Row, github: &Path) -> Result<Seen, Vec<&'static str>> {
    let path = github.join(&row.path);
    let rules = |e: copilot_eval_core::customization::LoadError| {
        e.errors().map(|p| p.rule).collect::<Vec<_>>()
    };
    match row.kind {
        Kind::Skill => Skill::load(path.parent().unwrap())
            .map_err(rules)
            .map(|s| Seen {
                name: Some(s.name),
                description: Some(s.description),
                apply_to: None,
            }),
        Kind::Agent => AgentFile::load(&path).map_err(rules).map(|a| Seen {
            name: Some(a.config.name.clone()),
            description: a.config.description.clone(),
            apply_to: None,
        }),
        Kind::Instructions => InstructionsFile::load(&path).map_err(rules).map(|f| Seen {
            name: None,
            description: f.description,
            apply_to: Some(f.apply_to),
        }),
    }
}

#[tokio::test]
async fn loaders_and_lint_agree_with_the_runtime() {
    let Some(runtime) = runtime_for("loaders_and_lint_agree_with_the_runtime") else {
        return;
    };
    let rows = rows();
    assert!(rows.len() >= 40, "{} rows", rows.len());
    let work = tempfile::tempdir().unwrap();
    let github = work.path().join(".github");
    for row in &rows {
        let path = github.join(&row.path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &row.bytes).unwrap();
    }
    std::fs::write(work.path().join("outside.md"), "outside").unwrap();
    std::os::unix::fs::symlink(
        work.path().join("outside.md"),
        github.join("skills/symlinked/leak.md"),
    )
    .unwrap();
    let (seen, skill_errors) = runtime_view(&runtime.path, work.path()).await;

    let mut disagreements = Vec::new();
    for row in &rows {
        let theirs = seen.get(&row.path);
        match (ours(row, &github), theirs) {
            (Ok(ours), Some(theirs)) => {
                if !row.errors.is_empty() {
                    disagreements.push(format!(
                        "{}: expected errors {:?}, loaded",
                        row.path, row.errors
                    ));
                }
                if row.kind != Kind::Instructions && ours.name != theirs.name {
                    disagreements.push(format!(
                        "{}: name ours {:?}, runtime {:?}",
                        row.path, ours.name, theirs.name
                    ));
                }
                let description = |d: &Option<String>| d.clone().filter(|d| !d.is_empty());
                if description(&ours.description) != description(&theirs.description) {
                    disagreements.push(format!(
                        "{}: description ours {:?}, runtime {:?}",
                        row.path, ours.description, theirs.description
                    ));
                }
                // The runtime reads an unparsable instructions front matter line by line; we
                // take no `applyTo` from it (and warn): compared only where we read one.
                if row.kind == Kind::Instructions
                    && ours.apply_to.as_ref().is_some_and(|a| !a.is_empty())
                    && ours.apply_to != theirs.apply_to
                {
                    disagreements.push(format!(
                        "{}: applyTo ours {:?}, runtime {:?}",
                        row.path, ours.apply_to, theirs.apply_to
                    ));
                }
            }
            (Err(rules), None) => {
                if rules != row.errors {
                    disagreements.push(format!(
                        "{}: error rules {rules:?}, expected {:?}",
                        row.path, row.errors
                    ));
                }
                // A refused skill is named in the runtime's errors.
                if row.kind == Kind::Skill && !skill_errors.iter().any(|e| e.contains(&row.path)) {
                    disagreements.push(format!(
                        "{}: refused, but not in the runtime's skill errors {skill_errors:?}",
                        row.path
                    ));
                }
            }
            (Ok(_), None) => {
                disagreements.push(format!("{}: we load it, the runtime refuses it", row.path))
            }
            (Err(rules), Some(_)) => disagreements.push(format!(
                "{}: we refuse it ({rules:?}), the runtime loads it",
                row.path
            )),
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));

    // Every error rule is backed by a row the runtime refuses.
    for rule in ERROR_RULES {
        assert!(
            rows.iter()
                .any(|r| r.errors.contains(rule) && !seen.contains_key(&r.path)),
            "no refused row for the error rule {rule}"
        );
    }

    // lint gives each file the same verdict whether it lints the whole tree or the file's own
    // folder.
    let whole = copilot_eval_core::lint::lint(std::slice::from_ref(&github));
    for row in &rows {
        let path = github.join(&row.path);
        let target = if row.kind == Kind::Skill {
            path.parent().unwrap().to_path_buf()
        } else {
            path.clone()
        };
        let alone = copilot_eval_core::lint::lint(std::slice::from_ref(&target));
        let verdict = |report: &copilot_eval_core::lint::LintReport| {
            let mut v: Vec<(&'static str, bool)> = report
                .problems
                .iter()
                .filter(|p| p.file.canonicalize().ok() == path.canonicalize().ok())
                .map(|p| (p.rule, p.is_error()))
                .collect();
            v.sort();
            v
        };
        assert_eq!(verdict(&whole), verdict(&alone), "{}", row.path);
        let errors: Vec<&str> = verdict(&alone)
            .into_iter()
            .filter(|(_, e)| *e)
            .map(|(r, _)| r)
            .collect();
        let mut expected = row.errors.to_vec();
        expected.sort();
        assert_eq!(errors, expected, "lint on {}", row.path);
    }
}

/// The quickstart's custom agent, loaded by the runtime itself from the same
/// `.github/agents/reviewer.agent.md`, answers a `task` dispatch under the id
/// `RepoConfig` gives it.
#[tokio::test]
async fn the_quickstart_agent_id_dispatches_when_the_runtime_loads_the_file() {
    let Some(runtime) =
        runtime_for("the_quickstart_agent_id_dispatches_when_the_runtime_loads_the_file")
    else {
        return;
    };
    let config =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/quickstart/copilot-config");
    let repo = copilot_eval_core::customization::RepoConfig::load(&config).unwrap();
    let id = repo.agents[0].name().to_owned();
    assert_eq!(id, "Release Reviewer");
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(work.path().join(".github/agents")).unwrap();
    std::fs::copy(
        &repo.agents[0].path,
        work.path().join(".github/agents/reviewer.agent.md"),
    )
    .unwrap();

    let script = Script::new([])
        .turn(ScriptedTurn::tool_call(
            "task",
            json!({"agent_type": id, "name": "reviewer", "prompt": "Review: SHIPPED-WITH-CARE", "description": "Review notes"}),
        ))
        .turn(ScriptedTurn::text("REVIEWED: no changes"))
        .turn(ScriptedTurn::text("done"));
    let server = ModelServer::start(ServerConfig::new(Arc::new(script)).model(MODEL))
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let client = start_client(&runtime.path, work.path(), home.path(), &server.base_url()).await;
    let session = client
        .create_session(session_config(work.path()))
        .await
        .unwrap();
    let answer = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        session.send_and_wait("Review."),
    )
    .await
    .expect("the turn ends");
    let _ = session.disconnect().await;
    let _ = client.stop().await;
    assert!(answer.is_ok(), "{answer:?}");
    let requests = server.model_requests();
    assert_eq!(requests.len(), 3, "main, subagent, main");
    let tool_result: Vec<&Value> = requests[2]
        .messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    let text = serde_json::to_string(&tool_result).unwrap();
    assert!(!text.contains("Unknown agent_type"), "{text}");
    assert!(text.contains("REVIEWED: no changes"), "{text}");
}
