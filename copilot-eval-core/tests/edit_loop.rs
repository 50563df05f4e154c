//! The edit loop (docs/performance.md, "The edit loop"): a user's test binary, rebuilt after
//! each edit of an eval, compiles its own tests and little of ours. Every `async fn` of this
//! crate that a test awaits would otherwise be compiled again in the user's crate, with all it
//! awaits in turn (the session, the request proxy, the model server, the pooled endpoint):
//! before the entry points boxed their futures, the quick-start example's `evals` compiled
//! 9030 functions, 6 CPU s of each rebuild; after, 595. The engine here is `run`, the model
//! server, `cassette`, and the work of `harness` behind its entry points (a judge's sessions, a
//! comparison's runs).

use std::path::Path;

/// The modules whose code must stay compiled in copilot-eval-core only: a run and the loopback
/// model server, as their names appear in a symbol (`<length><name>` per path segment, in the
/// legacy and the v0 mangling alike).
const ENGINE: &[&str] = &[
    "17copilot_eval_core3run",
    "17copilot_eval_core12model_server6server",
    "17copilot_eval_core12model_server4http",
    "17copilot_eval_core12model_server9websocket",
    "17copilot_eval_core8cassette",
];

/// The same modules as they appear inside another function's generic arguments in the legacy
/// mangling (`drop_in_place<copilot_eval_core..cassette..ReplaySession..start..{{closure}}>`):
/// a test crate that defines such a function for one of their closures (an `async fn`'s future
/// is one) compiles that future's drop glue, the whole state machine's, again.
const ENGINE_IN_ARGUMENTS: &[&str] = &[
    "copilot_eval_core..run..",
    "copilot_eval_core..model_server..server..",
    "copilot_eval_core..model_server..http..",
    "copilot_eval_core..model_server..websocket..",
    "copilot_eval_core..cassette..",
];

/// The functions of `harness` (the test process's face: `ctx.run`, `ctx.judge`, `ctx.compare`
/// ...) whose own closures a user's test crate compiles by design: each public entry point is a
/// thin `async fn` (or a generic function taking the test's closure) whose state machine holds
/// one boxed future of this crate. The work behind them (the judge's sessions, a comparison's
/// two runs, a run's modes) is the engine's: a closure of any other function of `harness` in a
/// test crate means an entry point awaits its work unboxed, and a user's crate compiles it.
const HARNESS_ENTRY_POINTS: &[&str] = &[
    "run_test_in",
    "run",
    "run_turns",
    "judge",
    "judge_pair",
    "compare",
    "resume",
    "resume_turns",
    "check",
];

/// Whether the IR line `define` defines the closure (an `async fn`'s state machine included) of
/// a function of `harness` that is not one of its [`HARNESS_ENTRY_POINTS`] (legacy mangling:
/// the path `17copilot_eval_core7harness...<length><name>28_{{closure}}`).
fn is_harness_work(define: &str) -> bool {
    let Some(symbol) = define
        .split_once('@')
        .map(|(_, rest)| rest.trim_start_matches('"'))
    else {
        return false;
    };
    let Some(mut rest) = symbol.strip_prefix("_ZN") else {
        return false;
    };
    // The path's segments, each `<length><text>`, up to the first closure.
    let mut segments: Vec<&str> = Vec::new();
    loop {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let Ok(length) = rest[..digits].parse::<usize>() else {
            return false;
        };
        let Some(segment) = rest.get(digits..digits + length) else {
            return false;
        };
        rest = &rest[digits + length..];
        if segment.starts_with("_$u7b$$u7b$closure") {
            break;
        }
        segments.push(segment);
    }
    segments.starts_with(&["copilot_eval_core", "harness"])
        && !segments
            .last()
            .is_some_and(|name| HARNESS_ENTRY_POINTS.contains(name))
}

/// Whether the IR line `define` is a function of the engine ([`ENGINE`]), the work of `harness`
/// behind its entry points ([`is_harness_work`]), or one instantiated for a closure or future
/// of the engine ([`ENGINE_IN_ARGUMENTS`]: the path that follows one of those modules, up to
/// the next generic bracket or separator, names a closure; a closure of another crate whose
/// arguments merely name an engine type does not count).
fn is_engine(define: &str) -> bool {
    is_harness_work(define)
        || ENGINE.iter().any(|module| define.contains(module))
        || ENGINE_IN_ARGUMENTS.iter().any(|module| {
            define.match_indices(module).any(|(at, _)| {
                let rest = &define[at + module.len()..];
                let path_end = ["$LT$", "$GT$", "$C$", "$u20$", "\""]
                    .iter()
                    .filter_map(|end| rest.find(end))
                    .min()
                    .unwrap_or(rest.len());
                rest[..path_end].contains("closure")
            })
        })
}

/// The harness rule on symbols as a test crate's IR names them (taken from the quick-start's):
/// an entry point's own closure and a generic function are the crate's; the closure of the
/// judge's rubric session (what `ctx.judge` would compile when it awaited it unboxed) is not.
#[test]
fn the_harness_rule_tells_an_entry_point_from_its_work() {
    let define =
        |symbol: &str| format!("define internal void @\"{symbol}17h0123456789abcdefE\"(ptr %0)");
    let judge = "_ZN17copilot_eval_core7harness5judge66_$LT$impl$u20$copilot_eval_core..harness..context..EvalContext$GT$";
    assert!(!is_engine(&define(&format!(
        "{judge}5judge28_$u7b$$u7b$closure$u7d$$u7d$"
    ))));
    assert!(is_engine(&define(&format!(
        "{judge}12judge_rubric28_$u7b$$u7b$closure$u7d$$u7d$"
    ))));
    assert!(is_engine(&define(&format!(
        "{judge}12judge_rubric28_$u7b$$u7b$closure$u7d$$u7d$28_$u7b$$u7b$closure$u7d$$u7d$"
    ))));
    assert!(is_engine(&define(
        "_ZN17copilot_eval_core7harness7compare66_$LT$impl$u20$copilot_eval_core..harness..context..EvalContext$GT$15compare_unboxed28_$u7b$$u7b$closure$u7d$$u7d$"
    )));
    for own in [
        "_ZN17copilot_eval_core7harness11run_test_in28_$u7b$$u7b$closure$u7d$$u7d$",
        "_ZN17copilot_eval_core7harness7context11EvalContext3run28_$u7b$$u7b$closure$u7d$$u7d$",
        "_ZN17copilot_eval_core7harness7compare10Comparison5check28_$u7b$$u7b$closure$u7d$$u7d$",
        "_ZN17copilot_eval_core7harness7context11EvalContext15record_property",
        "_ZN17copilot_eval_core7harness5judge6Rubric9criterion",
    ] {
        assert!(!is_engine(&define(own)), "{own}");
    }
}

/// The `define` lines of the LLVM IR of `package`'s test target `test`, emitted by
/// `cargo rustc -p PACKAGE --test TEST -- --emit=llvm-ir`, with the IR file's path.
fn defined_functions(package: &str, test: &str) -> (Vec<String>, String) {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = std::process::Command::new(cargo)
        .args(["rustc", "-p", package, "--test", test, "--offline"])
        .args(["--message-format=json", "--", "--emit=llvm-ir"])
        .current_dir(workspace)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "cargo rustc -p {package} --test {test} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let executable = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == test)
        .find_map(|m| m["filenames"][0].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("cargo rustc reported no artifact of the {test} test"));
    let ir_path = Path::new(&executable).with_extension("ll");
    let ir = std::fs::read_to_string(&ir_path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", ir_path.display()));
    let defined = ir
        .lines()
        .filter(|l| l.starts_with("define "))
        .map(str::to_owned)
        .collect();
    (defined, ir_path.display().to_string())
}

/// Check that the test crate whose IR `defined` is (at `ir_path`) defines a function named
/// `own` (so the check sees what it compiles) and none of the engine's ([`ENGINE`]).
fn assert_engine_not_compiled(crate_name: &str, defined: &[String], ir_path: &str, own: &str) {
    assert!(
        defined.iter().any(|l| l.contains(own)),
        "{ir_path} defines no function of the test crate itself ({own}): this check cannot see \
         what it compiles"
    );
    let engine: Vec<&String> = defined.iter().filter(|l| is_engine(l)).collect();
    assert!(
        engine.is_empty(),
        "{crate_name} compiles {} functions of copilot-eval-core's engine again (of {} it \
         defines), e.g. {:?}.\nfix: a public async fn that tests await hands its work to a \
         non-generic, non-async fn of copilot-eval-core that returns the boxed future (as \
         EvalContext::run_prompts_with does), or is such a fn itself (as ModelServer::start), \
         so the future's code is compiled in copilot-eval-core",
        engine.len(),
        defined.len(),
        engine.iter().take(3).collect::<Vec<_>>()
    );
}

/// The functions the quick-start example's `evals` test crate defines (its LLVM IR) include
/// none of the engine's: those are linked from copilot-eval-core's library, compiled once.
#[test]
fn a_users_test_crate_does_not_compile_the_engine_again() {
    let (defined, ir_path) = defined_functions("quickstart", "evals");
    assert_engine_not_compiled(
        "the quick-start example's test crate",
        &defined,
        &ir_path,
        "creates_a_greeting_file",
    );
}

/// A test crate that awaits `ModelServer::start`, `ModelServer::shutdown`,
/// `ReplaySession::start` and `ReplaySession::shutdown` itself (`edit_loop_probe.rs`, as the
/// guide's and the cassette page's examples do) compiles none of the server's or the replay's
/// code either.
#[test]
fn a_test_crate_awaiting_the_model_server_and_a_replay_does_not_compile_them_again() {
    let (defined, ir_path) = defined_functions("copilot-eval-core", "edit_loop_probe");
    assert_engine_not_compiled(
        "the edit_loop_probe test crate",
        &defined,
        &ir_path,
        "a_model_server_and_a_replay_start_serve_their_catalog_and_stop",
    );
}
