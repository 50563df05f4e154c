//! The pool key of a run: what a runtime fixes for all its sessions, so runs whose keys differ
//! never share a runtime (docs/performance.md, "Warm runtimes").
//!
//! A runtime asks its account (`GET /copilot_internal/user`: MCP on or off, the identity) and
//! its model catalog (`GET /models`: model ids, wire format, vision) once, for its first
//! sessions, and keeps the answers. The key is therefore made of the answers the run's own
//! model server gives to those two requests (the server's base URL written out, since each run
//! has its own), with the runtime executable and the client mode: a SHA-256, hex.

use sha2::{Digest, Sha256};

/// The pool key of a run on the runtime at `runtime_path`, in client mode `client_mode`
/// (`copilot-cli`), whose model server is at `base_url` (asked here, as the runtime would).
///
/// # Errors
/// The model server did not answer one of the two requests with `200`; the text names it.
pub async fn pool_key(
    runtime_path: &std::path::Path,
    client_mode: &str,
    base_url: &str,
) -> Result<String, super::PoolError> {
    let client =
        super::loopback::loopback_client().map_err(|e| super::PoolError::Client(e.to_string()))?;
    let mut hash = Sha256::new();
    hash.update(runtime_path.as_os_str().as_encoded_bytes());
    hash.update([0]);
    hash.update(client_mode.as_bytes());
    for path in ["/copilot_internal/user", "/models"] {
        let url = format!("{base_url}{path}");
        let answer = client
            .get(&url)
            .send()
            .await
            .map_err(|source| super::PoolError::KeyAsk {
                url: url.clone(),
                source,
            })?;
        if !answer.status().is_success() {
            return Err(super::PoolError::KeyStatus {
                url,
                status: answer.status(),
            });
        }
        let body = answer
            .text()
            .await
            .map_err(|source| super::PoolError::KeyRead {
                url: url.clone(),
                source,
            })?;
        hash.update([0]);
        hash.update(body.replace(base_url, "${base_url}").as_bytes());
    }
    Ok(hex(&hash.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
