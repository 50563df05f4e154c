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

/// The functions the quick-start example's `evals` test crate defines (its LLVM IR, emitted by
/// `cargo rustc -p quickstart --test evals -- --emit=llvm-ir`) include none of the engine's:
/// those are linked from copilot-eval-core's library, compiled once.
#[test]
fn a_users_test_crate_does_not_compile_the_engine_again() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = std::process::Command::new(cargo)
        .args(["rustc", "-p", "quickstart", "--test", "evals", "--offline"])
        .args(["--message-format=json", "--", "--emit=llvm-ir"])
        .current_dir(workspace)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "cargo rustc -p quickstart --test evals failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let executable = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "evals")
        .find_map(|m| m["filenames"][0].as_str().map(str::to_owned))
        .expect("cargo rustc reported no artifact of the evals test");
    let ir_path = Path::new(&executable).with_extension("ll");
    let ir = std::fs::read_to_string(&ir_path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", ir_path.display()));
    let defined: Vec<&str> = ir.lines().filter(|l| l.starts_with("define ")).collect();
    assert!(
        defined
            .iter()
            .any(|l| l.contains("creates_a_greeting_file")),
        "{} defines no function of the test crate itself: this check cannot see what it \
         compiles",
        ir_path.display()
    );
    let engine: Vec<&&str> = defined
        .iter()
        .filter(|l| ENGINE.iter().any(|module| l.contains(module)))
        .collect();
    assert!(
        engine.is_empty(),
        "the quick-start example's test crate compiles {} functions of copilot-eval-core's \
         engine again (of {} it defines), e.g. {:?}.\nfix: a public async fn that tests await \
         hands its work to a non-generic, non-async fn of copilot-eval-core that returns the \
         boxed future (as EvalContext::run_prompts_with does), so the future's code is \
         compiled in copilot-eval-core",
        engine.len(),
        defined.len(),
        engine.iter().take(3).collect::<Vec<_>>()
    );
}
