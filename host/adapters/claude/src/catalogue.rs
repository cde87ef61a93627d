//! A session's skills and slash commands, and the tools that load them:
//! `Skill` (Claude Code 2.1's, which takes skills and commands alike) and
//! `SlashCommand` (its earlier name for commands, kept as an alias).

use std::sync::Arc;

use kaizen_tools::{
    ActiveSkill, CallContext, Danger, RuleSubject, SubjectKind, Tool, ToolError, ToolErrorKind,
    ToolFuture, ToolOutput, ToolSpec,
};
use serde_json::{Value, json};

use crate::agents::AgentFile;
use crate::commands::{self, SlashCommand};
use crate::context;
use crate::skills::Skill;

/// What a session may load: its skills, then its commands (a skill wins
/// over a command of the same name).
#[derive(Debug, Clone, Default)]
pub struct Catalogue {
    /// The skills.
    pub skills: Vec<Skill>,
    /// The slash commands.
    pub commands: Vec<SlashCommand>,
    /// The agent files: sub-agent types `Task` starts by name.
    pub agents: Vec<AgentFile>,
}

impl Catalogue {
    /// Whether there is no skill or command to load (agents are started
    /// by `Task`, not loaded).
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty() && self.commands.is_empty()
    }

    /// What loading `name` with `args` gives: a skill's instructions with
    /// its folder, or a command's prompt, and what its `allowed-tools`
    /// narrow.
    pub fn load(&self, name: &str, args: &str) -> Result<Loaded, ToolError> {
        let name = name.strip_prefix('/').unwrap_or(name);
        let narrows = |allowed: &[String]| {
            (!allowed.is_empty()).then(|| ActiveSkill {
                name: name.to_string(),
                allowed: allowed.to_vec(),
            })
        };
        if let Some(skill) = self.skills.iter().find(|s| s.name == name) {
            return Ok(Loaded {
                text: skill.load(args),
                narrows: narrows(&skill.allowed_tools),
            });
        }
        if let Some(command) = self.commands.iter().find(|c| c.name == name) {
            return Ok(Loaded {
                text: command.expand(args),
                narrows: narrows(&command.allowed_tools),
            });
        }
        let names: Vec<&str> = self
            .skills
            .iter()
            .map(|s| s.name.as_str())
            .chain(self.commands.iter().map(|c| c.name.as_str()))
            .collect();
        Err(ToolError::new(
            ToolErrorKind::NotFound,
            format!(
                "there is no skill or command {name:?}; there are: {}",
                names.join(", ")
            ),
        ))
    }

    /// What a task that starts with `/name args` stands for, when `name`
    /// is one of the commands (or skills); `None` for any other task.
    pub fn expand_task(&self, task: &str) -> Option<Loaded> {
        let (name, args) = commands::invocation(task)?;
        self.load(name, args).ok()
    }

    /// The system prompt's lists of what there is, when there is anything:
    /// at most [`MAX_LISTING_BYTES`] of entries, then how many more there
    /// are.
    pub fn prompt(&self) -> Option<String> {
        let skills = self
            .skills
            .iter()
            .map(|skill| format!("\n- {}: {}", skill.name, skill.description));
        let commands = self.commands.iter().map(|command| {
            let hint = command
                .argument_hint
                .as_deref()
                .map(|h| format!(" {h}"))
                .unwrap_or_default();
            format!(
                "\n- /{}{hint} (command): {}",
                command.name, command.description
            )
        });
        let agents = self
            .agents
            .iter()
            .map(|agent| format!("\n- {}: {}", agent.name, agent.description));
        let mut budget = Budget(MAX_LISTING_BYTES);
        let mut text = String::new();
        if !self.is_empty() {
            text.push_str(
                "# Skills and commands\n\nThese are available through the Skill tool. When a \
                 task matches a skill, call Skill with its name before doing the task, then \
                 follow what it returns. A command is a prepared prompt: call Skill with its \
                 name and its arguments as `args` when the user asks for it.\n",
            );
            budget.list(&mut text, skills.chain(commands));
        }
        if !self.agents.is_empty() {
            if !text.is_empty() {
                text.push_str("\n\n");
            }
            text.push_str(
                "# Sub-agent types\n\nBesides general-purpose and Explore, the Task tool's \
                 `subagent_type` may name:\n",
            );
            budget.list(&mut text, agents);
        }
        (!text.is_empty()).then_some(text)
    }
}

/// The most bytes of skills, commands and agents listed in the system
/// prompt, which every request carries; what does not fit is counted.
pub const MAX_LISTING_BYTES: usize = 16 * 1024;

/// What is left of the listing's bytes.
struct Budget(usize);

impl Budget {
    /// Appends `entries` to `text` while they fit, then says how many
    /// did not.
    fn list(&mut self, text: &mut String, entries: impl Iterator<Item = String>) {
        let mut left_out = 0;
        for entry in entries {
            if left_out == 0 && entry.len() <= self.0 {
                self.0 -= entry.len();
                text.push_str(&entry);
            } else {
                left_out += 1;
            }
        }
        if left_out > 0 {
            text.push_str(&format!(
                "\n- ({left_out} more, not listed: the list is full; load one by a name the user \
                 gives)"
            ));
        }
    }
}

/// A skill or command, loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded {
    /// What the model gets: the instructions or the prompt.
    pub text: String,
    /// Its `allowed-tools`, which narrow the calls that run until the
    /// next task (`None`: it names none, and nothing is narrowed).
    pub narrows: Option<ActiveSkill>,
}

/// Which of the two tools.
#[derive(Debug, Clone, Copy)]
enum Form {
    /// `{"skill": name, "args": …}`.
    Skill,
    /// `{"command": "/name args"}`.
    SlashCommand,
}

/// The `Skill` tool, or its `SlashCommand` alias, over a catalogue.
pub struct SkillTool {
    spec: ToolSpec,
    form: Form,
    catalogue: Arc<Catalogue>,
    subject: RuleSubject,
}

impl SkillTool {
    /// `Skill` over `catalogue`.
    pub fn skill(catalogue: Arc<Catalogue>) -> SkillTool {
        let schema = json!({
            "type": "object",
            "properties": {
                "skill": {"type": "string", "description": "The skill's or command's name, as listed"},
                "args": {"type": "string", "description": "What it works on, if anything"}
            },
            "required": ["skill"],
            "additionalProperties": false
        });
        let description = "Loads a skill or a command. A skill is instructions for one kind of \
            task, with files beside them; a command is a prepared prompt. What there is, each \
            with what it is for, is listed in the system prompt. When a task matches a skill, \
            call this tool with its name before doing the task, then follow what it returns: \
            its instructions and the folder its files are in (read and run them with the other \
            tools). `args` is what the skill or command works on, if anything.";
        SkillTool::with(
            catalogue,
            Form::Skill,
            "Skill",
            description,
            schema,
            "skill",
        )
    }

    /// `SlashCommand` over `catalogue`: the name Claude Code 2.0 gave the
    /// tool for commands.
    pub fn slash_command(catalogue: Arc<Catalogue>) -> SkillTool {
        let schema = json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "`/name` and its arguments"}
            },
            "required": ["command"],
            "additionalProperties": false
        });
        let description = "Runs a slash command listed in the system prompt: `command` is the \
            command as the user would type it, `/name` then its arguments. The result is the \
            command's prompt: follow it.";
        SkillTool::with(
            catalogue,
            Form::SlashCommand,
            "SlashCommand",
            description,
            schema,
            "command",
        )
    }

    /// The tool `name` in `form`, read-only, whose rules name what its
    /// input's `field` says.
    fn with(
        catalogue: Arc<Catalogue>,
        form: Form,
        name: &str,
        description: &str,
        input_schema: Value,
        field: &str,
    ) -> SkillTool {
        SkillTool {
            spec: ToolSpec {
                name: name.into(),
                description: description.into(),
                input_schema,
                danger: Danger::Safe,
                read_only: true,
            },
            form,
            catalogue,
            subject: RuleSubject {
                kind: SubjectKind::Name,
                field: field.into(),
            },
        }
    }

    fn run(&self, ctx: &CallContext, input: &Value) -> Result<ToolOutput, ToolError> {
        let (name, args) = match self.form {
            Form::Skill => (
                input["skill"].as_str().unwrap_or(""),
                input["args"].as_str().unwrap_or(""),
            ),
            Form::SlashCommand => {
                let text = input["command"].as_str().unwrap_or("");
                commands::invocation(text).ok_or_else(|| {
                    ToolError::new(
                        ToolErrorKind::InvalidInput,
                        format!("{text:?} is not a command: write `/name` then its arguments"),
                    )
                })?
            }
        };
        let loaded = self.catalogue.load(name, args)?;
        // The one loaded last is the one whose tools count.
        ctx.notes.set_active_skill(loaded.narrows);
        // Nothing runs inside this call: the model gathers what the text
        // asks for through its own tools, each call judged as usual.
        Ok(ToolOutput::text(context::as_instructions(&loaded.text)))
    }
}

impl Tool for SkillTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn source(&self) -> &str {
        "kaizen"
    }

    fn rule_subject(&self) -> Option<&RuleSubject> {
        Some(&self.subject)
    }

    /// It hands over text read when the session started, nothing else.
    fn contained(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, ctx: &'a CallContext, input: &'a Value) -> ToolFuture<'a> {
        Box::pin(async move { self.run(ctx, input) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn catalogue() -> Arc<Catalogue> {
        Arc::new(Catalogue {
            skills: vec![
                Skill::parse(
                    b"---\nname: greet\n---\nHi $ARGUMENTS",
                    Path::new("/s/greet"),
                )
                .unwrap(),
            ],
            commands: vec![
                SlashCommand::parse(b"Fix #$1 now", Path::new("/c/fix.md")).unwrap(),
                SlashCommand::parse(b"Not this one", Path::new("/c/greet.md")).unwrap(),
            ],
            agents: Vec::new(),
        })
    }

    fn ctx() -> CallContext {
        serde_json::from_value(
            json!({"session_id": "s", "call_id": "c", "workspace": "/w", "cwd": "/w"}),
        )
        .unwrap()
    }

    #[tokio::test]
    async fn both_tools_load_skills_and_commands_by_name() {
        let skill = SkillTool::skill(catalogue());
        let out = skill
            .call(&ctx(), &json!({"skill": "greet", "args": "Bob"}))
            .await
            .unwrap();
        assert_eq!(
            out.joined_text(),
            "Base directory for this skill: /s/greet\n\nHi Bob"
        );
        let out = skill
            .call(&ctx(), &json!({"skill": "/fix", "args": "12"}))
            .await
            .unwrap();
        assert_eq!(out.joined_text(), "Fix #12 now");
        let err = skill
            .call(&ctx(), &json!({"skill": "nope"}))
            .await
            .unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::NotFound);
        assert!(err.message.contains("greet, fix, greet"), "{err:?}");
        let slash = SkillTool::slash_command(catalogue());
        let out = slash
            .call(&ctx(), &json!({"command": "/fix 7"}))
            .await
            .unwrap();
        assert_eq!(out.joined_text(), "Fix #7 now");
        let err = slash
            .call(&ctx(), &json!({"command": "fix"}))
            .await
            .unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::InvalidInput);
    }

    #[test]
    fn a_task_that_starts_with_a_command_becomes_its_prompt() {
        let c = catalogue();
        assert_eq!(c.expand_task("/fix 99").unwrap().text, "Fix #99 now");
        assert_eq!(c.expand_task("/unknown 1"), None);
        assert_eq!(c.expand_task("/usr/bin is broken"), None);
        assert_eq!(c.expand_task("please /fix 1"), None);
        let prompt = c.prompt().unwrap();
        assert!(prompt.contains("- greet: Hi $ARGUMENTS"), "{prompt}");
        assert!(prompt.contains("- /fix (command): Fix #$1 now"), "{prompt}");
        assert!(Catalogue::default().prompt().is_none());
    }

    #[test]
    fn the_listing_stops_when_it_is_full_and_says_how_many_are_left_out() {
        let long = "x".repeat(1000);
        let commands = (0..40)
            .map(|i| {
                let text = format!("---\ndescription: {long}\n---\nDo {i}");
                SlashCommand::parse(text.as_bytes(), Path::new(&format!("/c/c{i}.md"))).unwrap()
            })
            .collect();
        let prompt = Catalogue {
            commands,
            ..Catalogue::default()
        }
        .prompt()
        .unwrap();
        assert!(prompt.len() < MAX_LISTING_BYTES + 1024, "{}", prompt.len());
        assert!(prompt.contains("- /c0 (command)"));
        assert!(!prompt.contains("- /c39 (command)"));
        assert!(prompt.contains("more, not listed"), "{prompt}");
    }
}
