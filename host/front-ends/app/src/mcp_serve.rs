//! What `kaizen mcp serve` serves: every tool of a workspace's plugins,
//! over MCP, through the session's guard, and its skills and slash
//! commands as MCP prompts. On stdio the client gets one
//! Kaizen session until it closes the stream; over streamable HTTP, one
//! Kaizen session per MCP session. Nobody can be asked: a call that asks
//! is refused with the rule or flag that would allow it.

use crate::notices::Notices;
use crate::permission_flags::PermissionArgs;
use crate::plugin_loading::Selection;
use crate::session_builder::{Collaborators, SetupError, ToolSession, tool_session};
use anyhow::Context as _;
use kaizen_claude::catalogue::Catalogue;
use kaizen_loop::{DirectSession, new_session_id};
use kaizen_mcp::prompts::{PromptInfo, Prompts};
use kaizen_mcp::{HttpOptions, ToolServer, serve_http, serve_stdio};
use kaizen_protocol::Silent;
use std::net::SocketAddr;
use std::sync::Arc;

/// Serves the tools of `selection`'s workspace and plugins under
/// `permissions`: on stdin and stdout, or with `http` at
/// `http://ADDR/mcp` (`bound` is told the address it listens on); what
/// the user should know of the set-up is told to `notices`.
pub async fn serve(
    selection: &Selection,
    permissions: &PermissionArgs,
    notices: Notices,
    http: Option<SocketAddr>,
    bound: impl FnOnce(SocketAddr),
) -> Result<(), SetupError> {
    let ToolSession {
        setup,
        mut plugins,
        guard,
        catalogue,
    } = tool_session(
        selection,
        permissions,
        Collaborators {
            notices,
            ..Collaborators::nobody()
        },
    )
    .await?;
    let tools = Arc::new(std::mem::take(&mut plugins.registry));
    let plugins = Arc::new(plugins);
    let workspace = setup.workspace.clone();
    let prompts: Arc<dyn Prompts> = Arc::new(CataloguePrompts(catalogue));
    // Background shells and stateful instances end with their MCP session.
    let session = move || {
        let plugins = plugins.clone();
        let direct = DirectSession::new(new_session_id(), workspace.clone(), guard.clone());
        ToolServer::new(tools.clone(), Arc::new(direct), Arc::new(Silent))
            .with_prompts(prompts.clone())
            .on_end(Box::new(move |id| plugins.end_session(id)))
    };
    match http {
        None => serve_stdio(session()).await?,
        Some(addr) => {
            let bearer = bearer_token(&setup.mcp.serve_token_env)?;
            serve_http(session, HttpOptions { addr, bearer }, bound).await?;
        }
    }
    Ok(())
}

/// The session's skills and commands as MCP prompts, each rendered as
/// the `Skill` tool loads it.
struct CataloguePrompts(Arc<Catalogue>);

impl Prompts for CataloguePrompts {
    fn list(&self) -> Vec<PromptInfo> {
        let skills = self.0.skills.iter().map(|skill| PromptInfo {
            name: skill.name.clone(),
            description: skill.description.clone(),
            argument_hint: None,
        });
        let commands = self.0.commands.iter().map(|command| PromptInfo {
            name: command.name.clone(),
            description: command.description.clone(),
            argument_hint: command.argument_hint.clone(),
        });
        let mut all: Vec<PromptInfo> = skills.collect();
        // A skill wins over a command of the same name, as in a session.
        for command in commands {
            if !all.iter().any(|known| known.name == command.name) {
                all.push(command);
            }
        }
        all
    }

    fn render(&self, name: &str, args: &str) -> Result<String, String> {
        self.0
            .load(name, args)
            .map(|loaded| loaded.text)
            .map_err(|error| error.message)
    }
}

/// The token HTTP clients must present: the value of the variable the
/// user's `[mcp] serve-token-env` names, if it does.
fn bearer_token(variable: &Option<String>) -> anyhow::Result<Option<String>> {
    let Some(name) = variable else {
        return Ok(None);
    };
    let token = std::env::var(name)
        .with_context(|| format!("[mcp] serve-token-env names {name}, which is not set"))?;
    anyhow::ensure!(
        !token.is_empty(),
        "{name} (the MCP server's token) is empty"
    );
    Ok(Some(token))
}
