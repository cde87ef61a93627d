use super::*;
use kaizen_cluster::asks::Choices;
use kaizen_protocol::ApprovalRequest;

fn approval() -> Question {
    Question::Approval(ApprovalRequest {
        tool: "Bash".into(),
        input: serde_json::json!({"command": "make"}),
        reason: "it asks".into(),
        always_rule: "Bash(make)".into(),
        danger: None,
        agent: None,
        call_id: String::new(),
    })
}

fn choices() -> Question {
    Question::Choices {
        plugin: "ask".into(),
        questions: vec![
            Choices {
                question: "Which database?".into(),
                header: "Database".into(),
                options: vec![
                    ("PostgreSQL".into(), "a server".into()),
                    ("SQLite".into(), "a file".into()),
                ],
                multi_select: false,
            },
            Choices {
                question: "Which checks?".into(),
                header: "Checks".into(),
                options: vec![
                    ("lint".into(), String::new()),
                    ("test".into(), String::new()),
                ],
                multi_select: true,
            },
        ],
    }
}

/// The reply `flags` give, as `kaizen approve` takes them.
fn reply(flags: &[&str]) -> Reply {
    let mut reply = Reply::default();
    let mut flags = flags.iter();
    while let Some(flag) = flags.next() {
        match *flag {
            "--allow" => reply.allow = true,
            "--always" => reply.always = true,
            "--deny" => reply.deny = Some(String::new()),
            "--answer" => reply.answers.push(flags.next().unwrap().to_string()),
            reason => reply.deny = Some(reason.to_string()),
        }
    }
    reply
}

#[test]
fn approvals_take_allow_always_or_deny_and_nothing_else() {
    let given = |flags: &[&str]| reply(flags).answer(&approval());
    assert_eq!(given(&["--allow"]).unwrap(), Some(Answer::Once));
    assert_eq!(given(&["--always"]).unwrap(), Some(Answer::Always));
    assert_eq!(
        given(&["--deny", "use make test"]).unwrap(),
        Some(Answer::Deny {
            message: "use make test".into()
        })
    );
    assert_eq!(
        given(&["--deny"]).unwrap(),
        Some(Answer::Deny {
            message: String::new()
        })
    );
    assert_eq!(given(&[]).unwrap(), None);
    let wrong = given(&["--answer", "1"]).unwrap_err().to_string();
    assert!(wrong.contains("--allow"), "{wrong}");
}

#[test]
fn questions_take_one_answer_each_by_number_or_text() {
    let given = |flags: &[&str]| reply(flags).answer(&choices());
    assert_eq!(
        given(&["--answer", "2", "--answer", "1,2"]).unwrap(),
        Some(Answer::Chosen {
            selected: vec![vec!["SQLite".into()], vec!["lint".into(), "test".into()]]
        })
    );
    assert_eq!(
        given(&["--answer", "DuckDB", "--answer", "2"]).unwrap(),
        Some(Answer::Chosen {
            selected: vec![vec!["DuckDB".into()], vec!["test".into()]]
        })
    );
    assert_eq!(given(&["--deny"]).unwrap(), Some(Answer::Declined));
    let short = given(&["--answer", "1"]).unwrap_err().to_string();
    assert!(short.contains("2 questions"), "{short}");
    let bad = given(&["--answer", "1,2", "--answer", "1"])
        .unwrap_err()
        .to_string();
    assert!(bad.contains("Which database?"), "{bad}");
    let wrong = given(&["--allow"]).unwrap_err().to_string();
    assert!(wrong.contains("--answer"), "{wrong}");
}

#[test]
fn answers_go_through_the_cluster_named_or_the_sessions_own() {
    let pending = |cluster: Option<&str>| Pending {
        id: "s1".into(),
        cluster: cluster.map(str::to_string),
        waiting: Vec::new(),
    };
    assert!(pending(Some("http://c:8080")).cluster(None).is_ok());
    assert!(pending(None).cluster(Some("http://c:8080".into())).is_ok());
    let nowhere = pending(None).cluster(None).unwrap_err().to_string();
    assert!(nowhere.contains("--cluster URL"), "{nowhere}");
}
