use super::format::{answered, check, declined, no_user};
use super::*;
use kaizen_sdk::Content;
use kaizen_sdk::host::interaction::Answer;
use kaizen_sdk::serde_json::{self, Value};

fn text(output: &Output) -> &str {
    match output.content.as_slice() {
        [Content::Text(text)] => text,
        other => panic!("expected one text part, got {other:?}"),
    }
}

fn question(text: &str, labels: &[&str], multi_select: bool) -> Question {
    Question {
        question: text.into(),
        header: "Header".into(),
        options: labels
            .iter()
            .map(|label| Choice {
                label: (*label).into(),
                description: format!("about {label}"),
            })
            .collect(),
        multi_select,
    }
}

fn answer(question: &str, selected: &[&str]) -> Answer {
    Answer {
        question: question.into(),
        selected: selected.iter().map(|s| (*s).into()).collect(),
    }
}

fn schema() -> Value {
    let spec = kaizen_sdk::raw::spec::<AskUserQuestion>();
    serde_json::from_str(&spec.input_schema).unwrap()
}

/// The schema of a nested type, following a `$ref` when there is one.
fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    match schema["$ref"].as_str() {
        Some(reference) => {
            let name = reference.rsplit('/').next().unwrap();
            &root["$defs"][name]
        }
        None => schema,
    }
}

#[test]
fn answers_name_each_question_with_its_choice() {
    let questions = [
        question("Which database?", &["PostgreSQL", "SQLite"], false),
        question("Which features?", &["Auth", "Search", "Billing"], true),
    ];
    let answers = [
        answer("Which database?", &["SQLite"]),
        answer("Which features?", &["Auth", "Billing"]),
    ];
    let output = answered(&questions, &answers);
    assert_eq!(
        text(&output),
        "The user answered your questions:\n\
         1. Which database? → SQLite\n\
         2. Which features? → Auth, Billing\n\
         Continue with these answers in mind."
    );
    assert_eq!(
        output.metadata.unwrap(),
        json!({
            "answered": true,
            "answers": {
                "Which database?": ["SQLite"],
                "Which features?": ["Auth", "Billing"],
            },
        })
    );
}

#[test]
fn text_that_is_no_label_is_the_users_own_answer() {
    let questions = [
        question("Name?", &["core", "base"], false),
        question("Extras?", &["Docs", "Tests"], true),
    ];
    let answers = [
        answer("Name?", &["  kernel "]),
        answer("Extras?", &["Tests", "benchmarks too"]),
    ];
    let shown = answered(&questions, &answers);
    assert!(
        text(&shown).contains("1. Name? → their own answer: \"kernel\"\n"),
        "{}",
        text(&shown)
    );
    assert!(
        text(&shown).contains("2. Extras? → Tests, their own answer: \"benchmarks too\"\n"),
        "{}",
        text(&shown)
    );
}

#[test]
fn answers_are_matched_by_question_then_by_position() {
    let questions = [
        question("First?", &["a", "b"], false),
        question("Second?", &["c", "d"], false),
    ];
    // Out of order.
    let answers = [answer("Second?", &["d"]), answer("First?", &["a"])];
    let shown = answered(&questions, &answers);
    assert!(text(&shown).contains("1. First? → a\n2. Second? → d\n"));
    // A question text the host changed: its position decides.
    let answers = [answer("first", &["b"]), answer("Second?", &["c"])];
    let shown = answered(&questions, &answers);
    assert!(text(&shown).contains("1. First? → b\n2. Second? → c\n"));
    let missing = answered(&questions, &[answer("Second?", &["c"])]);
    assert!(text(&missing).contains("1. First? → (no answer)\n"));
}

#[test]
fn no_user_tells_the_model_to_decide_and_state_its_assumptions() {
    let questions = [question(
        "Which database?",
        &["PostgreSQL", "SQLite"],
        false,
    )];
    let output = no_user(&questions);
    let shown = text(&output);
    assert!(shown.starts_with("No user is available"), "{shown}");
    assert!(shown.contains("Do not ask again"), "{shown}");
    assert!(shown.contains("own best judgement"), "{shown}");
    assert!(shown.contains("state the assumptions"), "{shown}");
    assert!(
        shown.ends_with("- Which database? (options: PostgreSQL, SQLite)"),
        "{shown}"
    );
    assert_eq!(
        output.metadata.unwrap(),
        json!({"answered": false, "reason": "no_user"})
    );
}

#[test]
fn declined_says_so_and_not_to_ask_again() {
    let output = declined();
    assert!(text(&output).starts_with("The user declined to answer"));
    assert!(text(&output).contains("Do not ask them again"));
    assert_eq!(output.metadata.unwrap()["reason"], "declined");
}

#[test]
fn check_refuses_blank_and_duplicate_texts() {
    let good = [
        question("One?", &["a", "b"], false),
        question("Two?", &["a", "b"], true),
    ];
    assert_eq!(check(&good), Ok(()));

    let repeated = [
        question("Same?", &["a", "b"], false),
        question(" same? ", &["c", "d"], false),
    ];
    let err = check(&repeated).unwrap_err();
    assert!(
        err.contains("question 2 repeats an earlier question"),
        "{err}"
    );

    let labels = [question("Pick?", &["Yes", "yes"], false)];
    let err = check(&labels).unwrap_err();
    assert!(err.contains("offers the label \"yes\" twice"), "{err}");

    let blank_label = [question("Pick?", &["Yes", "  "], false)];
    let err = check(&blank_label).unwrap_err();
    assert_eq!(err, "option 2 of question 1 has an empty label");

    let mut blank_header = question("Pick?", &["a", "b"], false);
    blank_header.header = " ".into();
    let err = check(&[blank_header]).unwrap_err();
    assert!(err.contains("empty `header`"), "{err}");

    let blank_question = [question("\t", &["a", "b"], false)];
    assert!(
        check(&blank_question)
            .unwrap_err()
            .contains("empty `question`")
    );
}

#[test]
fn the_schema_has_claude_codes_names_and_bounds() {
    let root = schema();
    assert_eq!(root["required"], json!(["questions"]));
    let questions = &root["properties"]["questions"];
    assert_eq!(questions["minItems"], 1);
    assert_eq!(questions["maxItems"], 4);
    let item = resolve(&root, &questions["items"]);
    assert_eq!(item["required"], json!(["question", "header", "options"]));
    let props = &item["properties"];
    assert_eq!(props["header"]["maxLength"], 12);
    assert_eq!(props["header"]["minLength"], 1);
    assert_eq!(props["options"]["minItems"], 2);
    assert_eq!(props["options"]["maxItems"], 4);
    assert_eq!(props["multiSelect"]["type"], "boolean");
    assert_eq!(props["multiSelect"]["default"], false);
    let option = resolve(&root, &props["options"]["items"]);
    assert_eq!(option["required"], json!(["label", "description"]));
    let spec = kaizen_sdk::raw::spec::<AskUserQuestion>();
    assert_eq!(spec.name, "AskUserQuestion");
    assert!(spec.read_only);
}

#[test]
fn claude_code_input_deserializes_into_contract_questions() {
    let input: AskInput = serde_json::from_value(json!({
        "questions": [{
            "question": "Which approach?",
            "header": "Approach",
            "options": [
                {"label": "Rewrite (Recommended)", "description": "cleaner"},
                {"label": "Patch", "description": "faster"},
            ],
            "multiSelect": true,
        }, {
            "question": "Tests?",
            "header": "Tests",
            "options": [
                {"label": "Yes", "description": ""},
                {"label": "No", "description": ""},
            ],
        }],
    }))
    .unwrap();
    let questions = to_questions(input);
    assert_eq!(questions.len(), 2);
    assert!(questions[0].multi_select);
    assert!(!questions[1].multi_select, "multiSelect defaults to false");
    assert_eq!(questions[0].options[0].label, "Rewrite (Recommended)");
    assert_eq!(questions[0].options[1].description, "faster");
}
