//! The scroll of a modal's text (the help, a project's hooks, the plan review): the
//! keymap's scroll actions and the mouse wheel move one offset, bounded by the text's
//! length (the drawing, which knows the height and the wrapping, keeps the last page in
//! view). A leaf: it knows the offset and nothing of the text.

use crossterm::event::{MouseEvent, MouseEventKind};

use super::keymap::Action;

/// Lines the mouse wheel scrolls a text by.
pub const WHEEL_LINES: u16 = 3;

/// Moves `scroll` for a scroll action (a line, half a screen of `rows`, the top or the
/// end), at most to `most`; whether `action` was one.
pub fn act(scroll: &mut u16, action: Action, rows: u16, most: u16) -> bool {
    let page = (rows / 2).max(1);
    let to = match action {
        Action::ScrollUp => scroll.saturating_sub(1),
        Action::ScrollDown => scroll.saturating_add(1),
        Action::PageUp => scroll.saturating_sub(page),
        Action::PageDown => scroll.saturating_add(page),
        Action::ScrollTop => 0,
        Action::ScrollBottom => u16::MAX,
        _ => return false,
    };
    *scroll = to.min(most);
    true
}

/// The mouse wheel over the text: [`WHEEL_LINES`] up or down, at most to `most`.
pub fn wheel(scroll: &mut u16, mouse: &MouseEvent, most: u16) {
    match mouse.kind {
        MouseEventKind::ScrollUp => *scroll = scroll.saturating_sub(WHEEL_LINES),
        MouseEventKind::ScrollDown => *scroll = scroll.saturating_add(WHEEL_LINES).min(most),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyModifiers;

    fn mouse(kind: MouseEventKind) -> MouseEvent {
        MouseEvent {
            kind,
            column: 0,
            row: 0,
            modifiers: KeyModifiers::NONE,
        }
    }

    #[test]
    fn scroll_actions_move_within_the_text_and_others_are_not_theirs() {
        let mut scroll = 0;
        assert!(act(&mut scroll, Action::PageDown, 20, 25));
        assert_eq!(scroll, 10);
        assert!(act(&mut scroll, Action::PageDown, 20, 25));
        assert!(act(&mut scroll, Action::PageDown, 20, 25));
        assert_eq!(scroll, 25, "bounded by the text");
        assert!(act(&mut scroll, Action::ScrollUp, 20, 25));
        assert_eq!(scroll, 24);
        assert!(act(&mut scroll, Action::ScrollTop, 20, 25));
        assert_eq!(scroll, 0);
        assert!(act(&mut scroll, Action::ScrollUp, 20, 25));
        assert_eq!(scroll, 0, "never above the top");
        assert!(act(&mut scroll, Action::ScrollBottom, 20, 25));
        assert_eq!(scroll, 25);
        assert!(!act(&mut scroll, Action::CloseHelp, 20, 25));
        assert_eq!(scroll, 25);
        wheel(&mut scroll, &mouse(MouseEventKind::ScrollUp), 25);
        assert_eq!(scroll, 22);
        wheel(&mut scroll, &mouse(MouseEventKind::ScrollDown), 23);
        assert_eq!(scroll, 23);
    }
}
