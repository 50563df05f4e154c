//! `cargo copilot-eval doctor`: the command-line face of `copilot_eval_core::doctor`.

use copilot_eval_core::RunOptions;
use copilot_eval_core::doctor::{self, CheckStatus, DoctorOptions};
use serde_json::json;

/// Arguments of `doctor`.
#[derive(clap::Args)]
pub(crate) struct DoctorArgs {
    /// Print the checks as JSON on stdout: `{"ok": bool, "checks": [{"name", "status", "detail",
    /// "fix"}]}` (`status` is ok, warn or fail; `fix` is null for ok).
    #[arg(long)]
    json: bool,
    /// A model id the evals request; it must be in the account's model catalog (repeatable).
    #[arg(long = "model", value_name = "MODEL")]
    models: Vec<String>,
    /// A custom agent file, or a folder searched for `*.agent.md` (repeatable): each agent's
    /// `model:` must be in the catalog too.
    #[arg(long = "agents", value_name = "PATH")]
    agents: Vec<std::path::PathBuf>,
    /// For tests only: check against the loopback model server at URL (e.g.
    /// http://127.0.0.1:PORT) instead of GitHub Copilot.
    #[arg(long, value_name = "URL", hide = true)]
    offline_base_url: Option<String>,
}

/// Run the checks and print them: one line per check on stdout (`status  name  detail`, and
/// `fix: ...` under a warn or fail), or the JSON form with `--json`; a one-line summary on
/// stderr. Returns the exit status: 0 when no check failed (warnings allowed), 1 otherwise.
pub(crate) fn run(args: DoctorArgs) -> u8 {
    let options = DoctorOptions {
        run: match &args.offline_base_url {
            Some(url) => RunOptions::offline(url.as_str()),
            None => RunOptions::live(),
        },
        models: args.models,
        agents: args.agents,
        runtime_path: None,
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return 1;
        }
    };
    let checks = runtime.block_on(doctor::doctor(&options));
    let failed = doctor::any_failed(&checks);
    if args.json {
        let value = json!({"ok": !failed, "checks": checks});
        println!(
            "{}",
            serde_json::to_string_pretty(&value).expect("checks serialise")
        );
    } else {
        print!("{}", doctor::render(&checks));
    }
    let count = |status: CheckStatus| checks.iter().filter(|c| c.status == status).count();
    eprintln!(
        "doctor: {} checks: {} ok, {} warn, {} fail",
        checks.len(),
        count(CheckStatus::Ok),
        count(CheckStatus::Warn),
        count(CheckStatus::Fail)
    );
    u8::from(failed)
}
