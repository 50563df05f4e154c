//! Skill discovery before spending: the run-stage checks of the requested skills.
//!
//! When an eval has `skill_directories`, a run checks its skills twice before the first model
//! request, and fails with [`StopReason::SkillSetupError`](crate::StopReason::SkillSetupError)
//! when either check fails:
//!
//! 1. **Locally, before the runtime starts**: every requested folder is loaded with
//!    [`requested_skills`](fn@crate::customization::skill::requested_skills): a folder holding no skill,
//!    an invalid `SKILL.md`, a reference that leaves its folder, two skills with one name are
//!    all errors. Nothing is started.
//! 2. **In the runtime, after the session is created and before the prompt is sent**: the run
//!    asks the runtime which skills it discovered (`session.skills.ensureLoaded`, then
//!    `session.skills.reload` for its diagnostics, then `session.skills.list`). Every requested
//!    skill must be listed with the same `SKILL.md` path (a skill of the same name from another
//!    place does not count) and be enabled, unless the eval lists it in `disabled_skills`.
//!
//! Either way the result carries [`SkillDiscovery`] in `skill_discovery` (`None` when the eval
//! requested no skill folder): what was requested, what the runtime discovered (with source and
//! path), which requested skills were missing or disabled, and the diagnostics.
//!
//! A skill the runtime lists from a requested folder that the local check did not see (a skill
//! folder deeper than the folder's immediate subfolders, which the runtime searches too, or one
//! that appeared after the check) does not fail the run, but is named in `unchecked` and in a
//! warning: the model is offered it.
//!
//! 3. **What the model received**: being listed is not being seen. The runtime renders the
//!    skills into the prompt under a character budget (measured on 1.0.102: the first skills, in
//!    its order, with their description; further ones by name only; the rest not at all). With
//!    skill folders the run's request proxy reads the `<available_skills>` block of every main
//!    agent model request ([`offered_skills`]); after the run, `model_view` records for each
//!    requested skill how the first request offered it (`offered`: described, name only, not
//!    offered), keeps that request's view (`model_saw`), and warns naming the requested skills
//!    cut to their name or left out, and any skill a request offered that the runtime did not
//!    list before the prompt.
//!
//! The data lives in [`crate::evidence::skills`] (re-exported here); this module is the run
//! stage that fills [`SkillDiscovery`] by talking to the live session. Invocations
//! ([`SkillInvocation`]) are read from the event log by the evidence mapper.

use std::path::{Path, PathBuf};

use github_copilot_sdk::session::Session;

use crate::customization::skill::requested_skills;
pub use crate::evidence::skills::{
    DiscoveredSkill, OfferedSkills, RequestedSkill, SkillDiscovery, SkillInvocation, SkillOffer,
    offered_skills, skill_invocations,
};

/// How every warning of this module begins (the run's `warnings` keep them with others').
pub(crate) const WARNING_PREFIX: &str = "skills: ";

/// Most skill names a warning lists (a count says how many more).
const LISTED_IN_WARNINGS: usize = 30;

/// Most discovered skills named in a failure message (all are in `discovered`).
const LISTED_IN_ERRORS: usize = 20;

/// Step 1: validate the requested folders locally. Returns the discovery so far and, when it
/// failed, the error text.
pub(crate) fn check_locally(directories: &[PathBuf]) -> (SkillDiscovery, Option<String>) {
    let mut discovery = SkillDiscovery::default();
    match requested_skills(directories) {
        Ok(skills) => {
            for skill in skills {
                discovery
                    .warnings
                    .extend(skill.warnings.iter().map(ToString::to_string));
                discovery.requested.push(RequestedSkill {
                    path: canonical(&skill.path),
                    name: skill.name,
                    model_invocable: skill.disable_model_invocation != Some(true),
                    offered: None,
                });
            }
            (discovery, None)
        }
        Err(error) => {
            for problem in &error.problems {
                let line = problem.to_string();
                if problem.is_error() {
                    discovery.errors.push(line);
                } else {
                    discovery.warnings.push(line);
                }
            }
            let text = format!(
                "skill setup failed before the runtime started: {}",
                discovery.errors.join("; ")
            );
            (discovery, Some(text))
        }
    }
}

/// Step 2: ask the runtime which skills it discovered and compare. Returns the error text when
/// the check failed.
pub(crate) async fn discover(
    session: &Session,
    discovery: &mut SkillDiscovery,
    directories: &[PathBuf],
    disabled_skills: &[String],
) -> Option<String> {
    let rpc = session.rpc();
    let skills = rpc.skills();
    if let Err(e) = skills.ensure_loaded().await {
        discovery
            .errors
            .push(format!("asking the runtime to load its skills failed: {e}"));
        return Some(format!(
            "skill setup failed before any model request: asking the runtime to load its skills failed: {e}"
        ));
    }
    match skills.reload().await {
        Ok(diagnostics) => {
            discovery.warnings.extend(
                diagnostics
                    .warnings
                    .into_iter()
                    .map(|w| format!("runtime: {w}")),
            );
            discovery.errors.extend(
                diagnostics
                    .errors
                    .into_iter()
                    .map(|e| format!("runtime: {e}")),
            );
        }
        Err(e) => {
            discovery
                .errors
                .push(format!("reloading the runtime's skills failed: {e}"));
            return Some(format!(
                "skill setup failed before any model request: reloading the runtime's skills failed: {e}"
            ));
        }
    }
    let listed = match skills.list().await {
        Ok(list) => list,
        Err(e) => {
            discovery
                .errors
                .push(format!("listing the runtime's skills failed: {e}"));
            return Some(format!(
                "skill setup failed before any model request: listing the runtime's skills failed: {e}"
            ));
        }
    };
    discovery.discovered = listed
        .skills
        .into_iter()
        .map(|s| DiscoveredSkill {
            source: serde_json::to_value(&s.source)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_else(|| "unknown".to_owned()),
            path: s.path.filter(|p| !p.is_empty()).map(PathBuf::from),
            name: s.name,
            description: s.description,
            enabled: s.enabled,
            user_invocable: s.user_invocable,
        })
        .collect();
    discovery.complete = true;
    unchecked(discovery, directories);
    compare(discovery, disabled_skills)
}

/// Note in `unchecked` (with a warning) each skill the runtime listed from one of the requested
/// `directories` that the local check did not request. Pure.
pub(crate) fn unchecked(discovery: &mut SkillDiscovery, directories: &[PathBuf]) {
    let folders: Vec<PathBuf> = directories.iter().map(|d| canonical(d)).collect();
    for found in &discovery.discovered {
        let Some(path) = found.path.as_deref().map(canonical) else {
            continue;
        };
        let Some(folder) = folders.iter().find(|f| path.starts_with(f)) else {
            continue;
        };
        if discovery.requested.iter().any(|r| r.path == path) {
            continue;
        }
        discovery.unchecked.push(found.name.clone());
        discovery.warnings.push(format!(
            "{WARNING_PREFIX}the runtime loaded skill `{}` ({}) from the requested folder {}, which the check before the runtime did not see (a skill folder below the folder's immediate subfolders, or one that appeared after the check): the model is offered it unchecked",
            found.name,
            path.display(),
            folder.display()
        ));
    }
}

/// After the run: what the main agent's model requests offered the model (`offered`, one per
/// request in order, from the request proxy), against the check. Sets each requested skill's
/// `offered` and `model_saw` from the first request, and returns the warnings: the requested
/// skills (model-invocable, not in `disabled_skills`, discovered) that reached the model by
/// name only or not at all, each skill of `unchecked`, and each skill a request offered that
/// the runtime did not list before the prompt. Nothing when no request was seen. Pure.
pub(crate) fn model_view(
    discovery: &mut SkillDiscovery,
    offered: &[OfferedSkills],
    disabled_skills: &[String],
) -> Vec<String> {
    let mut warnings: Vec<String> = discovery
        .warnings
        .iter()
        .filter(|w| w.starts_with(WARNING_PREFIX))
        .cloned()
        .collect();
    let Some(first) = offered.first() else {
        return warnings;
    };
    for requested in &mut discovery.requested {
        requested.offered = Some(first.offer(&requested.name));
    }
    discovery.model_saw = Some(first.clone());
    let expected: Vec<&RequestedSkill> = discovery
        .requested
        .iter()
        .filter(|r| {
            r.model_invocable
                && !disabled_skills.contains(&r.name)
                && !discovery.missing.contains(&r.name)
        })
        .collect();
    let with = |offer: SkillOffer| -> Vec<String> {
        expected
            .iter()
            .filter(|r| r.offered == Some(offer))
            .map(|r| r.name.clone())
            .collect()
    };
    let name_only = with(SkillOffer::NameOnly);
    if !name_only.is_empty() {
        warnings.push(format!(
            "{WARNING_PREFIX}{} of the {} requested skills reached the model by name only, without their description (the runtime gives descriptions to its first skills until its prompt budget for them runs out; {} skills were described): {}",
            name_only.len(),
            discovery.requested.len(),
            first.described.len(),
            listed(&name_only)
        ));
    }
    let not_offered = with(SkillOffer::NotOffered);
    if !not_offered.is_empty() {
        let cut = if first.left_out > 0 {
            format!(
                "the runtime's list of skill names was cut: \"... and {} more\"",
                first.left_out
            )
        } else {
            "the prompt's skill list does not name them".to_owned()
        };
        warnings.push(format!(
            "{WARNING_PREFIX}{} of the {} requested skills were not offered to the model at all ({cut}): {}",
            not_offered.len(),
            discovery.requested.len(),
            listed(&not_offered)
        ));
    }
    let mut unlisted: Vec<String> = Vec::new();
    for (number, request) in offered.iter().enumerate() {
        for name in request.described.iter().chain(&request.name_only) {
            if !discovery.discovered(name) && !unlisted.contains(name) {
                unlisted.push(name.clone());
                warnings.push(format!(
                    "{WARNING_PREFIX}the main agent's model request {} offered skill `{name}`, which the runtime did not list before the prompt (the check never saw it)",
                    number + 1
                ));
            }
        }
    }
    warnings
}

/// `a, b, c` (at most [`LISTED_IN_WARNINGS`] names, then `and N more`).
fn listed(names: &[String]) -> String {
    let shown = names
        .iter()
        .take(LISTED_IN_WARNINGS)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    match names.len().saturating_sub(LISTED_IN_WARNINGS) {
        0 => shown,
        more => format!("{shown} and {more} more"),
    }
}

/// Compare the requested skills with the runtime's list; fill `missing` and `disabled` and
/// return the error text when any requested skill is missing or unexpectedly disabled. Pure.
pub(crate) fn compare(
    discovery: &mut SkillDiscovery,
    disabled_skills: &[String],
) -> Option<String> {
    let mut problems = Vec::new();
    for requested in &discovery.requested {
        let same_path = discovery.discovered.iter().find(|d| {
            d.name == requested.name
                && d.path.as_deref().map(canonical).as_deref() == Some(requested.path.as_path())
        });
        match same_path {
            None => {
                discovery.missing.push(requested.name.clone());
                let elsewhere: Vec<String> = discovery
                    .discovered
                    .iter()
                    .filter(|d| d.name == requested.name)
                    .map(describe)
                    .collect();
                let mut line = format!(
                    "requested skill `{}` ({}) was not discovered by the runtime",
                    requested.name,
                    requested.path.display()
                );
                if !elsewhere.is_empty() {
                    line.push_str(&format!(
                        "; a skill of that name came from elsewhere: {}",
                        elsewhere.join(", ")
                    ));
                }
                problems.push(line);
            }
            Some(found) if !found.enabled && !disabled_skills.contains(&requested.name) => {
                discovery.disabled.push(requested.name.clone());
                problems.push(format!(
                    "requested skill `{}` ({}) is disabled in the runtime (it is not in disabled_skills)",
                    requested.name,
                    requested.path.display()
                ));
            }
            Some(_) => {}
        }
    }
    if problems.is_empty() {
        return None;
    }
    let seen: Vec<String> = discovery
        .discovered
        .iter()
        .take(LISTED_IN_ERRORS)
        .map(describe)
        .collect();
    let more = discovery.discovered.len().saturating_sub(LISTED_IN_ERRORS);
    let seen = if seen.is_empty() {
        "none".to_owned()
    } else if more > 0 {
        format!("{} and {more} more", seen.join(", "))
    } else {
        seen.join(", ")
    };
    discovery.errors.extend(problems.iter().cloned());
    Some(format!(
        "skill setup failed before any model request: {}; the runtime discovered: {seen}",
        problems.join("; ")
    ))
}

/// `name (source, path[, disabled])`.
fn describe(skill: &DiscoveredSkill) -> String {
    let mut parts = vec![skill.source.clone()];
    if let Some(path) = &skill.path {
        parts.push(path.display().to_string());
    }
    if !skill.enabled {
        parts.push("disabled".to_owned());
    }
    format!("{} ({})", skill.name, parts.join(", "))
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn discovered(name: &str, path: &str, enabled: bool) -> DiscoveredSkill {
        DiscoveredSkill {
            name: name.into(),
            description: String::new(),
            source: "custom".into(),
            path: Some(PathBuf::from(path)),
            enabled,
            user_invocable: true,
        }
    }

    fn requested(names: &[(&str, &str)]) -> SkillDiscovery {
        SkillDiscovery {
            requested: names
                .iter()
                .map(|(n, p)| RequestedSkill {
                    name: (*n).into(),
                    path: PathBuf::from(p),
                    model_invocable: true,
                    offered: None,
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn every_requested_skill_must_be_discovered_at_its_path_and_enabled() {
        let mut d = requested(&[("a", "/s/a/SKILL.md"), ("b", "/s/b/SKILL.md")]);
        d.discovered = vec![
            discovered("a", "/s/a/SKILL.md", true),
            discovered("b", "/s/b/SKILL.md", true),
            discovered("extra", "/x/SKILL.md", false),
        ];
        assert_eq!(compare(&mut d, &[]), None);
        assert!(d.missing.is_empty() && d.disabled.is_empty());

        let mut d = requested(&[("a", "/s/a/SKILL.md"), ("b", "/s/b/SKILL.md")]);
        d.discovered = vec![
            discovered("a", "/elsewhere/a/SKILL.md", true),
            discovered("b", "/s/b/SKILL.md", false),
        ];
        let error = compare(&mut d, &[]).unwrap();
        assert_eq!(d.missing, ["a"]);
        assert_eq!(d.disabled, ["b"]);
        assert!(error.starts_with("skill setup failed before any model request: requested skill `a` (/s/a/SKILL.md) was not discovered by the runtime; a skill of that name came from elsewhere: a (custom, /elsewhere/a/SKILL.md)"), "{error}");
        assert!(
            error.contains("requested skill `b` (/s/b/SKILL.md) is disabled"),
            "{error}"
        );
        assert!(error.ends_with("the runtime discovered: a (custom, /elsewhere/a/SKILL.md), b (custom, /s/b/SKILL.md, disabled)"), "{error}");
        assert_eq!(d.errors.len(), 2);
    }

    #[test]
    fn a_skill_the_eval_disables_may_be_disabled() {
        let mut d = requested(&[("b", "/s/b/SKILL.md")]);
        d.discovered = vec![discovered("b", "/s/b/SKILL.md", false)];
        assert_eq!(compare(&mut d, &["b".to_owned()]), None);
    }

    #[test]
    fn nothing_discovered_says_so() {
        let mut d = requested(&[("a", "/s/a/SKILL.md")]);
        let error = compare(&mut d, &[]).unwrap();
        assert!(error.ends_with("the runtime discovered: none"), "{error}");
    }

    #[test]
    fn local_check_lists_requested_skills_or_fails_before_the_runtime() {
        let dir = tempfile::tempdir().unwrap();
        let skill = dir.path().join("ok");
        std::fs::create_dir(&skill).unwrap();
        std::fs::write(
            skill.join("SKILL.md"),
            "---\nname: ok\ndescription: d\n---\nB.\n",
        )
        .unwrap();
        let (d, failure) = check_locally(std::slice::from_ref(&skill));
        assert_eq!(failure, None);
        assert_eq!(d.requested.len(), 1);
        assert_eq!(
            d.requested[0].path,
            skill.join("SKILL.md").canonicalize().unwrap()
        );
        assert!(!d.complete);

        let empty = dir.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        let (d, failure) = check_locally(&[empty]);
        let failure = failure.unwrap();
        assert!(
            failure.starts_with("skill setup failed before the runtime started: "),
            "{failure}"
        );
        assert!(failure.contains("error[skill-md-missing]"), "{failure}");
        assert_eq!(d.errors.len(), 1);
        assert!(d.requested.is_empty());
    }

    /// A Chat Completions request whose system prompt holds `block` (as runtime 1.0.102 writes
    /// it), and a `skill` tool.
    fn request(block: &str) -> serde_json::Value {
        serde_json::json!({
            "model": "m",
            "messages": [
                {"role": "system", "content": format!("You are an agent.\n<skill>\n<available_skills>\n{block}\n</available_skills>\n</skill>\n<sql>...</sql>")},
                {"role": "user", "content": "hi"}
            ],
            "tools": [{"type": "function", "function": {"name": "skill", "description": "Load a skill", "parameters": {}}}]
        })
    }

    fn described(name: &str) -> String {
        format!(
            "<skill>\n  <name>{name}</name>\n  <description>Does &quot;{name}&quot; things.</description>\n  <location>custom</location>\n</skill>"
        )
    }

    #[test]
    fn the_offered_skills_are_read_from_the_prompts_block() {
        let block = format!(
            "{}\n{}\nAdditional skills available (invoke by name): c, d-e, customize-cloud-agent... and 641 more",
            described("a"),
            described("b")
        );
        let offered = offered_skills(&request(&block));
        assert_eq!(offered.described, ["a", "b"]);
        assert_eq!(offered.name_only, ["c", "d-e", "customize-cloud-agent"]);
        assert_eq!(offered.left_out, 641);
        assert_eq!(offered.offer("a"), SkillOffer::Described);
        assert_eq!(offered.offer("d-e"), SkillOffer::NameOnly);
        assert_eq!(offered.offer("zz"), SkillOffer::NotOffered);
        // The whole list by name, nothing left out; a Responses request's instructions.
        let responses = serde_json::json!({"model": "m", "instructions": format!("<available_skills>\n{}\nAdditional skills available (invoke by name): x, y\n</available_skills>", described("w")), "input": []});
        let offered = offered_skills(&responses);
        assert_eq!(
            (
                offered.described.len(),
                offered.name_only.len(),
                offered.left_out
            ),
            (1, 2, 0)
        );
        // No block: nothing offered.
        assert_eq!(
            offered_skills(&serde_json::json!({"messages": []})),
            OfferedSkills::default()
        );
    }

    fn view(described: &[&str], name_only: &[&str], left_out: u64) -> OfferedSkills {
        OfferedSkills {
            described: described.iter().map(|s| (*s).to_owned()).collect(),
            name_only: name_only.iter().map(|s| (*s).to_owned()).collect(),
            left_out,
        }
    }

    #[test]
    fn the_model_view_marks_each_requested_skill_and_warns_of_the_cut_ones() {
        let mut d = requested(&[
            ("a", "/s/a/SKILL.md"),
            ("b", "/s/b/SKILL.md"),
            ("c", "/s/c/SKILL.md"),
            ("off", "/s/off/SKILL.md"),
        ]);
        d.discovered = ["a", "b", "c", "off"]
            .iter()
            .map(|n| discovered(n, &format!("/s/{n}/SKILL.md"), true))
            .collect();
        let warnings = model_view(
            &mut d,
            &[view(&["a"], &["b"], 7), view(&["a"], &["b", "late"], 0)],
            &["off".to_owned()],
        );
        let offers: Vec<Option<SkillOffer>> = d.requested.iter().map(|r| r.offered).collect();
        assert_eq!(
            offers,
            [
                Some(SkillOffer::Described),
                Some(SkillOffer::NameOnly),
                Some(SkillOffer::NotOffered),
                Some(SkillOffer::NotOffered)
            ]
        );
        assert_eq!(d.model_saw.as_ref().unwrap().left_out, 7);
        assert_eq!(
            warnings,
            [
                "skills: 1 of the 4 requested skills reached the model by name only, without their description (the runtime gives descriptions to its first skills until its prompt budget for them runs out; 1 skills were described): b",
                "skills: 1 of the 4 requested skills were not offered to the model at all (the runtime's list of skill names was cut: \"... and 7 more\"): c",
                "skills: the main agent's model request 2 offered skill `late`, which the runtime did not list before the prompt (the check never saw it)",
            ]
        );
        // No model request seen: nothing is claimed.
        let mut d = requested(&[("a", "/s/a/SKILL.md")]);
        assert!(model_view(&mut d, &[], &[]).is_empty());
        assert_eq!(d.requested[0].offered, None);
        assert_eq!(d.model_saw, None);
    }

    #[test]
    fn a_skill_the_runtime_found_under_a_requested_folder_but_the_check_did_not_is_named() {
        let mut d = requested(&[("a", "/s/a/SKILL.md")]);
        d.discovered = vec![
            discovered("a", "/s/a/SKILL.md", true),
            discovered("deep", "/s/group/deep/SKILL.md", true),
            discovered("builtin", "/cache/builtin/SKILL.md", true),
        ];
        unchecked(&mut d, &[PathBuf::from("/s")]);
        assert_eq!(d.unchecked, ["deep"]);
        assert_eq!(d.warnings.len(), 1);
        assert!(d.warnings[0].starts_with("skills: the runtime loaded skill `deep` (/s/group/deep/SKILL.md) from the requested folder /s, which the check before the runtime did not see"), "{}", d.warnings[0]);
        // Carried into the run's warnings even without a model request.
        assert_eq!(model_view(&mut d, &[], &[]), d.warnings);
    }
}
