// A skill's trigger set (see the doc comment on `pub mod triggers_file` in ../skill.rs).
// Like evals_file.rs, this file is compiled twice: as
// `copilot_eval_core::customization::skill::triggers_file` and, by `include!`, inside the
// `#[copilot_eval]` attribute (copilot-eval-macros/src/skill_evals.rs), next to evals_file.rs
// (`super::evals_file`), so it holds no inner attributes or docs, and uses only `std`,
// `serde_json` and `thiserror`.

/// The file's path inside a skill folder.
pub const TRIGGERS_FILE: &str = "evals/triggers.json";

/// The keys of a query the format defines.
pub const QUERY_KEYS: &[&str] = &["query", "prompt", "should_trigger"];

/// A parsed trigger set.
#[derive(Debug, Clone, PartialEq)]
pub struct TriggersFile {
    /// `skill_name`, when given (object form only).
    pub skill_name: Option<String>,
    /// The queries, in file order.
    pub queries: Vec<TriggerQuery>,
    /// Keys of the top-level object that the format does not define, in file order (empty for
    /// the array form).
    pub unknown: Vec<String>,
}

/// One query of a trigger set.
#[derive(Debug, Clone, PartialEq)]
pub struct TriggerQuery {
    /// Its position in the list (0-based), for messages.
    pub index: usize,
    /// `query` (or `prompt`): the prompt the session gets.
    pub query: String,
    /// `should_trigger`: whether the prompt should make the model invoke the skill.
    pub should_trigger: bool,
    /// Keys of the entry that the format does not define, in file order.
    pub unknown: Vec<String>,
}

impl TriggerQuery {
    /// How messages name the query: `[3]`, its position in the list (0-based).
    pub fn describe(&self) -> String {
        format!("[{}]", self.index)
    }

    /// The label of the query's eval test: `invoke_<n>_<slug>` when it should trigger the skill,
    /// `dormant_<n>_<slug>` when it should not, where `n` is its 1-based position and the slug
    /// the query's first words (as for `evals.json` entries). A Rust identifier, so the test's
    /// path is `function::invoke_1_write_the_changelog_for`.
    pub fn label(&self) -> String {
        let kind = if self.should_trigger {
            "invoke"
        } else {
            "dormant"
        };
        let n = self.index + 1;
        let slug = super::evals_file::prompt_slug(&self.query);
        if slug.is_empty() {
            format!("{kind}_{n}")
        } else {
            format!("{kind}_{n}_{slug}")
        }
    }
}

/// Why a trigger set cannot be read ([`parse_triggers_file`]); each message names the entry and
/// the key and says what to write.
#[derive(Debug, thiserror::Error)]
pub enum TriggersFileError {
    /// The text is not JSON (serde_json's message, with line and column).
    #[error("not valid JSON: {0}")]
    Json(#[source] serde_json::Error),
    /// The JSON does not follow the format: neither an array nor an object with `evals`, no
    /// entry, a missing, blank or doubled query, a missing `should_trigger`, a query listed both
    /// ways.
    #[error("{0}")]
    Invalid(String),
}

/// Parse the text of a trigger set: either a JSON array of
/// `{"query": "...", "should_trigger": true}` or an object
/// `{"skill_name": "...", "evals": [{"prompt": "...", "should_trigger": false}]}` (each entry
/// gives `query` or `prompt`).
///
/// Errors (one message each, naming the entry and the key and saying what to write): not JSON,
/// neither an array nor an object with `evals`, no entry, an entry that is not an object, the
/// query missing, blank, or given as both `query` and `prompt`, `should_trigger` missing or not
/// `true`/`false`, the same query listed as both should and should-not trigger.
pub fn parse_triggers_file(text: &str) -> Result<TriggersFile, TriggersFileError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(TriggersFileError::Json)?;
    triggers_from_json(&value).map_err(TriggersFileError::Invalid)
}

/// [`parse_triggers_file`] after the JSON parse: the message of a
/// [`TriggersFileError::Invalid`].
fn triggers_from_json(value: &serde_json::Value) -> Result<TriggersFile, String> {
    let example = "[{\"query\": \"...\", \"should_trigger\": true}]";
    let (skill_name, entries, unknown) = match value {
        serde_json::Value::Array(entries) => (None, entries, Vec::new()),
        serde_json::Value::Object(root) => {
            let skill_name = match root.get("skill_name") {
                None | Some(serde_json::Value::Null) => None,
                Some(serde_json::Value::String(name)) => Some(name.clone()),
                Some(_) => {
                    return Err("`skill_name` must be a string: the skill's `name`".to_owned());
                }
            };
            let unknown = root
                .keys()
                .filter(|k| !matches!(k.as_str(), "skill_name" | "evals"))
                .cloned()
                .collect();
            match root.get("evals") {
                Some(serde_json::Value::Array(entries)) => (skill_name, entries, unknown),
                Some(_) => {
                    return Err(format!(
                        "`evals` must be an array of queries, e.g. {example}"
                    ));
                }
                None => {
                    return Err(format!(
                        "the object has no `evals`: write the queries as `\"evals\": {example}`, or make the file an array {example}"
                    ));
                }
            }
        }
        _ => {
            return Err(format!(
                "the file must hold an array of queries {example}, or an object `{{\"skill_name\": ..., \"evals\": [...]}}`"
            ));
        }
    };
    if entries.is_empty() {
        return Err(format!(
            "the trigger set is empty: add queries, e.g. {example}"
        ));
    }
    let mut queries: Vec<TriggerQuery> = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let query = parse_query(index, entry)?;
        if let Some(other) = queries.iter().find(|q| {
            q.query.trim() == query.query.trim() && q.should_trigger != query.should_trigger
        }) {
            return Err(format!(
                "[{index}]: the query {:?} is also [{}], with the opposite `should_trigger`; keep one of them",
                query.query, other.index
            ));
        }
        queries.push(query);
    }
    Ok(TriggersFile {
        skill_name,
        queries,
        unknown,
    })
}

fn parse_query(index: usize, entry: &serde_json::Value) -> Result<TriggerQuery, String> {
    let serde_json::Value::Object(fields) = entry else {
        return Err(format!(
            "[{index}] must be an object `{{\"query\": \"...\", \"should_trigger\": true}}`"
        ));
    };
    let key = |key: &str| format!("[{index}]: `{key}`");
    let query = match (fields.get("query"), fields.get("prompt")) {
        (Some(_), Some(_)) => {
            return Err(format!(
                "[{index}] gives both `query` and `prompt`: keep one (they mean the same)"
            ));
        }
        (Some(value), None) => (value, "query"),
        (None, Some(value)) => (value, "prompt"),
        (None, None) => {
            return Err(format!(
                "{} is missing: add the prompt the session gets",
                key("query")
            ));
        }
    };
    let query = match query {
        (serde_json::Value::String(text), _) if !text.trim().is_empty() => text.clone(),
        (serde_json::Value::String(_), name) => {
            return Err(format!(
                "{} is blank: write the prompt the session gets",
                key(name)
            ));
        }
        (_, name) => {
            return Err(format!(
                "{} must be a string: the prompt the session gets",
                key(name)
            ));
        }
    };
    let should_trigger = match fields.get("should_trigger") {
        Some(serde_json::Value::Bool(value)) => *value,
        Some(_) => {
            return Err(format!(
                "{} must be `true` (the query should invoke the skill) or `false` (it should not)",
                key("should_trigger")
            ));
        }
        None => {
            return Err(format!(
                "{} is missing: add `true` (the query should invoke the skill) or `false` (it should not)",
                key("should_trigger")
            ));
        }
    };
    let unknown = fields
        .keys()
        .filter(|k| !QUERY_KEYS.contains(&k.as_str()))
        .cloned()
        .collect();
    Ok(TriggerQuery {
        index,
        query,
        should_trigger,
        unknown,
    })
}
