//! A task run on Kaizen's loop, start to finish, for every front end
//! (`kaizen run`, a cluster's worker, Kaizen as a runtime): the session
//! the request names opened, the task it starts with, the session built
//! with the front end's collaborators, and its runs until no task is left.
//!
//! A run goes through three steps, so that a front end can do its part
//! between them: [`Opened::open`] checks the limits and restores the
//! session the request continues (a front end reads its task knowing
//! whether one does, and [`Opened::task`] tells the model what a
//! continued session lost); [`Opened::build`] has the session built
//! ([`SessionBuilder`]) from the request and the [`Collaborators`] given;
//! [`Built::run`] runs the task, then each next task the session's inbox
//! or the front end's [`NextTasks`] gives, reporting to the front end's
//! [`Observer`]. What the user should hear on the way goes to the
//! collaborators' [`Notices`]; nothing here prints.

mod continuing;
mod gather;
mod tasks;

pub use tasks::{NextTasks, NoMoreTasks};

use crate::hosted::Hosted;
use crate::notices::Notices;
use crate::permission_flags::PermissionArgs;
use crate::plugin_loading::Selection;
use crate::session::{self, Choice, Continued};
use crate::session_builder::{Collaborators, Ready, Session, SessionBuilder, SetupError, usage};
use kaizen_loop::{AgentConfig, SessionState};
use kaizen_protocol::{CancellationToken, Event, Observer, RunResult};
use std::path::PathBuf;
use std::sync::Arc;

/// What a run on Kaizen's loop was asked to do: the model and its
/// limits, the workspace and plugins, the session and its permissions.
/// The task is not here: a front end reads it once it knows whether the
/// session continues ([`Opened::task`]).
pub struct RunRequest {
    /// The model; a continued session's, else the configured default,
    /// when `None`.
    pub model: Option<String>,
    /// The provider; inferred from the model when `None`.
    pub provider: Option<String>,
    /// Model calls the run may make.
    pub max_cycles: u32,
    /// Money the run may spend, in USD.
    pub budget_usd: f64,
    /// Seconds the run may take.
    pub timeout: Option<f64>,
    /// Where to record the provider's answers.
    pub record: Option<PathBuf>,
    /// A recorded session to replay instead of a provider.
    pub replay: Option<PathBuf>,
    /// The workspace (a continued session's when `None`), plugin
    /// directories and granted directories.
    pub selection: Selection,
    /// The planner: a name or a plugin directory; a continued session's
    /// when `None`.
    pub planner: Option<String>,
    /// A new session, or one resumed or forked.
    pub session: Choice,
    /// The permission mode and rules.
    pub permissions: PermissionArgs,
    /// Set when a cluster's worker runs the turn.
    pub hosted: Option<Hosted>,
}

impl RunRequest {
    /// Refuses limits that cannot work, and a mode that does not exist.
    pub fn check_limits(&self) -> Result<(), SetupError> {
        crate::session_builder::check_limits(
            self.timeout,
            self.budget_usd,
            self.max_cycles,
            self.permissions.permission_mode.as_deref(),
        )
    }
}

/// A request whose session is chosen: new, or restored to go on from.
pub struct Opened {
    request: RunRequest,
    continued: Option<Continued>,
}

/// A session built for a request, ready to run.
pub struct Built {
    session: Session,
    state: SessionState,
    config: AgentConfig,
    /// The events' destination of a hosted run: its session's stream.
    stream: Option<Arc<dyn Observer>>,
    task: Option<String>,
    notices: Notices,
}

/// A compaction by hand of a continued session's conversation.
pub struct Compacted {
    /// The session compacted.
    pub session_id: String,
    /// The compaction's event; `None` when nothing was compacted (a
    /// notice said why), an error when it failed.
    pub outcome: Result<Option<Event>, String>,
}

impl Built {
    /// What the user must hear before the run (a degraded sandbox),
    /// already told to the notices: for a front end that reports them
    /// beside the result too.
    pub fn warnings(&self) -> &[String] {
        &self.session.warnings
    }

    /// The session's id.
    pub fn session_id(&self) -> &str {
        &self.state.session_id
    }

    /// The session's skills, slash commands and agent files.
    pub fn catalogue(&self) -> &kaizen_claude::catalogue::Catalogue {
        &self.session.catalogue
    }

    /// The permission mode the session starts in.
    pub fn permission_mode(&self) -> kaizen_protocol::PermissionMode {
        self.session.guard.permissions.mode()
    }

    /// An embedder's system prompt: `replace` stands instead of Kaizen's
    /// own (empty keeps Kaizen's, as Claude Code's SDK sends one when it
    /// has none), `append` goes after it.
    pub fn set_system_prompt(&mut self, replace: Option<String>, append: Option<String>) {
        if let Some(replace) = replace.filter(|text| !text.trim().is_empty()) {
            self.config.system_prompt = Some(replace);
        }
        if let Some(append) = append.filter(|text| !text.trim().is_empty()) {
            self.config.instructions = Some(match self.config.instructions.take() {
                Some(own) => format!("{own}\n\n{append}"),
                None => append,
            });
        }
    }

    /// Runs the task, then each task that comes while or after it runs
    /// (what waits in the session's inbox when a run ends, else the next
    /// that `tasks` gives), until none is left or `interrupt` stops it,
    /// reporting to `observer` (a hosted run's events go to its session's
    /// stream instead, which its submitter follows); then ends the
    /// session. The last run's result.
    pub async fn run(
        self,
        observer: &dyn Observer,
        tasks: &mut impl NextTasks,
        interrupt: &CancellationToken,
    ) -> RunResult {
        let Self {
            session,
            mut state,
            config,
            stream,
            task,
            notices,
        } = self;
        let agent = session.agent(config, stream.as_deref().unwrap_or(observer));
        let result = tasks::run_tasks(&agent, &mut state, task, tasks, &session, interrupt).await;
        for problem in session.end(&state.session_id) {
            notices.warn(format!("the session could not be kept in full: {problem}"));
        }
        result
    }
}

impl Opened {
    /// Checks `request`'s limits and restores the session it continues.
    pub fn open(request: RunRequest) -> Result<Self, SetupError> {
        request.check_limits()?;
        let continued =
            session::continue_from(&session::open_store()?, &request.session).map_err(usage)?;
        Ok(Self { request, continued })
    }

    /// The MCP servers the session will use besides its configured ones
    /// (`--mcp-config`, and those the program driving it serves), to add
    /// to before it is built.
    pub fn mcp(&mut self) -> &mut crate::mcp_flags::McpFlags {
        &mut self.request.selection.mcp
    }

    /// The session the request continues, restored; `None` for a new one.
    pub fn continued(&self) -> Option<&Continued> {
        self.continued.as_ref()
    }

    /// The task the run starts with, from the front end's `given` task:
    /// a new session's must say something; a continued session's comes
    /// after what the model must hear of what the session lost, and may
    /// be left out unless the session has nothing left to do.
    pub fn task(&self, given: Option<String>) -> Result<Option<String>, SetupError> {
        let given = given.filter(|task| !task.trim().is_empty());
        let Some(continued) = &self.continued else {
            return match given {
                Some(task) => Ok(Some(task)),
                None => Err(usage(anyhow::anyhow!("the task is empty"))),
            };
        };
        if let Some(why) = session::nothing_to_do(continued, given.as_deref()) {
            return Err(usage(anyhow::anyhow!(why)));
        }
        Ok(Some(match given {
            Some(task) => format!("{}\n\n{task}", continued.notice),
            None => continued.notice.clone(),
        }))
    }

    /// Builds the session to run `task` (see [`Opened::task`]), working
    /// with `with`: a continued session goes on with what it was using
    /// unless the request says otherwise, and the user hears what it
    /// cannot get back.
    pub async fn build(
        mut self,
        task: Option<String>,
        with: Collaborators<'_>,
    ) -> Result<Built, SetupError> {
        if let Some(continued) = &self.continued {
            continuing::go_on_from(&mut self.request, continued, &with.notices);
        }
        let recall_for = Some(task.clone().unwrap_or_default());
        self.built(task, recall_for, with).await
    }

    /// Compacts the continued session's conversation now, whatever its
    /// size, instead of running (`kaizen sessions compact`), working with
    /// `with` and reporting to `observer`; the session keeps the model and
    /// workspace the request names.
    pub async fn compact(
        self,
        with: Collaborators<'_>,
        observer: &dyn Observer,
        interrupt: &CancellationToken,
    ) -> Result<Compacted, SetupError> {
        let Built {
            session,
            mut state,
            config,
            stream,
            ..
        } = self.built(None, None, with).await?;
        let agent = session.agent(config, stream.as_deref().unwrap_or(observer));
        let outcome = agent.compact_now(&mut state, interrupt).await;
        // `kaizen sessions compact` has never told what could not be
        // kept (its report is its whole output); it still does not.
        session.end(&state.session_id);
        Ok(Compacted {
            session_id: state.session_id,
            outcome,
        })
    }

    /// The session built for `task`, memories recalled for `recall_for`.
    async fn built(
        self,
        task: Option<String>,
        recall_for: Option<String>,
        with: Collaborators<'_>,
    ) -> Result<Built, SetupError> {
        let Self { request, continued } = self;
        let start = continuing::start(request.hosted.as_ref(), continued, task.as_deref());
        let notices = with.notices.clone();
        let (session_request, hosted) = continuing::session_request(request, start, recall_for);
        let Ready {
            session,
            state,
            config,
        } = SessionBuilder::new(session_request, with).build().await?;
        for warning in &session.warnings {
            notices.warn(warning.clone());
        }
        let stream = match &hosted {
            Some(hosted) => Some(hosted.open_stream(&session.store, &state.session_id)?),
            None => None,
        };
        Ok(Built {
            session,
            state,
            config,
            stream,
            task,
            notices,
        })
    }
}
