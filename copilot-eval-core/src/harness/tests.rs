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
    // A case of a case matrix: its own test path, eval name and cassette.
    let case = TestConfig::new("greets", "evals::greets::english", "/pkg").case("english");
    assert_eq!(case.test_path(), "greets::english");
    assert_eq!(case.test_id(), "greets::english::__copilot_eval");
    assert_eq!(case.eval_name(), "greets::english");
    assert_eq!(
        case.cassette_path(),
        PathBuf::from("/pkg/tests/cassettes/evals/greets/english.yaml")
    );
    assert_eq!(
        case.cassette_path_for_run(1),
        PathBuf::from("/pkg/tests/cassettes/evals/greets/english-2.yaml")
    );
    assert_eq!(config().test_timeout(), Duration::from_secs(300));
    assert_eq!(
        config().configure(|b| b.timeout_s(2.5)).test_timeout(),
        Duration::from_millis(2500)
    );
}

/// A test of a model matrix (`models = [..]`): generated in the model's module, named and
/// replayed per model; the runner's model (`--models`) renames it without changing its
/// libtest name.
#[test]
fn a_model_matrix_test_is_named_and_replayed_per_model() {
    assert_eq!(
        model_segment("claude-sonnet-4.5"),
        "model_claude_sonnet_4_5"
    );
    assert_eq!(model_segment("GPT-5"), "model_gpt_5");
    let plain = TestConfig::new("writes_file", "evals::writes_file::model_gpt_5", "/pkg")
        .matrix_model("gpt-5");
    assert_eq!(plain.model(), Some("gpt-5"));
    assert_eq!(plain.test_path(), "writes_file@gpt-5");
    assert_eq!(plain.eval_name(), "writes_file@gpt-5");
    assert_eq!(plain.test_id(), "writes_file::model_gpt_5::__copilot_eval");
    assert_eq!(
        plain.cassette_path(),
        PathBuf::from("/pkg/tests/cassettes/evals/writes_file@gpt-5.yaml")
    );
    assert_eq!(
        plain.cassette_path_for_run(1),
        PathBuf::from("/pkg/tests/cassettes/evals/writes_file@gpt-5-2.yaml")
    );
    let case = TestConfig::new(
        "greets",
        "evals::nested::greets::english::model_claude_sonnet_4_5",
        "/pkg",
    )
    .case("english")
    .matrix_model("claude-sonnet-4.5");
    assert_eq!(
        case.test_path(),
        "nested::greets::english@claude-sonnet-4.5"
    );
    assert_eq!(
        case.test_id(),
        "nested::greets::english::model_claude_sonnet_4_5::__copilot_eval"
    );
    assert_eq!(
        case.cassette_path(),
        PathBuf::from("/pkg/tests/cassettes/evals/nested/greets/english@claude-sonnet-4.5.yaml")
    );
    // `--models o3` runs this test on o3: named and replayed as o3, same libtest name.
    let over = case.clone().runner_model("o3");
    assert_eq!(over.model(), Some("o3"));
    assert_eq!(over.test_path(), "nested::greets::english@o3");
    assert_eq!(over.test_id(), case.test_id());
    assert_eq!(
        over.cassette_path(),
        PathBuf::from("/pkg/tests/cassettes/evals/nested/greets/english@o3.yaml")
    );
    // A `cassette` key gets the model before its extension.
    assert_eq!(
        config()
            .cassette("fixtures/c.yaml")
            .runner_model("o3")
            .cassette_path(),
        PathBuf::from("/pkg/fixtures/c@o3.yaml")
    );
    // Outside a matrix nothing changes.
    assert_eq!(config().model(), None);
    assert_eq!(
        config().runner_model("o3").test_id(),
        "writes_file::__copilot_eval"
    );
}

#[test]
fn the_matrix_model_is_set_over_the_attributes_model() {
    let scratch = tempfile::tempdir().unwrap();
    let ctx = EvalContext::with_settings(
        TestConfig::new("writes_file", "evals::writes_file::model_gpt_5", "/pkg")
            .matrix_model("gpt-5")
            .configure(|b| b.model("claude-sonnet-4.5").timeout_s(12.0)),
        Ok(Mode::Replay),
        Some(scratch.path().join("e.json")),
    );
    assert_eq!(ctx.model().as_deref(), Some("gpt-5"));
    let eval = ctx.eval().build().unwrap();
    assert_eq!(eval.model(), Some("gpt-5"));
    assert_eq!(eval.name(), "writes_file@gpt-5");
    assert_eq!(eval.timeout_s(), 12.0);
    assert_eq!(ctx.evidence().model.as_deref(), Some("gpt-5"));
    assert_eq!(ctx.evidence().name, "writes_file@gpt-5");
    // Outside a matrix, the attribute's model.
    let plain = EvalContext::with_settings(
        config().configure(|b| b.model("claude-sonnet-4.5")),
        Ok(Mode::Replay),
        Some(scratch.path().join("f.json")),
    );
    assert_eq!(plain.model().as_deref(), Some("claude-sonnet-4.5"));
    assert_eq!(plain.evidence().model, None);
}

#[test]
fn the_builder_is_prefilled_from_the_attribute() {
    let scratch = tempfile::tempdir().unwrap();
    let ctx = EvalContext::with_settings(
        config().configure(|b| {
            b.model("claude-sonnet-4.5")
                .timeout_s(12.0)
                .max_tool_calls(3)
                .reasoning_effort("high")
        }),
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
    assert_eq!(snapshot.max_tool_calls, Some(3));
    assert_eq!(
        snapshot.reasoning_effort,
        Some(crate::eval::ReasoningEffort::High)
    );
    let named = EvalContext::with_settings(
        config().configure(|b| b.name("custom")),
        Ok(Mode::Live),
        None,
    );
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

/// An invalid setting refused by `build()`, then the test's `.unwrap()`: a setup error naming
/// the field and the line that built the eval, not a failure of the agent. A refused setting
/// the test expects (it passes) leaves no setup error.
#[test]
fn an_invalid_setting_then_a_failed_test_is_a_setup_error_naming_the_line() {
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("evidence.json");
    let ctx = EvalContext::with_settings(config(), Ok(Mode::Live), Some(file.clone()));
    let workdir = ctx.workdir().to_path_buf();
    let line = line!() + 3;
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        run_test_in(ctx, |ctx| async move {
            let _eval = ctx.eval().timeout_s(-1.0).build().unwrap();
        })
    }));
    assert!(unwound.is_err());
    let evidence = TestEvidence::read(&file).unwrap();
    let setup = evidence.setup_error.expect("a setup error");
    assert!(setup.contains("timeout_s"), "{setup}");
    let at = format!("the eval built at {}:{line}", file!());
    assert!(setup.contains(&at), "{setup} lacks {at}");
    std::fs::remove_dir_all(workdir).unwrap();

    let file = scratch.path().join("expected.json");
    let ctx = EvalContext::with_settings(config(), Ok(Mode::Live), Some(file.clone()));
    run_test_in(ctx, |ctx| async move {
        assert!(ctx.eval().timeout_s(-1.0).build().is_err());
    });
    assert_eq!(TestEvidence::read(&file).unwrap().setup_error, None);
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

/// Recorded trials (docs/trials.md): a record run in trial k writes `<test>/trial-k.yaml` (its
/// second run `trial-k-2.yaml`); a replay reads them only when the eval has trial cassettes,
/// else the one cassette in every trial; a missing trial cassette is a setup error naming every
/// missing file and the fixes; a replay without trials of an eval with only trial cassettes
/// says how to replay them.
#[test]
fn trials_record_and_replay_their_own_cassettes() {
    use crate::report::TrialOf;
    let package = tempfile::tempdir().unwrap();
    let config = TestConfig::new("greets", "evals::greets", "");
    let config = TestConfig {
        manifest_dir: Box::leak(package.path().display().to_string().into_boxed_str()),
        ..config
    };
    let evals = package.path().join("tests/cassettes/evals");
    let trial = |trial, trials| Some(TrialOf { trial, trials });
    let record = Mode::Record(RecordPolicy::Missing);
    assert_eq!(
        config.cassette_path_in_trial(0, trial(2, 3), record),
        evals.join("greets/trial-2.yaml")
    );
    assert_eq!(
        config.cassette_path_in_trial(1, trial(2, 3), record),
        evals.join("greets/trial-2-2.yaml")
    );
    assert_eq!(
        config.cassette_path_in_trial(1, None, record),
        evals.join("greets-2.yaml")
    );
    // No trial cassette: every trial replays the one cassette.
    assert_eq!(
        config.cassette_path_in_trial(0, trial(2, 3), Mode::Replay),
        evals.join("greets.yaml")
    );
    let case = TestConfig {
        manifest_dir: config.manifest_dir,
        ..TestConfig::new("greets", "evals::greets::english", "").case("english")
    };
    assert_eq!(
        case.cassette_path_in_trial(0, trial(3, 3), record),
        evals.join("greets/english/trial-3.yaml")
    );

    // Trials 1 and 2 recorded (and a comparison's second run, which is no trial of its own).
    std::fs::create_dir_all(evals.join("greets")).unwrap();
    for name in [
        "trial-1.yaml",
        "trial-2.yaml",
        "trial-2-2.yaml",
        "notes.txt",
    ] {
        std::fs::write(evals.join("greets").join(name), "conversations: []").unwrap();
    }
    assert_eq!(
        crate::cassette::recorded_trials(&config.cassette_path()),
        [1, 2]
    );
    assert_eq!(
        config.cassette_path_in_trial(0, trial(2, 4), Mode::Replay),
        evals.join("greets/trial-2.yaml")
    );
    let third = config.cassette_path_in_trial(0, trial(3, 4), Mode::Replay);
    assert_eq!(third, evals.join("greets/trial-3.yaml"));
    let message = super::replay::missing_cassette(&config, &third, trial(3, 4));
    for needle in [
        "no cassette for trial 3 of 4: missing ".to_owned(),
        format!(
            "{}, {}",
            evals.join("greets/trial-3.yaml").display(),
            evals.join("greets/trial-4.yaml").display()
        ),
        "are trial-1, trial-2".to_owned(),
        "replay the 2 recorded ones (`--trials 2`)".to_owned(),
        "`cargo copilot-eval --record --trials 4 greets`".to_owned(),
        "no live request was made".to_owned(),
    ] {
        assert!(message.contains(&needle), "{needle:?} not in {message}");
    }
    // Without trials, an eval with only trial cassettes: how to replay them.
    let single = config.cassette_path_in_trial(0, None, Mode::Replay);
    let message = super::replay::missing_cassette(&config, &single, None);
    for needle in [
        format!("no cassette at {}", evals.join("greets.yaml").display()),
        "only trial cassettes (trial-1, trial-2 in".to_owned(),
        "`cargo copilot-eval --replay --trials 2`".to_owned(),
        "`cargo copilot-eval --record greets`".to_owned(),
    ] {
        assert!(message.contains(&needle), "{needle:?} not in {message}");
    }
    // No cassette at all: the three ways on, recording, scripting the model, another cassette.
    let other = TestConfig {
        manifest_dir: config.manifest_dir,
        ..TestConfig::new("waves", "evals::waves", "")
    };
    let message = super::replay::missing_cassette(&other, &other.cassette_path(), None);
    for needle in [
        "Record one with `cargo copilot-eval --record waves` (a live run)",
        "or script the model with `ctx.offline(..)` (offline in every mode, no cassette;",
        "or point the attribute's `cassette` key at one",
    ] {
        assert!(message.contains(needle), "{needle:?} not in {message}");
    }
}

/// The attribute's `trials = N`: a test process the runner started without a trial (this
/// process has no `COPILOT_EVAL_TRIAL`) is trial 1 of N, records trial 1's cassette, and its
/// evidence carries the ask to the runner; one trial, or none asked, is no trial.
#[test]
fn attribute_trials_make_the_first_process_trial_one_of_n() {
    use crate::report::TrialOf;
    assert!(
        trial_from_env().is_none(),
        "the lib tests run without trials"
    );
    let asked = config().trials(3).min_pass_rate(0.6);
    assert_eq!(
        asked.trial(),
        Some(TrialOf {
            trial: 1,
            trials: 3
        })
    );
    assert_eq!(
        asked.trial_ask(),
        Some(TrialAsk {
            trials: 3,
            min_pass_rate: Some(0.6)
        })
    );
    assert_eq!(config().trials(1).trial(), None);
    assert_eq!(config().trial(), None);
    assert_eq!(config().trial_ask(), None);
    assert_eq!(
        config().min_pass_rate(0.5).trial_ask(),
        Some(TrialAsk {
            trials: 1,
            min_pass_rate: Some(0.5)
        })
    );
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("e.json");
    let ctx = EvalContext::with_settings(
        config().trials(3),
        Ok(Mode::Record(RecordPolicy::Missing)),
        Some(file.clone()),
    );
    assert_eq!(
        ctx.trial(),
        Some(TrialOf {
            trial: 1,
            trials: 3
        })
    );
    let evidence = TestEvidence::read(&file).unwrap();
    assert_eq!(
        evidence.trial_ask,
        Some(TrialAsk {
            trials: 3,
            min_pass_rate: None
        })
    );
    assert_eq!(
        evidence.cassette,
        "/pkg/tests/cassettes/evals/writes_file/trial-1.yaml"
    );
    drop(ctx);
}

/// docs/comparisons.md: two evals that share a working directory, or whose folders nest, make
/// `ctx.compare` a setup error saying so and how to fix it, before either side runs. (Replay
/// mode with no cassette: were the check missing, the first side would be a different setup
/// error, never a model request.)
#[test]
fn a_comparison_whose_sides_share_or_nest_their_folders_is_a_setup_error() {
    for (label, nested, says) in [
        ("shared", false, "share the working directory"),
        ("nested", true, "overlap: the baseline works in"),
    ] {
        let scratch = tempfile::tempdir().unwrap();
        let file = scratch.path().join("evidence.json");
        let config = TestConfig::new("t", "evals::t", "/definitely/not/a/package");
        let ctx = EvalContext::with_settings(config, Ok(Mode::Replay), Some(file.clone()));
        let workdir = ctx.workdir().to_path_buf();
        let unwound = catch_unwind(AssertUnwindSafe(|| {
            run_test_in(ctx, move |ctx| async move {
                let baseline_dir = ctx.workdir().join("side");
                let treatment_dir = if nested {
                    baseline_dir.join("inner")
                } else {
                    baseline_dir.clone()
                };
                std::fs::create_dir_all(&treatment_dir).unwrap();
                let baseline = ctx.eval().working_directory(&baseline_dir).build().unwrap();
                let treatment = ctx
                    .eval()
                    .working_directory(&treatment_dir)
                    .build()
                    .unwrap();
                let _ = ctx.compare(&baseline, &treatment, "hello").await;
            })
        }));
        assert!(unwound.is_err(), "{label}: the test fails");
        let evidence = TestEvidence::read(&file).unwrap();
        let setup = evidence.setup_error.unwrap_or_default();
        assert!(
            setup.contains(says) && setup.contains("Side::Baseline.workdir(&ctx)"),
            "{label}: {setup}"
        );
        assert!(evidence.runs.is_empty(), "{label}: no side ran");
        let _ = std::fs::remove_dir_all(workdir);
    }
}

#[test]
fn an_invalid_mode_is_a_setup_error() {
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("evidence.json");
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        EvalContext::with_settings(
            config(),
            Err(ModeError::UnknownMode {
                value: "bad".to_owned(),
            }),
            Some(file.clone()),
        )
    }));
    assert!(unwound.is_err());
    let evidence = TestEvidence::read(&file).unwrap();
    assert_eq!(
        evidence.setup_error.as_deref(),
        Some("COPILOT_EVAL_MODE=\"bad\" is not one of: live, replay, record")
    );
    if let Some(dir) = evidence.workdir {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// The attribute's key table, `copilot-eval-macros/src/keys.rs`, read with a `key_table!` of
/// this test's own, so that the macro's keys and core cannot drift apart: each key's method
/// must exist and take the type the macro passes, each allowed value must be accepted by core's
/// parser (and core must accept no other), and the ignore reason must be core's.
mod attribute_keys {
    use super::*;
    use crate::eval::{CopilotEval, CopilotEvalBuilder};

    macro_rules! key_table {
        (
            ignore_reason = $reason:literal;
            $( $key:ident : $kind:ident $([ $($value:literal),* ])? => $target:ident $(. $method:ident)? ; )*
        ) => {
            /// The ignore reason the macro puts on generated tests.
            const TABLE_IGNORE_REASON: &str = $reason;
            /// Every key, in the table's order.
            const TABLE_KEYS: &[&str] = &[$(stringify!($key)),*];

            /// One call of each key's method, with a value of the Rust type the macro passes
            /// for the key's kind: this compiles only when every method exists and takes it.
            fn apply_every_key(
                mut builder: CopilotEvalBuilder,
                mut config: TestConfig,
            ) -> (CopilotEvalBuilder, TestConfig) {
                $( key_table!(@apply builder config $kind [$($($value),*)?] $target $($method)?); )*
                (builder, config)
            }

            /// Per eval key: what the macro rejects at compile time, core rejects too (naming
            /// the key as the field), and what it accepts, core accepts.
            fn check_every_value() {
                $( key_table!(@values $key $kind [$($($value),*)?] $target $($method)?); )*
            }
        };
        (@apply $builder:ident $config:ident $kind:ident [$($value:literal),*] Builder $method:ident) => {
            $builder = $builder.$method(key_table!(@sample $kind [$($value),*]));
        };
        (@apply $builder:ident $config:ident $kind:ident [$($value:literal),*] TestConfig $method:ident) => {
            $config = $config.$method(key_table!(@sample $kind [$($value),*]));
        };
        (@apply $builder:ident $config:ident CratePath [] Attribute) => {};
        (@apply $builder:ident $config:ident SkillEvals [] Attribute) => {
            // Read by the macro: one test per entry of evals/evals.json, each passing it to
            // `skill_case`.
            $config = $config.skill_case(crate::harness::SkillCaseSpec {
                skill: "skills/sample",
                id: "1",
                prompt: "sample",
                expected_output: None,
                files: &[],
                expectations: &[],
            });
        };
        (@apply $builder:ident $config:ident SkillTriggers [] Attribute) => {
            // Read by the macro: one test per query of evals/triggers.json, each passing it to
            // `trigger_case`.
            $config = $config.trigger_case(crate::harness::TriggerCaseSpec {
                skill_dir: "skills/sample",
                skill: "sample",
                number: 1,
                query: "sample",
                should_trigger: true,
            });
        };
        (@apply $builder:ident $config:ident Models [] Attribute) => {
            // Read by the macro: one test per model, each passing it to `matrix_model`.
            $config = $config.matrix_model("sample");
        };
        (@sample Text []) => { "sample" };
        (@sample Count []) => { 3u32 };
        (@sample Positive []) => { 4u32 };
        (@sample Fraction []) => { 0.75f64 };
        (@sample Seconds []) => { 2.5f64 };
        (@sample Bool []) => { true };
        (@sample Switch [$($value:literal),*]) => { false };
        (@sample OneOf [$first:literal $(, $rest:literal)*]) => { $first };
        (@values $key:ident OneOf [$($value:literal),*] Builder $method:ident) => {
            for value in [$($value),*] {
                let built = CopilotEval::builder().$method(value).build();
                assert!(built.is_ok(), "`{}` = {value:?}: the macro accepts it, core does not: {:?}", stringify!($key), built.err());
            }
            let error = CopilotEval::builder()
                .$method("not-a-value")
                .build()
                .err()
                .expect(concat!("core accepts a value of `", stringify!($key), "` the macro rejects"));
            assert_eq!(error.field, stringify!($key));
            let allowed = [$($value),*].join(", ");
            assert!(
                error.message.ends_with(&format!("is not one of: {allowed}")),
                "`{}`: the macro allows {allowed}; core says: {error}",
                stringify!($key)
            );
        };
        (@values $key:ident Switch [$($value:literal),*] Builder $method:ident) => {
            key_table!(@values $key OneOf [$($value),*] Builder $method);
            for value in [true, false] {
                assert!(CopilotEval::builder().$method(value).build().is_ok());
            }
        };
        (@values $key:ident Seconds [] Builder $method:ident) => {
            let error = CopilotEval::builder().$method(0.0).build().err();
            assert_eq!(error.map(|e| e.field), Some(stringify!($key)), "the macro rejects 0 seconds; so must core");
        };
        (@values $key:ident Text [] Builder $method:ident) => {
            let error = CopilotEval::builder().$method(" ").build().err();
            assert_eq!(error.map(|e| e.field), Some(stringify!($key)), "the macro rejects an empty string; so must core");
        };
        (@values $key:ident $kind:ident [$($value:literal),*] $target:ident $($method:ident)?) => {};
    }

    include!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../copilot-eval-macros/src/keys.rs"
    ));

    #[test]
    fn every_key_names_an_existing_method_of_the_right_type() {
        let (builder, config) = apply_every_key(
            CopilotEval::builder(),
            TestConfig::new("t", "evals::t", "/pkg"),
        );
        let eval = builder.build().expect("the sample of every key builds");
        assert_eq!(eval.snapshot().max_tool_calls, Some(3));
        assert_eq!(eval.timeout_s(), 2.5);
        // The `models` key's test has its model after the `cassette` key's file name.
        assert_eq!(config.cassette_path(), PathBuf::from("/pkg/sample@sample"));
        // `trials` and `min_pass_rate` reach the ask the evidence carries to the runner.
        assert_eq!(
            config.trial_ask(),
            Some(TrialAsk {
                trials: 4,
                min_pass_rate: Some(0.75)
            })
        );
    }

    #[test]
    fn every_value_the_macro_accepts_core_accepts_and_no_other() {
        check_every_value();
    }

    #[test]
    fn the_ignore_reason_is_cores() {
        assert_eq!(TABLE_IGNORE_REASON, IGNORE_REASON);
    }

    #[test]
    fn the_attribute_reference_lists_every_key() {
        let docs = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/attribute.md");
        let docs = std::fs::read_to_string(docs).unwrap();
        for key in TABLE_KEYS {
            assert!(
                docs.contains(&format!("\n| `{key}` |")),
                "docs/attribute.md has no row for the key `{key}`"
            );
        }
    }
}

/// `ctx.resume` refuses, naming the fix, a result it cannot resume: one not returned by this
/// test's ctx, one of another test, one whose run made no session, one whose home is gone (and
/// every home goes when the test ends). Checked on the plan, before any runtime starts; the
/// refusal through `ctx.resume` itself is a recorded setup error.
#[test]
fn resuming_what_cannot_be_resumed_is_a_setup_error_naming_the_fix() {
    use crate::result::RunOrigin;
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("evidence.json");
    let ctx = EvalContext::with_settings(config(), Ok(Mode::Live), Some(file.clone()));
    let other = EvalContext::with_settings(
        TestConfig::new("other", "evals::other", "/pkg"),
        Ok(Mode::Live),
        None,
    );
    let eval = ctx.eval().build().unwrap();
    let plan_error = |result: &crate::CopilotResult| match ctx.homes().plan("ctx.resume", result) {
        Ok(_) => panic!("a plan for {:?}", result.origin),
        Err(e) => e,
    };
    let mut result = crate::run::result_for_tests(&eval);

    // Not from a ctx at all (run_with).
    let error = plan_error(&result);
    assert!(
        error.starts_with("ctx.resume: the earlier result was not returned by this test's ctx"),
        "{error}"
    );
    assert!(error.contains("pass a result of ctx.run"), "{error}");

    // From another test.
    result.origin = Some(RunOrigin {
        context: other.homes().context,
        test: other.test_name(),
        run: 1,
    });
    let error = plan_error(&result);
    assert!(
        error.contains("comes from run 1 of another test (other)"),
        "{error}"
    );
    assert!(
        error.contains("run the earlier prompt in this test"),
        "{error}"
    );

    // From this test, a run that stopped before its session existed.
    let origin = RunOrigin {
        context: ctx.homes().context,
        test: ctx.test_name(),
        run: 1,
    };
    result.origin = Some(origin.clone());
    ctx.homes()
        .keep(ctx.homes().create().unwrap(), 1, &result, 0);
    let error = plan_error(&result);
    assert!(
        error.contains(
            "run 1 of this test has no session to resume: it stopped with execution_error"
        ),
        "{error}"
    );

    // A run with a session whose home was removed.
    result.session_id = Some("s-1".to_owned());
    result.tool_calls.clear();
    let home = ctx.homes().create().unwrap();
    let home_path = home.path();
    ctx.homes().keep(home, 2, &result, 4);
    result.origin = Some(RunOrigin {
        run: 2,
        ..origin.clone()
    });
    let plan = ctx.homes().plan("ctx.resume", &result).unwrap();
    assert_eq!(plan.from.run, 2);
    assert_eq!(plan.from.session_id, "s-1");
    assert_eq!(plan.seed, home_path);
    assert_eq!(
        plan.earlier_calls, 4,
        "the history's call ids are carried on"
    );
    std::fs::remove_dir_all(&home_path).unwrap();
    let error = plan_error(&result);
    assert!(
        error.contains(&format!(
            "the runtime home of run 2 ({}) is gone, so its session s-1 cannot be resumed",
            home_path.display()
        )),
        "{error}"
    );
    assert!(
        error.contains("do not delete it during the test"),
        "{error}"
    );

    // Through ctx.resume: a setup error in the evidence, and no run.
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(ctx.resume(&eval, &result, "And now?"))
    }));
    assert!(unwound.is_err());
    let evidence = TestEvidence::read(&file).unwrap();
    assert!(evidence.setup_error.unwrap().contains("is gone"));
    assert!(evidence.runs.is_empty());

    // The test's end removes every home.
    ctx.finish(None);
    let error = plan_error(&result);
    assert!(
        error.contains("the runtime home of run 2 of this test is gone (the test already ended"),
        "{error}"
    );
    other.finish(None);
}

/// `ctx.expect_stop`: a run that stopped otherwise than declared fails a test whose own checks
/// passed (naming the run, both reasons and the run's error), and is added to the message of a
/// test that failed anyway; a run that stopped as declared changes nothing.
#[test]
fn a_declared_stop_that_did_not_happen_fails_the_test() {
    use crate::StopReason::{CleanupError, Completed, ReplayMismatch, RequestAuditError};
    let outcome = |stop: crate::StopReason, expected: crate::StopReason, fails: bool| {
        let scratch = tempfile::tempdir().unwrap();
        let file = scratch.path().join("evidence.json");
        let ctx = EvalContext::with_settings(config(), Ok(Mode::Live), Some(file.clone()));
        let workdir = ctx.workdir().to_path_buf();
        let mut run = crate::report::tests::run(stop, 1);
        run.error = (stop != Completed).then(|| "what happened".to_owned());
        run.expected_stop = Some(expected);
        let unwound = catch_unwind(AssertUnwindSafe(|| {
            run_test_in(ctx, move |ctx| async move {
                ctx.update_evidence(|e| e.runs.push(run));
                assert!(!fails, "the test's own check");
            })
        }));
        let _ = std::fs::remove_dir_all(workdir);
        (unwound.is_err(), TestEvidence::read(&file).unwrap())
    };
    let (panicked, evidence) = outcome(ReplayMismatch, ReplayMismatch, false);
    assert!(!panicked);
    assert_eq!(evidence.status, EvidenceStatus::Passed);

    let (panicked, evidence) = outcome(Completed, ReplayMismatch, false);
    assert!(panicked);
    assert_eq!(evidence.status, EvidenceStatus::Failed);
    assert_eq!(
        evidence.failure.as_deref(),
        Some(
            "run 1 (e) was expected to stop with replay_mismatch (ctx.expect_stop) but stopped with completed"
        )
    );

    let (panicked, evidence) = outcome(CleanupError, RequestAuditError, true);
    assert!(panicked);
    let failure = evidence.failure.unwrap();
    assert!(
        failure.starts_with("the test's own check")
            && failure.ends_with(
                "\nrun 1 (e) was expected to stop with request_audit_error (ctx.expect_stop) but stopped with cleanup_error: what happened"
            ),
        "{failure}"
    );
}

/// A skill eval test (`skill_evals = ".."`): its input file copied into the working directory,
/// its case handed over, and its expectations deciding the test with the body.
mod skill_cases {
    use super::*;

    const SPEC: SkillCaseSpec = SkillCaseSpec {
        skill: "skills/changelog",
        id: "1",
        prompt: "Write the changelog.",
        expected_output: Some("CHANGELOG.md"),
        files: &["evals/files/CHANGES.txt"],
        expectations: &["The skill was invoked", "CHANGELOG.md exists"],
    };

    /// A package root holding the skill's input file, leaked for the `&'static str` the
    /// attribute would give.
    fn package() -> &'static str {
        let root = tempfile::tempdir().unwrap().keep();
        let input = root.join("skills/changelog/evals/files");
        std::fs::create_dir_all(&input).unwrap();
        std::fs::write(input.join("CHANGES.txt"), "fix the login timeout\n").unwrap();
        Box::leak(root.display().to_string().into_boxed_str())
    }

    fn run(body: impl FnOnce(EvalContext) + Send + 'static) -> (Result<(), ()>, TestEvidence) {
        let scratch = tempfile::tempdir().unwrap();
        let file = scratch.path().join("evidence.json");
        let config = TestConfig::new("changelog", "evals::changelog::eval_1", package())
            .case("eval_1")
            .skill_case(SPEC);
        let ctx = EvalContext::with_settings(config, Ok(Mode::Live), Some(file.clone()));
        let workdir = ctx.workdir().to_path_buf();
        let unwound = catch_unwind(AssertUnwindSafe(|| {
            run_test_in(ctx, |ctx| async move { body(ctx) })
        }));
        let evidence = TestEvidence::read(&file).unwrap();
        let _ = std::fs::remove_dir_all(workdir);
        (unwound.map_err(|_| ()), evidence)
    }

    #[test]
    fn the_case_and_its_copied_input_reach_the_test_and_the_evidence() {
        let (outcome, evidence) = run(|ctx| {
            let case = ctx.skill_case().expect("a skill case");
            assert_eq!(case.id, "1");
            assert_eq!(case.prompt, "Write the changelog.");
            assert_eq!(case.files, [ctx.workdir().join("evals/files/CHANGES.txt")]);
            assert_eq!(
                std::fs::read_to_string(&case.files[0]).unwrap(),
                "fix the login timeout\n"
            );
            assert!(case.skill_dir.ends_with("skills/changelog"));
            assert!(ctx.expect("The skill was invoked", true, "skill.invoked: changelog"));
            ctx.expect("CHANGELOG.md exists", true, "1 line");
        });
        assert_eq!(outcome, Ok(()));
        assert_eq!(evidence.status, EvidenceStatus::Passed);
        let skill_eval = evidence.skill_eval.expect("the entry is in the evidence");
        assert_eq!(
            (skill_eval.skill.as_str(), skill_eval.id.as_str()),
            ("skills/changelog", "1")
        );
        let verdicts: Vec<(&str, bool)> = evidence
            .expectations
            .iter()
            .map(|x| (x.text.as_str(), x.passed))
            .collect();
        assert_eq!(
            verdicts,
            [
                ("The skill was invoked", true),
                ("CHANGELOG.md exists", true)
            ]
        );
    }

    #[test]
    fn a_failed_expectation_fails_the_test_with_its_evidence() {
        let (outcome, evidence) = run(|ctx| {
            ctx.expect("The skill was invoked", true, "yes");
            // Recorded twice: both verdicts are kept, the failure fails the test.
            ctx.expect("CHANGELOG.md exists", true, "first look");
            assert!(!ctx.expect("CHANGELOG.md exists", false, "no such file"));
        });
        assert_eq!(outcome, Err(()));
        assert_eq!(evidence.expectations.len(), 3);
        assert_eq!(
            evidence.failure.as_deref(),
            Some("expectation failed: CHANGELOG.md exists (evidence: no such file)")
        );
    }

    /// A later pass of the same text does not undo an earlier failure: each verdict is kept,
    /// in order, and the failure fails the test.
    #[test]
    fn a_later_pass_of_the_same_text_keeps_the_earlier_failure() {
        let (outcome, evidence) = run(|ctx| {
            ctx.expect("The skill was invoked", true, "yes");
            assert!(!ctx.expect("CHANGELOG.md exists", false, "no such file"));
            assert!(ctx.expect("CHANGELOG.md exists", true, "second look"));
        });
        assert_eq!(outcome, Err(()));
        let verdicts: Vec<(&str, bool, &str)> = evidence
            .expectations
            .iter()
            .map(|x| (x.text.as_str(), x.passed, x.evidence.as_str()))
            .collect();
        assert_eq!(
            verdicts,
            [
                ("The skill was invoked", true, "yes"),
                ("CHANGELOG.md exists", false, "no such file"),
                ("CHANGELOG.md exists", true, "second look"),
            ]
        );
        assert_eq!(
            evidence.failure.as_deref(),
            Some("expectation failed: CHANGELOG.md exists (evidence: no such file)")
        );
    }

    #[test]
    fn an_expectation_of_the_file_left_unchecked_fails_the_test() {
        let (outcome, evidence) = run(|ctx| {
            ctx.expect("The skill was invoked", true, "yes");
        });
        assert_eq!(outcome, Err(()));
        let failure = evidence.failure.unwrap();
        assert!(
            failure.starts_with("expectation not checked: CHANGELOG.md exists"),
            "{failure}"
        );
    }

    /// A text near one of the file's (a typo) is named where the file's expectation is left
    /// unchecked; a text far from all of them is a warning on the run.
    #[test]
    fn a_near_miss_of_an_expectation_is_named_and_a_stray_text_is_a_warning() {
        let (outcome, evidence) = run(|ctx| {
            ctx.expect("The skill was invoked", true, "yes");
            ctx.expect("CHANGELOG.md exist", true, "it does");
        });
        assert_eq!(outcome, Err(()));
        let failure = evidence.failure.unwrap();
        assert!(
            failure.contains(
                "expectation not checked: CHANGELOG.md exists (ctx.expect was given \"CHANGELOG.md exist\", which evals.json does not hold"
            ),
            "{failure}"
        );
        let (_, evidence) = run(|ctx| {
            ctx.expect("The skill was invoked", true, "yes");
            ctx.expect("CHANGELOG.md exists", true, "it does");
            ctx.expect("The answer is polite", true, "it is");
        });
        // With a run, the warning is on its record (finish); here the test ran no session.
        let warning =
            crate::harness::skill_case::stray_warning(&evidence.expectations, SPEC.expectations)
                .expect("a warning");
        assert!(
            warning.ends_with(
                "not among this skill eval's expectations in evals.json: \"The answer is polite\""
            ),
            "{warning}"
        );
    }
}

/// A trigger-set test (`skill_triggers = ".."`): its query handed over, and its trigger check
/// deciding the test with the body.
mod trigger_cases {
    use super::*;
    use crate::report::{Trigger, TriggerCheck};

    const SPEC: crate::harness::TriggerCaseSpec = crate::harness::TriggerCaseSpec {
        skill_dir: "skills/changelog",
        skill: "changelog",
        number: 3,
        query: "What is the capital of Norway?",
        should_trigger: false,
    };

    fn run(body: impl FnOnce(EvalContext) + Send + 'static) -> (Result<(), ()>, TestEvidence) {
        let scratch = tempfile::tempdir().unwrap();
        let file = scratch.path().join("evidence.json");
        let root = Box::leak(scratch.path().display().to_string().into_boxed_str());
        let config = TestConfig::new("triggers", "evals::triggers::dormant_3", root)
            .case("dormant_3_what_is_the_capital_of")
            .trigger_case(SPEC);
        let ctx = EvalContext::with_settings(config, Ok(Mode::Live), Some(file.clone()));
        let workdir = ctx.workdir().to_path_buf();
        let unwound = catch_unwind(AssertUnwindSafe(|| {
            run_test_in(ctx, |ctx| async move { body(ctx) })
        }));
        let evidence = TestEvidence::read(&file).unwrap();
        let _ = std::fs::remove_dir_all(workdir);
        (unwound.map_err(|_| ()), evidence)
    }

    /// What `TriggerCase::check` records for a run that did (`invoked`) or did not invoke the
    /// skill (written directly: these tests start no runtime).
    fn record(ctx: &EvalContext, invoked: bool) {
        let case = ctx.trigger_case().expect("a trigger case");
        ctx.update_evidence(|e| {
            e.triggers.push(TriggerCheck {
                skill: case.skill.clone(),
                expected: case.expected,
                invoked,
                preloaded: false,
                run: Some(1),
            })
        });
    }

    #[test]
    fn the_query_reaches_the_test_and_a_held_check_passes() {
        let (outcome, evidence) = run(|ctx| {
            let case = ctx.trigger_case().expect("a trigger case");
            assert_eq!(case.skill, "changelog");
            assert_eq!(case.number, 3);
            assert_eq!(case.query, "What is the capital of Norway?");
            assert_eq!(case.expected, Trigger::Dormant);
            assert!(case.skill_dir.ends_with("skills/changelog"));
            assert!(ctx.skill_case().is_none());
            record(&ctx, false);
        });
        assert_eq!(outcome, Ok(()));
        assert_eq!(evidence.status, EvidenceStatus::Passed);
    }

    #[test]
    fn a_false_trigger_fails_the_test_although_the_body_passed() {
        let (outcome, evidence) = run(|ctx| record(&ctx, true));
        assert_eq!(outcome, Err(()));
        assert_eq!(
            evidence.failure.as_deref(),
            Some(
                "trigger check failed: changelog was invoked although the prompt should not trigger it (a false trigger) (query \"What is the capital of Norway?\")"
            )
        );
    }

    #[test]
    fn a_query_never_checked_fails_the_test() {
        let (outcome, evidence) = run(|_ctx| {});
        assert_eq!(outcome, Err(()));
        let failure = evidence.failure.unwrap();
        assert!(
            failure.starts_with("trigger not checked: query 3 of changelog's trigger set"),
            "{failure}"
        );
    }
}

/// The deadline the runner watches during a run: the eval's `timeout_s` from the run's start,
/// and 60 s more when the run's test-only clock starts at its session (that clock does not
/// count the runtime's start, so the runner must not either: with the e2e tests' 2 s cleanup
/// bound, a fresh runtime's start killed such a run).
#[test]
fn a_run_whose_test_clock_starts_later_gets_more_time_from_the_runner() {
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("evidence.json");
    let ctx = EvalContext::with_settings(config(), Ok(Mode::Live), Some(file.clone()));
    let eval = crate::CopilotEval::builder()
        .timeout_s(4.0)
        .build()
        .unwrap();
    let prompts = [crate::eval::Prompt::from("Think.")];
    let now_ms = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64
    };
    let before = now_ms();
    ctx.mark_running(&eval, &prompts, false);
    let plain = TestEvidence::read(&file).unwrap().deadline_unix_ms;
    let between = now_ms();
    ctx.mark_running(&eval, &prompts, true);
    let moved = TestEvidence::read(&file).unwrap().deadline_unix_ms;
    let after = now_ms();
    assert!(
        (before + 4_000..=between + 4_000).contains(&plain),
        "{before} {plain} {between}"
    );
    assert!(
        (between + 64_000..=after + 64_000).contains(&moved),
        "{between} {moved} {after}"
    );
}
