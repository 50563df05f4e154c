//! Where a `cargo copilot-eval` run spends its time, phase by phase: with the environment
//! variable `COPILOT_EVAL_PHASES` set (to anything), the runner prints one line per phase
//! boundary to stderr, `phase <ms> <what>`, `<ms>` counted from the first mark of the process
//! (the command's start). The benchmark (`benches/perf/src/bin/bench.rs`, W1) reads them;
//! nothing else does.
//!
//! The marks: `start`, `cargo metadata read`, `cargo test --no-run done`, `tests built and
//! listed`, `test <i> starts`, `test <i> exited`, `test <i> ended (leftovers swept, runtimes
//! released)`, `tests done, pool shut down`, `artifacts written`.

use std::time::Instant;

/// The variable that turns the phase lines on.
pub const ENV_PHASES: &str = "COPILOT_EVAL_PHASES";

/// Mark the boundary `what` now: print `phase <ms> <what>` to stderr when [`ENV_PHASES`] is
/// set, `<ms>` the milliseconds since this process's first mark.
pub fn mark(what: &str) {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let start = START.get_or_init(Instant::now);
    if std::env::var_os(ENV_PHASES).is_some() {
        eprintln!("phase {} {what}", start.elapsed().as_millis());
    }
}
