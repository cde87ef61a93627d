//! One transport type for every kind of server: rmcp's client service is
//! generic over its transport, and each type it runs over is a copy of
//! the whole service in the binary. Stdio, streamable HTTP and the
//! embedding program's channel all go through [`BoxedTransport`], so the
//! service is compiled once.

use futures::future::BoxFuture;
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use std::future::Future;

/// [`Transport`]'s operations, callable through a `dyn`.
trait DynTransport: Send {
    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> BoxFuture<'static, std::io::Result<()>>;
    fn receive(&mut self) -> BoxFuture<'_, Option<RxJsonRpcMessage<RoleClient>>>;
    fn close(&mut self) -> BoxFuture<'_, std::io::Result<()>>;
}

impl<T: Transport<RoleClient> + 'static> DynTransport for T {
    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> BoxFuture<'static, std::io::Result<()>> {
        let sent = Transport::send(self, item);
        Box::pin(async move { sent.await.map_err(std::io::Error::other) })
    }

    fn receive(&mut self) -> BoxFuture<'_, Option<RxJsonRpcMessage<RoleClient>>> {
        Box::pin(Transport::receive(self))
    }

    fn close(&mut self) -> BoxFuture<'_, std::io::Result<()>> {
        Box::pin(async move { Transport::close(self).await.map_err(std::io::Error::other) })
    }
}

/// Any client transport, behind one type.
pub(crate) struct BoxedTransport(Box<dyn DynTransport>);

impl BoxedTransport {
    /// `transport`, boxed.
    pub fn new(transport: impl Transport<RoleClient> + 'static) -> Self {
        Self(Box::new(transport))
    }
}

impl Transport<RoleClient> for BoxedTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.0.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.0.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.0.close()
    }
}
