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
//! The data lives in [`crate::evidence::skills`] (re-exported here); this module is the run
//! stage that fills [`SkillDiscovery`] by talking to the live session. Invocations
//! ([`SkillInvocation`]) are read from the event log by the evidence mapper.

use std::path::{Path, PathBuf};

use github_copilot_sdk::session::Session;

use crate::customization::skill::requested_skills;
pub use crate::evidence::skills::{
    DiscoveredSkill, RequestedSkill, SkillDiscovery, SkillInvocation, skill_invocations,
};

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
    compare(discovery, disabled_skills)
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
}
