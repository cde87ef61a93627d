//! Retries with exponential backoff and full jitter.
//!
//! A call is retried on 408, 409, 429 and 5xx (529 "overloaded" included),
//! on connection errors, on timeouts and on streams cut short before their
//! final event — the same set the vendors' own SDKs retry. Auth failures and
//! refused requests are not retried: another attempt would fail the same way.
//!
//! A retried stream starts over: text deltas the failed attempt already
//! emitted through the [`EventSink`] are emitted again by the next attempt.
//! The loop only acts on the final [`Response`], so this affects display, not
//! the conversation.

use crate::types::{EventSink, LlmError, LlmErrorKind, Response, StreamEvent};
use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

/// How often and how patiently a call is retried.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in total, the first included (at least 1).
    pub max_attempts: u32,
    /// The backoff ceiling of the first retry; it doubles with each retry.
    pub base_delay: Duration,
    /// The largest backoff ceiling.
    pub max_delay: Duration,
    /// The longest `retry-after` honoured; longer requests are cut to this.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// No retries: one attempt.
    pub fn none() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// The backoff ceiling before retry number `retry` (1-based):
    /// `base_delay * 2^(retry-1)`, capped at `max_delay`.
    pub fn backoff_ceiling(&self, retry: u32) -> Duration {
        let factor = 2u32.saturating_pow(retry.saturating_sub(1));
        self.base_delay
            .checked_mul(factor)
            .map_or(self.max_delay, |d| d.min(self.max_delay))
    }

    /// A full-jitter delay: uniform in `[0, backoff_ceiling(retry)]`, so
    /// clients that failed together do not retry together.
    pub fn backoff(&self, retry: u32) -> Duration {
        let ceiling = self.backoff_ceiling(retry);
        let nanos = u64::try_from(ceiling.as_nanos()).unwrap_or(u64::MAX);
        if nanos == 0 {
            return Duration::ZERO;
        }
        Duration::from_nanos(random_u64() % nanos.saturating_add(1))
    }

    /// The wait before the next attempt: the server's `retry-after` when it
    /// gave one (capped at `max_retry_after`), the jittered backoff otherwise.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        match retry_after {
            Some(wait) => wait.min(self.max_retry_after),
            None => self.backoff(retry),
        }
    }
}

/// A random number without a dependency: `RandomState` is seeded from the
/// OS per instance, which is all the jitter needs.
fn random_u64() -> u64 {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(0x9e37_79b9_7f4a_7c15);
    hasher.finish()
}

/// Parses the `retry-after` header's delay-seconds form (integer or
/// decimal). The HTTP-date form is not parsed: the caller falls back to
/// backoff, which is what the vendors' APIs make unnecessary anyway.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let seconds: f64 = value.trim().parse().ok()?;
    if seconds.is_finite() && seconds >= 0.0 {
        Some(Duration::from_secs_f64(seconds.min(86_400.0)))
    } else {
        None
    }
}

/// Reads `retry-after-ms` (sent by OpenAI) or `retry-after` from headers.
pub(crate) fn retry_after_from(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms.min(86_400_000.0) / 1000.0));
    }
    text("retry-after").and_then(parse_retry_after)
}

/// Whether an HTTP status is worth another attempt.
pub fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429) || status >= 500
}

/// How one attempt failed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AttemptError {
    /// The category the final error will have.
    pub kind: LlmErrorKind,
    /// What happened (never containing a key).
    pub message: String,
    /// Whether another attempt may succeed.
    pub retryable: bool,
    /// How long the server asked us to wait.
    pub retry_after: Option<Duration>,
}

impl AttemptError {
    /// A failure another attempt may fix.
    pub fn transient(kind: LlmErrorKind, message: impl Into<String>) -> Self {
        AttemptError {
            kind,
            message: message.into(),
            retryable: true,
            retry_after: None,
        }
    }

    /// A failure another attempt would repeat.
    pub fn fatal(kind: LlmErrorKind, message: impl Into<String>) -> Self {
        AttemptError {
            kind,
            message: message.into(),
            retryable: false,
            retry_after: None,
        }
    }
}

/// Runs `attempt(n)` for n = 1.. until it succeeds, fails for good, or the
/// policy's attempts are used up, reporting each retry through `events`.
pub(crate) async fn with_retries<F, Fut>(
    policy: &RetryPolicy,
    events: EventSink<'_>,
    mut attempt: F,
) -> Result<Response, LlmError>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<Response, AttemptError>>,
{
    let max_attempts = policy.max_attempts.max(1);
    let mut number = 1;
    loop {
        let error = match attempt(number).await {
            Ok(response) => return Ok(response),
            Err(error) => error,
        };
        if !error.retryable || number >= max_attempts {
            let message = if number > 1 {
                format!("{} (after {number} attempts)", error.message)
            } else {
                error.message
            };
            return Err(LlmError {
                kind: error.kind,
                message,
            });
        }
        let wait = policy.delay(number, error.retry_after);
        tracing::warn!(attempt = number, wait_ms = wait.as_millis() as u64, error = %error.message, "model call failed; retrying");
        number += 1;
        events(StreamEvent::Retrying {
            attempt: number,
            error: error.message,
        });
        tokio::time::sleep(wait).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_parses_seconds() {
        assert_eq!(parse_retry_after("1"), Some(Duration::from_secs(1)));
        assert_eq!(
            parse_retry_after(" 2.5 "),
            Some(Duration::from_millis(2500))
        );
        assert_eq!(parse_retry_after("-1"), None);
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("NaN"), None);
    }

    #[test]
    fn retry_after_ms_wins() {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert("retry-after", "3".parse().expect("header"));
        assert_eq!(retry_after_from(&headers), Some(Duration::from_secs(3)));
        headers.insert("retry-after-ms", "250".parse().expect("header"));
        assert_eq!(retry_after_from(&headers), Some(Duration::from_millis(250)));
    }

    #[test]
    fn backoff_is_bounded_and_grows() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.backoff_ceiling(1), Duration::from_millis(500));
        assert_eq!(policy.backoff_ceiling(2), Duration::from_secs(1));
        assert_eq!(policy.backoff_ceiling(3), Duration::from_secs(2));
        assert_eq!(policy.backoff_ceiling(40), Duration::from_secs(30));
        for retry in 1..50 {
            assert!(policy.backoff(retry) <= policy.backoff_ceiling(retry));
        }
        let zero = RetryPolicy {
            base_delay: Duration::ZERO,
            ..RetryPolicy::default()
        };
        assert_eq!(zero.backoff(3), Duration::ZERO);
    }

    #[test]
    fn retry_after_is_capped() {
        let policy = RetryPolicy::default();
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(600))),
            Duration::from_secs(60)
        );
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(1))),
            Duration::from_secs(1)
        );
    }

    #[test]
    fn statuses() {
        for status in [408, 409, 429, 500, 502, 503, 504, 529] {
            assert!(is_retryable_status(status), "{status}");
        }
        for status in [400, 401, 403, 404, 422] {
            assert!(!is_retryable_status(status), "{status}");
        }
    }

    fn response() -> Response {
        Response {
            content: vec![],
            usage: Default::default(),
            stop_reason: crate::StopReason::EndTurn,
            model: "m".into(),
        }
    }

    #[tokio::test]
    async fn retries_until_success_and_reports() {
        let policy = RetryPolicy {
            base_delay: Duration::from_millis(1),
            ..RetryPolicy::default()
        };
        let seen = std::sync::Mutex::new(Vec::new());
        let sink = |event: StreamEvent| seen.lock().expect("lock").push(event);
        let result = with_retries(&policy, &sink, |n| async move {
            if n < 3 {
                Err(AttemptError::transient(LlmErrorKind::Server, "boom"))
            } else {
                Ok(response())
            }
        })
        .await;
        assert!(result.is_ok());
        let seen = seen.into_inner().expect("lock");
        assert_eq!(
            seen,
            vec![
                StreamEvent::Retrying {
                    attempt: 2,
                    error: "boom".into()
                },
                StreamEvent::Retrying {
                    attempt: 3,
                    error: "boom".into()
                },
            ]
        );
    }

    #[tokio::test]
    async fn gives_up_after_max_attempts_and_on_fatal() {
        let policy = RetryPolicy {
            base_delay: Duration::ZERO,
            ..RetryPolicy::default()
        };
        let calls = std::sync::atomic::AtomicU32::new(0);
        let sink = |_: StreamEvent| {};
        let error = with_retries(&policy, &sink, |_| {
            calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async { Err(AttemptError::transient(LlmErrorKind::Server, "down")) }
        })
        .await
        .expect_err("fails");
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 4);
        assert_eq!(error.kind, LlmErrorKind::Server);
        assert_eq!(error.message, "down (after 4 attempts)");

        let calls = std::sync::atomic::AtomicU32::new(0);
        let error = with_retries(&policy, &sink, |_| {
            calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async { Err(AttemptError::fatal(LlmErrorKind::Auth, "no")) }
        })
        .await
        .expect_err("fails");
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert_eq!(error.message, "no");
    }
}
