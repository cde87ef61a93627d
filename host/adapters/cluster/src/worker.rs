//! The worker side: a session as a Restate virtual object whose `turn`
//! handler runs one user turn of Kaizen's loop.
//!
//! The handler knows nothing of how a turn is set up (providers, plugins,
//! the sandbox): a [`TurnRunner`] does that, given the executor whose
//! steps the handler journals. Before the loop runs, the handler journals
//! where the session's log stood ([`TurnStart`]), so every run of the
//! turn, on whichever worker, starts from the same point.

use crate::restate_journal::serve_steps;
use crate::restate_steps::RestateSteps;
use futures::future::BoxFuture;
use kaizen_protocol::{CancellationToken, RunResult};
use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// One user turn of a session, as a submitter sends it. The worker's own
/// configuration supplies everything else (providers and their keys,
/// plugins, the sandbox); keys never travel with a turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TurnRequest {
    /// The submitter's name for this turn: it tags the turn's events in
    /// the session's stream.
    pub turn: String,
    /// What the user asked.
    pub task: String,
    /// The model (the worker's default when `None`; a session goes on
    /// with its own).
    pub model: Option<String>,
    /// The workspace, as the worker sees it (the session's own when it
    /// goes on).
    pub cwd: Option<String>,
    /// The limit on model calls.
    pub max_cycles: u32,
    /// The spending limit in USD.
    pub budget_usd: f64,
    /// The time limit in seconds.
    pub timeout: Option<f64>,
    /// `--permission-mode`.
    pub permission_mode: Option<String>,
    /// `--allowedTools` rules.
    pub allowed_tools: Vec<String>,
    /// `--disallowedTools` rules.
    pub disallowed_tools: Vec<String>,
    /// The cluster's ingress as the submitter reached it, kept with the
    /// session so that `kaizen approve` and later turns find it.
    #[serde(default)]
    pub cluster: Option<String>,
}

/// Where a session stood when a turn first began, as the journal keeps
/// it: every run of the turn starts from here.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TurnStart {
    /// The number of the session's last log entry; `None` for a session
    /// this turn creates.
    pub seq: Option<u64>,
}

/// A turn running: its result, or why it could not run.
pub type TurnFuture = BoxFuture<'static, Result<RunResult, String>>;

/// Sets up and runs a turn of Kaizen's loop: the worker's configuration
/// around the engine.
pub trait TurnRunner: Send + Sync + 'static {
    /// Where session `id`'s log ends now: `None` when there is no such
    /// session.
    fn log_end(&self, session: &str) -> Result<Option<u64>, String>;

    /// Runs `request` in `session` from `start` with `steps` as the
    /// loop's step executor, until it ends or `interrupt` stops it. What
    /// an earlier run of the same turn left after `start` is to be
    /// dropped first. When `abandoned` is cancelled, the engine has let go
    /// of this run (it suspended the turn, or lost its connection): the
    /// run is to stop where it is, writing nothing more, since the turn
    /// runs again from its journal.
    fn run(
        &self,
        session: String,
        request: TurnRequest,
        start: TurnStart,
        steps: RestateSteps,
        interrupt: CancellationToken,
        abandoned: CancellationToken,
    ) -> TurnFuture;
}

/// The `Session` virtual object (in a module of its own: the SDK's macro
/// adds items of its own, undocumented).
mod object {
    #![allow(missing_docs)]

    use super::{Arc, RestateSteps, TurnRequest, TurnRunner, TurnStart, serve_steps};
    use kaizen_protocol::{CancellationToken, RunResult};
    use restate_sdk::prelude::*;

    /// The `Session` virtual object.
    pub struct Session {
        pub(super) runner: Arc<dyn TurnRunner>,
    }

    #[restate_sdk::object]
    impl Session {
        /// Runs one user turn; the result is the run's, as `kaizen run`
        /// prints it.
        #[handler]
        async fn turn(
            &self,
            ctx: ObjectContext<'_>,
            request: Json<TurnRequest>,
        ) -> Result<Json<RunResult>, HandlerError> {
            let session = ctx.key().to_string();
            let runner = self.runner.clone();
            let id = session.clone();
            let start = ctx
                .run(move || async move {
                    runner
                        .log_end(&id)
                        .map(|seq| Json(TurnStart { seq }))
                        .map_err(|err| TerminalError::new(err).into())
                })
                .name("turn/start")
                .await?
                .into_inner();
            let (steps, requests) = RestateSteps::channel();
            let interrupt = CancellationToken::new();
            // Dropped with this handler, whether it ends or the engine
            // lets go of it (a suspension, a lost connection).
            let abandoned = CancellationToken::new();
            let _let_go = abandoned.clone().drop_guard();
            let run = self.runner.run(
                session,
                request.into_inner(),
                start,
                steps,
                interrupt.clone(),
                abandoned,
            );
            // The loop ends, dropping its executor, and the steps' serving
            // ends with it.
            let (result, ()) = tokio::join!(run, serve_steps(&ctx, requests, &interrupt));
            result
                .map(Json)
                .map_err(|err| TerminalError::new(err).into())
        }
    }
}

use object::Session;

/// How long a turn may go without journaling before Restate asks the
/// worker to suspend it, by default: longer than the slowest model call.
/// A turn waiting on a person's answer is then let go of, and runs again
/// from its journal when the answer comes.
pub const INACTIVITY_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// How long after asking a turn to suspend Restate stops it (a step that
/// is still running is then cut).
pub const ABORT_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// Serves the `Session` object on `listen` (HTTP/2, for the Restate
/// server to call) until the process ends; `inactivity` is the
/// [`INACTIVITY_TIMEOUT`] the service registers with. With
/// `identity_keys` (Restate's `publickeyv1_…` keys), only requests the
/// cluster signed with one of them are served.
pub async fn serve(
    listen: SocketAddr,
    runner: Arc<dyn TurnRunner>,
    inactivity: Duration,
    identity_keys: &[String],
) -> Result<(), String> {
    let session = Session { runner }.into_service_definition().options(
        ServiceOptions::new()
            .inactivity_timeout(inactivity)
            .abort_timeout(ABORT_TIMEOUT),
    );
    let mut builder = Endpoint::builder().bind(session);
    // With keys, every request (discovery too) must carry the cluster's
    // signature; without, anyone who reaches the address is served.
    for key in identity_keys {
        builder = builder
            .identity_key(key)
            .map_err(|err| format!("the identity key `{key}` cannot be used: {err}"))?;
    }
    HttpServer::new(builder.build())
        .listen_and_serve(listen)
        .await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key of the SDK's own tests (a valid ed25519 public key).
    const KEY: &str = "publickeyv1_ChjENKeMvCtRnqG2mrBK1HmPKufgFUc98K8B3ononQvp";

    struct NoTurns;

    impl TurnRunner for NoTurns {
        fn log_end(&self, _: &str) -> Result<Option<u64>, String> {
            Ok(None)
        }

        fn run(
            &self,
            _: String,
            _: TurnRequest,
            _: TurnStart,
            _: RestateSteps,
            _: CancellationToken,
            _: CancellationToken,
        ) -> TurnFuture {
            Box::pin(async { Err("no turns here".to_string()) })
        }
    }

    /// The status of an unsigned discovery request to a worker served
    /// with `keys`.
    async fn discovery_status(keys: &[String]) -> u16 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .unwrap()
            .port();
        let listen: SocketAddr = ([127, 0, 0, 1], port).into();
        let keys = keys.to_vec();
        let server = tokio::spawn(async move {
            serve(listen, Arc::new(NoTurns), INACTIVITY_TIMEOUT, &keys).await
        });
        let client = kaizen_llm::http_client()
            .unwrap()
            .http2_prior_knowledge()
            .build()
            .unwrap();
        for _ in 0..100 {
            let sent = client
                .get(format!("http://{listen}/discover"))
                .header("accept", "application/vnd.restate.endpointmanifest.v4+json")
                .send()
                .await;
            if let Ok(response) = sent {
                server.abort();
                return response.status().as_u16();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the worker never answered");
    }

    #[tokio::test]
    async fn with_an_identity_key_an_unsigned_request_is_refused() {
        assert_eq!(discovery_status(&[]).await, 200);
        assert_eq!(discovery_status(&[KEY.to_string()]).await, 401);
        let bad = serve(
            ([127, 0, 0, 1], 0).into(),
            Arc::new(NoTurns),
            INACTIVITY_TIMEOUT,
            &["not-a-key".to_string()],
        )
        .await;
        assert!(bad.unwrap_err().contains("cannot be used"));
    }
}
