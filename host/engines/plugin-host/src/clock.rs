//! The clock that bounds a call: the guest's time, without the time spent
//! waiting on the host's behalf. Capabilities stop it while they wait (for
//! a person, a program, a model), so it sits below them.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Measures the guest's share of a call: wall time minus time spent
/// waiting on the person at the terminal. Shared with the call's watchdog,
/// which stops calls stuck in a host wait (an HTTP response that never
/// comes) where the epoch deadline cannot reach them.
pub(crate) struct CallClock {
    shared: Arc<ClockShared>,
    /// Set when the limit stopped the call.
    pub exceeded: bool,
}

/// The part of a [`CallClock`] the watchdog reads.
pub(crate) struct ClockShared {
    limit: Duration,
    times: Mutex<ClockTimes>,
}

struct ClockTimes {
    started: Instant,
    excluded: Duration,
    waiting_since: Option<Instant>,
}

impl CallClock {
    /// A clock for calls of at most `limit`.
    pub fn new(limit: Duration) -> Self {
        Self {
            shared: Arc::new(ClockShared {
                limit,
                times: Mutex::new(ClockTimes {
                    started: Instant::now(),
                    excluded: Duration::ZERO,
                    waiting_since: None,
                }),
            }),
            exceeded: false,
        }
    }

    /// Starts timing a new call.
    pub fn restart(&mut self) {
        let mut times = self.shared.lock();
        times.started = Instant::now();
        times.excluded = Duration::ZERO;
        times.waiting_since = None;
        self.exceeded = false;
    }

    /// From now until [`Self::end_wait`], time does not count.
    pub fn begin_wait(&self) {
        self.shared.lock().waiting_since = Some(Instant::now());
    }

    /// Ends a wait begun with [`Self::begin_wait`].
    pub fn end_wait(&self) {
        let mut times = self.shared.lock();
        if let Some(since) = times.waiting_since.take() {
            times.excluded += since.elapsed();
        }
    }

    /// The limit.
    pub fn limit(&self) -> Duration {
        self.shared.limit
    }

    /// Time left, or `None` once the limit is spent.
    pub fn remaining(&self) -> Option<Duration> {
        self.shared.remaining()
    }

    /// A handle for the watchdog.
    pub fn shared(&self) -> Arc<ClockShared> {
        self.shared.clone()
    }
}

impl ClockShared {
    fn lock(&self) -> std::sync::MutexGuard<'_, ClockTimes> {
        self.times.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The limit.
    pub fn limit(&self) -> Duration {
        self.limit
    }

    /// Time left, or `None` once the limit is spent. While a wait is in
    /// progress the clock stands still.
    pub fn remaining(&self) -> Option<Duration> {
        let times = self.lock();
        let now = times.waiting_since.unwrap_or_else(Instant::now);
        let used = now
            .saturating_duration_since(times.started)
            .saturating_sub(times.excluded);
        self.limit.checked_sub(used).filter(|left| !left.is_zero())
    }
}
