//! What the request audit costs.
//!
//! `cargo bench -p copilot-eval-core --bench audit` prints:
//! 1. the in-process cost of auditing one real model request (the request bodies the runtime
//!    sent in a scripted run, inspected and re-serialised many times): median and p95 per request;
//! 2. end to end through the real runtime, offline, streaming (SSE): the same 6-request scripted
//!    eval with the audit off and on, several times each: the per-request model-call time and the
//!    time to first token as the runtime measured them (`assistant.usage` `duration` and
//!    `outputTtftMs`), median and p95, and the difference.
//!
//! It needs the runtime (`cargo copilot-eval runtime install`).

use std::sync::Arc;
use std::time::Instant;

use copilot_eval_core::model_server::{ModelServer, Script, ScriptedTurn, ServerConfig};
use copilot_eval_core::run::proxy::audit::{RequestOrigin, inspect_http};
use copilot_eval_core::tools::function_tool;
use copilot_eval_core::wire::Route;
use copilot_eval_core::{CopilotEval, RunOptions, run_with};
use serde_json::{Value, json};

const MODEL: &str = "claude-sonnet-4.5";
const RUNS: usize = 5;

fn percentile(values: &mut [f64], p: f64) -> f64 {
    values.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let i = ((values.len() as f64 - 1.0) * p).round() as usize;
    values[i]
}

async fn scripted_run(audit: bool, runtime: &std::path::Path) -> (Vec<f64>, Vec<f64>, Vec<Value>) {
    let work = tempfile::tempdir().unwrap();
    let mut script = Script::new([]);
    for i in 0..5 {
        script = script.turn(ScriptedTurn::tool_call(
            "echo",
            json!({"text": format!("t{i}")}),
        ));
    }
    script = script.turn(ScriptedTurn::text("All echoed. ".repeat(40)));
    let server = ModelServer::start(ServerConfig::new(Arc::new(script)).model(MODEL))
        .await
        .unwrap();
    let eval = CopilotEval::builder()
        .model(MODEL)
        .working_directory(work.path())
        .streaming(true)
        .audit_requests(audit)
        .timeout_s(120.0)
        .tool(function_tool(
            "echo",
            "Echo text.",
            json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            |args| async move { Ok(args["text"].as_str().unwrap_or_default().to_owned()) },
        ))
        .build()
        .unwrap();
    let result = run_with(
        &eval,
        "Echo five times.",
        &RunOptions::offline(server.base_url()).runtime_path(runtime),
    )
    .await;
    assert!(result.success, "bench run failed: {:?}", result.error);
    let mut durations = Vec::new();
    let mut ttft = Vec::new();
    for event in result
        .raw_events
        .iter()
        .filter(|e| e.event_type == "assistant.usage")
    {
        if let Some(d) = event.data.get("duration").and_then(Value::as_f64) {
            durations.push(d);
        }
        if let Some(t) = event.data.get("outputTtftMs").and_then(Value::as_f64) {
            ttft.push(t);
        }
    }
    let bodies = server
        .model_requests()
        .into_iter()
        .map(|r| r.body)
        .collect();
    (durations, ttft, bodies)
}

#[tokio::main]
async fn main() {
    let runtime = match copilot_eval_core::runtime::resolve() {
        Ok(r) => r.path,
        Err(e) => {
            eprintln!("bench needs the runtime: {e}");
            std::process::exit(2);
        }
    };
    // Warm the runtime cache.
    let (_, _, bodies) = scripted_run(false, &runtime).await;

    // 1. In-process cost per request.
    let origin = RequestOrigin::default();
    let raw: Vec<Vec<u8>> = bodies
        .iter()
        .map(|b| serde_json::to_vec(b).unwrap())
        .collect();
    let mut per_request_us = Vec::new();
    for _ in 0..200 {
        for body in &raw {
            let t = Instant::now();
            inspect_http(
                Route::of("POST", "/chat/completions"),
                "POST",
                "/chat/completions",
                None,
                body,
                None,
                &origin,
            )
            .unwrap();
            per_request_us.push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    let sizes: Vec<usize> = raw.iter().map(Vec::len).collect();
    println!(
        "audit of one request in process ({} real bodies of {}..{} bytes, {} samples): median {:.0} µs, p95 {:.0} µs",
        raw.len(),
        sizes.iter().min().unwrap(),
        sizes.iter().max().unwrap(),
        per_request_us.len(),
        percentile(&mut per_request_us.clone(), 0.5),
        percentile(&mut per_request_us, 0.95),
    );

    // 2. End to end, audit off vs on.
    let mut table = Vec::new();
    for audit in [false, true] {
        let mut durations = Vec::new();
        let mut ttft = Vec::new();
        for _ in 0..RUNS {
            let (d, t, _) = scripted_run(audit, &runtime).await;
            durations.extend(d);
            ttft.extend(t);
        }
        let row = (
            percentile(&mut durations.clone(), 0.5),
            percentile(&mut durations, 0.95),
            if ttft.is_empty() {
                f64::NAN
            } else {
                percentile(&mut ttft.clone(), 0.5)
            },
            if ttft.is_empty() {
                f64::NAN
            } else {
                percentile(&mut ttft, 0.95)
            },
        );
        println!(
            "audit {:<3}: model call (assistant.usage duration) median {:.1} ms, p95 {:.1} ms; time to first token (outputTtftMs) median {:.1} ms, p95 {:.1} ms   [{RUNS} runs x 6 requests]",
            if audit { "on" } else { "off" },
            row.0,
            row.1,
            row.2,
            row.3
        );
        table.push(row);
    }
    println!(
        "added by the audit: model call median {:+.1} ms, p95 {:+.1} ms; first token median {:+.1} ms, p95 {:+.1} ms",
        table[1].0 - table[0].0,
        table[1].1 - table[0].1,
        table[1].2 - table[0].2,
        table[1].3 - table[0].3,
    );
}
