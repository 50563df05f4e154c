//! The numeric kinds of the attribute's keys (`Count`, `Seconds`, `Positive`, `Fraction`): each
//! literal's compile-time check, and the suffixed literal passed to the key's method.

use proc_macro2::TokenStream as TokenStream2;
use quote::ToTokens;
use syn::Expr;
use syn::spanned::Spanned;

use crate::{Kind, Value, describe};

/// The value of the numeric key `name` (of `kind`) written as `expr` (read as `value`): the
/// literal to pass (`3u32`, `2.5f64`), spanned on the written one; else the error, spanned on
/// it. Not a numeric kind: `None`.
pub(crate) fn numeric(
    kind: Kind,
    name: &str,
    expr: &Expr,
    value: &Option<Value>,
) -> Option<Result<TokenStream2, syn::Error>> {
    let wrong_type = |expected: &str| {
        syn::Error::new(
            expr.span(),
            format!("`{name}` expects {expected}, found {}", describe(value)),
        )
    };
    let error = |message: String| Err(syn::Error::new(expr.span(), message));
    Some(match kind {
        // Passed as a `u32`: a negative literal or one past `u32::MAX` cannot be written, so
        // the macro reports it here (the method takes a `u32`).
        Kind::Count | Kind::Positive => match value {
            Some(Value::Int(_, true)) if kind == Kind::Count => error(format!(
                "`{name}` is a u32 and cannot be negative; use 0 to admit none"
            )),
            Some(Value::Int(i, negative)) => match i.base10_parse::<u32>() {
                Ok(0) if kind == Kind::Positive => error(format!(
                    "`{name}` must be at least 1, got 0 (1 runs the eval once)"
                )),
                _ if *negative => error(format!(
                    "`{name}` must be at least 1, got a negative number"
                )),
                Ok(n) => Ok(u32_literal(n, expr)),
                Err(_) => error(format!("`{name}` must be at most {}", u32::MAX)),
            },
            _ if kind == Kind::Count => {
                Err(wrong_type("a non-negative integer literal, e.g. `10`"))
            }
            _ => Err(wrong_type("a whole number of at least 1, e.g. `5`")),
        },
        Kind::Seconds => match number(value) {
            None => Err(wrong_type("a number of seconds, e.g. `120` or `2.5`")),
            Some(Some(v)) if v > 0.0 => Ok(f64_literal(v, expr)),
            Some(_) => error(format!("`{name}` must be a positive number of seconds")),
        },
        Kind::Fraction => match number(value) {
            None => Err(wrong_type(
                "a fraction above 0 and at most 1, e.g. `0.8` for 80%",
            )),
            Some(Some(v)) if v > 0.0 && v <= 1.0 => Ok(f64_literal(v, expr)),
            Some(v) => {
                // A percentage written as a number gets its own fraction as the fix.
                let hint = match v {
                    Some(v) if v > 1.0 && v <= 100.0 => format!("write {} for {v}%", v / 100.0),
                    _ => "write 0.8 for 80%".to_owned(),
                };
                let got = v.map_or_else(|| "a negative number".to_owned(), |v| v.to_string());
                error(format!(
                    "`{name}` must be a fraction above 0 and at most 1, got {got}: {hint}"
                ))
            }
        },
        _ => return None,
    })
}

/// An integer or float literal's value: `None` for anything else; `Some(None)` for a negative
/// or non-finite one.
fn number(value: &Option<Value>) -> Option<Option<f64>> {
    let (digits, negative) = match value {
        Some(Value::Int(i, negative)) => (i.base10_digits().to_owned(), *negative),
        Some(Value::Float(f, negative)) => (f.base10_digits().to_owned(), *negative),
        _ => return None,
    };
    let v = digits.trim_start_matches('-').parse::<f64>().ok();
    Some(v.filter(|v| !negative && v.is_finite()))
}

fn u32_literal(n: u32, expr: &Expr) -> TokenStream2 {
    let mut literal = proc_macro2::Literal::u32_suffixed(n);
    literal.set_span(expr.span());
    literal.to_token_stream()
}

fn f64_literal(v: f64, expr: &Expr) -> TokenStream2 {
    let mut literal = proc_macro2::Literal::f64_suffixed(v);
    literal.set_span(expr.span());
    literal.to_token_stream()
}
