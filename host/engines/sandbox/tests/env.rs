//! The environment is built from an allow-list: host secrets never appear.
//! (Its own binary: it sets a variable in the test process.)

mod common;

use common::*;
use kaizen_sandbox::{Command, Sandbox};

#[tokio::test]
async fn provider_keys_never_reach_a_process() {
    // SAFETY: the only test in this binary, set before any thread reads the
    // environment through the sandbox.
    unsafe {
        std::env::set_var("OPENAI_API_KEY", "sk-test-leak-check");
        std::env::set_var("KAIZEN_HOME", "/nonexistent/kaizen-home");
    }
    let ws = tempfile::tempdir().unwrap();
    let mut p = policy(ws.path());
    p.env.push(("FROM_POLICY".into(), "p".into()));
    let sb = Sandbox::new(p).unwrap();
    for out in [
        sh(&sb, "env; cat /proc/self/environ; cat /proc/1/environ").await,
        sb.run(Command {
            program: "env".into(),
            ..Default::default()
        })
        .await
        .unwrap(),
    ] {
        let env = text(&out);
        assert!(!env.contains("sk-test-leak-check"), "{env}");
        assert!(
            !env.contains("OPENAI_API_KEY") && !env.contains("KAIZEN_HOME"),
            "{env}"
        );
        assert!(env.contains("FROM_POLICY=p"), "{env}");
        assert!(
            env.contains(&format!("HOME={}", sb.temp_dir().display())),
            "{env}"
        );
        assert!(
            env.contains("TERM=dumb") && env.contains("PATH=/usr/local/sbin:"),
            "{env}"
        );
    }
    still_works(&sb).await;
}
