//! Unit tests of `split`: the grouping into sessions on real recordings, the grouping by hand,
//! the pieces, and the file-level rules (names, refusing to overwrite, `force`).

use std::path::{Path, PathBuf};

use super::split::{
    SplitError, SplitOptions, describe, leading_comment, parse_grouping, piece_path, sessions,
    split, split_file,
};
use super::{Cassette, Conversation};

fn sdk(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/cassettes/copilot-sdk")
        .join(format!("{name}.yaml"))
}

fn quickstart(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/quickstart/tests/cassettes/evals")
        .join(format!("{name}.yaml"))
}

/// The cassettes at `paths` pasted into one (the first one's header and models).
fn pasted(paths: &[PathBuf]) -> Cassette {
    let mut all = Cassette::load(&paths[0]).unwrap();
    for path in &paths[1..] {
        all.conversations
            .extend(Cassette::load(path).unwrap().conversations);
    }
    all.path = PathBuf::from("dir/greets.yaml");
    all
}

const SHELL: &str = "builtin_tools/should_capture_exit_code_in_output";
const STATEFUL: &str = "session/should_have_stateful_conversation";

/// Every real recording is one session, whatever its number of conversations (chains of the
/// same opening, a one-choice chain that is a prefix of another, a drifted tool result).
#[test]
fn each_real_recording_is_one_session() {
    let mut checked = 0;
    for dir in std::fs::read_dir(sdk("x").parent().unwrap()).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&dir).unwrap() {
            let file = file.unwrap().path();
            let cassette = Cassette::load(&file).unwrap();
            let all: Vec<usize> = (1..=cassette.conversations.len()).collect();
            assert_eq!(sessions(&cassette), [all], "{}", file.display());
            checked += 1;
        }
    }
    assert_eq!(checked, 12);
    let multi = Cassette::load(&sdk(
        "multi_turn/should_handle_file_creation_then_reading_across_turns",
    ))
    .unwrap();
    assert_eq!(sessions(&multi), [vec![1, 2, 3]]);
}

#[test]
fn two_pasted_recordings_are_two_sessions() {
    let cassette = pasted(&[sdk(SHELL), sdk(STATEFUL)]);
    assert_eq!(cassette.conversations.len(), 3);
    assert_eq!(sessions(&cassette), [vec![1, 2], vec![3]]);
    // The other order: the sessions are numbered by their first conversation.
    let cassette = pasted(&[sdk(STATEFUL), sdk(SHELL)]);
    assert_eq!(sessions(&cassette), [vec![1], vec![2, 3]]);
}

/// The same recording twice (a test's two runs with the same replies): one session never
/// records the same chain twice, so the copy is the second session.
#[test]
fn a_copy_of_a_session_is_the_next_session() {
    let cassette = pasted(&[sdk(SHELL), sdk(SHELL), sdk(STATEFUL)]);
    assert_eq!(sessions(&cassette), [vec![1, 2], vec![3, 4], vec![5]]);
}

/// Same prompt, another system prompt (the skill on and off): two sessions.
#[test]
fn the_same_prompt_with_other_prompt_parts_is_another_session() {
    let cassette = pasted(&[
        quickstart("compares_with_and_without_the_skill"),
        quickstart("compares_with_and_without_the_skill-2"),
    ]);
    assert_eq!(sessions(&cassette), [vec![1], vec![2]]);
}

const WITH_SUBAGENT: &str = r#"conversations:
  - messages:
      - role: system
        content: ${system}
      - role: user
        content: Write the review.
      - role: assistant
        content: Reviewed.
  - messages:
      - role: system
        content: ${system}
      - role: user
        content: Have the writer write a review.
      - role: assistant
        tool_calls:
          - id: toolcall_0
            type: function
            function: {name: task, arguments: '{"agent_type":"writer","prompt":"Write the review."}'}
      - role: tool
        tool_call_id: toolcall_0
        content: Reviewed.
      - role: assistant
        content: Done.
  - messages:
      - role: system
        content: ${system}
      - role: user
        content: Say bye.
      - role: assistant
        content: Bye.
"#;

/// A sub-agent's conversation (its prompt is a `task` call's `prompt` elsewhere) belongs to the
/// session that dispatched it, even when it comes first in the file; a copy of the whole
/// pair goes to the copy's session.
#[test]
fn a_subagent_conversation_joins_the_session_that_dispatched_it() {
    let cassette = Cassette::parse(WITH_SUBAGENT, Path::new("agents.yaml")).unwrap();
    assert_eq!(sessions(&cassette), [vec![1, 2], vec![3]]);

    let mut twice = cassette.clone();
    let pair: Vec<Conversation> = cassette.conversations[..2].to_vec();
    twice.conversations.extend(pair);
    assert_eq!(sessions(&twice), [vec![1, 2], vec![3], vec![4, 5]]);
}

#[test]
fn a_grouping_by_hand_must_hold_every_conversation_once() {
    let given = |values: &[&str]| {
        let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        parse_grouping(&values, 3)
    };
    assert_eq!(given(&["1,3", "2"]).unwrap(), [vec![1, 3], vec![2]]);
    assert_eq!(given(&["2", " 3 , 1"]).unwrap(), [vec![2], vec![1, 3]]);
    let error = |values: &[&str]| match given(values) {
        Err(SplitError::Grouping(message)) => message,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        error(&["1,x", "2,3"]),
        "--session \"1,x\": `x` is not a conversation number; give numbers from 1 to 3 separated by commas, e.g. `--session 1,3`"
    );
    assert_eq!(
        error(&["1,4", "2,3"]),
        "--session \"1,4\": there is no conversation 4: the cassette has 3 conversations, numbered 1 to 3 as a replay failure prints them"
    );
    assert!(error(&["0", "1,2,3"]).contains("there is no conversation 0"));
    assert_eq!(
        error(&["1,2", "2,3"]),
        "--session \"2,3\": conversation 2 is already in --session \"1,2\"; give every conversation in exactly one --session"
    );
    assert!(error(&["1,1", "2,3"]).contains("conversation 1 is already in this --session"));
    assert_eq!(
        error(&["1"]),
        "--session: conversations 2, 3 of 3 are in no --session; give every conversation in exactly one --session (e.g. add `--session 2,3`)"
    );
    assert!(error(&["1,", "2,3"]).contains("an empty conversation number"));
}

#[test]
fn the_pieces_keep_the_header_and_take_the_names_of_later_runs() {
    let cassette = pasted(&[
        quickstart("compares_with_and_without_the_skill"),
        quickstart("compares_with_and_without_the_skill-2"),
    ]);
    let pieces = split(&cassette, &[vec![2], vec![1]], Path::new("out"));
    assert_eq!(pieces.len(), 2);
    assert_eq!(pieces[0].cassette.path, Path::new("out/greets.yaml"));
    assert_eq!(pieces[1].cassette.path, Path::new("out/greets-2.yaml"));
    assert_eq!(pieces[0].conversations, [2]);
    assert_eq!(
        pieces[0].cassette.conversations,
        cassette.conversations[1..2]
    );
    assert_eq!(
        pieces[1].cassette.conversations,
        cassette.conversations[..1]
    );
    for piece in &pieces {
        assert_eq!(piece.cassette.header, cassette.header);
        assert_eq!(piece.cassette.models, cassette.models);
    }
    assert_eq!(
        piece_path(Path::new("a/b.yml"), Path::new("c"), 3),
        Path::new("c/b-3.yml")
    );
    // The names a test's later runs replay (the harness uses the same function).
    assert_eq!(
        piece_path(Path::new("a/b"), Path::new("c"), 1),
        Path::new("c/b")
    );
    assert_eq!(
        piece_path(Path::new("a/b"), Path::new("c"), 2),
        Path::new("c/b-2")
    );
    assert_eq!(describe(&[1, 2, 4], 5), "conversations 1, 2 and 4 of 5");
    assert_eq!(describe(&[3], 3), "conversation 3 of 3");
    assert_eq!(
        leading_comment("# Recorded by x\n#\n# run 1\nmodels: []\n# not this\n"),
        "Recorded by x\n\nrun 1\n"
    );
}

/// A two-session file in a scratch folder: `greets.yaml` with a comment line.
fn scratch_file() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("greets.yaml");
    let mut cassette = pasted(&[sdk(SHELL), sdk(STATEFUL)]);
    cassette.path = file.clone();
    cassette.write(&file, "Recorded long ago.").unwrap();
    (dir, file)
}

#[test]
fn splitting_in_place_needs_force_and_keeps_the_other_files() {
    let (dir, file) = scratch_file();
    let before = std::fs::read_to_string(&file).unwrap();
    let error = split_file(&file, &SplitOptions::default()).unwrap_err();
    assert!(
        matches!(&error, SplitError::Exists { paths, is_source: true } if *paths == [file.clone()]),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .ends_with("the cassette being split, by its first session: pass --force to split it in place, or --out DIR to write the pieces to another folder"),
        "{error}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    let second = dir.path().join("greets-2.yaml");
    assert!(!second.exists(), "nothing written");

    // An existing second file is refused too, even into another folder, without force.
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("greets-2.yaml"), "mine").unwrap();
    let options = SplitOptions {
        out_dir: Some(out.clone()),
        ..SplitOptions::default()
    };
    let error = split_file(&file, &options).unwrap_err();
    assert!(
        matches!(&error, SplitError::Exists { paths, is_source: false } if *paths == [out.join("greets-2.yaml")]),
        "{error:?}"
    );
    assert!(!out.join("greets.yaml").exists(), "nothing written");
    assert_eq!(
        std::fs::read_to_string(out.join("greets-2.yaml")).unwrap(),
        "mine"
    );

    // With force: in place.
    let options = SplitOptions {
        force: true,
        ..SplitOptions::default()
    };
    let outcome = split_file(&file, &options).unwrap();
    assert_eq!(outcome.conversations, 3);
    assert_eq!(outcome.sessions, [vec![1, 2], vec![3]]);
    let written: Vec<&Path> = outcome
        .written
        .iter()
        .map(|p| p.cassette.path.as_path())
        .collect();
    assert_eq!(written, [file.as_path(), second.as_path()]);
    let first = std::fs::read_to_string(&file).unwrap();
    assert!(
        first.starts_with("# Recorded long ago.\n# Split from greets.yaml by `cargo copilot-eval cassette split`: conversations 1 and 2 of 3.\n"),
        "{first}"
    );
    let shell = Cassette::load(&sdk(SHELL)).unwrap();
    assert_eq!(
        Cassette::load(&file).unwrap().conversations.len(),
        shell.conversations.len()
    );
    let stateful = Cassette::load(&sdk(STATEFUL)).unwrap();
    let back = Cassette::load(&second).unwrap();
    assert_eq!(back.conversations.len(), 1);
    assert_eq!(
        back.conversations[0].messages.len(),
        stateful.conversations[0].messages.len()
    );
    assert!(std::fs::read_to_string(&second).unwrap().contains(
        "# Split from greets.yaml by `cargo copilot-eval cassette split`: conversation 3 of 3.\n"
    ));
}

#[test]
fn one_session_is_left_alone_and_a_bad_grouping_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("one.yaml");
    std::fs::copy(sdk(SHELL), &file).unwrap();
    let before = std::fs::read_to_string(&file).unwrap();
    let outcome = split_file(
        &file,
        &SplitOptions {
            force: true,
            ..SplitOptions::default()
        },
    )
    .unwrap();
    assert_eq!(outcome.sessions, [vec![1, 2]]);
    assert!(outcome.written.is_empty());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);

    let (dir, file) = scratch_file();
    let options = SplitOptions {
        sessions: vec!["1".into(), "3".into()],
        force: true,
        ..SplitOptions::default()
    };
    assert!(matches!(
        split_file(&file, &options),
        Err(SplitError::Grouping(_))
    ));
    assert!(!dir.path().join("greets-2.yaml").exists());

    // By hand: the stateful session first, the shell chains split apart.
    let options = SplitOptions {
        sessions: vec!["3".into(), "1".into(), "2".into()],
        out_dir: Some(dir.path().join("pieces")),
        force: false,
    };
    let outcome = split_file(&file, &options).unwrap();
    let held: Vec<&[usize]> = outcome
        .written
        .iter()
        .map(|p| p.conversations.as_slice())
        .collect();
    assert_eq!(held, [&[3][..], &[1], &[2]]);
    for (i, name) in ["greets.yaml", "greets-2.yaml", "greets-3.yaml"]
        .iter()
        .enumerate()
    {
        let path = dir.path().join("pieces").join(name);
        assert_eq!(outcome.written[i].cassette.path, path);
        assert_eq!(Cassette::load(&path).unwrap().conversations.len(), 1);
    }
}

/// Found by a new user's trial: the refusal names every file `--force` would replace; an `--out`
/// that comes back to the cassette's folder through a folder not created yet is refused like
/// the folder itself; a piece that cannot be written is a write error naming the pieces already
/// written (not a read error), and the cassette being split is still whole.
#[test]
fn every_file_in_the_way_is_named_and_a_failed_write_says_what_was_written() {
    let (dir, file) = scratch_file();
    let before = std::fs::read_to_string(&file).unwrap();
    let second = dir.path().join("greets-2.yaml");
    std::fs::write(&second, "keep").unwrap();

    let error = split_file(&file, &SplitOptions::default()).unwrap_err();
    assert!(
        matches!(&error, SplitError::Exists { paths, is_source: true } if *paths == [file.clone(), second.clone()]),
        "{error:?}"
    );
    assert!(
        error.to_string().contains(&format!(
            "by its first session, and to overwrite {}, which exist: pass --force to replace them",
            second.display()
        )),
        "{error}"
    );

    let back = SplitOptions {
        out_dir: Some(dir.path().join("fresh").join("..")),
        ..SplitOptions::default()
    };
    let error = split_file(&file, &back).unwrap_err();
    assert!(
        matches!(&error, SplitError::Exists { paths, .. } if paths.len() == 2),
        "{error:?}"
    );
    assert!(!dir.path().join("fresh").exists(), "nothing created");
    assert_eq!(std::fs::read_to_string(&second).unwrap(), "keep");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);

    // The second piece's path is a folder: the first piece (to another folder) is written, the
    // second fails, and the error says both.
    let out = dir.path().join("out");
    std::fs::create_dir_all(out.join("greets-2.yaml")).unwrap();
    let force = SplitOptions {
        out_dir: Some(out.clone()),
        force: true,
        ..SplitOptions::default()
    };
    let error = split_file(&file, &force).unwrap_err();
    let message = error.to_string();
    assert!(
        matches!(&error, SplitError::Write { path, written, .. } if *path == out.join("greets-2.yaml") && *written == [out.join("greets.yaml")]),
        "{error:?}"
    );
    assert!(
        message.starts_with(&format!(
            "cannot write {}: ",
            out.join("greets-2.yaml").display()
        )) && message.ends_with(&format!(
            "; already written: {} (the cassette being split is unchanged)",
            out.join("greets.yaml").display()
        )),
        "{message}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
}

/// A trial cassette (`greets/trial-2.yaml`) splits into the cassettes of that trial's runs
/// (`trial-2.yaml`, `trial-2-2.yaml`: what the harness replays in trial 2), the trial folder
/// stays as it is, and the folder itself given as FILE is an error naming a file to split.
#[test]
fn a_trial_cassette_splits_into_its_trials_runs_and_its_folder_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("greets.yaml");
    let folder = super::trial_folder(&first);
    std::fs::create_dir(&folder).unwrap();
    let file = super::trial_cassette_path(&first, 2);
    assert_eq!(file, folder.join("trial-2.yaml"));
    let mut cassette = pasted(&[sdk(SHELL), sdk(STATEFUL)]);
    cassette.path = file.clone();
    cassette.write(&file, "Recorded in trial 2.").unwrap();

    let options = SplitOptions {
        force: true,
        ..SplitOptions::default()
    };
    let outcome = split_file(&file, &options).unwrap();
    let written: Vec<PathBuf> = outcome
        .written
        .iter()
        .map(|p| p.cassette.path.clone())
        .collect();
    assert_eq!(
        written,
        [
            file.clone(),
            super::run_cassette_path(&super::trial_cassette_path(&first, 2), 2)
        ]
    );
    assert_eq!(written[1], folder.join("trial-2-2.yaml"));
    // Still one recorded trial: the second run's file is no trial of its own.
    assert_eq!(super::recorded_trials(&first), [2]);

    let error = split_file(&folder, &SplitOptions::default()).unwrap_err();
    assert!(
        matches!(&error, SplitError::Folder(path) if *path == folder),
        "{error:?}"
    );
    let text = error.to_string();
    assert!(
        text.starts_with(&format!("{} is a folder, not a cassette", folder.display()))
            && text.ends_with(&format!("e.g. {}", folder.join("trial-1.yaml").display())),
        "{text}"
    );
}
