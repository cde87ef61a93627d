//! A TCP load balancer on loopback, as a cluster puts in front of its
//! workers: each connection goes to the next backend, round robin, and a
//! backend that refuses (a worker that was lost) is passed over.

use std::io;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Listens on `listen` and hands each connection to one of `backends`,
/// for as long as the process runs.
pub fn start(listen: SocketAddr, backends: Vec<SocketAddr>) -> io::Result<()> {
    let listener = TcpListener::bind(listen)?;
    let next = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let first = next.fetch_add(1, Ordering::Relaxed);
            let backends = backends.clone();
            std::thread::spawn(move || {
                let backend = (0..backends.len())
                    .map(|i| backends[(first + i) % backends.len()])
                    .find_map(|addr| TcpStream::connect(addr).ok());
                // None up: the client sees its connection closed.
                if let Some(backend) = backend {
                    relay(client, backend);
                }
            });
        }
    });
    Ok(())
}

/// Copies both ways until each side has closed.
fn relay(client: TcpStream, backend: TcpStream) {
    let (Ok(client_in), Ok(backend_in)) = (client.try_clone(), backend.try_clone()) else {
        return;
    };
    let upstream = std::thread::spawn(move || pipe(client_in, backend));
    pipe(backend_in, client);
    let _ = upstream.join();
}

fn pipe(mut from: TcpStream, mut to: TcpStream) {
    let _ = io::copy(&mut from, &mut to);
    // Either side gone: the other is told, and both ends close.
    let _ = to.shutdown(Shutdown::Both);
    let _ = from.shutdown(Shutdown::Both);
}
