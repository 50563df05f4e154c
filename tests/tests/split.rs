//! `cargo copilot-eval cassette split` end to end: a cassette of two real recorded sessions
//! (two copilot-sdk recordings pasted into one file, in a scratch folder) fails to replay as a
//! whole and says how to split it; the built command splits it; each piece then replays through
//! the real runtime. Also the grouping by hand, a bad grouping, refusing to overwrite and
//! `--force`.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use copilot_eval_core::cassette::{Cassette, ReplaySession};
use copilot_eval_core::{CopilotEval, CopilotResult, StopReason, run_turns};
use copilot_eval_e2e::{assert_no_runtime_left, runtime_for};

/// One recorded session and the prompts that replay it (see tests/tests/replay.rs).
struct Session {
    cassette: &'static str,
    prompts: &'static [&'static str],
}

const SHELL: Session = Session {
    cassette: "builtin_tools/should_capture_exit_code_in_output",
    prompts: &["Run 'echo hello && echo world'. Tell me the exact output."],
};

const STATEFUL: Session = Session {
    cassette: "session/should_have_stateful_conversation",
    prompts: &["What is 1+1?", "Now if you double that, what do you get?"],
};

fn recorded(session: &Session) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("cassettes/copilot-sdk")
        .join(format!("{}.yaml", session.cassette))
}

/// `greets.yaml` in a scratch folder: the shell session's two conversations, then the stateful
/// session's one (copies; the recordings are not touched).
fn two_sessions() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("greets.yaml");
    let mut cassette = Cassette::load(&recorded(&SHELL)).unwrap();
    cassette
        .conversations
        .extend(Cassette::load(&recorded(&STATEFUL)).unwrap().conversations);
    assert_eq!(cassette.conversations.len(), 3);
    cassette.path = file.clone();
    cassette
        .write(&file, "Two copilot-sdk recordings in one file.")
        .unwrap();
    (dir, file)
}

/// `cargo copilot-eval cassette split ARGS` (the built command): status, stdout, stderr.
fn split(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(support::command_path())
        .args(["copilot-eval", "cassette", "split"])
        .args(args)
        .output()
        .expect("cargo-copilot-eval runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Replays `cassette` with `session`'s prompts through the real runtime.
async fn replay(cassette: &Path, session: &Session, runtime: &Path) -> CopilotResult {
    let work = tempfile::tempdir().unwrap();
    let replay = ReplaySession::start(cassette).await.unwrap();
    let eval = CopilotEval::builder()
        .name("split")
        .model(replay.model())
        .working_directory(work.path())
        .timeout_s(60.0)
        .build()
        .unwrap();
    let prompts: Vec<String> = session.prompts.iter().map(|p| p.to_string()).collect();
    let result = run_turns(&eval, &prompts, &replay.run_options().runtime_path(runtime)).await;
    replay.shutdown().await;
    assert_no_runtime_left(&result);
    result
}

fn assert_passes(result: &CopilotResult, what: &str) {
    assert!(
        result.success && result.stop_reason == StopReason::Completed,
        "{what}: {:?}\n{}",
        result.stop_reason,
        result.error.as_deref().unwrap_or("")
    );
}

/// The whole file fails (one run uses one session); split in place, each piece passes.
#[tokio::test]
async fn each_split_session_replays_where_the_whole_file_failed() {
    let Some(runtime) = runtime_for("each_split_session_replays_where_the_whole_file_failed")
    else {
        return;
    };
    let (dir, file) = two_sessions();
    let whole = replay(&file, &SHELL, &runtime.path).await;
    assert_eq!(whole.stop_reason, StopReason::ReplayMismatch);
    let error = whole.error.clone().unwrap_or_default();
    let advice = format!(
        "`cargo copilot-eval cassette split {} --force --session 1,2 --session 3` keeps the conversations this run used in {}",
        file.display(),
        file.display()
    );
    assert!(error.contains(&advice), "{error}");

    let (status, stdout, stderr) = split(&[text(&file), "--force"]);
    assert_eq!(status, 0, "{stderr}");
    let second = dir.path().join("greets-2.yaml");
    assert_eq!(
        stdout,
        format!(
            "{}: conversations 1 and 2 of 3\n{}: conversation 3 of 3\n",
            file.display(),
            second.display()
        )
    );
    assert_passes(&replay(&file, &SHELL, &runtime.path).await, "greets.yaml");
    assert_passes(
        &replay(&second, &STATEFUL, &runtime.path).await,
        "greets-2.yaml",
    );
}

/// Without --force nothing is replaced: FILE itself, then an existing second file in --out.
#[test]
fn split_refuses_to_overwrite_without_force() {
    let (dir, file) = two_sessions();
    let before = std::fs::read_to_string(&file).unwrap();
    let (status, stdout, stderr) = split(&[text(&file)]);
    assert_eq!(status, 2, "{stderr}");
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        format!(
            "error: refusing to replace {}, the cassette being split, by its first session: pass --force to split it in place, or --out DIR to write the pieces to another folder\n",
            file.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    assert!(!dir.path().join("greets-2.yaml").exists());

    let out = dir.path().join("pieces");
    std::fs::create_dir(&out).unwrap();
    let theirs = out.join("greets-2.yaml");
    std::fs::write(&theirs, "someone else's\n").unwrap();
    let (status, _, stderr) = split(&[text(&file), "--out", text(&out)]);
    assert_eq!(status, 2, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "refusing to overwrite {}, which exists: pass --force to replace it",
            theirs.display()
        )),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&theirs).unwrap(),
        "someone else's\n"
    );
    assert!(!out.join("greets.yaml").exists(), "nothing written");

    // --force replaces it; FILE itself is untouched (the pieces went to --out).
    let (status, stdout, stderr) = split(&[text(&file), "--out", text(&out), "--force"]);
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    let second = Cassette::load(&theirs).unwrap();
    assert_eq!(second.conversations.len(), 1);
}

/// --session gives the grouping: the first --session keeps FILE's name.
#[test]
fn split_follows_the_sessions_given() {
    let (dir, file) = two_sessions();
    let out = dir.path().join("by-hand");
    let (status, stdout, stderr) = split(&[
        text(&file),
        "--out",
        text(&out),
        "--session",
        "3",
        "--session",
        "2, 1",
    ]);
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(
        stdout,
        format!(
            "{}: conversation 3 of 3\n{}: conversations 1 and 2 of 3\n",
            out.join("greets.yaml").display(),
            out.join("greets-2.yaml").display()
        )
    );
    let whole = Cassette::load(&file).unwrap();
    let first = Cassette::load(&out.join("greets.yaml")).unwrap();
    assert_eq!(
        first.conversations[0].messages.len(),
        whole.conversations[2].messages.len()
    );
    let text_of = std::fs::read_to_string(out.join("greets-2.yaml")).unwrap();
    assert!(
        text_of.starts_with("# Two copilot-sdk recordings in one file.\n# Split from greets.yaml by `cargo copilot-eval cassette split`: conversations 1 and 2 of 3.\n"),
        "{text_of}"
    );
}

/// A grouping that leaves a conversation out, or names one that does not exist: exit 2, the
/// flag and the fix named, nothing written.
#[test]
fn a_bad_session_grouping_is_refused() {
    let (dir, file) = two_sessions();
    let out = dir.path().join("bad");
    for (args, expected) in [
        (
            &["--session", "1,2"][..],
            "error: --session: conversation 3 of 3 is in no --session; give every conversation in exactly one --session (e.g. add `--session 3`)\n",
        ),
        (
            &["--session", "1,2", "--session", "3,4"][..],
            "error: --session \"3,4\": there is no conversation 4: the cassette has 3 conversations, numbered 1 to 3 as a replay failure prints them\n",
        ),
        (
            &["--session", "1,2", "--session", "2,3"][..],
            "error: --session \"2,3\": conversation 2 is already in --session \"1,2\"; give every conversation in exactly one --session\n",
        ),
    ] {
        let mut all = vec![text(&file), "--out", text(&out)];
        all.extend_from_slice(args);
        let (status, stdout, stderr) = split(&all);
        assert_eq!(status, 2, "{args:?}: {stderr}");
        assert_eq!(stdout, "", "{args:?}");
        assert_eq!(stderr, expected, "{args:?}");
        assert!(!out.exists(), "{args:?}: nothing written");
    }
    // A file that is not a cassette: exit 1, named.
    let (status, _, stderr) = split(&[text(&dir.path().join("missing.yaml"))]);
    assert_eq!(status, 1, "{stderr}");
    assert!(stderr.contains("missing.yaml"), "{stderr}");
}

/// A cassette of one session is left alone.
#[test]
fn one_session_is_not_split() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("shell.yaml");
    std::fs::copy(recorded(&SHELL), &file).unwrap();
    let before = std::fs::read_to_string(&file).unwrap();
    let (status, stdout, stderr) = split(&[text(&file), "--force"]);
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        format!(
            "{} holds one session (conversations 1 and 2 of 2): nothing to split; if it holds several, give each with --session N,N,...\n",
            file.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}
