//! Harness behaviour without the macro and without a runtime: identity and cassette paths,
//! evidence on pass, fail, `Err` and setup errors, working-directory keeping.

use std::panic::{AssertUnwindSafe, catch_unwind};

use super::*;

fn config() -> TestConfig {
    TestConfig::new("writes_file", "evals::writes_file", "/pkg")
}

#[test]
fn identity_and_cassette_paths_follow_the_module_path() {
    let top = config();
    assert_eq!(top.test_path(), "writes_file");
    assert_eq!(top.test_id(), "writes_file::__copilot_eval");
    assert_eq!(
        top.cassette_path(),
        PathBuf::from("/pkg/tests/cassettes/evals/writes_file.yaml")
    );
    let nested = TestConfig::new("t", "mylib::a::b::t", "/pkg");
    assert_eq!(nested.test_path(), "a::b::t");
    assert_eq!(nested.test_id(), "a::b::t::__copilot_eval");
    assert_eq!(
        nested.cassette_path(),
        PathBuf::from("/pkg/tests/cassettes/mylib/a/b/t.yaml")
    );
    let custom = config().cassette("fixtures/c.yaml");
    assert_eq!(
        custom.cassette_path(),
        PathBuf::from("/pkg/fixtures/c.yaml")
    );
    assert_eq!(
        custom.cassette_path_for_run(0),
        PathBuf::from("/pkg/fixtures/c.yaml")
    );
    assert_eq!(
        custom.cassette_path_for_run(1),
        PathBuf::from("/pkg/fixtures/c-2.yaml")
    );
    assert_eq!(config().test_timeout(), Duration::from_secs(300));
    assert_eq!(
        config().timeout_s(2.5).test_timeout(),
        Duration::from_millis(2500)
    );
}

#[test]
fn the_builder_is_prefilled_from_the_attribute() {
    let scratch = tempfile::tempdir().unwrap();
    let ctx = EvalContext::with_settings(
        config()
            .model("claude-sonnet-4.5")
            .timeout_s(12.0)
            .max_tool_calls(3)
            .reasoning_effort("high"),
        Ok(Mode::Live),
        Some(scratch.path().join("e.json")),
    );
    let eval = ctx.eval().build().unwrap();
    assert_eq!(eval.name(), "writes_file");
    assert_eq!(eval.model(), Some("claude-sonnet-4.5"));
    assert_eq!(eval.timeout_s(), 12.0);
    assert_eq!(eval.working_directory(), Some(ctx.workdir()));
    assert!(ctx.workdir().is_dir());
    let snapshot = eval.snapshot();
    assert_eq!(snapshot["max_tool_calls"], 3);
    assert_eq!(snapshot["reasoning_effort"], "high");
    let named = EvalContext::with_settings(config().name("custom"), Ok(Mode::Live), None);
    assert_eq!(named.eval().build().unwrap().name(), "custom");
}

#[test]
fn a_passing_test_records_properties_and_removes_its_workdir() {
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("evidence.json");
    let ctx = EvalContext::with_settings(config(), Ok(Mode::Live), Some(file.clone()));
    let workdir = ctx.workdir().to_path_buf();
    run_test_in(ctx, |ctx| async move {
        ctx.record_property("checked", serde_json::json!({"lines": 3}));
        ctx.record_property("checked", true);
    });
    let evidence = TestEvidence::read(&file).unwrap();
    assert_eq!(evidence.status, EvidenceStatus::Passed);
    assert_eq!(evidence.test_id, "writes_file::__copilot_eval");
    let names: Vec<_> = evidence
        .properties
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(names, ["checked", "checked"]);
    assert_eq!(evidence.properties[0].value["lines"], 3);
    assert!(!evidence.workdir_kept);
    assert!(!workdir.exists(), "a passing test's workdir is removed");
}

#[test]
fn a_panicking_test_fails_with_its_message_and_keeps_its_workdir() {
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("evidence.json");
    let ctx = EvalContext::with_settings(config(), Ok(Mode::Live), Some(file.clone()));
    let workdir = ctx.workdir().to_path_buf();
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        run_test_in(ctx, |_ctx| async move {
            assert_eq!(1 + 1, 3, "arithmetic is broken on purpose");
        })
    }));
    assert!(unwound.is_err(), "the libtest test must fail");
    let evidence = TestEvidence::read(&file).unwrap();
    assert_eq!(evidence.status, EvidenceStatus::Failed);
    assert!(
        evidence
            .failure
            .as_deref()
            .unwrap()
            .contains("arithmetic is broken on purpose"),
        "{evidence:?}"
    );
    assert!(evidence.workdir_kept);
    assert!(workdir.is_dir(), "a failing test's workdir is kept");
    std::fs::remove_dir_all(workdir).unwrap();
}

#[test]
fn an_err_return_fails_the_test() {
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("evidence.json");
    let ctx = EvalContext::with_settings(config(), Ok(Mode::Live), Some(file.clone()));
    let workdir = ctx.workdir().to_path_buf();
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        run_test_in(ctx, |_ctx| async move { Err::<(), _>("no greeting") })
    }));
    assert!(unwound.is_err());
    let evidence = TestEvidence::read(&file).unwrap();
    assert_eq!(
        evidence.failure.as_deref(),
        Some("the test returned Err: \"no greeting\"")
    );
    std::fs::remove_dir_all(workdir).unwrap();
}

#[test]
fn replay_without_a_cassette_is_a_setup_error_and_no_request() {
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("evidence.json");
    let config = TestConfig::new("t", "evals::t", "/definitely/not/a/package");
    let ctx = EvalContext::with_settings(config, Ok(Mode::Replay), Some(file.clone()));
    let workdir = ctx.workdir().to_path_buf();
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        run_test_in(ctx, |ctx| async move {
            let eval = ctx.eval().build().unwrap();
            let _ = ctx.run(&eval, "hello").await;
        })
    }));
    assert!(unwound.is_err());
    let evidence = TestEvidence::read(&file).unwrap();
    let setup = evidence.setup_error.unwrap();
    assert!(
        setup.contains("no cassette at /definitely/not/a/package/tests/cassettes/evals/t.yaml"),
        "{setup}"
    );
    assert!(setup.contains("no live request"), "{setup}");
    assert!(evidence.runs.is_empty());
    std::fs::remove_dir_all(workdir).unwrap();
}

#[test]
fn an_invalid_mode_is_a_setup_error() {
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("evidence.json");
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        EvalContext::with_settings(config(), Err("bad mode".to_owned()), Some(file.clone()))
    }));
    assert!(unwound.is_err());
    let evidence = TestEvidence::read(&file).unwrap();
    assert_eq!(evidence.setup_error.as_deref(), Some("bad mode"));
    if let Some(dir) = evidence.workdir {
        let _ = std::fs::remove_dir_all(dir);
    }
}
