//! The Restate server, for the suites that run Kaizen's sessions on it:
//! installed from npm under the target directory once, started on
//! loopback with its default ports (ingress 8080, admin 9070) in a test's
//! own network namespace (at start it looks for updates on the network).

use crate::KillOnDrop;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The pinned server package.
pub const SERVER: &str = "@restatedev/restate-server@1.7.12";

/// Restate's ingress port.
pub const INGRESS: u16 = 8080;

/// Restate's admin port.
pub const ADMIN: u16 = 9070;

/// The server's program, installed (once) under `target_tmp`: call it
/// before entering a network namespace, where npm cannot reach its
/// registry.
pub fn install(target_tmp: &str) -> PathBuf {
    // The package's own `bin` is a Node script that starts the native
    // server as its child: killing the script would leave the server
    // running, so the native binary is started directly.
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    crate::npm::install(&Path::new(target_tmp).join("npm"), "restate", &[SERVER]).join(format!(
        "node_modules/@restatedev/restate-server-linux-{arch}/bin/restate-server"
    ))
}

/// Starts the server `bin` with its data, log and temporary files in
/// `dir`; returns once its admin API answers.
///
/// # Panics
///
/// When it does not come up within a minute; the message quotes its log.
pub fn start(bin: &Path, dir: &Path) -> KillOnDrop {
    let log_path = dir.join("restate-server.log");
    let log = std::fs::File::create(&log_path).expect("creating the server's log");
    // Its invoker makes a directory per run in the temporary directory and
    // leaves it there: thousands of them in the machine's `/tmp` otherwise.
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).expect("creating the server's temporary directory");
    let server = KillOnDrop(
        Command::new(bin)
            .arg("--base-dir")
            .arg(dir.join("restate-data"))
            .env("TMPDIR", &tmp)
            .stdout(log.try_clone().expect("the server's log"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|err| panic!("cannot start {}: {err}", bin.display())),
    );
    wait_for("the Restate server", || {
        TcpStream::connect(("127.0.0.1", ADMIN)).is_ok()
            && http(ADMIN, "GET", "/health", "").0 == 200
    })
    .unwrap_or_else(|err| {
        panic!(
            "{err}; its log:\n{}",
            std::fs::read_to_string(&log_path).unwrap_or_default()
        )
    });
    server
}

/// Waits until `ready` holds, for up to a minute.
pub fn wait_for(what: &str, mut ready: impl FnMut() -> bool) -> Result<(), String> {
    let started = Instant::now();
    while !ready() {
        if started.elapsed() > Duration::from_secs(60) {
            return Err(format!("timed out waiting for {what}"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

/// One HTTP/1.1 request to 127.0.0.1:`port`: the status and body.
pub fn http(port: u16, method: &str, path: &str, body: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b)
        .unwrap_or_default();
    (status, dechunk(body))
}

/// The body of a chunked answer, or `body` as it is.
fn dechunk(body: &str) -> String {
    let mut rest = body;
    let mut out = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            return body.to_string();
        };
        if size == 0 || after.len() < size {
            break;
        }
        out.push_str(&after[..size]);
        rest = after[size..].trim_start_matches("\r\n");
    }
    if out.is_empty() {
        body.to_string()
    } else {
        out
    }
}
