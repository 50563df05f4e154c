//! Artifacts get the mode of any file the user writes (0666 less the umask), not a temp file's
//! 0600. Its own test binary: it sets the process umask.

#[cfg(unix)]
#[test]
fn artifacts_are_written_with_the_users_umask() {
    use std::os::unix::fs::PermissionsExt;
    // SAFETY: umask(2) only changes this process's file-creation mask; this binary holds no
    // other test that creates files concurrently.
    unsafe { libc::umask(0o022) };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results/native.json");
    copilot_eval_core::report::write_atomically(&path, b"{}\n").unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644, "mode {mode:o}");
    // A stricter umask is honoured.
    unsafe { libc::umask(0o077) };
    copilot_eval_core::report::write_atomically(&path, b"{}\n").unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "mode {mode:o}");
}
