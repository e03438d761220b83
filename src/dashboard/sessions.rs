//! The sessions on disk for the `/resume` picker, and the switch to the one chosen: a new
//! agent on it in place of the running one (also how `/rewind` goes on in its fork).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::{Loop, Sessions};
use crate::app::picker::SessionList;
use crate::app::AppEvent;
use rein_core::agent::{AgentCommand, SessionSetup};
use rein_core::session::{LoadedSession, SessionWriter};

/// The sessions on disk, for the picker.
pub(super) fn list_sessions(sessions: &Sessions) -> AppEvent {
    // The picker shows exact counts: those the sidecars no longer cover are counted from
    // the files' tails.
    let mut listed = rein_core::session::list(&sessions.data_dir);
    for summary in &mut listed {
        summary.messages = rein_core::session::exact_count(summary);
    }
    AppEvent::Sessions(SessionList {
        sessions: listed,
        now: SystemTime::now(),
        home: std::env::var_os("HOME").map(PathBuf::from),
        current: sessions.current.clone(),
    })
}

/// Load the session at `path` and put a new agent on it in place of the running one. On
/// failure the running agent and its session go on, and the reason comes back.
pub(super) fn switch_session(
    path: &Path,
    ctx: &mut Loop<'_>,
) -> Result<Box<LoadedSession>, String> {
    let Some(sessions) = ctx.sessions.as_deref_mut() else {
        return Err("this dashboard does not record sessions".to_string());
    };
    // A session another rein has open goes on in a copy: the picker marked it, so
    // choosing it is choosing the copy.
    let opened = match SessionWriter::resume_with(path, crate::app::resume::SHOWN) {
        Err(e) if rein_core::session::in_use(&e).is_some() => {
            let busy = e.to_string();
            SessionWriter::fork_with(&sessions.data_dir, path, crate::app::resume::SHOWN).map(
                |(writer, mut loaded)| {
                    loaded.notices.push(format!(
                        "{busy}, so this is a copy of it: session {}",
                        loaded.id()
                    ));
                    (writer, loaded)
                },
            )
        }
        opened => opened,
    };
    let (writer, mut loaded) = opened.map_err(|e| {
        format!(
            "cannot resume {}: {e}; still in the current session",
            path.display()
        )
    })?;
    // The agent starts on the model in use; the update step then switches it to the one
    // the session last ran on, when that still leads where it ran. When it does not, the
    // session goes on with the model in use, and says why.
    if let Some(config) = ctx.config.as_deref() {
        let recorded = loaded
            .model
            .as_ref()
            .map(|m| (m.name.as_str(), m.base_url.as_str()));
        let decision = config.model_for_resume(recorded, false);
        if decision.target.is_none() && !decision.notices.is_empty() {
            loaded.model = None;
            loaded.notices.extend(decision.notices);
        }
    }
    // The agent needs no transcript (the dashboard keeps it as its cells): not copied.
    let transcript = std::mem::take(&mut loaded.transcript);
    let folds = std::mem::take(&mut loaded.folds);
    let for_agent = loaded.clone();
    (loaded.transcript, loaded.folds) = (transcript, folds);
    let setup = SessionSetup {
        writer,
        resumed: Some(for_agent),
        data_dir: sessions.data_dir.clone(),
    };
    let agent = rein_core::agent::spawn_learning_window(
        sessions.agent_config.clone(),
        Some(setup),
        sessions.window.clone(),
    )
    .map_err(|e| format!("cannot start the agent on {}: {e}", path.display()))?;
    if let Some(old) = ctx.agent.replace(agent) {
        old.send(AgentCommand::Shutdown);
    }
    sessions.current = Some(loaded.path.clone());
    sessions.resumable = loaded.message_count > 0;
    Ok(Box::new(loaded))
}
