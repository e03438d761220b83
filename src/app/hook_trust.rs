//! The question about a project's hooks, as a layer: a project's `.rein/hooks.json` would
//! run its commands as the user, outside the sandbox, so while the user has not approved
//! it as it is now, its hooks are held and the dashboard asks, at start, showing every
//! command in full (drawn by `crate::ui::hook_trust`).
//!
//! `a` allows them ([`HookTrustOutcome::Allow`]: the router hands the held hooks to the
//! loop, which pins the approval to exactly these definitions and lets them run from the
//! next event on); `n`, Esc or Ctrl-C keep them held for this session, and `/hooks allow`
//! asks again. Nothing but an explicit choice allows them: unbound keys, key repeats and
//! pastes do nothing. The session's start waits for the answer, so an allowed SessionStart
//! hook sees it. A leaf: the held hooks and the scroll are all it knows.

use crossterm::event::{KeyEvent, KeyEventKind, MouseEvent};
use tui_textarea::TextArea;

use super::keymap::{keymap, Action, Mode};
use super::text_scroll;
use rein_core::hooks::Held;

/// A project's held hooks, and whether the question about them is open.
#[derive(Debug, Clone)]
pub struct HookTrust {
    pub held: Held,
    /// The question is on screen (closed once answered "keep held"; `/hooks allow` opens
    /// it again).
    pub open: bool,
    /// Lines the question's text is scrolled by (the drawing keeps it in range).
    pub scroll: u16,
}

/// What a key in the question leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookTrustOutcome {
    /// Nothing to tell the router (the text may have scrolled).
    Stay,
    /// Allow the held hooks.
    Allow,
    /// Keep them held: the question closes.
    Keep,
}

/// The keymap modes the question consults.
pub const MODES: &[Mode] = &[Mode::Hooks];

/// What the footer names while the question is on top.
pub const FOOTER: &[(Mode, Action)] = &[
    (Mode::Hooks, Action::AllowHooks),
    (Mode::Hooks, Action::KeepHooksHeld),
    (Mode::Hooks, Action::PageDown),
];

impl HookTrust {
    /// The question about `held`, open.
    pub fn new(held: Held) -> HookTrust {
        HookTrust {
            held,
            open: true,
            scroll: 0,
        }
    }

    /// A key while the question is open; `rows` is the terminal's height (a page is about
    /// half of it), `input` the input box, which the keymap's conditions read.
    pub fn handle_key(
        &mut self,
        key: &KeyEvent,
        rows: u16,
        input: &TextArea<'_>,
    ) -> HookTrustOutcome {
        // A held key repeats; a repeat is not a choice.
        if matches!(key.kind, KeyEventKind::Release | KeyEventKind::Repeat) {
            return HookTrustOutcome::Stay;
        }
        match keymap().action(MODES, key, input) {
            Some(Action::AllowHooks) => return HookTrustOutcome::Allow,
            Some(Action::KeepHooksHeld) => return HookTrustOutcome::Keep,
            Some(action) => {
                let most = self.most_scroll();
                text_scroll::act(&mut self.scroll, action, rows, most);
            }
            None => {}
        }
        HookTrustOutcome::Stay
    }

    /// The mouse wheel scrolls the text.
    pub fn mouse(&mut self, mouse: &MouseEvent) {
        let most = self.most_scroll();
        text_scroll::wheel(&mut self.scroll, mouse, most);
    }

    /// A bound for the scroll: the text has a few lines per hook (the drawing, which knows
    /// the width, keeps the last page in view).
    fn most_scroll(&self) -> u16 {
        let lines = self
            .held
            .hooks
            .iter()
            .map(|h| 2 + h.command.len() / 20)
            .sum::<usize>()
            + self.held.problems.len()
            + self.held.pins.lines().len()
            + 10;
        u16::try_from(lines).unwrap_or(u16::MAX)
    }
}
