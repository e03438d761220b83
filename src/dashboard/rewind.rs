//! The loop's side of `/rewind` and `/diff`: reading the session's turns, the preview (a
//! dry run of the restore), carrying a rewind out (the conversation forked and switched
//! to here, the files restored by the agent that records them) and the diff. Reads of the
//! session file and the record go off the loop; the switch to a forked session happens on
//! it, as `/resume`'s does.

use std::collections::VecDeque;
use std::path::PathBuf;

use super::Loop;
use crate::app::event::AppEvent;
use crate::app::rewind::{Preview, PreviewLine, RewindTurn, RewindWhat};
use crate::app::state::App;
use crate::app::transcript::NoticeKind;
use rein_core::agent::AgentCommand;
use rein_core::checkpoint::{Outcome, Settings, Store};

/// What the loop needs to reach the session and the record.
struct Where {
    data_dir: PathBuf,
    session: PathBuf,
    project: PathBuf,
    settings: Settings,
}

fn locate(app: &App, ctx: &Loop<'_>) -> Result<Where, String> {
    let sessions = ctx
        .sessions
        .as_deref()
        .ok_or("this dashboard records no session, so it has no turns to rewind")?;
    let session = sessions
        .current
        .clone()
        .ok_or("this session has no file yet")?;
    Ok(Where {
        data_dir: sessions.data_dir.clone(),
        session,
        project: app.info.project.clone(),
        settings: ctx
            .config
            .as_deref()
            .map(|c| c.checkpoint_settings())
            .unwrap_or_default(),
    })
}

/// [`locate`], or `None` with the reason in the hint.
fn locate_or_say(app: &mut App, ctx: &Loop<'_>) -> Option<Where> {
    locate(app, ctx).map_err(|e| app.hint = Some(e)).ok()
}

/// `Effect::OpenRewind`: the session's turns, read off the loop.
pub(super) fn open(app: &mut App, ctx: &Loop<'_>) {
    let Some(place) = locate_or_say(app, ctx) else {
        return;
    };
    let background = ctx.background.clone();
    tokio::task::spawn_blocking(move || {
        let turns = rein_core::session::load(&place.session)
            .map(|loaded| {
                loaded
                    .checkpoints
                    .turns
                    .iter()
                    .map(|t| RewindTurn {
                        turn: t.turn,
                        time: t.time.clone(),
                        headline: t.headline(),
                        files: t.changed.iter().map(ToString::to_string).collect(),
                    })
                    .collect()
            })
            .map_err(|e| e.to_string());
        let _ = background.send(AppEvent::RewindTurns(turns));
    });
}

/// `Effect::PreviewRewind`: a dry run of the files part, off the loop.
pub(super) fn preview(app: &mut App, ctx: &Loop<'_>, turn: u64, what: RewindWhat) {
    let Some(place) = locate_or_say(app, ctx) else {
        return;
    };
    let background = ctx.background.clone();
    tokio::task::spawn_blocking(move || {
        let preview = if what.code() {
            match dry_run(&place, turn) {
                Ok(lines) => Preview::Ready(lines),
                Err(e) => Preview::Failed(e),
            }
        } else {
            Preview::Ready(Vec::new())
        };
        let _ = background.send(AppEvent::RewindPreview {
            turn,
            what,
            preview,
        });
    });
}

fn dry_run(place: &Where, turn: u64) -> Result<Vec<PreviewLine>, String> {
    let order = rein_core::session::rewind::order(&place.session, turn)?;
    let store = Store::open(&place.data_dir, &place.project, place.settings.clone())
        .map_err(|e| e.to_string())?;
    let report = store
        .restore(&order.steps, false, true, None)
        .map_err(|e| e.to_string())?;
    Ok(report
        .paths
        .into_iter()
        .map(|p| {
            let (action, why) = match p.outcome {
                Outcome::Restored => ("restore", None),
                Outcome::Removed => ("remove", None),
                Outcome::Unchanged => ("same", None),
                Outcome::Kept { why } => ("keep", Some(why)),
                Outcome::Failed { why } => ("fail", Some(why)),
            };
            PreviewLine {
                path: p.path.to_string(),
                action,
                why,
            }
        })
        .collect())
}

/// `Effect::Rewind`: the conversation forked and switched to now; the files restored by
/// the agent (the new one, recording into the fork), which reports with `Rewound`.
pub(super) fn rewind(
    app: &mut App,
    ctx: &mut Loop<'_>,
    turn: u64,
    what: RewindWhat,
    pending: &mut VecDeque<AppEvent>,
) {
    let place = match locate(app, ctx) {
        Ok(place) => place,
        Err(e) => {
            app.transcript.notice(NoticeKind::Error, e);
            return;
        }
    };
    // Worked out from the session as it is, before any switch.
    let order = match what
        .code()
        .then(|| rein_core::session::rewind::order(&place.session, turn))
    {
        Some(Err(e)) => {
            app.transcript
                .notice(NoticeKind::Error, format!("nothing was rewound: {e}"));
            return;
        }
        Some(Ok(order)) => Some(order),
        None => None,
    };
    if what.conversation() {
        match rein_core::session::rewind::fork(&place.data_dir, &place.session, turn) {
            Ok(forked) => {
                pending.push_back(AppEvent::Resumed(super::switch_session(&forked.path, ctx)));
                pending.push_back(AppEvent::RewindForked {
                    turn,
                    message: forked.message,
                });
            }
            Err(e) => {
                app.transcript
                    .notice(NoticeKind::Error, format!("nothing was rewound: {e}"));
                return;
            }
        }
    }
    if let (Some(order), Some(agent)) = (order, ctx.agent.as_ref()) {
        agent.send(AgentCommand::Rewind(Box::new(order)));
    }
}

/// `Effect::ShowDiff`: the session's changes as a diff, off the loop.
pub(super) fn diff(app: &mut App, ctx: &Loop<'_>) {
    let Some(place) = locate_or_say(app, ctx) else {
        return;
    };
    let background = ctx.background.clone();
    tokio::task::spawn_blocking(move || {
        let diff = Store::open(&place.data_dir, &place.project, place.settings.clone())
            .map_err(|e| e.to_string())
            .and_then(|store| rein_core::session::rewind::diff(&place.session, &store, None));
        let _ = background.send(AppEvent::Diff(diff));
    });
}
