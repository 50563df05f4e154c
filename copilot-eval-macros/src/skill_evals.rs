//! `skill_evals = "skills/release-notes"`: one eval test per entry of the skill's
//! `evals/evals.json`; `skill_triggers = "skills/release-notes"`: one eval test per query of its
//! trigger set `evals/triggers.json`. Both are read at compile time. The files' formats and
//! checks are core's (`customization::skill::evals_file` and `triggers_file`, compiled here by
//! `include!`), so the attribute and `lint` read them the same way.

use std::path::{Path, PathBuf};

use proc_macro2::{Ident, Span, TokenStream as TokenStream2};
use quote::quote;
use syn::spanned::Spanned;

use crate::{Value, describe, literal};

/// Core's reader of `evals/evals.json` (`customization::skill::evals_file`), the same file.
#[allow(dead_code)]
mod evals_file {
    include!("../../copilot-eval-core/src/customization/skill/evals_file.rs");
}

/// Core's reader of trigger sets (`customization::skill::triggers_file`), the same file.
#[allow(dead_code)]
mod triggers_file {
    include!("../../copilot-eval-core/src/customization/skill/triggers_file.rs");
}

use evals_file::{EVALS_FILE, EvalEntry, parse_evals_file, stays_inside};
use triggers_file::{TRIGGERS_FILE, TriggerQuery, parse_triggers_file};

/// A skill file that makes one test per entry: the value of `skill_evals` or `skill_triggers`.
pub(crate) enum SkillFile {
    /// `skill_evals`: the entries of `evals/evals.json`.
    Evals(SkillEvals),
    /// `skill_triggers`: the queries of `evals/triggers.json`.
    Triggers(SkillTriggers),
}

/// One generated test of a [`SkillFile`]: its case label, the `TestConfig` call that hands it
/// its entry, and the expression (of `ctx`) that reads the entry back for the function.
pub(crate) struct FileCase {
    pub label: Ident,
    pub setting: TokenStream2,
    pub getter: TokenStream2,
}

impl SkillFile {
    /// The generated tests, in file order.
    pub(crate) fn cases(&self, krate: &TokenStream2) -> Vec<FileCase> {
        match self {
            SkillFile::Evals(evals) => evals
                .cases(krate)
                .into_iter()
                .map(|(label, spec)| FileCase {
                    label,
                    setting: quote!(.skill_case(#spec)),
                    getter: quote!(ctx.skill_case().expect("the test's skill case")),
                })
                .collect(),
            SkillFile::Triggers(triggers) => triggers.cases(krate),
        }
    }

    /// `include_bytes!` of the file, so that cargo rebuilds the tests when it changes.
    pub(crate) fn tracking(&self) -> TokenStream2 {
        let file = match self {
            SkillFile::Evals(evals) => &evals.file,
            SkillFile::Triggers(triggers) => &triggers.file,
        };
        let file = file.display().to_string();
        quote! {
            const _: &[u8] = ::core::include_bytes!(#file);
        }
    }
}

/// The value of `skill_triggers`, read and checked.
pub(crate) struct SkillTriggers {
    /// The skill folder as written (relative to the package root).
    folder: String,
    /// The skill's name: the folder's name.
    skill: String,
    /// The trigger set's absolute path.
    file: PathBuf,
    /// Its queries, in file order.
    queries: Vec<TriggerQuery>,
}

/// The skill folder of `skill_evals` or `skill_triggers`: a non-blank string literal, and the
/// package root it is relative to. Errors are spanned on the value.
fn skill_folder(
    name: &str,
    expr: &syn::Expr,
    push: &mut impl FnMut(syn::Error),
) -> Option<(syn::LitStr, PathBuf)> {
    let value = literal(expr);
    let lit = match &value {
        Some(Value::Str(lit)) if !lit.value().trim().is_empty() => lit.clone(),
        _ => {
            push(syn::Error::new(
                expr.span(),
                format!(
                    "`{name}` expects a skill folder relative to the package root, e.g. `\"skills/release-notes\"`, found {}",
                    describe(&value)
                ),
            ));
            return None;
        }
    };
    let Some(root) = std::env::var_os("CARGO_MANIFEST_DIR") else {
        push(syn::Error::new(
            lit.span(),
            format!(
                "`{name}` is read at compile time from the package root, but CARGO_MANIFEST_DIR is not set (build with cargo)"
            ),
        ));
        return None;
    };
    Some((lit, PathBuf::from(root)))
}

/// Read `skill_triggers = "<folder>"`: `<package root>/<folder>/evals/triggers.json` must exist
/// and parse, and its `skill_name`, when given, must be the folder's name (the skill's name).
/// Errors are spanned on the literal and name the file, the query and the field.
pub(crate) fn read_skill_triggers(
    name: &str,
    expr: &syn::Expr,
    push: &mut impl FnMut(syn::Error),
) -> Option<SkillTriggers> {
    let (lit, root) = skill_folder(name, expr, push)?;
    let folder = lit.value();
    let error = |message: String| syn::Error::new(lit.span(), message);
    let dir = root.join(&folder);
    let file = dir.join(TRIGGERS_FILE);
    let shown = format!("{}/{TRIGGERS_FILE}", folder.trim_end_matches('/'));
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) => {
            push(error(format!(
                "`{name}`: cannot read {}: {e}{}; `{name}` names a skill folder, relative to the package root ({}), that holds {TRIGGERS_FILE}",
                file.display(),
                crate::suggest::sibling_hint(Path::new(&folder), &dir),
                root.display()
            )));
            return None;
        }
    };
    let parsed = match parse_triggers_file(&text) {
        Ok(parsed) => parsed,
        Err(message) => {
            push(error(format!("{shown}: {message}")));
            return None;
        }
    };
    let Some(skill) = Path::new(&folder)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
    else {
        push(error(format!(
            "`{name}` must end in the skill's folder, whose name is the skill's name, e.g. `\"skills/changelog\"`"
        )));
        return None;
    };
    if let Some(named) = &parsed.skill_name
        && *named != skill
    {
        push(error(format!(
            "{shown}: `skill_name` is {named:?}, but the skill in `{folder}` is named {skill:?} (a skill's name is its folder's name); correct `skill_name` or point `{name}` at the skill's folder"
        )));
        return None;
    }
    Some(SkillTriggers {
        folder,
        skill,
        file,
        queries: parsed.queries,
    })
}

impl SkillTriggers {
    /// One test per query: label `invoke_<n>_<slug>` or `dormant_<n>_<slug>`, handing it a
    /// `harness::TriggerCaseSpec` through `TestConfig::trigger_case`.
    fn cases(&self, krate: &TokenStream2) -> Vec<FileCase> {
        let folder = &self.folder;
        let skill = &self.skill;
        self.queries
            .iter()
            .map(|query| {
                let label = Ident::new(&query.label(), Span::call_site());
                let number = query.index as u32 + 1;
                let text = &query.query;
                let should = query.should_trigger;
                FileCase {
                    label,
                    setting: quote!(.trigger_case(#krate::harness::TriggerCaseSpec {
                        skill_dir: #folder,
                        skill: #skill,
                        number: #number,
                        query: #text,
                        should_trigger: #should,
                    })),
                    getter: quote!(ctx.trigger_case().expect("the test's trigger case")),
                }
            })
            .collect()
    }
}

/// The key's value, read and checked.
pub(crate) struct SkillEvals {
    /// The skill folder as written (relative to the package root).
    pub folder: String,
    /// The eval file's absolute path (the generated code `include_bytes!` it, so that editing it
    /// rebuilds the tests).
    pub file: PathBuf,
    /// Its entries, in file order.
    pub entries: Vec<EvalEntry>,
}

/// Read `skill_evals = "<folder>"`: `<package root>/<folder>/evals/evals.json` must exist,
/// parse, and name files that exist inside the folder. Errors are spanned on the literal and
/// name the file, the entry and the field.
pub(crate) fn read_skill_evals(
    name: &str,
    expr: &syn::Expr,
    push: &mut impl FnMut(syn::Error),
) -> Option<SkillEvals> {
    let (lit, root) = skill_folder(name, expr, push)?;
    let folder = lit.value();
    let error = |message: String| syn::Error::new(lit.span(), message);
    let skill = Path::new(&root).join(&folder);
    let file = skill.join(EVALS_FILE);
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) => {
            push(error(format!(
                "`{name}`: cannot read {}: {e}{}; `{name}` names a skill folder, relative to the package root ({}), that holds {EVALS_FILE}",
                file.display(),
                crate::suggest::sibling_hint(Path::new(&folder), &skill),
                Path::new(&root).display()
            )));
            return None;
        }
    };
    // Messages name the file as the user wrote its folder (relative to the package root).
    let shown = format!("{}/{EVALS_FILE}", folder.trim_end_matches('/'));
    let parsed = match parse_evals_file(&text) {
        Ok(parsed) => parsed,
        Err(message) => {
            push(error(format!("{shown}: {message}")));
            return None;
        }
    };
    let mut ok = true;
    for entry in &parsed.evals {
        for (i, path) in entry.files.iter().enumerate() {
            let problem = if !stays_inside(path) {
                Some("is not a relative path inside the skill folder")
            } else if !skill.join(path).is_file() {
                Some("does not exist")
            } else {
                None
            };
            if let Some(problem) = problem {
                push(error(format!(
                    "{shown}: {}: `files`[{i}] {path:?} {problem}; `files` are paths relative to the skill folder `{folder}`",
                    entry.describe(),
                )));
                ok = false;
            }
        }
    }
    ok.then_some(SkillEvals {
        folder,
        file,
        entries: parsed.evals,
    })
}

impl SkillEvals {
    /// The test label of each entry (`eval_<id>_<slug>`), with the `harness::SkillCaseSpec`
    /// literal its test passes to `TestConfig::skill_case`.
    pub(crate) fn cases(&self, krate: &TokenStream2) -> Vec<(Ident, TokenStream2)> {
        let folder = &self.folder;
        self.entries
            .iter()
            .map(|entry| {
                let label = Ident::new(&entry.label(), Span::call_site());
                let id = &entry.id;
                let prompt = &entry.prompt;
                let expected = match &entry.expected_output {
                    Some(text) => quote!(::core::option::Option::Some(#text)),
                    None => quote!(::core::option::Option::None),
                };
                let files = &entry.files;
                let expectations = &entry.expectations;
                let spec = quote! {
                    #krate::harness::SkillCaseSpec {
                        skill: #folder,
                        id: #id,
                        prompt: #prompt,
                        expected_output: #expected,
                        files: &[#(#files),*],
                        expectations: &[#(#expectations),*],
                    }
                };
                (label, spec)
            })
            .collect()
    }
}
