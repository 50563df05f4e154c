//! A real headless Chromium for end-to-end tests of the HTML report (shared by
//! `html_report.rs` and `skill_lift.rs`): open a page once its script ran, and read it as the
//! browser rendered it.

#![allow(dead_code)]

use std::time::Duration;

use headless_chrome::{Browser, LaunchOptions, Tab};
use serde_json::Value;

/// Waits of the browser (page load, element lookups): generous, as the machine is shared.
pub const BROWSER_TIMEOUT: Duration = Duration::from_secs(90);

/// Evaluate `expression` in the page; it must produce a string (the tests wrap objects in
/// `JSON.stringify`). Panics with the page's exception when it throws.
pub fn eval_str(tab: &Tab, expression: &str) -> String {
    let result = tab
        .evaluate(expression, false)
        .unwrap_or_else(|e| panic!("evaluating {expression}: {e}"));
    match result.value {
        Some(Value::String(text)) => text,
        other => panic!(
            "{expression} gave {other:?} ({:?})",
            result.description.unwrap_or_default()
        ),
    }
}

/// [`eval_str`] of `JSON.stringify(expression)`, parsed.
pub fn eval_json(tab: &Tab, expression: &str) -> Value {
    serde_json::from_str(&eval_str(tab, &format!("JSON.stringify({expression})"))).unwrap()
}

/// Chromium, headless, with `profile` as its private folder (its profile, and its TMPDIR, where
/// Chromium leaves its singleton socket folder when killed: both removed with it), showing the
/// page at `html` once its script ran.
pub fn open(
    chrome: std::path::PathBuf,
    profile: &tempfile::TempDir,
    html: &std::path::Path,
) -> (Browser, std::sync::Arc<Tab>) {
    let browser_tmp = profile.path().join("tmp");
    std::fs::create_dir(&browser_tmp).unwrap();
    let browser = Browser::new(
        LaunchOptions::default_builder()
            .path(Some(chrome))
            .headless(true)
            .sandbox(false)
            .user_data_dir(Some(profile.path().join("data")))
            .process_envs(Some(
                [(
                    "TMPDIR".to_owned(),
                    browser_tmp.to_str().unwrap().to_owned(),
                )]
                .into(),
            ))
            .window_size(Some((1280, 1600)))
            .idle_browser_timeout(BROWSER_TIMEOUT)
            .build()
            .unwrap(),
    )
    .expect("Chromium starts headless");
    let tab = browser.new_tab().unwrap();
    tab.set_default_timeout(BROWSER_TIMEOUT);
    tab.navigate_to(&format!("file://{}", html.display()))
        .unwrap()
        .wait_until_navigated()
        .unwrap();
    tab.wait_for_element("#shown").unwrap();
    (browser, tab)
}

/// The text of each cell of each row `selector` matches, as the browser laid them out.
pub fn rows(tab: &Tab, selector: &str) -> Value {
    eval_json(
        tab,
        &format!(
            "Array.from(document.querySelectorAll('{selector}')).map(r => Array.from(r.cells).map(c => c.innerText.trim()))"
        ),
    )
}
