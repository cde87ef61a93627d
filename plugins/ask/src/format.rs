//! What `AskUserQuestion` checks beyond the schema, and the texts it gives
//! the model back.

use kaizen_sdk::host::interaction::{Answer, Question};
use kaizen_sdk::serde_json::{Map, Value};
use kaizen_sdk::{Output, json};

/// Problems the schema cannot express: blank texts, and duplicates that
/// would make an answer ambiguous (answers name their question by its text,
/// and a user picks an option by its label).
pub fn check(questions: &[Question]) -> Result<(), String> {
    for (i, q) in questions.iter().enumerate() {
        let n = i + 1;
        if q.question.trim().is_empty() {
            return Err(format!("question {n} has an empty `question` text"));
        }
        if q.header.trim().is_empty() {
            return Err(format!(
                "question {n} has an empty `header`; give a short label such as \"Approach\""
            ));
        }
        if questions[..i]
            .iter()
            .any(|earlier| same(&earlier.question, &q.question))
        {
            return Err(format!(
                "question {n} repeats an earlier question (\"{}\"); each question must be distinct",
                q.question.trim()
            ));
        }
        for (j, option) in q.options.iter().enumerate() {
            if option.label.trim().is_empty() {
                return Err(format!(
                    "option {} of question {n} has an empty label",
                    j + 1
                ));
            }
            if q.options[..j]
                .iter()
                .any(|earlier| same(&earlier.label, &option.label))
            {
                return Err(format!(
                    "question {n} offers the label \"{}\" twice; option labels must be distinct",
                    option.label.trim()
                ));
            }
        }
    }
    Ok(())
}

/// Equal after trimming, ignoring case: what a reader would call the same.
fn same(a: &str, b: &str) -> bool {
    a.trim().to_lowercase() == b.trim().to_lowercase()
}

/// The answers, one line per question, in the order asked.
pub fn answered(questions: &[Question], answers: &[Answer]) -> Output {
    let mut text = String::from("The user answered your questions:\n");
    let mut by_question = Map::new();
    for (i, q) in questions.iter().enumerate() {
        let selected = answer_for(questions, i, answers);
        text.push_str(&format!(
            "{}. {} → {}\n",
            i + 1,
            q.question.trim(),
            describe(q, selected)
        ));
        by_question.insert(q.question.clone(), json!(selected));
    }
    text.push_str("Continue with these answers in mind.");
    Output::text(text).with_metadata(json!({
        "answered": true,
        "answers": Value::Object(by_question),
    }))
}

/// What the user gave for the `index`-th question: the answer naming it,
/// else the answer in its position unless that one names another question.
fn answer_for<'a>(questions: &[Question], index: usize, answers: &'a [Answer]) -> &'a [String] {
    let question = &questions[index].question;
    answers
        .iter()
        .find(|a| a.question == *question)
        .or_else(|| {
            answers
                .get(index)
                .filter(|a| !questions.iter().any(|q| q.question == a.question))
        })
        .map_or(&[], |a| a.selected.as_slice())
}

/// `PostgreSQL`, `Auth, Search`, `their own answer: "…"`, or a mix; an
/// entry that is not one of the labels is the user's own text.
fn describe(question: &Question, selected: &[String]) -> String {
    let (labels, own): (Vec<&String>, Vec<&String>) = selected
        .iter()
        .partition(|s| question.options.iter().any(|o| o.label == **s));
    let mut parts: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
    parts.extend(
        own.iter()
            .map(|text| format!("their own answer: \"{}\"", text.trim())),
    );
    if parts.is_empty() {
        "(no answer)".into()
    } else {
        parts.join(", ")
    }
}

/// Nobody can answer in this run: the model must go on by itself.
pub fn no_user(questions: &[Question]) -> Output {
    let mut text = String::from(
        "No user is available to answer questions in this run: it is not interactive (a \
         script, CI, or a sub-agent), so nobody will see them. Do not ask again. Proceed on \
         your own best judgement, and in your final answer state the assumptions you made in \
         place of the answers to:\n",
    );
    for q in questions {
        let labels: Vec<&str> = q.options.iter().map(|o| o.label.as_str()).collect();
        text.push_str(&format!(
            "- {} (options: {})\n",
            q.question.trim(),
            labels.join(", ")
        ));
    }
    Output::text(text.trim_end()).with_metadata(json!({
        "answered": false,
        "reason": "no_user",
    }))
}

/// The user saw the questions and chose not to answer.
pub fn declined() -> Output {
    Output::text(
        "The user declined to answer these questions. Do not ask them again. Carry on with \
         your best judgement and state the assumptions you made, or, if the task cannot be \
         done without the answers, stop and explain what you need from the user.",
    )
    .with_metadata(json!({
        "answered": false,
        "reason": "declined",
    }))
}
