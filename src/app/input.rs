//! Small edits of text fields that several layers share: the input box's text as one
//! string, emptying it, replacing it with the cursor at a chosen place, pasted line breaks,
//! and the one-line filters of the pickers and searches. A leaf: text in, text out.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tui_textarea::{CursorMove, TextArea};

/// The input's text, lines joined with `\n`.
pub fn text(textarea: &TextArea<'_>) -> String {
    textarea.lines().join("\n")
}

/// Empty the input, keeping its styles and placeholder (the undo history keeps the text).
pub fn clear(textarea: &mut TextArea<'_>) {
    textarea.select_all();
    textarea.delete_char();
}

/// Where the cursor goes after the text is replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorAt {
    /// End of the first line: Up again recalls the entry before.
    FirstLine,
    /// End of the text: Down again recalls the entry after.
    End,
}

/// Replace the text, the cursor at `at`.
pub fn replace_text(textarea: &mut TextArea<'_>, text: &str, at: CursorAt) {
    clear(textarea);
    textarea.insert_str(text);
    match at {
        CursorAt::FirstLine => {
            textarea.move_cursor(CursorMove::Top);
            textarea.move_cursor(CursorMove::End);
        }
        CursorAt::End => {
            textarea.move_cursor(CursorMove::Bottom);
            textarea.move_cursor(CursorMove::End);
        }
    }
}

/// Enter right after a `\`: the backslash becomes a line break, as a shell continues a
/// line (for terminals that send Shift-Enter as Enter). False, and nothing changes, when
/// the character before the cursor is not a backslash.
pub fn backslash_newline(textarea: &mut TextArea<'_>) -> bool {
    let (row, col) = textarea.cursor();
    let before = textarea
        .lines()
        .get(row)
        .and_then(|line| line.chars().nth(col.checked_sub(1)?));
    if before != Some('\\') {
        return false;
    }
    textarea.delete_char();
    textarea.insert_newline();
    true
}

/// Terminals send pasted line breaks as `\r`, `\r\n` or `\n`; the input wants `\n`.
pub fn normalize_newlines(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// A key that edits a one-line filter: a character is typed, Backspace deletes. True when
/// the filter changed (a picker's selection then goes back to the top).
pub fn edit_filter(filter: &mut String, key: &KeyEvent) -> bool {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    match key.code {
        KeyCode::Backspace => filter.pop().is_some(),
        KeyCode::Char(c) if !ctrl && !alt && !c.is_control() => {
            filter.push(c);
            true
        }
        _ => false,
    }
}

/// Pasted text as one line of a filter: control characters (line breaks) become spaces.
pub fn paste_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}
