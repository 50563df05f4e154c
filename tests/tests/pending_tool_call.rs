//! A run that ends on purpose at a tool call left pending (`end_at_tool_call`), and a resume
//! that continues it (`ctx.resume_with` with `continue_pending_work(true)`), through the real
//! runtime and a scripted loopback model: the first run's handler is never called and its
//! runtime is gone; the resumed run, in a fresh runtime from a copy of the first run's home,
//! runs the resumed eval's handler with the recorded arguments, the interrupted turn's next
//! model request carries its result, and the resumed prompt is answered after it; a plain
//! resume leaves the call to the runtime, which settles it as interrupted. Nothing
//! waits on the clock: each run waits for its session's events, bounded by an ample timeout.

use std::sync::{Arc, Mutex};

use copilot_eval_core::eval::CopilotEvalBuilder;
use copilot_eval_core::harness::{EvalContext, ResumeOptions, TestConfig};
use copilot_eval_core::model_server::{Script, ScriptedTurn};
use copilot_eval_core::sdk::Tool;
use copilot_eval_core::tools::function_tool;
use copilot_eval_core::{CopilotResult, StopReason};
use copilot_eval_e2e::{assert_no_runtime_left, runtime_for};
use serde_json::{Value, json};

const MODEL: &str = "claude-sonnet-4.5";
/// Ample for a runtime start and two turns on a loaded machine.
const TIMEOUT_S: f64 = 120.0;
const SHIPPED: &str = "ORDER_42_SHIPPED";

/// The `lookup_order` tool; each call's arguments are pushed to `calls`.
fn lookup(calls: Arc<Mutex<Vec<Value>>>) -> Tool {
    function_tool(
        "lookup_order",
        "Looks an order up by its number.",
        json!({"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]}),
        move |args| {
            let calls = calls.clone();
            async move {
                calls.lock().unwrap().push(args);
                Ok(SHIPPED.to_owned())
            }
        },
    )
}

/// The test `name`'s context, with a scripted model whose first turn calls `lookup_order` for
/// `order` and whose later turns answer `later`, and its first run: `lookup_order` (its
/// handler pushing to `calls`) with `end_at_tool_call`, asked to look `order` up. `None` when
/// the runtime is missing (and allowed to be).
async fn ended_at_lookup(
    name: &'static str,
    test_path: &'static str,
    order: &str,
    later: &[&str],
    calls: Arc<Mutex<Vec<Value>>>,
) -> Option<(EvalContext, CopilotResult)> {
    runtime_for(name)?;
    let ctx = EvalContext::new(TestConfig::new(name, test_path, env!("CARGO_MANIFEST_DIR")));
    let script = later.iter().fold(
        Script::new([]).turn(ScriptedTurn::tool_call(
            "lookup_order",
            json!({"order": order}),
        )),
        |script, text| script.turn(ScriptedTurn::text(*text)),
    );
    ctx.offline(script);
    let ending = eval(&ctx, Some(lookup(calls)))
        .end_at_tool_call("lookup_order")
        .build()
        .unwrap();
    let first = ctx.run(&ending, format!("Look order {order} up.")).await;
    assert_eq!(
        first.stop_reason,
        StopReason::PendingToolCall,
        "{:?}",
        first.error
    );
    Some((ctx, first))
}

/// The test's eval, with `tool` when given.
fn eval(ctx: &EvalContext, tool: Option<Tool>) -> CopilotEvalBuilder {
    let builder = ctx.eval().model(MODEL).timeout_s(TIMEOUT_S);
    match tool {
        Some(tool) => builder.tool(tool),
        None => builder,
    }
}

#[tokio::test]
async fn a_run_ends_at_a_pending_tool_call_and_a_resume_continues_it() {
    let first_calls = Arc::new(Mutex::new(Vec::new()));
    let Some((ctx, first)) = ended_at_lookup(
        "a_run_ends_at_a_pending_tool_call_and_a_resume_continues_it",
        "pending_tool_call::a_run_ends_at_a_pending_tool_call_and_a_resume_continues_it",
        "42",
        &["Order 42 has shipped.", "Nothing else is open."],
        first_calls.clone(),
    )
    .await
    else {
        return;
    };
    assert!(first.success, "{:?}", first.error);
    assert_eq!(first.error, None);
    assert!(
        first_calls.lock().unwrap().is_empty(),
        "the ending run's own handler was called"
    );
    let last = first.tool_calls.last().expect("the pending call");
    assert_eq!(last.name, "lookup_order");
    assert_eq!(last.arguments, json!({"order": "42"}));
    assert_eq!(last.result, None, "the pending call has no result");
    assert!(!last.completed);
    assert_no_runtime_left(&first);
    let requests_before = ctx.model_requests().len();

    let calls = Arc::new(Mutex::new(Vec::new()));
    let eval = eval(&ctx, Some(lookup(calls.clone()))).build().unwrap();
    let options = ResumeOptions::default().continue_pending_work(true);
    let continued = ctx
        .resume_with(&eval, &first, ["Anything else open?"], options)
        .await;
    assert_eq!(
        continued.stop_reason,
        StopReason::Completed,
        "{:?}",
        continued.error
    );
    assert!(continued.resumed);
    assert_eq!(*calls.lock().unwrap(), [json!({"order": "42"})]);
    assert_eq!(
        continued.final_response.as_deref(),
        Some("Nothing else is open.")
    );
    // The interrupted turn's next request carries the handler's result for the first run's
    // call; the resumed prompt's request comes after it, with the turn's answer as history.
    let requests = ctx.model_requests();
    let resumed = &requests[requests_before..];
    assert_eq!(
        resumed.len(),
        2,
        "the continued turn's request, then the prompt's"
    );
    let last_message = resumed[0].messages.last().expect("a message");
    assert_eq!(last_message["role"], "tool");
    assert_eq!(last_message["tool_call_id"], last.id.as_str());
    assert_eq!(last_message["content"], SHIPPED);
    let prompt = resumed[1].messages.last().expect("a message");
    assert!(
        prompt["content"]
            .to_string()
            .contains("Anything else open?"),
        "{prompt}"
    );
    assert!(
        resumed[1]
            .messages
            .iter()
            .any(|m| m["content"] == "Order 42 has shipped."),
        "the continued turn's answer is history of the prompt's request"
    );
    assert_no_runtime_left(&continued);
}

/// A resumed eval without a handler for the pending call's tool is a named execution error.
#[tokio::test]
async fn continuing_a_pending_call_without_its_tool_names_the_fix() {
    let Some((ctx, first)) = ended_at_lookup(
        "continuing_a_pending_call_without_its_tool_names_the_fix",
        "pending_tool_call::continuing_a_pending_call_without_its_tool_names_the_fix",
        "7",
        &["unused"],
        Arc::default(),
    )
    .await
    else {
        return;
    };
    let without_tool = eval(&ctx, None).build().unwrap();
    let options = ResumeOptions::default().continue_pending_work(true);
    let resumed = ctx
        .resume_with(&without_tool, &first, ["Go on."], options)
        .await;
    assert_eq!(resumed.stop_reason, StopReason::ExecutionError);
    let error = resumed.error.as_deref().unwrap_or_default();
    assert!(
        error.contains("`lookup_order`") && error.contains("give the resumed eval the tool"),
        "{error}"
    );
    assert_no_runtime_left(&resumed);
}

/// Without `continue_pending_work`, the runtime settles the pending call itself as interrupted:
/// the resumed eval's handler is not called, the prompt's model request carries the runtime's
/// "interrupted" tool message for the first run's call, and the prompt is answered.
#[tokio::test]
async fn a_plain_resume_leaves_the_pending_call_interrupted() {
    let Some((ctx, first)) = ended_at_lookup(
        "a_plain_resume_leaves_the_pending_call_interrupted",
        "pending_tool_call::a_plain_resume_leaves_the_pending_call_interrupted",
        "7",
        &["I will check order 7 again."],
        Arc::default(),
    )
    .await
    else {
        return;
    };
    let call_id = first
        .tool_calls
        .last()
        .expect("the pending call")
        .id
        .clone();
    let requests_before = ctx.model_requests().len();
    let calls = Arc::new(Mutex::new(Vec::new()));
    let eval = eval(&ctx, Some(lookup(calls.clone()))).build().unwrap();
    let resumed = ctx.resume(&eval, &first, "Go on.").await;
    assert_eq!(
        resumed.stop_reason,
        StopReason::Completed,
        "{:?}",
        resumed.error
    );
    assert!(
        calls.lock().unwrap().is_empty(),
        "the handler ran without continue_pending_work"
    );
    let requests = ctx.model_requests();
    let resumed_requests = &requests[requests_before..];
    assert_eq!(resumed_requests.len(), 1, "only the prompt's request");
    let tool_message = resumed_requests[0]
        .messages
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id.as_str())
        .expect("the first run's call settled in the history");
    assert!(
        tool_message["content"].to_string().contains("interrupted"),
        "{tool_message}"
    );
    assert_eq!(
        resumed.final_response.as_deref(),
        Some("I will check order 7 again.")
    );
    assert_no_runtime_left(&resumed);
}
