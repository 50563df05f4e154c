//! Trajectory checks: what the agent did on its way, from the run's evidence — tools called in
//! an order, never called, called a number of times, and the number of model turns. Each is a
//! [`Check`] with a name that says what it asks (`tools called in order: view, edit`), recorded
//! with kind `trajectory` by [`EvalContext::check`](super::EvalContext::check).
//!
//! Tool calls are every call of the run in the order the runtime started them
//! ([`CopilotResult::tool_calls`]), a subagent's calls included, under the name the model
//! called (an MCP tool is `server-tool`), denied calls included (the model asked for them).
//! A model turn is one assistant message of the conversation ([`CopilotResult::turns`]).

use std::fmt;

use super::{Check, Finding};
use crate::CopilotResult;
use crate::evidence::Role;

/// How many times: exactly, at most or at least `n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Times {
    /// Exactly `n`.
    Exactly(usize),
    /// `n` or fewer.
    AtMost(usize),
    /// `n` or more.
    AtLeast(usize),
}

impl Times {
    /// Whether `count` satisfies the bound.
    pub fn admits(self, count: usize) -> bool {
        match self {
            Times::Exactly(n) => count == n,
            Times::AtMost(n) => count <= n,
            Times::AtLeast(n) => count >= n,
        }
    }
}

impl fmt::Display for Times {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Times::Exactly(n) => write!(f, "exactly {n}"),
            Times::AtMost(n) => write!(f, "at most {n}"),
            Times::AtLeast(n) => write!(f, "at least {n}"),
        }
    }
}

/// The names of the run's tool calls, in order.
fn called(result: &CopilotResult) -> Vec<&str> {
    result.tool_calls.iter().map(|c| c.name.as_str()).collect()
}

/// `called: a, b, c` (or `called: no tool`).
fn called_evidence(names: &[&str]) -> String {
    if names.is_empty() {
        "called: no tool".to_owned()
    } else {
        format!("called: {}", names.join(", "))
    }
}

/// The tools `names` were called in this order, other calls allowed between them (a
/// subsequence of the run's calls). Named `tools called in order: a, b`.
pub fn in_order<I, S>(names: I) -> Check
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let wanted: Vec<String> = names.into_iter().map(Into::into).collect();
    let name = format!("tools called in order: {}", wanted.join(", "));
    Check::trajectory(name, move |result| {
        let names = called(result);
        let mut rest = names.iter();
        let passed = wanted.iter().all(|w| rest.any(|n| n == w));
        Finding {
            passed,
            evidence: called_evidence(&names),
        }
    })
}

/// The tool `tool` was never called. Named `never called: tool`.
pub fn never_called(tool: impl Into<String>) -> Check {
    let tool = tool.into();
    Check::trajectory(format!("never called: {tool}"), move |result| {
        let names = called(result);
        Finding {
            passed: !names.iter().any(|n| *n == tool),
            evidence: called_evidence(&names),
        }
    })
}

/// The tool `tool` was called `times` times. Named `called tool exactly 2 times` (or `at most`,
/// `at least`).
pub fn called_times(tool: impl Into<String>, times: Times) -> Check {
    let tool = tool.into();
    Check::trajectory(format!("called {tool} {times} times"), move |result| {
        let count = called(result).iter().filter(|n| **n == tool).count();
        Finding {
            passed: times.admits(count),
            evidence: format!("{tool} called {count} times"),
        }
    })
}

/// The model answered in `times` turns (assistant messages). Named `model turns: at most 3`.
pub fn model_turns(times: Times) -> Check {
    Check::trajectory(format!("model turns: {times}"), move |result| {
        let count = result
            .turns
            .iter()
            .filter(|t| t.role == Role::Assistant)
            .count();
        Finding {
            passed: times.admits(count),
            evidence: format!("{count} model turns"),
        }
    })
}
