//! A sandboxed process's own root, attacked: the host's named unix sockets
//! (a tmux server, an ssh-agent, any listener in `/tmp`), socket families
//! no tool needs, the host's state inside a granted directory, and the
//! configuration files a session must not change.
//!
//! Unix sockets are connected to with perl, the one scripting language in
//! the system directories of every Debian machine.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::{policy, sh, still_works, text, unique};
use kaizen_sandbox::Sandbox;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// A perl one-liner that connects to the unix socket at `path` and prints
/// `connected`, or dies with the error.
fn connect_unix(path: &Path) -> String {
    format!(
        "perl -MSocket -e 'socket(my $s, PF_UNIX, SOCK_STREAM, 0) or die \"socket: $!\\n\"; \
         connect($s, pack_sockaddr_un(\"{}\")) or die \"connect: $!\\n\"; print \"connected\\n\"'",
        path.display()
    )
}

/// Runs `script`, which must fail without printing `connected`.
async fn refused(sb: &Sandbox, script: &str) -> String {
    let out = sh(sb, script).await;
    assert_ne!(out.exit_code, Some(0), "{script}: {}", text(&out));
    assert!(
        !text(&out).contains("connected"),
        "{script}: {}",
        text(&out)
    );
    still_works(sb).await;
    text(&out)
}

#[tokio::test]
async fn a_unix_socket_outside_the_grant_does_not_exist() {
    let ws = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(policy(ws.path())).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let path = outside.path().join("daemon.sock");
    let listener = UnixListener::bind(&path).unwrap();
    listener.set_nonblocking(true).unwrap();
    let said = refused(&sb, &connect_unix(&path)).await;
    assert!(said.contains("No such file"), "{said}");
    assert!(listener.accept().is_err(), "the listener was reached");

    // The same in the workspace is the session's own, and reachable.
    let inside = ws.path().join("mine.sock");
    let _mine = UnixListener::bind(&inside).unwrap();
    let out = sh(&sb, &connect_unix(&inside)).await;
    assert_eq!(text(&out), "connected\n", "{out:?}");
}

#[tokio::test]
async fn the_hosts_tmux_server_cannot_be_driven() {
    let ws = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(policy(ws.path())).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let socket = outside.path().join("tmux.sock");
    let marker = outside.path().join("ran-outside");
    let started = Command::new("tmux")
        .arg("-S")
        .arg(&socket)
        .args(["new-session", "-d", "-s", "kz", "sleep 600"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    let _server = TmuxServer(socket.clone());
    match started {
        Ok(status) if status.success() => {}
        other => {
            kaizen_test_support::missing_feature(
                env!("CARGO_TARGET_TMPDIR"),
                "tmux",
                &format!("tmux could not start a server: {other:?}"),
            );
            return;
        }
    }
    let attack = format!(
        "tmux -S {} run-shell 'touch {}'",
        socket.display(),
        marker.display()
    );
    // A reached server would have run the command before the client
    // returned: run-shell waits for it.
    refused(&sb, &attack).await;
    assert!(!marker.exists(), "the host's tmux ran the command");
}

/// Stops the tmux server on the socket when dropped.
struct TmuxServer(std::path::PathBuf);

impl Drop for TmuxServer {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.0)
            .arg("kill-server")
            .stderr(std::process::Stdio::null())
            .status();
    }
}

#[tokio::test]
async fn the_hosts_ssh_agent_cannot_be_asked_for_keys() {
    let ws = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(policy(ws.path())).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let socket = outside.path().join(format!("agent.{}", unique()));
    let agent = Command::new("ssh-agent")
        .arg("-D")
        .arg("-a")
        .arg(&socket)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    let Ok(agent) = agent else {
        kaizen_test_support::missing_feature(
            env!("CARGO_TARGET_TMPDIR"),
            "ssh-agent",
            "ssh-agent could not be started",
        );
        return;
    };
    let _agent = KillOnDrop(agent);
    for _ in 0..200 {
        if socket.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(socket.exists(), "the agent made no socket");
    let said = refused(
        &sb,
        &format!("SSH_AUTH_SOCK={} ssh-add -l 2>&1", socket.display()),
    )
    .await;
    assert!(
        said.contains("Error connecting to agent") || said.contains("Could not open"),
        "{said}"
    );
}

/// Kills the child when dropped, even when the test fails first.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn run_and_tmp_of_the_host_are_not_there() {
    let ws = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(policy(ws.path())).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("x"), "host tmp").unwrap();
    // The home the password database names is the private home, whoever
    // the user is; other homes are not there.
    let same = sh(
        &sb,
        r#"h=$(getent passwd $(id -u) | cut -d: -f6); [ "$(stat -c %d:%i "$h")" = "$(stat -c %d:%i "$HOME")" ] && echo same"#,
    )
    .await;
    assert_eq!(text(&same), "same\n");
    let own_home = String::from_utf8_lossy(
        &Command::new("sh")
            .args(["-c", "getent passwd $(id -u) | cut -d: -f6"])
            .output()
            .unwrap()
            .stdout,
    )
    .trim()
    .to_string();
    let mut probes = vec![
        "ls /run/user".to_string(),
        "ls /var/run".to_string(),
        format!("cat {}/x", outside.path().display()),
        "ls /sys/fs/cgroup".to_string(),
    ];
    for other in ["/root", "/home"] {
        if !own_home.starts_with(other) {
            probes.push(format!("ls {other}"));
        }
    }
    for probe in probes {
        let out = sh(&sb, &probe).await;
        assert_ne!(out.exit_code, Some(0), "{probe}: {}", text(&out));
        assert!(!text(&out).contains("host tmp"));
    }
    still_works(&sb).await;
}

#[tokio::test]
async fn socket_families_no_tool_needs_are_refused() {
    let ws = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(policy(ws.path())).unwrap();
    // AF_VSOCK (40), AF_PACKET (17), AF_BLUETOOTH (31), AF_ALG (38),
    // AF_KEY (15), AF_TIPC (30).
    for family in [40, 17, 31, 38, 15, 30] {
        let script = format!(
            "perl -e 'socket(my $s, {family}, 1, 0) or die \"refused: $!\\n\"; print \"made\\n\"' 2>&1"
        );
        let out = sh(&sb, &script).await;
        assert_ne!(out.exit_code, Some(0), "family {family}: {}", text(&out));
        assert!(
            text(&out).contains("Address family not supported"),
            "family {family}: {}",
            text(&out)
        );
    }
    // The families tools use still work.
    let out = sh(
        &sb,
        "perl -MSocket -e 'socket(my $a, PF_UNIX, SOCK_STREAM, 0) && socket(my $b, PF_INET, SOCK_STREAM, 0) && print \"ok\\n\"'",
    )
    .await;
    assert_eq!(text(&out), "ok\n", "{out:?}");
}

#[tokio::test]
async fn hidden_state_inside_the_workspace_is_not_there() {
    let ws = tempfile::tempdir().unwrap();
    let home = ws.path().join(".local/share/kaizen");
    std::fs::create_dir_all(home.join("cache")).unwrap();
    std::fs::write(home.join("config.toml"), "secret = 1").unwrap();
    std::fs::write(home.join("cache/a.cwasm"), "code").unwrap();
    let mut p = policy(ws.path());
    p.hide.push(home.clone());
    let sb = Sandbox::new(p).unwrap();
    for attack in [
        format!("cat {}/config.toml", home.display()),
        format!("ls {}/cache", home.display()),
        format!("echo evil > {}/cache/a.cwasm", home.display()),
        format!("rm -rf {}", home.display()),
        format!("mv {} {}/moved", home.display(), ws.path().display()),
    ] {
        let out = sh(&sb, &format!("{attack} 2>&1")).await;
        assert_ne!(out.exit_code, Some(0), "{attack}: {}", text(&out));
        assert!(!text(&out).contains("secret"), "{attack}: {}", text(&out));
    }
    assert_eq!(std::fs::read(home.join("cache/a.cwasm")).unwrap(), b"code");
    assert!(home.join("config.toml").exists());
    still_works(&sb).await;
}

#[tokio::test]
async fn configuration_in_the_workspace_is_read_only() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    std::fs::write(root.join("kaizen.toml"), "[plugins]\n").unwrap();
    std::fs::create_dir_all(root.join(".kaizen/plugins/x")).unwrap();
    std::fs::write(root.join(".kaizen/plugins/x/plugin.toml"), "ok").unwrap();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(root.join(".claude/settings.json"), "{}").unwrap();
    let mut p = policy(root);
    for name in ["kaizen.toml", ".kaizen", ".claude"] {
        p.protect.push(root.join(name));
    }
    let sb = Sandbox::new(p).unwrap();
    let out = sh(&sb, "cat kaizen.toml .kaizen/plugins/x/plugin.toml").await;
    assert_eq!(text(&out), "[plugins]\nok", "reading is fine");
    for attack in [
        "echo '[grants.bash]' >> kaizen.toml",
        "printf x > kaizen.toml",
        "rm kaizen.toml",
        "mv kaizen.toml k.bak",
        "mkdir -p .kaizen/plugins/evil",
        "echo evil > .kaizen/plugins/x/plugin.toml",
        "rm -rf .kaizen",
        "mv .kaizen elsewhere",
        "echo '{\"hooks\":{}}' > .claude/settings.json",
        "ln -sf /etc/passwd .claude/settings.local.json",
    ] {
        let out = sh(&sb, &format!("{attack} 2>&1")).await;
        assert_ne!(out.exit_code, Some(0), "{attack}: {}", text(&out));
    }
    assert_eq!(
        std::fs::read_to_string(root.join("kaizen.toml")).unwrap(),
        "[plugins]\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join(".kaizen/plugins/x/plugin.toml")).unwrap(),
        "ok"
    );
    assert!(!root.join(".kaizen/plugins/evil").exists());
    assert_eq!(
        std::fs::read_to_string(root.join(".claude/settings.json")).unwrap(),
        "{}"
    );
    // The rest of the workspace is the session's to change.
    let out = sh(&sb, "echo fine > notes.txt && cat notes.txt").await;
    assert_eq!(text(&out), "fine\n");
}

#[tokio::test]
async fn memory_and_private_tmp_are_bounded() {
    let ws = tempfile::tempdir().unwrap();
    let mut p = policy(ws.path());
    p.limits.max_memory = 256 << 20;
    p.limits.tmp_size = 8 << 20;
    let sb = Sandbox::new(p).unwrap();
    // 3 GiB was allocated fine before there was a memory limit.
    let out = sh(
        &sb,
        "perl -e '$x = \"a\" x (512 * 1024 * 1024); print \"allocated\\n\"' 2>&1",
    )
    .await;
    assert_ne!(out.exit_code, Some(0), "{}", text(&out));
    assert!(text(&out).contains("Out of memory"), "{}", text(&out));
    let out = sh(
        &sb,
        "perl -e '$x = \"a\" x (64 * 1024 * 1024); print \"fits\\n\"'",
    )
    .await;
    assert_eq!(text(&out), "fits\n");

    for dir in ["/tmp", "/dev/shm"] {
        let out = sh(
            &sb,
            &format!("{{ head -c 16777216 /dev/zero > {dir}/fill; }} 2>&1; echo status=$?"),
        )
        .await;
        assert!(
            text(&out).contains("No space left on device") && !text(&out).contains("status=0"),
            "{dir}: {}",
            text(&out)
        );
    }
    still_works(&sb).await;
}

/// Fails the test (unless opted out) when the sandbox could make no
/// session control group on this host; true when it could.
fn shares_limits(sb: &Sandbox) -> bool {
    if sb.shares_limits() {
        return true;
    }
    kaizen_test_support::missing_feature(
        env!("CARGO_TARGET_TMPDIR"),
        "cgroups",
        "no control group this host can make for a session (root with cgroup v1, or \
         delegated pids and memory controllers in cgroup v2)",
    );
    false
}

#[tokio::test]
async fn background_fork_bombs_share_one_process_limit() {
    let ws = tempfile::tempdir().unwrap();
    let mut p = policy(ws.path());
    p.limits.max_processes = 48;
    let sb = Sandbox::new(p).unwrap();
    if !shares_limits(&sb) {
        return;
    }
    let marker = format!("300.{}", unique());
    // Three background jobs, each trying for 100 processes: three fork
    // bombs that used to reach three limits' worth. A job the full session
    // cannot start is refused, saying why.
    let mut started = 0;
    for _ in 0..3 {
        let job = sb
            .spawn(
                "bash",
                &format!("for i in $(seq 100); do sleep {marker} & done; wait"),
            )
            .await;
        match job {
            Ok(_) => started += 1,
            Err(err) => assert!(
                err.to_string()
                    .contains("as many processes as its limit allows"),
                "{err}"
            ),
        }
    }
    assert!(started >= 1);
    // Wait until they have made all they can: the count stops rising.
    let mut last = 0;
    let mut steady = 0;
    for _ in 0..400 {
        let now = common::host_pids(&marker).len();
        steady = if now == last { steady + 1 } else { 0 };
        last = now;
        if steady >= 20 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(last > 0, "the jobs started nothing");
    assert!(
        last <= 48,
        "{last} sleeps run at once: the session's limit of 48 did not hold"
    );
    drop(sb);
    assert!(
        common::wait_gone(&marker).await,
        "the jobs outlived the session"
    );
}

#[tokio::test]
async fn the_session_memory_limit_is_explained_when_it_stops_a_program() {
    let ws = tempfile::tempdir().unwrap();
    let mut p = policy(ws.path());
    // Each process, and the session together, may have 128 MiB.
    p.limits.max_memory = 128 << 20;
    let sb = Sandbox::new(p).unwrap();
    if !shares_limits(&sb) {
        return;
    }
    // Each hog stays well under its own limit (a 40 MiB string, copied
    // once: about 100 MiB of address space), so only the session's shared
    // limit can stop them, whichever order they run in.
    let hog = "perl -e '$x = \"a\" x (40 * 1024 * 1024); sleep 3'";
    let out = sh(
        &sb,
        &format!("{hog} & {hog} & {hog} & {hog} & wait; echo done"),
    )
    .await;
    assert!(
        text(&out).contains("reached their memory limit of 128 MiB together"),
        "{}",
        text(&out)
    );
    still_works(&sb).await;
}
