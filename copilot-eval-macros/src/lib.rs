//! The `#[copilot_eval]` test attribute of copilot-eval.
//!
//! Thin by design: it parses and validates the attribute's keys (compile errors are spanned on
//! the offending token), then emits a libtest test that calls
//! `copilot_eval_core::harness::run_test`. Everything the test does at run time lives in
//! `copilot-eval-core` (module `harness`). On any error the original function is still emitted
//! next to the error, so editors and type checking keep working.
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
//! `#[ignore = "copilot eval: run it with cargo copilot-eval (spends model requests live)"]`, so
//! plain `cargo test` never spends model requests; `cargo copilot-eval` finds tests by the
//! `::__copilot_eval` suffix and runs each with `--exact --ignored`.
//!
//! Keys (all optional): `name` (string), `model` (string), `max_tool_calls` (integer >= 0),
//! `timeout_s` (number > 0, seconds), `reasoning_effort` (`low`, `medium`, `high`, `xhigh`,
//! `max`), `client_mode` (`copilot-cli`, `empty`), `image_detail` (`auto`, `low`, `high`),
//! `audit_requests` (bool), `cassette` (path relative to the package root), `crate` (path of
//! the core crate when renamed, default `::copilot_eval_core`). The full reference is
//! `docs/attribute.md`.
#![deny(missing_docs)]

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{ToTokens, quote, quote_spanned};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, ExprUnary, Lit, Meta, Token, UnOp};

/// Every key the attribute accepts, in documentation order.
const KEYS: &[&str] = &[
    "name",
    "model",
    "max_tool_calls",
    "timeout_s",
    "reasoning_effort",
    "client_mode",
    "image_detail",
    "audit_requests",
    "cassette",
    "crate",
];

/// The `#[ignore]` reason of generated tests (equal to `harness::IGNORE_REASON` in core).
const IGNORE_REASON: &str =
    "copilot eval: run it with cargo copilot-eval (spends model requests live)";

/// Turn an `async fn` taking one context parameter into a copilot-eval test; see the crate
/// documentation for the keys and what is generated.
#[proc_macro_attribute]
pub fn copilot_eval(args: TokenStream, item: TokenStream) -> TokenStream {
    let function: syn::ItemFn = match syn::parse(item.clone()) {
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
    check_function(&function, &mut push);
    match errors {
        Some(errors) => {
            let mut tokens = function.into_token_stream();
            tokens.extend(errors.into_compile_error());
            tokens.into()
        }
        None => expand(function, config).into(),
    }
}

/// The validated keys.
#[derive(Default)]
struct Config {
    name: Option<String>,
    model: Option<String>,
    max_tool_calls: Option<i64>,
    timeout_s: Option<f64>,
    reasoning_effort: Option<String>,
    client_mode: Option<String>,
    image_detail: Option<String>,
    audit_requests: Option<bool>,
    cassette: Option<String>,
    krate: Option<syn::Path>,
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
    let mut seen: Vec<String> = Vec::new();
    for meta in metas {
        let name_value = match meta {
            Meta::NameValue(nv) => nv,
            other => {
                let key = other
                    .path()
                    .get_ident()
                    .map(|i| i.to_string())
                    .unwrap_or_default();
                let hint = if KEYS.contains(&key.as_str()) {
                    format!("write `{key} = <value>`")
                } else {
                    format!("valid keys: {}", KEYS.join(", "))
                };
                push(syn::Error::new(
                    other.span(),
                    format!("expected `key = value`; {hint}"),
                ));
                continue;
            }
        };
        let key_span = name_value.path.span();
        let key = match name_value.path.get_ident() {
            Some(ident) => ident.to_string(),
            None => name_value.path.to_token_stream().to_string(),
        };
        let key = key.trim_start_matches("r#").to_owned();
        if !KEYS.contains(&key.as_str()) {
            push(syn::Error::new(
                key_span,
                format!(
                    "unknown key `{key}` in #[copilot_eval]; valid keys: {}",
                    KEYS.join(", ")
                ),
            ));
            continue;
        }
        if seen.contains(&key) {
            push(syn::Error::new(
                key_span,
                format!("`{key}` is given twice; give each key once"),
            ));
            continue;
        }
        seen.push(key.clone());
        let expr = &name_value.value;
        let value = literal(expr);
        let wrong_type = |expected: &str| {
            syn::Error::new(
                expr.span(),
                format!("`{key}` expects {expected}, found {}", describe(&value)),
            )
        };
        match key.as_str() {
            "name" | "model" | "cassette" => match &value {
                Some(Value::Str(s)) if s.value().trim().is_empty() => push(syn::Error::new(
                    s.span(),
                    format!("`{key}` must not be empty"),
                )),
                Some(Value::Str(s)) => {
                    let text = Some(s.value());
                    match key.as_str() {
                        "name" => config.name = text,
                        "model" => config.model = text,
                        _ => config.cassette = text,
                    }
                }
                _ => push(wrong_type("a string literal, e.g. `\"...\"`")),
            },
            "reasoning_effort" | "client_mode" | "image_detail" => {
                let allowed: &[&str] = match key.as_str() {
                    "reasoning_effort" => &["low", "medium", "high", "xhigh", "max"],
                    "client_mode" => &["copilot-cli", "empty"],
                    _ => &["auto", "low", "high"],
                };
                match &value {
                    Some(Value::Str(s)) if allowed.contains(&s.value().as_str()) => {
                        let text = Some(s.value());
                        match key.as_str() {
                            "reasoning_effort" => config.reasoning_effort = text,
                            "client_mode" => config.client_mode = text,
                            _ => config.image_detail = text,
                        }
                    }
                    Some(Value::Str(s)) => push(syn::Error::new(
                        s.span(),
                        format!(
                            "`{key}` = {:?} is not one of: {}",
                            s.value(),
                            allowed.join(", ")
                        ),
                    )),
                    _ => push(wrong_type(&format!(
                        "a string literal, one of: {}",
                        allowed.join(", ")
                    ))),
                }
            }
            "max_tool_calls" => match &value {
                Some(Value::Int(_, true)) => push(syn::Error::new(
                    expr.span(),
                    "`max_tool_calls` must not be negative; use 0 to admit no tool call",
                )),
                Some(Value::Int(i, false)) => match i.base10_parse::<u32>() {
                    Ok(n) => config.max_tool_calls = Some(i64::from(n)),
                    Err(_) => push(syn::Error::new(
                        i.span(),
                        format!("`max_tool_calls` must be at most {}", u32::MAX),
                    )),
                },
                _ => push(wrong_type("a non-negative integer literal, e.g. `10`")),
            },
            "timeout_s" => {
                let seconds = match &value {
                    Some(Value::Int(i, negative)) => i
                        .base10_digits()
                        .trim_start_matches('-')
                        .parse::<f64>()
                        .ok()
                        .map(|v| (v, *negative)),
                    Some(Value::Float(f, negative)) => f
                        .base10_digits()
                        .trim_start_matches('-')
                        .parse::<f64>()
                        .ok()
                        .map(|v| (v, *negative)),
                    _ => {
                        push(wrong_type("a number of seconds, e.g. `120` or `2.5`"));
                        continue;
                    }
                };
                match seconds {
                    Some((v, false)) if v.is_finite() && v > 0.0 => config.timeout_s = Some(v),
                    _ => push(syn::Error::new(
                        expr.span(),
                        "`timeout_s` must be a positive number of seconds",
                    )),
                }
            }
            "audit_requests" => match &value {
                Some(Value::Bool(b)) => config.audit_requests = Some(b.value),
                _ => push(wrong_type("`true` or `false`")),
            },
            "crate" => match &value {
                Some(Value::Str(s)) => match s.parse::<syn::Path>() {
                    Ok(path) => config.krate = Some(path),
                    Err(_) => push(syn::Error::new(
                        s.span(),
                        "`crate` must name a path, e.g. `\"my_copilot_eval_core\"`",
                    )),
                },
                _ => push(wrong_type("a string literal naming a crate path")),
            },
            _ => unreachable!("every key in KEYS is handled"),
        }
    }
    config
}

fn check_function(function: &syn::ItemFn, push: &mut impl FnMut(syn::Error)) {
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
                "an eval test takes exactly one parameter, its context (`ctx: EvalContext`); remove the others",
            ))
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

fn expand(function: syn::ItemFn, config: Config) -> TokenStream2 {
    let krate = config
        .krate
        .map(|p| p.to_token_stream())
        .unwrap_or_else(|| quote!(::copilot_eval_core));
    let ident = &function.sig.ident;
    let name = ident.to_string();
    let span = Span::call_site();
    let mut setters = TokenStream2::new();
    if let Some(v) = &config.name {
        setters.extend(quote!(.name(#v)));
    }
    if let Some(v) = &config.model {
        setters.extend(quote!(.model(#v)));
    }
    if let Some(v) = config.max_tool_calls {
        setters.extend(quote!(.max_tool_calls(#v)));
    }
    if let Some(v) = config.timeout_s {
        setters.extend(quote!(.timeout_s(#v)));
    }
    if let Some(v) = &config.reasoning_effort {
        setters.extend(quote!(.reasoning_effort(#v)));
    }
    if let Some(v) = &config.client_mode {
        setters.extend(quote!(.client_mode(#v)));
    }
    if let Some(v) = &config.image_detail {
        setters.extend(quote!(.image_detail(#v)));
    }
    if let Some(v) = config.audit_requests {
        setters.extend(quote!(.audit_requests(#v)));
    }
    if let Some(v) = &config.cassette {
        setters.extend(quote!(.cassette(#v)));
    }
    quote_spanned! {span=>
        #[cfg_attr(not(test), allow(dead_code))]
        #function

        #[cfg(test)]
        #[doc(hidden)]
        mod #ident {
            #[::core::prelude::v1::test]
            #[ignore = #IGNORE_REASON]
            fn __copilot_eval() {
                #krate::harness::run_test(
                    #krate::harness::TestConfig::new(
                        #name,
                        ::core::module_path!(),
                        ::core::env!("CARGO_MANIFEST_DIR"),
                    )#setters,
                    super::#ident,
                )
            }
        }
    }
}
