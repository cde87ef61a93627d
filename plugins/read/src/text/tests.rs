//! The pure pieces of text reading: sniffing, line splitting, rendering
//! and notes, over in-memory input.

use super::*;
use std::io::Cursor;

/// Every line of `input` as (kept text, character count).
fn lines(input: &[u8]) -> Vec<(String, usize)> {
    // A tiny buffer makes lines span several fills.
    let mut reader = BufReader::with_capacity(3, Cursor::new(input));
    let mut line = Line::default();
    let mut out = Vec::new();
    while read_line(&mut reader, &mut line).unwrap() {
        out.push((String::from_utf8_lossy(&line.head).into_owned(), line.chars));
    }
    out
}

fn rendered(number: usize, text: &str) -> String {
    let line = Line {
        head: text.as_bytes().to_vec(),
        chars: text.chars().count(),
    };
    let mut out = String::new();
    render_line(&mut out, number, &line);
    out
}

fn window(input: &str, start: usize, limit: usize) -> Window {
    let mut reader = BufReader::new(Cursor::new(input.as_bytes()));
    read_window(&mut reader, input.len() as u64, start, limit).unwrap()
}

#[test]
fn lines_split_on_newlines_and_drop_carriage_returns() {
    let own = |v: &[(&str, usize)]| -> Vec<(String, usize)> {
        v.iter().map(|(s, n)| (s.to_string(), *n)).collect()
    };
    assert_eq!(lines(b""), own(&[]));
    assert_eq!(lines(b"a\n"), own(&[("a", 1)]));
    assert_eq!(lines(b"a\nbcdef"), own(&[("a", 1), ("bcdef", 5)]));
    assert_eq!(lines(b"\n\n"), own(&[("", 0), ("", 0)]));
    assert_eq!(
        lines(b"one\r\ntwo\r\nthree"),
        own(&[("one", 3), ("two", 3), ("three", 5)])
    );
    // A lone \r inside a line stays; \r only goes before \n.
    assert_eq!(lines(b"a\rb\n"), own(&[("a\rb", 3)]));
    // Characters, not bytes.
    assert_eq!(lines("héllo→\n".as_bytes()), own(&[("héllo→", 6)]));
}

#[test]
fn very_long_lines_keep_only_their_head_but_count_every_character() {
    let long = "é".repeat(10_000) + "\r\n";
    let got = lines(long.as_bytes());
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1, 10_000);
    assert_eq!(got[0].0.len(), KEEP_BYTES);
}

#[test]
fn counting_and_skipping_count_a_last_line_without_newline() {
    let count = |input: &[u8]| count_lines(&mut Cursor::new(input)).unwrap();
    assert_eq!(count(b""), 0);
    assert_eq!(count(b"a"), 1);
    assert_eq!(count(b"a\n"), 1);
    assert_eq!(count(b"a\nb"), 2);
    assert_eq!(count(b"\n\n\n"), 3);
    let mut reader = Cursor::new(b"1\n2\n3".as_slice());
    assert_eq!(skip_lines(&mut reader, 2).unwrap(), 2);
    assert_eq!(count_lines(&mut reader).unwrap(), 1);
    let mut reader = Cursor::new(b"1\n2\n3".as_slice());
    assert_eq!(skip_lines(&mut reader, 10).unwrap(), 3);
}

#[test]
fn lines_render_like_cat_n() {
    assert_eq!(rendered(1, "fn main() {"), "     1\tfn main() {\n");
    assert_eq!(rendered(42, ""), "    42\t\n");
    assert_eq!(rendered(123_456, "x"), "123456\tx\n");
    assert_eq!(rendered(1_234_567, "x"), "1234567\tx\n");
    assert_eq!(rendered(7, "\tindented"), "     7\t\tindented\n");
}

#[test]
fn long_lines_are_cut_at_a_character_boundary_with_a_marker() {
    let line = "ж".repeat(2500);
    let out = rendered(3, &line);
    let expected = format!(
        "     3\t{}… [line cut: 2500 characters, the first 2000 shown]\n",
        "ж".repeat(2000)
    );
    assert_eq!(out, expected);
    // Exactly the limit is not cut.
    let exact = "a".repeat(MAX_LINE_CHARS);
    assert_eq!(rendered(1, &exact), format!("     1\t{exact}\n"));
}

#[test]
fn invalid_utf8_shows_as_replacement_characters() {
    let line = Line {
        head: b"caf\xe9".to_vec(),
        chars: 4,
    };
    let mut out = String::new();
    render_line(&mut out, 1, &line);
    assert_eq!(out, "     1\tcaf\u{fffd}\n");
}

#[test]
fn sniffing_finds_nul_bytes_and_much_invalid_utf8() {
    assert_eq!(sniff(b"plain text\n"), None);
    assert_eq!(sniff("ünïcödé".as_bytes()), None);
    assert_eq!(sniff(b"ab\0cd"), Some(Binary::Nul(2)));
    // A few stray bytes (Latin-1 accents) are tolerated.
    assert_eq!(sniff(b"caf\xe9 cr\xe8me"), None);
    let many = b"\xff ".repeat(MAX_INVALID_SEQUENCES + 1);
    assert_eq!(
        sniff(&many),
        Some(Binary::InvalidUtf8(MAX_INVALID_SEQUENCES + 1))
    );
    // A character cut by the end of the sample is not invalid.
    let cut = &"aé".as_bytes()[..2];
    assert_eq!(sniff(cut), None);
}

#[test]
fn notes_say_which_lines_were_shown_and_how_to_go_on() {
    assert_eq!(
        window_note(1, 2000, Some(5000), Stop::Limit),
        "(Showing lines 1-2000 of 5000. To read on, call Read again with offset=2001; use \
         offset and limit to read any other part.)"
    );
    let size = window_note(10, 20, Some(30), Stop::Size);
    assert!(
        size.starts_with("(Showing lines 10-20 of 30 (more would make the result larger than"),
        "{size}"
    );
    assert!(size.contains("offset=21"), "{size}");
    let unknown = window_note(1, 5, None, Stop::Limit);
    assert!(
        unknown.starts_with("(Showing lines 1-5; the file goes on past them."),
        "{unknown}"
    );
}

#[test]
fn windows_show_the_asked_lines_and_count_the_rest() {
    let input = "a\nb\nc\nd\ne\n";
    let all = window(input, 1, 2000);
    assert_eq!(
        all.text,
        "     1\ta\n     2\tb\n     3\tc\n     4\td\n     5\te\n"
    );
    assert_eq!((all.shown, all.total, all.stop), (5, Some(5), None));

    let middle = window(input, 2, 2);
    assert_eq!(middle.text, "     2\tb\n     3\tc\n");
    assert_eq!(
        (middle.shown, middle.total, middle.stop),
        (2, Some(5), Some(Stop::Limit))
    );

    // A window ending exactly at the last line has no note.
    let tail = window(input, 4, 2);
    assert_eq!((tail.shown, tail.stop), (2, None));

    let past = window(input, 9, 3);
    assert_eq!((past.shown, past.total), (0, Some(5)));
    let just_past = window(input, 6, 3);
    assert_eq!((just_past.shown, just_past.total), (0, Some(5)));
}

#[test]
fn windows_stop_before_growing_past_the_output_cap() {
    let line = "x".repeat(1000);
    let input = format!("{line}\n").repeat(1000);
    let got = window(&input, 1, 2000);
    assert!(got.text.len() <= MAX_OUTPUT_BYTES - NOTE_ROOM);
    // About 1008 bytes a numbered line: as many as fit, and no more.
    let fit = (MAX_OUTPUT_BYTES - NOTE_ROOM) / 1008;
    assert!(
        (fit - 2..=fit).contains(&got.shown),
        "{} of {fit}",
        got.shown
    );
    assert_eq!((got.total, got.stop), (Some(1000), Some(Stop::Size)));
}
