//! Links in a skill's Markdown: which text is a link (not comments, code spans or code
//! blocks), and whether each relative target stays inside the skill folder and exists.

use super::*;

/// Relative links in `body` (of `file`, starting on `body_line`): they must stay inside the skill
/// folder (error) and, with `check_missing`, name existing files (warning). Targets are relative
/// to the folder of `file`.
pub(super) fn check_links(
    directory: &Path,
    file: &Path,
    body: &str,
    body_line: u32,
    check_missing: bool,
) -> Vec<Problem> {
    let base = file
        .parent()
        .and_then(|p| p.strip_prefix(directory).ok())
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut problems = Vec::new();
    let root = directory.canonicalize().ok();
    let visible = mask_non_links(body);
    for (i, line) in visible.lines().enumerate() {
        let trimmed = line.trim_start();
        let line_no = body_line + i as u32;
        let mut targets = link_targets(line);
        // A link reference definition: `[id]: path "title"`.
        if let Some(rest) = trimmed.strip_prefix('[')
            && let Some((label, target)) = rest.split_once("]:")
            && !label.is_empty()
            && let Some(target) = target.split_whitespace().next()
        {
            targets.push(target.trim_matches(['<', '>']).to_owned());
        }
        for target in targets {
            let Some(relative) = local_target(&target) else {
                continue;
            };
            let at = |p: Problem| p.at(Some(line_no)).field("body");
            if relative.starts_with('/') || Path::new(&relative).is_absolute() {
                problems.push(at(Problem::warning(
                    file,
                    "reference-escapes",
                    format!("links to the absolute path {relative:?}; a skill should only refer to files inside its folder (use a path relative to it); {LOADS_ANYWAY}"),
                )));
                continue;
            }
            let Some(normal) = normalize(&base.join(&relative)) else {
                problems.push(at(Problem::warning(
                    file,
                    "reference-escapes",
                    format!("links to {relative:?}, which leaves the skill folder; a skill should only refer to files inside its folder; {LOADS_ANYWAY}"),
                )));
                continue;
            };
            let full = directory.join(&normal);
            match (full.canonicalize(), &root) {
                (Ok(real), Some(root)) if !real.starts_with(root) => {
                    problems.push(at(Problem::warning(
                        file,
                        "reference-escapes",
                        format!("links to {relative:?}, which resolves to {} outside the skill folder (through a symbolic link); {LOADS_ANYWAY}", real.display()),
                    )));
                }
                (Ok(_), _) => {}
                (Err(_), _) if !check_missing => {}
                (Err(_), _) => problems.push(at(Problem::warning(
                    file,
                    "reference-missing",
                    format!("links to {relative:?}, which does not exist in the skill folder"),
                ))),
            }
        }
    }
    problems
}

/// Targets of inline Markdown links and images on one line: `[text](target "title")`.
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    while let Some(pos) = line[i..].find("](") {
        let start = i + pos + 2;
        let mut depth = 0usize;
        let mut end = None;
        for (j, &b) in bytes.iter().enumerate().skip(start) {
            match b {
                b'(' => depth += 1,
                b')' if depth == 0 => {
                    end = Some(j);
                    break;
                }
                b')' => depth -= 1,
                _ => {}
            }
        }
        let Some(end) = end else { break };
        let mut target = line[start..end].trim();
        if let Some(inner) = target.strip_prefix('<').and_then(|t| t.split_once('>')) {
            target = inner.0;
        } else if let Some((path, _title)) = target.split_once([' ', '\t']) {
            target = path;
        }
        out.push(target.to_owned());
        i = end + 1;
    }
    out
}

/// What the runtime does with a skill whose links leave its folder (measured with 1.0.102).
const LOADS_ANYWAY: &str = "the runtime loads the skill anyway, but the link may not lead anywhere once the skill is installed elsewhere";

/// `body` with every Markdown construct in which `[text](target)` is not a link blanked out:
/// HTML comments, fenced code blocks (``` and ~~~, any fence length), indented code blocks and
/// code spans of any backtick count. Blanked characters become spaces and line breaks stay, so
/// line numbers and columns are kept.
pub(crate) fn mask_non_links(body: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let mut previous_blank = true;
    let mut in_indented = false;
    for line in body.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let blank = trimmed.is_empty();
        if let Some((ch, len)) = fence {
            let run = trimmed.chars().take_while(|c| *c == ch).count();
            if run >= len && trimmed[run * ch.len_utf8()..].trim().is_empty() {
                fence = None;
            }
            out.push(" ".repeat(line.len()));
            previous_blank = blank;
            continue;
        }
        let opening = ['`', '~'].into_iter().find_map(|ch| {
            let run = trimmed.chars().take_while(|c| *c == ch).count();
            (indent < 4 && run >= 3 && !(ch == '`' && trimmed[run..].contains('`')))
                .then_some((ch, run))
        });
        if let Some(open) = opening {
            fence = Some(open);
            out.push(" ".repeat(line.len()));
            previous_blank = false;
            continue;
        }
        let code_indent = line.starts_with('\t') || indent >= 4;
        in_indented = !blank && code_indent && (previous_blank || in_indented);
        if in_indented {
            out.push(" ".repeat(line.len()));
        } else {
            out.push(line.to_owned());
        }
        previous_blank = blank;
    }
    let mut text = out.join("\n");
    // HTML comments, across lines.
    while let Some(start) = text.find("<!--") {
        let end = text[start + 4..]
            .find("-->")
            .map_or(text.len(), |e| start + 4 + e + 3);
        let blanked: String = text[start..end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        text.replace_range(start..end, &blanked);
    }
    // Code spans: a run of N backticks up to the next run of exactly N (within a paragraph).
    let mut result = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            result.push(chars[i]);
            i += 1;
            continue;
        }
        let run = chars[i..].iter().take_while(|c| **c == '`').count();
        let mut j = i + run;
        let mut close = None;
        while j < chars.len() {
            if chars[j] == '`' {
                let other = chars[j..].iter().take_while(|c| **c == '`').count();
                if other == run {
                    close = Some(j + other);
                    break;
                }
                j += other;
            } else {
                j += 1;
            }
        }
        match close {
            Some(end) => {
                result.extend(
                    chars[i..end]
                        .iter()
                        .map(|c| if *c == '\n' { '\n' } else { ' ' }),
                );
                i = end;
            }
            None => {
                result.extend(&chars[i..i + run]);
                i += run;
            }
        }
    }
    result
}

/// The local path of a link target, or `None` for URLs, anchors and empty targets.
fn local_target(target: &str) -> Option<String> {
    let target = target.split(['#', '?']).next().unwrap_or_default().trim();
    if target.is_empty() {
        return None;
    }
    // A URL scheme (`https:`, `mailto:`), but not a Windows drive letter.
    if let Some((scheme, _)) = target.split_once(':')
        && scheme.len() > 1
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return None;
    }
    Some(target.replace("%20", " "))
}

/// Lexically normalise a relative path; `None` when `..` climbs above its start.
pub(crate) fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out: Vec<&std::ffi::OsStr> = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(c) => out.push(c),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out.iter().collect())
}
