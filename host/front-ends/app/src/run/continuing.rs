//! How a run's request becomes the session builder's: a continued session
//! going on with what it was using, and where a session starts.

use super::RunRequest;
use crate::hosted::Hosted;
use crate::notices::Notices;
use crate::session::{self, Continued};
use crate::session_builder::{SessionRequest, Start};
use std::path::PathBuf;

/// A continued session goes on where it was, with what it was using,
/// unless `request` says otherwise; `notices` hears what it cannot get
/// back.
pub(super) fn go_on_from(request: &mut RunRequest, continued: &Continued, notices: &Notices) {
    for warning in &continued.restored.warnings {
        notices.warn(warning.clone());
    }
    for line in session::lost(continued) {
        notices.note(line);
    }
    request
        .model
        .get_or_insert_with(|| continued.meta.model.clone());
    request
        .selection
        .cwd
        .get_or_insert_with(|| PathBuf::from(&continued.meta.cwd));
    if request.planner.is_none() {
        request.planner.clone_from(&continued.meta.planner);
    }
}

/// How the session starts: `continued`, or new with `task` (named as a
/// cluster's turn names it, when `hosted`).
pub(super) fn start(
    hosted: Option<&Hosted>,
    continued: Option<Continued>,
    task: Option<&str>,
) -> Start {
    match continued {
        Some(continued) => Start::Continue {
            state: Box::new(continued.restored.state),
            seq: continued.restored.seq,
        },
        None => Start::New {
            id: hosted.map(|hosted| hosted.session_id.clone()),
            made_before: hosted.is_some_and(|hosted| hosted.made_before),
            task: task.unwrap_or_default().to_string(),
        },
    }
}

/// The session `request` asks for, starting as `start`, memories
/// recalled for `recall_for` when given; and how it is hosted, which the
/// session builder does not take.
pub(super) fn session_request(
    request: RunRequest,
    start: Start,
    recall_for: Option<String>,
) -> (SessionRequest, Option<Hosted>) {
    let session_request = SessionRequest {
        selection: request.selection,
        permissions: request.permissions,
        model: request.model,
        provider: request.provider,
        replay: request.replay,
        record: request.record,
        planner: request.planner,
        max_cycles: request.max_cycles,
        budget_usd: request.budget_usd,
        timeout: request.timeout,
        start,
        recall_for,
    };
    (session_request, request.hosted)
}
