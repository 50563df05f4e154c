//! copilot-eval's named checks and controls with a scripted model: see `tests/evals.rs`.
