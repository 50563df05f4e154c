//! What the normalisers know about one side of a comparison ([`Context`]): the folder
//! `${workdir}` stands for, in every spelling, and the one a reply's `${workdir}` is filled
//! with.

use serde_json::Value;

use super::format::Role;
use super::spellings::spellings;
use crate::run::RunFolders;

/// What the normalisers need to know about one side.
#[derive(Debug, Clone, Default)]
pub(crate) struct Context {
    /// Every spelling of the folder `${workdir}` stands for (request side), longest first;
    /// empty when unknown (the recorded side).
    pub workdirs: Vec<String>,
    /// The spelling a reply's `${workdir}` is filled with: the one the system prompt's
    /// working directory implies, else the one the run gave.
    pub workdir: Option<String>,
    /// Whether this is a live request's side (or a recording's): the system prompt is real
    /// text, so its user-controlled parts are hashed ([`super::prompt::prompt_parts`]).
    pub live: bool,
}

impl Context {
    /// The context of one request: the folder `${workdir}` stands for ([`RunFolders::root`],
    /// when the run said) in every spelling ([`spellings`]), and in the spelling the request's
    /// system prompt states: its `Current working directory:` line names the session's working
    /// directory, so the root's spelling is that path less the session's folders below the
    /// root. Without `folders` (the run did not say), the stated directory is the root.
    pub fn for_request(messages: &[Value], folders: Option<&RunFolders>) -> Context {
        let stated = workdir_from_system_prompt(messages);
        let stated_root = match folders {
            Some(folders) => stated.and_then(|stated| root_as_stated(&stated, folders)),
            None => stated,
        };
        let mut workdirs: Vec<String> = Vec::new();
        for dir in stated_root
            .iter()
            .map(std::path::PathBuf::from)
            .chain(folders.map(|f| f.root.clone()))
        {
            for spelling in spellings(&dir) {
                if !workdirs.contains(&spelling) {
                    workdirs.push(spelling);
                }
            }
        }
        // Longest first, so that `/private/var/x` is replaced before `/var/x` inside it.
        workdirs.sort_by_key(|s| std::cmp::Reverse(s.len()));
        Context {
            workdirs,
            workdir: stated_root.or_else(|| folders.map(|f| f.root.display().to_string())),
            live: true,
        }
    }
}

/// The root folder of `folders` spelled as `stated` (the session's working directory as the
/// system prompt names it) spells the session's: `stated` less the session's folders below the
/// root. `None` when `stated` does not end with them (it names some other folder).
fn root_as_stated(stated: &str, folders: &RunFolders) -> Option<String> {
    let below = folders.session.strip_prefix(&folders.root).ok()?;
    let stated = std::path::Path::new(stated);
    if !stated.ends_with(below) {
        return None;
    }
    let mut root = stated.to_path_buf();
    for _ in below.components() {
        root.pop();
    }
    Some(root.display().to_string())
}

/// The working directory a request's system prompt states (`Current working directory: <path>`
/// on a line of its own, as runtime 1.0.102 writes it), if any.
pub(crate) fn workdir_from_system_prompt(messages: &[Value]) -> Option<String> {
    const MARKER: &str = "Current working directory: ";
    messages
        .iter()
        .filter(|m| {
            m.get("role")
                .and_then(Value::as_str)
                .and_then(Role::from_name)
                == Some(Role::System)
        })
        .filter_map(|m| m.get("content").and_then(Value::as_str))
        .flat_map(str::lines)
        .find_map(|line| {
            let at = line.find(MARKER)?;
            let path = line[at + MARKER.len()..].trim();
            (!path.is_empty()).then(|| path.to_owned())
        })
}
