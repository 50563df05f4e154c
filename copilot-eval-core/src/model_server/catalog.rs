//! [`ScriptCatalog`]: an offline model catalog of several models, one [`Script`] per model.

use std::sync::Arc;

use async_trait::async_trait;

use super::ModelRequest;
use super::script::{Reply, Responder, Script};

/// Several scripted models in one catalog: the main [`Script`] answers the eval's own model,
/// and each [`model`](Self::model) adds a catalog entry with its own script (for example the
/// model a custom agent's `model:` front matter names).
///
/// A model request is answered by the script of the catalog model named in the request's
/// `model` field; a request naming no added model (the eval's model, or none) takes the main
/// script's next reply. Each script keeps its own order and its own count of overruns.
///
/// [`EvalContext::offline`](crate::harness::EvalContext::offline) takes a catalog or a single
/// [`Script`] (a catalog of one model).
///
/// ```
/// use copilot_eval_core::model_server::{Script, ScriptCatalog, ScriptedTurn};
/// use serde_json::json;
///
/// let catalog = ScriptCatalog::new(
///     Script::new([])
///         .turn(ScriptedTurn::tool_call("task", json!({"agent_type": "reviewer", "prompt": "Review."})))
///         .turn(ScriptedTurn::text("The reviewer approved.")),
/// )
/// .model("gpt-5", Script::new([]).turn(ScriptedTurn::text("Approved.")));
/// assert_eq!(catalog.model_ids(), ["gpt-5"]);
/// assert_eq!(catalog.remaining(), 3);
/// ```
#[derive(Debug)]
pub struct ScriptCatalog {
    main: Arc<Script>,
    models: Vec<(String, Arc<Script>)>,
}

impl From<Script> for ScriptCatalog {
    fn from(script: Script) -> Self {
        ScriptCatalog::new(script)
    }
}

impl ScriptCatalog {
    /// A catalog whose main `script` answers the eval's own model.
    pub fn new(script: Script) -> Self {
        Self {
            main: Arc::new(script),
            models: Vec::new(),
        }
    }

    /// Adds the catalog model `id`, answered by `script`. Adding an id twice keeps the first.
    pub fn model(mut self, id: impl Into<String>, script: Script) -> Self {
        let id = id.into();
        if !self.models.iter().any(|(known, _)| *known == id) {
            self.models.push((id, Arc::new(script)));
        }
        self
    }

    /// The ids of the models added with [`model`](Self::model), in order (the eval's own model
    /// is not among them).
    pub fn model_ids(&self) -> Vec<String> {
        self.models.iter().map(|(id, _)| id.clone()).collect()
    }

    /// The main script (the eval's own model).
    pub fn main(&self) -> &Script {
        &self.main
    }

    /// The script of the added model `id`.
    pub fn script(&self, id: &str) -> Option<&Script> {
        self.models
            .iter()
            .find(|(known, _)| known == id)
            .map(|(_, script)| script.as_ref())
    }

    /// Every script with the model it answers (`None`: the eval's own model), main first.
    pub fn scripts(&self) -> Vec<(Option<&str>, &Script)> {
        std::iter::once((None, self.main.as_ref()))
            .chain(
                self.models
                    .iter()
                    .map(|(id, script)| (Some(id.as_str()), script.as_ref())),
            )
            .collect()
    }

    /// Replies not used yet, over every script.
    pub fn remaining(&self) -> usize {
        self.scripts().iter().map(|(_, s)| s.remaining()).sum()
    }

    /// Model requests that arrived after their script was used up, over every script.
    pub fn overruns(&self) -> usize {
        self.scripts().iter().map(|(_, s)| s.overruns()).sum()
    }

    /// Whether any script was made [`strict`](Script::strict).
    pub fn strict(&self) -> bool {
        self.scripts().iter().any(|(_, s)| s.is_strict())
    }

    fn for_model(&self, model: Option<&str>) -> &Script {
        model.and_then(|m| self.script(m)).unwrap_or(&self.main)
    }
}

#[async_trait]
impl Responder for ScriptCatalog {
    async fn respond(&self, request: &ModelRequest) -> Reply {
        self.for_model(request.model.as_deref()).next_reply()
    }
}
