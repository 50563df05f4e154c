//! Quick-start eval tests, written the way a user writes them.
//!
//! Run them offline against their cassettes (`tests/cassettes/evals/<test>.yaml`; a test's second
//! run, such as the treatment of a comparison, replays `<test>-2.yaml`):
//!
//! ```sh
//! cargo copilot-eval -p quickstart --replay --json results/native.json --junit results/junit.xml
//! ```
//!
//! (Inside the copilot-eval repository, `cargo xeval` runs the command built from the working tree.)
//!
//! `creates_a_greeting_file` also has five recorded trials, one cassette each
//! (`tests/cassettes/evals/creates_a_greeting_file/trial-K.yaml`, see the README there):
//! `cargo copilot-eval -p quickstart --replay --trials 5 creates_a_greeting_file` replays them
//! (3 of 5 pass).
//!
//! Without `--replay` they run live against GitHub Copilot (this spends model requests). Plain
//! `cargo test` lists them as ignored and runs none of them.

use std::sync::{Arc, Mutex};

use copilot_eval_core::copilot_eval;
use copilot_eval_core::eval::{Attachment, Prompt};
use copilot_eval_core::evidence::SessionEventType;
use copilot_eval_core::harness::EvalContext;
use copilot_eval_core::tools::function_tool_with_state;
use serde_json::json;

/// The runtime writes a file with its own `create` tool; the test reads it back from disk.
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120, max_tool_calls = 5)]
async fn creates_a_greeting_file(ctx: EvalContext) {
    let eval = ctx.eval().build().unwrap();
    let result = ctx
        .run(
            &eval,
            "Create a file called 'greeting.txt' with the content 'Hello, Ferris!'.",
        )
        .await;
    // The session completed and every event was recorded: no tool call, turn or usage is
    // missing from what the assertions below read. A failure prints the stop reason, the error
    // and each capture error, a line each.
    result.assert_success();

    // Independent verification: the file on disk, not the model's claim.
    let greeting = std::fs::read_to_string(ctx.workdir().join("greeting.txt"))
        .expect("greeting.txt was written");
    ctx.record_property("greeting", &greeting);
    assert_eq!(greeting.trim_end(), "Hello, Ferris!");
}

/// The model calls our own tool; the tool's handler records what it was asked.
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120, max_tool_calls = 5)]
async fn looks_up_a_release_with_a_custom_tool(ctx: EvalContext) {
    // The handler's state: each call gets a clone of this `Arc`, the test keeps `asked`.
    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let lookup = function_tool_with_state(
        "lookup_release",
        "Looks up the latest release of a package",
        json!({
            "type": "object",
            "properties": {"package": {"type": "string", "description": "The package name"}},
            "required": ["package"]
        }),
        Arc::clone(&asked),
        |seen, args| async move {
            let package = args["package"].as_str().unwrap_or_default().to_owned();
            seen.lock().unwrap().push(package.clone());
            Ok(format!("{package} 2.4.1 (released 2026-11-02)"))
        },
    );
    let eval = ctx.eval().tool(lookup).build().unwrap();
    let result = ctx
        .run(
            &eval,
            "Use lookup_release to find the latest release of ferris-cli and tell me its version.",
        )
        .await;
    // Completed with complete evidence; else the stop reason, error and capture errors.
    result.assert_success();

    // Independent verification: what our handler saw, then the answer.
    let asked = asked.lock().unwrap().clone();
    ctx.record_property("packages_looked_up", &asked);
    assert_eq!(asked, ["ferris-cli"]);
    assert!(result.tool_was_called_with("lookup_release", &json!({"package": "ferris-cli"})));
    let answer = result.final_response.clone().unwrap_or_default();
    assert!(answer.contains("2.4.1"), "{answer}");
}

/// A skill shipped with the crate is loaded from the session's skill directory and shapes the
/// answer.
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120, max_tool_calls = 5)]
async fn follows_the_release_notes_skill(ctx: EvalContext) {
    // Set the skill up inside the working directory (the session sees it there).
    let skills = ctx.workdir().join(".skills");
    let skill = skills.join("release-notes");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::copy(
        ctx.package_path("skills/release-notes/SKILL.md"),
        skill.join("SKILL.md"),
    )
    .unwrap();
    let eval = ctx.eval().skill_directory(&skills).build().unwrap();
    let result = ctx
        .run(
            &eval,
            "Use the release-notes skill to announce version 2.4.1 of ferris-cli in one line.",
        )
        .await;
    // Completed with complete evidence; else the stop reason, error and capture errors.
    result.assert_success();

    // The skill was loaded through the runtime's skill tool, and its rule shows in the answer.
    assert!(result.tool_was_called_with("skill", &json!({"skill": "release-notes"})));
    let answer = result.final_response.clone().unwrap_or_default();
    ctx.record_property("answer", &answer);
    assert!(answer.starts_with("SHIPPED-WITH-CARE"), "{answer}");
}

/// A repository's Copilot configuration (`.github/agents/*.agent.md` plus
/// `.github/copilot-instructions.md`) loaded as it is, and a dispatch to its custom agent.
///
/// This one uses a scripted model (`ctx.offline`), so it runs offline in every mode: it checks
/// that the configuration loads and reaches the session, and that the dispatch is recorded.
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120, max_tool_calls = 5)]
async fn loads_the_repository_configuration(ctx: EvalContext) {
    use copilot_eval_core::customization::RepoConfig;
    use copilot_eval_core::model_server::{Script, ScriptedTurn};

    let config_root = ctx.package_path("copilot-config");
    let repo = RepoConfig::load(&config_root).expect("the repository configuration loads");
    // The agent's id is its front-matter `name` ("Release Reviewer"), as the runtime names an
    // agent it loads from `reviewer.agent.md` itself: that is the `agent_type` to dispatch.
    assert_eq!(repo.agent_names(), ["Release Reviewer"]);
    ctx.offline(
        Script::new([])
            .turn(ScriptedTurn::tool_call(
                "task",
                json!({
                    "agent_type": "Release Reviewer",
                    "name": "reviewer",
                    "description": "Review the release notes",
                    "prompt": "Review: SHIPPED-WITH-CARE\n- Faster startup"
                }),
            ))
            .turn(ScriptedTurn::text("REVIEWED: no changes"))
            .turn(ScriptedTurn::text("The reviewer found nothing to change.")),
    );
    let eval = repo.apply(ctx.eval()).build().unwrap();
    let result = ctx
        .run(&eval, "Ask the reviewer to check these release notes.")
        .await;
    // Completed with complete evidence; else the stop reason, error and capture errors.
    result.assert_success();

    // The repository instructions reached the session's system prompt.
    let system_prompt = result
        .raw_events
        .iter()
        .find(|e| e.kind() == SessionEventType::SystemMessage)
        .and_then(|e| e.data["content"].as_str())
        .unwrap_or_default();
    assert!(system_prompt.contains("Answer in plain English"));
    // The custom agent was dispatched and completed, with its own answer.
    assert!(
        result.subagent_completed("Release Reviewer"),
        "{:#?}",
        result.subagent_invocations
    );
    let reviewer = &result.subagent_invocations_for("Release Reviewer")[0];
    ctx.record_property("reviewer_answer", &reviewer.final_response);
    assert_eq!(
        reviewer.final_response.as_deref(),
        Some("REVIEWED: no changes")
    );
}

/// A conversation: two prompts in ONE session, the second relying on what the first did. It is
/// one run in the results (its `prompts`, and each message numbered by the prompt it answers)
/// and one cassette; each prompt's answer and tool calls are read from `prompt_turns`.
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120, max_tool_calls = 5)]
async fn remembers_the_file_it_wrote(ctx: EvalContext) {
    let eval = ctx.eval().build().unwrap();
    let result = ctx
        .run_turns(
            &eval,
            [
                "Create a file called 'todo.txt' with the content 'Ship 2.4.1'.",
                "Which file did you just create, and what does it say?",
            ],
        )
        .await;
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);
    assert!(result.evidence_complete, "{:?}", result.capture_errors);

    // Independent verification: the file on disk.
    let todo = std::fs::read_to_string(ctx.workdir().join("todo.txt")).expect("todo.txt");
    assert_eq!(todo.trim_end(), "Ship 2.4.1");

    // Each prompt's own evidence: the first wrote the file, the second answered from memory.
    let turns = result.prompt_turns();
    assert_eq!(turns.len(), 2, "{:#?}", result.turns);
    assert!(turns[0].tool_calls.iter().any(|call| call.name == "create"));
    assert!(turns[1].tool_calls.is_empty(), "{:#?}", turns[1].tool_calls);
    let answer = turns[1].response.unwrap_or_default();
    ctx.record_property("second_answer", answer);
    assert!(
        answer.contains("todo.txt") && answer.contains("Ship 2.4.1"),
        "{answer}"
    );
}

/// A prompt with attachments: the changelog as a file (the runtime lists it for the model to
/// read) and one of its lines as a selection (its text goes into the prompt). Attachment paths
/// are relative to the working directory; the result's `prompts` and the run record's
/// `prompt_options` say what was attached.
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120, max_tool_calls = 5)]
async fn writes_the_selected_version(ctx: EvalContext) {
    std::fs::write(
        ctx.workdir().join("CHANGELOG.md"),
        "# Changelog\n\n## 2.4.1 - 2026-11-02\n- Faster startup\n\n## 2.4.0 - 2026-10-01\n- First release\n",
    )
    .unwrap();
    let eval = ctx.eval().build().unwrap();
    let prompt = Prompt::new("Write the version number of the selected release to version.txt.")
        .attach_file("CHANGELOG.md")
        .attach_selection("CHANGELOG.md", 3, 3);
    let result = ctx.run(&eval, prompt).await;
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);
    assert!(result.evidence_complete, "{:?}", result.capture_errors);

    // Independent verification: the file on disk.
    let version = std::fs::read_to_string(ctx.workdir().join("version.txt")).expect("version.txt");
    ctx.record_property("version", &version);
    assert_eq!(version.trim_end(), "2.4.1");
    // The selection as the run sent it: the line's text, read from the file.
    assert_eq!(
        result.prompts[0].attachments[1],
        Attachment::Selection {
            path: "CHANGELOG.md".into(),
            start_line: 3,
            end_line: 3,
            text: Some("## 2.4.1 - 2026-11-02".into()),
        }
    );
}

/// A case matrix: one function, one eval test per case (`says_hello_in::french`,
/// `says_hello_in::german`). Each case is listed, filtered, reported and capped on its own and
/// replays its own cassette (`says_hello_in/french.yaml`, `says_hello_in/german.yaml`).
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120, max_tool_calls = 5)]
#[case::french("French", "Bonjour")]
#[case::german("German", "Hallo")]
async fn says_hello_in(ctx: EvalContext, language: &str, word: &str) {
    let eval = ctx.eval().build().unwrap();
    let result = ctx
        .run(
            &eval,
            format!(
                "Create a file called 'hello.txt' holding only the word for 'hello' in {language}."
            ),
        )
        .await;
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);
    assert!(result.evidence_complete, "{:?}", result.capture_errors);

    // Independent verification: the file on disk.
    let written = std::fs::read_to_string(ctx.workdir().join("hello.txt")).expect("hello.txt");
    ctx.record_property("word", &written);
    assert_eq!(written.trim_end(), word);
}

/// Comparing configurations: the same prompt with and without the release-notes skill, each
/// side in its own working directory, judged by the same criterion. The baseline (no skill)
/// answers plainly; the treatment loads the skill and follows its house style. The results
/// show both runs labelled `baseline` / `treatment` and their differences; each side replays
/// its own cassette (`compares_with_and_without_the_skill.yaml`, then `...-2.yaml`).
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120, max_tool_calls = 5)]
async fn compares_with_and_without_the_skill(ctx: EvalContext) {
    use copilot_eval_core::harness::Side;

    // Each side gets its own folder; only the treatment's holds the skill.
    let baseline_dir = Side::Baseline.workdir(&ctx);
    let treatment_dir = Side::Treatment.workdir(&ctx);
    let skills = treatment_dir.join(".skills");
    std::fs::create_dir_all(skills.join("release-notes")).unwrap();
    std::fs::copy(
        ctx.package_path("skills/release-notes/SKILL.md"),
        skills.join("release-notes/SKILL.md"),
    )
    .unwrap();
    let baseline = ctx.eval().working_directory(&baseline_dir).build().unwrap();
    let treatment = ctx
        .eval()
        .working_directory(&treatment_dir)
        .skill_directory(&skills)
        .build()
        .unwrap();

    let comparison = ctx
        .compare(
            &baseline,
            &treatment,
            "Announce version 2.4.1 of ferris-cli in one line.",
        )
        .await;

    // The same criteria for both sides: each closure is applied to the baseline and to the
    // treatment, and both verdicts go to the results.
    let completed = comparison.check("completed", |result| result.success);
    let house_style = comparison.check("starts with the house tag line", |result| {
        result
            .final_response
            .as_deref()
            .unwrap_or_default()
            .starts_with("SHIPPED-WITH-CARE")
    });
    assert!(completed.both(), "{}", comparison.summary());
    for side in [&comparison.baseline, &comparison.treatment] {
        assert!(side.evidence_complete, "{:?}", side.capture_errors);
    }
    assert!(house_style.improved(), "{}", comparison.summary());
    // The skill is what made the difference: only the treatment loaded it.
    assert_eq!(
        comparison.differences().tools_only_in_treatment,
        ["skill"],
        "{}",
        comparison.summary()
    );
}

/// A judge beside an independent check: the answer must name the version (checked by code),
/// and a judge, a separate Copilot session with no tools on the same model, grades it against a
/// rubric. The judge's session is the test's second run, labelled `judge`: it replays
/// `judges_the_announcement-2.yaml`, and its verdicts, reasons and cost are in the results'
/// `judges`. A judge's verdict is a model's statement, not a check of the output.
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120)]
async fn judges_the_announcement(ctx: EvalContext) {
    use copilot_eval_core::harness::judge::{Material, Rubric};

    let eval = ctx.eval().build().unwrap();
    let result = ctx
        .run(&eval, "Announce version 2.4.1 of ferris-cli in one line.")
        .await;
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);

    // The independent check: the answer names the version.
    let answer = result.final_response.clone().unwrap_or_default();
    assert!(answer.contains("2.4.1"), "{answer}");

    // The judge: a model's statement about the same answer.
    let rubric = Rubric::new(Material::FinalResponse)
        .criterion(
            "names the version",
            "The announcement names the released version.",
        )
        .scored(
            "one line",
            "The announcement is a single, plain line.",
            1,
            5,
        );
    let judgement = ctx.judge(&result, &rubric).await.unwrap();
    assert!(judgement.all_passed(), "{}", judgement.summary());
}
