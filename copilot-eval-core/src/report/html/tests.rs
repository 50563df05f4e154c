//! The page's data and its text (what the browser does with it is checked in
//! `tests/tests/html_report.rs`).

use serde_json::json;

use super::view::{CallView, Page};
use super::*;
use crate::evidence::mcp::{McpServerState, McpTool};
use crate::evidence::subagents::SubagentStatus;
use crate::evidence::{Permission, ToolCall};
use crate::report::tests::run;
use crate::report::{CostTotals, Outcome, RuntimeInfo, SuiteTotals, TestRecord, ToolInfo};
use crate::{Denial, StopReason};

fn test(name: &str, outcome: Outcome, estimated: Option<f64>, input: u64) -> TestRecord {
    TestRecord {
        provenance: None,
        attempt: None,
        stopped_early: None,
        arm: None,
        trial: None,
        model: None,
        name: name.into(),
        test_id: format!("{name}::__copilot_eval"),
        binary: "pkg::evals".into(),
        outcome,
        error_kind: None,
        duration_ms: 100,
        message: None,
        properties: vec![],
        runs: if outcome == Outcome::NotRun {
            vec![]
        } else {
            vec![run(StopReason::Completed, input)]
        },
        workdir: None,
        cassette: None,
        exit: None,
        output: None,
        cost: (outcome != Outcome::NotRun).then(|| CostTotals {
            estimated_cost: estimated,
            ..CostTotals::zero()
        }),
        comparisons: Vec::new(),
        triggers: Vec::new(),
        judges: Vec::new(),
        source: None,
        skill_eval: None,
        trigger_query: None,
        ablated: Vec::new(),
        expectations: Vec::new(),
    }
}

fn report(tests: Vec<TestRecord>) -> SuiteReport {
    SuiteReport {
        provenance: None,
        trial_summaries: Vec::new(),
        model_matrix: Vec::new(),
        skill_triggers: Vec::new(),
        skill_lift: None,
        discrimination: None,
        judge_labels: None,
        noise_floor: None,
        baseline: None,
        schema_version: crate::report::SCHEMA_VERSION.into(),
        tool: ToolInfo {
            name: "copilot-eval".into(),
            version: "0.1.0".into(),
        },
        runtime: RuntimeInfo::default(),
        mode: "replay".into(),
        requested_mode: None,
        started_at: "2026-01-31T09:15:02Z".into(),
        duration_ms: 4000,
        totals: SuiteTotals::of(&tests),
        cost_control: None,
        partition: None,
        pool: None,
        tests,
    }
}

fn call(id: &str, denied: Option<Denial>, permission: Option<Permission>) -> ToolCall {
    ToolCall {
        success: Some(denied.is_none()),
        duration_ms: Some(3),
        completed: true,
        denied,
        permission,
        ..ToolCall::started(id, "bash", json!({"command": "ls"}), None)
    }
}

/// The chart: highest cost first, unknown cost after every known one, not-run evals left out.
#[test]
fn the_chart_is_sorted_by_cost_with_unknown_last() {
    let suite = report(vec![
        test("cheap", Outcome::Passed, Some(0.01), 10),
        test("unknown", Outcome::Failed, None, 500),
        test("dear", Outcome::Passed, Some(0.5), 20),
        test("skipped", Outcome::NotRun, None, 0),
    ]);
    let page = Page::of(&suite);
    let order: Vec<&str> = page.chart.rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(order, ["dear", "cheap", "unknown"]);
    assert_eq!(page.chart.rows[2].cost, "unknown");
    // Bars are scaled to the largest: the unknown-cost eval has the most tokens.
    assert_eq!(page.chart.rows[2].tokens_width, page.chart.bar_width);
    assert!(page.chart.rows[0].tokens_width < page.chart.bar_width);
    assert_eq!(page.chart.rows[0].anchor, "eval-2");
}

/// A replay without recorded usage: the eval's line, its chart row and its run's totals say the
/// tokens are unknown, never "0 tok".
#[test]
fn unknown_tokens_are_shown_as_unknown_per_eval() {
    let mut unknown = test("replayed", Outcome::Passed, None, 0);
    unknown.runs[0].totals.tokens = crate::report::TokenUsage::Unknown;
    let suite = report(vec![test("known", Outcome::Passed, Some(0.1), 40), unknown]);
    let page = Page::of(&suite);
    let row = |name: &str| page.chart.rows.iter().find(|r| r.name == name).unwrap();
    assert_eq!(row("replayed").tokens, "tokens unknown");
    assert_eq!(row("replayed").tokens_width, 0);
    assert_eq!(row("known").tokens, "45 tok");
    let view = |name: &str| page.tests.iter().find(|t| t.name == name).unwrap();
    assert_eq!(view("replayed").tokens, "tokens unknown");
    assert_eq!(view("known").tokens, "45 tokens");
    let totals = super::text::run_totals(&view("replayed").runs[0].record.totals);
    assert!(
        totals.contains("0 model calls, tokens unknown,"),
        "{totals}"
    );
    let html = to_html(&report(vec![
        test("known", Outcome::Passed, Some(0.1), 40),
        {
            let mut t = test("replayed", Outcome::Passed, None, 0);
            t.runs[0].totals.tokens = crate::report::TokenUsage::Unknown;
            t
        },
    ]))
    .unwrap();
    assert!(
        !html.contains("0 tok"),
        "an unknown count is never shown as 0"
    );
    assert!(html.contains("tokens unknown"));
}

/// Who denied a call, from its denial's kind: the budget, a call after the stop, a guard (its
/// deny, its failure, its ask no one could answer), or the permission layer.
#[test]
fn a_denied_call_names_who_denied_it() {
    let mut record = run(StopReason::ToolBudgetExceeded, 1);
    let refused = Permission {
        kind: "shell".into(),
        by: "permission_handler".into(),
        outcome: Some("denied-interactively-by-user".into()),
        approved: false,
        feedback: Some("not here".into()),
    };
    record.tool_calls = vec![
        call("1", None, None),
        call(
            "2",
            Some(Denial::guard(Some("no shell in this eval".into()))),
            None,
        ),
        call("3", Some(Denial::budget(2, "bash")), None),
        call("4", Some(Denial::stopped("bash")), None),
        call("5", None, Some(refused)),
        call(
            "6",
            Some(Denial::guard_failed(
                "pre-tool guard #0 failed on bash: no db".into(),
            )),
            None,
        ),
        call("7", Some(Denial::unanswered_ask("bash", &[])), None),
    ];
    let mut placed = Default::default();
    let views: Vec<CallView> = record
        .tool_calls
        .iter()
        .map(|c| CallView::of(c, &record, &mut placed, 0))
        .collect();
    let who: Vec<(&str, Option<&str>, Option<&str>)> = views
        .iter()
        .map(|v| (v.status, v.denied_by.as_deref(), v.reason.as_deref()))
        .collect();
    // Each denial shows its own reason (worded in evidence::denial) and the label of its kind.
    let reason = |i: usize| {
        record.tool_calls[i]
            .denied
            .as_ref()
            .map(|d| d.reason.as_str())
    };
    assert_eq!(
        who,
        [
            ("admitted", None, None),
            ("denied", Some("guard"), Some("no shell in this eval")),
            ("denied", Some("budget"), reason(2)),
            ("denied", Some("stop"), reason(3)),
            ("denied", Some("permission_handler"), Some("not here")),
            (
                "denied",
                Some("guard failure"),
                Some("pre-tool guard #0 failed on bash: no db")
            ),
            ("denied", Some("guard ask, no permission layer"), reason(6)),
        ]
    );
    assert!(views[2..].iter().all(|v| v.reason.is_some()));
}

/// Markup from a model is escaped, long texts are folded, and the file is written through the
/// artifacts' redaction.
#[test]
fn model_text_is_escaped_folded_and_redacted() {
    let secret = "ghp_abcdefghijklmnop0123";
    let mut passed = test("markup", Outcome::Passed, Some(0.1), 5);
    passed.runs[0].final_response = Some(format!("<script>alert(1)</script></div> {secret}"));
    passed.runs[0].turns = vec![crate::evidence::Turn {
        role: crate::evidence::Role::Assistant,
        content: "line\n".repeat(40),
        tool_call_ids: vec![],
    }];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out/report.html");
    write_html(
        &path,
        &report(vec![passed]),
        &Redactor::with_secrets([secret.to_owned()]),
    )
    .unwrap();
    let html = std::fs::read_to_string(&path).unwrap();
    assert!(html.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;&lt;&#x2f;div&gt;"));
    assert_eq!(html.matches("<script>").count(), 1, "only the page's own");
    assert!(!html.contains(secret));
    assert!(html.contains("[redacted]"));
    assert!(html.contains("(200 characters)"), "the long turn is folded");
}

/// A comparison: its table (baseline, treatment, difference per measure; a changed row marked;
/// a criterion the treatment alone meets marked `improved`) before the runs, each run labelled.
#[test]
fn a_comparison_is_a_table_before_its_labelled_runs() {
    let mut compared = test("compared", Outcome::Passed, Some(0.1), 100);
    let mut treatment = run(StopReason::Completed, 300);
    treatment.tool_calls = vec![call("1", None, None)];
    treatment.totals.tool_calls = 1;
    compared.runs[0].totals.tool_calls = 0;
    compared.runs[0].label = Some("baseline".into());
    treatment.label = Some("treatment".into());
    compared.runs.push(treatment);
    let mut record = crate::report::ComparisonRecord::new(
        "Announce it.",
        (1, &compared.runs[0], vec![]),
        (2, &compared.runs[1], vec!["notes.md".into()]),
    );
    record.add_criterion(crate::report::CriterionRecord {
        name: "tagged".into(),
        baseline: false,
        treatment: true,
    });
    compared.comparisons = vec![record];
    let html = to_html(&report(vec![compared])).unwrap();
    let table = html.find("<table class=\"comparison\"").expect("the table");
    let first_run = html.find("<section class=\"run").unwrap();
    assert!(table < first_run, "the table comes before the runs");
    assert!(html.contains("<tr class=\"measure changed\" data-measure=\"tool calls\"><th>tool calls</th><td>0</td><td>1 (bash ×1)</td><td>+1 (only treatment: bash)</td></tr>"), "{html}");
    assert!(html.contains("<tr class=\"measure changed\" data-measure=\"files written\"><th>files written</th><td>none</td><td>notes.md</td><td>only treatment: notes.md</td></tr>"), "{html}");
    assert!(html.contains("<tr class=\"criterion improved\" data-criterion=\"tagged\"><th>criterion: tagged</th><td class=\"met no\">no</td><td class=\"met yes\">yes</td><td>improved</td></tr>"), "{html}");
    assert!(html.contains("data-run=\"1\" data-label=\"baseline\""));
    assert!(html.contains("<h3>run 2 <span class=\"side treatment\">treatment</span>: "));
}

/// What the runtime substituted is on the page: a nameless call shown as such with the
/// runtime's name, and an MCP server's line with `optional`, each tool the runtime renamed and
/// the check's warning.
#[test]
fn runtime_substitutions_and_mcp_names_are_shown() {
    let mut tested = test("substituted", Outcome::Error, None, 5);
    let mut nameless = call("1", None, None);
    nameless.name = String::new();
    nameless.runtime_name = Some("invalid_tool_call".into());
    nameless.success = Some(false);
    tested.runs[0].tool_calls = vec![nameless];
    tested.runs[0].turns = vec![crate::evidence::Turn {
        role: crate::evidence::Role::Assistant,
        content: String::new(),
        tool_call_ids: vec!["1".into()],
    }];
    tested.runs[0].mcp_servers = vec![McpServerState {
        name: "fixture".into(),
        status: "failed".into(),
        tool_count: Some(1),
        error: None,
        optional: true,
        tools: vec![McpTool {
            name: "t".repeat(60),
            model_name: format!("fixture-{}", "t".repeat(56)),
        }],
        warnings: vec!["cut to 64".into()],
        offered_tools: None,
        received_calls: None,
    }];
    tested.runs[0].mcp_servers.push(McpServerState {
        name: "filtered".into(),
        status: "connected".into(),
        tool_count: Some(1),
        error: None,
        optional: false,
        tools: Vec::new(),
        warnings: Vec::new(),
        offered_tools: Some(Vec::new()),
        received_calls: None,
    });
    let html = to_html(&report(vec![tested])).unwrap();
    assert!(
        html.contains("<span class=\"tool\">(no name)</span>"),
        "{html}"
    );
    assert!(
        html.contains("the runtime called it invalid_tool_call"),
        "{html}"
    );
    assert!(
        html.contains("fixture (optional): failed, 1 tools"),
        "{html}"
    );
    assert!(
        html.contains(&format!(
            "seen by the model as `fixture-{}`",
            "t".repeat(56)
        )),
        "{html}"
    );
    assert!(html.contains("warning: cut to 64"), "{html}");
    assert!(
        html.contains("filtered: connected, 1 tools; the model was offered none of its tools"),
        "{html}"
    );
}

/// A run with incomplete evidence carries a badge on the run and on its eval's line (counting
/// its runs); a run whose evidence is complete carries none. A declared stop is shown beside
/// the stop reason.
#[test]
fn incomplete_evidence_has_a_badge_on_the_run_and_the_eval() {
    let mut lossy = test("lossy", Outcome::Passed, Some(0.1), 5);
    lossy.runs[0].evidence_complete = false;
    lossy.runs[0].capture_errors = vec!["the event subscription lagged: 3 events were lost".into()];
    lossy.runs[0].expected_stop = Some(StopReason::Completed);
    let whole = test("whole", Outcome::Passed, Some(0.1), 5);
    let html = to_html(&report(vec![lossy, whole])).unwrap();
    assert_eq!(
        html.matches("data-evidence=\"incomplete\"").count(),
        2,
        "one on the eval, one on its run: {html}"
    );
    let eval = html.find("id=\"eval-0\"").expect("the lossy eval");
    let other = html.find("id=\"eval-1\"").expect("the whole eval");
    let badges: Vec<usize> = html
        .match_indices("data-evidence=\"incomplete\"")
        .map(|(i, _)| i)
        .collect();
    assert!(
        badges.iter().all(|b| (eval..other).contains(b)),
        "both badges belong to the lossy eval"
    );
    assert!(
        html.contains("evidence incomplete (1 run)</span>"),
        "{html}"
    );
    assert!(
        html.contains("<span class=\"stop\">completed</span> <span class=\"expected-stop\">expected: completed</span>"),
        "{html}"
    );
}

/// An eval that compares, run in trials: the Trials section gets a "Comparisons over trials"
/// table with one row per criterion, its figures written as the terminal writes them; an eval
/// in trials that compares nothing gets no such table.
#[test]
fn comparisons_over_trials_get_their_own_table() {
    use crate::report::{ComparisonRecord, CriterionRecord, TrialOf};
    let side = run(StopReason::Completed, 10);
    let trials: Vec<TestRecord> = (1..=4)
        .map(|trial| {
            let mut record = test("compares", Outcome::Passed, Some(0.1), 10);
            record.trial = Some(TrialOf { trial, trials: 4 });
            let mut comparison = ComparisonRecord::new("p", (1, &side, vec![]), (2, &side, vec![]));
            comparison.add_criterion(CriterionRecord {
                name: "tag <line>".into(),
                baseline: false,
                treatment: true,
            });
            record.comparisons = vec![comparison];
            record
        })
        .collect();
    let mut with = report(trials);
    with.trial_summaries =
        crate::report::trials::summarize(&with.tests, &crate::report::trials::TrialRule::default());
    let html = to_html(&with).unwrap();
    assert!(
        html.contains("<table class=\"trial-comparisons\">"),
        "{html}"
    );
    // 0/4 against 4/4: p = 2 / C(8, 4) = 2/70 = 0.0286. Texts are escaped (`/` too).
    let row = html
        .split("<tr class=\"trial-criterion\"")
        .nth(1)
        .expect("one criterion row");
    let row = &row[..row.find("</tr>").unwrap()];
    for cell in [
        "<td class=\"criterion\">tag &lt;line&gt;</td>",
        "<td class=\"baseline\">0&#x2f;4 (0%)</td>",
        "<td class=\"treatment\">4&#x2f;4 (100%)</td>",
        "<td class=\"difference\">+100 points</td>",
        "<td class=\"p-value\">0.0286</td>",
        "<span class=\"badge significant\">significant</span>",
    ] {
        assert!(row.contains(cell), "{cell} in {row}");
    }

    let mut without = report(
        (1..=2)
            .map(|trial| {
                let mut record = test("plain", Outcome::Passed, Some(0.1), 10);
                record.trial = Some(TrialOf { trial, trials: 2 });
                record
            })
            .collect(),
    );
    without.trial_summaries = crate::report::trials::summarize(
        &without.tests,
        &crate::report::trials::TrialRule::default(),
    );
    let html = to_html(&without).unwrap();
    assert!(html.contains("<section id=\"trials\">"), "{html}");
    assert!(
        !html.contains("<table class=\"trial-comparisons\">"),
        "{html}"
    );
}

/// A model matrix is one table per eval, a row per model with the terminal's figures (`/` is
/// escaped by the template engine), before
/// the evals.
#[test]
fn a_model_matrix_is_a_table_per_eval_with_a_row_per_model() {
    let mut tests = Vec::new();
    for (model, outcomes) in [
        ("claude-sonnet-4.5", [Outcome::Passed, Outcome::Passed]),
        ("gpt-5", [Outcome::Passed, Outcome::Failed]),
    ] {
        for outcome in outcomes {
            let mut record = test(&format!("greets@{model}"), outcome, Some(0.5), 100);
            record.model = Some(model.into());
            record.cost.as_mut().unwrap().input_tokens = 100;
            tests.push(record);
        }
    }
    let mut report = report(tests);
    report.model_matrix = crate::report::matrix::of(&report.tests);
    let html = to_html(&report).unwrap();
    let table = html
        .find("<table class=\"matrix\" data-eval=\"greets\">")
        .expect("the table");
    assert!(table < html.find("<section id=\"evals\">").unwrap());
    assert!(
        html.contains("<caption>greets <span class=\"ids\">pkg::evals</span></caption>"),
        "{html}"
    );
    let row = |model: &str, passed: &str, per_pass: &str| {
        format!(
            "<tr class=\"matrix-cell\" data-model=\"{model}\">\n      <td class=\"model\">{model}</td>\n      <td class=\"passed\">{passed}</td>\n      <td class=\"tokens\">200</td>\n      <td class=\"premium\">0</td>\n      <td class=\"cost\">1</td>\n      <td class=\"cost-per-pass\">{per_pass}</td>\n      <td class=\"duration\">0.2 s</td>"
        )
    };
    assert!(
        html.contains(&row(
            "claude-sonnet-4.5",
            "2&#x2f;2 (100%, 95% CI 34%-100%)",
            "0.5"
        )),
        "{html}"
    );
    assert!(
        html.contains(&row("gpt-5", "1&#x2f;2 (50%, 95% CI 9%-91%)", "1")),
        "{html}"
    );
}

/// The Skill triggers table: a row per skill over every check, then a row per model, with the
/// terminal's figures, before the evals.
#[test]
fn skill_triggers_are_a_table_with_a_row_per_skill_and_model() {
    use crate::report::{Trigger, TriggerCheck};
    let mut tests = Vec::new();
    for (model, expected, invoked) in [
        ("gpt-5", Trigger::Invoke, true),
        ("gpt-5", Trigger::Dormant, true),
        ("o3", Trigger::Invoke, false),
        ("o3", Trigger::Dormant, false),
    ] {
        let mut record = test("routes@m", Outcome::Passed, Some(0.5), 100);
        record.model = Some(model.into());
        record.triggers = vec![TriggerCheck {
            skill: "release-notes".into(),
            expected,
            invoked,
            preloaded: false,
            run: Some(1),
        }];
        tests.push(record);
    }
    let mut report = report(tests);
    report.skill_triggers = crate::report::triggers::of(&report.tests);
    let html = to_html(&report).unwrap();
    let table = html
        .find("<section id=\"skill-triggers\">")
        .expect("the section");
    assert!(table < html.find("<section id=\"evals\">").unwrap());
    let row = |model: &str, shown: &str, rates: (&str, &str), precision: &str, recall: &str| {
        format!(
            "<tr class=\"skill-trigger\" data-skill=\"release-notes\" data-model=\"{model}\">\n      <td class=\"skill\">release-notes</td>\n      <td class=\"model\">{shown}</td>\n      <td class=\"triggered\">{}</td>\n      <td class=\"false-triggers\">{}</td>\n      <td class=\"precision\">{precision}</td>\n      <td class=\"recall\">{recall}</td>\n      <td class=\"not-counted\">0</td>",
            rates.0, rates.1
        )
    };
    // Over both models: 1 of 2 should-trigger runs invoked it, and 1 of 2 should-not runs:
    // precision 1 / (1 + 1), recall 1 / 2.
    let half = "1&#x2f;2 (50%, 95% CI 9%-91%)";
    let (half_share, one_share) = ("1&#x2f;2 (50%)", "1&#x2f;1 (100%)");
    assert!(
        html.contains(&row("", "all", (half, half), half_share, half_share)),
        "{html}"
    );
    let one = "1&#x2f;1 (100%, 95% CI 21%-100%)";
    assert!(
        html.contains(&row("gpt-5", "gpt-5", (one, one), half_share, one_share)),
        "{html}"
    );
    let none = "0&#x2f;1 (0%, 95% CI 0%-79%)";
    assert!(
        html.contains(&row(
            "o3",
            "o3",
            (none, none),
            "n&#x2f;a (never invoked)",
            "0&#x2f;1 (0%)"
        )),
        "{html}"
    );
}

/// The audit table, the skill invocations and a subagent dispatch are read from the run
/// record's own typed fields: each audited request is a row (a subagent's named by its id,
/// missing details in words), each invocation a line with its `SKILL.md`, and the subagent's
/// own calls sit under the `task` call that dispatched it, with its name, status and answer.
#[test]
fn the_audit_skills_and_subagents_are_read_from_their_records() {
    let mut tested = test("dispatched", Outcome::Passed, None, 5);
    let record = &mut tested.runs[0];
    record.request_audit = vec![crate::evidence::audit::RequestAudit {
        request_id: "r1".into(),
        transport: crate::wire::Transport::Http,
        api: crate::wire::Api::Responses,
        model: "claude-haiku-4.5".into(),
        tools: vec!["view".into(), "task".into()],
        reasoning_effort: None,
        image_count: 2,
        image_details: vec![None, Some("low".into())],
        instructions_sha256: Some("ab12".into()),
        continuation: false,
        subagent: true,
        agent_id: Some("a1".into()),
        parent_agent_id: None,
        interaction_type: None,
    }];
    record.skill_invocations = vec![crate::evidence::skills::SkillInvocation {
        name: "notes".into(),
        path: Some("/s/notes/SKILL.md".into()),
        source: None,
        trigger: None,
        agent_id: None,
    }];
    record.subagent_invocations = vec![
        serde_json::from_value(json!({
            "agent_id": "a1", "name": "reviewer", "display_name": "Release Reviewer",
            "agent_type": null, "status": "failed", "cancelled": false,
            "dispatch_tool_call_id": "t1", "parent_agent_id": null, "prompt": "review it",
            "duration_ms": 1500, "model": "claude-haiku-4.5", "error": "gave up",
            "total_tool_calls": 1, "total_tokens": null, "tool_calls": [],
            "final_response": "not reviewed"
        }))
        .unwrap(),
    ];
    let mut task = call("t1", None, None);
    task.name = "task".into();
    let mut inner = call("c2", None, None);
    inner.agent_id = Some("a1".into());
    record.tool_calls = vec![task, inner];
    record.turns = vec![crate::evidence::Turn {
        role: crate::evidence::Role::Assistant,
        content: String::new(),
        tool_call_ids: vec!["t1".into()],
    }];
    let suite = report(vec![tested]);
    let page = Page::of(&suite);
    let run = &page.tests[0].runs[0];
    let html = to_html(&suite).unwrap();
    let audit = html
        .split("<table class=\"audit\">")
        .nth(1)
        .expect("the audit table");
    let row = audit.split("</tr>").nth(1).expect("its row");
    for cell in [
        "<td>subagent a1</td>",
        "<td>claude-haiku-4.5</td>",
        "<summary>2 tools</summary>view, task</details>",
        "<td>none</td>",
        "<td>default, low</td>",
        "<code title=\"ab12\">ab12</code>",
    ] {
        assert!(row.contains(cell), "{cell} in {row}");
    }
    assert!(
        html.contains("notes (&#x2f;s&#x2f;notes&#x2f;SKILL.md)"),
        "{html}"
    );
    let calls: Vec<&CallView> = run.timeline.iter().flat_map(|e| &e.calls).collect();
    assert_eq!(calls.len(), 1, "the subagent's call is under its dispatch");
    let subagent = calls[0].subagent.as_ref().expect("the dispatch is shown");
    let dispatched = subagent.invocation;
    assert_eq!(dispatched.display_name.as_deref(), Some("Release Reviewer"));
    assert_eq!(dispatched.status, SubagentStatus::Failed);
    assert_eq!(
        (
            dispatched.error.as_deref(),
            dispatched.final_response.as_deref()
        ),
        (Some("gave up"), Some("not reviewed"))
    );
    let inner: Vec<&str> = subagent.calls.iter().map(|c| c.call.id.as_str()).collect();
    assert_eq!(inner, ["c2"]);
    // The page writes the status as the JSON does.
    assert!(html.contains("Release Reviewer"), "{html}");
    assert!(
        html.contains("<span class=\"status\">failed</span>"),
        "{html}"
    );
}

/// A run's warnings (e.g. a dispatch by an agent file's name) are listed on the run, escaped;
/// a run without warnings has no such list.
#[test]
fn a_runs_warnings_are_listed_on_the_run() {
    let mut warned = test("warned", Outcome::Passed, None, 5);
    warned.runs[0].warnings = vec!["agent_type \"planner\" <is> the file name".into()];
    let quiet = test("quiet", Outcome::Passed, None, 5);
    let html = to_html(&report(vec![warned])).unwrap();
    assert!(
        html.contains("<div class=\"warnings\"><span class=\"what\">warnings:</span>"),
        "{html}"
    );
    assert!(
        html.contains("agent_type &quot;planner&quot; &lt;is&gt; the file name")
            || html.contains("agent_type &#34;planner&#34; &lt;is&gt; the file name"),
        "{html}"
    );
    let html = to_html(&report(vec![quiet])).unwrap();
    assert!(!html.contains("<div class=\"warnings\">"), "{html}");
}

/// A run's meta line says whether it ran on a pooled runtime or, when the runner offered a
/// pool, why it started its own; a run without either (no pool offered) says neither.
#[test]
fn a_run_says_which_runtime_it_ran_on() {
    let mut pooled = test("pooled", Outcome::Passed, None, 5);
    pooled.runs[0].pooled_runtime = true;
    let mut private = test("private", Outcome::Passed, None, 5);
    private.runs[0].private_runtime_reason = Some("the eval has MCP servers".into());
    let plain = test("plain", Outcome::Passed, None, 5);
    let html = to_html(&report(vec![pooled, private, plain])).unwrap();
    assert_eq!(
        html.matches("<span class=\"runtime\" data-runtime=\"pooled\">pooled runtime</span></p>")
            .count(),
        1,
        "{html}"
    );
    assert_eq!(
        html.matches(
            "<span class=\"runtime\" data-runtime=\"private\">own runtime: the eval has MCP servers</span></p>"
        )
        .count(),
        1,
        "{html}"
    );
    assert_eq!(html.matches("class=\"runtime\"").count(), 2, "{html}");
}

/// The header says where the runs went, and the mode the command asked for when it differs: a
/// suite of scripted evals run as `live` is `scripted (asked for live)`, never `live`.
#[test]
fn the_header_gives_the_runs_mode_and_the_asked_one() {
    let mut scripted = report(Vec::new());
    scripted.mode = "scripted".into();
    scripted.requested_mode = Some("live".into());
    let html = to_html(&scripted).unwrap();
    assert!(
        html.contains("mode <b id=\"mode\">scripted (asked for live)</b>"),
        "{html}"
    );
    scripted.requested_mode = Some("scripted".into());
    let html = to_html(&scripted).unwrap();
    assert!(html.contains("mode <b id=\"mode\">scripted</b>"), "{html}");
}

/// The Criteria section: the suite's count, then a row per criterion with its sides' counts and
/// its verdict (class and `data-verdict`), before the evals.
#[test]
fn the_criteria_section_marks_what_does_not_discriminate() {
    use crate::report::{ComparisonRecord, CriterionRecord};
    let side = run(StopReason::Completed, 10);
    let mut tests = Vec::new();
    for trial in 1..=2 {
        let mut record = test("compares", Outcome::Passed, None, 10);
        record.trial = Some(crate::report::TrialOf { trial, trials: 2 });
        let mut comparison = ComparisonRecord::new("p", (1, &side, vec![]), (2, &side, vec![]));
        for (name, baseline, treatment) in [("completed", true, true), ("tag <line>", false, true)]
        {
            comparison.add_criterion(CriterionRecord {
                name: name.into(),
                baseline,
                treatment,
            });
        }
        record.comparisons = vec![comparison];
        tests.push(record);
    }
    let mut suite = report(tests);
    suite.discrimination = crate::report::discrimination::of(&suite.tests);
    let html = to_html(&suite).unwrap();
    let section = html.find("<section id=\"criteria\">").expect("the section");
    assert!(section < html.find("<section id=\"evals\">").unwrap());
    assert!(
        html.contains("<p class=\"note discrimination-count\">1 of 2 criteria discriminate."),
        "{html}"
    );
    assert!(
        html.contains(
            "<tr class=\"criterion-row does_not_discriminate\" data-name=\"compares\" data-verdict=\"does_not_discriminate\">\n      <td class=\"name\">compares<div class=\"ids\">pkg::evals</div></td>\n      <td class=\"surface\">comparison</td>\n      <td class=\"criterion\">comparison 1, completed</td>\n      <td class=\"sides\">baseline 2&#x2f;2, treatment 2&#x2f;2</td>\n      <td class=\"verdict\"><span class=\"badge does_not_discriminate\">does not discriminate (holds on every side in every trial)</span></td>"
        ),
        "{html}"
    );
    assert!(
        html.contains("<td class=\"criterion\">comparison 1, tag &lt;line&gt;</td>"),
        "{html}"
    );
    // No comparison, ablation or model matrix: no section.
    let plain = to_html(&report(vec![test("a", Outcome::Passed, None, 1)])).unwrap();
    assert!(!plain.contains("<section id=\"criteria\">"));
}

/// With `--baseline`, the page leads with the Verdicts section: the baseline's line under the
/// headline, and each eval's lines against it in its row.
#[test]
fn a_baseline_leads_the_page_with_its_verdicts() {
    use crate::report::baseline::{BaselineEval, BaselineRecord};
    let mut with_baseline = report(vec![test("greets", Outcome::Failed, None, 10)]);
    assert!(!to_html(&with_baseline).unwrap().contains("id=\"verdicts\""));
    with_baseline.baseline = Some(BaselineRecord {
        file: "results/base.json".into(),
        started_at: "2026-12-06T21:56:50Z".into(),
        summary: "1 regressed, 0 improved, 0 unchanged (of 1 evals)".into(),
        evals: vec![BaselineEval {
            binary: with_baseline.tests[0].binary.clone(),
            name: "greets".into(),
            verdict: "regressed".into(),
            lines: vec![
                "vs baseline: regressed, 5/5 (100%) -> 0/5 (0%), -100 pp, p = 0.008".into(),
            ],
        }],
    });
    let html = to_html(&with_baseline).unwrap();
    assert!(
        html.contains("<p class=\"meta\" id=\"baseline\">vs results&#x2f;base.json (2026-12-06T21:56:50Z): 1 regressed, 0 improved, 0 unchanged (of 1 evals)</p>"),
        "{html}"
    );
    let verdicts = html.find("id=\"verdicts\"").expect("the Verdicts section");
    let line = html
        .find("<div>vs baseline: regressed, 5&#x2f;5 (100%) -&gt; 0&#x2f;5 (0%), -100 pp, p = 0.008</div>")
        .expect("the eval's line against the baseline");
    assert!(verdicts < line && line < html.find("id=\"summary\"").unwrap());
}
