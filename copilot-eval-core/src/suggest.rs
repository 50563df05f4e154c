// "Did you mean ...?" (documented where it is declared: core's lib.rs; the attribute's crate
// includes this file too, so it holds no inner attribute or doc comment).

use std::path::{Path, PathBuf};

/// How alike two names must be (Jaro-Winkler similarity, 0 to 1) for one to be offered as what
/// the user meant: a typo, a missing or extra letter or a swapped pair clears it; an unrelated
/// name does not.
const SIMILAR: f64 = 0.85;

/// The candidate most like `written`, if any is alike enough to be a typo of it.
pub(crate) fn nearest<'a>(
    written: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|name| (strsim::jaro_winkler(written, name), name))
        .filter(|(score, name)| *score >= SIMILAR && *name != written)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, name)| name)
}

/// For a folder `missing` that does not exist: the existing folder beside it (same parent) whose
/// name is nearest to `missing`'s, as `missing` was written (relative paths stay relative).
/// `resolved` is `missing` resolved against the base it is relative to.
pub(crate) fn nearest_sibling(missing: &Path, resolved: &Path) -> Option<PathBuf> {
    let written = resolved.file_name()?.to_str()?;
    let folders: Vec<String> = std::fs::read_dir(resolved.parent()?)
        .ok()?
        .flatten()
        .filter(|entry| entry.path().is_dir())
        .filter_map(|entry| entry.file_name().into_string().ok())
        .collect();
    let name = nearest(written, folders.iter().map(String::as_str))?;
    Some(missing.with_file_name(name))
}

/// " (did you mean skills/math-helper?)" for a missing folder with a near sibling, else "".
pub(crate) fn sibling_hint(missing: &Path, resolved: &Path) -> String {
    nearest_sibling(missing, resolved)
        .map(|path| format!(" (did you mean {}?)", path.display()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_finds_its_name_and_an_unrelated_word_finds_none() {
        let keys = ["max_tool_calls", "model", "timeout_s"];
        assert_eq!(nearest("max_tool_call", keys), Some("max_tool_calls"));
        assert_eq!(nearest("modle", keys), Some("model"));
        assert_eq!(nearest("flavour", keys), None);
    }

    #[test]
    fn a_missing_skill_folder_is_offered_its_nearest_sibling() {
        let root = tempfile::tempdir().unwrap();
        for name in ["math-helper", "release-notes"] {
            std::fs::create_dir_all(root.path().join("skills").join(name)).unwrap();
        }
        let written = Path::new("skills/math-helpr");
        let resolved = root.path().join(written);
        assert_eq!(
            nearest_sibling(written, &resolved),
            Some(PathBuf::from("skills/math-helper"))
        );
        let far = Path::new("skills/weather");
        assert_eq!(nearest_sibling(far, &root.path().join(far)), None);
        let no_parent = Path::new("nowhere/math-helper");
        assert_eq!(
            nearest_sibling(no_parent, &root.path().join(no_parent)),
            None
        );
    }
}
