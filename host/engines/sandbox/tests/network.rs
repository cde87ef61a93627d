//! Network: denied unless granted. Targets are only a loopback listener this
//! test runs and a host in a network namespace this test creates.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use std::io::Read;
use std::net::{Ipv4Addr, TcpListener};
use std::os::fd::AsRawFd;
use std::process::Command as Proc;
use std::sync::mpsc;
use std::time::Duration;

use common::*;
use kaizen_sandbox::Sandbox;
use kaizen_test_support::missing_feature;

fn sandbox_with_network(network: bool) -> (tempfile::TempDir, Sandbox) {
    let ws = tempfile::tempdir().unwrap();
    let mut p = policy(ws.path());
    p.network = network;
    (ws, Sandbox::new(p).unwrap())
}

/// Accepts one connection on `listener` in a thread; sends what it read.
fn accept_one(listener: TcpListener) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        listener.set_nonblocking(false).unwrap();
        if let Ok((mut stream, _)) = listener.accept() {
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let mut got = String::new();
            let _ = stream.read_to_string(&mut got);
            let _ = tx.send(got);
        }
    });
    rx
}

fn connect_script(addr: &str, port: u16) -> String {
    format!("echo hello-{port} > /dev/tcp/{addr}/{port} && echo connected")
}

#[tokio::test]
async fn loopback_listener_is_unreachable_without_network() {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let (_ws, sb) = sandbox_with_network(false);
    let out = sh(&sb, &connect_script("127.0.0.1", port)).await;
    assert_ne!(out.exit_code, Some(0), "{}", text(&out));
    assert!(!text(&out).contains("connected"));
    // Nothing arrived at the listener.
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_err(), "a connection reached the host");
    let out = sh(&sb, "ip -o link | grep -v ' lo:' | wc -l").await;
    assert_eq!(
        text(&out).trim(),
        "0",
        "the sandbox sees network interfaces"
    );
    still_works(&sb).await;
}

#[tokio::test]
async fn loopback_listener_is_reachable_with_network() {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let got = accept_one(listener);
    let (_ws, sb) = sandbox_with_network(true);
    let out = sh(&sb, &connect_script("127.0.0.1", port)).await;
    assert_eq!(text(&out), "connected\n", "{out:?}");
    let received = got.recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!(received, format!("hello-{port}\n"));
}

/// A network namespace with a veth link to the host, removed on drop.
struct TestNetns {
    name: String,
    host_if: String,
    peer_addr: String,
}

impl TestNetns {
    /// Makes the namespace, or says which `ip` command failed and why.
    fn create() -> Result<TestNetns, String> {
        let id = std::process::id();
        let name = format!("kzsb-{id}");
        let (host_if, ns_if) = (
            format!("kzh{}", id % 100_000),
            format!("kzn{}", id % 100_000),
        );
        let subnet = id % 250 + 1;
        let host_addr = format!("10.213.{subnet}.1/30");
        let peer = format!("10.213.{subnet}.2");
        let ns = TestNetns {
            name: name.clone(),
            host_if: host_if.clone(),
            peer_addr: peer.clone(),
        };
        let steps: Vec<Vec<String>> = vec![
            vec!["netns".into(), "add".into(), name.clone()],
            vec![
                "link".into(),
                "add".into(),
                host_if.clone(),
                "type".into(),
                "veth".into(),
                "peer".into(),
                "name".into(),
                ns_if.clone(),
            ],
            vec![
                "link".into(),
                "set".into(),
                ns_if.clone(),
                "netns".into(),
                name.clone(),
            ],
            vec![
                "addr".into(),
                "add".into(),
                host_addr,
                "dev".into(),
                host_if.clone(),
            ],
            vec!["link".into(), "set".into(), host_if, "up".into()],
            vec![
                "-n".into(),
                name.clone(),
                "addr".into(),
                "add".into(),
                format!("{peer}/30"),
                "dev".into(),
                ns_if.clone(),
            ],
            vec![
                "-n".into(),
                name.clone(),
                "link".into(),
                "set".into(),
                ns_if,
                "up".into(),
            ],
            vec![
                "-n".into(),
                name,
                "link".into(),
                "set".into(),
                "lo".into(),
                "up".into(),
            ],
        ];
        for args in steps {
            // Dropping `ns` on failure removes what the steps before made.
            let failed = match Proc::new("ip").args(&args).output() {
                Ok(out) if out.status.success() => continue,
                Ok(out) => format!(
                    "{}: {}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
                Err(err) => err.to_string(),
            };
            return Err(format!(
                "`ip {}` failed ({failed}); it needs root and iproute2",
                args.join(" ")
            ));
        }
        Ok(ns)
    }

    /// Binds a listener inside the namespace (from a thread that joined it).
    fn listen(&self) -> TcpListener {
        let path = format!("/run/netns/{}", self.name);
        let addr: Ipv4Addr = self.peer_addr.parse().unwrap();
        std::thread::scope(|s| {
            s.spawn(|| {
                let fd = std::fs::File::open(&path).unwrap();
                // SAFETY: setns on this thread only, with a namespace fd.
                let rc = unsafe { libc::setns(fd.as_raw_fd(), libc::CLONE_NEWNET) };
                assert_eq!(rc, 0, "setns: {}", std::io::Error::last_os_error());
                // The socket stays in the namespace it was made in.
                TcpListener::bind((addr, 0)).unwrap()
            })
            .join()
            .unwrap()
        })
    }
}

impl Drop for TestNetns {
    fn drop(&mut self) {
        // Deleting the namespace removes the veth pair with it; the host end
        // is removed by hand in case setup stopped before moving the peer.
        let _ = Proc::new("ip").args(["netns", "del", &self.name]).status();
        let _ = Proc::new("ip")
            .args(["link", "del", &self.host_if])
            .stderr(std::process::Stdio::null())
            .status();
    }
}

#[tokio::test]
async fn host_in_a_test_network_namespace() {
    let netns = match TestNetns::create() {
        Ok(netns) => netns,
        Err(why) => {
            missing_feature(env!("CARGO_TARGET_TMPDIR"), "netns", &why);
            return;
        }
    };
    let listener = netns.listen();
    let port = listener.local_addr().unwrap().port();
    let got = accept_one(listener);

    let (_ws, denied) = sandbox_with_network(false);
    let out = sh(&denied, &connect_script(&netns.peer_addr, port)).await;
    assert_ne!(out.exit_code, Some(0), "{}", text(&out));
    still_works(&denied).await;

    let (_ws, granted) = sandbox_with_network(true);
    let out = sh(&granted, &connect_script(&netns.peer_addr, port)).await;
    assert_eq!(text(&out), "connected\n", "{out:?}");
    let received = got.recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!(received, format!("hello-{port}\n"));
}
