//! Hooks on the dashboard: `/hooks`'s list, `/hooks allow` (the question about a project's
//! held hooks, again), and what the answer to that question means.

use crate::app::hook_trust::HookTrustOutcome;
use crate::app::state::App;
use crate::app::transcript::NoticeKind;
use crate::app::Effect;

/// `/hooks`: every hook that runs, with its source, and what was said about them at start.
pub fn list(app: &mut App) {
    let mut text = if app.hooks.is_empty() {
        "No hooks run: put Claude Code's `hooks` block in hooks.json beside your config.toml \
         (`rein hooks` lists them)"
            .to_string()
    } else {
        format!("Hooks ({}):", app.hooks.len())
    };
    for line in app.hooks.iter().chain(&app.hook_notices) {
        text.push_str(&format!("\n  {line}"));
    }
    if app.hook_trust.is_some() {
        text.push_str("\n  (/hooks allow shows the project's held hooks and asks)");
    }
    app.transcript.notice(NoticeKind::Info, text);
}

/// `/hooks allow`: ask about the project's held hooks again; with none held at start, approve
/// them as they are now (a script of theirs that changed during the session holds them
/// until then, as `rein hooks allow` in a shell would; the transcript lists what it pins).
pub fn ask_again(app: &mut App, effects: &mut Vec<Effect>) {
    match app.hook_trust.as_mut() {
        Some(trust) => {
            trust.open = true;
            trust.scroll = 0;
        }
        None => effects.push(Effect::ReapproveHooks),
    }
}

/// The user answered the question about the project's hooks.
pub fn answer(app: &mut App, outcome: HookTrustOutcome, effects: &mut Vec<Effect>) {
    match outcome {
        HookTrustOutcome::Stay => {}
        HookTrustOutcome::Allow => {
            if let Some(trust) = app.hook_trust.take() {
                effects.push(Effect::AllowHooks(Box::new(trust.held)));
            }
        }
        HookTrustOutcome::Keep => {
            if let Some(trust) = app.hook_trust.as_mut() {
                trust.open = false;
                let n = trust.held.hooks.len();
                app.transcript.notice(
                    NoticeKind::Info,
                    format!(
                        "the project's {n} hook{} stay{} held: none of them runs in this \
                         session (/hooks allow asks again)",
                        if n == 1 { "" } else { "s" },
                        if n == 1 { "s" } else { "" }
                    ),
                );
                effects.push(Effect::HooksAnswered);
            }
        }
    }
}

/// `/hooks allow` approved the project's hooks as they are now (`files`: the project files
/// the approval pins, a line each), or could not (`Err`: there are none, or it failed).
pub fn reapproved(app: &mut App, result: Result<Vec<String>, String>) {
    match result {
        Ok(files) => {
            let mut text = "allowed the project's hooks as they are now; they run as you, \
                            outside rein's sandbox, until they or these files change:"
                .to_string();
            for line in &files {
                text.push_str(&format!("\n  {line}"));
            }
            if files.is_empty() {
                text.push_str("\n  (their commands name no project file)");
            }
            app.transcript.notice(NoticeKind::Info, text);
        }
        Err(why) => app.transcript.notice(
            NoticeKind::Error,
            format!("no project hooks allowed: {why}"),
        ),
    }
}

/// The project's hooks were allowed (`lines` are every hook in force now), or the approval
/// failed and they stay held (`Err`).
pub fn allowed(app: &mut App, result: Result<Vec<String>, String>) {
    match result {
        Ok(lines) => {
            let project: Vec<&String> = lines.iter().filter(|l| !app.hooks.contains(l)).collect();
            let mut text = format!(
                "allowed the project's hooks: {} run{} as you, outside rein's sandbox, until \
                 the file changes:",
                project.len(),
                if project.len() == 1 { "s" } else { "" }
            );
            for line in project {
                text.push_str(&format!("\n  {line}"));
            }
            app.transcript.notice(NoticeKind::Info, text);
            // What was said about them being held no longer holds.
            app.hook_notices.retain(|n| !n.contains(" held: "));
            app.hooks = lines;
        }
        Err(why) => app.transcript.notice(
            NoticeKind::Error,
            format!("the project's hooks stay held: {why}"),
        ),
    }
}
