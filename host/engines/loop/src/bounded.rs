//! Running a step's work against the run's limits: the wall-clock
//! deadline and the interrupt, with a grace period for tool calls.

use std::future::Future;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Why a step was cut short.
pub(crate) enum Cut {
    Timeout,
    Interrupted,
}

/// Runs `work` unless the deadline passes or an interrupt comes first.
pub(crate) async fn bounded<F: Future>(
    work: F,
    deadline: Option<Instant>,
    interrupt: &CancellationToken,
) -> Result<F::Output, Cut> {
    bounded_with_grace(work, deadline, interrupt, Duration::ZERO).await
}

/// Runs `work` unless the deadline passes first; after an interrupt it
/// still has `grace` to finish.
pub(crate) async fn bounded_with_grace<F: Future>(
    work: F,
    deadline: Option<Instant>,
    interrupt: &CancellationToken,
    grace: Duration,
) -> Result<F::Output, Cut> {
    let expiry = async {
        match deadline {
            Some(at) => tokio::time::sleep_until(at.into()).await,
            None => std::future::pending().await,
        }
    };
    let mut work = std::pin::pin!(work);
    let mut expiry = std::pin::pin!(expiry);
    tokio::select! {
        // Work that is done counts, even when time ran out at once.
        biased;
        output = &mut work => return Ok(output),
        () = &mut expiry => return Err(Cut::Timeout),
        () = interrupt.cancelled() => {}
    }
    tokio::select! {
        biased;
        output = work => Ok(output),
        () = expiry => Err(Cut::Timeout),
        () = tokio::time::sleep(grace) => Err(Cut::Interrupted),
    }
}
