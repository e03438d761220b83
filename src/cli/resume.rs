//! The session a run records into: the one `--continue` or `--resume ID` names, opened
//! for appending (or forked with `--fork`) with the model it goes on with, or a new one.

use std::path::Path;

use rein_core::agent::SessionSetup;
use rein_core::config::Config;
use rein_core::session::{LoadedSession, SessionMeta, SessionWriter};

use super::args::Cli;

/// A session to continue (`--continue`, `--resume ID`), read and opened for appending.
pub(super) struct Resumed {
    pub(super) writer: SessionWriter,
    pub(super) session: LoadedSession,
    /// Which model it goes on with, and why.
    pub(super) model_notices: Vec<String>,
}

impl Resumed {
    pub(super) fn setup(self, config: &Config) -> SessionSetup {
        SessionSetup {
            writer: self.writer,
            resumed: Some(self.session),
            data_dir: config.data_dir.clone(),
        }
    }
}

/// The session `--continue` or `--resume ID` names, if any (`--resume` without an ID
/// continues none: the dashboard opens its picker). The settings switch to the model the
/// session last ran on, unless `--model` is given or the name no longer resolves (see
/// `Config::model_for_resume`); its window is asked of the server as a new session's is,
/// once the front end starts.
pub(super) fn resume_session(
    config: &mut Config,
    root: &Path,
    cli: &Cli,
) -> Result<Option<Resumed>, String> {
    let data_dir = config.data_dir.clone();
    let path = if cli.continue_session {
        match rein_core::session::latest_for_project(&data_dir, root) {
            Some(summary) => summary.path,
            None => {
                return Err(format!(
                    "no earlier session for {} to continue (`rein sessions` lists them)",
                    root.display()
                ))
            }
        }
    } else if let Some(id) = cli.resume.as_deref().filter(|id| !id.is_empty()) {
        rein_core::session::find(&data_dir, id).map_err(|e| e.to_string())?
    } else {
        return Ok(None);
    };
    // Long tool results only as their heads: the dashboard reads the rest back when one is
    // expanded, and headless shows none of them.
    let shown = rein::app::resume::SHOWN;
    let opened = if cli.fork {
        SessionWriter::fork_with(&data_dir, &path, shown)
    } else {
        SessionWriter::resume_with(&path, shown)
    };
    let (writer, session) = opened.map_err(|e| match rein_core::session::in_use(&e) {
        Some(busy) => format!("{busy}; wait for it to end, or add --fork to go on in a copy of it"),
        None => format!("cannot continue {}: {e}", path.display()),
    })?;
    let recorded = session
        .model
        .as_ref()
        .map(|m| (m.name.as_str(), m.base_url.as_str()));
    let decision = config.model_for_resume(recorded, cli.model.is_some());
    if let Some(target) = decision.target {
        config.set_target(target);
    }
    Ok(Some(Resumed {
        writer,
        session,
        model_notices: decision.notices,
    }))
}

/// A new session file for this run, or why there is none: rein still runs when its data
/// folder cannot be written (a read-only `REIN_HOME`), only without recording.
pub(super) fn new_session(config: &Config, root: &Path) -> Result<SessionSetup, String> {
    let data_dir = config.data_dir.clone();
    let meta = SessionMeta::new(root.to_path_buf(), config.model.value.clone());
    let writer = SessionWriter::create(&data_dir, meta).map_err(|e| {
        format!(
            "not recording this session: cannot create a session file under {}: {e}",
            data_dir.display()
        )
    })?;
    Ok(SessionSetup {
        writer,
        resumed: None,
        data_dir,
    })
}
