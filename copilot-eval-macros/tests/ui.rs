//! Compile errors of `#[copilot_eval]`, pinned with trybuild: each case under `tests/ui/` has a
//! committed `.stderr` with the expected message and span. Regenerate them after an intended
//! change with `TRYBUILD=overwrite cargo test -p copilot-eval-macros --test ui`.
//!
//! The cases need no copilot-eval-core: on any error the attribute emits only the original
//! function and the error, so a local `EvalContext` stand-in is enough.

#[test]
fn compile_errors() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
