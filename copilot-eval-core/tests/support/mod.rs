//! What the source-reading tests share: the workspace's Rust files and a small Rust lexer that
//! tells code from comments and string literals.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root")
        .to_path_buf()
}

pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// `text` with comment lines and inline `#[cfg(test)] mod NAME { ... }` blocks blanked (their
/// lines kept empty, so that offsets still give line numbers).
pub fn code_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let trimmed = lines[i].trim_start();
        let opens_test_block = trimmed.starts_with("#[cfg(test)]")
            && lines.get(i + 1).is_some_and(|next| {
                let next = next.trim();
                (next.starts_with("mod ") || next.starts_with("pub(crate) mod "))
                    && next.ends_with('{')
            });
        if opens_test_block {
            // Blank up to the line that closes the block.
            let mut depth = 0i64;
            let mut opened = false;
            while i < lines.len() {
                for c in lines[i].chars() {
                    match c {
                        '{' => {
                            depth += 1;
                            opened = true;
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
                out.push("");
                i += 1;
                if opened && depth <= 0 {
                    break;
                }
            }
            continue;
        }
        out.push(if trimmed.starts_with("//") {
            ""
        } else {
            lines[i]
        });
        i += 1;
    }
    out.join("\n")
}

/// One string literal of a source file: its 1-based line and its text as written between the
/// quotes.
pub struct Literal {
    pub line: usize,
    pub text: String,
}

/// A source file read for the checks: its string literals, and its code with every comment
/// blanked out (string literals kept as written).
pub struct Source {
    pub literals: Vec<Literal>,
    pub code: String,
    /// `code` with each string literal's text blanked too (its quotes and line breaks kept), so
    /// that brackets are counted on code only.
    pub bare: String,
}

/// Read Rust source: `//` and `/* */` comments (doc comments too) are blanked; `"..."`,
/// `b"..."` and raw `r#"..."#` strings are literals; `'"'` is a char, not a string.
pub fn lex(text: &str) -> Source {
    let chars: Vec<char> = text.chars().collect();
    let mut code = String::with_capacity(text.len());
    let mut literals = Vec::new();
    let mut inside: Vec<std::ops::Range<usize>> = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                code.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    code.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    code.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    code.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == '\'' && next == Some('\\') {
            // An escaped char literal: '\'', '\"', '\n', '\u{..}'.
            code.push_str("'\\");
            i += 2;
            if let Some(&escaped) = chars.get(i) {
                code.push(if escaped == '"' { ' ' } else { escaped });
                i += 1;
            }
            while i < chars.len() && chars[i] != '\'' {
                code.push(chars[i]);
                i += 1;
            }
            if i < chars.len() {
                code.push('\'');
                i += 1;
            }
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            // A plain char literal such as '"'.
            code.push_str("' '");
            i += 3;
        } else if c == '"'
            || (c == 'r' && matches!(next, Some('#') | Some('"')) && raw_start(&chars, i))
        {
            let start_line = line;
            let (hashes, open) = if c == 'r' {
                let mut j = i + 1;
                while chars[j] == '#' {
                    j += 1;
                }
                (j - i - 1, j + 1)
            } else {
                (0, i + 1)
            };
            let mut j = open;
            let mut literal = String::new();
            while let Some(&ch) = chars.get(j) {
                if ch == '\\' && hashes == 0 && c == '"' {
                    literal.push(ch);
                    if let Some(&escaped) = chars.get(j + 1) {
                        literal.push(escaped);
                        if escaped == '\n' {
                            line += 1;
                        }
                    }
                    j += 2;
                    continue;
                }
                if ch == '"' && (0..hashes).all(|h| chars.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                if ch == '\n' {
                    line += 1;
                }
                literal.push(ch);
                j += 1;
            }
            code.push('"');
            let start = code.len();
            code.push_str(&literal);
            inside.push(start..code.len());
            code.push('"');
            literals.push(Literal {
                line: start_line,
                text: literal,
            });
            i = j;
        } else {
            if c == '\n' {
                line += 1;
            }
            code.push(c);
            i += 1;
        }
    }
    let mut bare = String::with_capacity(code.len());
    let mut ranges = inside.iter().peekable();
    for (at, c) in code.char_indices() {
        while ranges.peek().is_some_and(|r| r.end <= at) {
            ranges.next();
        }
        let in_literal = ranges.peek().is_some_and(|r| r.contains(&at));
        bare.push(if in_literal && c != '\n' { ' ' } else { c });
    }
    Source {
        literals,
        code,
        bare,
    }
}

/// Whether the `r` at `at` starts a raw string (`r"` or `r#..."`), not an identifier's `r`.
fn raw_start(chars: &[char], at: usize) -> bool {
    let before = at.checked_sub(1).map(|b| chars[b]);
    if before.is_some_and(|b| b.is_alphanumeric() || b == '_') {
        // `br"..."` is a raw byte string; any other letter before `r` is an identifier.
        if before != Some('b') {
            return false;
        }
    }
    let mut j = at + 1;
    while chars.get(j) == Some(&'#') {
        j += 1;
    }
    chars.get(j) == Some(&'"')
}
