//! The input box and what it remembers: earlier inputs recalled with Up and Down, the draft
//! typed before recalling started, messages queued while a turn runs, custom commands sent,
//! big pastes folded into placeholders ([`super::paste`]) and how a sent message with them
//! is shown.
//!
//! A leaf: it changes only its own state. Up on the first line and Down on the last walk
//! the history ([`Composer::history_prev`], [`Composer::history_next`]); the text typed
//! before is kept as the draft and comes back past the newest entry. What Enter does with
//! the text (a slash command, a message, a held or queued one) is the router's
//! (`super::update::send`).

use std::collections::HashSet;

use tui_textarea::{CursorMove, TextArea};

pub use super::input::{clear, normalize_newlines, text};
use super::input::{replace_text, CursorAt};
use super::paste::Pastes;

/// The input box's placeholder.
const PLACEHOLDER: &str =
    "Ask rein to do something…  (Enter sends, Shift+Enter or Ctrl+J for a new line, /help)";

/// The input box and what it remembers.
pub struct Composer {
    pub textarea: TextArea<'static>,
    /// Earlier inputs, oldest first (Up/Down recall them).
    pub history: Vec<String>,
    /// The history entry being shown, when recalling.
    pub history_pos: Option<usize>,
    /// What was typed before recalling started, restored past the newest entry.
    pub draft: String,
    /// Messages sent while the agent worked, delivered when its turn ends (shown as
    /// queued until then).
    pub queued: Vec<String>,
    /// Custom commands sent whose turn has not started yet: when it does, the transcript
    /// shows what was typed instead of the prompt.
    pub sent_commands: Vec<SentCommand>,
    /// The big pastes of the message being written, shown as placeholders.
    pub pastes: Pastes,
    /// Messages sent with pastes that the agent has not taken yet: the transcript and the
    /// queue show them with their placeholders.
    pub folded: Vec<Folded>,
}

/// A message with big pastes: as sent (whole) and as shown (placeholders).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folded {
    pub sent: String,
    pub shown: String,
}

/// A custom command as typed and as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentCommand {
    /// `/fix-issue 123`.
    pub typed: String,
    /// The prompt the model gets.
    pub expanded: String,
    /// Where the prompt came from (`.agents/commands/fix-issue.md`).
    pub from: String,
}

impl Default for Composer {
    fn default() -> Self {
        let mut textarea = TextArea::default();
        textarea.set_placeholder_text(PLACEHOLDER);
        Composer {
            textarea,
            history: Vec::new(),
            history_pos: None,
            draft: String::new(),
            queued: Vec::new(),
            sent_commands: Vec::new(),
            pastes: Pastes::default(),
            folded: Vec::new(),
        }
    }
}

impl Composer {
    /// The input's text, lines joined with `\n`.
    pub fn text(&self) -> String {
        text(&self.textarea)
    }

    /// A sent input into the history (not twice in a row), and the recall ends. True when
    /// it was added (then it goes to the history file too, when inputs are saved).
    pub fn remember(&mut self, text: &str) -> bool {
        let added = self.history.last().map(String::as_str) != Some(text);
        if added {
            self.history.push(text.to_string());
        }
        self.history_pos = None;
        self.draft.clear();
        added
    }

    /// The inputs of earlier sessions, read from the history file after the dashboard
    /// started: they go before what this run has in its history already (typed since, or
    /// a resumed session's), which is not repeated; a recall in progress stays on its
    /// entry.
    pub fn earlier_inputs(&mut self, earlier: Vec<String>) {
        let old = std::mem::take(&mut self.history);
        let shown = self.history_pos.and_then(|i| old.get(i).cloned());
        let known: HashSet<&str> = earlier.iter().map(String::as_str).collect();
        let newer: Vec<String> = old
            .into_iter()
            .filter(|e| !known.contains(e.as_str()))
            .collect();
        self.history = earlier;
        self.history.extend(newer);
        if let Some(entry) = shown {
            self.history_pos = self.history.iter().rposition(|e| *e == entry);
        }
    }

    /// Up on the first line: show the entry before the one shown (the newest at first).
    pub fn history_prev(&mut self) {
        let pos = match self.history_pos {
            _ if self.history.is_empty() => return,
            None => {
                self.draft = text(&self.textarea);
                self.history.len() - 1
            }
            Some(0) => return,
            Some(i) => i - 1,
        };
        self.history_pos = Some(pos);
        replace_text(&mut self.textarea, &self.history[pos], CursorAt::FirstLine);
    }

    /// Down on the last line: show the entry after the one shown, and past the newest the
    /// draft typed before recalling started.
    pub fn history_next(&mut self) {
        let Some(pos) = self.history_pos else {
            return;
        };
        if pos + 1 < self.history.len() {
            self.history_pos = Some(pos + 1);
            replace_text(&mut self.textarea, &self.history[pos + 1], CursorAt::End);
        } else {
            self.history_pos = None;
            let draft = std::mem::take(&mut self.draft);
            replace_text(&mut self.textarea, &draft, CursorAt::End);
        }
    }

    /// Show history entry `index` in the input, as if recalled with Up (the Ctrl-R search
    /// accepts its match so): the text there becomes the draft, and Up/Down go on from it.
    /// False when there is no such entry.
    pub fn recall(&mut self, index: usize) -> bool {
        let Some(entry) = self.history.get(index) else {
            return false;
        };
        if self.history_pos.is_none() {
            self.draft = text(&self.textarea);
        }
        self.history_pos = Some(index);
        replace_text(&mut self.textarea, entry, CursorAt::End);
        true
    }

    /// Replace the input's text (the external editor's result, which had the pastes
    /// whole), the cursor at its end; the history walk ends.
    pub fn set_text(&mut self, new: &str) {
        self.history_pos = None;
        self.pastes.clear();
        replace_text(&mut self.textarea, new, CursorAt::End);
    }

    /// Bracketed paste: inserted at the cursor, line breaks kept, a big one as its
    /// placeholder; never sends.
    pub fn paste(&mut self, text: &str) {
        let text = normalize_newlines(text);
        match self.pastes.fold(&text) {
            Some(token) => self.textarea.insert_str(token),
            None => self.textarea.insert_str(text),
        };
    }

    /// The input's text with its pastes whole: what is sent, or edited in the editor.
    pub fn whole_text(&self) -> String {
        self.pastes.expand(&self.text())
    }

    /// Ctrl-C with text: empty the input and end the history walk.
    pub fn clear(&mut self) {
        clear(&mut self.textarea);
        self.pastes.clear();
        self.history_pos = None;
    }

    /// How a message sent from here shows: with its placeholders when it had pastes, as
    /// typed when it was a custom command, else as sent.
    pub fn shown<'a>(&'a self, sent: &'a str) -> &'a str {
        if let Some(f) = self.folded.iter().find(|f| f.sent == sent) {
            return &f.shown;
        }
        match self.sent_commands.iter().find(|c| c.expanded == sent) {
            Some(command) => &command.typed,
            None => sent,
        }
    }

    /// Backspace right after a placeholder: remove it whole (one undo brings it back).
    /// False when the cursor is not right after one.
    pub fn delete_paste_before(&mut self) -> bool {
        let (row, col) = self.textarea.cursor();
        let Some(line) = self.textarea.lines().get(row) else {
            return false;
        };
        let Some(start) = self.pastes.token_before(line, col) else {
            return false;
        };
        jump(&mut self.textarea, row, start);
        self.textarea.delete_str(col - start)
    }

    /// Delete right before a placeholder: remove it whole. False when the cursor is not
    /// right before one.
    pub fn delete_paste_after(&mut self) -> bool {
        let (row, col) = self.textarea.cursor();
        let Some(line) = self.textarea.lines().get(row) else {
            return false;
        };
        let Some(end) = self.pastes.token_after(line, col) else {
            return false;
        };
        self.textarea.delete_str(end - col)
    }

    /// The cursor never rests inside a placeholder: moved there from `before`, it goes on
    /// to the placeholder's far end in the direction it moved.
    pub fn keep_out_of_pastes(&mut self, before: (usize, usize)) {
        let (row, col) = self.textarea.cursor();
        let Some(line) = self.textarea.lines().get(row) else {
            return;
        };
        if let Some((start, end)) = self.pastes.token_around(line, col) {
            let back = (row, col) < before;
            jump(&mut self.textarea, row, if back { start } else { end });
        }
    }
}

/// Put the cursor at (row, col).
fn jump(textarea: &mut TextArea<'_>, row: usize, col: usize) {
    let row = u16::try_from(row).unwrap_or(u16::MAX);
    let col = u16::try_from(col).unwrap_or(u16::MAX);
    textarea.move_cursor(CursorMove::Jump(row, col));
}
