//! The rewind layer: Esc Esc on an empty input, or `/rewind`, lists this session's turns;
//! pick one, choose what goes back (code and conversation, code only, conversation only),
//! see the preview (each path and what would become of it), confirm. A leaf: it knows its
//! own state; choosing comes back as a [`RewindOutcome`] the router turns into effects (the
//! loop previews with a dry run and carries the rewind out; the layer never touches the
//! disk).
//!
//! States: the list of turns (newest selected), then the choice for one turn with its
//! preview (asked for on every change of choice; `Loading` until it comes). Esc goes back
//! from the choice to the list, and closes from the list.

use crossterm::event::{KeyEvent, KeyEventKind};

use super::keymap::{keymap, Action, Mode};

/// A turn as the layer lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindTurn {
    pub turn: u64,
    /// When it began (RFC 3339).
    pub time: String,
    /// The first line of the user's message.
    pub headline: String,
    /// The files its tool calls changed.
    pub files: Vec<String>,
}

/// What goes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RewindWhat {
    Both,
    Code,
    Conversation,
}

impl RewindWhat {
    pub const ALL: [RewindWhat; 3] = [RewindWhat::Both, RewindWhat::Code, RewindWhat::Conversation];

    pub fn label(self) -> &'static str {
        match self {
            RewindWhat::Both => "code and conversation",
            RewindWhat::Code => "code only",
            RewindWhat::Conversation => "conversation only",
        }
    }

    pub fn code(self) -> bool {
        self != RewindWhat::Conversation
    }

    pub fn conversation(self) -> bool {
        self != RewindWhat::Code
    }
}

/// One path of the preview.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreviewLine {
    pub path: String,
    /// "restore", "remove", "unchanged", "keep".
    pub action: &'static str,
    /// Why it is kept.
    pub why: Option<String>,
}

/// The preview of the chosen rewind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Preview {
    Loading,
    Ready(Vec<PreviewLine>),
    Failed(String),
}

/// Where the layer is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stage {
    Turns,
    Choose { what: RewindWhat, preview: Preview },
}

/// The open layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindState {
    /// Oldest first.
    pub turns: Vec<RewindTurn>,
    /// An index into `turns`.
    pub selected: usize,
    pub stage: Stage,
}

/// What a key in the layer leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RewindOutcome {
    Stay,
    Close,
    /// Ask the loop for a dry run of this choice.
    Preview {
        turn: u64,
        what: RewindWhat,
    },
    /// Carry it out.
    Confirm {
        turn: u64,
        what: RewindWhat,
    },
}

/// Said instead of opening the layer when there is nothing to rewind.
pub const NOTHING_TO_REWIND: &str = "no turn of this session has a checkpoint yet";

impl RewindState {
    /// The layer over `turns` (oldest first), the newest selected; `None` when empty.
    pub fn open(turns: Vec<RewindTurn>) -> Option<RewindState> {
        let selected = turns.len().checked_sub(1)?;
        Some(RewindState {
            turns,
            selected,
            stage: Stage::Turns,
        })
    }

    /// The selected turn.
    pub fn turn(&self) -> Option<&RewindTurn> {
        self.turns.get(self.selected)
    }

    /// The preview for `turn` and `what` arrived (an older one for another choice is
    /// dropped).
    pub fn previewed(&mut self, turn: u64, what: RewindWhat, preview: Preview) {
        let current = self.turn().map(|t| t.turn);
        if let Stage::Choose {
            what: chosen,
            preview: shown,
        } = &mut self.stage
        {
            if current == Some(turn) && *chosen == what {
                *shown = preview;
            }
        }
    }

    /// A key while the layer is open.
    pub fn handle_key(&mut self, key: &KeyEvent) -> RewindOutcome {
        if key.kind == KeyEventKind::Release {
            return RewindOutcome::Stay;
        }
        let Some(action) = keymap().lookup(MODES, key).next().map(|b| b.action) else {
            return RewindOutcome::Stay;
        };
        let Some(turn) = self.turn().map(|t| t.turn) else {
            return RewindOutcome::Close;
        };
        match (&mut self.stage, action) {
            (Stage::Turns, Action::ClosePicker) => RewindOutcome::Close,
            (Stage::Turns, Action::ScrollUp) => {
                self.selected = self.selected.saturating_sub(1);
                RewindOutcome::Stay
            }
            (Stage::Turns, Action::ScrollDown) => {
                self.selected = (self.selected + 1).min(self.turns.len().saturating_sub(1));
                RewindOutcome::Stay
            }
            (Stage::Turns, Action::ScrollTop) => {
                self.selected = 0;
                RewindOutcome::Stay
            }
            (Stage::Turns, Action::ScrollBottom) => {
                self.selected = self.turns.len().saturating_sub(1);
                RewindOutcome::Stay
            }
            (Stage::Turns, Action::RewindChoose) => {
                let what = RewindWhat::Both;
                self.stage = Stage::Choose {
                    what,
                    preview: Preview::Loading,
                };
                RewindOutcome::Preview { turn, what }
            }
            (Stage::Choose { .. }, Action::ClosePicker) => {
                self.stage = Stage::Turns;
                RewindOutcome::Stay
            }
            (Stage::Choose { what, preview }, Action::ScrollUp | Action::ScrollDown) => {
                let at = RewindWhat::ALL.iter().position(|w| w == what).unwrap_or(0);
                let next = if action == Action::ScrollUp {
                    (at + RewindWhat::ALL.len() - 1) % RewindWhat::ALL.len()
                } else {
                    (at + 1) % RewindWhat::ALL.len()
                };
                *what = RewindWhat::ALL[next];
                *preview = Preview::Loading;
                RewindOutcome::Preview { turn, what: *what }
            }
            (Stage::Choose { what, .. }, Action::RewindChoose) => {
                RewindOutcome::Confirm { turn, what: *what }
            }
            _ => RewindOutcome::Stay,
        }
    }
}

/// The keymap modes the layer consults.
pub const MODES: &[Mode] = &[Mode::Rewind];

/// What the footer names while the layer is on top.
pub const FOOTER: &[(Mode, Action)] = &[
    (Mode::Rewind, Action::RewindChoose),
    (Mode::Rewind, Action::ScrollDown),
    (Mode::Rewind, Action::ClosePicker),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyCode, KeyModifiers};

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn turns() -> Vec<RewindTurn> {
        (1..=3)
            .map(|n| RewindTurn {
                turn: n,
                time: "2026-12-04T10:00:00.000Z".into(),
                headline: format!("ask {n}"),
                files: vec![format!("f{n}.rs")],
            })
            .collect()
    }

    #[test]
    fn pick_a_turn_choose_what_and_confirm() {
        assert_eq!(RewindState::open(Vec::new()), None);
        let mut layer = RewindState::open(turns()).unwrap();
        assert_eq!(layer.turn().unwrap().turn, 3, "the newest is selected");
        assert_eq!(layer.handle_key(&key(KeyCode::Up)), RewindOutcome::Stay);
        assert_eq!(
            layer.handle_key(&key(KeyCode::Enter)),
            RewindOutcome::Preview {
                turn: 2,
                what: RewindWhat::Both
            }
        );
        // A preview for another choice is dropped; this one shows.
        layer.previewed(2, RewindWhat::Code, Preview::Failed("old".into()));
        assert!(matches!(
            layer.stage,
            Stage::Choose {
                preview: Preview::Loading,
                ..
            }
        ));
        layer.previewed(2, RewindWhat::Both, Preview::Ready(Vec::new()));
        assert!(matches!(
            layer.stage,
            Stage::Choose {
                preview: Preview::Ready(_),
                ..
            }
        ));
        assert_eq!(
            layer.handle_key(&key(KeyCode::Down)),
            RewindOutcome::Preview {
                turn: 2,
                what: RewindWhat::Code
            }
        );
        assert_eq!(
            layer.handle_key(&key(KeyCode::Up)),
            RewindOutcome::Preview {
                turn: 2,
                what: RewindWhat::Both
            }
        );
        assert_eq!(
            layer.handle_key(&key(KeyCode::Up)),
            RewindOutcome::Preview {
                turn: 2,
                what: RewindWhat::Conversation
            }
        );
        assert_eq!(
            layer.handle_key(&key(KeyCode::Enter)),
            RewindOutcome::Confirm {
                turn: 2,
                what: RewindWhat::Conversation
            }
        );
        // Esc goes back to the list, then closes.
        assert_eq!(layer.handle_key(&key(KeyCode::Esc)), RewindOutcome::Stay);
        assert_eq!(layer.stage, Stage::Turns);
        assert_eq!(layer.handle_key(&key(KeyCode::Esc)), RewindOutcome::Close);
    }
}
