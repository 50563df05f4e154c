//! The edit loop (docs/performance.md, "The edit loop"): a user's test binary, rebuilt after
//! each edit of an eval, compiles its own tests and little of ours. Every `async fn` of this
//! crate that a test awaits would otherwise be compiled again in the user's crate, with all it
//! awaits in turn (the session, the request proxy, the model server, the pooled endpoint):
//! before the entry points boxed their futures, the quick-start example's `evals` compiled
//! 9030 functions, 6 CPU s of each rebuild; after, 595.

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

/// Whether the IR line `define` is a function of the engine ([`ENGINE`]), or one instantiated
/// for a closure or future of the engine ([`ENGINE_IN_ARGUMENTS`]: the path that follows one
/// of those modules, up to the next generic bracket or separator, names a closure; a closure
/// of another crate whose arguments merely name an engine type does not count).
fn is_engine(define: &str) -> bool {
    ENGINE.iter().any(|module| define.contains(module))
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
