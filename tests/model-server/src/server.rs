//! The HTTP server: accepts connections on a loopback port, records every
//! model request and answers it with the next turn of the script.

use crate::body::{PACE, ScriptedBody};
use crate::script::{Fault, Reply, Script, Turn};
use crate::wire::{Call, Resolved, Wire, now_nanos};
use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{CONTENT_LENGTH, CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::fs::File;
use std::io::{self, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A request the server received on a model endpoint.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Recorded {
    /// The wire format, from the path.
    pub wire: Wire,
    /// The request path, without the query.
    pub path: String,
    /// The request headers, names in lower case; repeated headers joined
    /// with ", ".
    pub headers: BTreeMap<String, String>,
    /// The JSON body; a JSON string of the raw text if it was not JSON.
    pub body: Value,
    /// Whether the request asked for a streamed answer (by its wire
    /// format's rules: Ollama streams unless `"stream": false`, Gemini
    /// by its path).
    pub stream: bool,
}

/// How to start a [`ModelServer`] beyond [`ModelServer::start`]'s defaults.
#[derive(Debug, Clone)]
pub struct Options {
    /// The port on 127.0.0.1; 0 (the default) picks an ephemeral one.
    pub port: u16,
    /// Append each [`Recorded`] request to this file as one JSON line, as it
    /// arrives (for tests that run the server as a separate process).
    pub log: Option<PathBuf>,
    /// The pause between the frames of a streamed answer. With a pause
    /// (the default: 1 ms), every event is split in two frames at its
    /// middle byte, so clients meet events split across reads as on a real
    /// network. `None` is a zero-latency model: one frame per event, no
    /// pause (for benchmarks). Non-streamed answers are never paced.
    pub pace: Option<Duration>,
    /// Answer each request with the turn at its position in the
    /// conversation (the model turns it carries: assistant messages, Gemini
    /// `model` contents, runs of Responses output items) instead of the
    /// next turn in order; turns are then never used up. A client that
    /// repeats a request (after a crash, on resume) gets the same answer,
    /// as from a deterministic model.
    pub by_position: bool,
    /// With `by_position`, count the times this text occurs in the
    /// request's conversation (`messages`, Responses' `input`, Gemini's
    /// `contents`) instead of the model turns: put it in the output of each
    /// step that succeeded (and nowhere else), and a step whose result is
    /// missing or failed is asked for again.
    pub position_marker: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            port: 0,
            log: None,
            pace: Some(PACE),
            by_position: false,
            position_marker: None,
        }
    }
}

/// A running scripted model server. Dropping it stops it: the listener
/// closes and open connections (hanging ones included) are dropped.
pub struct ModelServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    accept: JoinHandle<()>,
    // Dropping the sender tells every connection task to stop.
    _shutdown: watch::Sender<()>,
}

struct State {
    turns: VecDeque<Turn>,
    requests: Vec<Recorded>,
    calls_emitted: u64,
    log: Option<File>,
    pace: Option<Duration>,
    by_position: bool,
    position_marker: Option<String>,
    aside: Option<Reply>,
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

impl ModelServer {
    /// Starts serving `script` on 127.0.0.1 (ephemeral port). Runs on the
    /// current tokio runtime.
    pub async fn start(script: Script) -> io::Result<ModelServer> {
        Self::start_with(script, Options::default()).await
    }

    /// Starts serving `script` with `options`. Runs on the current tokio
    /// runtime.
    pub async fn start_with(script: Script, options: Options) -> io::Result<ModelServer> {
        let log = match &options.log {
            Some(path) => Some(File::options().create(true).append(true).open(path)?),
            None => None,
        };
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, options.port)).await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(Mutex::new(State {
            turns: script.turns.into(),
            aside: script.aside,
            requests: Vec::new(),
            calls_emitted: 0,
            log,
            pace: options.pace,
            by_position: options.by_position,
            position_marker: options.position_marker,
        }));
        let (shutdown, watcher) = watch::channel(());
        let accept = tokio::spawn(accept_loop(listener, state.clone(), watcher));
        Ok(ModelServer {
            addr,
            state,
            accept,
            _shutdown: shutdown,
        })
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT/v1` (OpenAI's base URL includes `/v1`).
    pub fn openai_base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// `http://127.0.0.1:PORT` (Anthropic's does not).
    pub fn anthropic_base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT` (Ollama's host is the server root).
    pub fn ollama_host(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/v1` (OpenAI Responses, as Codex's provider
    /// `base_url`, includes `/v1`).
    pub fn responses_base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// `http://127.0.0.1:PORT` (Gemini's, as `GOOGLE_GEMINI_BASE_URL`,
    /// does not include `/v1beta`).
    pub fn gemini_base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every model request received so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.state).requests.clone()
    }

    /// Turns not yet consumed.
    pub fn remaining(&self) -> usize {
        lock(&self.state).turns.len()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

async fn accept_loop(
    listener: TcpListener,
    state: Arc<Mutex<State>>,
    mut shutdown: watch::Receiver<()>,
) {
    loop {
        let accepted = tokio::select! {
            _ = shutdown.changed() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _)) => {
                tokio::spawn(serve(stream, state.clone(), shutdown.clone()));
            }
            // E.g. out of file descriptors: back off rather than spin.
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

async fn serve(stream: TcpStream, state: Arc<Mutex<State>>, mut shutdown: watch::Receiver<()>) {
    let _ = stream.set_nodelay(true);
    let service = service_fn(move |req| handle(req, state.clone()));
    let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
    tokio::select! {
        _ = conn => {}
        _ = shutdown.changed() => {}
    }
}

type Answer = Result<Response<ScriptedBody>, Infallible>;

async fn handle(req: Request<Incoming>, state: Arc<Mutex<State>>) -> Answer {
    let path = req.uri().path().to_owned();
    let Some(wire) = Wire::from_path(&path) else {
        return Ok(plain(
            StatusCode::NOT_FOUND,
            format!("no such endpoint: {path}\n"),
        ));
    };
    if req.method() != Method::POST {
        return Ok(error(wire, 405, "method not allowed: use POST", None));
    }
    let mut headers = BTreeMap::<String, String>::new();
    for (name, value) in req.headers() {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        headers
            .entry(name.as_str().to_owned())
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            })
            .or_insert(value);
    }
    let raw = match req.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => return Ok(error(wire, 400, &format!("could not read body: {e}"), None)),
    };
    let (body, invalid) = match serde_json::from_slice::<Value>(&raw) {
        Ok(v) => (v, None),
        Err(e) => (
            Value::String(String::from_utf8_lossy(&raw).into_owned()),
            Some(e),
        ),
    };
    let stream = wire.wants_stream(&path, &body);
    let model = wire
        .model(&path, &body)
        .unwrap_or("scripted-model")
        .to_owned();
    let offers_tools = wire.offers_tools(&body);
    let choices = body.get("n").and_then(Value::as_u64).unwrap_or(1);
    let include_usage = body
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        .unwrap_or(false);

    // Record, then take the turn, under one lock so turns and requests pair
    // up in order.
    let (seq, action, pace) = {
        let mut st = lock(&state);
        let pace = st.pace;
        let recorded = Recorded {
            wire,
            path,
            headers,
            body,
            stream,
        };
        if let (Some(log), Ok(mut line)) = (&mut st.log, serde_json::to_vec(&recorded)) {
            // One write per line, so a reader never sees half a record.
            // Best effort: a failing log must not change the answer.
            line.push(b'\n');
            let _ = log.write_all(&line);
        }
        let position = match &st.position_marker {
            Some(marker) => wire
                .conversation(&recorded.body)
                .to_string()
                .matches(marker.as_str())
                .count(),
            None => wire.model_turns(&recorded.body),
        };
        st.requests.push(recorded);
        let seq = st.requests.len() as u64;
        if let Some(e) = invalid {
            drop(st);
            let message = format!("request body is not valid JSON: {e}");
            return Ok(error(wire, 400, &message, None));
        }
        let turn = if let Some(aside) = st.aside.clone().filter(|_| !offers_tools) {
            Some(Turn::Reply(aside))
        } else if st.by_position {
            st.turns.get(position).cloned()
        } else {
            st.turns.pop_front()
        };
        let action = match turn {
            None => Action::Exhausted,
            // A streamed request for several choices takes a reply for each:
            // the next turns in order, or (by position) the same one again.
            Some(Turn::Reply(first)) if choices > 1 && stream => {
                let mut replies = vec![first];
                for _ in 1..choices {
                    let next = if st.by_position {
                        Some(Turn::Reply(replies[0].clone()))
                    } else {
                        st.turns.pop_front()
                    };
                    match next {
                        Some(Turn::Reply(reply)) => replies.push(reply),
                        _ => break,
                    }
                }
                let resolved = replies
                    .iter()
                    .map(|r| resolve(r, &mut st, seq, &model, include_usage))
                    .collect();
                Action::Choices(resolved)
            }
            Some(Turn::Reply(r)) => Action::Reply(resolve(&r, &mut st, seq, &model, include_usage)),
            Some(Turn::Fault(Fault::Status {
                code,
                retry_after,
                message,
            })) => Action::Status(code, retry_after, message),
            Some(Turn::Fault(Fault::Truncated { reply })) => {
                Action::Truncated(resolve(&reply, &mut st, seq, &model, include_usage))
            }
            Some(Turn::Fault(Fault::Slow { delay_ms, reply })) => Action::Slow(
                delay_ms,
                resolve(&reply, &mut st, seq, &model, include_usage),
            ),
            Some(Turn::Fault(Fault::Hang)) => Action::Hang,
        };
        (seq, action, pace)
    };

    match action {
        Action::Exhausted => {
            let message = format!("script exhausted: no turn left for request {seq}");
            Ok(error(wire, 500, &message, None))
        }
        Action::Reply(r) => Ok(reply(wire, stream, &r, pace)),
        Action::Choices(rs) => {
            let body = ScriptedBody::stream(wire.choices_events(&rs), pace);
            let resp = response(StatusCode::OK, wire.stream_content_type(), body);
            Ok(with_request_id(resp, wire))
        }
        Action::Status(code, retry_after, message) => {
            let message = message.unwrap_or_else(|| format!("scripted fault: HTTP {code}"));
            Ok(error(wire, code, &message, retry_after))
        }
        Action::Truncated(r) => Ok(truncated(wire, stream, &r, pace)),
        Action::Slow(delay_ms, r) => {
            tokio::time::sleep(Duration::from_millis(delay_ms)).await;
            Ok(reply(wire, stream, &r, pace))
        }
        Action::Hang => std::future::pending().await,
    }
}

/// What to do with a request, decided under the state lock.
enum Action {
    Exhausted,
    Reply(Resolved),
    /// Several choices (OpenAI's `n`), one scripted reply each.
    Choices(Vec<Resolved>),
    Status(u16, Option<u64>, Option<String>),
    Truncated(Resolved),
    Slow(u64, Resolved),
    Hang,
}

/// Settles ids, model and timestamp for `reply`.
fn resolve(
    reply: &Reply,
    st: &mut State,
    seq: u64,
    request_model: &str,
    include_usage: bool,
) -> Resolved {
    let calls = reply
        .tool_calls
        .iter()
        .map(|c| {
            st.calls_emitted += 1;
            Call {
                id: c
                    .id
                    .clone()
                    .unwrap_or_else(|| format!("call_{}", st.calls_emitted)),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
            }
        })
        .collect();
    Resolved {
        seq,
        text: reply.text.clone(),
        calls,
        input_tokens: reply.input_tokens,
        output_tokens: reply.output_tokens,
        model: reply
            .model
            .clone()
            .unwrap_or_else(|| request_model.to_owned()),
        created_nanos: now_nanos(),
        include_usage,
    }
}

fn with_request_id<B>(mut resp: Response<B>, wire: Wire) -> Response<B> {
    if let Some(name) = wire.request_id_header() {
        resp.headers_mut()
            .insert(name, HeaderValue::from_static("req_scripted"));
    }
    resp
}

fn response(status: StatusCode, content_type: &str, body: ScriptedBody) -> Response<ScriptedBody> {
    let mut resp = Response::new(body);
    *resp.status_mut() = status;
    if let Ok(v) = HeaderValue::from_str(content_type) {
        resp.headers_mut().insert(CONTENT_TYPE, v);
    }
    resp
}

fn plain(status: StatusCode, text: String) -> Response<ScriptedBody> {
    response(
        status,
        "text/plain; charset=utf-8",
        ScriptedBody::full(text),
    )
}

fn json(status: StatusCode, value: &Value) -> Response<ScriptedBody> {
    response(
        status,
        "application/json",
        ScriptedBody::full(value.to_string()),
    )
}

fn error(wire: Wire, code: u16, message: &str, retry_after: Option<u64>) -> Response<ScriptedBody> {
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut resp = json(status, &wire.error(code, message));
    if let Some(secs) = retry_after {
        resp.headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from(secs));
    }
    with_request_id(resp, wire)
}

fn reply(wire: Wire, stream: bool, r: &Resolved, pace: Option<Duration>) -> Response<ScriptedBody> {
    let resp = if stream {
        response(
            StatusCode::OK,
            wire.stream_content_type(),
            ScriptedBody::stream(wire.events(r), pace),
        )
    } else {
        json(StatusCode::OK, &wire.body(r))
    };
    with_request_id(resp, wire)
}

/// The answer to `r` cut short. Streaming: about half of the events in
/// full, then the first half of the next one. Non-streaming: the first half
/// of the JSON under a `content-length` of the whole.
fn truncated(
    wire: Wire,
    stream: bool,
    r: &Resolved,
    pace: Option<Duration>,
) -> Response<ScriptedBody> {
    let resp = if stream {
        let events = wire.events(r);
        let keep = events.len() / 2;
        let mut frames: Vec<Bytes> = events[..keep].to_vec();
        let next = &events[keep];
        frames.push(next.slice(..next.len() / 2));
        response(
            StatusCode::OK,
            wire.stream_content_type(),
            ScriptedBody::aborted(frames, pace),
        )
    } else {
        let whole = Bytes::from(wire.body(r).to_string());
        let half = whole.slice(..whole.len() / 2);
        let mut resp = response(
            StatusCode::OK,
            "application/json",
            ScriptedBody::aborted(vec![half], pace),
        );
        resp.headers_mut()
            .insert(CONTENT_LENGTH, HeaderValue::from(whole.len()));
        resp
    };
    with_request_id(resp, wire)
}
