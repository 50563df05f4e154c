//! skill-creator's `benchmark.json` of a suite run with `--ablate skills` (`cargo copilot-eval
//! --benchmark PATH`), so that skill-creator's viewer reads our runs: each trial of each eval
//! with an ablated side as a run of configuration `with_skill` or `without_skill`, and the
//! mean, standard deviation, minimum and maximum of each configuration's pass rate, time and
//! tokens, with their difference.

use serde_json::{Value, json};

use super::{Outcome, SuiteReport, TestRecord};

/// One run's figures as skill-creator's `result` holds them.
struct RunFigures {
    pass_rate: f64,
    time_seconds: f64,
    tokens: Option<u64>,
}

/// The `result` of one record: its expectations' verdicts (`passed`, `failed`, `total`,
/// `pass_rate`), or without any its outcome as one (a passing test 1 of 1); `time_seconds` of
/// its process; `tokens` (input plus output; `null` when unknown), `tool_calls` and `errors`
/// (tool calls that failed or were denied) over its runs.
fn result_of(test: &TestRecord) -> (Value, RunFigures) {
    let (passed, total) = match test.expectations.len() {
        0 => (usize::from(test.outcome == Outcome::Passed), 1),
        total => (test.expectations.iter().filter(|x| x.passed).count(), total),
    };
    let pass_rate = passed as f64 / total as f64;
    let calls = test.runs.iter().flat_map(|run| &run.tool_calls);
    let errors = calls
        .clone()
        .filter(|call| call.success == Some(false) || call.denied.is_some())
        .count();
    let tokens = test
        .cost
        .as_ref()
        .filter(|cost| cost.usage_unknown_runs == 0)
        .map(|cost| cost.input_tokens + cost.output_tokens);
    let time_seconds = test.duration_ms as f64 / 1000.0;
    let value = json!({
        "pass_rate": pass_rate,
        "passed": passed,
        "failed": total - passed,
        "total": total,
        "time_seconds": time_seconds,
        "tokens": tokens,
        "tool_calls": calls.count(),
        "errors": errors,
    });
    (
        value,
        RunFigures {
            pass_rate,
            time_seconds,
            tokens,
        },
    )
}

/// `{mean, stddev, min, max}` of `values` (the sample standard deviation, 0 for one value);
/// every figure `null` when there is none.
fn spread(values: &[f64]) -> Value {
    if values.is_empty() {
        return json!({"mean": null, "stddev": null, "min": null, "max": null});
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let stddev = match values.len() {
        1 => 0.0,
        _ => (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt(),
    };
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    json!({"mean": mean, "stddev": stddev, "min": min, "max": max})
}

/// A signed difference as skill-creator writes its `delta`: `+0.50`, `-1.2`, `+1700`; `null`
/// when a side has no value.
fn delta(with: &Value, without: &Value, decimals: usize) -> Value {
    match (with["mean"].as_f64(), without["mean"].as_f64()) {
        (Some(a), Some(b)) => Value::String(format!("{:+.decimals$}", a - b)),
        _ => Value::Null,
    }
}

/// The `benchmark.json` of `report`: `None` when it has no skill lift (no `--ablate`).
///
/// - `metadata`: `skill_name` and `skill_path` (the skills the evals name, joined with `, `),
///   `executor_model` (the first run's model), `timestamp` (the suite's start), `evals_run`
///   (each eval's entry id, else its name), `runs_per_configuration` (the most trials of an
///   eval), and `generator` (`copilot-eval <version>`);
/// - `runs[]`: per trial of each eval with an ablated side, `eval_id`, `eval_name`,
///   `configuration` (`with_skill`, or `without_skill` for the ablated side), `run_number`
///   (the trial, from 1), `result` (`pass_rate`, `passed`, `failed`, `total` over its expectations, else its outcome; `time_seconds`, `tokens`, `tool_calls`, `errors`), `expectations` and `notes` (the test's
///   message when it did not pass);
/// - `run_summary`: `with_skill` and `without_skill` each `{pass_rate, time_seconds, tokens}`
///   as `{mean, stddev, min, max}` over their runs (tokens over the runs whose tokens are
///   known), and `delta` (with minus without, signed text).
pub fn benchmark_json(report: &SuiteReport) -> Option<Value> {
    let lift = report.skill_lift.as_ref()?;
    let mut runs = Vec::new();
    let mut figures: [Vec<RunFigures>; 2] = [Vec::new(), Vec::new()];
    let mut evals_run = Vec::new();
    let mut runs_per_configuration = 0u32;
    for eval in &lift.evals {
        let ablated = super::lift::ablated_name(&eval.eval, &eval.ablated);
        let records = report.tests.iter().filter(|t| t.binary == eval.binary);
        let mut id = Value::String(eval.eval.clone());
        for test in records {
            let side = match (test.name == eval.eval, test.name == ablated) {
                (true, _) => 0,
                (_, true) => 1,
                _ => continue,
            };
            if let Some(entry) = &test.skill_eval {
                id = entry
                    .id
                    .parse::<u64>()
                    .map_or_else(|_| Value::String(entry.id.clone()), Value::from);
            }
            let run_number = test.trial.map_or(1, |t| t.trial);
            runs_per_configuration = runs_per_configuration.max(run_number);
            let (result, run) = result_of(test);
            figures[side].push(run);
            let configuration = ["with_skill", "without_skill"][side];
            runs.push(json!({
                "eval_id": id,
                "eval_name": eval.eval,
                "configuration": configuration,
                "run_number": run_number,
                "result": result,
                "expectations": test.expectations,
                "notes": test
                    .message
                    .iter()
                    .filter(|_| test.outcome != Outcome::Passed)
                    .collect::<Vec<_>>(),
            }));
        }
        evals_run.push(id);
    }
    let summary = |runs: &[RunFigures]| {
        let rates: Vec<f64> = runs.iter().map(|r| r.pass_rate).collect();
        let times: Vec<f64> = runs.iter().map(|r| r.time_seconds).collect();
        let tokens: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.tokens)
            .map(|t| t as f64)
            .collect();
        json!({"pass_rate": spread(&rates), "time_seconds": spread(&times), "tokens": spread(&tokens)})
    };
    let (with, without) = (summary(&figures[0]), summary(&figures[1]));
    let delta = json!({
        "pass_rate": delta(&with["pass_rate"], &without["pass_rate"], 2),
        "time_seconds": delta(&with["time_seconds"], &without["time_seconds"], 1),
        "tokens": delta(&with["tokens"], &without["tokens"], 0),
    });
    let mut skills: Vec<&str> = Vec::new();
    for skill in lift.evals.iter().filter_map(|e| e.skill.as_deref()) {
        if !skills.contains(&skill) {
            skills.push(skill);
        }
    }
    let skill_name: Vec<&str> = skills
        .iter()
        .map(|s| s.rsplit('/').next().unwrap_or(s))
        .collect();
    let model = (report.tests.iter())
        .flat_map(|t| &t.runs)
        .find_map(|r| r.model_used.clone().or_else(|| r.model_requested.clone()));
    Some(json!({
        "metadata": {
            "skill_name": skill_name.join(", "),
            "skill_path": skills.join(", "),
            "executor_model": model,
            "timestamp": report.started_at,
            "evals_run": evals_run,
            "runs_per_configuration": runs_per_configuration,
            "generator": format!("{} {}", report.tool.name, report.tool.version),
        },
        "runs": runs,
        "run_summary": {
            "with_skill": with,
            "without_skill": without,
            "delta": delta,
        },
        "notes": [],
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_gives_mean_sample_stddev_min_and_max() {
        let s = spread(&[1.0, 0.0, 0.5]);
        assert_eq!(s["mean"], 0.5);
        assert_eq!(s["stddev"], 0.5);
        assert_eq!(
            (s["min"].as_f64(), s["max"].as_f64()),
            (Some(0.0), Some(1.0))
        );
        assert_eq!(spread(&[2.0])["stddev"], 0.0);
        assert!(spread(&[])["mean"].is_null());
        let with = spread(&[1.0, 1.0]);
        let without = spread(&[0.5, 0.5]);
        assert_eq!(delta(&with, &without, 2), "+0.50");
        assert_eq!(delta(&spread(&[1700.0]), &spread(&[0.0]), 0), "+1700");
    }
}
