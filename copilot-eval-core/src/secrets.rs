//! Credentials this process obtained outside its environment (the token `gh auth token`
//! printed for a live run). The artifacts' redactor (`Redactor::from_env` in the report
//! module) treats them like the credential
//! variables of the environment, so a model or tool that echoes one is redacted everywhere.

use std::sync::Mutex;

static OBTAINED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Treat `value` as a secret in every artifact this process writes from now on.
pub(crate) fn remember(value: &str) {
    let mut secrets = OBTAINED.lock().expect("secrets lock");
    if !secrets.iter().any(|s| s == value) {
        secrets.push(value.to_owned());
    }
}

/// The credentials remembered so far, in the order they were obtained.
pub(crate) fn obtained() -> Vec<String> {
    OBTAINED.lock().expect("secrets lock").clone()
}
