//! Unit tests of `runtime`.

use super::*;

#[test]
fn parses_the_cli_version_line() {
    assert_eq!(
        parse_version("GitHub Copilot CLI 1.0.102.\nRun 'copilot update' to check for updates.\n"),
        Some("1.0.102".to_owned())
    );
    assert_eq!(parse_version("nothing here"), None);
}

#[test]
fn executable_path_follows_the_npm_layout() {
    let exe = executable_in(Path::new("/x"));
    let text = exe.to_string_lossy();
    assert!(
        text.starts_with("/x/node_modules/@github/copilot-"),
        "{text}"
    );
}

#[test]
fn version_text_is_checked_before_it_becomes_a_folder() {
    for good in ["1.0.102", "1.0.103-0", "2.10.0-beta.1"] {
        assert!(check_version_text(good).is_ok(), "{good}");
    }
    for bad in [
        "",
        "1.0",
        "1.0.x",
        "../../etc",
        "1.0.102/..",
        "1.0.102-",
        "v1.0.102",
    ] {
        let err = check_version_text(bad).unwrap_err().to_string();
        assert!(err.contains("MAJOR.MINOR.PATCH"), "{bad}: {err}");
    }
}

#[test]
fn versions_sort_by_number() {
    let mut v = vec!["1.0.10", "1.0.9", "1.0.102", "0.9.0"];
    v.sort_by_key(|v| version_key(v));
    assert_eq!(v, ["0.9.0", "1.0.9", "1.0.10", "1.0.102"]);
}

/// A fake environment for [`resolve_with`].
fn env_of(
    vars: &[(&'static str, std::ffi::OsString)],
) -> impl Fn(&str) -> Option<std::ffi::OsString> + use<> {
    let vars = vars.to_vec();
    move |name| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.clone())
    }
}

/// An executable file at `path` (parents created).
fn executable(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "#!/bin/sh\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn resolve_follows_the_documented_order() {
    let cache = tempfile::tempdir().unwrap();
    let nothing = env_of(&[]);
    let err = resolve_with(&nothing, cache.path()).unwrap_err();
    assert!(matches!(err, RuntimeError::NotFound { .. }));
    assert!(
        err.to_string()
            .contains("cargo copilot-eval runtime install"),
        "{err}"
    );

    // The installed pinned runtime.
    let pinned = executable_in(&cache.path().join("runtime").join(PINNED_RUNTIME_VERSION));
    executable(&pinned);
    let found = resolve_with(&nothing, cache.path()).unwrap();
    assert_eq!(
        (found.path, found.source),
        (pinned.clone(), RuntimeSource::Installed)
    );

    // A version that is not installed is an error naming the install command for it.
    let other = env_of(&[(RUNTIME_VERSION_ENV, "1.0.92".into())]);
    let err = resolve_with(&other, cache.path()).unwrap_err().to_string();
    assert!(err.contains("runtime install --version 1.0.92"), "{err}");
    let other_exe = executable_in(&cache.path().join("runtime").join("1.0.92"));
    executable(&other_exe);
    let found = resolve_with(&other, cache.path()).unwrap();
    assert_eq!(
        (found.path, found.source),
        (other_exe, RuntimeSource::InstalledVersion)
    );
    let bad = env_of(&[(RUNTIME_VERSION_ENV, "../1.0.92".into())]);
    assert!(matches!(
        resolve_with(&bad, cache.path()),
        Err(RuntimeError::BadVersion { .. })
    ));

    // Explicit paths come first; COPILOT_EVAL_RUNTIME_PATH before COPILOT_CLI_PATH; a path
    // that is not an executable is an error, not skipped.
    let explicit = cache.path().join("elsewhere/copilot");
    executable(&explicit);
    let both = env_of(&[
        (CLI_PATH_ENV, "/nowhere/copilot".into()),
        (RUNTIME_PATH_ENV, explicit.clone().into()),
        (RUNTIME_VERSION_ENV, "1.0.92".into()),
    ]);
    let found = resolve_with(&both, cache.path()).unwrap();
    assert_eq!(
        (found.path, found.source),
        (explicit, RuntimeSource::EvalRuntimePath)
    );
    let broken = env_of(&[(CLI_PATH_ENV, "/nowhere/copilot".into())]);
    let err = resolve_with(&broken, cache.path()).unwrap_err();
    assert!(
        matches!(
            err,
            RuntimeError::BadPath {
                variable: CLI_PATH_ENV,
                ..
            }
        ),
        "{err}"
    );
    // An empty variable counts as unset.
    let empty = env_of(&[(RUNTIME_PATH_ENV, "".into())]);
    assert_eq!(resolve_with(&empty, cache.path()).unwrap().path, pinned);
}

#[test]
fn tests_skip_only_when_no_runtime_is_installed_and_none_is_required() {
    let found = ResolvedRuntime {
        path: "/x/copilot".into(),
        source: RuntimeSource::Installed,
    };
    let missing = || RuntimeError::NotFound {
        expected: "/x/copilot".into(),
    };
    assert_eq!(
        decide_for_test("t", Ok(found.clone()), true).unwrap(),
        Some(found)
    );
    assert_eq!(decide_for_test("t", Err(missing()), false).unwrap(), None);
    let err = decide_for_test("t", Err(missing()), true)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("t needs the Copilot runtime"), "{err}");
    assert!(err.contains("cargo copilot-eval runtime install"), "{err}");
    let broken = RuntimeError::BadPath {
        variable: RUNTIME_PATH_ENV,
        path: "/nowhere".into(),
    };
    assert!(decide_for_test("t", Err(broken), false).is_err());
}
