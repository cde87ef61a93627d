use super::*;

const GOOD: &str = r#"
[plugin]
name = "hello"
version = "0.1.0"
contract = "0.1.0"
kinds = ["tool"]

[capabilities]
filesystem = [{ path = "$WORKSPACE", access = "read-write" }]
http = ["*.example.com", "https://api.example.org:8443"]
process = { programs = ["git"], network = false }
env = ["LANG"]
interaction = true

[limits]
memory-mib = 64
cpu-seconds = 2.5
"#;

fn parse(text: &str) -> Result<Manifest, ManifestError> {
    Manifest::parse(text, Path::new("/p/plugin.toml"))
}

fn error(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

#[test]
fn a_complete_manifest_parses() {
    let m = parse(GOOD).unwrap();
    assert_eq!(m.plugin.name, "hello");
    assert_eq!(m.plugin.kinds, vec![PluginKind::Tool]);
    assert_eq!(m.capabilities.http.len(), 2);
    assert_eq!(m.limits.memory_mib, Some(64));
    assert_eq!(
        m.component_path(Path::new("/p")),
        PathBuf::from("/p/hello.wasm")
    );
}

#[test]
fn missing_file_says_what_a_plugin_directory_needs() {
    let dir = std::env::temp_dir().join("kaizen-no-manifest-here");
    let _ = std::fs::create_dir_all(&dir);
    let err = Manifest::load(&dir).unwrap_err().to_string();
    assert!(err.contains("has no plugin.toml"), "{err}");
    assert!(err.contains("its version and kinds"), "{err}");
}

#[test]
fn bad_toml_points_at_the_line() {
    let err = error("[plugin]\nname = \"x\"\nversion = 0.1.0\n");
    assert!(err.contains("/p/plugin.toml"), "{err}");
    assert!(err.contains("line 3"), "{err}");
}

#[test]
fn unknown_capability_is_named_with_advice() {
    let text = GOOD.replace("interaction = true", "teleport = true");
    let err = error(&text);
    assert!(err.contains("unknown field `teleport`"), "{err}");
    assert!(err.contains("expected one of"), "{err}");
    assert!(err.contains("check the spelling"), "{err}");
}

#[test]
fn the_contract_is_an_optional_note() {
    // The host reads the version from the component; the manifest's word
    // neither admits nor refuses one.
    let noted = parse(&GOOD.replace("contract = \"0.1.0\"", "contract = \"9.0.0\"")).unwrap();
    assert_eq!(noted.plugin.contract.as_deref(), Some("9.0.0"));
    let unsaid = parse(&GOOD.replace("contract = \"0.1.0\"\n", "")).unwrap();
    assert_eq!(unsaid.plugin.contract, None);
}

#[test]
fn unknown_kind_lists_the_valid_ones() {
    let err = error(&GOOD.replace("kinds = [\"tool\"]", "kinds = [\"widget\"]"));
    assert!(err.contains("widget"), "{err}");
    assert!(err.contains("tool"), "{err}");
}

#[test]
fn values_are_checked() {
    let cases = [
        (
            GOOD.replace("name = \"hello\"", "name = \"Hello World\""),
            "plugin name",
        ),
        (
            GOOD.replace("kinds = [\"tool\"]", "kinds = []"),
            "`kinds` is empty",
        ),
        (
            GOOD.replace("$WORKSPACE\"", "relative/dir\""),
            "must be absolute",
        ),
        (GOOD.replace("*.example.com", "ftp://x"), "http pattern"),
        (
            GOOD.replace("memory-mib = 64", "memory-mib = 0"),
            "memory-mib",
        ),
        (
            GOOD.replace("cpu-seconds = 2.5", "cpu-seconds = -1.0"),
            "cpu-seconds",
        ),
        (
            GOOD.replace(
                "kinds = [\"tool\"]",
                "kinds = [\"tool\"]\ncomponent = \"../x.wasm\"",
            ),
            "inside the plugin directory",
        ),
        (
            format!("{GOOD}\n[danger]\nDeploy = \"severe\"\n"),
            "[danger] Deploy: `severe` is not a danger level",
        ),
    ];
    for (text, expected) in cases {
        let err = error(&text);
        assert!(err.contains(expected), "expected `{expected}` in: {err}");
    }
}

fn spec(name: &str, danger: Danger) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: String::new(),
        input_schema: serde_json::json!({"type": "object"}),
        danger,
        read_only: false,
    }
}

#[test]
fn the_danger_table_refines_or_raises_a_component_s_levels_never_lowers_a_tier() {
    let manifest = parse(&format!(
        "{GOOD}\n[danger]\nDeploy = \"CRITICAL\"\nNote = \"low\"\n"
    ))
    .unwrap();
    let tools = manifest
        .leveled(vec![
            spec("Deploy", Danger::High),
            spec("Note", Danger::Medium),
            spec("Other", Danger::Medium),
        ])
        .unwrap();
    let levels: Vec<Danger> = tools.iter().map(|t| t.danger).collect();
    assert_eq!(levels, [Danger::Critical, Danger::Low, Danger::Medium]);

    // Raising across tiers is allowed; lowering one is not.
    let raised = parse(&format!("{GOOD}\n[danger]\nNote = \"high\"\n")).unwrap();
    assert_eq!(
        raised.leveled(vec![spec("Note", Danger::Safe)]).unwrap()[0].danger,
        Danger::High
    );
    let lowered = parse(&format!("{GOOD}\n[danger]\nRun = \"medium\"\n")).unwrap();
    let err = lowered
        .leveled(vec![spec("Run", Danger::High)])
        .unwrap_err();
    assert!(
        err.contains("below the high the component declares"),
        "{err}"
    );

    // A name the component does not declare is a mistake, not a no-op.
    let misspelt = parse(&format!("{GOOD}\n[danger]\nDeplyo = \"critical\"\n")).unwrap();
    let err = misspelt
        .leveled(vec![spec("Deploy", Danger::High)])
        .unwrap_err();
    assert!(
        err.contains("`Deplyo`, which the component does not declare (its tools: Deploy)"),
        "{err}"
    );
}
