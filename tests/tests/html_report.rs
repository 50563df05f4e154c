//! The HTML report (`cargo copilot-eval --html PATH`) opened in a real headless browser:
//! Debian's Chromium, driven over the DevTools protocol (`headless_chrome`). Every check reads
//! the page as the browser rendered it (the DOM after the page's script ran, visibility as laid
//! out), never the HTML text.
//!
//! The suite: the fixture crate's scripted evals, replayed offline with fail-fast on, in list
//! order: `fails_an_assertion` (failed), `guards_and_delegates` (passed: a guard denies one
//! call, a subagent makes its own, the answer holds markup), `missing_cassette` (error: it stops
//! the suite), `nested::passes_in_a_module` (not run).
//!
//! Chromium: found as `$CHROME`, else `chromium` on `PATH` (`.ci/run` installs Debian's
//! package). Without it the test is skipped through the tests' skip writer
//! (`copilot_eval_e2e::skip`: a line on stderr and in `COPILOT_EVAL_SKIP_LOG`, counted by
//! `.ci/run`), unless `COPILOT_EVAL_REQUIRE_RUNTIME=1` (CI), where it fails. The browser runs headless, with
//! `--no-sandbox` (the tests run as root) and a private user-data folder; the test checks that
//! no browser process is left. Set `COPILOT_EVAL_HTML_SCREENSHOT=PATH` to also keep the
//! screenshot there (how `docs/html-report.png` was made).

use std::time::{Duration, Instant};

use copilot_eval_core::report::Outcome;
use copilot_eval_e2e::runtime_for;
use headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption;
use serde_json::Value;

mod browser;
mod support;

use browser::{eval_json, eval_str, open};

/// The fixture's final answer of `guards_and_delegates` (its `MARKUP_ANSWER`).
const MARKUP_ANSWER: &str = "Reviewed. <script>document.title = 'injected'</script> and </div><b id=\"injected\">not bold</b>";

/// The selector of the eval section named `name`.
fn eval_selector(name: &str) -> String {
    format!("details.eval[data-name=\"{name}\"]")
}

/// Processes whose command line mentions `marker` (the browser's private user-data folder).
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(marker) {
            found.push(format!(
                "{}: {cmdline}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    found
}

/// The page of a flaky eval run in five trials (the scripted example's
/// `names_the_capital_in_most_trials`, wrong in trials 2 and 4): the Trials table gives its
/// figures, marks it flaky, and each trial that did not pass is one click away: its link opens
/// that trial's section.
#[test]
fn the_html_report_shows_an_evals_trials_with_links_to_the_failed_ones() {
    let test = "the_html_report_shows_an_evals_trials_with_links_to_the_failed_ones";
    if runtime_for(test).is_none() {
        return;
    }
    let Some(chrome) = copilot_eval_e2e::chromium_for(test) else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let html = out.path().join("trials.html");
    let run = support::copilot_eval(
        &support::workspace_root(),
        &[
            "-p",
            "scripted",
            "--exact",
            "names_the_capital_in_most_trials",
            "--trials",
            "5",
            "--html",
            html.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(run.status, 1, "{}", run.stderr);
    let profile = tempfile::tempdir().unwrap();
    let (browser, tab) = open(chrome, &profile, &html);
    let row = eval_json(
        &tab,
        "Array.from(document.querySelectorAll('#trials tr.trial-summary')).map(r => Array.from(r.cells).map(c => c.innerText.trim()))",
    );
    assert_eq!(
        row,
        serde_json::json!([[
            "names_the_capital_in_most_trials flaky\nscripted::evals",
            "3/5",
            "60%",
            "23%-88%",
            "pass@1 0.60, pass@5 1.00, pass^1 0.60, pass^5 0.00",
            "failed every trial must pass",
            "trial 2 failed, trial 4 failed"
        ]])
    );
    assert_eq!(
        eval_str(&tab, "document.getElementById('shown').textContent"),
        "5 of 5 evals shown"
    );
    // The link to trial 4 opens its section, named with its trial: read once the page's own
    // `hashchange` listener (registered first) has run.
    let opened = tab
        .evaluate(
            "new Promise(resolve => { const a = Array.from(document.querySelectorAll('#trials a')).find(a => a.innerText === 'trial 4 failed'); window.addEventListener('hashchange', () => { const d = document.getElementById(a.getAttribute('href').slice(1)); resolve(JSON.stringify([d.dataset.name, d.dataset.outcome, d.open, !d.hidden])); }, { once: true }); a.click(); })",
            true,
        )
        .unwrap();
    let opened: Value = serde_json::from_str(opened.value.unwrap().as_str().unwrap()).unwrap();
    assert_eq!(
        opened,
        serde_json::json!([
            "names_the_capital_in_most_trials [trial 4/5]",
            "failed",
            true,
            true
        ])
    );
    drop(tab);
    drop(browser);
}

/// The page of the scripted example's model matrix (`names_the_capital_per_model`: gpt-5 wrong
/// in trial 2), comparison over trials (`compares_the_house_style_over_trials`: the baseline's
/// tag line only in trial 1) and trigger matrix (`triggers_the_release_notes_skill`: one miss,
/// one false trigger), run with `--trials 3`: the Model matrix, Comparisons over trials and
/// Skill triggers tables show, as rendered in a real browser, the figures those runs give; the
/// page opens with the Verdicts section (one row per eval under a headline counting evals and
/// trials apart), the chart names each trial, and none of their text is clipped.
#[test]
fn the_html_report_shows_the_model_matrix_comparisons_over_trials_and_skill_triggers() {
    let test = "the_html_report_shows_the_model_matrix_comparisons_over_trials_and_skill_triggers";
    if runtime_for(test).is_none() {
        return;
    }
    let Some(chrome) = copilot_eval_e2e::chromium_for(test) else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let html = out.path().join("figures.html");
    let run = support::copilot_eval(
        &support::workspace_root(),
        &[
            "-p",
            "scripted",
            "names_the_capital_per_model",
            "compares_the_house_style_over_trials",
            "triggers_the_release_notes_skill",
            "--trials",
            "3",
            "-j",
            "2",
            "--html",
            html.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert_eq!(run.report.tests.len(), 27, "{}", run.stderr);
    let profile = tempfile::tempdir().unwrap();
    let (browser, tab) = open(chrome, &profile, &html);
    let rows = |selector: &str| {
        eval_json(
            &tab,
            &format!(
                "Array.from(document.querySelectorAll('{selector}')).map(r => Array.from(r.cells).map(c => c.innerText.trim()))"
            ),
        )
    };

    // The Model matrix: a table per case, a row per model (tokens and durations vary: only
    // the model, the pass figures, premium requests and cost are fixed).
    let captions = eval_json(
        &tab,
        "Array.from(document.querySelectorAll('#model-matrix table.matrix caption')).map(c => c.innerText.trim())",
    );
    assert_eq!(
        captions,
        serde_json::json!([
            "names_the_capital_per_model::france scripted::evals",
            "names_the_capital_per_model::italy scripted::evals"
        ])
    );
    let matrix: Vec<Vec<String>> =
        serde_json::from_value(rows("#model-matrix tr.matrix-cell")).unwrap();
    let fixed: Vec<[&str; 5]> = matrix
        .iter()
        .map(|r| {
            [
                r[0].as_str(),
                r[1].as_str(),
                r[3].as_str(),
                r[4].as_str(),
                r[5].as_str(),
            ]
        })
        .collect();
    // Cost per pass: scripted runs spend nothing, so it does not apply (never 0).
    let claude = [
        "claude-sonnet-4.5",
        "3/3 (100%, 95% CI 44%-100%)",
        "0",
        "0 USD",
        "n/a (scripted model)",
    ];
    let gpt = [
        "gpt-5",
        "2/3 (67%, 95% CI 21%-94%)",
        "0",
        "0 USD",
        "n/a (scripted model)",
    ];
    assert_eq!(fixed, [claude, gpt, claude, gpt]);
    for row in &matrix {
        assert!(row[2].parse::<u64>().unwrap() > 0, "tokens: {row:?}");
        assert!(row[6].ends_with(" s"), "duration: {row:?}");
    }

    // The comparison over trials: the tag line 1/3 against 3/3 (Fisher's two-sided p = 0.4),
    // `completed` 3/3 on both sides (p = 1); no outcome of 3 trials can reach p < 0.05, so
    // both are underpowered.
    assert_eq!(
        rows("#trials tr.trial-criterion"),
        serde_json::json!([
            [
                "compares_the_house_style_over_trials\nscripted::evals",
                "1",
                "completed",
                "3/3 (100%)",
                "3/3 (100%)",
                "+0 points",
                "1.0000",
                "underpowered"
            ],
            [
                "compares_the_house_style_over_trials\nscripted::evals",
                "1",
                "starts with the house tag line",
                "1/3 (33%)",
                "3/3 (100%)",
                "+67 points",
                "0.4000",
                "underpowered"
            ]
        ])
    );

    // The Skill triggers table: the skill over its 6 should-trigger and 6 should-not runs.
    assert_eq!(
        rows("#skill-triggers tr.skill-trigger"),
        serde_json::json!([[
            "release-notes",
            "all",
            "5/6 (83%, 95% CI 44%-97%)",
            "1/6 (17%, 95% CI 3%-56%)",
            "5/6 (83%)",
            "5/6 (83%)",
            "0"
        ]])
    );

    // The page leads with the decision: its first section is the Verdicts table, under a
    // headline counting evals and trials apart; each eval's row gives its figures over its
    // trials and what changed between its sides.
    assert_eq!(
        eval_str(&tab, "document.querySelector('body > section').id"),
        "verdicts"
    );
    let summaries = &run.report.trial_summaries;
    let failed = summaries
        .iter()
        .filter(|s| s.verdict != Outcome::Passed)
        .count();
    assert_eq!(
        eval_str(&tab, "document.getElementById('headline').innerText.trim()"),
        format!(
            "{} evals, 27 trials, {failed} evals failed",
            summaries.len()
        )
    );
    let verdicts: Vec<Vec<String>> =
        serde_json::from_value(rows("#verdicts tr.verdict-row")).unwrap();
    assert_eq!(verdicts.len(), summaries.len(), "{verdicts:?}");
    assert!(
        verdicts.contains(&vec![
            "compares_the_house_style_over_trials\nscripted::evals".to_owned(),
            "passed".to_owned(),
            "3/3".to_owned(),
            "100%".to_owned(),
            "44%-100%".to_owned(),
            "starts with the house tag line: baseline 1/3, treatment 3/3".to_owned(),
        ]),
        "{verdicts:?}"
    );
    assert!(
        verdicts.contains(&vec![
            "names_the_capital_per_model::france@gpt-5\nscripted::evals".to_owned(),
            "failed".to_owned(),
            "2/3".to_owned(),
            "67%".to_owned(),
            "21%-94%".to_owned(),
            "nothing compared".to_owned(),
        ]),
        "{verdicts:?}"
    );

    // The chart names each trial, and no text of the chart or the Verdicts table is clipped:
    // every chart text lies inside the drawing, every cell's text inside its cell, the table
    // inside the page.
    let labels = eval_json(
        &tab,
        "Array.from(document.querySelectorAll('#chart text.label')).map(t => t.textContent)",
    );
    let labels: Vec<String> = serde_json::from_value(labels).unwrap();
    assert_eq!(labels.len(), 27);
    assert!(
        labels
            .iter()
            .all(|l| l.ends_with("/3]") && l.contains(" [trial ")),
        "{labels:?}"
    );
    let clipped = eval_json(
        &tab,
        "(() => { const svg = document.querySelector('#chart svg'); const width = svg.viewBox.baseVal.width; return Array.from(svg.querySelectorAll('text')).filter(t => { const b = t.getBBox(); return b.x < 0 || b.x + b.width > width; }).map(t => t.textContent); })()",
    );
    assert_eq!(
        clipped,
        serde_json::json!([]),
        "chart texts outside the drawing"
    );
    let clipped = eval_json(
        &tab,
        "Array.from(document.querySelectorAll('#verdicts td')).filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.innerText)",
    );
    assert_eq!(
        clipped,
        serde_json::json!([]),
        "verdict cells whose text overflows"
    );
    assert_eq!(
        eval_str(
            &tab,
            "String(document.querySelector('#verdicts table').getBoundingClientRect().right <= document.documentElement.clientWidth)"
        ),
        "true"
    );
    drop(tab);
    drop(browser);
}

/// The PNG's size, how many distinct colours its pixels have, and the share of its pixels that
/// have the most common colour (the background).
fn decode_png(bytes: &[u8]) -> (u32, u32, usize, f64) {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().expect("the screenshot is a PNG");
    let mut pixels = vec![0; reader.output_buffer_size().expect("a sane PNG size")];
    let info = reader.next_frame(&mut pixels).expect("the PNG decodes");
    let channels = info.color_type.samples();
    let mut colours: std::collections::HashMap<&[u8], usize> = Default::default();
    for pixel in pixels[..info.buffer_size()].chunks_exact(channels) {
        *colours.entry(pixel).or_default() += 1;
    }
    let total = (info.width * info.height) as f64;
    let background = colours.values().copied().max().unwrap_or(0) as f64;
    (info.width, info.height, colours.len(), background / total)
}

#[test]
fn the_html_report_renders_the_suite_in_a_real_browser() {
    let test = "the_html_report_renders_the_suite_in_a_real_browser";
    if runtime_for(test).is_none() {
        return;
    }
    let Some(chrome) = copilot_eval_e2e::chromium_for(test) else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let html = out.path().join("nested/report.html");
    let html_arg = html.to_str().unwrap();
    let run = support::fixture(
        &[
            "-j",
            "1",
            "--html",
            html_arg,
            "--exact",
            "fails_an_assertion",
            "guards_and_delegates",
            "missing_cassette",
            "nested::passes_in_a_module",
        ],
        &[],
    );
    assert_eq!(run.status, 3, "{}", run.stderr);
    let outcomes = run.outcomes();
    assert_eq!(
        outcomes,
        [
            ("fails_an_assertion", Outcome::Failed),
            ("guards_and_delegates", Outcome::Passed),
            ("missing_cassette", Outcome::Error),
            ("nested::passes_in_a_module", Outcome::NotRun),
        ],
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!("wrote {html_arg}")),
        "{}",
        run.stderr
    );

    // `merge --html` writes the same page from the merged results (one unsharded input: the
    // same report).
    let merged = out.path().join("merged/report.html");
    let output = std::process::Command::new(support::command_path())
        .args(["copilot-eval", "merge"])
        .arg(run.scratch.path().join("results/nested/native.json"))
        .arg("--html")
        .arg(&merged)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&merged).unwrap(),
        std::fs::read_to_string(&html).unwrap()
    );

    let profile = tempfile::tempdir().unwrap();
    let marker = profile.path().to_str().unwrap().to_owned();
    let (browser, tab) = open(chrome, &profile, &html);
    let pid = browser.get_process_id();

    // The page's script ran (it fills in how many evals are shown) and the markup in the model's
    // answer did not run (it would set the title).
    assert_eq!(
        eval_str(&tab, "document.getElementById('shown').textContent"),
        "4 of 4 evals shown"
    );
    assert!(
        eval_str(&tab, "document.title").starts_with("copilot-eval report: 4 tests"),
        "{}",
        eval_str(&tab, "document.title")
    );

    // The counts at the top, as rendered.
    let counts = eval_json(
        &tab,
        "['tests','passed','failed','error','not_run'].map(k => document.getElementById('count-' + k).innerText)",
    );
    assert_eq!(counts, serde_json::json!(["4", "1", "1", "1", "1"]));
    assert_eq!(
        eval_str(&tab, "document.getElementById('runtime').innerText"),
        "1.0.102"
    );

    // The failing eval's failure message is shown on its closed section's summary line.
    let failed = eval_selector("fails_an_assertion");
    let line = eval_str(
        &tab,
        &format!("document.querySelector('{failed} > summary').innerText"),
    );
    assert!(line.contains("failed"), "{line}");
    assert!(
        line.contains("the scripted model answers wrongly on purpose"),
        "{line}"
    );

    // Opening an eval shows its timeline: hidden while closed, visible after a click.
    let guarded = eval_selector("guards_and_delegates");
    let timeline_visible =
        format!("String(document.querySelector('{guarded} .timeline').checkVisibility())");
    assert_eq!(eval_str(&tab, &timeline_visible), "false");
    tab.find_element(&format!("{guarded} > summary"))
        .unwrap()
        .click()
        .unwrap();
    assert_eq!(
        eval_str(
            &tab,
            &format!("String(document.querySelector('{guarded}').open)")
        ),
        "true"
    );
    assert_eq!(eval_str(&tab, &timeline_visible), "true");
    let timeline = eval_str(
        &tab,
        &format!("document.querySelector('{guarded} .timeline').innerText"),
    );
    assert!(
        timeline.contains("Review the change and write review.txt."),
        "the prompt: {timeline}"
    );

    // The denied call is marked denied, by the guard, with its reason; the admitted ones are not.
    let calls = eval_json(
        &tab,
        &format!(
            "Array.from(document.querySelectorAll('{guarded} .timeline li.call')).map(c => ({{
                tool: c.querySelector('.tool').innerText,
                status: c.querySelector('.call-head .status').innerText,
                reason: (c.querySelector(':scope > .reason') || {{innerText: ''}}).innerText,
                nested: c.parentElement.closest('.subagent') !== null,
                visible: c.checkVisibility()
            }}))"
        ),
    );
    let calls = calls.as_array().unwrap();
    assert_eq!(calls.len(), 3, "{calls:#?}");
    assert_eq!(calls[0]["tool"], "create");
    assert_eq!(calls[0]["status"], "denied by guard");
    assert_eq!(
        calls[0]["reason"],
        "fixture guard: forbidden.txt stays unwritten"
    );
    assert_eq!(calls[0]["visible"], true);
    assert_eq!(calls[1]["tool"], "task");
    assert_eq!(calls[1]["status"], "admitted");
    // The subagent's own call, nested under the dispatch.
    assert_eq!(calls[2]["tool"], "create");
    assert_eq!(calls[2]["status"], "admitted");
    assert_eq!(calls[2]["nested"], true, "{calls:#?}");
    assert_eq!(calls[0]["nested"], false);

    // The answer's markup is text: shown as written, no element made from it, no script run.
    let answer = eval_str(
        &tab,
        &format!("document.querySelector('{guarded} .final .answer').innerText"),
    );
    assert_eq!(answer.trim(), MARKUP_ANSWER);
    assert_eq!(
        eval_str(&tab, "String(document.querySelectorAll('script').length)"),
        "1",
        "only the page's own script"
    );
    assert_eq!(
        eval_str(&tab, "String(document.getElementById('injected'))"),
        "null"
    );
    // The audit rows are there (the eval audits its requests): one per model request.
    assert_eq!(
        eval_str(
            &tab,
            &format!("String(document.querySelectorAll('{guarded} table.audit tr').length - 1)")
        ),
        "5"
    );

    // The outcome filter and the search, as a person uses them.
    tab.find_element("#filter input[value=passed]")
        .unwrap()
        .click()
        .unwrap();
    assert_eq!(
        eval_str(
            &tab,
            &format!("String(document.querySelector('{guarded}').checkVisibility())")
        ),
        "false"
    );
    assert_eq!(
        eval_str(&tab, "document.getElementById('shown').textContent"),
        "3 of 4 evals shown"
    );
    tab.find_element("#search")
        .unwrap()
        .type_into("nested")
        .unwrap();
    assert_eq!(
        eval_str(&tab, "document.getElementById('shown').textContent"),
        "1 of 4 evals shown"
    );
    tab.find_element("#filter input[value=passed]")
        .unwrap()
        .click()
        .unwrap();
    let search = tab.find_element("#search").unwrap();
    search.focus().unwrap();
    tab.evaluate("document.getElementById('search').select()", false)
        .unwrap();
    tab.press_key("Backspace").unwrap();
    assert_eq!(
        eval_str(&tab, "document.getElementById('shown').textContent"),
        "4 of 4 evals shown"
    );

    // A screenshot of the page with the guarded eval open: produced, and not blank.
    tab.evaluate("window.scrollTo(0, 0)", false).unwrap();
    let png = tab
        .capture_screenshot(CaptureScreenshotFormatOption::Png, None, None, true)
        .unwrap();
    let (width, height, colours, background) = decode_png(&png);
    assert!(width >= 800 && height >= 600, "{width}x{height}");
    eprintln!("screenshot: {width}x{height}, {colours} colours, background {background:.3}");
    assert!(
        colours > 16 && background < 0.9,
        "the screenshot is blank or nearly so: {colours} colours, {:.1}% of it the background colour",
        background * 100.0
    );
    if let Some(keep) = std::env::var_os("COPILOT_EVAL_HTML_SCREENSHOT") {
        std::fs::write(&keep, &png).unwrap();
    }

    // No browser process is left: the main one is reaped when the browser is dropped; its
    // helpers end when it does (waited for, bounded). The private profile's path finds them.
    assert!(
        !processes_with(&marker).is_empty(),
        "the browser's processes are found by their profile folder"
    );
    drop(tab);
    drop(browser);
    if let Some(pid) = pid {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        assert!(stat.is_empty(), "Chromium {pid} is still there: {stat}");
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let left = processes_with(&marker);
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "browser processes left: {left:#?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
