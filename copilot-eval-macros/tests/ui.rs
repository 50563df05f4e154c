//! The attribute pinned with trybuild.
//!
//! Compile errors: each case under `tests/ui/` has a committed `.stderr` with the expected
//! message and span. Regenerate them after an intended change with
//! `TRYBUILD=overwrite cargo test -p copilot-eval-macros --test ui`. These cases need no
//! copilot-eval-core: on any error the attribute emits only the original function and the
//! error, so a local `EvalContext` stand-in is enough.
//!
//! Expansions that must compile: `tests/pass/` (against the real copilot-eval-core, a
//! dev-dependency): `every_key.rs` uses every key of `src/keys.rs`.

#[test]
fn compile_errors() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
    cases.pass("tests/pass/*.rs");
}
