//! `cargo copilot-eval doctor`: exit statuses, the line format and the `--json` shape of the real
//! binary, against the loopback model server (the hidden `--offline-base-url` option) so that
//! nothing goes to GitHub.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use copilot_eval_core::model_server::{ModelServer, Script, ServerConfig};
use serde_json::Value;

struct Output {
    status: i32,
    stdout: String,
    stderr: String,
}

fn doctor(args: &[&str], env: &[(&str, &str)]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_cargo-copilot-eval"))
        .args(["copilot-eval", "doctor"])
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    Output {
        status: output.status.code().unwrap(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// The loopback server with two catalog models, on a runtime that outlives the command.
fn server() -> (tokio::runtime::Runtime, ModelServer) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let server = rt
        .block_on(ModelServer::start(
            ServerConfig::new(Arc::new(Script::new([])))
                .model("claude-sonnet-4.5")
                .model("gpt-test"),
        ))
        .unwrap();
    (rt, server)
}

/// Every check of the JSON form has exactly `name`, `status`, `detail`, `fix`.
fn checks(json: &Value) -> Vec<(String, String)> {
    let checks = json["checks"].as_array().expect("checks is an array");
    assert!(!checks.is_empty());
    checks
        .iter()
        .map(|c| {
            let keys: Vec<&str> = c.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(keys.len(), 4, "{c}");
            for key in ["name", "status", "detail", "fix"] {
                assert!(keys.contains(&key), "{key} missing in {c}");
            }
            let status = c["status"].as_str().unwrap().to_owned();
            assert!(["ok", "warn", "fail"].contains(&status.as_str()), "{c}");
            assert!(c["detail"].is_string(), "{c}");
            if status == "ok" {
                assert!(c["fix"].is_null(), "{c}");
            }
            (c["name"].as_str().unwrap().to_owned(), status)
        })
        .collect()
}

#[test]
fn without_a_runtime_doctor_fails_with_a_fix_exit_1() {
    let missing = Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-such-copilot");
    let env = [("COPILOT_EVAL_RUNTIME_PATH", missing.to_str().unwrap())];
    let args = ["--offline-base-url", "http://127.0.0.1:9"];

    let out = doctor(&args, &env);
    assert_eq!(out.status, 1, "{}{}", out.stdout, out.stderr);
    let runtime_line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("fail  runtime "))
        .unwrap_or_else(|| panic!("no failed runtime line:\n{}", out.stdout));
    assert!(runtime_line.contains("no-such-copilot"), "{runtime_line}");
    assert!(
        out.stdout
            .contains("      fix: run `cargo copilot-eval runtime install`"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.starts_with("doctor: ") && out.stderr.contains(" 1 fail"),
        "{}",
        out.stderr
    );

    let out = doctor(&[&args[..], &["--json"]].concat(), &env);
    assert_eq!(out.status, 1, "{}", out.stderr);
    let json: Value = serde_json::from_str(&out.stdout).expect("--json prints JSON only");
    assert_eq!(json["ok"], false);
    let checks = checks(&json);
    assert!(
        checks.contains(&("runtime".to_owned(), "fail".to_owned())),
        "{checks:?}"
    );
    assert!(
        !checks.iter().any(|(name, _)| name == "model catalog"),
        "no catalog check without a runtime: {checks:?}"
    );
}

#[test]
fn a_reachable_catalog_with_the_models_exits_0() {
    if copilot_eval_core::runtime::require_for_test("a_reachable_catalog_with_the_models_exits_0")
        .is_none()
    {
        return;
    }
    let (_rt, server) = server();
    let out = doctor(
        &[
            "--offline-base-url",
            &server.base_url(),
            "--model",
            "claude-sonnet-4.5",
            "--model",
            "gpt-test",
            "--json",
        ],
        &[],
    );
    assert_eq!(out.status, 0, "{}{}", out.stdout, out.stderr);
    let json: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(json["ok"], true);
    let checks = checks(&json);
    for name in [
        "runtime",
        "runtime protocol",
        "model catalog",
        "model claude-sonnet-4.5",
        "model gpt-test",
    ] {
        assert!(
            checks.contains(&(name.to_owned(), "ok".to_owned())),
            "{name}: {checks:?}"
        );
    }
}

#[test]
fn a_missing_model_fails_exit_1() {
    if copilot_eval_core::runtime::require_for_test("a_missing_model_fails_exit_1").is_none() {
        return;
    }
    let (_rt, server) = server();
    let out = doctor(
        &[
            "--offline-base-url",
            &server.base_url(),
            "--model",
            "gpt-nonexistent",
        ],
        &[],
    );
    assert_eq!(out.status, 1, "{}{}", out.stdout, out.stderr);
    let line = out
        .stdout
        .lines()
        .find(|l| l.contains("model gpt-nonexistent"))
        .unwrap_or_else(|| panic!("{}", out.stdout));
    assert!(
        line.starts_with("fail") && line.contains("not in the catalog"),
        "{line}"
    );
    assert!(
        out.stdout.contains("fix: request an available model"),
        "{}",
        out.stdout
    );
}
