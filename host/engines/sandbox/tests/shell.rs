//! The shell and run APIs: persistence, exit codes, stdin, cwd, errors.

mod common;

use common::*;
use kaizen_sandbox::{Command, ProcessError};

#[tokio::test]
async fn cd_and_export_persist_per_shell() {
    let (ws, sb) = sandbox();
    let out = sh(
        &sb,
        "mkdir -p a/b && cd a/b && export FOO='two words' && BAR=local",
    )
    .await;
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    let out = sh(&sb, "pwd; echo \"$FOO|${BAR:-unset}\"").await;
    let expected = ws.path().canonicalize().unwrap().join("a/b");
    assert_eq!(
        text(&out),
        format!("{}\ntwo words|unset\n", expected.display())
    );
    // unset persists too, and a value with newlines and quotes survives.
    sh(&sb, "unset FOO; export Q=$'it\\'s\\nmulti'").await;
    let out = sh(&sb, "echo \"${FOO:-gone}\"; printf '%s' \"$Q\"").await;
    assert_eq!(text(&out), "gone\nit's\nmulti");
    // Another shell name has its own state.
    let out = sb
        .shell_run("other", "pwd; echo ${Q:-none}", None)
        .await
        .unwrap();
    assert_eq!(text(&out), format!("{}\nnone\n", ws.path().display()));
}

/// Exported values travel as `export -p` prints them: every byte a value
/// can hold comes back the same, in both of bash's quotings and in POSIX
/// mode; arrays (which no program could receive) and unset variables do
/// not travel.
#[tokio::test]
async fn every_exported_value_survives_to_the_next_call() {
    let (_ws, sb) = sandbox();
    let out = sh(
        &sb,
        "export A=$'tab\\there\\nnew \"dq\" \\'sq\\' $HOME `x` \\\\ \\001 \\x7f end' \
         B='ü ñ 日本' C='' D='a=b=c' E=$'\\n'; \
         export -a ARR=(1 2); declare -x UNSET_ONE; set -o posix; export F='posix \"mode\"'",
    )
    .await;
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    let out = sh(
        &sb,
        "for v in A B C D E F; do printf '%s=[%s]\\n' $v \"${!v}\" | od -An -c | tr -s ' '; done; \
         echo \"${ARR-none} ${UNSET_ONE-unset}\"",
    )
    .await;
    let expected = sh(
        &sb,
        "A=$'tab\\there\\nnew \"dq\" \\'sq\\' $HOME `x` \\\\ \\001 \\x7f end' \
         B='ü ñ 日本' C='' D='a=b=c' E=$'\\n' F='posix \"mode\"'; \
         for v in A B C D E F; do printf '%s=[%s]\\n' $v \"${!v}\" | od -An -c | tr -s ' '; done; \
         echo 'none unset'",
    )
    .await;
    assert_eq!(text(&out), text(&expected));
}

/// A call may set a startup file, a prompt hook or a preloaded library
/// for itself; the next call never inherits them, so a later, innocent
/// call runs only what its text says.
#[tokio::test]
async fn hidden_code_set_by_one_call_never_runs_in_the_next() {
    let (ws, sb) = sandbox();
    let out = sh(
        &sb,
        "printf 'touch pwned-by-$1\\n' > evil.sh; \
         export BASH_ENV=$PWD/evil.sh ENV=$PWD/evil.sh PROMPT_COMMAND='touch pwned-by-prompt' \
         LD_PRELOAD=$PWD/nothing.so IFS=/ KEPT=yes",
    )
    .await;
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    let out = sh(
        &sb,
        "echo \"$KEPT|${BASH_ENV:-none}|${LD_PRELOAD:-none}|${IFS:0:1}\"",
    )
    .await;
    assert_eq!(text(&out), "yes|none|none| \n");
    let left: Vec<_> = std::fs::read_dir(ws.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("pwned"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[tokio::test]
async fn exit_codes_and_state_after_exit() {
    let (_ws, sb) = sandbox();
    let out = sh(&sb, "mkdir -p d; cd d; export X=1; exit 3").await;
    assert_eq!(out.exit_code, Some(3));
    let out = sh(&sb, "basename $PWD; echo $X; false").await;
    assert_eq!(text(&out), "d\n1\n");
    assert_eq!(out.exit_code, Some(1));
}

#[tokio::test]
async fn syntax_error_reports_and_keeps_state() {
    let (_ws, sb) = sandbox();
    sh(&sb, "export KEEP=yes").await;
    let out = sh(&sb, "if then fi").await;
    assert_eq!(out.exit_code, Some(2));
    assert!(text(&out).contains("syntax error"), "{}", text(&out));
    let out = sh(&sb, "echo $KEEP").await;
    assert_eq!(text(&out), "yes\n");
}

#[tokio::test]
async fn stderr_is_merged_in_order() {
    let (_ws, sb) = sandbox();
    let out = sh(&sb, "echo a; echo b >&2; echo c").await;
    assert_eq!(text(&out), "a\nb\nc\n");
    assert!(out.stderr.is_empty());
}

#[tokio::test]
async fn long_scripts_travel_in_a_file() {
    let (_ws, sb) = sandbox();
    let long = format!("X='{}'; echo ${{#X}}; cd /usr", "y".repeat(300_000));
    let out = sh(&sb, &long).await;
    assert_eq!(text(&out), "300000\n");
    assert_eq!(text(&sh(&sb, "pwd").await), "/usr\n");
}

#[tokio::test]
async fn run_with_stdin_cwd_env_and_separate_streams() {
    let (ws, sb) = sandbox();
    std::fs::create_dir(ws.path().join("sub")).unwrap();
    let out = sb
        .run(Command {
            program: "cat".into(),
            stdin: Some(b"from stdin".to_vec()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(out.stdout, b"from stdin");
    let out = sb
        .run(Command {
            program: "sh".into(),
            args: vec!["-c".into(), "pwd; echo $MYVAR; echo err >&2; exit 5".into()],
            cwd: Some(ws.path().join("sub")),
            env: vec![("MYVAR".into(), "set".into())],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(
        text(&out),
        format!("{}\nset\n", ws.path().join("sub").display())
    );
    assert_eq!(out.stderr, b"err\n");
    assert_eq!(out.exit_code, Some(5));
    assert_eq!(out.signal, None);
    assert!(!out.truncated && !out.timed_out);
}

#[tokio::test]
async fn missing_programs_and_directories_are_errors() {
    let (ws, sb) = sandbox();
    let err = sb
        .run(Command {
            program: "no-such-program-kz".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ProcessError::NotFound(p) if p == "no-such-program-kz"),
        "{err:?}"
    );
    let err = sb
        .run(Command {
            program: "true".into(),
            cwd: Some(ws.path().join("missing")),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(matches!(err, ProcessError::Failed(_)), "{err:?}");
    // A program outside the readable directories cannot be executed.
    let outside = tempfile::tempdir().unwrap();
    let prog = outside.path().join("prog");
    std::fs::copy("/bin/true", &prog).unwrap();
    let err = sb
        .run(Command {
            program: prog.to_string_lossy().into_owned(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    // It does not exist in the sandbox's own root.
    assert!(matches!(err, ProcessError::NotFound(_)), "{err:?}");
    let out = sh(&sb, "no-such-program-kz").await;
    assert_eq!(out.exit_code, Some(127));
    still_works(&sb).await;
}

#[tokio::test]
async fn background_processes_end_with_their_call() {
    let (_ws, sb) = sandbox();
    let marker = marker_sleep();
    let out = sh(&sb, &format!("sleep {marker} &")).await;
    assert_eq!(out.exit_code, Some(0));
    assert!(wait_gone(&marker).await, "a '&' process outlived its call");
}

#[tokio::test]
async fn sandboxes_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<kaizen_sandbox::Sandbox>();
    let (_ws, sb) = sandbox();
    let sb = std::sync::Arc::new(sb);
    let tasks: Vec<_> = (0..4)
        .map(|i| {
            let sb = sb.clone();
            tokio::spawn(async move {
                sb.shell_run(&format!("s{i}"), &format!("echo {i}"), None)
                    .await
            })
        })
        .collect();
    for (i, task) in tasks.into_iter().enumerate() {
        assert_eq!(text(&task.await.unwrap().unwrap()), format!("{i}\n"));
    }
}
