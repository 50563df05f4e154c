//! The attribute pinned with trybuild.
//!
//! Compile errors: each case under `tests/ui/` has a committed `.stderr` with the expected
//! message and span. Regenerate them after an intended change with
//! `TRYBUILD=overwrite cargo test -p copilot-eval-macros --test ui`. These cases need no
//! copilot-eval-core: on any error the attribute emits only the original function and the
//! error, so a local `EvalContext` stand-in is enough.
//!
//! The expansion that must compile, with every key, is an ordinary test of core
//! (`copilot-eval-core/tests/attribute_every_key.rs`): a trybuild pass case would build all of
//! core's dependencies again in trybuild's own folder (over half an hour on a 2-core machine).

#[test]
fn compile_errors() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
