use super::*;

fn parse(text: &str) -> Result<Skill, String> {
    Skill::parse(text.as_bytes(), Path::new("/w/.claude/skills/pdf-forms"))
}

#[test]
fn reads_claude_codes_front_matter() {
    let skill = parse(
        "---\nname: pdf-forms\ndescription: Fills PDF forms. Use when the user asks to fill a form.\n\
         allowed-tools: Read, Bash(python3 scripts/fill.py:*) Grep\nmodel: sonnet\n---\n\n# PDF forms\n\nRun scripts/fill.py.\n",
    )
    .unwrap();
    assert_eq!(skill.name, "pdf-forms");
    assert_eq!(
        skill.description,
        "Fills PDF forms. Use when the user asks to fill a form."
    );
    assert_eq!(
        skill.allowed_tools,
        ["Read", "Bash(python3 scripts/fill.py:*)", "Grep"]
    );
    assert_eq!(skill.body, "# PDF forms\n\nRun scripts/fill.py.\n");
}

#[test]
fn reads_quoted_block_and_list_values() {
    let skill = parse(
        "---\r\nname: \"pdf-forms\"\r\ndescription: >\r\n  Fills forms,\r\n  page by page.\r\n\
         allowed-tools:\r\n  - Read\r\n  - Write\r\nunknown: [a, b]\r\n---\r\nBody\r\n",
    )
    .unwrap();
    assert_eq!(skill.name, "pdf-forms");
    assert_eq!(skill.description, "Fills forms, page by page.");
    assert_eq!(skill.allowed_tools, ["Read", "Write"]);
    let skill = parse("---\nallowed-tools: [Read, \"Grep\"]\n---\nBody").unwrap();
    assert_eq!(skill.allowed_tools, ["Read", "Grep"]);
}

#[test]
fn a_missing_name_or_description_comes_from_the_folder_and_the_body() {
    let skill = parse("# Title\n\nFills forms\nwell.\n\nMore.").unwrap();
    assert_eq!(skill.name, "pdf-forms");
    assert_eq!(skill.description, "Fills forms well.");
    // An unclosed front matter is body.
    let skill = parse("---\nname: x\n").unwrap();
    assert_eq!(skill.name, "pdf-forms");
}

#[test]
fn names_claude_code_refuses_and_text_that_is_not_utf8_are_refused() {
    assert!(parse("---\nname: PDF Forms\n---\n").is_err());
    assert!(parse(&format!("---\nname: {}\n---\n", "a".repeat(65))).is_err());
    assert!(Skill::parse(b"\xff\xfe", Path::new("/w/s")).is_err());
}

#[test]
fn loading_puts_the_arguments_where_the_skill_says() {
    let skill = parse("---\nname: greet\n---\nGreet $ARGUMENTS warmly.").unwrap();
    assert_eq!(
        skill.load("Bob"),
        "Base directory for this skill: /w/.claude/skills/pdf-forms\n\nGreet Bob warmly."
    );
    let skill = parse("---\nname: greet\n---\nGreet them.").unwrap();
    assert!(skill.load("Bob").ends_with("Greet them.\n\nARGUMENTS: Bob"));
    assert!(skill.load("").ends_with("Greet them."));
    let long = parse(&format!(
        "---\nname: long\n---\n{}",
        "é".repeat(MAX_BODY_BYTES)
    ))
    .unwrap();
    let loaded = long.load("");
    assert!(loaded.len() < MAX_BODY_BYTES + 200);
    assert!(loaded.ends_with("not shown: read it with Read]"));
}

#[test]
fn skills_are_found_in_their_folders_and_bad_ones_are_noted() {
    let dir = tempfile::tempdir().unwrap();
    for (folder, text) in [
        (
            "greet",
            "---\nname: greet\ndescription: Says hello\n---\nHello",
        ),
        ("Bad Name", "---\nname: Bad Name\n---\n"),
    ] {
        std::fs::create_dir(dir.path().join(folder)).unwrap();
        std::fs::write(dir.path().join(folder).join("SKILL.md"), text).unwrap();
    }
    std::fs::create_dir(dir.path().join("no-skill-here")).unwrap();
    let (skills, notes) = from_dir(dir.path());
    assert_eq!(skills.len(), 1);
    assert_eq!(skills[0].dir, dir.path().join("greet"));
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("Bad Name"), "{notes:?}");
}
