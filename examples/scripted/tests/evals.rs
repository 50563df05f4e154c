//! The authoring features of copilot-eval with a scripted model: a conversation of several
//! prompts, a session resumed in a fresh runtime process, a prompt with attachments, a case
//! matrix, a baseline/treatment comparison (once, and over trials), a catalog of two models (a
//! custom agent from its file, on its own model), assertions on what reached the model, and a
//! guard's denial.
//!
//! Each test scripts its model with `ctx.offline(..)`: the real Copilot runtime runs the session
//! and its tools, and a loopback model server answers with the script's turns, in order. Scripted
//! tests are offline in every mode (no cassette is read, no live request is made), so they run
//! the same with or without `--replay`:
//!
//! ```sh
//! cargo copilot-eval -p scripted --json results/scripted.json --junit results/scripted.xml
//! ```
//!
//! The same features replayed from recorded cassettes are in `examples/quickstart`.

use std::path::Path;

use copilot_eval_core::copilot_eval;
use copilot_eval_core::eval::{Attachment, Prompt};
use copilot_eval_core::harness::{EvalContext, Side, Trigger};
use copilot_eval_core::model_server::{Script, ScriptCatalog, ScriptedTurn};
use serde_json::json;

/// The model's turn that creates `file` holding `text` with the runtime's own `create` tool.
fn create(file: &Path, text: &str) -> ScriptedTurn {
    ScriptedTurn::tool_call(
        "create",
        json!({"path": file.to_str().unwrap(), "file_text": text}),
    )
}

/// A model matrix over a case matrix: `models = [..]` makes one eval per case and model, each
/// its own test on its own model (`names_the_capital_per_model::france@gpt-5`, cassette
/// `names_the_capital_per_model/france@gpt-5.yaml`), and the report sets the models side by side.
/// The script plays two models of different skill by `ctx.model()`: run in trials
/// (`cargo copilot-eval --trials 3`), `gpt-5` names the wrong capital in trial 2 and
/// `claude-sonnet-4.5` never does, so each case gives claude 3/3 and gpt-5 2/3. Run once, every
/// cell passes.
#[copilot_eval(models = ["claude-sonnet-4.5", "gpt-5"], timeout_s = 120)]
#[case::france("France", "Paris")]
#[case::italy("Italy", "Rome")]
async fn names_the_capital_per_model(ctx: EvalContext, country: &str, capital: &str) {
    let model = ctx
        .model()
        .expect("a model matrix gives each test its model");
    let wrong = model == "gpt-5" && ctx.trial().is_some_and(|t| t.trial == 2);
    let answer = if wrong { "Lyon" } else { capital };
    ctx.offline(Script::new([]).turn(ScriptedTurn::text(format!("{answer}."))));
    let eval = ctx.eval().build().unwrap();
    assert_eq!(eval.model(), Some(model.as_str()));
    let result = ctx
        .run(&eval, format!("What is the capital of {country}?"))
        .await;
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);
    let reply = result.final_response.unwrap_or_default();
    assert!(reply.contains(capital), "{model} answered {reply:?}");
}

/// A stochastic model, scripted: run in trials (`cargo copilot-eval --trials 5`), the model
/// names the wrong capital in trials 2 and 4 and the right one otherwise, so the eval passes
/// 3 of 5 trials: the report gives its pass rate (60%, 95% interval 23%-88%), pass@k, pass^k
/// and marks it flaky; it passes the suite only with `--min-pass-rate 60` or lower. Run once,
/// it passes.
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120)]
async fn names_the_capital_in_most_trials(ctx: EvalContext) {
    let wrong = ctx.trial().is_some_and(|t| t.trial % 2 == 0);
    let answer = if wrong { "Lyon." } else { "Paris." };
    ctx.offline(Script::new([]).turn(ScriptedTurn::text(answer)));
    let eval = ctx.eval().build().unwrap();
    let result = ctx.run(&eval, "What is the capital of France?").await;
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);
    let reply = result.final_response.unwrap_or_default();
    assert!(reply.contains("Paris"), "the model answered {reply:?}");
}

/// A trigger and dormancy matrix for the skill `skills/release-notes`: prompts that should
/// invoke it and prompts that should leave it alone, each checked with `ctx.expect_trigger`,
/// which records the check for the report's per-skill trigger and false-trigger rates. A
/// stochastic model, scripted: run in trials (`cargo copilot-eval --trials 3`), it misses the
/// skill on `asks_for_release_notes` in trial 2 and invokes it falsely on `asks_for_a_capital`
/// in trial 3, so the skill is triggered in 5 of its 6 should-trigger runs (83%, 95% interval
/// 44%-97%) and falsely in 1 of its 6 should-not runs (17%, 3%-56%). Run once, every case
/// passes.
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120, max_tool_calls = 5)]
#[case::asks_for_release_notes("Write the release notes for ferris-cli 2.4.1.", Trigger::Invoke)]
#[case::asks_for_the_changelog("What goes in the changelog of ferris-cli 2.4.1?", Trigger::Invoke)]
#[case::asks_for_a_capital("What is the capital of France?", Trigger::Dormant)]
#[case::asks_to_fix_a_typo("Fix the typo in 'recieve'.", Trigger::Dormant)]
async fn triggers_the_release_notes_skill(ctx: EvalContext, prompt: &str, expected: Trigger) {
    let trial = ctx.trial().map_or(1, |t| t.trial);
    let case = ctx.test_name();
    let missed = case.ends_with("asks_for_release_notes") && trial == 2;
    let false_trigger = case.ends_with("asks_for_a_capital") && trial == 3;
    let invokes = (expected == Trigger::Invoke && !missed) || false_trigger;
    let script = if invokes {
        Script::new([])
            .turn(ScriptedTurn::tool_call(
                "skill",
                json!({"skill": "release-notes"}),
            ))
            .turn(ScriptedTurn::text("SHIPPED-WITH-CARE\n- Done."))
    } else {
        Script::new([]).turn(ScriptedTurn::text("Done."))
    };
    ctx.offline(script);
    let eval = ctx.eval().skill_directory("skills").build().unwrap();
    let result = ctx.run(&eval, prompt).await;
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);
    assert!(result.skill_was_discovered("release-notes"));
    let check = ctx.expect_trigger(&result, "release-notes", expected);
    assert!(check.held(), "{check}");
}

/// A conversation: two prompts in one session. The script answers the first prompt with a
/// tool call and a reply, the second with a reply only; `prompt_turns` splits the one run by
/// prompt.
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120, max_tool_calls = 5)]
async fn remembers_the_file_it_wrote(ctx: EvalContext) {
    let todo = ctx.workdir().join("todo.txt");
    ctx.offline(
        Script::new([])
            .turn(create(&todo, "Ship 2.4.1"))
            .turn(ScriptedTurn::text("Created todo.txt."))
            .turn(ScriptedTurn::text(
                "I created todo.txt; it says \"Ship 2.4.1\".",
            )),
    );
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

    // Independent verification: the file the runtime's tool wrote.
    assert_eq!(std::fs::read_to_string(&todo).unwrap(), "Ship 2.4.1");
    // Each prompt's own evidence.
    let turns = result.prompt_turns();
    assert_eq!(turns.len(), 2, "{:#?}", result.turns);
    assert_eq!(turns[0].tool_calls.len(), 1);
    assert_eq!(turns[0].tool_calls[0].name, "create");
    assert!(turns[1].tool_calls.is_empty(), "{:#?}", turns[1].tool_calls);
    ctx.record_property("second_answer", turns[1].response);
    assert_eq!(
        turns[1].response,
        Some("I created todo.txt; it says \"Ship 2.4.1\".")
    );
}

/// A session resumed later, in a fresh runtime process: the first run gives the model a fact;
/// `ctx.resume` continues that session, so the model's request carries the first exchange as
/// history. The resumed run is a run of its own, with the same session id and `resumed` set
/// (its run record names the first run in `resumed_from`).
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120, max_tool_calls = 5)]
async fn resumes_the_session_later(ctx: EvalContext) {
    ctx.offline(
        Script::new([])
            .turn(ScriptedTurn::text("Noted."))
            .turn(ScriptedTurn::text("The code word is PLUM.")),
    );
    let eval = ctx.eval().build().unwrap();
    let first = ctx
        .run(&eval, "Remember this: the code word is PLUM.")
        .await;
    assert!(first.success, "{}: {:?}", first.stop_reason, first.error);
    let later = ctx.resume(&eval, &first, "What is the code word?").await;
    assert!(later.success, "{}: {:?}", later.stop_reason, later.error);
    assert!(later.resumed);
    assert_eq!(later.session_id, first.session_id);
    // The resumed session's model request carries the first exchange as history: the model
    // answers from the earlier conversation, not from the script alone.
    let requests = ctx.model_requests();
    assert_eq!(requests.len(), 2, "{requests:#?}");
    assert!(!requests[0].mentions("Noted."), "{requests:#?}");
    assert!(
        requests[1].mentions("Remember this: the code word is PLUM.")
            && requests[1].mentions("Noted."),
        "the resumed request lacks the first exchange: {requests:#?}"
    );
    ctx.record_property("answer", later.final_response.as_deref());
}

/// A prompt with a file and a selection attached. The run reads the selection's text from the
/// file when it sends the prompt; the result's `prompts` say what was attached.
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120, max_tool_calls = 5)]
async fn writes_the_selected_version(ctx: EvalContext) {
    std::fs::write(
        ctx.workdir().join("CHANGELOG.md"),
        "# Changelog\n\n## 2.4.1 - 2026-11-02\n- Faster startup\n\n## 2.4.0 - 2026-10-01\n- First release\n",
    )
    .unwrap();
    let version_file = ctx.workdir().join("version.txt");
    ctx.offline(
        Script::new([])
            .turn(create(&version_file, "2.4.1"))
            .turn(ScriptedTurn::text("Wrote 2.4.1 to version.txt.")),
    );
    let eval = ctx.eval().build().unwrap();
    let prompt = Prompt::new("Write the version number of the selected release to version.txt.")
        .attach_file("CHANGELOG.md")
        .attach_selection("CHANGELOG.md", 3, 3);
    let result = ctx.run(&eval, prompt).await;
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);

    assert_eq!(std::fs::read_to_string(&version_file).unwrap(), "2.4.1");
    assert_eq!(
        result.prompts[0].attachments,
        [
            Attachment::File {
                path: "CHANGELOG.md".into()
            },
            Attachment::Selection {
                path: "CHANGELOG.md".into(),
                start_line: 3,
                end_line: 3,
                text: Some("## 2.4.1 - 2026-11-02".into()),
            },
        ]
    );
}

/// A case matrix: one eval test per case (`says_hello_in::french`, `says_hello_in::german`),
/// each listed, filtered, reported and capped on its own.
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120, max_tool_calls = 5)]
#[case::french("French", "Bonjour")]
#[case::german("German", "Hallo")]
async fn says_hello_in(ctx: EvalContext, language: &str, word: &str) {
    let file = ctx.workdir().join("hello.txt");
    ctx.offline(
        Script::new([])
            .turn(create(&file, word))
            .turn(ScriptedTurn::text(format!(
                "Created hello.txt with \"{word}\"."
            ))),
    );
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
    let written = std::fs::read_to_string(&file).unwrap();
    ctx.record_property("word", &written);
    assert_eq!(written, word);
}

/// A baseline and a treatment on the same prompt, each in its own working directory, judged by
/// the same criteria. One script serves both sides in order: the baseline's reply first, then
/// the treatment's, which loads the skill before answering in its house style.
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120, max_tool_calls = 5)]
async fn compares_with_and_without_the_skill(ctx: EvalContext) {
    ctx.offline(
        Script::new([])
            .turn(ScriptedTurn::text("ferris-cli 2.4.1 is out."))
            .turn(ScriptedTurn::tool_call(
                "skill",
                json!({"skill": "release-notes"}),
            ))
            .turn(ScriptedTurn::text(
                "SHIPPED-WITH-CARE\n- ferris-cli 2.4.1 is out.",
            )),
    );
    // Only the treatment's folder holds the skill.
    let baseline_dir = Side::Baseline.workdir(&ctx);
    let treatment_dir = Side::Treatment.workdir(&ctx);
    let skill = treatment_dir.join(".skills/release-notes");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: release-notes\ndescription: Writes release notes in the team's house style\n---\n\n\
         Every answer about a release starts with the tag line `SHIPPED-WITH-CARE` on its own line.\n",
    )
    .unwrap();
    let baseline = ctx.eval().working_directory(&baseline_dir).build().unwrap();
    let treatment = ctx
        .eval()
        .working_directory(&treatment_dir)
        .skill_directory(treatment_dir.join(".skills"))
        .build()
        .unwrap();

    let comparison = ctx
        .compare(
            &baseline,
            &treatment,
            "Announce version 2.4.1 of ferris-cli in one line.",
        )
        .await;
    let completed = comparison.check("completed", |result| result.success);
    let house_style = comparison.check("starts with the house tag line", |result| {
        result
            .final_response
            .as_deref()
            .unwrap_or_default()
            .starts_with("SHIPPED-WITH-CARE")
    });
    assert!(completed.both(), "{}", comparison.summary());
    assert!(house_style.improved(), "{}", comparison.summary());
    assert_eq!(
        comparison.differences().tools_only_in_treatment,
        ["skill"],
        "{}",
        comparison.summary()
    );
}

/// A comparison over trials (`cargo copilot-eval --trials 6`): the treatment is told the house
/// style, the baseline is not. A stochastic model, scripted: the baseline's reply starts with
/// the house tag line only in trial 1, the treatment's in every trial. Over 6 trials the report
/// gives each criterion's passes on each side, Fisher's exact test and a verdict: the tag line,
/// 1/6 against 6/6, is significant (p = 12/792 = 0.0152); `completed`, 6/6 on both sides, shows
/// no difference. The test asserts only that both sides completed, so every trial passes; the
/// comparison's verdict is the report's. Run once, both sides use the tag line.
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120)]
async fn compares_the_house_style_over_trials(ctx: EvalContext) {
    const TAGGED: &str = "SHIPPED-WITH-CARE\n- ferris-cli 2.4.1 is out.";
    let trial = ctx.trial().map_or(1, |t| t.trial);
    let baseline_reply = if trial == 1 {
        TAGGED
    } else {
        "ferris-cli 2.4.1 is out."
    };
    // One script serves both sides in order: the baseline's reply, then the treatment's.
    ctx.offline(
        Script::new([])
            .turn(ScriptedTurn::text(baseline_reply))
            .turn(ScriptedTurn::text(TAGGED)),
    );
    let baseline = ctx
        .eval()
        .working_directory(Side::Baseline.workdir(&ctx))
        .build()
        .unwrap();
    let treatment = ctx
        .eval()
        .working_directory(Side::Treatment.workdir(&ctx))
        .instructions(
            "Start every answer about a release with the tag line SHIPPED-WITH-CARE on its own line.",
        )
        .build()
        .unwrap();
    let comparison = ctx
        .compare(
            &baseline,
            &treatment,
            "Announce version 2.4.1 of ferris-cli in one line.",
        )
        .await;
    let completed = comparison.check("completed", |result| result.success);
    comparison.check("starts with the house tag line", |result| {
        result
            .final_response
            .as_deref()
            .unwrap_or_default()
            .starts_with("SHIPPED-WITH-CARE")
    });
    assert!(completed.both(), "{}", comparison.summary());
}

/// A catalog of two models: the custom agent `reviewer` (loaded from its `*.agent.md` file) runs
/// on its own model, answered by that
/// model's own script, while the main agent's script answers the eval's model. The requests each
/// model received show who asked what, and which tools the subagent was offered.
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120, max_tool_calls = 5)]
async fn reviews_with_an_agent_on_another_model(ctx: EvalContext) {
    ctx.offline(
        ScriptCatalog::new(
            Script::new([])
                .turn(ScriptedTurn::tool_call(
                    "task",
                    json!({"agent_type": "reviewer", "name": "reviewer",
                           "prompt": "Review: - faster startup", "description": "Review notes"}),
                ))
                .turn(ScriptedTurn::text("The reviewer says: LGTM.")),
        )
        .model(
            "claude-haiku-4.5",
            Script::new([]).turn(ScriptedTurn::text("LGTM.")),
        ),
    );
    // The agent file `agents/reviewer.agent.md` (relative to the package root): its id is the
    // file name's, `reviewer`, and its front matter puts it on `claude-haiku-4.5`.
    let eval = ctx
        .eval()
        .custom_agent_file("agents/reviewer.agent.md")
        .build()
        .unwrap();
    let result = ctx
        .run(&eval, "Have the reviewer check my release notes.")
        .await;
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);

    let review = &result.subagent_invocations[0];
    assert_eq!(review.model.as_deref(), Some("claude-haiku-4.5"));
    assert_eq!(review.final_response.as_deref(), Some("LGTM."));
    // What reached each model: the subagent's one request went to its own model.
    let requests = ctx.model_requests();
    let subagent: Vec<_> = requests.iter().filter(|r| r.is_subagent()).collect();
    assert_eq!(subagent.len(), 1, "{requests:#?}");
    assert_eq!(subagent[0].model.as_deref(), Some("claude-haiku-4.5"));
    assert!(subagent[0].mentions("Review: - faster startup"));
    ctx.record_property("subagent_tools", &subagent[0].tool_names);
}

/// What reached the model: a canary in a file the model never reads stays out of every model
/// request, while the eval's instructions reach it.
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120, max_tool_calls = 5)]
async fn keeps_the_canary_from_the_model(ctx: EvalContext) {
    std::fs::write(ctx.workdir().join(".env"), "API_KEY=CANARY-8c1f\n").unwrap();
    ctx.offline(Script::new([]).turn(ScriptedTurn::text("ferris-cli 2.4.1 is out.")));
    let eval = ctx
        .eval()
        .instructions("Keep announcements to one line.")
        .build()
        .unwrap();
    let result = ctx
        .run(&eval, "Announce version 2.4.1 of ferris-cli.")
        .await;
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);

    let requests = ctx.model_requests();
    assert_eq!(requests.len(), 1, "{requests:#?}");
    assert!(requests[0].mentions("Keep announcements to one line."));
    assert!(!requests.iter().any(|r| r.mentions("CANARY-8c1f")));
    ctx.record_property("model_requests", requests.len());
}

/// A pre-tool guard keeps the model out of the shell: the scripted model tries `bash`, the
/// guard denies it, the model reads the denial as the tool's result and answers. The session
/// completes; the denial is on the call.
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120, max_tool_calls = 5)]
async fn keeps_the_model_out_of_the_shell(ctx: EvalContext) {
    use copilot_eval_core::guard_fn;
    use copilot_eval_core::sdk::hooks::PreToolUseOutput;

    let marker = ctx.workdir().join("ran.txt");
    ctx.offline(
        Script::new([])
            .turn(ScriptedTurn::tool_call(
                "bash",
                json!({"command": format!("touch {}", marker.display()), "description": "Mark the run"}),
            ))
            .turn(ScriptedTurn::text("I may not use the shell here.")),
    );
    let eval = ctx
        .eval()
        .pre_tool_guard(guard_fn(|call| {
            Ok((call.tool_name == "bash").then(|| PreToolUseOutput {
                permission_decision: Some("deny".into()),
                permission_decision_reason: Some("no shell in this eval".into()),
                ..Default::default()
            }))
        }))
        .build()
        .unwrap();
    let result = ctx.run(&eval, "Mark this run with a file.").await;
    result.assert_success();

    // The one denied call is the shell's, with the guard's reason; it never ran.
    let denied = result.denied_calls();
    assert_eq!(denied.len(), 1, "{:#?}", result.tool_calls);
    assert_eq!(denied[0].name, "bash");
    let denial = result.denial_for("bash").expect("bash was denied");
    ctx.record_property("denial", &denial.reason);
    assert_eq!(denial.reason, "no shell in this eval");
    assert!(!marker.exists());
}
