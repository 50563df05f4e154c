//! The quick-start example of copilot-eval: see `tests/evals.rs`.
