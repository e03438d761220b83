//! `rein rewind` and `rein diff`: the session's turns, taking them back, and what they
//! changed, printed as text or JSON (paths and messages pass through the sanitiser: they
//! come from the project and the model).

use super::out::{errln, out, outln};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use rein_core::checkpoint::{Outcome, Store};
use rein_core::config::Config;
use rein_core::session::rewind::{Request, Target};
use rein_core::text::sanitize::sanitize;

/// What `rein rewind` was asked.
pub(super) struct RewindArgs<'a> {
    pub list: bool,
    pub to: Option<u64>,
    pub undo: bool,
    pub code: bool,
    pub conversation: bool,
    pub dry_run: bool,
    pub force: bool,
    pub json: bool,
    pub resume: Option<&'a str>,
}

/// The session file: `resume`'s, or the project's latest.
fn session_path(config: &Config, root: &Path, resume: Option<&str>) -> Result<PathBuf, String> {
    match resume {
        Some(id) => rein_core::session::find(&config.data_dir, id).map_err(|e| e.to_string()),
        None => rein_core::session::latest_for_project(&config.data_dir, root)
            .map(|s| s.path)
            .ok_or_else(|| format!("no session of {} yet", root.display())),
    }
}

/// The record of the project the session at `session` ran in (a session chosen with
/// `--resume` may be another project's than this folder).
fn open_store(config: &Config, root: &Path, session: &Path) -> Result<Store, String> {
    let project = rein_core::session::load(session)
        .map(|loaded| loaded.meta.project)
        .ok()
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| root.to_path_buf());
    if project != root {
        errln!(
            "rein: the session ran in {}: its files are restored there",
            sanitize(&project.display().to_string())
        );
    }
    Store::open(&config.data_dir, &project, config.checkpoint_settings())
        .map_err(|e| format!("cannot open the project's checkpoints: {e}"))
}

/// `rein rewind ...`.
pub(super) fn rewind(config: &Config, root: &Path, args: RewindArgs) -> Result<ExitCode, String> {
    let path = session_path(config, root, args.resume)?;
    if args.list {
        return list(&path, args.json);
    }
    let store = open_store(config, root, &path)?;
    let target = match (args.undo, args.to) {
        (false, Some(n)) => Target::Turn(n),
        _ => Target::Undo,
    };
    let request = Request {
        target,
        // Neither flag: both.
        code: args.code || !args.conversation,
        conversation: args.conversation || !args.code,
        dry_run: args.dry_run,
        force: args.force,
    };
    let done = rein_core::session::rewind::rewind(&config.data_dir, &path, &store, request)?;
    let failed = done.report.as_ref().is_some_and(|r| {
        r.paths
            .iter()
            .any(|p| matches!(p.outcome, Outcome::Failed { .. }))
    });
    // A dry run forks nothing; it says that it would.
    let would_fork = match target {
        Target::Turn(n) if args.dry_run && request.conversation => Some(n),
        _ => None,
    };
    if args.json {
        let conversation = match (&done.forked, would_fork) {
            (Some(f), _) => serde_json::json!({ "session": f.id, "message": f.message }),
            (None, Some(n)) => serde_json::json!({ "would_go_back_before_turn": n }),
            (None, None) => serde_json::Value::Null,
        };
        let value = serde_json::json!({
            "dry_run": args.dry_run,
            "files": done.report,
            "conversation": conversation,
        });
        outln!("{value}");
    } else {
        print_done(&done, args.dry_run);
        if let Some(n) = would_fork {
            outln!(
                "conversation: would go on in a new session from before turn {n} (the original unchanged)"
            );
        }
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn print_done(done: &rein_core::session::rewind::Done, dry_run: bool) {
    if let Some(report) = &done.report {
        if report.paths.is_empty() {
            outln!("no files to put back: the turns changed none (or none is left to restore)");
        }
        for p in &report.paths {
            let (word, why) = match &p.outcome {
                Outcome::Restored if dry_run => ("would restore", None),
                Outcome::Removed if dry_run => ("would remove", None),
                Outcome::Restored => ("restored", None),
                Outcome::Removed => ("removed", None),
                Outcome::Unchanged => ("unchanged", None),
                Outcome::Kept { why } => ("kept", Some(why)),
                Outcome::Failed { why } => ("failed", Some(why)),
            };
            let why = why.map(|w| format!("  ({w})")).unwrap_or_default();
            outln!("{word:>14}  {}{why}", sanitize(&p.path.shown()));
        }
        if !dry_run && !report.changed().is_empty() {
            outln!("`rein rewind --undo` puts them back as they were just now");
        }
    }
    if let Some(forked) = &done.forked {
        outln!(
            "conversation: new session {} from before that turn (`rein --continue` goes on from it; the original is unchanged)",
            forked.id
        );
    }
}

/// `rein rewind --list`.
fn list(path: &Path, json: bool) -> Result<ExitCode, String> {
    let loaded = rein_core::session::load(path).map_err(|e| e.to_string())?;
    let turns = rein_core::session::rewind::turns(&loaded);
    if json {
        let turns: Vec<serde_json::Value> = turns
            .iter()
            .map(|t| {
                serde_json::json!({
                    "turn": t.turn,
                    "time": t.time,
                    "message": t.headline(),
                    "files": t.changed,
                })
            })
            .collect();
        outln!(
            "{}",
            serde_json::json!({ "session": loaded.meta.id, "turns": turns })
        );
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "session {}{}",
        loaded.meta.id,
        loaded
            .title
            .as_deref()
            .map(|t| format!("  {}", sanitize(t)))
            .unwrap_or_default()
    );
    if turns.is_empty() {
        outln!("no checkpoints recorded in this session");
    }
    for t in turns {
        let time = t.time.get(..16).unwrap_or(&t.time).replace('T', " ");
        outln!(
            "{:>4}  {time}  {:>3} file{}  {}",
            t.turn,
            t.changed.len(),
            if t.changed.len() == 1 { " " } else { "s" },
            sanitize(&t.headline())
        );
        for file in &t.changed {
            outln!("            {}", sanitize(&file.shown()));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `rein diff [--since N]`.
pub(super) fn diff(
    config: &Config,
    root: &Path,
    since: Option<u64>,
    resume: Option<&str>,
) -> Result<ExitCode, String> {
    let path = session_path(config, root, resume)?;
    let store = open_store(config, root, &path)?;
    let text = rein_core::session::rewind::diff(&path, &store, since)?;
    if text.is_empty() {
        outln!("the session's turns changed no file");
    }
    out!("{}", sanitize(&text));
    Ok(ExitCode::SUCCESS)
}
