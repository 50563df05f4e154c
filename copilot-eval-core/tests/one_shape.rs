//! One run, one shape: a field added to the run's result (`CopilotResult`) reaches the JSON
//! record, its schema, the HTML page and `merge` with its name written in at most
//! [`LIMIT`] product files. The run record is the result serialized (the schema is generated
//! from it, merge reads it back), and the page renders that record; what would make a field
//! cost more is a parallel struct that copies the run field by field.
//!
//! The count, for each field of `CopilotResult`, is of the product files (core's code outside
//! its tests, and the page's templates; the generated schema is not written by hand) where the
//! field's name must be written:
//! - the file that declares `CopilotResult`;
//! - every file that declares a *mirror* of it, a struct with a field of the same name that
//!   shares at least a third of the result's field names (a copy of the run, such as a record or
//!   a view struct that names its fields again), and every file with a struct literal of the
//!   result or of a mirror that lists the field (`Self { .. }` inside the type's `impl`
//!   included);
//! - every template that shows it: `.name` or `["name"]` with the field's JSON name (its
//!   `#[serde(rename = "..")]`, else its own).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The most product files a field of the result may be written in.
const LIMIT: usize = 3;

/// The result's type.
const RESULT: &str = "CopilotResult";

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Core's product files: `.rs` files other than `tests.rs` and `*_tests.rs`, and the page's
/// templates (`.html`), relative to `src`, with their text.
fn product_files(dir: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            product_files(&path, out);
        } else if name.ends_with(".html")
            || (name.ends_with(".rs") && name != "tests.rs" && !name.ends_with("_tests.rs"))
        {
            let shown = path.strip_prefix(src()).unwrap().display().to_string();
            out.push((shown, std::fs::read_to_string(&path).unwrap()));
        }
    }
}

/// Whether an item carries `#[cfg(test)]`.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

/// A field's JSON name: its `#[serde(rename = "..")]`, else its own.
fn json_name(field: &syn::Field) -> String {
    let mut name = field.ident.as_ref().unwrap().to_string();
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                let value: syn::LitStr = meta.value()?.parse()?;
                name = value.value();
            } else if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
            }
            Ok(())
        });
    }
    name
}

/// What one file declares and builds, outside its tests.
#[derive(Default)]
struct Found {
    /// Each struct with named fields: its name and its fields (name, JSON name).
    structs: Vec<(String, Vec<(String, String)>)>,
    /// Each struct literal: the type's name and the fields it lists.
    literals: Vec<(String, Vec<String>)>,
    /// The self types of the `impl` blocks around the item being read.
    impls: Vec<String>,
}

impl<'ast> Visit<'ast> for Found {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Struct(s) => &s.attrs,
            syn::Item::Const(c) => &c.attrs,
            syn::Item::Static(s) => &s.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if !is_test(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        let name = match &*item.self_ty {
            syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        self.impls.push(name.unwrap_or_default());
        syn::visit::visit_item_impl(self, item);
        self.impls.pop();
    }

    fn visit_item_struct(&mut self, item: &'ast syn::ItemStruct) {
        if let syn::Fields::Named(fields) = &item.fields {
            let fields = fields
                .named
                .iter()
                .map(|f| (f.ident.as_ref().unwrap().to_string(), json_name(f)))
                .collect();
            self.structs.push((item.ident.to_string(), fields));
        }
        syn::visit::visit_item_struct(self, item);
    }

    fn visit_expr_struct(&mut self, expr: &'ast syn::ExprStruct) {
        let last = expr.path.segments.last().unwrap().ident.to_string();
        let name = if last == "Self" {
            self.impls.last().cloned().unwrap_or_default()
        } else {
            last
        };
        let fields = expr
            .fields
            .iter()
            .filter_map(|f| match &f.member {
                syn::Member::Named(ident) => Some(ident.to_string()),
                syn::Member::Unnamed(_) => None,
            })
            .collect();
        self.literals.push((name, fields));
        syn::visit::visit_expr_struct(self, expr);
    }
}

/// The result's copies found, and for each field of the result the product files its name must
/// be written in (see the module's documentation), in field order.
fn places() -> (BTreeSet<String>, Vec<(String, BTreeSet<String>)>) {
    let mut files = Vec::new();
    product_files(&src(), &mut files);
    assert!(files.len() > 150, "only {} product files read", files.len());
    let mut found: BTreeMap<String, Found> = BTreeMap::new();
    let mut templates = Vec::new();
    for (path, text) in files {
        if path.ends_with(".html") {
            templates.push((path, text));
            continue;
        }
        let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut seen = Found::default();
        seen.visit_file(&file);
        found.insert(path, seen);
    }
    let (result_file, result_fields) = found
        .iter()
        .find_map(|(path, f)| {
            f.structs
                .iter()
                .find(|(name, _)| name == RESULT)
                .map(|(_, fields)| (path.clone(), fields.clone()))
        })
        .expect("CopilotResult is declared");
    let names: BTreeSet<&str> = result_fields.iter().map(|(n, _)| n.as_str()).collect();
    let shared = |fields: &[(String, String)]| {
        fields
            .iter()
            .filter(|(n, _)| names.contains(n.as_str()))
            .count()
    };
    // A mirror shares at least a third of the result's field names.
    let mirrors: BTreeSet<String> = found
        .values()
        .flat_map(|f| &f.structs)
        .filter(|(name, fields)| name != RESULT && shared(fields) * 3 >= names.len())
        .map(|(name, _)| name.clone())
        .collect();
    let shapes = |name: &str| name == RESULT || mirrors.contains(name);
    let places = result_fields
        .iter()
        .map(|(field, json)| {
            let mut at = BTreeSet::from([result_file.clone()]);
            for (path, f) in &found {
                let declares = f.structs.iter().any(|(name, fields)| {
                    mirrors.contains(name) && fields.iter().any(|(n, _)| n == field)
                });
                let builds = f
                    .literals
                    .iter()
                    .any(|(name, fields)| shapes(name) && fields.contains(field));
                if declares || builds {
                    at.insert(path.clone());
                }
            }
            let shown = regex::Regex::new(&format!(
                r#"\.{}\b|\["{}"\]"#,
                regex::escape(json),
                regex::escape(json)
            ))
            .unwrap();
            for (path, text) in &templates {
                if shown.is_match(text) {
                    at.insert(path.clone());
                }
            }
            (field.clone(), at)
        })
        .collect();
    (mirrors, places)
}

/// The 3-file rule: no field of the result is written in more than [`LIMIT`] product files.
#[test]
fn a_field_of_the_result_is_written_in_at_most_three_files() {
    let (mirrors, places) = places();
    assert!(
        places.len() > 20,
        "only {} fields of the result",
        places.len()
    );
    let over: Vec<String> = places
        .iter()
        .filter(|(_, files)| files.len() > LIMIT)
        .map(|(field, files)| {
            let files: Vec<&str> = files.iter().map(String::as_str).collect();
            format!("{field} ({}): {}", files.len(), files.join(", "))
        })
        .collect();
    assert!(
        over.is_empty(),
        "fields of CopilotResult written in more than {LIMIT} product files (structs that copy \
         the run field by field: {mirrors:?}; serialize the result instead):\n{}",
        over.join("\n")
    );
}

/// The count sees what it must: the result's declaration, a mirror's declaration and literal
/// (by its name and as `Self`), and a template's `.name`; and it leaves out tests and structs
/// that share few names.
#[test]
fn the_count_sees_declarations_literals_and_templates() {
    let code = r#"
pub struct CopilotResult { pub a: u8, pub b: u8, #[serde(rename = "cee")] pub c: u8 }
pub struct Copy { a: u8, b: u8, other: u8 }
pub struct Few { a: u8, x: u8, y: u8, z: u8, w: u8, v: u8 }
impl Copy { fn of(r: &CopilotResult) -> Self { Self { a: r.a, b: r.b, other: 0 } } }
fn make() -> Few { Few { a: 1, x: 0, y: 0, z: 0, w: 0, v: 0 } }
#[cfg(test)]
mod tests { fn t() -> super::CopilotResult { super::CopilotResult { a: 0, b: 0, c: 0 } } }
"#;
    let mut found = Found::default();
    found.visit_file(&syn::parse_file(code).unwrap());
    let structs: Vec<&str> = found.structs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(structs, ["CopilotResult", "Copy", "Few"]);
    assert_eq!(found.structs[0].1[2], ("c".to_owned(), "cee".to_owned()));
    let literals: Vec<(&str, usize)> = found
        .literals
        .iter()
        .map(|(n, f)| (n.as_str(), f.len()))
        .collect();
    assert_eq!(
        literals,
        [("Copy", 3), ("Few", 6)],
        "`Self` is its impl's type; the test module is left out"
    );
    // On the real tree: the result's own file is counted for every field.
    let (_, places) = places();
    assert!(
        places
            .iter()
            .all(|(_, files)| files.contains("result/mod.rs")),
        "{places:?}"
    );
    let shown: Vec<&String> = places
        .iter()
        .filter(|(_, files)| files.contains("report/html/report.html"))
        .map(|(field, _)| field)
        .collect();
    assert!(
        shown.len() > 10,
        "the page shows the run's fields: {shown:?}"
    );
}
