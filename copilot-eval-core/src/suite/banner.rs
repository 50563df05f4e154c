//! The live banner: the one-line warning printed before a suite that may send model requests
//! live, saying where they go, how many attempts the suite makes (evals x models x trials) and
//! which caps bound its spend.

use super::SuiteOptions;
use crate::harness::Mode;

/// The one-line warning printed before a suite that may send model requests live (live mode, or
/// record mode where a cassette is missing): where they go (GitHub Copilot, or the stand-in
/// server `COPILOT_EVAL_LIVE_BASE_URL` names), how many attempts the suite makes, and the caps
/// that bound its spend over every model and trial; `None` in replay mode or when nothing is
/// selected. `cells` is the number of selected evals times the models of `--models` (one
/// test process each without trials).
pub fn live_banner(options: &SuiteOptions, cells: usize) -> Option<String> {
    let stand_in = std::env::var(crate::harness::ENV_LIVE_BASE_URL).ok();
    live_banner_to(options, cells, stand_in.as_deref())
}

/// [`live_banner`] for the value of `COPILOT_EVAL_LIVE_BASE_URL` (`stand_in`; unset or blank:
/// GitHub Copilot).
pub fn live_banner_to(
    options: &SuiteOptions,
    cells: usize,
    stand_in: Option<&str>,
) -> Option<String> {
    if cells == 0 {
        return None;
    }
    let who = match options.mode {
        Mode::Live => "live mode: the selected evals",
        Mode::Record(_) => "record mode: the selected evals without a cassette",
        Mode::Replay => return None,
    };
    let mut caps = Vec::new();
    if let Some(cost) = options.cost.max_cost {
        caps.push(format!("--max-cost {cost}"));
    }
    if let Some(premium) = options.cost.max_premium_requests {
        caps.push(format!("--max-premium-requests {premium}"));
    }
    let bound = if caps.is_empty() {
        "no spending cap is set".to_owned()
    } else {
        format!(
            "capped by {}, over every model and trial",
            caps.join(" and ")
        )
    };
    let target = match stand_in.map(str::trim).filter(|url| !url.is_empty()) {
        Some(url) => format!(
            "send model requests to {url} (COPILOT_EVAL_LIVE_BASE_URL), not to GitHub Copilot"
        ),
        None => "send model requests to GitHub Copilot and spend premium requests".to_owned(),
    };
    // evals x models x trials; a factor of one is left out, and nothing is counted when every
    // factor is one.
    let models = options.models.len();
    let trials = options.trials.unwrap_or(1);
    let mut factors = Vec::new();
    if models > 1 || trials > 1 {
        let evals = cells.checked_div(models).unwrap_or(cells);
        factors.push(plural(evals, "eval"));
        if models > 0 {
            factors.push(plural(models, "model"));
        }
        if trials > 1 {
            factors.push(plural(trials as usize, "trial"));
        }
    }
    let count = if factors.is_empty() {
        String::new()
    } else {
        let attempts = cells * trials as usize;
        format!(
            " ({} = {})",
            factors.join(" x "),
            plural(attempts, "attempt")
        )
    };
    // Without `--trials` the runner learns an eval's `trials = N` only from its first trial.
    let grow = if options.trials.is_none() {
        "; trials asked by the attribute (`trials = N`) are added after each eval's first trial, so the count may grow"
    } else {
        ""
    };
    Some(format!(
        "note: {who}{count} {target} ({bound}){grow}; scripted evals stay offline. Pass --replay to run everything offline from cassettes."
    ))
}

/// `3 evals`, `1 model`.
fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The banner says where live requests go: GitHub Copilot, or the stand-in server named by
    /// `COPILOT_EVAL_LIVE_BASE_URL` (then nothing is spent); replay mode says nothing.
    #[test]
    fn the_live_banner_says_where_requests_go() {
        let mut options = SuiteOptions::new();
        options.mode = Mode::Record(crate::harness::RecordPolicy::Missing);
        let github = live_banner_to(&options, 1, None).unwrap();
        assert!(
            github.starts_with("note: record mode: the selected evals without a cassette send model requests to GitHub Copilot and spend premium requests (no spending cap is set)"),
            "{github}"
        );
        let stand_in = live_banner_to(&options, 1, Some("http://127.0.0.1:4321")).unwrap();
        assert!(
            stand_in.starts_with("note: record mode: the selected evals without a cassette send model requests to http://127.0.0.1:4321 (COPILOT_EVAL_LIVE_BASE_URL), not to GitHub Copilot (no spending cap is set)"),
            "{stand_in}"
        );
        assert_eq!(live_banner_to(&options, 1, Some(" ")), Some(github));
        options.mode = Mode::Replay;
        assert_eq!(
            live_banner_to(&options, 1, Some("http://127.0.0.1:4321")),
            None
        );
    }

    /// Issue 32: the banner states evals x models x trials and that the cap covers every model
    /// and trial; without `--trials` it says that an attribute's trials may add attempts.
    #[test]
    fn the_live_banner_counts_evals_models_and_trials() {
        let mut options = SuiteOptions::new();
        options.trials = Some(5);
        options.cost.max_cost = Some(2.0);
        let trials = live_banner_to(&options, 3, None).unwrap();
        assert!(
            trials.starts_with("note: live mode: the selected evals (3 evals x 5 trials = 15 attempts) send model requests to GitHub Copilot and spend premium requests (capped by --max-cost 2, over every model and trial); scripted evals stay offline."),
            "{trials}"
        );
        // With --models the cells are evals x models.
        options.models = vec!["a".to_owned(), "b".to_owned()];
        let matrix = live_banner_to(&options, 6, None).unwrap();
        assert!(
            matrix.contains("(3 evals x 2 models x 5 trials = 30 attempts)"),
            "{matrix}"
        );
        // Without --trials the attribute may ask for more.
        options.trials = None;
        options.cost.max_cost = None;
        let grows = live_banner_to(&options, 6, None).unwrap();
        assert!(
            grows.contains("(3 evals x 2 models = 6 attempts) send model requests"),
            "{grows}"
        );
        assert!(
            grows.contains("(no spending cap is set); trials asked by the attribute (`trials = N`) are added after each eval's first trial, so the count may grow; scripted evals stay offline."),
            "{grows}"
        );
        // `--trials 1` fixes the count: no trial is added.
        options.models.clear();
        options.trials = Some(1);
        let once = live_banner_to(&options, 1, None).unwrap();
        assert!(
            once.starts_with("note: live mode: the selected evals send model requests to GitHub Copilot and spend premium requests (no spending cap is set); scripted evals stay offline."),
            "{once}"
        );
    }
}
