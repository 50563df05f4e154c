//! A pooled runtime's own folders — its home (`COPILOT_HOME`, which is also its `GH_CONFIG_DIR`,
//! `XDG_CONFIG_HOME` and `XDG_STATE_HOME`) and its working directory — as they were once the
//! runtime had started, and their reset to that after every lease.
//!
//! A session's tools run as the runtime's children, with the runtime's environment: the
//! agent's shell can write into the runtime's home and directory. A private runtime's home is
//! removed with the run; a pooled runtime's would carry what one eval's shell wrote there to
//! the next eval on the runtime. So every lease finds these folders as the runtime's start left
//! them, as a fresh runtime's start would: what a lease added is removed, what it changed or
//! removed is put back (contents, permissions, symbolic links). The session's own state goes
//! to the run's `config_directory`, not here, so nothing the runtime needs is lost.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

/// One entry of a folder as it was: a folder, a file with its bytes, or a symbolic link with
/// its target; with its permission bits (none for a link).
#[derive(Debug, PartialEq, Eq)]
enum Entry {
    Folder { mode: u32 },
    File { mode: u32, bytes: Vec<u8> },
    Link { target: PathBuf },
}

/// The folders of one runtime, each with its entries as they were (relative paths, parents
/// before their children).
#[derive(Debug)]
pub(super) struct Folders {
    roots: Vec<(PathBuf, Entry, BTreeMap<PathBuf, Entry>)>,
}

impl Folders {
    /// `roots` as they are now, every file read.
    ///
    /// # Errors
    /// A folder or file could not be read.
    pub(super) fn snapshot(roots: &[&Path]) -> io::Result<Self> {
        let mut kept = Vec::new();
        for root in roots {
            let mut entries = BTreeMap::new();
            walk(root, Path::new(""), &mut |relative, path| {
                entries.insert(relative.to_path_buf(), entry_of(path)?);
                Ok(())
            })?;
            kept.push((root.to_path_buf(), entry_of(root)?, entries));
        }
        Ok(Self { roots: kept })
    }

    /// Put every folder back as [`Folders::snapshot`] found it: remove what was added, write
    /// back what was changed or removed. Returns what could not be done, each naming the path
    /// (empty: the folders are as they were).
    pub(super) fn reset(&self) -> Vec<String> {
        let mut errors = Vec::new();
        for (root, root_entry, entries) in &self.roots {
            if let Err(e) = restore(root, root_entry) {
                errors.push(format!("{}: {e}", root.display()));
                continue;
            }
            // Kept folders readable again first, so that the walk below can see into them.
            for (relative, entry) in entries {
                let path = root.join(relative);
                if let Entry::Folder { mode } = entry
                    && std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir())
                {
                    let _ = set_mode(&path, *mode);
                }
            }
            // What is there now and was not, or is of another kind: removed (a folder with
            // everything in it, a link itself and never its target).
            let mut added = Vec::new();
            let walked = walk(root, Path::new(""), &mut |relative, path| {
                let kind_kept = entries.get(relative).map(kind);
                if kind_kept != Some(kind_now(path)?) {
                    added.push(path.to_path_buf());
                }
                Ok(())
            });
            if let Err(e) = walked {
                errors.push(format!("{}: {e}", root.display()));
            }
            for path in added {
                let removed = match std::fs::symlink_metadata(&path) {
                    Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(&path),
                    Ok(_) => std::fs::remove_file(&path),
                    // Already gone with a folder removed before it.
                    Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                    Err(e) => Err(e),
                };
                if let Err(e) = removed {
                    errors.push(format!("removing {}: {e}", path.display()));
                }
            }
            // What was there: as it was (parents come first in the map's order).
            for (relative, entry) in entries {
                let path = root.join(relative);
                if let Err(e) = restore(&path, entry) {
                    errors.push(format!("restoring {}: {e}", path.display()));
                }
            }
        }
        errors
    }
}

/// Call `visit` with each entry under `dir` (its path relative to the root, and its path),
/// parents before their children; links are not followed.
fn walk(
    dir: &Path,
    relative: &Path,
    visit: &mut dyn FnMut(&Path, &Path) -> io::Result<()>,
) -> io::Result<()> {
    let mut names: Vec<_> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<io::Result<_>>()?;
    names.sort();
    for name in names {
        let path = dir.join(&name);
        let relative = relative.join(&name);
        visit(&relative, &path)?;
        if std::fs::symlink_metadata(&path)?.is_dir() {
            walk(&path, &relative, visit)?;
        }
    }
    Ok(())
}

/// 0: a folder, 1: a file, 2: a link (anything else counts as a file and is removed).
fn kind(entry: &Entry) -> u8 {
    match entry {
        Entry::Folder { .. } => 0,
        Entry::File { .. } => 1,
        Entry::Link { .. } => 2,
    }
}

fn kind_now(path: &Path) -> io::Result<u8> {
    let meta = std::fs::symlink_metadata(path)?;
    Ok(if meta.is_dir() {
        0
    } else if meta.file_type().is_symlink() {
        2
    } else if meta.is_file() {
        1
    } else {
        // A socket, a pipe or a device: never kept, so never of a kept kind.
        3
    })
}

fn mode_of(meta: &std::fs::Metadata) -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o7777
    }
    #[cfg(not(unix))]
    {
        u32::from(meta.permissions().readonly())
    }
}

fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let mut permissions = std::fs::metadata(path)?.permissions();
        permissions.set_readonly(mode == 1);
        std::fs::set_permissions(path, permissions)
    }
}

fn entry_of(path: &Path) -> io::Result<Entry> {
    let meta = std::fs::symlink_metadata(path)?;
    Ok(if meta.file_type().is_symlink() {
        Entry::Link {
            target: std::fs::read_link(path)?,
        }
    } else if meta.is_dir() {
        Entry::Folder {
            mode: mode_of(&meta),
        }
    } else {
        Entry::File {
            mode: mode_of(&meta),
            bytes: std::fs::read(path)?,
        }
    })
}

/// Make `path` the entry `kept` again, writing only what differs.
fn restore(path: &Path, kept: &Entry) -> io::Result<()> {
    let now = std::fs::symlink_metadata(path);
    match kept {
        Entry::Folder { mode } => {
            match &now {
                Ok(meta) if meta.is_dir() => {}
                _ => std::fs::create_dir(path)?,
            }
            set_mode(path, *mode)
        }
        Entry::File { mode, bytes } => {
            let same = matches!(&now, Ok(meta) if meta.is_file())
                && std::fs::read(path).is_ok_and(|b| b == *bytes);
            if !same {
                if now.is_ok() {
                    // Write access may have been taken away: give it back first.
                    let _ = set_mode(path, 0o600);
                }
                std::fs::write(path, bytes)?;
            }
            set_mode(path, *mode)
        }
        Entry::Link { target } => {
            let same = matches!(&now, Ok(meta) if meta.file_type().is_symlink())
                && std::fs::read_link(path).is_ok_and(|t| t == *target);
            if !same {
                if now.is_ok() {
                    std::fs::remove_file(path)?;
                }
                #[cfg(unix)]
                std::os::unix::fs::symlink(target, path)?;
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a lease adds is removed (files, folders, links), what it changes or removes is put
    /// back (contents and permissions), and what it left alone is untouched.
    #[cfg(unix)]
    #[test]
    fn a_reset_puts_the_folders_back_as_they_were() {
        use std::os::unix::fs::PermissionsExt;
        let home = tempfile::tempdir().unwrap();
        let cwd = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("keep.txt"), "outside").unwrap();
        std::fs::write(home.path().join("config.json"), "{}").unwrap();
        std::fs::create_dir(home.path().join("pkg")).unwrap();
        std::fs::write(home.path().join("pkg/settings"), "a=1").unwrap();
        std::fs::write(home.path().join("pkg/removed"), "gone soon").unwrap();
        std::os::unix::fs::symlink("config.json", home.path().join("link")).unwrap();
        let folders = Folders::snapshot(&[home.path(), cwd.path()]).unwrap();
        assert_eq!(folders.reset(), Vec::<String>::new(), "nothing to do");

        // A lease's shell: adds, changes, removes, retargets, takes permissions away.
        std::fs::write(home.path().join("copilot-instructions.md"), "POISON").unwrap();
        std::fs::create_dir_all(home.path().join("skills/x")).unwrap();
        std::fs::write(home.path().join("skills/x/SKILL.md"), "POISON").unwrap();
        std::fs::write(home.path().join("config.json"), "{\"poison\":1}").unwrap();
        std::fs::remove_file(home.path().join("pkg/removed")).unwrap();
        std::fs::remove_file(home.path().join("link")).unwrap();
        std::os::unix::fs::symlink(outside.path(), home.path().join("link")).unwrap();
        std::os::unix::fs::symlink(outside.path(), home.path().join("escape")).unwrap();
        std::fs::set_permissions(
            home.path().join("pkg/settings"),
            std::fs::Permissions::from_mode(0o000),
        )
        .unwrap();
        std::fs::write(cwd.path().join("left.txt"), "SECRET").unwrap();
        std::fs::write(home.path().join("pkg/added"), "POISON").unwrap();
        std::fs::set_permissions(
            home.path().join("pkg"),
            std::fs::Permissions::from_mode(0o000),
        )
        .unwrap();

        assert_eq!(folders.reset(), Vec::<String>::new());
        let listing = |dir: &Path| {
            let mut all = Vec::new();
            walk(dir, Path::new(""), &mut |relative, _| {
                all.push(relative.display().to_string());
                Ok(())
            })
            .unwrap();
            all
        };
        assert_eq!(
            listing(home.path()),
            ["config.json", "link", "pkg", "pkg/removed", "pkg/settings"]
        );
        assert_eq!(listing(cwd.path()), Vec::<String>::new());
        assert_eq!(
            std::fs::read_to_string(home.path().join("config.json")).unwrap(),
            "{}"
        );
        assert_eq!(
            std::fs::read_to_string(home.path().join("pkg/removed")).unwrap(),
            "gone soon"
        );
        assert_eq!(
            std::fs::read_link(home.path().join("link")).unwrap(),
            Path::new("config.json")
        );
        let mode = std::fs::metadata(home.path().join("pkg/settings"))
            .unwrap()
            .permissions()
            .mode();
        assert_ne!(mode & 0o600, 0, "{mode:o}");
        assert_eq!(
            std::fs::read_to_string(home.path().join("pkg/settings")).unwrap(),
            "a=1"
        );
        // A link is removed, never followed.
        assert_eq!(
            std::fs::read_to_string(outside.path().join("keep.txt")).unwrap(),
            "outside"
        );
    }
}
