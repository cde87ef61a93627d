//! A scripted model server for Kaizen's tests.
//!
//! A real HTTP/1.1 server on a loopback port that speaks the real wire
//! formats of OpenAI Chat Completions, Anthropic Messages, Ollama chat,
//! OpenAI Responses and Gemini, streaming and not, so that Kaizen's
//! production HTTP code (and third-party agent CLIs) is what gets
//! exercised. It is driven by a [`Script`]: every request to a model
//! endpoint, whatever its wire format, consumes the next [`Turn`], a
//! [`Reply`] or a [`Fault`]. Tests then inspect what the model was sent with
//! [`ModelServer::requests`].
//!
//! ```no_run
//! use kaizen_model_server::{ModelServer, Reply, Script};
//! # async fn demo() -> std::io::Result<()> {
//! let server = ModelServer::start(
//!     Script::new()
//!         .reply(Reply::tool("read", r#"{"path":"a.txt"}"#).with_usage(12, 3))
//!         .reply(Reply::text("done")),
//! )
//! .await?;
//! // ... point the client at server.openai_base_url() and run it ...
//! assert_eq!(server.remaining(), 0);
//! assert_eq!(server.requests()[0].body["model"], "gpt-test");
//! # Ok(()) }
//! ```
//!
//! Endpoints: `POST /v1/chat/completions` (OpenAI), `POST /v1/messages`
//! (Anthropic), `POST /api/chat` (Ollama), `POST /v1/responses` (OpenAI
//! Responses), `POST /v1beta/models/{model}:generateContent` and
//! `:streamGenerateContent` (Gemini). Queries are ignored in routing
//! (`/v1/messages?beta=true` is Anthropic). Other paths answer 404 and
//! other methods 405, without consuming a turn. A body that is not JSON is
//! recorded (as a JSON string) and answered 400 without consuming a turn.
//! When the script is exhausted, requests are answered 500 with an error
//! saying "script exhausted".

#![warn(missing_docs)]
#![deny(clippy::unwrap_used)]

mod body;
mod script;
mod server;
mod wire;

pub use script::{Fault, Reply, Script, ScriptedCall, Turn};
pub use server::{ModelServer, Options, Recorded};
pub use wire::Wire;
