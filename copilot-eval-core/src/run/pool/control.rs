//! The runner's side of its pool: the loopback control endpoint its test processes lease warm
//! runtimes from (the protocol is in [`super::remote`]).
//!
//! The endpoint is axum on `127.0.0.1:0` under a path holding a random secret. It holds every
//! lease it gave, with the client (test process) it gave it to. At each release it first undoes
//! what the lease left on the runtime (the processes its session left running, killed; the
//! runtime's folders reset) and answers what it found ([`super::LeaseEnd`]), which the run
//! reports. A runtime a process releases cleanly, with nothing left to undo, stays with that
//! process (its next run of the same key gets it again) until the process has ended: then the
//! runner calls [`Control::end_client`], which gives the process's runtimes back to the pool
//! when the process ended cleanly, and retires them otherwise (it crashed, was killed at its
//! deadline, or left processes behind), with any it never released.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;

use super::remote::{BindAsk, LeaseAsk, LeaseGiven, McpAsk, McpGiven, ReleaseAsk};
use super::{Lease, Pool};

/// The running control endpoint of a pool; stops serving when dropped.
pub struct Control {
    url: String,
    shared: Arc<Shared>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl std::fmt::Debug for Control {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Control")
            .field("open_leases", &self.open_leases())
            .finish_non_exhaustive()
    }
}

/// A lease given out: the client (test process) holding it, the pool key, the lease.
type Given = (String, (String, Lease));

struct Shared {
    pool: Arc<Pool>,
    /// Lease id -> (client, (pool key, lease)).
    leases: Mutex<HashMap<String, Given>>,
    /// Client -> the runtimes it released cleanly, with their pool keys.
    kept: Mutex<HashMap<String, Vec<(String, Lease)>>>,
}

impl Control {
    /// Serve `pool` on 127.0.0.1.
    ///
    /// # Errors
    /// The port cannot be bound.
    pub async fn serve(pool: Arc<Pool>) -> std::io::Result<Self> {
        let secret = uuid::Uuid::new_v4().simple().to_string();
        let shared = Arc::new(Shared {
            pool,
            leases: Mutex::default(),
            kept: Mutex::default(),
        });
        let app = axum::Router::new()
            .route(&format!("/{secret}/lease"), post(lease))
            .route(&format!("/{secret}/bind"), post(bind))
            .route(&format!("/{secret}/mcp"), post(mcp))
            .route(&format!("/{secret}/release"), post(release))
            .with_state(shared.clone());
        let (port, stop) = super::loopback::serve_loopback(app).await?;
        Ok(Self {
            url: format!("http://127.0.0.1:{port}/{secret}"),
            shared,
            _stop: stop,
        })
    }

    /// The URL a test process gets as `COPILOT_EVAL_POOL_URL`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The pool served.
    pub fn pool(&self) -> &Arc<Pool> {
        &self.shared.pool
    }

    /// The test process `client` has ended: the runtimes it released go back to the pool when
    /// `clean` (it exited by itself and left no process behind), else they are retired, and so
    /// is every runtime it never released, once what its open lease left on it was undone.
    /// Returns the processes those open leases left running (killed).
    pub async fn end_client(&self, client: &str, clean: bool) -> Vec<crate::runtime::Leftover> {
        let kept = self
            .shared
            .kept
            .lock()
            .expect("control lock")
            .remove(client)
            .unwrap_or_default();
        for (_, lease) in &kept {
            lease.release(clean).await;
        }
        let held: Vec<Lease> = {
            let mut leases = self.shared.leases.lock().expect("control lock");
            let ids: Vec<String> = leases
                .iter()
                .filter(|(_, (c, _))| c == client)
                .map(|(id, _)| id.clone())
                .collect();
            ids.iter()
                .filter_map(|id| leases.remove(id).map(|(_, (_, lease))| lease))
                .collect()
        };
        let mut leftovers = Vec::new();
        for lease in &held {
            leftovers.extend(lease.release(false).await.leftovers);
        }
        leftovers
    }

    /// Leases given and not yet released or ended.
    pub fn open_leases(&self) -> usize {
        self.shared.leases.lock().expect("control lock").len()
    }
}

async fn lease(State(shared): State<Arc<Shared>>, Json(ask): Json<LeaseAsk>) -> Response {
    if ask.runtime_path != shared.pool.runtime_path() || !shared.pool.serves(ask.sandbox.as_ref()) {
        return StatusCode::NO_CONTENT.into_response();
    }
    // A runtime this process released earlier, of the same key, first.
    let kept = {
        let mut kept = shared.kept.lock().expect("control lock");
        kept.get_mut(&ask.client).and_then(|leases| {
            let at = leases.iter().position(|(key, _)| *key == ask.key)?;
            Some(leases.remove(at).1)
        })
    };
    let lease = match kept {
        Some(lease) => {
            lease.begin();
            Ok(lease)
        }
        None => shared.pool.lease(&ask.key).await,
    };
    match lease {
        Ok(lease) => {
            let id = uuid::Uuid::new_v4().simple().to_string();
            let given = LeaseGiven {
                lease: id.clone(),
                port: lease.port,
                token: lease.token.clone(),
                pid: lease.pid,
                sandbox: lease.sandbox.clone(),
            };
            shared
                .leases
                .lock()
                .expect("control lock")
                .insert(id, (ask.client, (ask.key, lease)));
            Json(given).into_response()
        }
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

/// The lease the runner holds under `id`, if any.
fn held_lease(shared: &Shared, id: &str) -> Option<Lease> {
    shared
        .leases
        .lock()
        .expect("control lock")
        .get(id)
        .map(|(_, (_, lease))| lease.clone())
}

async fn bind(State(shared): State<Arc<Shared>>, Json(ask): Json<BindAsk>) -> Response {
    let lease = held_lease(&shared, &ask.lease);
    match lease {
        Some(lease) => match lease.bind(ask.endpoint, &ask.base_url).await {
            Ok(()) => StatusCode::OK.into_response(),
            Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
        },
        None => (StatusCode::NOT_FOUND, "no such lease").into_response(),
    }
}

async fn mcp(State(shared): State<Arc<Shared>>, Json(ask): Json<McpAsk>) -> Response {
    let lease = held_lease(&shared, &ask.lease);
    match lease {
        Some(lease) => match lease.relay_mcp(ask.port).await {
            Ok(url) => Json(McpGiven { url }).into_response(),
            Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
        },
        None => (StatusCode::NOT_FOUND, "no such lease").into_response(),
    }
}

async fn release(State(shared): State<Arc<Shared>>, Json(ask): Json<ReleaseAsk>) -> Response {
    let lease = shared
        .leases
        .lock()
        .expect("control lock")
        .remove(&ask.lease);
    let Some((client, (key, lease))) = lease else {
        return Json(super::LeaseEnd::default()).into_response();
    };
    let end = lease.end().await;
    if ask.clean && end.is_clean() {
        // Kept for this process until it has ended (see the module's doc).
        lease.unbind();
        shared
            .kept
            .lock()
            .expect("control lock")
            .entry(client)
            .or_default()
            .push((key, lease));
    } else {
        lease.release(false).await;
    }
    Json(end).into_response()
}
