//! Model matrices (`models = ["a", "b"]`): the key's check and the module of each model's test.

use syn::Expr;
use syn::spanned::Spanned;

use crate::{Value, describe, literal};

/// The module of one model's test in a model matrix: `model_` and the model id with every
/// character other than an ASCII letter or digit as `_`, lower-cased (`claude-sonnet-4.5` ->
/// `model_claude_sonnet_4_5`). copilot-eval-core's `harness::model_segment` is the same
/// function (its tests and the attribute test check they agree).
pub(crate) fn model_segment(model: &str) -> String {
    let mut segment = String::from("model_");
    segment.extend(model.chars().map(|c| {
        if c.is_ascii_alphanumeric() {
            c.to_ascii_lowercase()
        } else {
            '_'
        }
    }));
    segment
}

/// `models = ["a", "b"]`: a non-empty array of distinct, non-empty string literals whose test
/// modules ([`model_segment`]) differ. Errors are spanned on the offending element.
pub(crate) fn parse_models(
    name: &str,
    expr: &Expr,
    push: &mut impl FnMut(syn::Error),
) -> Option<Vec<syn::LitStr>> {
    let array = match expr {
        Expr::Array(array) => array,
        other => {
            push(syn::Error::new(
                other.span(),
                format!(
                    "`{name}` expects a list of model ids, e.g. `[\"claude-sonnet-4.5\", \"gpt-5\"]`, found {}",
                    describe(&literal(other))
                ),
            ));
            return None;
        }
    };
    if array.elems.is_empty() {
        push(syn::Error::new(
            array.span(),
            format!(
                "`{name}` must list at least one model, e.g. `[\"claude-sonnet-4.5\", \"gpt-5\"]`"
            ),
        ));
        return None;
    }
    let mut models: Vec<syn::LitStr> = Vec::new();
    let mut ok = true;
    for element in &array.elems {
        let model = match literal(element) {
            Some(Value::Str(s)) if s.value().trim().is_empty() => {
                push(syn::Error::new(
                    s.span(),
                    format!("`{name}` lists an empty model id; write each model's id"),
                ));
                ok = false;
                continue;
            }
            Some(Value::Str(s)) => s,
            value => {
                push(syn::Error::new(
                    element.span(),
                    format!(
                        "`{name}` lists model ids as string literals, found {}",
                        describe(&value)
                    ),
                ));
                ok = false;
                continue;
            }
        };
        if let Some(earlier) = models
            .iter()
            .find(|m| model_segment(&m.value()) == model_segment(&model.value()))
        {
            let message = if earlier.value() == model.value() {
                format!(
                    "`{name}` lists {:?} twice; list each model once",
                    model.value()
                )
            } else {
                format!(
                    "{:?} and {:?} would both be the test module `{}`; list models whose ids differ in more than punctuation or case",
                    earlier.value(),
                    model.value(),
                    model_segment(&model.value())
                )
            };
            push(syn::Error::new(model.span(), message));
            ok = false;
            continue;
        }
        models.push(model);
    }
    ok.then_some(models)
}
