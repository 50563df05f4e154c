//! `plan`: the face of `copilot_eval_core::suite::plan`. It takes every option of a suite run
//! (the same selection, trials, models, sides, caps and `--baseline`, and the profile's, as a
//! suite run applies them) and prints what that run would cost, running nothing.

use copilot_eval_core::suite::exit_code;
use copilot_eval_core::suite::plan::{self, PlanOptions};

/// Arguments of `plan`: a suite run's, and the power calculation's.
#[derive(clap::Args)]
pub(crate) struct PlanArgs {
    #[command(flatten)]
    run: crate::RunArgs,
    /// The trials per side a comparison needs to detect a difference of PP percentage points
    /// (two-sided alpha 0.05, power 0.8), at each eval's pass rate in --baseline and at
    /// --base-rate.
    #[arg(long, value_name = "PP")]
    detect: Option<f64>,
    /// The pass rate assumed by --detect for the evals --baseline does not give, in percent.
    #[arg(long, value_name = "PCT", default_value_t = 50.0)]
    base_rate: f64,
}

impl PlanArgs {
    /// The suite run's options `plan` was given (`--profile` and `--manifest-path` among them).
    pub(crate) fn run_args(&self) -> &crate::RunArgs {
        &self.run
    }
}

/// Run `plan`; returns its exit status (`copilot_eval_core::suite::plan::run_plan`), `2` for an
/// invalid option.
pub(crate) fn run(args: PlanArgs) -> u8 {
    if let Some(points) = args.detect
        && !(points > 0.0 && points <= 100.0)
    {
        eprintln!("error: --detect takes percentage points above 0 and at most 100, got {points}");
        return exit_code::USAGE;
    }
    if !(0.0..=100.0).contains(&args.base_rate) {
        eprintln!(
            "error: --base-rate takes a percentage from 0 to 100, got {}",
            args.base_rate
        );
        return exit_code::USAGE;
    }
    let suite = match crate::suite_options(args.run) {
        Ok(suite) => suite,
        Err(status) => return status,
    };
    plan::run_plan(&PlanOptions {
        suite,
        detect: args.detect.map(|points| points / 100.0),
        base_rate: args.base_rate / 100.0,
    })
}
