//! The session a run records into: the one `--continue` or `--resume ID` names, opened
//! for appending (or forked with `--fork`) with the model it goes on with, or a new one.

use std::path::Path;

use crate::agent::SessionSetup;
use crate::config::Config;
use crate::session::{LoadedSession, SessionMeta, SessionWriter, Shown};

/// Which session a run goes on with (`--continue`, `--resume ID`, `--fork`), if any.
#[derive(Debug, Clone)]
pub struct Continue {
    /// The project's latest session (`--continue`).
    pub latest: bool,
    /// The session with this ID (`--resume ID`; empty: none, the dashboard's picker).
    pub id: Option<String>,
    /// Go on in a copy of it (`--fork`).
    pub fork: bool,
    /// A model was named for this run (`--model`): it wins over the session's.
    pub model_given: bool,
    /// How much of a long tool result is read back (the dashboard reads the rest when
    /// one is expanded; headless shows none of them).
    pub shown: Shown,
}

/// A session to continue (`--continue`, `--resume ID`), read and opened for appending.
pub struct Resumed {
    pub writer: SessionWriter,
    pub session: LoadedSession,
    /// Which model it goes on with, and why.
    pub model_notices: Vec<String>,
}

impl Resumed {
    pub fn setup(self, config: &Config) -> SessionSetup {
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
pub fn resume_session(
    config: &mut Config,
    root: &Path,
    which: &Continue,
) -> Result<Option<Resumed>, String> {
    let data_dir = config.data_dir.clone();
    let path = if which.latest {
        match crate::session::latest_for_project(&data_dir, root) {
            Some(summary) => summary.path,
            None => {
                return Err(format!(
                    "no earlier session for {} to continue (`rein sessions` lists them)",
                    root.display()
                ))
            }
        }
    } else if let Some(id) = which.id.as_deref().filter(|id| !id.is_empty()) {
        crate::session::find(&data_dir, id).map_err(|e| e.to_string())?
    } else {
        return Ok(None);
    };
    let shown = which.shown;
    let opened = if which.fork {
        SessionWriter::fork_with(&data_dir, &path, shown)
    } else {
        SessionWriter::resume_with(&path, shown)
    };
    let (writer, session) = opened.map_err(|e| match crate::session::in_use(&e) {
        Some(busy) => format!("{busy}; wait for it to end, or add --fork to go on in a copy of it"),
        None => format!("cannot continue {}: {e}", path.display()),
    })?;
    let recorded = session
        .model
        .as_ref()
        .map(|m| (m.name.as_str(), m.base_url.as_str()));
    let decision = config.model_for_resume(recorded, which.model_given);
    if let Some(target) = decision.target {
        config.set_target(target);
    }
    Ok(Some(Resumed {
        writer,
        session,
        model_notices: decision.notices,
    }))
}

/// The session a start records into, and what to tell the user about it.
pub struct Recording {
    /// The continued session or a new one; `Err`: why nothing is recorded (a new session's
    /// file could not be made; rein still runs).
    pub session: Result<SessionSetup, String>,
    /// Which model a continued session goes on with, and why.
    pub notices: Vec<String>,
}

/// The session a start records into: the continued one ([`Resumed`]) or a new one
/// ([`new_session`]). Every front end takes its session here.
pub fn record_into(config: &Config, root: &Path, resumed: Option<Resumed>) -> Recording {
    match resumed {
        Some(mut resumed) => {
            let notices = std::mem::take(&mut resumed.model_notices);
            Recording {
                session: Ok(resumed.setup(config)),
                notices,
            }
        }
        None => Recording {
            session: new_session(config, root),
            notices: Vec::new(),
        },
    }
}

/// A new session file for this run, or why there is none: rein still runs when its data
/// folder cannot be written (a read-only `REIN_HOME`), only without recording.
pub fn new_session(config: &Config, root: &Path) -> Result<SessionSetup, String> {
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
