//! `kaizen worker`: serves sessions' turns for a Restate cluster
//! ([`kaizen_app::worker`]), each run on Kaizen's loop here as `kaizen
//! run` would run it, with this machine's configuration, provider keys,
//! plugins and sandbox.

use kaizen_app::worker::{Serving, Worker};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// `kaizen worker`'s arguments.
#[derive(clap::Args)]
pub struct WorkerArgs {
    /// Where to serve the engine's calls (HTTP/2).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9080")]
    listen: SocketAddr,
    /// Register with the cluster's admin API at URL first (e.g.
    /// http://host:9070).
    #[arg(long, value_name = "URL")]
    register: Option<String>,
    /// The address the cluster reaches the workers at, when it is not
    /// --listen's (a load balancer in front of them): registered instead.
    #[arg(long, value_name = "URL", requires = "register")]
    advertise: Option<String>,
    /// Seconds a turn may go without a step before the cluster asks the
    /// worker to suspend it: a turn waiting on an answer is then let go of
    /// until the answer comes (registered with --register).
    #[arg(long, value_name = "SECS", default_value_t = 1800)]
    suspend_after: u64,
    /// The cluster's request-identity public key (`publickeyv1_…`, as
    /// `restate-server` prints for its signing key; repeatable): only
    /// requests it signed are served. Without one, anyone who can reach
    /// --listen can start turns with this worker's keys.
    #[arg(
        long,
        value_name = "KEY",
        env = "KAIZEN_WORKER_IDENTITY_KEYS",
        value_delimiter = ','
    )]
    identity_key: Vec<String>,
    /// A directory turns may work in (repeatable): a turn whose workspace
    /// is not inside one is refused. Default: the directory the worker
    /// was started in.
    #[arg(long, value_name = "DIR")]
    root: Vec<PathBuf>,
}

/// Serves turns until the process ends; with `--register` (the
/// cluster's admin address), registers itself there first.
pub async fn serve(args: WorkerArgs) -> u8 {
    let worker = match Worker::new(&args.root, crate::answerers::to_stderr()) {
        Ok(worker) => worker,
        Err(err) => {
            eprintln!("kaizen: {err}");
            return 2;
        }
    };
    if args.identity_key.is_empty() {
        eprintln!(
            "kaizen: warning: requests to {} are not authenticated: anyone who reaches it can start turns with this worker's keys; give the cluster's request-identity key with --identity-key",
            args.listen
        );
    }
    let admin = args.register.clone().unwrap_or_default();
    let serving = Serving {
        listen: args.listen,
        register: args.register,
        advertise: args.advertise,
        suspend_after: Duration::from_secs(args.suspend_after),
        identity_keys: args.identity_key,
    };
    let served = worker.serve(serving, |uri| {
        eprintln!("kaizen: worker at {uri} registered with {admin}");
    });
    match served.await {
        Ok(()) => 0,
        Err(err) => {
            eprintln!("kaizen: {err}");
            err.exit_code()
        }
    }
}
