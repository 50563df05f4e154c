//! The `#[copilot_eval]` test attribute of copilot-eval.
//!
//! Thin by design: it parses and validates the attribute's keys (compile errors are spanned on
//! the offending token), emits each eval key as a call of the `CopilotEvalBuilder` method the
//! key table names (in a configure closure, `harness::Configure`, that `EvalContext::eval()`
//! applies), and emits a libtest test that calls `copilot_eval_core::harness::run_test`.
//! Everything the test does at run time lives in `copilot-eval-core` (module `harness`). On any
//! error the original function is still emitted next to the error, so editors and type checking
//! keep working.
//!
//! Use it through `copilot_eval_core::copilot_eval` (re-exported there):
//!
//! ```ignore
//! use copilot_eval_core::copilot_eval;
//! use copilot_eval_core::harness::EvalContext;
//!
//! #[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120, max_tool_calls = 10)]
//! async fn writes_the_changelog(ctx: EvalContext) {
//!     let eval = ctx.eval().build().unwrap();
//!     let result = ctx.run(&eval, "Write CHANGELOG.md for release 1.2.").await;
//!     assert!(result.success, "{:?}", result.error);
//! }
//! ```
//!
//! The function becomes `writes_the_changelog::__copilot_eval`, a test marked
//! `#[ignore = "copilot eval: run it with cargo copilot-eval (plain cargo test skips it)"]`, so
//! plain `cargo test` never spends model requests; `cargo copilot-eval` finds tests by the
//! `::__copilot_eval` suffix and runs each with `--exact --ignored`.
//!
//! Keys (all optional): `name` (string), `model` (string), `max_tool_calls` (integer, a `u32`),
//! `timeout_s` (number > 0, seconds), `reasoning_effort` (`low`, `medium`, `high`, `xhigh`,
//! `max`), `client_mode` (`copilot-cli`, `empty`), `image_detail` (`auto`, `low`, `high`),
//! `audit_requests` (bool), `models` (a list of model ids: a model matrix, below), `cassette`
//! (path relative to the package root), `trials` (integer >= 1: the runner runs the eval in
//! that many trials), `min_pass_rate` (number in (0, 1]: the pass rate its trials need),
//! `crate` (path of
//! the core crate when renamed, default `::copilot_eval_core`). The full reference is
//! `docs/attribute.md`.
//!
//! Case matrices: `#[case::label(values...)]` lines under the attribute make one eval test per
//! case, `function::label::__copilot_eval`, each calling the function with the context and the
//! case's values (one per parameter after the context).
//!
//! Model matrices: `models = ["claude-sonnet-4.5", "gpt-5"]` makes one eval test per model,
//! `function::model_claude_sonnet_4_5::__copilot_eval` (with cases,
//! `function::label::model_gpt_5::__copilot_eval`), each running its eval on its model
//! (`harness::TestConfig::matrix_model`: named `function@model`, its own cassette). The module
//! is `model_` and the id with every character other than an ASCII letter or digit as `_`,
//! lower-cased; two models that give the same module, `model` next to `models`, and a case label
//! beginning with `model_` are errors.
//!
//! # Adding a key
//!
//! The keys are listed once, in `src/keys.rs` (`key: Kind => Target.method;`). For a new eval
//! setting: give `CopilotEvalBuilder` the method (validated in its `build()`), add the key's line
//! to `keys.rs` and its row to `docs/attribute.md`. The macro's parsing, checks and expansion
//! follow the table; copilot-eval-core's `harness::tests::attribute_keys` reads the same file
//! and fails until the method exists with the kind's value type, every `OneOf` value is exactly
//! what core accepts, and the docs list the key.
#![deny(missing_docs)]

use proc_macro::TokenStream;
use proc_macro2::{Ident, Span, TokenStream as TokenStream2};
use quote::{ToTokens, quote, quote_spanned};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, ExprUnary, Lit, Meta, Token, UnOp};

/// How a key's value is written, checked at compile time, and passed on (see `keys.rs`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A non-empty string literal, passed as `&'static str`.
    Text,
    /// A non-negative integer literal that fits a `u32`, passed as `u32`.
    Count,
    /// A positive number of seconds (integer or float literal), passed as `f64`.
    Seconds,
    /// An integer literal of at least 1 that fits a `u32`, passed as `u32` (`trials`).
    Positive,
    /// A number above 0 and at most 1 (integer or float literal), passed as `f64`
    /// (`min_pass_rate`).
    Fraction,
    /// A string literal among the key's `allowed` values, passed as `&'static str`.
    OneOf,
    /// `true` or `false`.
    Bool,
    /// `true`, `false`, or a string literal among the key's `allowed` values; the literal is
    /// passed as it is (`bool` or `&'static str`).
    Switch,
    /// A string literal naming a path; read by the macro itself.
    CratePath,
    /// A non-empty list of distinct non-empty string literals (model ids); read by the macro
    /// itself: one test per model.
    Models,
    /// A string literal naming a skill folder; read by the macro itself: one test per entry of
    /// its `evals/evals.json`.
    SkillEvals,
    /// A string literal naming a skill folder; read by the macro itself: one test per query of
    /// its trigger set `evals/triggers.json`.
    SkillTriggers,
}

/// Where a key's value goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    /// An eval setting: a call of the `CopilotEvalBuilder` method named by `Key::method`, emitted
    /// in the test's configure closure.
    Builder,
    /// A test setting: a call of the `harness::TestConfig` method named by `Key::method`.
    TestConfig,
    /// Read by the macro only (`crate`).
    Attribute,
}

/// One attribute key, from `keys.rs`.
struct Key {
    /// The key as written in the attribute.
    name: &'static str,
    kind: Kind,
    /// The accepted values of a [`Kind::OneOf`] key; empty otherwise.
    allowed: &'static [&'static str],
    target: Target,
    /// The method the value is passed to (empty for [`Target::Attribute`]).
    method: &'static str,
}

/// Reads `keys.rs` into [`KEYS`] and [`IGNORE_REASON`]. copilot-eval-core's harness tests read
/// the same file with their own `key_table!`.
macro_rules! key_table {
    (
        ignore_reason = $reason:literal;
        $( $key:ident : $kind:ident $([ $($value:literal),* ])? => $target:ident $(. $method:ident)? ; )*
    ) => {
        /// The `#[ignore]` reason of generated tests (equal to `harness::IGNORE_REASON` in core;
        /// a core test checks it).
        const IGNORE_REASON: &str = $reason;
        /// Every key the attribute accepts, in documentation order.
        const KEYS: &[Key] = &[$(
            Key {
                name: stringify!($key),
                kind: Kind::$kind,
                allowed: &[$($($value),*)?],
                target: Target::$target,
                method: key_table!(@method $($method)?),
            }
        ),*];
    };
    (@method) => { "" };
    (@method $method:ident) => { stringify!($method) };
}

include!("keys.rs");

mod models;
mod numbers;
mod skill_evals;
// Core's "did you mean ...?" (a leaf module), shared so both crates suggest alike.
mod suggest {
    include!("../../copilot-eval-core/src/suggest.rs");
}
use models::{model_segment, parse_models};
use skill_evals::{SkillFile, read_skill_evals, read_skill_triggers};

/// The names of all keys, for error messages.
fn key_names() -> String {
    KEYS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
}

/// "did you mean `max_tool_calls`? " when a key is close to what was written (a typo, a missing
/// or extra letter), else "".
fn nearest_key_hint(written: &str) -> String {
    suggest::nearest(written, KEYS.iter().map(|k| k.name))
        .map(|name| format!("did you mean `{name}`? "))
        .unwrap_or_default()
}

/// Turn an `async fn` taking one context parameter into a copilot-eval test; see the crate
/// documentation for the keys and what is generated.
#[proc_macro_attribute]
pub fn copilot_eval(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut function: syn::ItemFn = match syn::parse(item.clone()) {
        Ok(function) => function,
        Err(error) => {
            let mut tokens = TokenStream2::from(item);
            tokens.extend(error.into_compile_error());
            return tokens.into();
        }
    };
    let mut errors: Option<syn::Error> = None;
    let mut push = |error: syn::Error| match &mut errors {
        Some(all) => all.combine(error),
        None => errors = Some(error),
    };
    let config = match Punctuated::<Meta, Token![,]>::parse_terminated.parse(args) {
        Ok(metas) => parse_config(metas, &mut push),
        Err(error) => {
            push(error);
            Config::default()
        }
    };
    let mut cases = take_cases(&mut function, &mut push);
    if let Some(key) = config.skill_file_key {
        if let Some(case) = cases.first() {
            push(syn::Error::new(
                case.span,
                format!(
                    "`{key}` makes one test per entry of the skill's {}; remove the `#[case]` attributes",
                    skill_file_of(key)
                ),
            ));
        }
        cases.clear();
    }
    check_function(&function, &cases, config.skill_file_key, &mut push);
    match errors {
        Some(errors) => {
            let mut tokens = function.into_token_stream();
            tokens.extend(errors.into_compile_error());
            tokens.into()
        }
        None => expand(function, config, cases).into(),
    }
}

/// One `#[case::label(values...)]` of a case matrix.
struct Case {
    label: Ident,
    /// The values passed after the context, in order.
    values: Vec<Expr>,
    /// The whole attribute, for errors.
    span: Span,
    /// For an entry of `skill_evals` or `skill_triggers`: the `TestConfig` call that hands the
    /// test its entry, and the expression that reads it back (passed instead of `values`).
    file_case: Option<(TokenStream2, TokenStream2)>,
}

/// The file a `skill_evals` or `skill_triggers` key reads, for messages.
fn skill_file_of(key: &str) -> &'static str {
    if key == "skill_triggers" {
        "trigger set evals/triggers.json"
    } else {
        "evals/evals.json"
    }
}

/// Remove the `#[case::label(...)]` attributes from `function` and parse them. Errors (spanned on
/// the attribute): a case without a label, a label given twice, values that are not
/// comma-separated expressions.
fn take_cases(function: &mut syn::ItemFn, push: &mut impl FnMut(syn::Error)) -> Vec<Case> {
    let mut cases: Vec<Case> = Vec::new();
    let mut kept = Vec::new();
    for attr in std::mem::take(&mut function.attrs) {
        let path = attr.path();
        if path
            .segments
            .first()
            .map(|s| s.ident != "case")
            .unwrap_or(true)
        {
            kept.push(attr);
            continue;
        }
        let span = attr.meta.span();
        let label = match path.segments.len() {
            2 => path.segments[1].ident.clone(),
            _ => {
                push(syn::Error::new(
                    span,
                    "name each case: `#[case::english(\"Say hello.\")]` (the label names the test: `function::english`)",
                ));
                continue;
            }
        };
        let values = match &attr.meta {
            Meta::Path(_) => Vec::new(),
            Meta::List(list) => {
                match list.parse_args_with(Punctuated::<Expr, Token![,]>::parse_terminated) {
                    Ok(values) => values.into_iter().collect(),
                    Err(error) => {
                        push(error);
                        continue;
                    }
                }
            }
            Meta::NameValue(nv) => {
                push(syn::Error::new(
                    nv.span(),
                    "write the case's values in parentheses: `#[case::label(value, ...)]`",
                ));
                continue;
            }
        };
        if label.to_string().starts_with("model_") {
            push(syn::Error::new(
                label.span(),
                format!(
                    "the case label `{label}` begins with `model_`, which names the tests of a model matrix (`models = [..]`); choose another label"
                ),
            ));
        }
        if cases.iter().any(|c| c.label == label) {
            push(syn::Error::new(
                label.span(),
                format!("the case `{label}` is given twice; give each case its own label"),
            ));
            continue;
        }
        cases.push(Case {
            label,
            values,
            span,
            file_case: None,
        });
    }
    function.attrs = kept;
    cases
}

/// The validated keys.
#[derive(Default)]
struct Config {
    /// One entry per given `Builder` or `TestConfig` key: the key, its method name spanned on
    /// the key (so a missing method is reported there), and the value to pass, spanned on the
    /// literal.
    calls: Vec<(&'static Key, Ident, TokenStream2)>,
    krate: Option<syn::Path>,
    /// `models = [..]`: the models of a model matrix, in order (empty: no matrix).
    models: Vec<syn::LitStr>,
    /// `skill_evals = ".."` or `skill_triggers = ".."`: the skill's file, read.
    skill_file: Option<SkillFile>,
    /// Which of the two was given (also when its file could not be read).
    skill_file_key: Option<&'static str>,
}

/// A literal value, possibly negated.
enum Value {
    Str(syn::LitStr),
    Int(syn::LitInt, bool),
    Float(syn::LitFloat, bool),
    Bool(syn::LitBool),
}

fn literal(expr: &Expr) -> Option<Value> {
    match expr {
        Expr::Lit(ExprLit { lit, .. }) => match lit {
            Lit::Str(s) => Some(Value::Str(s.clone())),
            // A negative literal can arrive as one token (`-1`).
            Lit::Int(i) => Some(Value::Int(i.clone(), i.base10_digits().starts_with('-'))),
            Lit::Float(f) => Some(Value::Float(f.clone(), f.base10_digits().starts_with('-'))),
            Lit::Bool(b) => Some(Value::Bool(b.clone())),
            _ => None,
        },
        Expr::Unary(ExprUnary {
            op: UnOp::Neg(_),
            expr,
            ..
        }) => match &**expr {
            Expr::Lit(ExprLit {
                lit: Lit::Int(i), ..
            }) => Some(Value::Int(i.clone(), true)),
            Expr::Lit(ExprLit {
                lit: Lit::Float(f), ..
            }) => Some(Value::Float(f.clone(), true)),
            _ => None,
        },
        Expr::Group(group) => literal(&group.expr),
        _ => None,
    }
}

fn describe(value: &Option<Value>) -> &'static str {
    match value {
        Some(Value::Str(_)) => "a string literal",
        Some(Value::Int(..)) => "an integer literal",
        Some(Value::Float(..)) => "a float literal",
        Some(Value::Bool(_)) => "a bool literal",
        None => "an expression (only literals are accepted)",
    }
}

fn parse_config(metas: Punctuated<Meta, Token![,]>, push: &mut impl FnMut(syn::Error)) -> Config {
    let mut config = Config::default();
    let mut seen: Vec<&'static str> = Vec::new();
    for meta in metas {
        let name_value = match meta {
            Meta::NameValue(nv) => nv,
            other => {
                let key = other
                    .path()
                    .get_ident()
                    .map(|i| i.to_string())
                    .unwrap_or_default();
                let hint = if KEYS.iter().any(|k| k.name == key) {
                    format!("write `{key} = <value>`")
                } else {
                    format!("valid keys: {}", key_names())
                };
                push(syn::Error::new(
                    other.span(),
                    format!("expected `key = value`; {hint}"),
                ));
                continue;
            }
        };
        let key_span = name_value.path.span();
        let written = match name_value.path.get_ident() {
            Some(ident) => ident.to_string(),
            None => name_value.path.to_token_stream().to_string(),
        };
        let written = written.trim_start_matches("r#");
        let Some(key) = KEYS.iter().find(|k| k.name == written) else {
            push(syn::Error::new(
                key_span,
                format!(
                    "unknown key `{written}` in #[copilot_eval]; {}valid keys: {}",
                    nearest_key_hint(written),
                    key_names()
                ),
            ));
            continue;
        };
        let name = key.name;
        if seen.contains(&name) {
            push(syn::Error::new(
                key_span,
                format!("`{name}` is given twice; give each key once"),
            ));
            continue;
        }
        seen.push(name);
        let expr = &name_value.value;
        let value = literal(expr);
        let wrong_type = |expected: &str| {
            syn::Error::new(
                expr.span(),
                format!("`{name}` expects {expected}, found {}", describe(&value)),
            )
        };
        let tokens: TokenStream2 = match key.kind {
            Kind::Text => match &value {
                Some(Value::Str(s)) if s.value().trim().is_empty() => {
                    push(syn::Error::new(
                        s.span(),
                        format!("`{name}` must not be empty"),
                    ));
                    continue;
                }
                Some(Value::Str(s)) => s.to_token_stream(),
                _ => {
                    push(wrong_type("a string literal, e.g. `\"...\"`"));
                    continue;
                }
            },
            // A closed set of strings; a switch also takes `true` or `false`.
            Kind::OneOf | Kind::Switch => match &value {
                Some(Value::Bool(b)) if matches!(key.kind, Kind::Switch) => b.to_token_stream(),
                Some(Value::Str(s)) if key.allowed.contains(&s.value().as_str()) => {
                    s.to_token_stream()
                }
                Some(Value::Str(s)) => {
                    push(syn::Error::new(
                        s.span(),
                        format!(
                            "`{name}` = {:?} is not one of: {}",
                            s.value(),
                            key.allowed.join(", ")
                        ),
                    ));
                    continue;
                }
                _ => {
                    let switch = if matches!(key.kind, Kind::Switch) {
                        "`true`, `false` or "
                    } else {
                        ""
                    };
                    push(wrong_type(&format!(
                        "{switch}a string literal, one of: {}",
                        key.allowed.join(", ")
                    )));
                    continue;
                }
            },
            Kind::Count | Kind::Seconds | Kind::Positive | Kind::Fraction => {
                match numbers::numeric(key.kind, name, expr, &value) {
                    Some(Ok(tokens)) => tokens,
                    Some(Err(error)) => {
                        push(error);
                        continue;
                    }
                    None => unreachable!("a numeric kind"),
                }
            }
            Kind::Bool => match &value {
                Some(Value::Bool(b)) => b.to_token_stream(),
                _ => {
                    push(wrong_type("`true` or `false`"));
                    continue;
                }
            },
            Kind::Models => {
                if let Some(models) = parse_models(name, expr, push) {
                    config.models = models;
                }
                continue;
            }
            Kind::SkillEvals | Kind::SkillTriggers => {
                if let Some(first) = config.skill_file_key {
                    push(syn::Error::new(
                        expr.span(),
                        format!(
                            "give either `{first}` or `{name}`: each makes one test per entry of its file; write a second function for the other"
                        ),
                    ));
                    continue;
                }
                config.skill_file_key = Some(key.name);
                config.skill_file = if key.kind == Kind::SkillEvals {
                    read_skill_evals(name, expr, push).map(SkillFile::Evals)
                } else {
                    read_skill_triggers(name, expr, push).map(SkillFile::Triggers)
                };
                continue;
            }
            Kind::CratePath => match &value {
                Some(Value::Str(s)) => match s.parse::<syn::Path>() {
                    Ok(path) => {
                        config.krate = Some(path);
                        continue;
                    }
                    Err(_) => {
                        push(syn::Error::new(
                            s.span(),
                            format!("`{name}` must name a path, e.g. `\"my_copilot_eval_core\"`"),
                        ));
                        continue;
                    }
                },
                _ => {
                    push(wrong_type("a string literal naming a crate path"));
                    continue;
                }
            },
        };
        if key.target != Target::Attribute {
            config
                .calls
                .push((key, Ident::new(key.method, key_span), tokens));
        }
    }
    if !config.models.is_empty()
        && let Some((_, method, _)) = config.calls.iter().find(|(k, ..)| k.name == "model")
    {
        push(syn::Error::new(
            method.span(),
            "give either `model` or `models`: with `models = [..]` each test runs on its own model",
        ));
    }
    config
}

fn check_function(
    function: &syn::ItemFn,
    cases: &[Case],
    skill_file_key: Option<&str>,
    push: &mut impl FnMut(syn::Error),
) {
    let sig = &function.sig;
    if sig.asyncness.is_none() {
        push(syn::Error::new(
            sig.fn_token.span(),
            "#[copilot_eval] needs an `async fn`: write `async fn name(ctx: EvalContext)`",
        ));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        push(syn::Error::new(
            sig.generics.span(),
            "an eval test cannot be generic",
        ));
    }
    let parameters: Vec<&syn::FnArg> = sig.inputs.iter().collect();
    if let Some(key) = skill_file_key {
        if !matches!(
            parameters.as_slice(),
            [syn::FnArg::Typed(_), syn::FnArg::Typed(_)]
        ) {
            let case = if key == "skill_triggers" {
                "TriggerCase"
            } else {
                "SkillCase"
            };
            push(syn::Error::new(
                sig.paren_token.span.join(),
                format!(
                    "a `{key}` test takes its context and its case: `ctx: EvalContext, case: {case}`"
                ),
            ));
        }
    } else if !cases.is_empty() {
        // A case matrix: the context, then one parameter per value of each case.
        let wanted = parameters.len().saturating_sub(1);
        for case in cases {
            if case.values.len() != wanted {
                push(syn::Error::new(
                    case.span,
                    format!(
                        "the case `{}` gives {} {}, but the function takes {wanted} after its context; give every case one value per parameter",
                        case.label,
                        case.values.len(),
                        if case.values.len() == 1 {
                            "value"
                        } else {
                            "values"
                        }
                    ),
                ));
            }
        }
        if let Some(syn::FnArg::Receiver(receiver)) = parameters.first() {
            push(syn::Error::new(
                receiver.span(),
                "an eval test is a free function; its first parameter is its context: `ctx: EvalContext`",
            ));
        }
        if parameters.is_empty() {
            push(syn::Error::new(
                sig.paren_token.span.join(),
                "an eval test takes its context first: `ctx: EvalContext`",
            ));
        }
    } else {
        match parameters.as_slice() {
            [syn::FnArg::Typed(_)] => {}
            [syn::FnArg::Receiver(receiver)] => push(syn::Error::new(
                receiver.span(),
                "an eval test is a free function; it takes one parameter, its context: `ctx: EvalContext`",
            )),
            [] => push(syn::Error::new(
                sig.paren_token.span.join(),
                "an eval test takes one parameter, its context: `ctx: EvalContext`",
            )),
            [_, extra @ ..] => {
                let mut span = extra[0].span();
                for arg in &extra[1..] {
                    span = span.join(arg.span()).unwrap_or(span);
                }
                push(syn::Error::new(
                    span,
                    "an eval test takes exactly one parameter, its context (`ctx: EvalContext`); remove the others, or give their values in cases (`#[case::label(...)]`)",
                ))
            }
        }
    }
    if let Some(variadic) = &sig.variadic {
        push(syn::Error::new(
            variadic.span(),
            "an eval test cannot be variadic",
        ));
    }
    for attr in &function.attrs {
        let last = attr
            .path()
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        match last.as_str() {
            "test" | "copilot_eval" => push(syn::Error::new(
                attr.path().span(),
                format!(
                    "a second test attribute: #[copilot_eval] already makes this function a test; remove `#[{}]`",
                    attr.path().to_token_stream().to_string().replace(' ', "")
                ),
            )),
            "ignore" => push(syn::Error::new(
                attr.path().span(),
                "#[copilot_eval] tests are already ignored by plain `cargo test` (they run with `cargo copilot-eval`); remove `#[ignore]`",
            )),
            _ => {}
        }
    }
}

fn expand(function: syn::ItemFn, config: Config, mut cases: Vec<Case>) -> TokenStream2 {
    let krate = config
        .krate
        .map(|p| p.to_token_stream())
        .unwrap_or_else(|| quote!(::copilot_eval_core));
    let tracking = config.skill_file.as_ref().map(SkillFile::tracking);
    if let Some(file) = &config.skill_file {
        cases = file
            .cases(&krate)
            .into_iter()
            .map(|case| Case {
                label: case.label,
                values: Vec::new(),
                span: Span::call_site(),
                file_case: Some((case.setting, case.getter)),
            })
            .collect();
    }
    let ident = &function.sig.ident;
    let name = ident.to_string();
    let span = Span::call_site();
    // `line!()` spanned at the function's name: the line annotations point at.
    let line = quote_spanned! {ident.span()=> ::core::line!()};
    let calls = |target: Target| {
        let mut calls = TokenStream2::new();
        for (_, method, value) in config.calls.iter().filter(|(k, ..)| k.target == target) {
            calls.extend(quote!(.#method(#value)));
        }
        calls
    };
    let eval_calls = calls(Target::Builder);
    let test_calls = calls(Target::TestConfig);
    // The libtest test: `case` is `.case("label")` or nothing; `test` the function it runs.
    let test_fn = |case: TokenStream2, configure: TokenStream2, test: TokenStream2| {
        quote_spanned! {span=>
            #[cfg(test)]
            #[::core::prelude::v1::test]
            #[ignore = #IGNORE_REASON]
            fn __copilot_eval() {
                #krate::harness::run_test(
                    #krate::harness::TestConfig::new(
                        #name,
                        ::core::module_path!(),
                        ::core::env!("CARGO_MANIFEST_DIR"),
                    )
                    .source(::core::file!(), #line)
                    #case
                    .configure(#configure)#test_calls,
                    #test,
                )
            }
        }
    };
    // One test per case and per model (`models = [..]`), each in its own module nested in the
    // function's: `function::label::model_x`; `up` is the path from that module to the
    // function's module.
    let models: Vec<Option<&syn::LitStr>> = if config.models.is_empty() {
        vec![None]
    } else {
        config.models.iter().map(Some).collect()
    };
    let per_model = |case: Option<&Case>, up: TokenStream2| -> TokenStream2 {
        models
            .iter()
            .map(|model| {
                let mut settings = TokenStream2::new();
                if let Some(case) = case {
                    let label_text = case.label.to_string();
                    settings.extend(quote!(.case(#label_text)));
                    if let Some((setting, _)) = &case.file_case {
                        settings.extend(setting.clone());
                    }
                }
                let up = match model {
                    Some(_) => quote!(super::#up),
                    None => up.clone(),
                };
                if let Some(model) = model {
                    settings.extend(quote!(.matrix_model(#model)));
                }
                let test = match case {
                    Some(Case {
                        file_case: Some((_, getter)),
                        ..
                    }) => {
                        quote!(|ctx: #krate::harness::EvalContext| {
                            let case = #getter;
                            #up #ident(ctx, case)
                        })
                    }
                    Some(case) => {
                        let values = &case.values;
                        quote!(|ctx| #up #ident(ctx, #(#values),*))
                    }
                    None => quote!(#up #ident),
                };
                // `__CONFIGURE` is in `mod function`, one level below the function's module.
                let configure = quote!(#up #ident::__CONFIGURE);
                let test = test_fn(settings, configure, test);
                match model {
                    Some(model) => {
                        let module = Ident::new(&model_segment(&model.value()), span);
                        quote_spanned! {span=>
                            #[doc(hidden)]
                            #[allow(non_snake_case, unused_imports)]
                            pub(super) mod #module {
                                // A case's values are written in the function's module:
                                // resolve them there.
                                use #up *;

                                #test
                            }
                        }
                    }
                    None => test,
                }
            })
            .collect()
    };
    let tests: TokenStream2 = if cases.is_empty() {
        per_model(None, quote!(super::))
    } else {
        // One module per case, its test calling the function with the case's values.
        cases
            .iter()
            .map(|case| {
                let label = &case.label;
                let tests = per_model(Some(case), quote!(super::super::));
                quote_spanned! {span=>
                    #[doc(hidden)]
                    #[allow(non_snake_case, unused_imports)]
                    pub(super) mod #label {
                        // The case's values are written in the function's module: resolve
                        // them there.
                        use super::super::*;

                        #tests
                    }
                }
            })
            .collect()
    };
    // `__CONFIGURE` is outside `#[cfg(test)]` so that the builder calls are type-checked by every
    // build of the crate, not only its test build.
    quote_spanned! {span=>
        #[cfg_attr(not(test), allow(dead_code))]
        #function

        #[doc(hidden)]
        mod #ident {
            #[allow(dead_code)]
            pub(super) const __CONFIGURE: #krate::harness::Configure = |builder| builder #eval_calls;

            #tracking

            #tests
        }
    }
}
