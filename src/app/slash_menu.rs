//! The `/` completion list: while the input starts with `/` and the cursor is in its first
//! word, a list above the input box offers the commands that match what is typed, built-in
//! ones ([`super::commands::COMMANDS`]) first, then the custom ones
//! ([`crate::custom_commands`]), each with its one-line description.
//!
//! Nothing opens it: it is open whenever [`query`] finds a first word being typed, some
//! command [`matches()`] it, and Esc has not closed it for this very text
//! ([`SlashMenu::closed_for`]); typing a space after the name, deleting the `/` or typing
//! something no command matches closes it. Matches are ranked: names that start with the
//! query, then names that contain it, then names that hold its letters in order; within a
//! rank, the table's order. The selection is kept per query ([`SlashMenu::query`]), so
//! typing another letter starts again from the first match.
//!
//! Keys ([`run`], the keymap's `slash` mode, consulted before `global` and `composer`):
//! Tab completes the selected name and a space; Enter runs the typed command when it names
//! one, else completes the selection (a second Enter runs it); Down/Up (Ctrl-N/Ctrl-P) move
//! the selection, wrapping around; Esc closes the list and keeps the text. Every other key
//! edits the input as usual.

use std::time::Instant;

use tui_textarea::CursorMove;

use super::commands::{self, SlashCommand, COMMANDS};
use super::composer;
use super::event::Effect;
use super::keymap::Action;
use super::state::App;

/// The list's state between keys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SlashMenu {
    /// The selected match, for [`SlashMenu::query`].
    pub selected: usize,
    /// The query the selection was made for; another query selects the first match.
    pub query: String,
    /// The input's first line when Esc closed the list: it stays closed until that changes.
    pub closed_for: Option<String>,
}

/// One command the list offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// With the slash: `/model`, `/fix-issue`.
    pub name: String,
    /// What the arguments are (`[NAME]`, `<issue-number>`), or empty.
    pub hint: String,
    pub description: String,
    /// For a custom command: `project` or `user`.
    pub source: Option<&'static str>,
}

/// Every command, built-in ones first, in the list's order.
pub fn entries(app: &App) -> Vec<Entry> {
    let builtin = COMMANDS.iter().map(|(usage, description)| {
        let (name, hint) = usage.split_once(' ').unwrap_or((usage, ""));
        Entry {
            name: name.to_string(),
            hint: hint.to_string(),
            description: description.to_string(),
            source: None,
        }
    });
    let custom = app.custom_commands.iter().map(|c| Entry {
        name: format!("/{}", c.name),
        hint: c.argument_hint.clone().unwrap_or_default(),
        description: c.description.clone(),
        source: Some(c.source.name()),
    });
    builtin.chain(custom).collect()
}

/// The first word being typed, without its slash: the input's first line starts with `/`
/// and the cursor is inside that word (or right after it).
pub fn query(app: &App) -> Option<String> {
    let textarea = &app.composer.textarea;
    let (row, col) = textarea.cursor();
    let line = textarea.lines().first()?;
    let word = line.split(char::is_whitespace).next()?;
    let rest = word.strip_prefix('/')?;
    (row == 0 && col >= 1 && col <= word.chars().count()).then(|| rest.to_string())
}

/// The commands matching `query`, best first.
pub fn rank(entries: Vec<Entry>, query: &str) -> Vec<Entry> {
    let query = query.to_lowercase();
    let mut ranked: Vec<(u8, Entry)> = entries
        .into_iter()
        .filter_map(|e| {
            let name = e.name.trim_start_matches('/').to_lowercase();
            let rank = if name.starts_with(&query) {
                0
            } else if name.contains(&query) {
                1
            } else if in_order(&name, &query) {
                2
            } else {
                return None;
            };
            Some((rank, e))
        })
        .collect();
    ranked.sort_by_key(|(rank, _)| *rank);
    ranked.into_iter().map(|(_, e)| e).collect()
}

/// Whether the letters of `query` appear in `name` in order.
fn in_order(name: &str, query: &str) -> bool {
    let mut chars = name.chars();
    query.chars().all(|q| chars.any(|c| c == q))
}

/// The list as shown now: empty when it is closed.
pub fn matches(app: &App) -> Vec<Entry> {
    let Some(query) = query(app) else {
        return Vec::new();
    };
    let first_line = app.composer.textarea.lines().first();
    if app.slash_menu.closed_for.as_ref() == first_line {
        return Vec::new();
    }
    rank(entries(app), &query)
}

/// Whether the list is open (it is a layer: [`super::layer::Layer::Slash`]).
pub fn is_open(app: &App) -> bool {
    !matches(app).is_empty()
}

/// The selected match's index in [`matches()`] (of `len`).
pub fn selected(app: &App, len: usize) -> usize {
    match query(app) {
        Some(q) if q == app.slash_menu.query => app.slash_menu.selected.min(len.saturating_sub(1)),
        _ => 0,
    }
}

/// A key of the list's keymap mode.
pub fn run(app: &mut App, action: Action, now: Instant, effects: &mut Vec<Effect>) {
    let list = matches(app);
    if list.is_empty() {
        return;
    }
    let current = selected(app, list.len());
    match action {
        Action::SlashNext => select(app, (current + 1) % list.len()),
        Action::SlashPrev => select(app, (current + list.len() - 1) % list.len()),
        Action::SlashComplete => complete(app, &list[current].name),
        Action::SlashAccept => {
            let typed = query(app).unwrap_or_default();
            if names_a_command(app, &typed) {
                composer::submit(app, now, effects);
            } else {
                complete(app, &list[current].name);
            }
        }
        Action::SlashClose => {
            app.slash_menu.closed_for = app.composer.textarea.lines().first().cloned();
        }
        _ => {}
    }
}

fn select(app: &mut App, index: usize) {
    app.slash_menu.selected = index;
    app.slash_menu.query = query(app).unwrap_or_default();
}

/// Whether `/name` as typed is a whole command, built-in (an alias too) or custom.
fn names_a_command(app: &App, name: &str) -> bool {
    let builtin = matches!(
        commands::parse(&format!("/{name}")),
        Some(c) if !matches!(c, SlashCommand::Unknown(_))
    );
    builtin || app.custom_commands.get(name).is_some()
}

/// Put `name` and a space in place of the first word, the cursor after them; the rest of
/// the input stays.
fn complete(app: &mut App, name: &str) {
    let textarea = &mut app.composer.textarea;
    let mut lines = textarea.lines().to_vec();
    let Some(first) = lines.first_mut() else {
        return;
    };
    let word_len = first.split(char::is_whitespace).next().map_or(0, str::len);
    let rest = first[word_len..].trim_start();
    *first = format!("{name} {rest}");
    let text = lines.join("\n");
    composer::clear(textarea);
    textarea.insert_str(&text);
    let col = u16::try_from(name.chars().count() + 1).unwrap_or(u16::MAX);
    textarea.move_cursor(CursorMove::Jump(0, col));
    app.hint = None;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str) -> Entry {
        Entry {
            name: name.to_string(),
            hint: String::new(),
            description: String::new(),
            source: None,
        }
    }

    fn ranked(names: &[&str], query: &str) -> Vec<String> {
        rank(names.iter().map(|n| entry(n)).collect(), query)
            .into_iter()
            .map(|e| e.name)
            .collect()
    }

    #[test]
    fn prefix_matches_come_first_then_substrings_then_letters_in_order() {
        let names = [
            "/compact",
            "/context",
            "/cost",
            "/clear",
            "/todos",
            "/fix-cost",
        ];
        assert_eq!(
            ranked(&names, "co"),
            ["/compact", "/context", "/cost", "/fix-cost"]
        );
        assert_eq!(ranked(&names, "cst"), ["/cost", "/fix-cost"]);
        assert_eq!(ranked(&names, "ost"), ["/cost", "/fix-cost"]);
        assert_eq!(ranked(&names, "CL"), ["/clear"], "case does not matter");
        assert_eq!(ranked(&names, "").len(), names.len(), "nothing typed: all");
        assert!(ranked(&names, "zz").is_empty());
    }

    #[test]
    fn the_query_is_the_first_word_while_the_cursor_is_in_it() {
        let mut app = App::new(Default::default(), 1000);
        let set = |app: &mut App, text: &str| {
            composer::clear(&mut app.composer.textarea);
            app.composer.textarea.insert_str(text);
        };
        set(&mut app, "/mo");
        assert_eq!(query(&app).as_deref(), Some("mo"));
        set(&mut app, "/");
        assert_eq!(query(&app).as_deref(), Some(""));
        set(&mut app, "/model ");
        assert_eq!(query(&app), None, "past the name");
        app.composer.textarea.move_cursor(CursorMove::Jump(0, 3));
        assert_eq!(
            query(&app).as_deref(),
            Some("model"),
            "cursor back in the word"
        );
        set(&mut app, "hello /model");
        assert_eq!(query(&app), None);
        set(&mut app, "/etc/hosts");
        assert_eq!(query(&app).as_deref(), Some("etc/hosts"));
        assert!(!is_open(&app), "nothing matches a path");
        set(&mut app, "/review\nmore");
        assert_eq!(query(&app), None, "cursor on the second line");
    }
}
