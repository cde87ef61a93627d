//! Sessions another agent runtime ran (Claude Code, Codex, Gemini CLI),
//! kept as Kaizen sessions: `kaizen sessions` lists them and `kaizen run
//! --resume` continues them on the same runtime.

use crate::session;
use kaizen_loop::new_session_id;
use kaizen_protocol::{RunResult, TokensUsed};
use kaizen_runtimes::ExecutionContext;
use kaizen_session_store::SessionMeta;

/// Keeps an external runtime's run as a Kaizen session (a new one, or the
/// resumed one, updated), so that `kaizen sessions` lists it and `kaizen
/// run --resume` continues it; the result names that session, and the
/// runtime's own id goes in the session's metadata.
pub fn keep_session(
    result: &mut RunResult,
    resumed: Option<SessionMeta>,
    context: &ExecutionContext,
) -> anyhow::Result<()> {
    let store = session::open_store()?;
    let theirs = Some(result.session_id.clone()).filter(|id| !id.is_empty());
    let id = match resumed {
        Some(meta) => {
            store.update_meta(&meta.id, |meta| {
                meta.status = result.status.as_str().to_string();
                meta.cycles += result.cycles_used;
                meta.cost_usd += result.cost_usd;
                meta.runtime_tokens = Some(add(meta.runtime_tokens, result.tokens_used));
                if theirs.is_some() {
                    meta.runtime_session.clone_from(&theirs);
                }
            })?;
            meta.id
        }
        None => {
            let mut meta = SessionMeta::new(
                new_session_id(),
                &context.task,
                &result.model_used,
                context.workspace.display().to_string(),
            );
            meta.status = result.status.as_str().to_string();
            meta.cycles = result.cycles_used;
            meta.cost_usd = result.cost_usd;
            meta.runtime = Some(result.runtime_name.clone());
            meta.runtime_session = theirs;
            meta.runtime_tokens = Some(result.tokens_used);
            store.create(&meta)?;
            meta.id
        }
    };
    result.session_id = id;
    Ok(())
}

/// `so_far` and `more` together.
fn add(so_far: Option<TokensUsed>, more: TokensUsed) -> TokensUsed {
    let so_far = so_far.unwrap_or_default();
    TokensUsed {
        input: so_far.input + more.input,
        output: so_far.output + more.output,
        total: so_far.total + more.total,
    }
}
