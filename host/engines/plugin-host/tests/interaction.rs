//! The `interaction` host interface: questions reach whoever the embedder
//! put there, or come back as "no user" in scripts and CI.

mod common;

use common::{Harness, error, manifest, text};
use kaizen_plugin_host::interaction::{Answer, AskFuture, Interaction, Question};
use kaizen_tools::ToolErrorKind;
use std::sync::{Arc, Mutex};

/// Stands in for the person at the terminal: picks the last option of each
/// question and records what it was shown.
#[derive(Default)]
struct Person {
    seen: Mutex<Vec<String>>,
}

impl Interaction for Person {
    fn ask<'a>(&'a self, plugin: &'a str, questions: Vec<Question>) -> AskFuture<'a> {
        Box::pin(async move {
            let mut seen = self.seen.lock().unwrap();
            let answers = questions
                .into_iter()
                .map(|q| {
                    seen.push(format!("{plugin}: {}", q.question));
                    Answer {
                        selected: vec![
                            q.options
                                .last()
                                .map(|o| o.label.clone())
                                .unwrap_or_default(),
                        ],
                        question: q.question,
                    }
                })
                .collect();
            Ok(answers)
        })
    }

    fn progress(&self, plugin: &str, message: &str, fraction: Option<f32>) {
        self.seen
            .lock()
            .unwrap()
            .push(format!("{plugin}: progress {message} {fraction:?}"));
    }
}

const ASK: &str = r#"{"question": "Which branch?", "options": ["main", "dev"]}"#;

#[tokio::test]
async fn questions_reach_the_embedders_handler() {
    let person = Arc::new(Person::default());
    let h = Harness::with_interaction(person.clone());
    let registry = h.registry(&["asker"]).await;
    assert_eq!(text(registry.call(&h.ctx("s"), "Ask", ASK).await), "dev");
    let seen = person.seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            "asker: progress asking the user Some(0.5)",
            "asker: Which branch?"
        ]
    );
}

#[tokio::test]
async fn without_a_user_the_tool_is_told_so() {
    let h = Harness::new();
    let registry = h.registry(&["asker"]).await;
    let err = error(registry.call(&h.ctx("s"), "Ask", ASK).await);
    assert_eq!(err.kind, ToolErrorKind::Failed);
    assert!(
        err.message.contains("no user is available"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn malformed_questions_are_refused_by_the_host() {
    let person = Arc::new(Person::default());
    let h = Harness::with_interaction(person.clone());
    let registry = h.registry(&["asker"]).await;
    let one_option = r#"{"question": "Sure?", "options": ["yes"]}"#;
    let err = error(registry.call(&h.ctx("s"), "Ask", one_option).await);
    assert_eq!(err.kind, ToolErrorKind::InvalidInput);
    assert!(err.message.contains("give 2 to 4"), "{}", err.message);
    assert!(
        !person
            .seen
            .lock()
            .unwrap()
            .iter()
            .any(|s| s.contains("Sure?"))
    );
}

#[tokio::test]
async fn importing_interaction_without_requesting_it_fails_to_load() {
    let h = Harness::new();
    // The same component, with a manifest that does not request it.
    let dir = h.custom_plugin("asker", "asker", &manifest("asker", ""));
    let err = h.load_dir(&dir).await.err().expect("must not load");
    let import = format!(
        "kaizen:plugin/interaction@{}",
        kaizen_plugin_host::CONTRACT_VERSION
    );
    assert!(err.message.contains(&import), "{err}");
    assert!(err.message.contains("`interaction` capability"), "{err}");
}
