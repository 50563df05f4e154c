//! Empty: the soak evals are in `tests/soak.rs`.
