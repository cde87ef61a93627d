//! The submitting side: sends a session's turn to the engine, waits for
//! its result, and cancels it.
//!
//! Turns go in through Restate's ingress (`POST /Session/{id}/turn/send`,
//! then `GET /restate/invocation/{id}/attach` for the result, which may
//! be asked again after a dropped connection); cancelling goes through
//! its admin API (`PATCH /invocations/{id}/cancel`). A question a turn
//! waits on is answered by resolving its awakeable
//! (`POST /restate/awakeables/{id}/resolve`).

use crate::asks::Answer;
use crate::worker::TurnRequest;
use kaizen_protocol::RunResult;
use serde_json::Value;
use std::time::Duration;

/// A Restate cluster, by its ingress and admin addresses.
#[derive(Debug, Clone)]
pub struct Cluster {
    ingress: String,
    admin: String,
    http: reqwest::Client,
}

/// A turn the engine accepted.
#[derive(Debug, Clone, PartialEq)]
pub struct Submitted {
    /// The engine's id of the invocation running the turn.
    pub invocation: String,
}

impl Cluster {
    /// The cluster whose ingress is at `ingress` (`http://host:8080`) and
    /// admin API at `admin` (`http://host:9070`); fails only when no HTTP
    /// client can be set up.
    pub fn new(ingress: &str, admin: &str) -> Result<Self, String> {
        Ok(Self {
            ingress: ingress.trim_end_matches('/').to_string(),
            admin: admin.trim_end_matches('/').to_string(),
            http: http_client()?,
        })
    }

    /// The admin address that goes with `ingress` when none is given:
    /// the same host on Restate's admin port, 9070.
    pub fn default_admin(ingress: &str) -> String {
        let url = ingress.trim_end_matches('/');
        let (scheme, rest) = url.split_once("://").unwrap_or(("http", url));
        let host = rest.split('/').next().unwrap_or(rest);
        let host = match host.rsplit_once(':') {
            Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
            _ => host,
        };
        format!("{scheme}://{host}:9070")
    }

    /// Sends `request` as a turn of session `session`; the engine runs
    /// it on a worker (after the session's turn in progress, if any).
    pub async fn submit(&self, session: &str, request: &TurnRequest) -> Result<Submitted, String> {
        let url = format!("{}/Session/{session}/turn/send", self.ingress);
        let answer = self
            .json(self.http.post(&url).json(request))
            .await
            .map_err(Failure::into_message)?;
        answer["invocationId"]
            .as_str()
            .map(|id| Submitted {
                invocation: id.to_string(),
            })
            .ok_or_else(|| format!("the cluster's answer to {url} has no invocation id: {answer}"))
    }

    /// The turn's result, once it has ended. A dropped connection is
    /// asked again; a turn the engine gave up on is an error.
    pub async fn result(&self, turn: &Submitted) -> Result<RunResult, String> {
        let url = format!(
            "{}/restate/invocation/{}/attach",
            self.ingress, turn.invocation
        );
        let mut failures = 0;
        loop {
            match self.json(self.http.get(&url)).await {
                Ok(value) => {
                    return serde_json::from_value(value.clone()).map_err(|err| {
                        format!("the turn's result is not Kaizen's ({err}): {value}")
                    });
                }
                Err(Failure::Unreachable(_)) if failures < 5 => {
                    failures += 1;
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                Err(failure) => return Err(failure.into_message()),
            }
        }
    }

    /// Asks the engine to cancel the turn: the loop ends as interrupted
    /// at its next step.
    pub async fn cancel(&self, turn: &Submitted) -> Result<(), String> {
        let url = format!("{}/invocations/{}/cancel", self.admin, turn.invocation);
        match self.http.patch(&url).send().await {
            // Already ended: nothing to cancel.
            Ok(answer) if answer.status().is_success() || answer.status().as_u16() == 409 => Ok(()),
            Ok(answer) => Err(format!(
                "the cluster refused to cancel {}: {}",
                turn.invocation,
                answer.status()
            )),
            Err(err) => Err(unreachable(&url, err)),
        }
    }

    /// Answers the question a turn waits on under `id` (see
    /// [`crate::asks`]). An answer to a question already answered is
    /// dropped by the engine.
    pub async fn answer(&self, id: &str, answer: &Answer) -> Result<(), String> {
        let url = format!("{}/restate/awakeables/{id}/resolve", self.ingress);
        accepted(self.http.post(&url).json(answer), &url)
            .await
            .map_err(|why| format!("answering {id}: {why}"))
    }

    /// The JSON body of a successful answer to `request`.
    async fn json(&self, request: reqwest::RequestBuilder) -> Result<Value, Failure> {
        let lost = |err| Failure::Unreachable(unreachable(&self.ingress, err));
        let answer = request.send().await.map_err(lost)?;
        let status = answer.status();
        let body = answer.text().await.map_err(lost)?;
        if !status.is_success() {
            let why = serde_json::from_str::<Value>(&body)
                .ok()
                .and_then(|v| v["message"].as_str().map(str::to_string))
                .unwrap_or(body);
            return Err(Failure::Answered(format!(
                "the cluster answered {status}: {why}"
            )));
        }
        serde_json::from_str(&body).map_err(|err| {
            Failure::Answered(format!("the cluster's answer is not JSON ({err}): {body}"))
        })
    }
}

/// Why a request to the cluster failed.
enum Failure {
    /// It did not reach the cluster, or its answer was cut: worth asking
    /// again.
    Unreachable(String),
    /// The cluster answered, with an error or what is not JSON.
    Answered(String),
}

impl Failure {
    fn into_message(self) -> String {
        match self {
            Self::Unreachable(message) | Self::Answered(message) => message,
        }
    }
}

/// Registers the worker at `uri` with the cluster whose admin API is at
/// `admin`, so the engine sends it turns. Registering it again is fine.
pub async fn register(admin: &str, uri: &str) -> Result<(), String> {
    let url = format!("{}/deployments", admin.trim_end_matches('/'));
    let request = http_client()?
        .post(&url)
        .json(&serde_json::json!({ "uri": uri }));
    accepted(request, &url)
        .await
        .map_err(|why| format!("registering the worker at {uri} with {admin}: {why}"))
}

/// Sends `request` to `url`: `Ok` when the cluster accepted it, else what
/// it answered (its status and body), or why it could not be reached.
async fn accepted(request: reqwest::RequestBuilder, url: &str) -> Result<(), String> {
    let answer = request.send().await.map_err(|err| unreachable(url, err))?;
    let status = answer.status();
    if status.is_success() {
        return Ok(());
    }
    let body = answer.text().await.unwrap_or_default();
    Err(format!("the cluster answered {status}: {body}"))
}

/// What to say when `url` could not be reached.
fn unreachable(url: &str, err: reqwest::Error) -> String {
    format!("cannot reach the cluster at {url}: {err}")
}

/// An HTTP client with Kaizen's TLS ([`kaizen_llm::http_client`]).
fn http_client() -> Result<reqwest::Client, String> {
    kaizen_llm::http_client()?
        .build()
        .map_err(|e| format!("setting up the HTTP client: {e}"))
}

#[cfg(test)]
mod tests {
    use super::Cluster;

    #[test]
    fn the_admin_address_is_the_ingress_host_on_port_9070() {
        assert_eq!(
            Cluster::default_admin("http://127.0.0.1:8080/"),
            "http://127.0.0.1:9070"
        );
        assert_eq!(
            Cluster::default_admin("https://restate.example"),
            "https://restate.example:9070"
        );
    }
}
