use super::*;

fn edited(text: &str, old: &str, new: &str, all: bool) -> Result<(String, Applied), EditError> {
    let mut text = text.to_owned();
    let applied = apply(&mut text, old, new, all)?;
    Ok((text, applied))
}

#[test]
fn a_unique_string_is_replaced_and_located() {
    let (text, applied) = edited("fn a() {}\nfn b() {}\n", "fn b", "fn beta", false).unwrap();
    assert_eq!(text, "fn a() {}\nfn beta() {}\n");
    assert_eq!(applied.count, 1);
    assert_eq!(&text[applied.first.clone()], "fn beta");
}

#[test]
fn several_matches_are_refused_with_their_lines_unless_replace_all() {
    let source = "x = 1\ny = 2\nx = 3\n";
    let err = edited(source, "x =", "z =", false).unwrap_err();
    assert_eq!(
        err,
        EditError::Ambiguous {
            count: 2,
            lines: vec![1, 3]
        }
    );
    let message = err.message("/w/a.py");
    assert!(message.contains("occurs 2 times in /w/a.py (starting on lines 1 and 3)"));
    assert!(message.contains("replace_all to true"), "{message}");
    let (text, applied) = edited(source, "x =", "z =", true).unwrap();
    assert_eq!(text, "z = 1\ny = 2\nz = 3\n");
    assert_eq!(applied.count, 2);
    assert_eq!(applied.first, 0..3);
}

#[test]
fn overlapping_occurrences_are_ambiguous() {
    let err = edited("aaa", "aa", "b", false).unwrap_err();
    assert!(
        matches!(err, EditError::Ambiguous { count: 2, .. }),
        "{err:?}"
    );
}

#[test]
fn identical_and_empty_strings_are_refused() {
    assert_eq!(
        edited("a", "a", "a", false).unwrap_err(),
        EditError::Identical
    );
    assert_eq!(
        edited("a", "", "b", false).unwrap_err(),
        EditError::EmptyOld
    );
    assert!(EditError::EmptyOld.message("/f").contains("use Write"));
}

#[test]
fn a_missing_string_says_what_probably_went_wrong() {
    let source = "def f():\n    return 1\n";
    let plain = edited(source, "def g():", "x", false).unwrap_err();
    assert_eq!(plain, EditError::NotFound { hint: None });
    assert!(
        plain
            .message("/w/f.py")
            .starts_with("old_string was not found in /w/f.py.")
    );

    let numbered = edited(source, "     1\tdef f():\n     2\t    return 1", "x", false);
    let message = numbered.unwrap_err().message("/w/f.py");
    assert!(message.contains("line numbers Read shows"), "{message}");

    let spacing = edited(source, "\treturn 1", "x", false).unwrap_err();
    let message = spacing.message("/w/f.py");
    assert!(
        message.contains("matches line 2 of the file except for indentation"),
        "{message}"
    );

    let tail = edited(source, "def f():\n    return 2", "x", false).unwrap_err();
    let message = tail.message("/w/f.py");
    assert!(message.contains("first line is on line 1"), "{message}");
}

#[test]
fn multibyte_text_is_matched_on_character_boundaries() {
    let (text, _) = edited("héllo wörld", "wörld", "world", false).unwrap();
    assert_eq!(text, "héllo world");
    let err = edited("ééé", "éé", "e", false).unwrap_err();
    assert!(matches!(err, EditError::Ambiguous { count: 2, .. }));
}

#[test]
fn snippets_show_the_change_with_context_in_cat_n_style() {
    let text: String = (1..=20).map(|n| format!("line {n}\n")).collect();
    let at = text.find("line 10").unwrap();
    let shown = snippet(&text, &(at..at + 7));
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.first(), Some(&"     6\tline 6"));
    assert_eq!(lines.last(), Some(&"    14\tline 14"));
    assert_eq!(lines.len(), 9);
    assert_eq!(snippet("", &(0..0)), "(the file is now empty)");
}

#[test]
fn a_long_change_is_cut_in_the_snippet() {
    let text: String = (1..=100).map(|n| format!("{n}\n")).collect();
    let shown = snippet(&text, &(0..text.len()));
    assert_eq!(shown.lines().count(), MAX_SNIPPET_LINES + 1);
    assert!(shown.ends_with("… (60 more lines)"), "{shown}");
}
