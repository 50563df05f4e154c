//! The docs' links: every relative link in README.md, ARCHITECTURE.md and docs/*.md names a file
//! that exists, and every `#anchor` names a heading of its target page (GitHub's and mdBook's
//! heading ids: lowercase, punctuation dropped, spaces as `-`). docs/SUMMARY.md lists every page.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md"), root().join("ARCHITECTURE.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// A heading's id as GitHub and mdBook derive it.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The links (destination, line) and heading ids of a Markdown text.
fn read(text: &str) -> (Vec<(String, usize)>, BTreeSet<String>) {
    let mut links = Vec::new();
    let mut ids = BTreeSet::new();
    let mut heading: Option<String> = None;
    for (event, range) in Parser::new(text).into_offset_iter() {
        match event {
            Event::Start(Tag::Link { dest_url, .. })
            | Event::Start(Tag::Image { dest_url, .. }) => {
                let line = text[..range.start].lines().count().max(1);
                links.push((dest_url.to_string(), line));
            }
            Event::Start(Tag::Heading { level, .. }) if level <= HeadingLevel::H6 => {
                heading = Some(String::new());
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some(h) = heading.take() {
                    ids.insert(slug(&h));
                }
            }
            _ => {}
        }
    }
    (links, ids)
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let (links, own_ids) = read(&text);
        for (link, line) in links {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = link.split_once('#').unwrap_or((&link, ""));
            let target = if path.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(path)
            };
            let here = format!("{}:{line}", page.strip_prefix(root()).unwrap().display());
            if !target.exists() {
                broken.push(format!("{here}: {link}: no such file"));
                continue;
            }
            if anchor.is_empty() {
                continue;
            }
            let ids = if path.is_empty() {
                own_ids.clone()
            } else if target.extension().is_some_and(|e| e == "md") {
                read(&std::fs::read_to_string(&target).unwrap()).1
            } else {
                continue;
            };
            if !ids.contains(anchor) {
                broken.push(format!("{here}: {link}: no heading with id `{anchor}`"));
            }
        }
    }
    assert!(checked > 50, "the docs hold links to check ({checked})");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_book_lists_every_page() {
    let summary = std::fs::read_to_string(root().join("docs/SUMMARY.md")).unwrap();
    let (links, _) = read(&summary);
    let listed: BTreeSet<String> = links.into_iter().map(|(l, _)| l).collect();
    let missing: Vec<String> = pages()
        .iter()
        .filter(|p| p.parent() == Some(root().join("docs").as_path()))
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .filter(|n| n != "SUMMARY.md" && !listed.contains(n))
        .collect();
    assert!(
        missing.is_empty(),
        "pages not in docs/SUMMARY.md: {missing:?}"
    );
}

#[test]
fn slugs_follow_the_heading_id_rules() {
    assert_eq!(slug("2. Install the runtime"), "2-install-the-runtime");
    assert_eq!(
        slug("Recording: `cargo copilot-eval --record`"),
        "recording-cargo-copilot-eval---record"
    );
    let (links, ids) = read("# A title\n\nSee [x](other.md#a-b) and ![i](pic.png).\n");
    assert_eq!(
        links,
        [("other.md#a-b".to_owned(), 3), ("pic.png".to_owned(), 3)]
    );
    assert!(ids.contains("a-title"));
}

/// No Markdown table repeats its header row (a header, its `|---|` line, then the same header
/// again renders the header as a body row).
#[test]
fn no_table_repeats_its_header() {
    let mut repeated = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, window) in lines.windows(3).enumerate() {
            let separator = window[1].trim();
            if window[0].starts_with('|')
                && separator.starts_with("|-")
                && separator
                    .chars()
                    .all(|c| matches!(c, '|' | '-' | ':' | ' '))
                && window[2] == window[0]
            {
                repeated.push(format!("{}:{}", page.display(), i + 3));
            }
        }
    }
    assert!(
        repeated.is_empty(),
        "table headers repeated at {repeated:?}"
    );
}

/// The stop-reason lists of the result pages (results.md's run record and guide.md's "Reading a
/// result") name every stop reason the engine has.
#[test]
fn the_stop_reason_lists_name_every_stop_reason() {
    for (page, row) in [
        ("docs/results.md", "| `success`, `stop_reason`, `error` |"),
        ("docs/guide.md", "| `stop_reason` |"),
    ] {
        let text = std::fs::read_to_string(root().join(page)).unwrap();
        let line = text
            .lines()
            .find(|l| l.starts_with(row))
            .unwrap_or_else(|| panic!("{page} has no row {row}"));
        let missing: Vec<&str> = copilot_eval_core::StopReason::PRECEDENCE
            .iter()
            .map(|r| r.as_str())
            .filter(|r| !line.contains(&format!("`{r}`")))
            .collect();
        assert!(missing.is_empty(), "{page}'s {row} lacks {missing:?}");
    }
}

/// The `ctx.model()` snippet of docs/attribute.md is the scripted example's function as written
/// (that example compiles and runs in CI), so the snippet compiles with the example's imports.
#[test]
fn the_model_snippet_is_the_compiled_examples_text() {
    let page = std::fs::read_to_string(root().join("docs/attribute.md")).unwrap();
    let (_, after) = page
        .split_once("`ctx.model()` returns the test's model")
        .expect("the page says what ctx.model() returns");
    let (_, code) = after
        .split_once("```rust,ignore\n")
        .expect("a snippet follows");
    let (code, _) = code.split_once("```").unwrap();
    assert!(code.contains("ctx\n        .model()"), "{code}");
    let example = std::fs::read_to_string(root().join("examples/scripted/tests/evals.rs")).unwrap();
    assert!(
        example.contains(code),
        "docs/attribute.md's ctx.model() snippet is not examples/scripted/tests/evals.rs's text:\n{code}"
    );
}
