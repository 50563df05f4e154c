//! Judges with a scripted model: a rubric judge beside an independent check of the real
//! output, a pairwise judge in both orders, and a judge whose answer is not the JSON asked for.
//!
//! A judge is a separate real Copilot session (its own working directory, no tools), one more
//! run of the test labelled `judge`: the script given to `ctx.offline` serves it too, so the
//! judge's answer is the script's reply after the judged run's. Its verdicts, reasons and cost
//! are in the test's `judges` in every report.
//!
//! ```sh
//! cargo copilot-eval -p scripted --exact judges_the_release_notes --json results/judges.json
//! ```

use copilot_eval_core::copilot_eval;
use copilot_eval_core::harness::EvalContext;
use copilot_eval_core::harness::judge::{JudgeError, Material, Rubric};
use copilot_eval_core::model_server::{Script, ScriptedTurn, ScriptedUsage};
use copilot_eval_core::report::JudgeVerdict;
use serde_json::json;

fn usage(input_tokens: u64, output_tokens: u64) -> ScriptedUsage {
    ScriptedUsage {
        input_tokens,
        output_tokens,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
    }
}

/// A judge's answer as the judge prompt asks for it: one entry per criterion.
fn answer(entries: serde_json::Value) -> ScriptedTurn {
    ScriptedTurn::text(json!({ "criteria": entries }).to_string()).with_usage(usage(900, 60))
}

/// A rubric judge of the file the agent wrote, beside an independent check of that file. Run
/// in trials (`cargo copilot-eval --trials 3`), the judge finds the notes unclear in trial 2,
/// so the trial summary gives `clear` 2/3 and `names the version` 3/3; the test asserts only
/// what the file says and the judge's `names the version`, so every trial passes.
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120, max_tool_calls = 5)]
async fn judges_the_release_notes(ctx: EvalContext) {
    let notes = ctx.workdir().join("NOTES.md");
    let unclear = ctx.trial().is_some_and(|t| t.trial == 2);
    ctx.offline(
        Script::new([])
            .turn(ScriptedTurn::tool_call(
                "create",
                json!({"path": notes.to_str().unwrap(), "file_text": "# ferris-cli 2.4.1\n\n- Faster startup.\n"}),
            ).with_usage(usage(5000, 40)))
            .turn(ScriptedTurn::text("Wrote NOTES.md.").with_usage(usage(5100, 5)))
            // The judge session's answer.
            .turn(answer(json!([
                {"name": "names the version", "verdict": "pass", "score": null,
                 "reason": "The heading names 2.4.1."},
                {"name": "clear", "verdict": if unclear { "fail" } else { "pass" },
                 "score": if unclear { 2 } else { 4 },
                 "reason": if unclear { "Too terse to follow." } else { "One short, plain line." }},
            ]))),
    );
    let eval = ctx.eval().build().unwrap();
    let result = ctx
        .run(
            &eval,
            "Write release notes for ferris-cli 2.4.1 in NOTES.md.",
        )
        .await;
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);

    // The independent check: what the agent really wrote.
    let written = std::fs::read_to_string(&notes).unwrap();
    assert!(written.contains("2.4.1"), "{written}");

    // The judge: a model's statement about the same file.
    let rubric = Rubric::new(Material::Files(vec!["NOTES.md".into()]))
        .criterion("names the version", "The notes name the released version.")
        .scored("clear", "The notes are short and plain.", 1, 5);
    let judgement = ctx.judge(&result, &rubric).await.unwrap();
    assert!(
        judgement.passed("names the version"),
        "{}",
        judgement.summary()
    );

    // The judge session had no tools, and read the file's content.
    let request = ctx.model_requests().pop().expect("the judge's request");
    assert!(request.tool_names.is_empty(), "{:?}", request.tool_names);
    assert!(request.mentions("--- file NOTES.md ---\n# ferris-cli 2.4.1"));
}

/// A pairwise judge: two answers, each judged in both orders. The first judge prefers the
/// detailed answer whichever position it is in (`a`); the second prefers whatever it reads
/// first, so its two orders disagree and it reports `inconsistent`, never a preference.
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120)]
async fn prefers_an_answer_in_both_orders(ctx: EvalContext) {
    let said = |verdict: &str, reason: &str| {
        answer(json!([{"name": "informative", "verdict": verdict, "reason": reason}]))
    };
    ctx.offline(
        Script::new([])
            .turn(ScriptedTurn::text(
                "ferris-cli 2.4.1 is out: startup is twice as fast.",
            ))
            .turn(ScriptedTurn::text("New version."))
            // A consistent judge: answer 1 is the detailed one in order a_b, answer 2 in b_a.
            .turn(said("1", "Answer 1 says what changed."))
            .turn(said("2", "Answer 2 says what changed."))
            // A judge that prefers the first answer it reads, in both orders.
            .turn(said("1", "Answer 1 comes first."))
            .turn(said("1", "Answer 1 comes first.")),
    );
    let eval = ctx.eval().build().unwrap();
    let detailed = ctx
        .run(&eval, "Announce ferris-cli 2.4.1 in one line.")
        .await;
    let terse = ctx
        .run(&eval, "Announce ferris-cli 2.4.1 in one line.")
        .await;
    assert!(detailed.success && terse.success);

    let rubric = Rubric::new(Material::FinalResponse).criterion(
        "informative",
        "The answer says what changed in the release.",
    );
    let consistent = ctx.judge_pair(&detailed, &terse, &rubric).await.unwrap();
    assert_eq!(
        consistent.verdict("informative"),
        Some(JudgeVerdict::A),
        "{}",
        consistent.summary()
    );
    // The two orders: the swap puts the terse answer first.
    let requests = ctx.model_requests();
    let (a_b, b_a) = (&requests[2], &requests[3]);
    assert!(a_b.mentions("Answer 1:\n--- final response ---\nferris-cli 2.4.1 is out"));
    assert!(b_a.mentions("Answer 1:\n--- final response ---\nNew version."));
    let positional = ctx.judge_pair(&detailed, &terse, &rubric).await.unwrap();
    assert_eq!(
        positional.verdict("informative"),
        Some(JudgeVerdict::Inconsistent),
        "{}",
        positional.summary()
    );
}

/// A judge you can measure: `samples(3)` judges the same answer three times, three judge
/// sessions. The scripted judge says `pass`, `fail`, `pass`: it disagrees with itself once, so
/// the verdict is the majority, `pass`, with 2/3 agreement (in the reports: `names the version:
/// pass (2/3 samples agree)`).
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120)]
async fn a_judge_sampled_three_times_reports_its_agreement(ctx: EvalContext) {
    let said = |verdict: &str, reason: &str| {
        answer(
            json!([{"name": "names the version", "verdict": verdict, "score": null,
                       "reason": reason}]),
        )
    };
    ctx.offline(
        Script::new([])
            .turn(ScriptedTurn::text("ferris-cli 2.4.1 is out."))
            .turn(said("pass", "It names 2.4.1."))
            .turn(said("fail", "No version is named."))
            .turn(said("pass", "2.4.1 is there.")),
    );
    let eval = ctx.eval().build().unwrap();
    let result = ctx
        .run(&eval, "Announce ferris-cli 2.4.1 in one line.")
        .await;
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);
    let rubric = Rubric::new(Material::FinalResponse)
        .criterion("names the version", "The answer names the version.")
        .samples(3);
    let judgement = ctx.judge(&result, &rubric).await.unwrap();
    assert_eq!(
        judgement.verdict("names the version"),
        Some(JudgeVerdict::Pass),
        "{}",
        judgement.summary()
    );
    let agreement = judgement.record.verdicts[0].agreement.expect("sampled");
    assert_eq!((agreement.agreeing, agreement.samples), (2, 3));
    assert_eq!(judgement.record.sessions.len(), 3);
    // The same prompt, three times (after the runtime's `<current_datetime>` line, which
    // changes from session to session).
    let requests = ctx.model_requests();
    assert_eq!(requests.len(), 4);
    let prompt = |n: usize| {
        let text = requests[n]
            .last_user_text()
            .as_deref()
            .unwrap_or_default()
            .to_owned();
        match text.split_once("</current_datetime>") {
            Some((_, rest)) => rest.to_owned(),
            None => text,
        }
    };
    assert!(prompt(1).contains("Rubric:"), "{}", prompt(1));
    assert_eq!(prompt(1), prompt(2));
    assert_eq!(prompt(1), prompt(3));
}

/// A judge whose answer is prose, not the JSON asked for: `ctx.judge` returns an error naming
/// the criterion, recorded as the judge's `error` in the reports; never a pass.
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120)]
async fn a_judge_answer_that_is_not_json_is_an_error(ctx: EvalContext) {
    ctx.offline(
        Script::new([])
            .turn(ScriptedTurn::text("ferris-cli 2.4.1 is out."))
            .turn(ScriptedTurn::text("Looks great to me!")),
    );
    let eval = ctx.eval().build().unwrap();
    let result = ctx
        .run(&eval, "Announce ferris-cli 2.4.1 in one line.")
        .await;
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);
    let rubric = Rubric::new(Material::FinalResponse)
        .criterion("names the version", "The answer names the version.");
    let error = ctx.judge(&result, &rubric).await.unwrap_err();
    assert!(
        matches!(&error, JudgeError::NotJson { criterion, .. } if criterion == "names the version"),
        "{error}"
    );
}

/// A judge that fails to answer in one trial: run in trials (`cargo copilot-eval --trials 3`),
/// the judge's answer in trial 2 is prose, a judge error. The trial summary keeps it apart from
/// the pass rate: `names the version` passed 2 of the 2 trials judged, with 1 judge error (not
/// 2 of 3). The test asserts the answer itself and what the judge returned, so every trial
/// passes.
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120)]
async fn grades_the_notes_while_one_answer_is_broken(ctx: EvalContext) {
    let broken = ctx.trial().is_some_and(|t| t.trial == 2);
    let judge_answer = if broken {
        ScriptedTurn::text("The notes look fine to me.")
    } else {
        answer(
            json!([{"name": "names the version", "verdict": "pass", "score": null,
                       "reason": "It names 2.4.1."}]),
        )
    };
    ctx.offline(
        Script::new([])
            .turn(ScriptedTurn::text("ferris-cli 2.4.1 is out."))
            .turn(judge_answer),
    );
    let eval = ctx.eval().build().unwrap();
    let result = ctx
        .run(&eval, "Announce ferris-cli 2.4.1 in one line.")
        .await;
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);
    assert!(
        result
            .final_response
            .as_deref()
            .unwrap_or_default()
            .contains("2.4.1")
    );
    let rubric = Rubric::new(Material::FinalResponse)
        .criterion("names the version", "The answer names the version.");
    match ctx.judge(&result, &rubric).await {
        Ok(judgement) => assert!(judgement.passed("names the version")),
        Err(error) => assert!(broken, "{error}"),
    }
}
