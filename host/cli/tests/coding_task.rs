//! A whole coding task through `kaizen run`, as a model would drive it:
//! find the code, read it, run the test and see it fail, fix it with Edit,
//! run the test again, answer. Every tool is a built-in component; the
//! test runs in the OS sandbox.

mod common;

use common::session::Session;
use serde_json::json;

const CALC: &str = "def add(a, b):\n    return a - b\n";
const TEST: &str = "from calc import add\n\nassert add(2, 3) == 5, \"add(2, 3) should be 5\"\nprint(\"all tests passed\")\n";

#[tokio::test(flavor = "multi_thread")]
async fn find_read_edit_test_and_answer() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().canonicalize().unwrap();
    std::fs::write(ws.join("calc.py"), CALC).unwrap();
    std::fs::write(ws.join("test_calc.py"), TEST).unwrap();
    let calc = ws.join("calc.py").display().to_string();

    let run = Session::new(home.path(), &ws)
        .run(&[
            ("Grep", json!({ "pattern": "def add" })),
            ("Read", json!({ "file_path": calc })),
            ("Bash", json!({ "command": "python3 -B test_calc.py", "description": "Run the tests" })),
            (
                "Edit",
                json!({ "file_path": calc, "old_string": "return a - b", "new_string": "return a + b" }),
            ),
            ("Bash", json!({ "command": "python3 -B test_calc.py", "description": "Run the tests again" })),
        ])
        .await;

    let r = &run.results;
    assert!(r[0].contains(&calc), "Grep finds the file: {}", r[0]);
    assert!(
        r[1].contains("return a - b"),
        "Read shows the code: {}",
        r[1]
    );
    assert!(
        r[2].contains("add(2, 3) should be 5"),
        "the test fails first: {}",
        r[2]
    );
    assert!(r[2].ends_with("Exit code 1"), "{}", r[2]);
    assert!(
        !r[3].to_lowercase().contains("error"),
        "the edit applies: {}",
        r[3]
    );
    assert_eq!(r[4], "all tests passed");
    assert_eq!(
        std::fs::read_to_string(ws.join("calc.py")).unwrap(),
        "def add(a, b):\n    return a + b\n"
    );

    assert_eq!(run.output.status.code(), Some(0));
    assert_eq!(run.result["status"], "complete");
    assert_eq!(run.result["cycles_used"], 6);
    let names: Vec<&str> = run.result["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|call| call["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Grep", "Read", "Bash", "Edit", "Bash"]);
    assert!(
        run.result["tool_calls"]
            .as_array()
            .unwrap()
            .iter()
            .all(|call| call["status"] == "success"),
        "{}",
        run.result["tool_calls"]
    );
}
