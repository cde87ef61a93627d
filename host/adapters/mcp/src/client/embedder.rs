//! Servers that live in the program driving the session (Claude's Agent
//! SDKs' in-process servers, `type: "sdk"`): their JSON-RPC messages go
//! through that program's control channel, each message sent and its
//! answer received by an [`EmbedderLink`] the front end provides.

use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use tokio::sync::mpsc;

/// The answer to one message: the JSON-RPC reply, if the message was a
/// request; or why the program could not be reached.
pub type Exchange<'a> =
    Pin<Box<dyn Future<Output = Result<Option<serde_json::Value>, String>> + Send + 'a>>;

/// The program's side of its in-process servers.
pub trait EmbedderLink: Send + Sync {
    /// Sends `message` to the program's server `server` and waits for its
    /// reply (`None` for a notification).
    fn exchange(&self, server: &str, message: serde_json::Value) -> Exchange<'_>;
}

/// A server in the embedding program.
#[derive(Clone)]
pub struct EmbedderServer {
    /// How its messages reach it.
    pub link: Arc<dyn EmbedderLink>,
}

impl std::fmt::Debug for EmbedderServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EmbedderServer")
    }
}

/// rmcp's transport over the link: each message sent is exchanged, and
/// its reply is what the transport receives next.
pub(crate) struct LinkTransport {
    link: Arc<dyn EmbedderLink>,
    server: String,
    replies: mpsc::UnboundedReceiver<RxJsonRpcMessage<RoleClient>>,
    reply_to: mpsc::UnboundedSender<RxJsonRpcMessage<RoleClient>>,
}

impl LinkTransport {
    /// A transport to `server` over `link`.
    pub fn new(link: Arc<dyn EmbedderLink>, server: &str) -> Self {
        let (reply_to, replies) = mpsc::unbounded_channel();
        Self {
            link,
            server: server.to_string(),
            replies,
            reply_to,
        }
    }
}

impl rmcp::transport::Transport<RoleClient> for LinkTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let link = self.link.clone();
        let server = self.server.clone();
        let reply_to = self.reply_to.clone();
        async move {
            let message = serde_json::to_value(&item).map_err(std::io::Error::other)?;
            // Only a request is answered; the program acknowledges a
            // notification or a response with an empty result, which
            // answers nothing.
            let is_request = message.get("id").is_some() && message.get("method").is_some();
            let reply = link
                .exchange(&server, message)
                .await
                .map_err(std::io::Error::other)?;
            if let Some(reply) = reply.filter(|_| is_request) {
                let reply = serde_json::from_value(reply).map_err(|err| {
                    std::io::Error::other(format!(
                        "the program's server `{server}` answered with what is not JSON-RPC: {err}"
                    ))
                })?;
                let _ = reply_to.send(reply);
            }
            Ok(())
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.replies.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.replies.close();
        Ok(())
    }
}
