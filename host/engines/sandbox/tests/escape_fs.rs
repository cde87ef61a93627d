//! Filesystem and process-visibility escapes: each attempt must fail, and the
//! next command in the same sandbox must still work.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::*;
use kaizen_sandbox::Sandbox;

const SECRET: &str = "kaizen-test-secret-7d1f";

/// A directory outside every grant holding a secret file.
fn outside_secret() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("secret.txt");
    std::fs::write(&file, SECRET).unwrap();
    (dir, file)
}

async fn assert_denied(sb: &Sandbox, script: &str) {
    let out = sh(sb, script).await;
    assert_ne!(
        out.exit_code,
        Some(0),
        "{script} should fail: {}",
        text(&out)
    );
    assert!(
        !text(&out).contains(SECRET),
        "{script} leaked the secret: {}",
        text(&out)
    );
    still_works(sb).await;
}

#[tokio::test]
async fn secret_outside_the_grant_is_invisible() {
    let (_ws, sb) = sandbox();
    let (_dir, secret) = outside_secret();
    assert_denied(&sb, &format!("cat {}", secret.display())).await;
    assert_denied(&sb, &format!("ls {}", secret.parent().unwrap().display())).await;
}

/// The home directory the password database names (not `$HOME`).
fn passwd_home() -> std::path::PathBuf {
    let out = std::process::Command::new("sh")
        .args(["-c", "getent passwd $(id -u) | cut -d: -f6"])
        .output()
        .unwrap();
    std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// Removes a file when dropped.
struct Planted(std::path::PathBuf);

impl Drop for Planted {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A file holding the secret in the user's real home (the one the
/// password database names, which programs that ignore `$HOME` look up),
/// removed when dropped.
fn plant_in_home() -> Planted {
    let planted = Planted(passwd_home().join(format!(".kaizen-test-{}", unique())));
    std::fs::write(&planted.0, SECRET).unwrap();
    planted
}

#[tokio::test]
async fn home_is_invisible() {
    let (_ws, sb) = sandbox();
    let planted = plant_in_home();
    let home = planted.0.parent().unwrap().to_path_buf();
    let name = planted
        .0
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert_denied(&sb, &format!("cat {}", planted.0.display())).await;
    let listed = text(&sh(&sb, &format!("ls -a {}", home.display())).await);
    assert!(
        !listed.contains(&name),
        "the real home is visible: {listed}"
    );
    let env_home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let listed = text(&sh(&sb, &format!("ls -a {env_home}")).await);
    assert!(
        !listed.contains(&name),
        "the real home is visible: {listed}"
    );
    // The sandbox's own HOME is the private temp dir, and is usable; the
    // password database's home is that same private directory.
    let out = sh(
        &sb,
        r#"echo x > ~/f && cat ~/f && echo $HOME && cat "$(getent passwd $(id -u) | cut -d: -f6)/f""#,
    )
    .await;
    assert_eq!(text(&out), format!("x\n{}\nx\n", sb.temp_dir().display()));
}

#[tokio::test]
async fn dot_dot_out_of_the_workspace() {
    let parent = tempfile::tempdir().unwrap();
    let ws = parent.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(parent.path().join("secret.txt"), SECRET).unwrap();
    let sb = Sandbox::new(policy(&ws)).unwrap();
    assert_denied(&sb, "cat ../secret.txt").await;
    assert_denied(&sb, "cat ../ws/../secret.txt").await;
}

#[tokio::test]
async fn symlink_pointing_out() {
    let (ws, sb) = sandbox();
    let (_dir, secret) = outside_secret();
    // Made inside the sandbox, and planted by the host.
    assert_denied(&sb, &format!("ln -s {} link && cat link", secret.display())).await;
    std::os::unix::fs::symlink(&secret, ws.path().join("planted")).unwrap();
    assert_denied(&sb, "cat planted").await;
    let planted = plant_in_home();
    let home = planted.0.parent().unwrap();
    std::os::unix::fs::symlink(home, ws.path().join("homedir")).unwrap();
    let name = planted.0.file_name().unwrap().to_string_lossy();
    assert_denied(&sb, &format!("cat homedir/{name}")).await;
}

#[tokio::test]
async fn hard_link_to_a_file_outside() {
    let (ws, sb) = sandbox();
    let (_dir, secret) = outside_secret();
    assert_denied(&sb, &format!("ln {} hard && cat hard", secret.display())).await;
    assert!(
        !ws.path().join("hard").exists(),
        "the hard link was created"
    );
}

#[tokio::test]
async fn proc_self_root_and_cwd() {
    let (_ws, sb) = sandbox();
    let (_dir, secret) = outside_secret();
    assert_denied(&sb, &format!("cat /proc/self/root{}", secret.display())).await;
    assert_denied(&sb, &format!("cat /proc/1/root{}", secret.display())).await;
    // The real home, through the process's root: what is there is the
    // private home, not the user's.
    let planted = plant_in_home();
    assert_denied(&sb, &format!("cat /proc/self/root{}", planted.0.display())).await;
}

#[tokio::test]
async fn host_processes_are_invisible_and_unkillable() {
    let (_ws, sb) = sandbox();
    let host_pid = std::process::id();
    // Only the sandbox's own processes: bash (PID 1) and ls.
    let out = sh(
        &sb,
        "ls /proc | grep -E '^[0-9]+$' | sort -n | tr '\\n' ' '",
    )
    .await;
    let pids: Vec<u32> = text(&out)
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert!(!pids.is_empty() && pids.len() < 6, "sandbox sees {pids:?}");
    assert!(
        pids.iter().all(|&p| p < 20),
        "sandbox sees host-like pids {pids:?}"
    );
    // PID 1 is our own shell, not the host's init.
    let out = sh(&sb, "tr '\\0' ' ' < /proc/1/cmdline").await;
    assert!(text(&out).starts_with("/bin/bash -c"), "{}", text(&out));
    // Killing the test process by its host PID fails.
    let out = sh(&sb, &format!("kill -9 {host_pid}")).await;
    assert_ne!(out.exit_code, Some(0));
    still_works(&sb).await;
    let out = sh(&sb, &format!("cat /proc/{host_pid}/environ")).await;
    assert_ne!(out.exit_code, Some(0));
    still_works(&sb).await;
}

#[tokio::test]
async fn root_only_files_under_etc_are_hidden() {
    let (_ws, sb) = sandbox();
    let out = sh(&sb, "cat /etc/shadow 2>/dev/null | grep -c : ; true").await;
    let lines: u32 = text(&out).trim().parse().unwrap_or(0);
    assert_eq!(lines, 0, "/etc/shadow readable: {}", text(&out));
    // The rest of /etc is readable.
    let out = sh(&sb, "head -1 /etc/passwd").await;
    assert!(text(&out).starts_with("root:"), "{}", text(&out));
}

#[tokio::test]
async fn writing_outside_fails_and_inside_works() {
    let (ws, sb) = sandbox();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("new.txt");
    assert_denied(&sb, &format!("echo x > {}", target.display())).await;
    assert!(!target.exists());
    // /tmp is the process's own: what it writes there never reaches the
    // host's /tmp, and is gone when the command ends.
    let tmp_probe = format!("/tmp/kaizen-escape-{}", unique());
    let out = sh(&sb, &format!("touch {tmp_probe} && ls {tmp_probe}")).await;
    assert_eq!(text(&out), format!("{tmp_probe}\n"));
    assert!(!std::path::Path::new(&tmp_probe).exists());
    let out = sh(&sb, &format!("ls {tmp_probe}")).await;
    assert_ne!(out.exit_code, Some(0), "{}", text(&out));
    assert_denied(&sb, "touch /usr/kaizen-escape").await;
    assert_denied(&sb, "touch /kaizen-escape").await;
    assert!(!std::path::Path::new("/kaizen-escape").exists());

    let out = sh(&sb, "mkdir -p d && echo hello > d/f.txt && cat d/f.txt").await;
    assert_eq!(text(&out), "hello\n");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("d/f.txt")).unwrap(),
        "hello\n"
    );
}

#[tokio::test]
async fn read_only_directory_is_not_writable() {
    let ws = tempfile::tempdir().unwrap();
    let ro = tempfile::tempdir().unwrap();
    std::fs::write(ro.path().join("data.txt"), "readable").unwrap();
    let mut p = policy(ws.path());
    p.readable.push(ro.path().to_path_buf());
    let sb = Sandbox::new(p).unwrap();
    let out = sh(&sb, &format!("cat {}/data.txt", ro.path().display())).await;
    assert_eq!(text(&out), "readable");
    for attempt in [
        format!("echo x > {}/new.txt", ro.path().display()),
        format!("echo x >> {}/data.txt", ro.path().display()),
        format!("rm {}/data.txt", ro.path().display()),
        format!("mv {0}/data.txt {0}/moved.txt", ro.path().display()),
    ] {
        let out = sh(&sb, &attempt).await;
        assert_ne!(out.exit_code, Some(0), "{attempt} succeeded");
        still_works(&sb).await;
    }
    assert_eq!(
        std::fs::read_to_string(ro.path().join("data.txt")).unwrap(),
        "readable"
    );
    assert!(!ro.path().join("new.txt").exists());
}

#[tokio::test]
async fn devices_beyond_the_basic_ones_are_denied() {
    let (_ws, sb) = sandbox();
    let out = sh(
        &sb,
        "echo x > /dev/null && head -c 4 /dev/zero | wc -c && head -c 4 /dev/urandom | wc -c",
    )
    .await;
    assert_eq!(text(&out), "4\n4\n");
    let out = sh(&sb, "echo x > /dev/tty").await;
    assert_ne!(out.exit_code, Some(0));
    let out = sh(&sb, "ls /sys/kernel || ls /dev/sda || ls /dev/mem").await;
    assert_ne!(out.exit_code, Some(0));
    // /dev/shm is the process's own too.
    let probe = format!("/dev/shm/kaizen-escape-{}", unique());
    let out = sh(&sb, &format!("touch {probe} && echo made")).await;
    assert_eq!(text(&out), "made\n");
    assert!(!std::path::Path::new(&probe).exists());
    still_works(&sb).await;
}

#[tokio::test]
async fn host_never_follows_links_planted_in_the_private_directory() {
    let (_ws, sb) = sandbox();
    let outside = tempfile::tempdir().unwrap();
    // Swap the directory where the host keeps state files and long scripts
    // for a link to a host directory, then make the host write a script.
    let swap = format!(
        "cd \"$HOME/..\" && mv state state.old && ln -s {} state",
        outside.path().display()
    );
    assert_eq!(sh(&sb, &swap).await.exit_code, Some(0));
    let long = format!("X='{}'; echo ran", "y".repeat(200_000));
    let _ = sb.shell_run("bash", &long, Some(SAFETY_TIMEOUT)).await;
    let _ = sb.spawn("bash", &long).await;
    assert_eq!(
        std::fs::read_dir(outside.path()).unwrap().count(),
        0,
        "the host wrote through the link"
    );
    still_works(&sb).await;
}

/// A program the policy refuses cannot run however it is named, and a
/// copy of it is empty.
#[tokio::test]
async fn a_refused_program_cannot_run_by_any_name() {
    let ws = tempfile::tempdir().unwrap();
    let rm = std::path::Path::new("/usr/bin/rm").canonicalize().unwrap();
    let mut policy = policy(ws.path());
    policy.no_exec = vec![rm];
    let sb = Sandbox::new(policy).unwrap();
    std::fs::write(ws.path().join("victim"), "still here").unwrap();
    for spelling in [
        "rm victim",
        "/bin/rm victim",
        "/usr/bin/r? victim",
        "{rm,victim}",
        "x=rm; $x victim",
        "alias r=rm; r victim",
        "env rm victim",
        "find . -name victim -exec rm {} ;",
        "cp /usr/bin/rm ./copy && ./copy victim",
        "bash -c 'rm victim'",
    ] {
        let out = sh(&sb, spelling).await;
        assert!(
            ws.path().join("victim").exists(),
            "`{spelling}` removed the file: {}",
            text(&out)
        );
    }
    let out = sh(&sb, "rm victim; echo $?").await;
    assert!(text(&out).contains("Permission denied"), "{}", text(&out));
    still_works(&sb).await;
}
