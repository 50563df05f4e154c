//! copilot-eval's authoring features with a scripted model: see `tests/evals.rs`.
