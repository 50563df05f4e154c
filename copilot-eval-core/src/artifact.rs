//! Writing artifacts, below every stage that writes one (cassettes, results, side files): atomic
//! file writes, secret redaction and UTC timestamps. The report re-exports these for its users.

use std::io::Write;
use std::path::Path;

use serde_json::Value;

/// Environment variables whose values are always treated as secrets, when set and at least
/// [`Redactor::MIN_SECRET_LEN`] long.
const SECRET_VARIABLES: &[&str] = &[
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "COPILOT_GITHUB_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
    "COPILOT_HMAC_KEY",
    "CAPI_HMAC_KEY",
];

/// Name fragments that mark any other environment variable as a secret.
const SECRET_NAME_PARTS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "API_KEY",
    "CREDENTIAL",
];

/// Removes secret values from everything the artifacts contain.
///
/// The secrets are the values of credential variables in the environment (`GITHUB_TOKEN`,
/// `GH_TOKEN`, `COPILOT_GITHUB_TOKEN`, the enterprise tokens and HMAC keys, and every variable
/// whose name contains `TOKEN`, `SECRET`, `PASSWORD`, `PASSWD`, `API_KEY` or `CREDENTIAL`) that
/// are at least 12 characters long (shorter values would match ordinary text). Every occurrence
/// in a string, in JSON keys and values alike, becomes `[redacted]`.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

impl Redactor {
    /// Shortest value treated as a secret, in bytes.
    pub const MIN_SECRET_LEN: usize = 12;

    /// A redactor for the secrets in this process's environment, and for every credential this
    /// process obtained some other way (the GitHub CLI's token of a live run).
    pub fn from_env() -> Self {
        let mut secrets = crate::secrets::obtained();
        for (name, value) in std::env::vars_os() {
            let (Some(name), Some(value)) = (name.to_str(), value.to_str()) else {
                continue;
            };
            let upper = name.to_ascii_uppercase();
            let secret = SECRET_VARIABLES.contains(&upper.as_str())
                || SECRET_NAME_PARTS.iter().any(|p| upper.contains(p));
            if secret && value.len() >= Self::MIN_SECRET_LEN {
                secrets.push(value.to_owned());
            }
        }
        Self::with_secrets(secrets)
    }

    /// A redactor for exactly these secret values (those shorter than
    /// [`MIN_SECRET_LEN`](Self::MIN_SECRET_LEN) are ignored).
    pub fn with_secrets(secrets: impl IntoIterator<Item = String>) -> Self {
        let mut secrets: Vec<String> = secrets
            .into_iter()
            .filter(|s| s.len() >= Self::MIN_SECRET_LEN)
            .collect();
        // Longest first, so a secret containing another is replaced whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        Self { secrets }
    }

    /// `text` with every secret replaced by `[redacted]`.
    pub fn redact_str(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), "[redacted]");
            }
        }
        out
    }

    /// A copy of `value` with every secret removed from its JSON form (every string and key).
    ///
    /// Panics only if `T`'s JSON form does not read back as a `T` after strings changed (the
    /// report's records always do).
    pub(crate) fn redact_serialized<T>(&self, value: &T) -> T
    where
        T: serde::Serialize + serde::de::DeserializeOwned + Clone,
    {
        if self.secrets.is_empty() {
            return value.clone();
        }
        let mut json = serde_json::to_value(value).expect("an artifact's value serialises");
        self.redact_value(&mut json);
        serde_json::from_value(json).expect("redaction keeps the value's shape")
    }

    /// Redact every string and object key in `value`, recursively.
    pub fn redact_value(&self, value: &mut Value) {
        if self.secrets.is_empty() {
            return;
        }
        match value {
            Value::String(s) => *s = self.redact_str(s),
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_value(v)),
            Value::Object(map) => {
                let entries = std::mem::take(map);
                for (key, mut v) in entries {
                    self.redact_value(&mut v);
                    map.insert(self.redact_str(&key), v);
                }
            }
            _ => {}
        }
    }
}

/// Write `bytes` to `path` atomically: create the parent folders, write a temporary file in the
/// same folder, flush it to disk, then rename it over `path`. Readers see the old file or the new
/// one, never a partial file.
///
/// Errors: the folder cannot be created, or the file cannot be written or renamed (the message
/// names the path).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(|e| {
        // "File exists" alone does not say which part of the path is in the way.
        let in_the_way = parent
            .ancestors()
            .find(|a| a.is_file() || (a.exists() && !a.is_dir()));
        match in_the_way {
            Some(file) => std::io::Error::new(
                e.kind(),
                format!(
                    "creating {}: {} is a file, not a folder (move it, or choose another path)",
                    parent.display(),
                    file.display()
                ),
            ),
            None => std::io::Error::new(e.kind(), format!("creating {}: {e}", parent.display())),
        }
    })?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "artifact".to_owned());
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // Like any file the user writes: 0666 less the umask (tempfile's default is 0600, which CI
    // upload steps and other users cannot read).
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut temp = builder
        .tempfile_in(&parent)
        .map_err(|e| std::io::Error::new(e.kind(), format!("writing {}: {e}", path.display())))?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| {
        std::io::Error::new(
            e.error.kind(),
            format!("renaming into {}: {}", path.display(), e.error),
        )
    })?;
    Ok(())
}

/// Format a wall-clock time as RFC 3339 in UTC with second precision, e.g.
/// `2026-01-31T09:15:02Z`.
pub fn rfc3339(time: std::time::SystemTime) -> String {
    // Times before 1970 do not occur in artifacts; they are written as the epoch.
    let time = time.max(std::time::UNIX_EPOCH);
    humantime::format_rfc3339_seconds(time).to_string()
}
