//! Ctrl-C and SIGTERM while a task runs.

use kaizen_protocol::CancellationToken;

/// First Ctrl-C or SIGTERM: end the run gracefully. Second Ctrl-C: exit now.
pub async fn watch(interrupt: CancellationToken) {
    let mut hits = 0u32;
    while wait_for_signal().await {
        hits += 1;
        if hits >= 2 {
            eprintln!("\nkaizen: interrupted again; stopping now");
            std::process::exit(130);
        }
        eprintln!(
            "\nkaizen: interrupting: finishing the current step (press Ctrl-C again to stop at once)…"
        );
        interrupt.cancel();
    }
}

/// Waits for SIGINT or SIGTERM; false when signals cannot be watched.
async fn wait_for_signal() -> bool {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return false;
    };
    tokio::select! {
        _ = int.recv() => true,
        _ = term.recv() => true,
    }
}
