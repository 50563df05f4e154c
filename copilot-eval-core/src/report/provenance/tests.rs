//! Provenance: input paths without machine folders, folders hashed file by file, settings
//! digests without the working directory, the SDK version the workspace pins.

use std::path::Path;

use super::*;
use crate::report::tests::run;
use crate::result::StopReason;

#[test]
fn the_sdk_version_is_the_one_the_workspace_pins() {
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml"))
            .unwrap();
    let line = manifest
        .lines()
        .find(|l| l.starts_with("github-copilot-sdk"))
        .expect("the workspace pins the SDK");
    assert!(
        line.contains(&format!("version = \"={SDK_VERSION}\"")),
        "{line} does not pin {SDK_VERSION}: update report::provenance::SDK_VERSION"
    );
}

#[test]
fn input_paths_are_relative_to_the_package_the_workdir_or_the_cassette_root() {
    let workdir = std::env::temp_dir().join("copilot-eval-x-123");
    let roots = Roots {
        package: "/home/u/ws/pkg".into(),
        workdir: Some(workdir.clone()),
        cassette_root: Some("/srv/cassettes".into()),
    };
    assert_eq!(
        roots.name(Path::new("/home/u/ws/pkg/skills/notes/SKILL.md")),
        "skills/notes/SKILL.md"
    );
    assert_eq!(
        roots.name(Path::new("skills/./notes/SKILL.md")),
        "skills/notes/SKILL.md"
    );
    assert_eq!(
        roots.name(&workdir.join(".skills/notes/SKILL.md")),
        "${workdir}/.skills/notes/SKILL.md"
    );
    assert_eq!(
        roots.name(Path::new("/srv/cassettes/tests/cassettes/evals/a.yaml")),
        "tests/cassettes/evals/a.yaml"
    );
    assert_eq!(
        roots.name(Path::new("/home/u/ws/shared/skills/x/SKILL.md")),
        "../shared/skills/x/SKILL.md"
    );
    assert_eq!(
        roots.name(Path::new("/home/u/ws/pkg/../other/a.md")),
        "../other/a.md"
    );
}

#[test]
fn a_folder_is_hashed_file_by_file_and_an_edit_changes_only_that_files_hash() {
    let dir = tempfile::tempdir().unwrap();
    let skill = dir.path().join("skills/notes");
    std::fs::create_dir_all(skill.join("references")).unwrap();
    std::fs::write(skill.join("SKILL.md"), "---\nname: notes\n---\nV1\n").unwrap();
    std::fs::write(skill.join("references/style.md"), "style").unwrap();
    let roots = Roots {
        package: dir.path().to_path_buf(),
        ..Roots::default()
    };
    let hash = |provenance: &EvalProvenance| {
        provenance
            .inputs
            .iter()
            .map(|f| (f.path.clone(), f.kind, f.sha256.clone()))
            .collect::<Vec<_>>()
    };
    let mut first = EvalProvenance::default();
    first.add_path(&dir.path().join("skills"), InputKind::Skill, &roots);
    let before = hash(&first);
    assert_eq!(
        before,
        [
            (
                "skills/notes/SKILL.md".to_owned(),
                InputKind::Skill,
                sha256_hex(b"---\nname: notes\n---\nV1\n")
            ),
            (
                "skills/notes/references/style.md".to_owned(),
                InputKind::Skill,
                sha256_hex(b"style")
            ),
        ]
    );
    std::fs::write(skill.join("SKILL.md"), "---\nname: notes\n---\nV2\n").unwrap();
    let mut second = EvalProvenance::default();
    second.add_path(&dir.path().join("skills"), InputKind::Skill, &roots);
    let after = hash(&second);
    assert_ne!(before[0], after[0]);
    assert_eq!(before[1], after[1]);
    assert_ne!(first.digest(), second.digest());
    // A path listed once: a second kind does not replace the first.
    second.add_path(&skill.join("SKILL.md"), InputKind::TestFile, &roots);
    assert_eq!(second.inputs.len(), 2);
    assert_eq!(second.inputs[0].kind, InputKind::Skill);
    // A missing file is no input.
    second.add_path(&dir.path().join("nope.md"), InputKind::TestFile, &roots);
    assert_eq!(second.inputs.len(), 2);
}

#[test]
fn canonical_json_sorts_keys_at_every_depth() {
    let a = serde_json::json!({"b": 1, "a": {"d": [1, {"z": 0, "y": 1}], "c": "x"}});
    assert_eq!(
        canonical_json(&a),
        r#"{"a":{"c":"x","d":[1,{"y":1,"z":0}]},"b":1}"#
    );
}

#[test]
fn settings_digests_leave_the_working_directory_out_and_see_every_setting() {
    let roots = Roots {
        package: "/p".into(),
        ..Roots::default()
    };
    let mut a = run(StopReason::Completed, 1);
    a.configuration.working_directory = Some(std::env::temp_dir().join("one"));
    let mut b = a.clone();
    b.configuration.working_directory = Some(std::env::temp_dir().join("two"));
    let digest = |runs: &[crate::report::RunRecord]| {
        let mut p = EvalProvenance::default();
        p.refresh(runs, &[], &roots);
        p
    };
    assert_eq!(digest(&[a.clone()]), digest(&[b.clone()]));
    let mut slower = a.clone();
    slower.configuration.timeout_s = 60.0;
    assert_ne!(digest(&[a.clone()]).settings, digest(&[slower]).settings);
    let mut other_model = a.clone();
    other_model.configuration.model = Some("gpt-5".into());
    let both = digest(&[a.clone(), other_model]);
    assert_eq!(both.models, ["default", "gpt-5"]);
    assert_eq!(both.settings.len(), 2);
    assert_eq!(
        digest(&[a.clone(), b]).settings.len(),
        1,
        "same settings once"
    );
}
