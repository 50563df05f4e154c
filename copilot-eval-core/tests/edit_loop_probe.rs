//! A test crate that awaits the loopback model server's and the replay's entry points, as a
//! user's tests do (docs/model-server.md, docs/cassettes.md). `edit_loop.rs` reads this crate's
//! LLVM IR and checks that it defines none of the engine's functions: those futures are boxed
//! in copilot-eval-core (docs/performance.md, "The edit loop").

use std::path::Path;
use std::sync::Arc;

use copilot_eval_core::cassette::ReplaySession;
use copilot_eval_core::model_server::{ModelServer, Script, ServerConfig};

/// The model a server is started with here.
const MODEL: &str = "probe-model";

/// The model ids a server's catalog (`GET /models`) lists.
async fn catalog(base_url: &str) -> Vec<String> {
    let catalog: serde_json::Value = reqwest::get(format!("{base_url}/models"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    catalog["data"]
        .as_array()
        .expect("the catalog's data is a list")
        .iter()
        .filter_map(|model| model["id"].as_str().map(str::to_owned))
        .collect()
}

/// A scripted server and a replay of the quick-start's cassette each start (on a tokio task:
/// their futures are `Send`), answer their catalog with their model, and shut down.
#[tokio::test]
async fn a_model_server_and_a_replay_start_serve_their_catalog_and_stop() {
    let config = ServerConfig::new(Arc::new(Script::new([]))).model(MODEL);
    let server = tokio::spawn(ModelServer::start(config))
        .await
        .unwrap()
        .unwrap();
    assert!(
        catalog(&server.base_url())
            .await
            .contains(&MODEL.to_owned())
    );
    server.shutdown().await;

    let cassette = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/quickstart/tests/cassettes/evals/creates_a_greeting_file.yaml");
    let replay = ReplaySession::start(&cassette).await.unwrap();
    assert!(
        catalog(&replay.server().base_url())
            .await
            .contains(&"claude-sonnet-4.5".to_owned())
    );
    replay.shutdown().await;
}
