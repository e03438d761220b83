//! The `/` completion list: while the input starts with `/` and the cursor is in its first
//! word, a list above the input box offers the commands that match what is typed, built-in
//! ones ([`super::commands::COMMANDS`]) first, then the custom ones
//! ([`rein_core::custom_commands`]), each with its one-line description.
//!
//! Nothing opens it: it is open whenever [`query`] finds a first word being typed, some
//! command [`SlashMenu::matches`] it, and Esc has not closed it for this very text
//! ([`SlashMenu::closed_for`]); typing a space after the name, deleting the `/` or typing
//! something no command matches closes it. Matches are ranked: names that start with the
//! query, then names that contain it, then names that hold its letters in order; within a
//! rank, the table's order. The selection is kept per query ([`SlashMenu::query`]), so
//! typing another letter starts again from the first match.
//!
//! Keys ([`SlashMenu::handle`], the keymap's `slash` mode, consulted before `global` and
//! `composer`):
//! Tab completes the selected name and a space; Enter runs the typed command when it names
//! one, else completes the selection (a second Enter runs it); Down/Up (Ctrl-N/Ctrl-P) move
//! the selection, wrapping around; Esc closes the list and keeps the text. Every other key
//! edits the input as usual. A leaf: it reads the input box and the custom commands it is
//! handed, and edits only the input when it completes a name.

use tui_textarea::{CursorMove, TextArea};

use super::commands::{self, SlashCommand, COMMANDS};
use super::input::clear;
use super::keymap::{Action, Mode};
use rein_core::custom_commands::CommandSet;

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
    /// For a custom command: `project` or `user`; for an MCP prompt, `MCP server NAME`.
    pub source: Option<String>,
}

/// Every command, built-in ones first, in the list's order.
pub fn entries(custom: &CommandSet) -> Vec<Entry> {
    let builtin = COMMANDS.iter().map(|(usage, description)| {
        let (name, hint) = usage.split_once(' ').unwrap_or((usage, ""));
        Entry {
            name: name.to_string(),
            hint: hint.to_string(),
            description: description.to_string(),
            source: None,
        }
    });
    let custom = custom.iter().map(|c| Entry {
        name: format!("/{}", c.name),
        hint: c.argument_hint.clone().unwrap_or_default(),
        description: c.description.clone(),
        source: Some(match c.source {
            // Which server: two may offer prompts of the same name.
            rein_core::custom_commands::CommandSource::Mcp => format!("MCP server {}", c.label),
            other => other.name().to_string(),
        }),
    });
    builtin.chain(custom).collect()
}

/// The first word being typed, without its slash: the input's first line starts with `/`
/// and the cursor is inside that word (or right after it).
pub fn query(input: &TextArea<'_>) -> Option<String> {
    let (row, col) = input.cursor();
    let line = input.lines().first()?;
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

/// What a key of the list's keymap mode leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlashOutcome {
    /// Nothing for the router (the selection moved, or the list closed).
    Stay,
    /// A name was completed in the input (the hint under it goes).
    Completed,
    /// Enter on a whole command's name: the router submits the input.
    Submit,
}

/// The keymap modes the list consults, before the main screen's.
pub const MODES: &[Mode] = &[Mode::Slash, Mode::Global, Mode::Composer];

/// What the footer names while the list is on top.
pub const FOOTER: &[(Mode, Action)] = &[
    (Mode::Slash, Action::SlashComplete),
    (Mode::Slash, Action::SlashAccept),
    (Mode::Slash, Action::SlashNext),
    (Mode::Slash, Action::SlashClose),
];

impl SlashMenu {
    /// The list as shown now, for the input box and the custom commands: empty when it is
    /// closed.
    pub fn matches(&self, input: &TextArea<'_>, custom: &CommandSet) -> Vec<Entry> {
        let Some(query) = query(input) else {
            return Vec::new();
        };
        if self.closed_for.as_ref() == input.lines().first() {
            return Vec::new();
        }
        rank(entries(custom), &query)
    }

    /// Whether the list is open (it is a layer: [`super::layer::Layer::Slash`]).
    pub fn is_open(&self, input: &TextArea<'_>, custom: &CommandSet) -> bool {
        !self.matches(input, custom).is_empty()
    }

    /// The selected match's index in [`SlashMenu::matches`] (of `len`).
    pub fn selected(&self, input: &TextArea<'_>, len: usize) -> usize {
        match query(input) {
            Some(q) if q == self.query => self.selected.min(len.saturating_sub(1)),
            _ => 0,
        }
    }

    /// A key of the list's keymap mode, over the input box it completes in.
    pub fn handle(
        &mut self,
        action: Action,
        input: &mut TextArea<'static>,
        custom: &CommandSet,
    ) -> SlashOutcome {
        let list = self.matches(input, custom);
        if list.is_empty() {
            return SlashOutcome::Stay;
        }
        let current = self.selected(input, list.len());
        match action {
            Action::SlashNext => self.select(input, (current + 1) % list.len()),
            Action::SlashPrev => self.select(input, (current + list.len() - 1) % list.len()),
            Action::SlashComplete => {
                complete(input, &list[current].name);
                return SlashOutcome::Completed;
            }
            Action::SlashAccept => {
                let typed = query(input).unwrap_or_default();
                if names_a_command(custom, &typed) {
                    return SlashOutcome::Submit;
                }
                complete(input, &list[current].name);
                return SlashOutcome::Completed;
            }
            Action::SlashClose => self.closed_for = input.lines().first().cloned(),
            _ => {}
        }
        SlashOutcome::Stay
    }

    fn select(&mut self, input: &TextArea<'_>, index: usize) {
        self.selected = index;
        self.query = query(input).unwrap_or_default();
    }
}

/// Whether `/name` as typed is a whole command, built-in (an alias too) or custom.
fn names_a_command(custom: &CommandSet, name: &str) -> bool {
    let builtin = matches!(
        commands::parse(&format!("/{name}")),
        Some(c) if !matches!(c, SlashCommand::Unknown(_))
    );
    builtin || custom.get(name).is_some()
}

/// Put `name` and a space in place of the first word, the cursor after them; the rest of
/// the input stays.
fn complete(textarea: &mut TextArea<'static>, name: &str) {
    let mut lines = textarea.lines().to_vec();
    let Some(first) = lines.first_mut() else {
        return;
    };
    let word_len = first.split(char::is_whitespace).next().map_or(0, str::len);
    let rest = first[word_len..].trim_start();
    *first = format!("{name} {rest}");
    let text = lines.join("\n");
    clear(textarea);
    textarea.insert_str(&text);
    let col = u16::try_from(name.chars().count() + 1).unwrap_or(u16::MAX);
    textarea.move_cursor(CursorMove::Jump(0, col));
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
        let mut input = TextArea::default();
        let set = |input: &mut TextArea<'static>, text: &str| {
            clear(input);
            input.insert_str(text);
        };
        let menu = SlashMenu::default();
        let none = CommandSet::empty();
        set(&mut input, "/mo");
        assert_eq!(query(&input).as_deref(), Some("mo"));
        set(&mut input, "/");
        assert_eq!(query(&input).as_deref(), Some(""));
        set(&mut input, "/model ");
        assert_eq!(query(&input), None, "past the name");
        input.move_cursor(CursorMove::Jump(0, 3));
        assert_eq!(
            query(&input).as_deref(),
            Some("model"),
            "cursor back in the word"
        );
        set(&mut input, "hello /model");
        assert_eq!(query(&input), None);
        set(&mut input, "/etc/hosts");
        assert_eq!(query(&input).as_deref(), Some("etc/hosts"));
        assert!(!menu.is_open(&input, &none), "nothing matches a path");
        set(&mut input, "/review\nmore");
        assert_eq!(query(&input), None, "cursor on the second line");
    }
}
