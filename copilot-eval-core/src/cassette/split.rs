//! Splitting a cassette that holds several recorded sessions into one cassette per session
//! (`cargo copilot-eval cassette split`).
//!
//! A replay serves ONE session; a file that holds several (two recordings pasted together, a
//! test's second run recorded into the first run's file) fails with `replay_mismatch` and the
//! advice to split it. [`sessions`] finds the sessions, [`split`] builds one cassette per
//! session, [`split_file`] does both and writes the files.
//!
//! # Which conversations form a session
//!
//! Conversations are compared in the replay's normalised form (consecutive assistant messages
//! merged, [`NORMALIZERS`](super::NORMALIZERS) applied to the recorded side):
//!
//! 1. the **opening** of a conversation is what comes before its first assistant message: the
//!    system prompt (with its `prompt_parts`) and the prompt. Every model request of one session's
//!    main agent starts with the same opening, so conversations with the same opening belong to
//!    the same session (the chains of one session, as the recorder and the copilot-sdk recordings
//!    write them);
//! 2. except for a copy: a conversation identical to one a session already holds starts (or
//!    joins) the next session with that opening, since one session never records the same chain
//!    twice (two runs of the same test with the same replies);
//! 3. a **sub-agent** conversation is one whose first user message contains the `prompt`
//!    argument of a tool call (the `task` tool's) in a conversation with another opening: it
//!    joins that conversation's session (the first such session that does not already hold an
//!    identical conversation).
//!
//! Sessions are numbered by their first conversation. Two runs of the same prompt whose
//! replies differ look like one session's chains; give the grouping by hand then
//! ([`parse_grouping`], `--session`).
//!
//! # Output files
//!
//! The first session keeps the file's name (`greets.yaml`), the next ones get the names the
//! test's later runs replay: `greets-2.yaml`, `greets-3.yaml`, ... (in the same folder, or in
//! the chosen output folder). Each piece keeps the cassette's header and `models:`, and the
//! leading comment lines of the file followed by a line saying which conversations it holds.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::format::{Cassette, CassetteError, Role};
use super::normalize::NormalMessage;
use super::replay::merged_and_normal;

/// Why a cassette could not be split ([`split_file`], [`parse_grouping`]).
#[derive(Debug, thiserror::Error)]
pub enum SplitError {
    /// A grouping given by hand (`--session`) is not a partition of the conversations: a value
    /// that is not a number, a conversation that does not exist, one given twice or one left
    /// out. The message names the flag and the fix.
    #[error("{0}")]
    Grouping(String),
    /// Files the split would write exist, and overwriting was not allowed. The message names
    /// every one of them (what `--force` would replace).
    #[error("{}", exists_message(paths, *is_source))]
    Exists {
        /// The files in the way, in session order.
        paths: Vec<PathBuf>,
        /// Whether the first of them is the cassette being split (its first session would
        /// replace it).
        is_source: bool,
    },
    /// A piece could not be written; the pieces in `written` had been written before it (the
    /// cassette being split is written last, so it is still whole).
    #[error("{}", write_message(path, written, source))]
    Write {
        /// The piece that could not be written.
        path: PathBuf,
        /// The pieces written before it.
        written: Vec<PathBuf>,
        /// Why.
        source: std::io::Error,
    },
    /// FILE is a folder, such as the folder of an eval's trial cassettes
    /// ([`trial_folder`](super::trial_folder)); the message names it and a file to split
    /// instead.
    #[error(
        "{} is a folder, not a cassette (an eval's trial cassettes, trial-1.yaml, trial-2.yaml, ..., live in such a folder): split one file of it, e.g. {}",
        .0.display(),
        .0.join("trial-1.yaml").display()
    )]
    Folder(PathBuf),
    /// The cassette could not be read or parsed.
    #[error(transparent)]
    Cassette(#[from] CassetteError),
}

fn path_list(paths: &[PathBuf]) -> String {
    let texts: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    texts.join(", ")
}

fn exists_message(paths: &[PathBuf], is_source: bool) -> String {
    let fix = format!(
        "pass --force to replace {}, or --out DIR to write the pieces to another folder",
        if paths.len() == 1 { "it" } else { "them" }
    );
    match (is_source, paths) {
        (true, [file]) => format!(
            "refusing to replace {}, the cassette being split, by its first session: pass --force to split it in place, or --out DIR to write the pieces to another folder",
            file.display()
        ),
        (true, [file, others @ ..]) => format!(
            "refusing to replace {}, the cassette being split, by its first session, and to overwrite {}, which exist: {fix}",
            file.display(),
            path_list(others)
        ),
        _ => format!(
            "refusing to overwrite {}, which exist{}: {fix}",
            path_list(paths),
            if paths.len() == 1 { "s" } else { "" }
        ),
    }
}

fn write_message(path: &Path, written: &[PathBuf], source: &std::io::Error) -> String {
    let mut message = format!("cannot write {}: {source}", path.display());
    if !written.is_empty() {
        message.push_str(&format!(
            "; already written: {} (the cassette being split is unchanged)",
            path_list(written)
        ));
    }
    message
}

/// Whether something is at `path`, also when `path` passes through a folder that does not exist
/// yet (`new/../greets.yaml` is `greets.yaml` once `new` is created).
fn occupied(path: &Path) -> bool {
    if path.exists() || path.is_symlink() {
        return true;
    }
    let mut lexical = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::ParentDir if lexical.file_name().is_some() => {
                lexical.pop();
            }
            other => lexical.push(other),
        }
    }
    lexical != path && (lexical.exists() || lexical.is_symlink())
}

/// One session's cassette, made by [`split`].
#[derive(Debug, Clone, PartialEq)]
pub struct SplitPiece {
    /// The conversations of the source it holds: 1-based numbers as a replay failure prints
    /// them, in file order.
    pub conversations: Vec<usize>,
    /// The cassette: the source's header and models, those conversations, and
    /// [`Cassette::path`] set to where it is written.
    pub cassette: Cassette,
}

/// What [`split_file`] should do.
#[derive(Debug, Clone, Default)]
pub struct SplitOptions {
    /// The folder the pieces are written to (default: the cassette's folder).
    pub out_dir: Option<PathBuf>,
    /// The grouping by hand: each value one session's 1-based conversation numbers separated by
    /// commas (`"1,3"`), as given to `--session`; empty for the automatic grouping
    /// ([`sessions`]).
    pub sessions: Vec<String>,
    /// Replace files that exist, the cassette itself included.
    pub force: bool,
}

/// What [`split_file`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitOutcome {
    /// How many conversations the cassette holds.
    pub conversations: usize,
    /// The sessions found or given, 1-based conversation numbers each.
    pub sessions: Vec<Vec<usize>>,
    /// The files written, in session order; empty when the cassette holds one session (nothing
    /// to split, nothing written).
    pub written: Vec<SplitPiece>,
}

/// One conversation in the form the grouping compares.
struct Prepared {
    /// The normalised messages (assistant messages merged).
    normal: Vec<NormalMessage>,
    /// How many of them come before the first assistant message.
    opening: usize,
    /// The text of the first user message of the opening.
    first_user: Option<String>,
    /// The `prompt` string arguments of its tool calls (sub-agent dispatches).
    prompts: Vec<String>,
}

impl Prepared {
    fn opening(&self) -> &[NormalMessage] {
        &self.normal[..self.opening]
    }

    /// Whether this conversation dispatched `other` (a sub-agent conversation).
    fn dispatched(&self, other: &Prepared) -> bool {
        self.opening() != other.opening()
            && other
                .first_user
                .as_deref()
                .is_some_and(|text| self.prompts.iter().any(|p| text.contains(p.as_str())))
    }
}

fn prepare(cassette: &Cassette) -> Vec<Prepared> {
    cassette
        .conversations
        .iter()
        .map(|conversation| {
            let (_, normal) = merged_and_normal(&conversation.messages);
            let opening = normal
                .iter()
                .position(|m| m.role == Role::Assistant)
                .unwrap_or(normal.len());
            let first_user = normal[..opening]
                .iter()
                .find(|m| m.role == Role::User)
                .and_then(|m| m.content.clone());
            let prompts = normal
                .iter()
                .flat_map(|m| &m.tool_calls)
                .filter_map(|call| {
                    let arguments: Value = serde_json::from_str(&call.arguments).ok()?;
                    let prompt = arguments.get("prompt")?.as_str()?.trim();
                    (!prompt.is_empty()).then(|| prompt.to_owned())
                })
                .collect();
            Prepared {
                normal,
                opening,
                first_user,
                prompts,
            }
        })
        .collect()
}

/// The sessions of `cassette`, found from its conversations (see the
/// [module documentation](self#which-conversations-form-a-session)): each a list of 1-based
/// conversation numbers in file order, the sessions ordered by their first conversation. Every
/// conversation is in exactly one session.
pub fn sessions(cassette: &Cassette) -> Vec<Vec<usize>> {
    let prepared = prepare(cassette);
    let count = prepared.len();
    let subagent: Vec<bool> = (0..count)
        .map(|i| (0..count).any(|j| j != i && prepared[j].dispatched(&prepared[i])))
        .collect();
    let mut session_of: Vec<Option<usize>> = vec![None; count];
    // Per session: its conversations (0-based) and the opening of its main agent.
    let mut groups: Vec<(Vec<usize>, usize)> = Vec::new();
    let holds_copy = |groups: &[(Vec<usize>, usize)], s: usize, i: usize| {
        groups[s]
            .0
            .iter()
            .any(|k| prepared[*k].normal == prepared[i].normal)
    };
    let place_root = |groups: &mut Vec<(Vec<usize>, usize)>, i: usize| {
        let found = (0..groups.len()).find(|s| {
            prepared[groups[*s].1].opening() == prepared[i].opening() && !holds_copy(groups, *s, i)
        });
        match found {
            Some(s) => {
                groups[s].0.push(i);
                s
            }
            None => {
                groups.push((vec![i], i));
                groups.len() - 1
            }
        }
    };
    for i in (0..count).filter(|i| !subagent[*i]) {
        session_of[i] = Some(place_root(&mut groups, i));
    }
    // Sub-agents join a dispatching conversation's session; nested ones once their parent has
    // one.
    loop {
        let mut progress = false;
        for i in 0..count {
            if session_of[i].is_some() {
                continue;
            }
            let mut candidates: Vec<usize> = Vec::new();
            for j in (0..count).filter(|j| *j != i && prepared[*j].dispatched(&prepared[i])) {
                if let Some(s) = session_of[j]
                    && !candidates.contains(&s)
                {
                    candidates.push(s);
                }
            }
            candidates.sort_unstable();
            let Some(first) = candidates.first().copied() else {
                continue;
            };
            let s = candidates
                .iter()
                .copied()
                .find(|s| !holds_copy(&groups, *s, i))
                .unwrap_or(first);
            groups[s].0.push(i);
            session_of[i] = Some(s);
            progress = true;
        }
        if !progress {
            break;
        }
    }
    // Sub-agents that only dispatch each other: sessions of their own.
    for (i, session) in session_of.iter().enumerate() {
        if session.is_none() {
            place_root(&mut groups, i);
        }
    }
    let mut sessions: Vec<Vec<usize>> = groups
        .into_iter()
        .map(|(mut members, _)| {
            members.sort_unstable();
            members.into_iter().map(|i| i + 1).collect()
        })
        .collect();
    sessions.sort_by_key(|members| members[0]);
    sessions
}

/// Reads a grouping given by hand: each value one session's 1-based conversation numbers
/// separated by commas (`"1,3"`, spaces allowed), as given to `--session`. The sessions keep
/// the order given (the first one keeps the file's name); each session's conversations are put
/// in file order.
///
/// Errors: [`SplitError::Grouping`], naming `--session` and the fix, when a value is empty or
/// not a number, a number is not a conversation (1 to `total`), a conversation is given twice,
/// or one is left out (every conversation must be in exactly one session).
pub fn parse_grouping(values: &[String], total: usize) -> Result<Vec<Vec<usize>>, SplitError> {
    let fail = |message: String| Err(SplitError::Grouping(message));
    let mut seen: Vec<Option<usize>> = vec![None; total + 1];
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for value in values {
        let mut group: Vec<usize> = Vec::new();
        for item in value.split(',').map(str::trim) {
            if item.is_empty() {
                return fail(format!(
                    "--session {value:?}: an empty conversation number; give numbers separated by commas, e.g. `--session 1,3`"
                ));
            }
            let Ok(number) = item.parse::<usize>() else {
                return fail(format!(
                    "--session {value:?}: `{item}` is not a conversation number; give numbers from 1 to {total} separated by commas, e.g. `--session 1,3`"
                ));
            };
            if number == 0 || number > total {
                return fail(format!(
                    "--session {value:?}: there is no conversation {number}: the cassette has {total} conversation{}, numbered 1 to {total} as a replay failure prints them",
                    if total == 1 { "" } else { "s" }
                ));
            }
            if let Some(before) = seen[number] {
                return fail(format!(
                    "--session {value:?}: conversation {number} is already in {}; give every conversation in exactly one --session",
                    if before == groups.len() {
                        "this --session".to_owned()
                    } else {
                        format!("--session {:?}", values[before])
                    }
                ));
            }
            seen[number] = Some(groups.len());
            group.push(number);
        }
        group.sort_unstable();
        groups.push(group);
    }
    let missing: Vec<String> = (1..=total)
        .filter(|n| seen[*n].is_none())
        .map(|n| n.to_string())
        .collect();
    if !missing.is_empty() {
        let (noun, list) = if missing.len() == 1 {
            ("conversation", missing[0].clone())
        } else {
            ("conversations", missing.join(", "))
        };
        return fail(format!(
            "--session: {noun} {list} of {total} {} in no --session; give every conversation in exactly one --session (e.g. add `--session {}`)",
            if missing.len() == 1 { "is" } else { "are" },
            missing.join(",")
        ));
    }
    Ok(groups)
}

/// Where the `index`-th session (from 1) of `file` is written in `out_dir`: the first keeps the
/// file's name (`greets.yaml`), the next are `greets-2.yaml`, `greets-3.yaml`, ... (the files a
/// test's second, third, ... run replays: [`run_cassette_path`](super::run_cassette_path)).
pub fn piece_path(file: &Path, out_dir: &Path, index: usize) -> PathBuf {
    let name = file.file_name().unwrap_or(file.as_os_str());
    super::run_cassette_path(&out_dir.join(name), index)
}

/// One cassette per group of `groups` (1-based conversation numbers, as from [`sessions`] or
/// [`parse_grouping`]; each must exist): the source's header and models with those
/// conversations, [`Cassette::path`] set to [`piece_path`] in `out_dir`. Pure: nothing is read
/// or written.
///
/// Panics when a number is not a conversation of `cassette`.
pub fn split(cassette: &Cassette, groups: &[Vec<usize>], out_dir: &Path) -> Vec<SplitPiece> {
    groups
        .iter()
        .enumerate()
        .map(|(index, group)| {
            let mut conversations = group.clone();
            conversations.sort_unstable();
            SplitPiece {
                cassette: Cassette {
                    path: piece_path(&cassette.path, out_dir, index + 1),
                    header: cassette.header.clone(),
                    models: cassette.models.clone(),
                    conversations: conversations
                        .iter()
                        .map(|n| cassette.conversations[n - 1].clone())
                        .collect(),
                    errors: cassette.errors.clone(),
                },
                conversations,
            }
        })
        .collect()
}

/// The comment lines at the top of a cassette's text, without their `#` (the provenance a
/// recording writes), one per line.
pub fn leading_comment(text: &str) -> String {
    let mut comment = String::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix('#') else {
            break;
        };
        comment.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        comment.push('\n');
    }
    comment
}

/// `1, 2 and 4` for `[1, 2, 4]`.
fn and_list(numbers: &[usize]) -> String {
    let texts: Vec<String> = numbers.iter().map(usize::to_string).collect();
    match texts.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// How the command describes a piece: `conversations 1 and 2 of 3` (`conversation 3 of 3`).
pub fn describe(conversations: &[usize], total: usize) -> String {
    format!(
        "conversation{} {} of {total}",
        if conversations.len() == 1 { "" } else { "s" },
        and_list(conversations)
    )
}

/// Splits the cassette `file` into one cassette per session and writes them (see the
/// [module documentation](self)): the sessions given in `options.sessions` ([`parse_grouping`])
/// or found by [`sessions`]; the first written to `file`'s name, the next to `<stem>-2.yaml`,
/// ..., in `options.out_dir` (default: `file`'s folder).
///
/// A cassette of one session is left alone (nothing written). Before anything is written, every
/// target is checked: one that exists (`file` itself included, when the first session would
/// replace it) is an error unless `options.force`. Each file is written atomically, with
/// `file`'s leading comment and a line naming its conversations; the one that replaces `file`,
/// if any, is written last, so a failure leaves `file` whole.
///
/// A trial cassette (`greets/trial-2.yaml`) splits like any other: its second session becomes
/// `greets/trial-2-2.yaml`, the cassette of that trial's second run.
///
/// Errors: [`SplitError::Folder`] (`file` is a folder), [`SplitError::Cassette`] (unreadable or malformed cassette),
/// [`SplitError::Grouping`], [`SplitError::Exists`], [`SplitError::Write`].
pub fn split_file(file: &Path, options: &SplitOptions) -> Result<SplitOutcome, SplitError> {
    if file.is_dir() {
        return Err(SplitError::Folder(file.to_path_buf()));
    }
    let text = std::fs::read_to_string(file).map_err(|source| CassetteError::Io {
        path: file.to_path_buf(),
        source,
    })?;
    let cassette = Cassette::parse(&text, file)?;
    let total = cassette.conversations.len();
    let groups = if options.sessions.is_empty() {
        sessions(&cassette)
    } else {
        parse_grouping(&options.sessions, total)?
    };
    if groups.len() < 2 {
        return Ok(SplitOutcome {
            conversations: total,
            sessions: groups,
            written: Vec::new(),
        });
    }
    let out_dir = match &options.out_dir {
        Some(dir) => dir.clone(),
        None => match file.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        },
    };
    let pieces = split(&cassette, &groups, &out_dir);
    let source = std::fs::canonicalize(file).ok();
    let is_source = |path: &Path| {
        source.is_some() && std::fs::canonicalize(path).ok().as_deref() == source.as_deref()
    };
    if !options.force {
        let mut paths: Vec<PathBuf> = pieces
            .iter()
            .map(|piece| piece.cassette.path.clone())
            .filter(|path| occupied(path))
            .collect();
        paths.sort_by_key(|path| !is_source(path));
        if let Some(first) = paths.first() {
            return Err(SplitError::Exists {
                is_source: is_source(first),
                paths,
            });
        }
    }
    let comment = leading_comment(&text);
    let source_name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Text first for every piece: a piece that cannot be written stops the split before any
    // file changes.
    let mut texts: Vec<String> = Vec::with_capacity(pieces.len());
    for piece in &pieces {
        let note = format!(
            "{comment}Split from {source_name} by `cargo copilot-eval cassette split`: {}.",
            describe(&piece.conversations, total)
        );
        texts.push(piece.cassette.to_text(&note)?);
    }
    let mut order: Vec<usize> = (0..pieces.len()).collect();
    order.sort_by_key(|i| is_source(&pieces[*i].cassette.path));
    let mut written: Vec<PathBuf> = Vec::new();
    for i in order {
        let path = &pieces[i].cassette.path;
        if let Err(source) = crate::artifact::write_atomically(path, texts[i].as_bytes()) {
            return Err(SplitError::Write {
                path: path.clone(),
                written,
                source,
            });
        }
        written.push(path.clone());
    }
    Ok(SplitOutcome {
        conversations: total,
        sessions: groups,
        written: pieces,
    })
}
