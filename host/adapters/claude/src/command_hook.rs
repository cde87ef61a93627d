//! Claude Code's `type: "command"` hooks, run in Kaizen's OS sandbox: the
//! event's JSON on stdin, `CLAUDE_PROJECT_DIR` set, the answer read from
//! the exit code and output.

use crate::hook_output::decision_from;
use crate::settings::ClaudeSettings;
use kaizen_hooks::{Hook, HookEvent, HookFuture, Matcher, Priority, Subscription};
use kaizen_sandbox::{Command, Policy, Sandbox};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a command hook may run when its entry names no timeout
/// (Claude Code's default).
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs a session's command hooks, all in one OS sandbox made on first
/// use (so a run without hook events pays nothing) and dropped, with
/// everything it started, with the runner.
pub struct CommandRunner {
    policy: Policy,
    workspace: PathBuf,
    sandbox: Mutex<Option<Arc<Sandbox>>>,
}

impl CommandRunner {
    /// Hooks run under `policy`, in `workspace`, which they get as
    /// `CLAUDE_PROJECT_DIR`.
    pub fn new(policy: Policy, workspace: PathBuf) -> Self {
        Self {
            policy,
            workspace,
            sandbox: Mutex::default(),
        }
    }

    fn sandbox(&self) -> Result<Arc<Sandbox>, String> {
        let mut slot = self.sandbox.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(sandbox) = &*slot {
            return Ok(sandbox.clone());
        }
        let sandbox = Arc::new(
            Sandbox::new(self.policy.clone())
                .map_err(|err| format!("cannot start the OS sandbox for command hooks: {err}"))?,
        );
        *slot = Some(sandbox.clone());
        Ok(sandbox)
    }

    /// Runs `command` with bash, `stdin` on its standard input, for at most
    /// `timeout`: exit code, stdout and stderr.
    async fn run(
        &self,
        command: &str,
        stdin: Vec<u8>,
        timeout: Duration,
    ) -> Result<(Option<i32>, String, String), String> {
        let sandbox = self.sandbox()?;
        let project = self.workspace.display().to_string();
        let output = sandbox
            .run(Command {
                program: "bash".into(),
                args: vec!["-c".into(), command.into()],
                cwd: Some(self.workspace.clone()),
                env: vec![
                    ("CLAUDE_PROJECT_DIR".into(), project.clone()),
                    ("KAIZEN_PROJECT_DIR".into(), project),
                ],
                stdin: Some(stdin),
                timeout: Some(timeout),
            })
            .await
            .map_err(|err| format!("could not run: {err}"))?;
        if output.timed_out {
            return Err(format!(
                "gave no answer within its time limit of {} s and was killed",
                timeout.as_secs_f64()
            ));
        }
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
        Ok((output.exit_code, text(&output.stdout), text(&output.stderr)))
    }
}

/// One command of one matcher group of one event.
pub struct CommandHook {
    name: String,
    command: String,
    subscriptions: Vec<Subscription>,
    timeout: Duration,
    runner: Arc<CommandRunner>,
}

impl CommandHook {
    /// The command hooks of `settings`, run by `runner`, and what could
    /// not be used (an unknown event, a bad matcher, a hook type Kaizen
    /// does not run), each said in a line naming the file.
    pub fn from_settings(
        settings: &ClaudeSettings,
        runner: &Arc<CommandRunner>,
    ) -> (Vec<CommandHook>, Vec<String>) {
        let file = settings.path.display();
        let mut hooks = Vec::new();
        let mut problems = Vec::new();
        for (event_name, groups) in &settings.hooks {
            let Some(event) = HookEvent::from_name(event_name) else {
                problems.push(format!(
                    "{file}: hooks for `{event_name}` are skipped: Kaizen has no such event"
                ));
                continue;
            };
            for group in groups {
                let matcher = match Matcher::parse(group.matcher.as_deref().unwrap_or("")) {
                    Ok(matcher) => matcher,
                    Err(err) => {
                        problems.push(format!("{file}: {event_name} hooks are skipped: {err}"));
                        continue;
                    }
                };
                for entry in &group.hooks {
                    if entry.kind != "command" || entry.command.trim().is_empty() {
                        problems.push(format!(
                            "{file}: a {event_name} hook of type `{}` is skipped: Kaizen runs \
                             `type: \"command\"` hooks",
                            entry.kind
                        ));
                        continue;
                    }
                    let timeout = entry
                        .timeout
                        .filter(|secs| secs.is_finite() && *secs > 0.0)
                        .map_or(DEFAULT_COMMAND_TIMEOUT, Duration::from_secs_f64);
                    hooks.push(CommandHook {
                        name: format!("command `{}` ({file})", entry.command.trim()),
                        command: entry.command.clone(),
                        subscriptions: vec![Subscription {
                            event,
                            matcher: matcher.clone(),
                            priority: Priority::NORMAL,
                        }],
                        timeout,
                        runner: runner.clone(),
                    });
                }
            }
        }
        (hooks, problems)
    }
}

impl Hook for CommandHook {
    fn name(&self) -> &str {
        &self.name
    }

    fn subscriptions(&self) -> &[Subscription] {
        &self.subscriptions
    }

    fn timeout(&self) -> Option<Duration> {
        // The sandbox kills the command at its own limit; this is the
        // dispatcher's backstop, a little later, so the kill is reported.
        Some(self.timeout + Duration::from_secs(5))
    }

    fn handle<'a>(&'a self, event: HookEvent, payload: &'a serde_json::Value) -> HookFuture<'a> {
        Box::pin(async move {
            let stdin = serde_json::to_vec(payload).map_err(|err| err.to_string())?;
            let (code, stdout, stderr) =
                self.runner.run(&self.command, stdin, self.timeout).await?;
            decision_from(event, code, &stdout, &stderr)
        })
    }
}
