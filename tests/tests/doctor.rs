//! `doctor` against the loopback model server: reachable, a missing model, no runtime.

use std::sync::Arc;

use copilot_eval_core::RunOptions;
use copilot_eval_core::doctor::{CheckStatus, DoctorOptions, any_failed, doctor, render};
use copilot_eval_core::model_server::{ModelServer, Script, ServerConfig};
use copilot_eval_e2e::runtime_for;

async fn server() -> ModelServer {
    ModelServer::start(
        ServerConfig::new(Arc::new(Script::new([])))
            .model("claude-sonnet-4.5")
            .model("gpt-test"),
    )
    .await
    .unwrap()
}

fn status_of(checks: &[copilot_eval_core::doctor::Check], name: &str) -> CheckStatus {
    checks
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no {name} check in:\n{}", render(checks)))
        .status
}

#[tokio::test]
async fn doctor_passes_when_the_catalog_has_the_models() {
    let Some(runtime) = runtime_for("doctor_passes_when_the_catalog_has_the_models") else {
        return;
    };
    let server = server().await;
    let checks = doctor(&DoctorOptions {
        run: RunOptions::offline(server.base_url()),
        models: vec!["claude-sonnet-4.5".into(), "gpt-test".into()],
        runtime_path: Some(runtime.path.clone()),
        ..DoctorOptions::default()
    })
    .await;
    let text = render(&checks);
    assert!(!any_failed(&checks), "{text}");
    assert_eq!(status_of(&checks, "runtime"), CheckStatus::Ok, "{text}");
    assert_eq!(
        status_of(&checks, "runtime protocol"),
        CheckStatus::Ok,
        "{text}"
    );
    assert_eq!(
        status_of(&checks, "model catalog"),
        CheckStatus::Ok,
        "{text}"
    );
    assert_eq!(
        status_of(&checks, "model gpt-test"),
        CheckStatus::Ok,
        "{text}"
    );
    assert!(text.contains("model catalog     reachable"), "{text}");
    // The registry is asked (CI reaches npm; offline it says it could not check), never failed.
    assert_ne!(
        status_of(&checks, "runtime update"),
        CheckStatus::Fail,
        "{text}"
    );
    let update = checks.iter().find(|c| c.name == "runtime update").unwrap();
    assert!(
        update.detail.contains("is published")
            || update.detail.contains("is current")
            || update
                .detail
                .starts_with("could not check the npm registry"),
        "{text}"
    );
    assert!(
        server.requests().iter().any(|r| r.path == "/models"),
        "the catalog was asked"
    );
}

#[tokio::test]
async fn doctor_fails_on_a_missing_model_and_names_the_fix() {
    let Some(runtime) = runtime_for("doctor_fails_on_a_missing_model_and_names_the_fix") else {
        return;
    };
    let server = server().await;
    let checks = doctor(&DoctorOptions {
        run: RunOptions::offline(server.base_url()),
        models: vec!["gpt-nonexistent".into()],
        runtime_path: Some(runtime.path.clone()),
        ..DoctorOptions::default()
    })
    .await;
    let text = render(&checks);
    assert!(any_failed(&checks));
    assert_eq!(
        status_of(&checks, "model gpt-nonexistent"),
        CheckStatus::Fail,
        "{text}"
    );
    let line = text
        .lines()
        .find(|l| l.contains("gpt-nonexistent"))
        .unwrap();
    assert!(
        line.contains("not in the catalog")
            && line.contains("claude-sonnet-4.5")
            && line.contains("gpt-test"),
        "{text}"
    );
    assert!(text.contains("fix: request an available model"), "{text}");
}

#[tokio::test]
async fn doctor_fails_without_a_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let checks = doctor(&DoctorOptions {
        run: RunOptions::offline("http://127.0.0.1:9"),
        models: vec![],
        runtime_path: Some(dir.path().join("no-copilot")),
        ..DoctorOptions::default()
    })
    .await;
    let text = render(&checks);
    assert!(any_failed(&checks));
    assert_eq!(status_of(&checks, "runtime"), CheckStatus::Fail, "{text}");
    assert!(
        text.contains("fix: run `cargo copilot-eval runtime install`"),
        "{text}"
    );
    assert!(
        !checks.iter().any(|c| c.name == "model catalog"),
        "no catalog check without a runtime"
    );
}

/// `DoctorOptions::agents` (`doctor --agents PATH`): each custom agent's `model:` is checked
/// against the catalog, so a live suite learns before any spend that a dispatch would fail
/// `model_unavailable`; an agent without a model is not a check.
#[tokio::test]
async fn doctor_checks_each_custom_agents_model_in_the_catalog() {
    let Some(runtime) = runtime_for("doctor_checks_each_custom_agents_model_in_the_catalog") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let agents = dir.path().join("agents");
    std::fs::create_dir_all(agents.join("team")).unwrap();
    let agent = |file: &str, model: Option<&str>| {
        let model = model.map(|m| format!("model: {m}\n")).unwrap_or_default();
        std::fs::write(
            agents.join(file),
            format!("---\ndescription: Reviews changes\n{model}---\nReview the change.\n"),
        )
        .unwrap();
    };
    agent("reviewer.agent.md", Some("gpt-test"));
    agent("team/writer.agent.md", Some("gpt-missing"));
    agent("plain.agent.md", None);
    let server = server().await;
    let checks = doctor(&DoctorOptions {
        run: RunOptions::offline(server.base_url()),
        agents: vec![agents.clone()],
        runtime_path: Some(runtime.path.clone()),
        ..DoctorOptions::default()
    })
    .await;
    let text = render(&checks);
    assert_eq!(
        status_of(&checks, "agent reviewer model gpt-test"),
        CheckStatus::Ok,
        "{text}"
    );
    assert_eq!(
        status_of(&checks, "agent team--writer model gpt-missing"),
        CheckStatus::Fail,
        "{text}"
    );
    assert!(
        !checks.iter().any(|c| c.name.starts_with("agent plain")),
        "{text}"
    );
    let failed = checks
        .iter()
        .find(|c| c.name == "agent team--writer model gpt-missing")
        .unwrap();
    assert!(
        failed.detail.contains("writer.agent.md")
            && failed.detail.contains("not in the catalog (available: ")
            && failed.detail.contains("model_unavailable"),
        "{text}"
    );
    assert!(
        text.contains("fix: set the agent's `model:` to an available model"),
        "{text}"
    );
    assert!(any_failed(&checks));
}
