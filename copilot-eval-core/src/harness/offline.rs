//! The scripted model of a test ([`EvalContext::offline`](super::EvalContext::offline)): the
//! catalog a run serves, the checks before the prompt (an agent model the catalog lacks), and
//! the script's own accounting (turns left unused, turns run out).

use crate::eval::CopilotEval;
use crate::model_server::{DEFAULT_MODEL, ScriptCatalog, ServerConfig};

/// The server configuration of one scripted run: the eval's model first (else
/// [`DEFAULT_MODEL`]), then the catalog's other models, in order.
pub(super) fn server_config(
    eval: &CopilotEval,
    catalog: std::sync::Arc<ScriptCatalog>,
    first_call_id: u64,
) -> ServerConfig {
    let model = eval.model().unwrap_or(DEFAULT_MODEL).to_owned();
    let mut config = ServerConfig::new(catalog.clone())
        .model(model.clone())
        .first_call_id(first_call_id);
    for id in catalog.model_ids() {
        if id != model {
            config = config.model(id);
        }
    }
    config
}

/// The warnings before the prompt: each custom agent whose `model` the offline catalog
/// `models` lacks (the runtime then fails its dispatch "Model ... is not available" and the
/// run ends `model_unavailable`). Pure.
pub(crate) fn agent_model_warnings(eval: &CopilotEval, models: &[String]) -> Vec<String> {
    eval.custom_agents
        .iter()
        .filter_map(|agent| {
            let model = agent.model.as_deref()?;
            (!models.iter().any(|m| m == model)).then(|| {
                format!(
                    "custom agent `{}` asks for model `{model}`, which the offline catalog lacks (it has: {}); the runtime will fail its dispatch \"Model ... is not available\" (add the model with ScriptCatalog::model, or change the agent's model)",
                    agent.name,
                    models.join(", ")
                )
            })
        })
        .collect()
}

/// The warning for replies the catalog's scripts still hold when the test ends (`None` when
/// every reply was used): how many, per script.
pub(super) fn unused_turns(catalog: &ScriptCatalog) -> Option<String> {
    let left: Vec<String> = catalog
        .scripts()
        .into_iter()
        .filter(|(_, s)| s.remaining() > 0)
        .map(|(model, s)| {
            let n = s.remaining();
            format!(
                "{n} of {} {} of the {} script",
                s.len(),
                if s.len() == 1 { "reply" } else { "replies" },
                model.map_or_else(|| "main".to_owned(), |m| format!("`{m}`"))
            )
        })
        .collect();
    (!left.is_empty()).then(|| {
        format!(
            "scripted model: {} left unused when the test ended (the runtime asked for fewer model turns than the script holds; remove the extra turns, or make the script strict to fail on them)",
            left.join(", ")
        )
    })
}

/// The error text of a run whose script ran out of turns: the script that did, its length and
/// the turn the runtime asked for, then `cause` (the runtime's error).
pub(super) fn exhausted(catalog: &ScriptCatalog, overruns_before: &[usize], cause: &str) -> String {
    let scripts = catalog.scripts();
    let (model, script) = scripts
        .iter()
        .zip(overruns_before)
        .find(|((_, s), before)| s.overruns() > **before)
        .map(|(entry, _)| *entry)
        .unwrap_or(scripts[0]);
    let turns = script.len();
    let which = match model {
        Some(id) => format!("the script of model `{id}`"),
        None => "the script".to_owned(),
    };
    format!(
        "{which} ran out of turns: it has {turns} {} and the runtime asked for turn {} (add the missing turn to the script given to ctx.offline); {cause}",
        if turns == 1 { "turn" } else { "turns" },
        turns + 1
    )
}

/// Each script's overrun count, main first (compare with [`exhausted`]).
pub(super) fn overruns(catalog: &ScriptCatalog) -> Vec<usize> {
    catalog
        .scripts()
        .iter()
        .map(|(_, s)| s.overruns())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model_server::{Script, ScriptedTurn};
    use github_copilot_sdk::CustomAgentConfig;

    fn agent(name: &str, model: Option<&str>) -> CustomAgentConfig {
        let mut agent = CustomAgentConfig::new(name, "Work.");
        agent.model = model.map(str::to_owned);
        agent
    }

    #[test]
    fn an_agent_model_outside_the_catalog_is_named_before_the_prompt() {
        let eval = CopilotEval::builder()
            .name("e")
            .model("claude-sonnet-4.5")
            .custom_agent(agent("reviewer", Some("gpt-5")))
            .custom_agent(agent("helper", Some("claude-sonnet-4.5")))
            .custom_agent(agent("plain", None))
            .build()
            .unwrap();
        let catalog = std::sync::Arc::new(ScriptCatalog::new(Script::new([])));
        let models = server_config(&eval, catalog, 1).models();
        assert_eq!(models, ["claude-sonnet-4.5"]);
        let warnings = agent_model_warnings(&eval, &models);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].starts_with("custom agent `reviewer` asks for model `gpt-5`, which the offline catalog lacks (it has: claude-sonnet-4.5)"),
            "{warnings:?}"
        );
        let catalog = std::sync::Arc::new(
            ScriptCatalog::new(Script::new([])).model("gpt-5", Script::new([])),
        );
        let models = server_config(&eval, catalog, 1).models();
        assert_eq!(models, ["claude-sonnet-4.5", "gpt-5"]);
        assert!(agent_model_warnings(&eval, &models).is_empty());
    }

    #[test]
    fn unused_replies_are_counted_per_script() {
        let catalog = ScriptCatalog::new(
            Script::new([])
                .turn(ScriptedTurn::text("a"))
                .turn(ScriptedTurn::text("b")),
        )
        .model("gpt-5", Script::new([]).turn(ScriptedTurn::text("c")));
        catalog.main().next_reply();
        let warning = unused_turns(&catalog).unwrap();
        assert!(
            warning.starts_with("scripted model: 1 of 2 replies of the main script, 1 of 1 reply of the `gpt-5` script left unused"),
            "{warning}"
        );
        catalog.main().next_reply();
        catalog.script("gpt-5").unwrap().next_reply();
        assert_eq!(unused_turns(&catalog), None);
    }
}
