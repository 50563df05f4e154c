//! The one skip writer of copilot-eval's own tests: every test that cannot run on this machine
//! (no runtime, and in the end-to-end tests no Chromium or no tmpfs mount) says so through
//! [`write_skip`], so `.ci/run` counts every skip.

use std::io::Write;

use super::SKIP_LOG_ENV;

/// Say that `test` is skipped and why: the line `skipped TEST: WHY` goes straight to the
/// process's stderr, past libtest's output capture (so `cargo test` shows it even for a test
/// that passes), and with `COPILOT_EVAL_SKIP_LOG` set it is also appended to that file (`.ci/run`
/// counts the lines and fails when there is any). A log that cannot be written is ignored.
pub fn write_skip(test: &str, why: &str) {
    let line = format!("skipped {test}: {why}\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
    if let Some(log) = std::env::var_os(SKIP_LOG_ENV).filter(|v| !v.is_empty()) {
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .and_then(|mut f| f.write_all(line.as_bytes()));
    }
}
