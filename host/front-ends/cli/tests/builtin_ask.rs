//! The built-in `AskUserQuestion` tool through `kaizen run`: without a
//! terminal the model is told no user is available; on a terminal (a
//! pseudo-terminal this test drives) the user's answers reach the model.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::run::{Run, call_fields, result_of, results_sent};
use common::terminal::Terminal;
use kaizen_model_server::{ModelServer, Reply, Script, Wire};
use serde_json::{Value, json};
use std::process::Command;

/// `kaizen run --model gpt-4o-mini ARGS` with the built-in plugins, against
/// `server` over the OpenAI wire.
fn command(run: &Run, server: &ModelServer, args: &[&str]) -> Command {
    let args: Vec<&str> = ["--model", "gpt-4o-mini"]
        .iter()
        .chain(args)
        .copied()
        .collect();
    run.command(Some((server, Wire::OpenAi)), &args)
}

fn question(text: &str, header: &str, labels: &[&str], multi_select: bool) -> Value {
    json!({
        "question": text,
        "header": header,
        "options": labels
            .iter()
            .map(|label| json!({"label": label, "description": format!("about {label}")}))
            .collect::<Vec<_>>(),
        "multiSelect": multi_select,
    })
}

fn ask(questions: &[Value]) -> String {
    json!({ "questions": questions }).to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_terminal_the_model_is_told_no_user_is_available() {
    let run = Run::builtins_only();
    let asked = ask(&[question(
        "Which database should we use?",
        "Database",
        &["PostgreSQL", "SQLite"],
        false,
    )]);
    let script = Script::new()
        .reply(Reply::tool("AskUserQuestion", &asked))
        .reply(Reply::text("I chose SQLite, assuming a small app."));
    let server = ModelServer::start(script).await.unwrap();
    // `output()` gives the child no terminal: stdin is empty, stdout and
    // stderr are pipes.
    let out = command(
        &run,
        &server,
        &["--output-format", "json", "Set up storage"],
    )
    .output()
    .unwrap();
    let result = result_of(&out);
    assert_eq!(result["status"], "complete", "{result}");
    assert_eq!(result["tool_calls"][0]["name"], "AskUserQuestion");
    assert_eq!(result["tool_calls"][0]["status"], "success", "{result}");
    let sent = results_sent(&server, 1);
    assert!(
        sent[0].starts_with("No user is available to answer questions in this run"),
        "{sent:?}"
    );
    assert!(sent[0].contains("own best judgement"), "{sent:?}");
    assert!(sent[0].contains("state the assumptions"), "{sent:?}");
    assert!(
        sent[0].contains("- Which database should we use? (options: PostgreSQL, SQLite)"),
        "{sent:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn questions_outside_the_schema_bounds_are_reported_to_the_model() {
    let run = Run::builtins_only();
    let q = |n: usize| question(&format!("Question {n}?"), "Q", &["a", "b"], false);
    let five = ask(&(1..=5).map(q).collect::<Vec<_>>());
    let one_option = ask(&[question("Sure?", "Confirm", &["yes"], false)]);
    let five_options = ask(&[question("Pick?", "Pick", &["a", "b", "c", "d", "e"], false)]);
    let long_header = ask(&[question(
        "Which?",
        "A header far too long",
        &["a", "b"],
        false,
    )]);
    let duplicate = ask(&[question("Pick?", "Pick", &["Same", "same"], false)]);
    let script = Script::new()
        .reply(
            Reply::tool("AskUserQuestion", &five)
                .with_tool("AskUserQuestion", &one_option)
                .with_tool("AskUserQuestion", &five_options)
                .with_tool("AskUserQuestion", &long_header)
                .with_tool("AskUserQuestion", r#"{"questions": []}"#)
                .with_tool("AskUserQuestion", &duplicate),
        )
        .reply(Reply::text("Fixed."));
    let server = ModelServer::start(script).await.unwrap();
    let out = command(&run, &server, &["--output-format", "json", "ask badly"])
        .output()
        .unwrap();
    let result = result_of(&out);
    assert_eq!(result["status"], "complete", "{result}");
    let sent = results_sent(&server, 1);
    assert_eq!(sent.len(), 6, "{sent:?}");
    for (text, place) in sent[..5].iter().zip([
        "`/questions`",
        "`/questions/0/options`",
        "`/questions/0/options`",
        "`/questions/0/header`",
        "`/questions`",
    ]) {
        assert!(
            text.contains("do not match its input schema") && text.contains(place),
            "expected a schema error at {place}: {text}"
        );
    }
    assert!(sent[0].contains("more than 4 items"), "{}", sent[0]);
    assert!(sent[1].contains("less than 2 items"), "{}", sent[1]);
    assert!(sent[3].contains("longer than 12"), "{}", sent[3]);
    assert!(
        sent[5].contains("offers the label \"same\" twice"),
        "{}",
        sent[5]
    );
    assert_eq!(call_fields(&result, "status"), ["error"; 6]);
}

#[tokio::test(flavor = "multi_thread")]
async fn on_a_terminal_the_users_answers_reach_the_model() {
    let run = Run::builtins_only();
    let asked = ask(&[
        question(
            "Which database should we use?",
            "Database",
            &["PostgreSQL", "SQLite", "MySQL"],
            false,
        ),
        question(
            "Which features do you want?",
            "Features",
            &["Auth", "Search", "Billing"],
            true,
        ),
        question("What should we call it?", "Name", &["core", "base"], false),
    ]);
    let script = Script::new()
        .reply(Reply::tool("AskUserQuestion", &asked))
        .reply(Reply::text("Setting it up."));
    let server = ModelServer::start(script).await.unwrap();
    let mut session = Terminal::spawn(command(&run, &server, &["Set up the app"]));

    session.expect("[1/3]");
    session.expect("1. PostgreSQL");
    session.expect("> ");
    session.type_line("7");
    session.expect("There is no option 7");
    session.expect("> ");
    session.type_line("2");
    session.expect("[2/3]");
    session.expect("> ");
    session.type_line("3, 1");
    session.expect("[3/3]");
    session.expect("> ");
    session.type_line("kernel");
    let code = session.finish();

    assert_eq!(code, Some(0), "{}", session.transcript());
    let sent = results_sent(&server, 1);
    assert_eq!(
        sent,
        ["The user answered your questions:\n\
          1. Which database should we use? → SQLite\n\
          2. Which features do you want? → Auth, Billing\n\
          3. What should we call it? → their own answer: \"kernel\"\n\
          Continue with these answers in mind."]
    );
    assert!(session.transcript().contains("Setting it up."));
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_questions_are_asked_one_at_a_time() {
    let run = Run::builtins_only();
    let color = ask(&[question("Which color?", "Color", &["Red", "Blue"], false)]);
    let size = ask(&[question("Which size?", "Size", &["Small", "Large"], false)]);
    // Two read-only calls in one response run concurrently.
    let script = Script::new()
        .reply(Reply::tool("AskUserQuestion", &color).with_tool("AskUserQuestion", &size))
        .reply(Reply::text("Noted."));
    let server = ModelServer::start(script).await.unwrap();
    let mut session = Terminal::spawn(command(&run, &server, &["Order a shirt"]));
    session.expect("> ");
    // Questions are shown in bold; tool activity lines are dim.
    let first_is_color = session.transcript().contains("\x1b[1mWhich color?");
    let shown = session.transcript().matches("\x1b[1mWhich ").count();
    assert_eq!(shown, 1, "two prompts at once:\n{}", session.transcript());
    session.type_line("1");
    session.expect("> ");
    session.type_line("2");
    let code = session.finish();
    assert_eq!(code, Some(0), "{}", session.transcript());
    let (color_pick, size_pick) = if first_is_color {
        ("Red", "Large")
    } else {
        ("Blue", "Small")
    };
    let sent = results_sent(&server, 1);
    assert!(
        sent[0].contains(&format!("1. Which color? → {color_pick}\n")),
        "{sent:?}"
    );
    assert!(
        sent[1].contains(&format!("1. Which size? → {size_pick}\n")),
        "{sent:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_d_at_the_prompt_declines() {
    let run = Run::builtins_only();
    let asked = ask(&[question("Proceed?", "Confirm", &["Yes", "No"], false)]);
    let script = Script::new()
        .reply(Reply::tool("AskUserQuestion", &asked))
        .reply(Reply::text("Stopping."));
    let server = ModelServer::start(script).await.unwrap();
    let mut session = Terminal::spawn(command(&run, &server, &["Delete the logs"]));
    session.expect("Proceed?");
    session.expect("> ");
    session.type_raw(b"\x04");
    let code = session.finish();
    assert_eq!(code, Some(0), "{}", session.transcript());
    let sent = results_sent(&server, 1);
    assert!(
        sent[0].starts_with("The user declined to answer"),
        "{sent:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_interrupt_at_the_prompt_ends_the_run_without_waiting_for_input() {
    let run = Run::builtins_only();
    let asked = ask(&[question("Proceed?", "Confirm", &["Yes", "No"], false)]);
    let script = Script::new().reply(Reply::tool("AskUserQuestion", &asked));
    let server = ModelServer::start(script).await.unwrap();
    let mut session = Terminal::spawn(command(&run, &server, &["Delete the logs"]));
    session.expect("Proceed?");
    session.expect("> ");
    // What Ctrl-C sends; the child has no controlling terminal to send it.
    let pid = libc::pid_t::try_from(session.child.id()).unwrap();
    // SAFETY: signals our own child, which has not been reaped.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    // The read of the answer is still pending: the process must exit anyway.
    let code = session.finish();
    assert_eq!(code, Some(130), "{}", session.transcript());
    assert_eq!(server.requests().len(), 1);
}
