//! The ablated side of a run ([`RunOptions::ablate`](super::RunOptions::ablate)): which files
//! are inputs of each kind (named by the customization loaders' own file names), the runtime
//! home cleared of them, and the working directory checked to hold no copy of them.

use std::path::{Path, PathBuf};

use crate::customization::repo::files_under;
use crate::customization::{agent, instructions, skill};
use crate::eval::Ablate;

/// The files an MCP configuration is read from: the runtime home's `mcp-config.json`, a
/// repository's `.mcp.json`.
const MCP_FILES: [&str; 2] = ["mcp-config.json", ".mcp.json"];

/// The entries of a runtime home that hold inputs of `kind`, relative to it.
fn home_entries(kind: Ablate) -> &'static [&'static str] {
    match kind {
        Ablate::Skills => &["skills"],
        Ablate::Agents => &["agents"],
        Ablate::Instructions => &[instructions::REPOSITORY_FILE, "instructions"],
        Ablate::Mcp => &MCP_FILES,
    }
}

/// Whether a file named `name` is an input of `kind`: a skill's `SKILL.md`, an `*.agent.md`,
/// `copilot-instructions.md` or an `*.instructions.md`, an MCP configuration file.
fn is_input(kind: Ablate, name: &str) -> bool {
    match kind {
        Ablate::Skills => name == skill::SKILL_FILE,
        Ablate::Agents => name.ends_with(agent::AGENT_SUFFIX),
        Ablate::Instructions => {
            name == instructions::REPOSITORY_FILE || name.ends_with(instructions::PATH_SUFFIX)
        }
        Ablate::Mcp => MCP_FILES.contains(&name),
    }
}

/// The input files of `kinds` under `dir` (recursive), sorted.
pub(super) fn inputs_under(dir: &Path, kinds: &[Ablate]) -> Vec<PathBuf> {
    files_under(dir, |name| kinds.iter().any(|&kind| is_input(kind, name)))
}

/// Remove every input of `kinds` from the runtime home `home`: its `skills/`, `agents/`,
/// `copilot-instructions.md`, `instructions/`, `mcp-config.json` as asked, then any input file
/// left under it.
///
/// Errors: a removal failed (the message names the path).
pub(super) fn clear_home(home: &Path, kinds: &[Ablate]) -> Result<(), String> {
    let fail = |path: &Path, e: std::io::Error| {
        format!(
            "cannot remove {} from the ablated run's runtime home: {e}",
            path.display()
        )
    };
    for &kind in kinds {
        for entry in home_entries(kind) {
            let path = home.join(entry);
            if path.is_dir() {
                std::fs::remove_dir_all(&path).map_err(|e| fail(&path, e))?;
            } else if path.exists() {
                std::fs::remove_file(&path).map_err(|e| fail(&path, e))?;
            }
        }
    }
    for path in inputs_under(home, kinds) {
        std::fs::remove_file(&path).map_err(|e| fail(&path, e))?;
    }
    Ok(())
}

/// The error of an ablated run whose working directory holds a copy of a removed input (the
/// session could read it off disk and the side would measure nothing); `None` when it holds
/// none.
pub(super) fn copies_in_working_directory(dir: &Path, kinds: &[Ablate]) -> Option<String> {
    let found = inputs_under(dir, kinds);
    if found.is_empty() {
        return None;
    }
    let shown: Vec<String> = found.iter().map(|p| p.display().to_string()).collect();
    let kinds: Vec<&str> = kinds.iter().map(|kind| kind.as_str()).collect();
    Some(format!(
        "the ablated run (without {}) has a working directory holding a copy of a removed input: {}; the session could read it off disk, so the side would measure nothing. Give the eval a working directory without it (the test's own `ctx.workdir()` starts empty)",
        kinds.join(", "),
        shown.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "x").unwrap();
    }

    #[test]
    fn the_home_loses_exactly_the_ablated_kinds() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        for file in [
            "skills/notes/SKILL.md",
            "agents/reviewer.agent.md",
            "copilot-instructions.md",
            "mcp-config.json",
            "session-state/x.json",
            "elsewhere/SKILL.md",
        ] {
            write(&h.join(file));
        }
        clear_home(h, &[Ablate::Skills]).unwrap();
        assert!(!h.join("skills").exists());
        assert!(!h.join("elsewhere/SKILL.md").exists());
        for kept in [
            "agents/reviewer.agent.md",
            "copilot-instructions.md",
            "mcp-config.json",
            "session-state/x.json",
        ] {
            assert!(h.join(kept).is_file(), "{kept}");
        }
        clear_home(h, &[Ablate::Agents, Ablate::Instructions, Ablate::Mcp]).unwrap();
        assert!(!h.join("agents").exists());
        assert!(!h.join("copilot-instructions.md").exists());
        assert!(!h.join("mcp-config.json").exists());
        assert!(h.join("session-state/x.json").is_file());
    }

    #[test]
    fn a_working_directory_holding_a_removed_input_is_named() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("input.txt"));
        assert_eq!(
            copies_in_working_directory(dir.path(), &[Ablate::Skills]),
            None
        );
        write(&dir.path().join(".github/skills/notes/SKILL.md"));
        let error = copies_in_working_directory(dir.path(), &[Ablate::Skills]).unwrap();
        assert!(error.contains("without skills"), "{error}");
        assert!(error.contains(".github/skills/notes/SKILL.md"), "{error}");
        assert_eq!(
            copies_in_working_directory(dir.path(), &[Ablate::Mcp]),
            None
        );
    }
}
