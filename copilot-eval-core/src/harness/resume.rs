//! Resuming an earlier run's session within a test: [`EvalContext::resume`],
//! [`EvalContext::resume_turns`] and [`EvalContext::resume_with`] ([`ResumeOptions`]).
//!
//! Every run of a test gets its own runtime home (where the runtime stores its sessions),
//! created by the context and kept until the test ends ([`Homes`]), instead of the engine's
//! temporary home removed at the run's end. Resuming an earlier result starts a fresh runtime
//! whose new home is seeded with a copy of the earlier run's home and which resumes the earlier
//! session by its id ([`RunOptions::home`], [`RunOptions::home_seed`], [`RunOptions::resume`]):
//! the earlier home stays as it was, so the same result can be resumed more than once, and a
//! resumed result can be resumed in turn.
//!
//! Model requests of a resumed run carry the earlier conversation as history. Its tool calls
//! have the ids the earlier runs' loopback servers issued (`call_1` ...), so a scripted or
//! replayed resumed run's server issues ids after them
//! ([`ServerConfig::first_call_id`](crate::model_server::ServerConfig::first_call_id),
//! [`ReplayConfig::earlier_calls`](crate::cassette::ReplayConfig::earlier_calls)).

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::EvalContext;
use crate::eval::{CopilotEval, Prompt};
use crate::report::ResumedFrom;
use crate::result::CopilotResult;
use crate::run::RunOptions;

/// The runtime homes of one test's runs, kept until the test ends (dropping removes them).
pub(super) struct Homes {
    /// This context's process-wide number (`RunOrigin::context`).
    pub(super) context: u64,
    kept: Mutex<Vec<KeptHome>>,
}

/// The kept home of one run.
struct KeptHome {
    run: usize,
    session_id: Option<String>,
    path: PathBuf,
    /// The highest `call_N` id the run's conversation holds (its own calls and its history's).
    calls: u64,
    /// Removes the folder when dropped.
    _dir: tempfile::TempDir,
}

/// What a resumed run needs from the earlier one.
pub(super) struct ResumePlan {
    /// The earlier run and its session id.
    pub(super) from: ResumedFrom,
    /// The earlier run's home, copied into the new run's home.
    pub(super) seed: PathBuf,
    /// The highest `call_N` id the earlier conversation holds.
    pub(super) earlier_calls: u64,
    /// The SDK's `continue_pending_work` for the resume ([`ResumeOptions`]).
    pub(super) continue_pending_work: Option<bool>,
}

/// How [`EvalContext::resume_with`] resumes a session, beyond [`EvalContext::resume`]'s
/// defaults. `ResumeOptions::default()` resumes as `resume` does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResumeOptions {
    continue_pending_work: Option<bool>,
}

impl ResumeOptions {
    /// The SDK's `continue_pending_work` for the resumed session
    /// ([`RunOptions::continue_pending_work`]): `true` asks the runtime to continue the tool
    /// calls and permission requests that were pending when the earlier run ended; `false`,
    /// like leaving it unset (the default), treats them as interrupted.
    pub fn continue_pending_work(mut self, continue_pending: bool) -> Self {
        self.continue_pending_work = Some(continue_pending);
        self
    }
}

/// A fresh run home, not yet registered.
pub(super) struct NewHome {
    dir: tempfile::TempDir,
}

impl NewHome {
    /// The folder.
    pub(super) fn path(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }
}

impl Homes {
    pub(super) fn new() -> Homes {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Homes {
            context: NEXT.fetch_add(1, Ordering::Relaxed),
            kept: Mutex::new(Vec::new()),
        }
    }

    /// A fresh home for the next run (`<temp>/copilot-eval-home-XXXXXX`).
    pub(super) fn create(&self) -> std::io::Result<NewHome> {
        tempfile::Builder::new()
            .prefix("copilot-eval-home-")
            .tempdir()
            .map(|dir| NewHome { dir })
    }

    /// Keep `home` as the home of `run`, which ended with `result`; `earlier_calls`: the
    /// highest call id of the history it resumed (0 for a fresh session).
    pub(super) fn keep(
        &self,
        home: NewHome,
        run: usize,
        result: &CopilotResult,
        earlier_calls: u64,
    ) {
        let own = result
            .tool_calls
            .iter()
            .filter_map(|c| c.id.strip_prefix("call_")?.parse::<u64>().ok())
            .max()
            .unwrap_or(0);
        self.kept.lock().expect("homes lock").push(KeptHome {
            run,
            session_id: result.session_id.clone(),
            path: home.path(),
            calls: own.max(earlier_calls),
            _dir: home.dir,
        });
    }

    /// Remove every kept home (the test ended).
    pub(super) fn clear(&self) {
        self.kept.lock().expect("homes lock").clear();
    }

    /// What resuming `earlier` needs, or the error naming the fix: `earlier` did not come
    /// from this context, from a run with a session, or its home is gone.
    pub(super) fn plan(&self, call: &str, earlier: &CopilotResult) -> Result<ResumePlan, String> {
        let Some(origin) = &earlier.origin else {
            return Err(format!(
                "{call}: the earlier result was not returned by this test's ctx (it comes from run_with, run_turns or elsewhere), so no runtime home was kept for its session; pass a result of ctx.run, ctx.run_turns or ctx.resume from this same test"
            ));
        };
        if origin.context != self.context {
            return Err(format!(
                "{call}: the earlier result comes from run {} of another test ({}); a session can be resumed only in the test that ran it (a test's runtime homes are removed when it ends): run the earlier prompt in this test with ctx.run, then resume that result",
                origin.run, origin.test
            ));
        }
        let kept = self.kept.lock().expect("homes lock");
        let Some(home) = kept.iter().find(|h| h.run == origin.run) else {
            return Err(format!(
                "{call}: the runtime home of run {} of this test is gone (the test already ended, so its homes were removed): resume only while the test runs",
                origin.run
            ));
        };
        let Some(session_id) = home.session_id.clone() else {
            return Err(format!(
                "{call}: run {} of this test has no session to resume: it stopped with {} before the runtime created its session ({}); make that run start its session first",
                origin.run,
                earlier.stop_reason.as_str(),
                earlier.error.as_deref().unwrap_or("no error text")
            ));
        };
        if !home.path.is_dir() {
            return Err(format!(
                "{call}: the runtime home of run {} ({}) is gone, so its session {session_id} cannot be resumed: the home holds the session's state and is kept until the test ends, but something removed it; do not delete it during the test, or run the earlier prompt again and resume that result",
                origin.run,
                home.path.display()
            ));
        }
        Ok(ResumePlan {
            from: ResumedFrom {
                run: origin.run as u64,
                session_id,
            },
            seed: home.path.clone(),
            earlier_calls: home.calls,
            continue_pending_work: None,
        })
    }
}

/// The run options of a run of the test: `options` with the run's kept home, and for a resumed
/// run the earlier home as its seed and the session to resume.
pub(super) fn options_for(
    options: RunOptions,
    home: &NewHome,
    plan: Option<&ResumePlan>,
) -> RunOptions {
    let options = options.home(home.path());
    match plan {
        Some(plan) => {
            let options = options
                .home_seed(&plan.seed)
                .resume(plan.from.session_id.clone());
            match plan.continue_pending_work {
                Some(continue_pending) => options.continue_pending_work(continue_pending),
                None => options,
            }
        }
        None => options,
    }
}

impl EvalContext {
    /// Resume the session of `earlier` (a result of an earlier [`run`](Self::run),
    /// [`run_turns`](Self::run_turns) or `resume` of THIS test) with `prompt`, in a fresh
    /// runtime process: the runtime resumes the session by its id from a copy of the earlier
    /// run's runtime home (kept until the test ends), so the model sees the earlier
    /// conversation as history and can answer from it. `earlier` itself is not changed: it can
    /// be resumed again, and the new result can be resumed in turn.
    ///
    /// The result is a run of its own (one result, one run record, its own cassette as
    /// [`run`](Self::run)): its `session_id` is the earlier one, `resumed` is `true`, and its
    /// `turns`, `tool_calls` and `usage` are this run's. The run record's `resumed_from` names
    /// the earlier run (`{run, session_id}`). Model requests go where [`run`](Self::run) sends
    /// them (script, cassette, live).
    ///
    /// ```no_run
    /// # async fn example(ctx: copilot_eval_core::harness::EvalContext) {
    /// let eval = ctx.eval().build().unwrap();
    /// let first = ctx.run(&eval, "Remember: the code word is PLUM.").await;
    /// let later = ctx.resume(&eval, &first, "What is the code word?").await;
    /// assert!(later.resumed);
    /// assert_eq!(later.session_id, first.session_id);
    /// # }
    /// ```
    ///
    /// Panics (recorded as a setup error naming the fix): `earlier` did not come from this
    /// test's context (another test's result, or one made with `run_with`), its run stopped
    /// before the runtime created a session, or its kept home is gone; otherwise as
    /// [`run`](Self::run). A session the runtime cannot resume is not a panic: the run ends
    /// with `execution_error` ("resuming the session failed: ...").
    pub async fn resume(
        &self,
        eval: &CopilotEval,
        earlier: &CopilotResult,
        prompt: impl Into<Prompt>,
    ) -> CopilotResult {
        self.resume_prompts("ctx.resume", eval, earlier, vec![prompt.into()])
            .await
    }

    /// [`resume`](Self::resume) with several prompts, one turn each, in the resumed session
    /// (as [`run_turns`](Self::run_turns)).
    ///
    /// Panics: as [`resume`](Self::resume); also when `prompts` is empty.
    pub async fn resume_turns<I, S>(
        &self,
        eval: &CopilotEval,
        earlier: &CopilotResult,
        prompts: I,
    ) -> CopilotResult
    where
        I: IntoIterator<Item = S>,
        S: Into<Prompt>,
    {
        let prompts = self.some_prompts("ctx.resume_turns", eval, prompts);
        self.resume_prompts("ctx.resume_turns", eval, earlier, prompts)
            .await
    }

    /// [`resume_turns`](Self::resume_turns) with [`ResumeOptions`], e.g. the SDK's
    /// `continue_pending_work`:
    ///
    /// ```no_run
    /// # async fn example(ctx: copilot_eval_core::harness::EvalContext) {
    /// use copilot_eval_core::harness::ResumeOptions;
    ///
    /// let eval = ctx.eval().build().unwrap();
    /// let first = ctx.run(&eval, "Look the order up.").await;
    /// let options = ResumeOptions::default().continue_pending_work(true);
    /// let later = ctx.resume_with(&eval, &first, ["Go on."], options).await;
    /// assert!(later.resumed);
    /// # }
    /// ```
    ///
    /// Panics: as [`resume_turns`](Self::resume_turns).
    pub async fn resume_with<I, S>(
        &self,
        eval: &CopilotEval,
        earlier: &CopilotResult,
        prompts: I,
        options: ResumeOptions,
    ) -> CopilotResult
    where
        I: IntoIterator<Item = S>,
        S: Into<Prompt>,
    {
        let prompts = self.some_prompts("ctx.resume_with", eval, prompts);
        self.resume_prompts_with("ctx.resume_with", eval, earlier, prompts, options)
            .await
    }

    async fn resume_prompts(
        &self,
        call: &str,
        eval: &CopilotEval,
        earlier: &CopilotResult,
        prompts: Vec<Prompt>,
    ) -> CopilotResult {
        self.resume_prompts_with(call, eval, earlier, prompts, ResumeOptions::default())
            .await
    }

    async fn resume_prompts_with(
        &self,
        call: &str,
        eval: &CopilotEval,
        earlier: &CopilotResult,
        prompts: Vec<Prompt>,
        options: ResumeOptions,
    ) -> CopilotResult {
        let mut plan = self
            .homes()
            .plan(call, earlier)
            .unwrap_or_else(|e| self.setup_failure(e));
        plan.continue_pending_work = options.continue_pending_work;
        self.run_prompts_with(eval, prompts, Some(plan)).await
    }
}
