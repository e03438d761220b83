//! The model picker as a layer: `/model` opens it over the dashboard; while it is open it
//! takes every key, and the model chosen goes to [`super::model_switch::begin`] (the loop
//! resolves the name and asks the agent to switch; the picker never reads the settings).
//!
//! In: the models the loop listed ([`ModelList`]: the one in use, with the window in
//! effect, and every `[providers.NAME.models.MODEL]` entry with the window and prices
//! configured for it). The model in use comes first and is marked. Typing filters
//! (case-insensitive, part of the name); whatever is typed, when it is not exactly a listed
//! name, is offered as a last row too, so a model that is in no table
//! (`ollama/qwen3-coder`) can be picked by its whole name. Up/Down/PgUp/PgDn/Home/End move,
//! Enter switches, Esc or Ctrl-C closes and nothing changes.

use crossterm::event::{KeyEvent, KeyEventKind, MouseEvent, MouseEventKind};

use super::event::Effect;
use super::keymap::{keymap, Action, Mode};
use super::picker::{edit_filter, paste_line};
use super::state::App;
use crate::agent::Prices;

/// What the loop found when asked to list models ([`Effect::ListModels`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelList {
    /// The model in use, with the window in effect; no name when none is configured.
    pub current: ModelChoice,
    /// The configured models (`provider/model`), in the providers' order.
    pub models: Vec<ModelChoice>,
}

/// One model that can be picked.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelChoice {
    /// As `--model` takes it: `openrouter/anthropic/claude-sonnet-4.5`.
    pub name: String,
    /// The context window, when configured (the server is asked for the others).
    pub window: Option<u64>,
    /// Dollars per million tokens, when configured.
    pub prices: Option<Prices>,
}

/// The open picker.
#[derive(Debug, Clone)]
pub struct ModelPicker {
    /// The model in use first, then the configured ones.
    pub models: Vec<ModelChoice>,
    /// The name of the model in use (marked).
    pub current: String,
    /// What the user typed.
    pub filter: String,
    /// The selected row, an index into [`ModelPicker::rows`].
    pub selected: usize,
}

/// A row of the picker.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ModelRow<'a> {
    Model(&'a ModelChoice),
    /// The filter as a whole name, not in the list.
    Typed(&'a str),
}

impl ModelRow<'_> {
    /// The name the row switches to.
    pub fn name(&self) -> &str {
        match self {
            ModelRow::Model(m) => &m.name,
            ModelRow::Typed(name) => name,
        }
    }
}

/// Rows the mouse wheel moves the selection by.
const WHEEL_ROWS: usize = 3;

impl ModelPicker {
    /// A picker over `list`, the model in use first (and only once).
    pub fn open(list: ModelList) -> ModelPicker {
        let current = list.current.name.clone();
        let mut models = Vec::with_capacity(list.models.len() + 1);
        if !current.is_empty() {
            models.push(list.current);
        }
        models.extend(list.models.into_iter().filter(|m| m.name != current));
        ModelPicker {
            models,
            current,
            filter: String::new(),
            selected: 0,
        }
    }

    /// The models the filter lets through, in list order, then the filter itself when it
    /// could be a name that is not listed.
    pub fn rows(&self) -> Vec<ModelRow<'_>> {
        let typed = self.filter.trim();
        let needle = typed.to_lowercase();
        let mut rows: Vec<ModelRow<'_>> = self
            .models
            .iter()
            .filter(|m| m.name.to_lowercase().contains(&needle))
            .map(ModelRow::Model)
            .collect();
        let listed = self.models.iter().any(|m| m.name == typed);
        if !typed.is_empty() && !typed.contains(char::is_whitespace) && !listed {
            rows.push(ModelRow::Typed(typed));
        }
        rows
    }

    /// The name the selected row switches to, if there is a row.
    pub fn selected_name(&self) -> Option<String> {
        let rows = self.rows();
        rows.get(self.selected.min(rows.len().saturating_sub(1)))
            .map(|r| r.name().to_string())
    }

    fn move_by(&mut self, delta: isize) {
        let n = self.rows().len();
        self.selected = if n == 0 {
            0
        } else {
            self.selected.saturating_add_signed(delta).min(n - 1)
        };
    }
}

/// Models arrived: open the picker over them.
pub fn open(app: &mut App, list: ModelList) {
    app.model_picker = Some(ModelPicker::open(list));
    app.hint = None;
}

/// A key while the picker is open.
pub fn handle_key(app: &mut App, key: KeyEvent, effects: &mut Vec<Effect>) {
    if key.kind == KeyEventKind::Release {
        return;
    }
    let page = super::picker::page(app);
    let Some(picker) = app.model_picker.as_mut() else {
        return;
    };
    let action = keymap()
        .lookup(&[Mode::Models], &key)
        .next()
        .map(|b| b.action);
    match action {
        Some(Action::ClosePicker) => app.model_picker = None,
        Some(Action::ChooseModel) => {
            if let Some(name) = picker.selected_name() {
                app.model_picker = None;
                super::model_switch::begin(app, &name, effects);
            }
        }
        Some(Action::ScrollUp) => picker.move_by(-1),
        Some(Action::ScrollDown) => picker.move_by(1),
        Some(Action::PageUp) => picker.move_by(-(page as isize)),
        Some(Action::PageDown) => picker.move_by(page as isize),
        Some(Action::ScrollTop) => picker.selected = 0,
        Some(Action::ScrollBottom) => picker.move_by(isize::MAX),
        Some(Action::ClearFilter) => {
            picker.filter.clear();
            picker.selected = 0;
        }
        Some(_) => {}
        None => {
            if edit_filter(&mut picker.filter, &key) {
                picker.selected = 0;
            }
        }
    }
}

/// A paste while the picker is open goes into the filter, as one line.
pub fn paste(app: &mut App, text: &str) {
    if let Some(picker) = app.model_picker.as_mut() {
        picker.filter.push_str(&paste_line(text));
        picker.selected = 0;
    }
}

/// The mouse wheel moves the selection.
pub fn mouse(app: &mut App, mouse: MouseEvent) {
    if let Some(picker) = app.model_picker.as_mut() {
        match mouse.kind {
            MouseEventKind::ScrollUp => picker.move_by(-(WHEEL_ROWS as isize)),
            MouseEventKind::ScrollDown => picker.move_by(WHEEL_ROWS as isize),
            _ => {}
        }
    }
}
