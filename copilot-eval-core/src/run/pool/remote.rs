//! A test process's side of the runner's pool: leasing a warm runtime from the
//! `cargo copilot-eval` runner that started the process, over the runner's loopback control
//! endpoint (served by `pool::control`, feature `runner`).
//!
//! The runner gives each test process [`ENV_POOL_URL`] (`http://127.0.0.1:<port>/<secret>`)
//! and [`ENV_POOL_CLIENT`] (the process's own id). Four JSON requests, each `POST`:
//!
//! | path | body | answer |
//! |---|---|---|
//! | `/lease` | `client`, `key` (the pool key), `runtime_path`, `sandbox` (the run's policy) | `200` `lease`, `port`, `token`, `pid`; `204`: the runner pools another runtime executable, or its runtimes' sandbox does not serve the run's; `500`: text |
//! | `/bind` | `lease`, `endpoint` (the run's 127.0.0.1 port), `base_url` (its model server) | `200`; `404` unknown lease |
//! | `/mcp` | `lease`, `port` (an MCP mock's 127.0.0.1 port) | `200` `url`: the pool's MCP relay for it until the lease ends (`run/pool/mcp_relay.rs`); `404` unknown lease; `500`: text |
//! | `/release` | `lease`, `clean` | `200` with what the lease left on the runtime, undone (`leftovers`: `pid`, `command`; `errors`) |
//!
//! A lease the process never releases (it crashed or was killed) is retired by the runner when
//! the process has ended.

use serde::{Deserialize, Serialize};

use super::{Binding, Lease, PoolError};

/// Environment variable the runner sets to its control endpoint's URL.
pub const ENV_POOL_URL: &str = "COPILOT_EVAL_POOL_URL";
/// Environment variable the runner sets to the test process's id in its pool.
pub const ENV_POOL_CLIENT: &str = "COPILOT_EVAL_POOL_CLIENT";

/// The runner's pool, as a test process reaches it.
#[derive(Clone, Debug)]
pub struct RunnerPool {
    url: String,
    client: String,
    http: reqwest::Client,
}

/// Body of `/lease`.
#[derive(Serialize, Deserialize, Debug)]
pub(crate) struct LeaseAsk {
    pub(crate) client: String,
    pub(crate) key: String,
    pub(crate) runtime_path: std::path::PathBuf,
    /// The run's own sandbox policy (`None`: unconfined); the runner gives no runtime
    /// (`204`) when its pool's domain does not serve it ([`super::Pool::serves`]).
    #[serde(default)]
    pub(crate) sandbox: Option<crate::run::sandbox::Policy>,
}

/// Answer of `/lease`.
#[derive(Serialize, Deserialize, Debug)]
pub(crate) struct LeaseGiven {
    pub(crate) lease: String,
    pub(crate) port: u16,
    pub(crate) token: String,
    pub(crate) pid: u32,
    /// The Landlock policy the runtime runs under (`None`: unconfined).
    #[serde(default)]
    pub(crate) sandbox: Option<crate::run::sandbox::Policy>,
}

/// Body of `/bind`.
#[derive(Serialize, Deserialize, Debug)]
pub(crate) struct BindAsk {
    pub(crate) lease: String,
    pub(crate) endpoint: u16,
    pub(crate) base_url: String,
}

/// Body of `/mcp`.
#[derive(Serialize, Deserialize, Debug)]
pub(crate) struct McpAsk {
    pub(crate) lease: String,
    pub(crate) port: u16,
}

/// Answer of `/mcp`.
#[derive(Serialize, Deserialize, Debug)]
pub(crate) struct McpGiven {
    pub(crate) url: String,
}

/// Body of `/release`.
#[derive(Serialize, Deserialize, Debug)]
pub(crate) struct ReleaseAsk {
    pub(crate) lease: String,
    pub(crate) clean: bool,
}

impl RunnerPool {
    /// The runner's pool named by [`ENV_POOL_URL`] and [`ENV_POOL_CLIENT`]; `None` when
    /// either is unset or empty (not under the runner, or the runner runs `--fresh-runtime`).
    pub fn from_env() -> Option<Self> {
        let url = std::env::var(ENV_POOL_URL).ok().filter(|v| !v.is_empty())?;
        let client = std::env::var(ENV_POOL_CLIENT)
            .ok()
            .filter(|v| !v.is_empty())?;
        Some(Self::new(url, client))
    }

    /// The pool at control URL `url`, for client id `client`.
    ///
    /// Panics when the process's loopback HTTP client cannot be built (its TLS backend did not
    /// start), as `reqwest::Client::new` does.
    pub fn new(url: impl Into<String>, client: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            client: client.into(),
            http: super::loopback::loopback_client().unwrap_or_else(|e| panic!("{e}")),
        }
    }

    /// The control endpoint's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub(super) async fn lease(
        &self,
        key: &str,
        runtime_path: &std::path::Path,
        sandbox: Option<&crate::run::sandbox::Policy>,
    ) -> Result<Option<Lease>, PoolError> {
        let ask = LeaseAsk {
            client: self.client.clone(),
            key: key.to_owned(),
            runtime_path: runtime_path.to_path_buf(),
            sandbox: sandbox.cloned(),
        };
        let answer = post(&self.http, &self.url, "lease", &ask).await?;
        if answer.0 == 204 {
            return Ok(None);
        }
        let given: LeaseGiven = serde_json::from_slice(&answer.1).map_err(|e| {
            PoolError::Runner(format!(
                "the runner's pool answered a lease with something else: {e}: {}",
                String::from_utf8_lossy(&answer.1)
            ))
        })?;
        Ok(Some(Lease {
            port: given.port,
            token: given.token,
            pid: given.pid,
            sandbox: given.sandbox,
            binding: Binding::Runner(RunnerLease {
                pool: self.clone(),
                lease: given.lease,
            }),
        }))
    }
}

/// A lease of the runner's pool.
#[derive(Clone, Debug)]
pub(super) struct RunnerLease {
    pool: RunnerPool,
    lease: String,
}

impl RunnerLease {
    pub(super) async fn bind(&self, endpoint: u16, base_url: &str) -> Result<(), PoolError> {
        let ask = BindAsk {
            lease: self.lease.clone(),
            endpoint,
            base_url: base_url.to_owned(),
        };
        post(&self.pool.http, &self.pool.url, "bind", &ask)
            .await
            .map(drop)
    }

    pub(super) async fn relay_mcp(&self, port: u16) -> Result<String, PoolError> {
        let ask = McpAsk {
            lease: self.lease.clone(),
            port,
        };
        let (_, body) = post(&self.pool.http, &self.pool.url, "mcp", &ask).await?;
        let given: McpGiven = serde_json::from_slice(&body).map_err(|e| {
            PoolError::Runner(format!(
                "the runner's pool answered an MCP relay request with something else: {e}: {}",
                String::from_utf8_lossy(&body)
            ))
        })?;
        Ok(given.url)
    }

    pub(super) async fn release(&self, clean: bool) -> super::LeaseEnd {
        let ask = ReleaseAsk {
            lease: self.lease.clone(),
            clean,
        };
        // A release that does not arrive retires the runtime when this process ends; what the
        // lease left on it is then undone unseen by this run, which says so.
        let unseen = |e: String| super::LeaseEnd {
            leftovers: Vec::new(),
            errors: vec![format!(
                "the runner's pool did not answer the release of the pooled runtime, so what the session left on it is not known: {e}"
            )],
        };
        match post(&self.pool.http, &self.pool.url, "release", &ask).await {
            Ok((_, body)) => serde_json::from_slice(&body)
                .unwrap_or_else(|e| unseen(format!("{e}: {}", String::from_utf8_lossy(&body)))),
            Err(e) => unseen(e.to_string()),
        }
    }
}

/// POST `body` as JSON to `<url>/<path>`: the status (2xx only) and the answer's body.
async fn post(
    http: &reqwest::Client,
    url: &str,
    path: &str,
    body: &impl Serialize,
) -> Result<(u16, Vec<u8>), PoolError> {
    let target = format!("{url}/{path}");
    let answer = http
        .post(&target)
        .header("content-type", "application/json")
        .body(serde_json::to_vec(body).expect("a control request serialises"))
        .send()
        .await
        .map_err(|e| {
            PoolError::Runner(format!("cannot reach the runner's pool at {target}: {e}"))
        })?;
    let status = answer.status().as_u16();
    let bytes = answer.bytes().await.map_err(|e| {
        PoolError::Runner(format!(
            "cannot read the runner's pool's answer at {target}: {e}"
        ))
    })?;
    if !(200..300).contains(&status) {
        return Err(PoolError::Runner(format!(
            "the runner's pool at {target} answered {status}: {}",
            String::from_utf8_lossy(&bytes)
        )));
    }
    Ok((status, bytes.to_vec()))
}
