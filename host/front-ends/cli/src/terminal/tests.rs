use super::prompt::{clean, parse, printable, render};
use super::{StatusLine, TerminalInteraction};
use kaizen_plugin_host::interaction::{Choice, Interaction, Question};
use std::sync::{Arc, Mutex};

fn question(labels: &[&str], multi_select: bool) -> Question {
    Question {
        question: "Which one?".into(),
        header: "Pick".into(),
        options: labels
            .iter()
            .map(|label| Choice {
                label: (*label).into(),
                description: String::new(),
            })
            .collect(),
        multi_select,
    }
}

fn picked(question: &Question, line: &str) -> Vec<String> {
    parse(question, line).unwrap_or_else(|why| panic!("{line:?} refused: {why}"))
}

#[test]
fn a_number_picks_its_option() {
    let q = question(&["Red", "Green", "Blue"], false);
    assert_eq!(picked(&q, "2\n"), ["Green"]);
    assert_eq!(picked(&q, "  3 "), ["Blue"]);
}

#[test]
fn several_numbers_pick_several_options_in_option_order() {
    let q = question(&["Red", "Green", "Blue"], true);
    assert_eq!(picked(&q, "3,1"), ["Red", "Blue"]);
    assert_eq!(picked(&q, "1, 3 3"), ["Red", "Blue"]);
    assert_eq!(picked(&q, "2"), ["Green"]);
}

#[test]
fn other_text_is_the_users_own_answer() {
    let q = question(&["Red", "Green"], false);
    assert_eq!(picked(&q, "  teal, please\n"), ["teal, please"]);
    assert_eq!(picked(&q, "2 weeks"), ["2 weeks"]);
    assert_eq!(picked(&q, "+1"), ["+1"]);
}

#[test]
fn bad_lines_are_refused_with_a_reason() {
    let single = question(&["Red", "Green", "Blue"], false);
    let why = parse(&single, "4").unwrap_err();
    assert!(
        why.contains("no option 4") && why.contains("1 to 3"),
        "{why}"
    );
    assert!(parse(&single, "0").unwrap_err().contains("no option 0"));
    let why = parse(&single, "1,2").unwrap_err();
    assert!(why.contains("only one option"), "{why}");
    for blank in ["", "\n", "  ", " , "] {
        let why = parse(&single, blank).unwrap_err();
        assert!(
            why.contains("Type a number from 1 to 3"),
            "{blank:?}: {why}"
        );
    }
    let multi = question(&["Red", "Green"], true);
    assert!(parse(&multi, "1,3").unwrap_err().contains("no option 3"));
    let huge = parse(&multi, "99999999999999999999999").unwrap_err();
    assert!(huge.contains("no option"), "{huge}");
}

#[test]
fn render_numbers_the_options_and_says_how_to_answer() {
    let mut q = question(&["Red", "Green"], false);
    q.options[1].description = "the color of grass".into();
    let shown = render(&q, 1, 3);
    assert!(shown.contains("[2/3] "), "{shown}");
    assert!(shown.contains("Which one?"), "{shown}");
    assert!(shown.contains("  1. Red\n"), "{shown}");
    assert!(
        shown.contains("  2. Green \x1b[2m— the color of grass"),
        "{shown}"
    );
    assert!(shown.contains("type your own answer"), "{shown}");
    assert!(shown.contains("(1-2)"), "{shown}");
    assert!(!render(&q, 0, 1).contains("[1/1]"));
    q.multi_select = true;
    assert!(render(&q, 0, 1).contains("separated by commas"));
}

#[test]
fn model_text_cannot_send_escape_sequences_to_the_terminal() {
    let mut q = question(&["Red\x1b[2J", "Gre\ren"], false);
    q.question = "Which\x1b]0;pwned\x07 one?\nReally?".into();
    let shown = render(&q, 0, 1);
    assert!(
        !shown.contains("\x1b[2J") && !shown.contains("\x1b]0"),
        "{shown:?}"
    );
    assert!(
        !shown.contains('\r') && !shown.contains('\x07'),
        "{shown:?}"
    );
    assert!(shown.contains("Which]0;pwned one?\nReally?"), "{shown:?}");
    assert_eq!(clean("a\tb\x00c\x7f"), "a\tbc");
}

#[test]
fn prompts_drop_what_makes_text_read_otherwise_and_output_drops_control() {
    // "Allow `rm -rf ~`?" shown reversed by an override, or a command
    // hidden by zero-width characters.
    let tricky = "ls \u{202E}~ fr- mr\u{202C} \u{200B}x\u{2066}y\u{2069}\u{FEFF}";
    assert_eq!(clean(tricky), "ls ~ fr- mr xy");
    // Output keeps such letters (they are text), never control bytes: an
    // OSC 52 clipboard write, a screen clear, a title.
    let said = "done\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x1b]0;pwned\x07\n\tok";
    assert_eq!(printable(said), "done]52;c;cm0gLXJmIH4=[2J]0;pwned\n\tok");
    assert!(matches!(printable("plain"), std::borrow::Cow::Borrowed(_)));
}

/// A status display that records what it was given.
#[derive(Default)]
struct Recorder {
    shown: Mutex<Vec<String>>,
    available: bool,
}

impl StatusLine for Recorder {
    fn show_progress(&self, line: &str) -> bool {
        if self.available {
            self.shown.lock().unwrap().push(line.to_string());
        }
        self.available
    }

    fn set_prompting(&self, _open: bool) {}
}

#[test]
fn progress_goes_to_the_status_line_without_control_characters() {
    let status = Arc::new(Recorder {
        available: true,
        ..Recorder::default()
    });
    let terminal = TerminalInteraction::new(status.clone(), Default::default());
    terminal.progress("fetch", "downloading\x1b[2J page\nnow", Some(0.5));
    terminal.progress("fetch", "done", None);
    assert_eq!(
        *status.shown.lock().unwrap(),
        [
            "kaizen: fetch: downloading[2J page now (50%)",
            "kaizen: fetch: done"
        ]
    );
    // Without a display it is logged instead, and nothing breaks.
    let silent = Arc::new(Recorder::default());
    TerminalInteraction::new(silent.clone(), Default::default()).progress("fetch", "done", None);
    assert!(silent.shown.lock().unwrap().is_empty());
}
