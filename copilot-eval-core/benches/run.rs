//! Benchmark of one scripted 2-turn eval through the real runtime, offline.
//!
//! `cargo bench -p copilot-eval-core --bench run` prints, per sample: the whole-run wall time,
//! the runtime's startup phases (as the SDK measures them), session creation, the turns and the
//! cleanup; then the host process's peak resident memory (VmHWM). The first sample also warms
//! the shared runtime cache. It needs the runtime (`cargo copilot-eval runtime install`).

use std::sync::Arc;
use std::time::Instant;

use copilot_eval_core::model_server::{ModelServer, Script, ScriptedTurn, ServerConfig};
use copilot_eval_core::tools::function_tool;
use copilot_eval_core::{CopilotEval, RunOptions, run_with};
use serde_json::json;

const SAMPLES: usize = 5;

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

#[tokio::main]
async fn main() {
    let runtime = match copilot_eval_core::runtime::resolve() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("bench needs the runtime: {e}");
            std::process::exit(2);
        }
    };
    println!("runtime: {}", runtime.path.display());
    println!(
        "sample  whole_ms  start_ms  (spawn  transport  handshake)  create_ms  turns_ms  cleanup_ms"
    );
    let mut wholes = Vec::new();
    for sample in 0..=SAMPLES {
        let work = tempfile::tempdir().unwrap();
        let script = Script::new([])
            .turn(ScriptedTurn::tool_call("echo", json!({"text": "ping"})))
            .turn(ScriptedTurn::text("pong"));
        let server =
            ModelServer::start(ServerConfig::new(Arc::new(script)).model("claude-sonnet-4.5"))
                .await
                .unwrap();
        let eval = CopilotEval::builder()
            .model("claude-sonnet-4.5")
            .working_directory(work.path())
            .timeout_s(120.0)
            .tool(function_tool(
                "echo",
                "Echo text back.",
                json!({"type": "object", "properties": {"text": {"type": "string"}}}),
                |args| async move { Ok(args["text"].as_str().unwrap_or_default().to_owned()) },
            ))
            .build()
            .unwrap();
        let t = Instant::now();
        let result = run_with(
            &eval,
            "Echo ping.",
            &RunOptions::offline(server.base_url()).runtime_path(&runtime.path),
        )
        .await;
        let whole = t.elapsed().as_millis();
        assert!(result.success, "bench run failed: {:?}", result.error);
        let s = result.timings.runtime_startup.clone();
        let label = if sample == 0 {
            "warm-up".to_owned()
        } else {
            sample.to_string()
        };
        println!(
            "{label:>7}  {whole:>8}  {:>8}  ({:>5}  {:>9}  {:>9})  {:>9}  {:>8}  {:>10}",
            result.timings.runtime_start_ms.unwrap_or(0),
            s.as_ref().and_then(|s| s.process_spawn_ms).unwrap_or(0),
            s.as_ref().map(|s| s.transport_setup_ms).unwrap_or(0),
            s.as_ref().map(|s| s.handshake_ms).unwrap_or(0),
            result.timings.create_session_ms.unwrap_or(0),
            result.timings.turns_ms.unwrap_or(0),
            result.timings.cleanup_ms,
        );
        if sample > 0 {
            wholes.push(whole);
        }
    }
    wholes.sort();
    println!(
        "whole-run wall time over {SAMPLES} samples: min {} ms, median {} ms, max {} ms",
        wholes[0],
        wholes[SAMPLES / 2],
        wholes[SAMPLES - 1]
    );
    if let Some(kib) = peak_rss_kib() {
        println!(
            "host process peak RSS (VmHWM): {:.1} MiB",
            kib as f64 / 1024.0
        );
    }
}
