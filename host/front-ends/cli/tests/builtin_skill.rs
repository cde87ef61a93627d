//! Claude Code's skills and slash commands through the real `kaizen run`,
//! with real skill folders and command files: the user's are listed in
//! the system prompt and loaded by the `Skill` tool, with their folder and
//! arguments; a task typed as `/name args` runs that command's prompt; a
//! workspace's count only once the workspace is trusted (until then they
//! are left out, and the run says so); a permission rule can deny a
//! skill; `kaizen tools call Skill` loads one without a model; and an
//! agent file is a sub-agent type `Task` starts, with its instructions
//! and only its tools.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::claude_project::Project;

use common::run::{result_of, run_command, tool_results};
use kaizen_model_server::{ModelServer, Recorded, Reply, Wire};
use serde_json::json;
use std::path::Path;
use std::process::Output;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

const GREET: &str = "---\nname: greet\ndescription: Greets someone by name. Use when asked to greet.\n\
    allowed-tools: Bash(./scripts/hello.sh:*)\n---\n\n# Greeting\n\nRun scripts/hello.sh with $ARGUMENTS.\n";

const REVIEW: &str =
    "---\nname: review\ndescription: Reviews the workspace's changes.\n---\nLook at git diff.\n";

fn system(request: &Recorded) -> String {
    request.body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_users_skill_is_listed_up_front_and_loaded_on_use() {
    let project = Project::new();
    let dir = project.claude_user.path().join("skills/greet");
    write(&dir.join("SKILL.md"), GREET);
    write(&dir.join("scripts/hello.sh"), "echo hello \"$1\"\n");
    let (out, requests) = project
        .run(
            vec![
                Reply::tool(
                    "Skill",
                    &json!({"skill": "greet", "args": "Bob"}).to_string(),
                ),
                Reply::text("Done."),
            ],
            &[],
        )
        .await;
    assert_eq!(result_of(&out)["status"], "complete", "{out:?}");
    let prompt = system(&requests[0]);
    assert!(
        prompt.contains("- greet: Greets someone by name. Use when asked to greet."),
        "{prompt}"
    );
    // The body is not in the prompt: only what it is for.
    assert!(!prompt.contains("scripts/hello.sh"), "{prompt}");
    let results = tool_results(&requests[1].body);
    assert_eq!(results.len(), 1);
    assert!(
        results[0].contains(&format!("Base directory for this skill: {}", dir.display())),
        "{}",
        results[0]
    );
    assert!(
        results[0].contains("Run scripts/hello.sh with Bob."),
        "{}",
        results[0]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_workspaces_skills_count_only_once_it_is_trusted() {
    let project = Project::new();
    write(
        &project.root().join(".claude/skills/review/SKILL.md"),
        REVIEW,
    );
    let call = || Reply::tool("Skill", &json!({"skill": "review"}).to_string());
    let (out, requests) = project.run(vec![call(), Reply::text("Done.")], &[]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(".claude/skills: its skills are not used (the workspace is not trusted)"),
        "{stderr}"
    );
    assert!(
        !system(&requests[0]).contains("review"),
        "{}",
        system(&requests[0])
    );
    // No skill at all: no Skill tool.
    let results = tool_results(&requests[1].body);
    assert!(results[0].contains("Skill"), "{}", results[0]);
    assert!(!results[0].contains("Look at git diff"), "{}", results[0]);

    project.trust();
    let (out, requests) = project.run(vec![call(), Reply::text("Done.")], &[]).await;
    assert_eq!(result_of(&out)["status"], "complete", "{out:?}");
    assert!(
        system(&requests[0]).contains("- review: Reviews the workspace's changes."),
        "{}",
        system(&requests[0])
    );
    let results = tool_results(&requests[1].body);
    assert!(results[0].contains("Look at git diff."), "{}", results[0]);
    assert!(
        results[0].contains(&format!(
            "Base directory for this skill: {}",
            project.root().join(".claude/skills/review").display()
        )),
        "{}",
        results[0]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_permission_rule_can_deny_one_skill() {
    let project = Project::new();
    write(
        &project.claude_user.path().join("skills/greet/SKILL.md"),
        GREET,
    );
    let (_, requests) = project
        .run(
            vec![
                Reply::tool("Skill", &json!({"skill": "greet"}).to_string()),
                Reply::text("Done."),
            ],
            &["--disallowedTools", "Skill(greet)"],
        )
        .await;
    let results = tool_results(&requests[1].body);
    assert!(
        !results[0].contains("Run scripts/hello.sh"),
        "{}",
        results[0]
    );
    assert!(
        results[0].to_lowercase().contains("denied"),
        "{}",
        results[0]
    );
}

#[test]
fn tools_call_loads_a_skill_without_a_model() {
    let project = Project::new();
    write(
        &project.claude_user.path().join("skills/greet/SKILL.md"),
        GREET,
    );
    let out = common::command(
        project.home.path(),
        &project.root(),
        [
            "tools",
            "call",
            "Skill",
            r#"{"skill":"greet","args":"Ann"}"#,
        ],
    )
    .env("CLAUDE_CONFIG_DIR", project.claude_user.path())
    .output()
    .unwrap();
    let text = common::succeeded(&out);
    assert!(text.contains("Run scripts/hello.sh with Ann."), "{text}");
}

const FIX_ISSUE: &str = "---\ndescription: Fixes a GitHub issue\nargument-hint: [issue-number] [priority]\n---\n\
    Fix issue #$1 with priority $2, then run the tests.\n";

/// `kaizen run TASK` for `project` answering `replies`: the run and what
/// the model was sent.
async fn run_task(project: &Project, replies: Vec<Reply>, task: &str) -> (Output, Vec<Recorded>) {
    let server = ModelServer::start(common::run::replies(replies))
        .await
        .unwrap();
    let args = ["--model", "gpt-4o-mini", "--output-format", "json", task];
    let out = run_command(
        project.home.path(),
        &project.root(),
        Some((&server, Wire::OpenAi)),
        &args,
    )
    .env("CLAUDE_CONFIG_DIR", project.claude_user.path())
    .output()
    .unwrap();
    (out, server.requests())
}

/// The text of the first user message of `request`.
fn first_user_message(request: &Recorded) -> String {
    let messages = request.body["messages"].as_array().unwrap();
    let user = messages.iter().find(|m| m["role"] == "user").unwrap();
    match &user["content"] {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_typed_as_a_command_runs_its_prompt() {
    let project = Project::new();
    write(
        &project.claude_user.path().join("commands/fix-issue.md"),
        FIX_ISSUE,
    );
    let (out, requests) =
        run_task(&project, vec![Reply::text("Fixed.")], "/fix-issue 123 high").await;
    assert_eq!(result_of(&out)["status"], "complete", "{out:?}");
    let sent = first_user_message(&requests[0]);
    assert!(
        sent.contains("Fix issue #123 with priority high, then run the tests."),
        "{sent}"
    );
    assert!(!sent.contains("/fix-issue"), "{sent}");
    let prompt = system(&requests[0]);
    assert!(
        prompt.contains("- /fix-issue [issue-number] [priority] (command): Fixes a GitHub issue"),
        "{prompt}"
    );
    // A task that only looks like one is left as it is.
    let (_, requests) = run_task(&project, vec![Reply::text("Ok.")], "/usr/bin is missing").await;
    assert!(first_user_message(&requests[0]).contains("/usr/bin is missing"));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_model_runs_a_workspaces_command_through_skill_or_slash_command_once_trusted() {
    let project = Project::new();
    write(
        &project.root().join(".claude/commands/team/fix-issue.md"),
        FIX_ISSUE,
    );
    let replies = || {
        vec![
            Reply::tool(
                "Skill",
                &json!({"skill": "fix-issue", "args": "7 low"}).to_string(),
            )
            .with_tool(
                "SlashCommand",
                &json!({"command": "/fix-issue 8"}).to_string(),
            ),
            Reply::text("Done."),
        ]
    };
    let (out, _) = run_task(&project, replies(), "fix them").await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr
            .contains(".claude/commands: its commands are not used (the workspace is not trusted)"),
        "{stderr}"
    );
    project.trust();
    let (out, requests) = run_task(&project, replies(), "fix them").await;
    assert_eq!(result_of(&out)["status"], "complete", "{out:?}");
    let results = tool_results(&requests[1].body);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        results[0].contains("Fix issue #7 with priority low"),
        "{}",
        results[0]
    );
    assert!(
        results[1].contains("Fix issue #8 with priority ,"),
        "{}",
        results[1]
    );
}

/// The names of the tools offered in `request`.
fn offered(request: &Recorded) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_file_is_a_sub_agent_type_with_its_instructions_and_tools() {
    let project = Project::new();
    write(
        &project.claude_user.path().join("agents/code-reviewer.md"),
        "---\nname: code-reviewer\ndescription: Reviews code for bugs. Use after a change.\n\
         tools: Read, Grep\nmodel: sonnet\n---\nYou are a strict reviewer: list every bug.\n",
    );
    let task = json!({
        "description": "review the change",
        "prompt": "Review src/lib.rs",
        "subagent_type": "code-reviewer"
    });
    let (out, requests) = run_task(
        &project,
        vec![
            Reply::tool("Task", &task.to_string()),
            Reply::text("No bugs found."),
            Reply::text("The reviewer found nothing."),
        ],
        "review my change",
    )
    .await;
    assert_eq!(result_of(&out)["status"], "complete", "{out:?}");
    let parent = system(&requests[0]);
    assert!(
        parent.contains("- code-reviewer: Reviews code for bugs. Use after a change."),
        "{parent}"
    );
    let sub = &requests[1];
    let instructions = system(sub);
    assert!(
        instructions.contains("You are a strict reviewer: list every bug."),
        "{instructions}"
    );
    let mut tools = offered(sub);
    tools.sort();
    assert_eq!(tools, ["Grep", "Read"]);
    // The alias `sonnet` means nothing to this provider: the session's model.
    assert_eq!(sub.body["model"], "gpt-4o-mini");
    let results = tool_results(&requests[2].body);
    assert!(results[0].contains("No bugs found."), "{}", results[0]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_skills_allowed_tools_narrow_the_calls_until_the_next_task() {
    let project = Project::new();
    write(
        &project.claude_user.path().join("skills/inspect/SKILL.md"),
        "---\nname: inspect\ndescription: Looks only.\nallowed-tools: Read, Bash(ls:*)\n---\nLook around.\n",
    );
    write(
        &project.claude_user.path().join("commands/tidy.md"),
        "---\nallowed-tools: Bash(echo:*)\n---\nTidy up.\n",
    );
    // An entry that is no rule allows nothing, and is said.
    write(
        &project.claude_user.path().join("commands/broken.md"),
        "---\nallowed-tools: Read, Bash(\n---\nBreak.\n",
    );
    write(&project.root().join("notes.txt"), "hello\n");
    let read = json!({"file_path": project.root().join("notes.txt")}).to_string();
    let (out, requests) = run_task(
        &project,
        vec![
            Reply::tool("Skill", &json!({"skill": "inspect"}).to_string()),
            Reply::tool("Bash", &json!({"command": "touch made"}).to_string())
                .with_tool("Bash", &json!({"command": "ls"}).to_string())
                .with_tool("Read", &read),
            Reply::text("Done."),
        ],
        "inspect the project",
    )
    .await;
    assert_eq!(result_of(&out)["status"], "complete", "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`broken`: its allowed-tools entry `Bash(` is not a permission rule"),
        "{stderr}"
    );
    // The conversation's results: the skill's, then the three calls'.
    let all = tool_results(&requests[2].body);
    assert_eq!(all.len(), 4, "{all:?}");
    let results = &all[1..];
    assert!(
        results[0].contains("the skill `inspect` allows only Read, Bash(ls:*)"),
        "{}",
        results[0]
    );
    assert!(!project.root().join("made").exists());
    assert!(results[1].contains("notes.txt"), "{}", results[1]);
    assert!(results[2].contains("hello"), "{}", results[2]);

    // A command typed as the task narrows that task alone.
    let (_, requests) = run_task(
        &project,
        vec![
            Reply::tool("Bash", &json!({"command": "touch made"}).to_string())
                .with_tool("Bash", &json!({"command": "echo ok"}).to_string()),
            Reply::text("Done."),
        ],
        "/tidy",
    )
    .await;
    let results = tool_results(&requests[1].body);
    assert!(
        results[0].contains("the skill `tidy` allows only"),
        "{}",
        results[0]
    );
    assert!(results[1].contains("ok"), "{}", results[1]);
    let (_, requests) = run_task(
        &project,
        vec![
            Reply::tool("Bash", &json!({"command": "touch made"}).to_string()),
            Reply::text("Done."),
        ],
        "make it",
    )
    .await;
    let results = tool_results(&requests[1].body);
    assert!(!results[0].contains("allows only"), "{}", results[0]);
    assert!(project.root().join("made").exists());
}

/// A typed command's `` !`cmd` `` runs in the sandbox through Bash, under
/// the session's rules and the command's allowed-tools, and `@file` brings
/// the file through Read (a deny rule keeps it out), before the prompt is
/// sent; loaded by the model through Skill, the prompt says what to
/// gather instead.
#[tokio::test(flavor = "multi_thread")]
async fn a_commands_prompt_gathers_command_output_and_files_before_it_is_sent() {
    let project = Project::new();
    write(
        &project.claude_user.path().join("commands/review.md"),
        "---\nallowed-tools: Read, Bash(echo:*), Bash(cat:*), Bash(touch:*)\n---\n\
         Status: !`echo branch-$1`\nSecret: !`cat .env`\nTouched: !`touch made`\n\
         Never: !`rm -rf src`\nReview @src/lib.rs and @.env, ask @alice.\n",
    );
    write(
        &project.root().join("src/lib.rs"),
        "pub fn answer() -> u32 { 42 }\n",
    );
    write(&project.root().join(".env"), "TOKEN=hunter2\n");
    write(
        &project.home.path().join("config.toml"),
        "[permissions]\ndeny = [\"Read(./.env)\", \"Bash(touch:*)\"]\n",
    );
    let (out, requests) = run_task(&project, vec![Reply::text("Reviewed.")], "/review main").await;
    assert_eq!(result_of(&out)["status"], "complete", "{out:?}");
    let sent = first_user_message(&requests[0]);
    assert!(sent.contains("Status: branch-main\n"), "{sent}");
    assert!(
        !sent.contains("hunter2"),
        "the deny rule holds in the sandbox too: {sent}"
    );
    assert!(
        sent.contains("Touched: [`touch made` did not run:") && sent.contains("Bash(touch:*)"),
        "{sent}"
    );
    assert!(!project.root().join("made").exists());
    assert!(
        sent.contains("Never: [`rm -rf src` did not run:") && sent.contains("allows only"),
        "{sent}"
    );
    assert!(project.root().join("src/lib.rs").exists());
    assert!(
        sent.contains("<file path=\"src/lib.rs\">")
            && sent.contains("pub fn answer() -> u32 { 42 }"),
        "{sent}"
    );
    assert!(sent.contains("[@.env was not read:"), "{sent}");
    assert!(!sent.contains("<file path=\"alice"), "{sent}");

    // Through Skill, nothing runs inside the call: the model is told what
    // to gather with its tools.
    let (_, requests) = run_task(
        &project,
        vec![
            Reply::tool(
                "Skill",
                &json!({"skill": "review", "args": "dev"}).to_string(),
            ),
            Reply::text("Ok."),
        ],
        "review it",
    )
    .await;
    let results = tool_results(&requests[1].body);
    assert!(
        results[0].contains("Status: !`echo branch-dev`")
            && results[0].contains("- run `echo branch-dev` with Bash")
            && results[0].contains("- read src/lib.rs with Read"),
        "{}",
        results[0]
    );
}

/// An agent file's `permissionMode` narrows its sub-agent's calls (here
/// to plan mode: nothing that changes anything runs), never the parent's;
/// one that is not a mode keeps the file out, with a note.
#[tokio::test(flavor = "multi_thread")]
async fn an_agent_files_permission_mode_narrows_its_sub_agent_only() {
    let project = Project::new();
    write(
        &project.claude_user.path().join("agents/planner.md"),
        "---\nname: planner\ndescription: Plans only.\ntools: Bash, Read\npermissionMode: plan\n---\nPlan the work.\n",
    );
    write(
        &project.claude_user.path().join("agents/wild.md"),
        "---\nname: wild\ndescription: Anything goes.\npermissionMode: yolo\n---\nGo.\n",
    );
    let touch = |file: &str| json!({"command": format!("touch {file}")}).to_string();
    let task = json!({"description": "plan", "prompt": "Plan it", "subagent_type": "planner"});
    let (out, requests) = run_task(
        &project,
        vec![
            Reply::tool("Task", &task.to_string()),
            Reply::tool("Bash", &touch("by-sub-agent")),
            Reply::text("Planned."),
            Reply::tool("Bash", &touch("by-parent")),
            Reply::text("Done."),
        ],
        "plan and act",
    )
    .await;
    assert_eq!(result_of(&out)["status"], "complete", "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("wild") && stderr.contains("unknown permission mode `yolo`"),
        "{stderr}"
    );
    let refused = tool_results(&requests[2].body);
    assert!(refused[0].contains("plan mode"), "{}", refused[0]);
    assert!(!project.root().join("by-sub-agent").exists());
    assert!(project.root().join("by-parent").exists());
}
