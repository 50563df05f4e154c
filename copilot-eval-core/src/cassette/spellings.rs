//! The spellings of a directory a runtime may print (as given, and canonical), for the
//! `workdir` normaliser and the scan of temporary folders.

/// Every spelling of `dir` a runtime may print: as given (without a trailing separator), and
/// canonical (symbolic links resolved: on macOS `/var/folders/...` is
/// `/private/var/folders/...`). A directory that no longer exists is resolved through its
/// longest existing ancestor. Empty for an empty path.
pub(crate) fn spellings(dir: &std::path::Path) -> Vec<String> {
    let given = dir.display().to_string();
    let given = given.trim_end_matches(['/', '\\']).to_owned();
    if given.is_empty() {
        return Vec::new();
    }
    let mut out = vec![given];
    let mut existing = dir.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    let canonical = loop {
        if let Ok(canonical) = std::fs::canonicalize(&existing) {
            break Some(
                rest.iter()
                    .rev()
                    .fold(canonical, |path, part| path.join(part)),
            );
        }
        match (
            existing.file_name().map(ToOwned::to_owned),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => break None,
        }
    };
    if let Some(canonical) = canonical {
        let canonical = canonical.display().to_string();
        if !out.contains(&canonical) {
            out.push(canonical);
        }
    }
    out
}
