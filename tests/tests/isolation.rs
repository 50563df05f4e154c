//! Empty mode isolates the session's configuration: ambient configuration planted in the working
//! directory and the runtime home takes effect in the default mode and none of it reaches an
//! empty-mode session. Proven from the loopback server's request log and the evidence.

use std::path::Path;
use std::sync::Arc;

use copilot_eval_core::evidence::SessionEventType;
use copilot_eval_core::model_server::{ModelServer, Script, ScriptedTurn, ServerConfig};
use copilot_eval_core::{CopilotEval, RunOptions, run_with};
use copilot_eval_e2e::{assert_no_runtime_left, runtime_for};

const MODEL: &str = "claude-sonnet-4.5";
const REPO_INSTRUCTION: &str = "PLANTED-REPO-INSTRUCTION-4c1d";
const AGENTS_INSTRUCTION: &str = "PLANTED-AGENTS-MD-93aa";
const HOME_INSTRUCTION: &str = "PLANTED-HOME-INSTRUCTION-7e20";
const USER_SKILL: &str = "planted-user-skill";

/// Plant ambient configuration: repository instructions, AGENTS.md and a file hook in the
/// working directory; user-level instructions and a user-level skill in a home seed.
fn plant(work: &Path, home: &Path) {
    std::fs::create_dir_all(work.join(".github/hooks")).unwrap();
    std::fs::write(
        work.join(".github/copilot-instructions.md"),
        REPO_INSTRUCTION,
    )
    .unwrap();
    std::fs::write(work.join("AGENTS.md"), AGENTS_INSTRUCTION).unwrap();
    std::fs::write(
        work.join(".github/hooks/planted.json"),
        r#"{"version": 1, "hooks": {"sessionStart": [{"type": "command", "bash": "echo ran > hook-ran.txt", "timeoutSec": 10}], "userPromptSubmitted": [{"type": "command", "bash": "echo ran > prompt-hook-ran.txt", "timeoutSec": 10}]}}"#,
    )
    .unwrap();
    std::fs::write(home.join("copilot-instructions.md"), HOME_INSTRUCTION).unwrap();
    let skill = home.join("skills").join(USER_SKILL);
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        format!("---\nname: {USER_SKILL}\ndescription: A planted user-level skill.\n---\n\nSay PLANTED.\n"),
    )
    .unwrap();
}

struct Seen {
    first_request: String,
    tool_names: Vec<String>,
    hook_ran: bool,
    skills_loaded: Vec<serde_json::Value>,
}

async fn run_planted(mode: &str, runtime: &Path) -> Seen {
    run_planted_with(mode, runtime, false).await
}

/// As [`run_planted`]; `discovery` turns the SDK's config discovery on (default mode only).
async fn run_planted_with(mode: &str, runtime: &Path, discovery: bool) -> Seen {
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    plant(work.path(), home.path());
    let server = ModelServer::start(
        ServerConfig::new(Arc::new(Script::new([]).turn(ScriptedTurn::text("hi")))).model(MODEL),
    )
    .await
    .unwrap();
    let mut eval = CopilotEval::builder()
        .model(MODEL)
        .client_mode(mode)
        .working_directory(work.path())
        .timeout_s(60.0);
    if discovery {
        eval = eval.extra_session_config(|c| c.with_enable_config_discovery(true));
    }
    let eval = eval.build().unwrap();
    let result = run_with(
        &eval,
        "Say hi.",
        &RunOptions::offline(server.base_url())
            .runtime_path(runtime)
            .home_seed(home.path()),
    )
    .await;
    assert!(result.success, "{mode}: {:?}", result.error);
    assert_no_runtime_left(&result);
    let requests = server.model_requests();
    assert_eq!(requests.len(), 1);
    let skills_loaded = result
        .raw_events
        .iter()
        .filter(|e| e.kind() == SessionEventType::SessionSkillsLoaded)
        .filter_map(|e| e.data["skills"].as_array().cloned())
        .flatten()
        .collect();
    Seen {
        first_request: requests[0].body.to_string(),
        tool_names: requests[0].tool_names.clone(),
        skills_loaded,
        hook_ran: work.path().join("hook-ran.txt").exists()
            || work.path().join("prompt-hook-ran.txt").exists(),
    }
}

#[tokio::test]
async fn planted_configuration_reaches_default_mode_but_not_empty_mode() {
    let Some(runtime) =
        runtime_for("planted_configuration_reaches_default_mode_but_not_empty_mode")
    else {
        return;
    };
    let default = run_planted("copilot-cli", &runtime.path).await;
    let empty = run_planted("empty", &runtime.path).await;

    // The plants take effect in the default mode...
    assert!(
        default.first_request.contains(REPO_INSTRUCTION),
        "repository instructions"
    );
    assert!(
        default.first_request.contains(AGENTS_INSTRUCTION),
        "AGENTS.md"
    );
    assert!(
        default.first_request.contains(HOME_INSTRUCTION),
        "user-level instructions"
    );
    assert!(default.hook_ran, "the repository file hook ran");
    // A user-level skill in the home is the one plant that needs config discovery (docs/guide.md
    // "Seeding the home" says so); its control is the test below.
    assert!(
        !default.first_request.contains(USER_SKILL),
        "the planted user-level skill loaded without config discovery: update docs/guide.md"
    );
    assert!(
        !default.tool_names.is_empty(),
        "the runtime's tools are offered"
    );

    // ...and none of them reaches an empty-mode session.
    for planted in [
        REPO_INSTRUCTION,
        AGENTS_INSTRUCTION,
        HOME_INSTRUCTION,
        USER_SKILL,
    ] {
        assert!(
            !empty.first_request.contains(planted),
            "{planted} reached empty mode"
        );
    }
    assert!(!empty.hook_ran, "the file hook did not run in empty mode");
    assert!(
        empty.tool_names.is_empty(),
        "no tools unless listed: {:?}",
        empty.tool_names
    );
    assert!(
        empty.skills_loaded.is_empty(),
        "no skill loaded in empty mode: {:?}",
        empty.skills_loaded
    );
}

/// The control for the user-level skill above: in default mode with config discovery on, the
/// skill planted in the home is loaded, so its absence from empty mode means something.
#[tokio::test]
async fn the_planted_user_skill_loads_in_default_mode_with_discovery() {
    let Some(runtime) = runtime_for("the_planted_user_skill_loads_in_default_mode_with_discovery")
    else {
        return;
    };
    let default = run_planted_with("copilot-cli", &runtime.path, true).await;
    assert!(
        default.first_request.contains(USER_SKILL),
        "the planted user-level skill is offered to the model in default mode with discovery"
    );
}
