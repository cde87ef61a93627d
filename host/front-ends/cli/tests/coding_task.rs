//! A whole coding task through `kaizen run`, as a model would drive it:
//! find the code, read it, run the test and see it fail, fix it with Edit,
//! run the test again, answer. Every tool is a built-in component; the
//! test runs in the OS sandbox.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::run::call_fields;
use common::workspace::Workspace;
use serde_json::json;

const CALC: &str = "def add(a, b):\n    return a - b\n";
const TEST: &str = "from calc import add\n\nassert add(2, 3) == 5, \"add(2, 3) should be 5\"\nprint(\"all tests passed\")\n";

#[tokio::test(flavor = "multi_thread")]
async fn find_read_edit_test_and_answer() {
    let ws = Workspace::new();
    let calc = ws.write("calc.py", CALC);
    ws.write("test_calc.py", TEST);

    let run = ws
        .scripted()
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
    assert_eq!(ws.read("calc.py"), "def add(a, b):\n    return a + b\n");

    assert_eq!(run.output.status.code(), Some(0));
    assert_eq!(run.result["status"], "complete");
    assert_eq!(run.result["cycles_used"], 6);
    assert_eq!(
        call_fields(&run.result, "name"),
        ["Grep", "Read", "Bash", "Edit", "Bash"]
    );
    assert_eq!(
        call_fields(&run.result, "status"),
        ["success"; 5],
        "{}",
        run.result["tool_calls"]
    );
}
