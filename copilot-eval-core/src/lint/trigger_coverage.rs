//! Whether a skill's trigger set (`evals/triggers.json`) can tell the skill's description
//! works, not only that unrelated prompts leave it alone: two warnings of `lint`, run on a set
//! that parsed (`skill_triggers::check`).
//!
//! - `triggers-no-near-miss`: no query that should not trigger is a **near miss**. A near miss
//!   is a should-not-trigger query that shares a word with the skill's name or description: a
//!   neighbouring task the description must tell apart. A set whose should-not queries are all
//!   off topic ("What is the capital of Norway?") shows little about false triggers.
//! - `triggers-names-skill`: every query that should trigger **names the skill** (its `name`,
//!   words split at `-` and `_`, appears as whole words in the query, in any case). The model
//!   can then pick the skill by its name alone, and the set says nothing about the description.
//!   This includes a set in which every query names the skill.
//!
//! A word here is a run of letters and digits, lower-cased, of at least four characters, not a
//! common English word (`STOP_WORDS`), with one trailing `s` removed (`changes` is `change`).

use std::path::Path;

use crate::customization::Problem;
use crate::customization::skill::triggers_file::TriggersFile;

/// No should-not-trigger query is a near miss.
pub(crate) const NO_NEAR_MISS: &str = "triggers-no-near-miss";
/// Every should-trigger query names the skill.
pub(crate) const NAMES_SKILL: &str = "triggers-names-skill";

/// Common words that make no query a near miss.
const STOP_WORDS: &[&str] = &[
    "about", "after", "also", "been", "before", "does", "each", "from", "have", "into", "just",
    "like", "make", "more", "only", "over", "please", "some", "such", "than", "that", "their",
    "them", "then", "there", "these", "they", "this", "those", "what", "when", "where", "which",
    "while", "with", "would", "your",
];

/// The words of `text` as the module's doc defines them, in order.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| w.chars().count() >= 4 && !STOP_WORDS.contains(&w.as_str()))
        .map(|w| match w.strip_suffix('s') {
            Some(stem) if stem.chars().count() >= 4 => stem.to_owned(),
            _ => w,
        })
        .collect()
}

/// Whether `query` names the skill `name`: the name's words (split at `-`, `_` and spaces)
/// appear one after another among the query's words (split at anything but letters and
/// digits), in any case.
pub(crate) fn names_skill(query: &str, name: &str) -> bool {
    let split = |text: &str| -> Vec<String> {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let (query, name) = (split(query), split(name));
    !name.is_empty() && query.windows(name.len()).any(|w| w == name.as_slice())
}

/// The coverage warnings of `file` (at `path`) for the skill `name` with `description`.
pub(super) fn check(
    path: &Path,
    file: &TriggersFile,
    name: &str,
    description: Option<&str>,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut topic: Vec<String> = Vec::new();
    for word in words(name)
        .into_iter()
        .chain(words(description.unwrap_or_default()))
    {
        if !topic.contains(&word) {
            topic.push(word);
        }
    }
    let dormant: Vec<_> = file.queries.iter().filter(|q| !q.should_trigger).collect();
    let near_miss = dormant
        .iter()
        .any(|q| words(&q.query).iter().any(|w| topic.contains(w)));
    if !near_miss {
        let examples: Vec<&str> = topic.iter().take(3).map(String::as_str).collect();
        let none = if dormant.is_empty() {
            "no query should not trigger the skill".to_owned()
        } else {
            format!(
                "none of the {} queries that should not trigger the skill is a near miss (none shares a word with its name or description)",
                dormant.len()
            )
        };
        problems.push(Problem::warning(
            path,
            NO_NEAR_MISS,
            format!(
                "{none}: the set cannot show that the description tells the skill from a neighbouring task; add a query with `\"should_trigger\": false` on a nearby task (one that uses a word such as {}, but asks for something the skill does not do)",
                examples
                    .iter()
                    .map(|w| format!("{w:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let invoke: Vec<_> = file.queries.iter().filter(|q| q.should_trigger).collect();
    if !invoke.is_empty() && invoke.iter().all(|q| names_skill(&q.query, name)) {
        problems.push(Problem::warning(
            path,
            NAMES_SKILL,
            format!(
                "every query that should trigger the skill names it ({:?}): the model can pick the skill by its name alone, so the set says nothing about its description; add a should-trigger query that asks for the skill's work without naming it",
                name
            ),
        ));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::customization::skill::triggers_file::parse_triggers_file;

    fn rules(triggers: &str, description: &str) -> Vec<&'static str> {
        let file = parse_triggers_file(triggers).unwrap();
        check(
            Path::new("t.json"),
            &file,
            "release-notes",
            Some(description),
        )
        .iter()
        .map(|p| p.rule)
        .collect()
    }

    const DESCRIPTION: &str = "Writes release notes for a version in the house style";

    /// A set with a near miss and a should-trigger query that does not name the skill: no
    /// warning. Without the near miss, or with every should-trigger query naming the skill,
    /// one warning each.
    #[test]
    fn each_coverage_warning_and_its_absence() {
        let good = r#"[
            {"query": "Announce version 2.4.1 of ferris-cli.", "should_trigger": true},
            {"query": "Write the release notes for 2.4.1.", "should_trigger": true},
            {"query": "Bump the version in Cargo.toml to 2.4.1.", "should_trigger": false}
        ]"#;
        assert_eq!(rules(good, DESCRIPTION), Vec::<&str>::new());
        // "What is the capital of Norway?" shares no word with the skill's name or description.
        let off_topic = r#"[
            {"query": "Announce version 2.4.1 of ferris-cli.", "should_trigger": true},
            {"query": "What is the capital of Norway?", "should_trigger": false}
        ]"#;
        assert_eq!(rules(off_topic, DESCRIPTION), [NO_NEAR_MISS]);
        let only_should = r#"[{"query": "Announce version 2.4.1.", "should_trigger": true}]"#;
        assert_eq!(rules(only_should, DESCRIPTION), [NO_NEAR_MISS]);
        // Every query names the skill, in any case, with its `-` as a space.
        let named = r#"[
            {"query": "Write the Release Notes for 2.4.1.", "should_trigger": true},
            {"query": "Use release-notes for 2.5.0.", "should_trigger": true},
            {"query": "Are release notes needed for a version bump?", "should_trigger": false}
        ]"#;
        assert_eq!(rules(named, DESCRIPTION), [NAMES_SKILL]);
        let file = parse_triggers_file(off_topic).unwrap();
        let problems = check(
            Path::new("t.json"),
            &file,
            "release-notes",
            Some(DESCRIPTION),
        );
        assert_eq!(
            problems[0].message,
            "none of the 1 queries that should not trigger the skill is a near miss (none shares a word with its name or description): the set cannot show that the description tells the skill from a neighbouring task; add a query with `\"should_trigger\": false` on a nearby task (one that uses a word such as \"release\", \"note\", \"write\", but asks for something the skill does not do)"
        );
        let file = parse_triggers_file(named).unwrap();
        let problems = check(
            Path::new("t.json"),
            &file,
            "release-notes",
            Some(DESCRIPTION),
        );
        assert_eq!(
            problems[0].message,
            "every query that should trigger the skill names it (\"release-notes\"): the model can pick the skill by its name alone, so the set says nothing about its description; add a should-trigger query that asks for the skill's work without naming it"
        );
    }

    #[test]
    fn a_query_names_the_skill_by_whole_words() {
        assert!(names_skill("Write the CHANGELOG.md section", "changelog"));
        assert!(names_skill("use release_notes", "release-notes"));
        assert!(!names_skill("release the notes", "release-notes"));
        assert!(!names_skill("changelogs please", "changelog"));
        assert_eq!(
            words("Turns a list of changes into the team's format"),
            ["turn", "list", "change", "team", "format"]
        );
    }
}
