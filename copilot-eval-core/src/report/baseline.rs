//! `--baseline BASE.json` in the results: how the suite run compares with an earlier results
//! file, eval by eval, as the runner's comparison (`cargo copilot-eval compare`) found it when
//! the run finished. The terminal summary and the HTML page lead with it beside each eval's
//! verdict; the comparison's full table is `compare`'s.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The suite's comparison with its `--baseline` file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BaselineRecord {
    /// The baseline results file, as given on the command line.
    pub file: String,
    /// When the baseline's suite started (RFC 3339, from that file).
    pub started_at: String,
    /// The comparison's summary line: `0 regressed, 1 improved, 1 underpowered, 0 unchanged
    /// (of 2 evals)`, naming a runtime, SDK or settings change of the suite when there is one.
    pub summary: String,
    /// One entry per eval of either file, regressions first (as `compare` orders them).
    pub evals: Vec<BaselineEval>,
}

/// One eval against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BaselineEval {
    /// The eval's test binary (`package::target`).
    pub binary: String,
    /// The eval's name (`module::function`, `@model` for a model matrix's cell).
    pub name: String,
    /// `compare`'s verdict: `regressed`, `improved`, `unchanged`, `underpowered`,
    /// `no_verdict`, `new` (not in the baseline) or `removed` (only in the baseline).
    pub verdict: String,
    /// What the report shows for it: `vs baseline: underpowered, 1/1 (100%) -> 3/5 (60%),
    /// -40 pp, p = 1.000`, then `compare`'s details (why it is underpowered and the trials it
    /// would need, each input file that changed, a model or setting that changed).
    pub lines: Vec<String>,
}

impl BaselineRecord {
    /// The lines of eval `name` of `binary`; empty when the comparison does not hold it.
    pub fn lines_of(&self, binary: &str, name: &str) -> &[String] {
        self.evals
            .iter()
            .find(|e| e.binary == binary && e.name == name)
            .map_or(&[], |e| e.lines.as_slice())
    }

    /// The headline's baseline line: `vs BASE.json (2026-12-01T10:00:00Z): 0 regressed, ...`.
    pub fn headline(&self) -> String {
        format!("vs {} ({}): {}", self.file, self.started_at, self.summary)
    }
}
