//! `skill_evals = "skills/release-notes"`: one eval test per entry of the skill's
//! `evals/evals.json`, read at compile time. The file's format and its checks are core's
//! (`customization::skill::evals_file`, compiled here by `include!`), so the attribute and `lint`
//! read it the same way.

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

use evals_file::{EVALS_FILE, EvalEntry, parse_evals_file, stays_inside};

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
    let value = literal(expr);
    let lit = match &value {
        Some(Value::Str(lit)) if !lit.value().trim().is_empty() => lit,
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
    let folder = lit.value();
    let error = |message: String| syn::Error::new(lit.span(), message);
    let Some(root) = std::env::var_os("CARGO_MANIFEST_DIR") else {
        push(error(format!(
            "`{name}` is read at compile time from the package root, but CARGO_MANIFEST_DIR is not set (build with cargo)"
        )));
        return None;
    };
    let skill = Path::new(&root).join(&folder);
    let file = skill.join(EVALS_FILE);
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) => {
            push(error(format!(
                "`{name}`: cannot read {}: {e}; `{name}` names a skill folder, relative to the package root ({}), that holds {EVALS_FILE}",
                file.display(),
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

    /// `include_bytes!` of the eval file, so that cargo rebuilds the tests when it changes.
    pub(crate) fn tracking(&self) -> TokenStream2 {
        let file = self.file.display().to_string();
        quote! {
            const _: &[u8] = ::core::include_bytes!(#file);
        }
    }
}
