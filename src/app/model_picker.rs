//! The model picker as a layer: `/model` opens it over the dashboard; while it is open it
//! takes every key, and the model chosen comes back as [`ModelPickerOutcome::Choose`] (the
//! router begins the switch: the loop resolves the name and asks the agent to switch; the
//! picker never reads the settings). A leaf: it knows only its own state.
//!
//! In: the models the loop listed ([`ModelList`]: the one in use, with the window in
//! effect, and every `[providers.NAME.models.MODEL]` entry with the window and prices
//! configured for it). The model in use comes first and is marked. Typing filters
//! (case-insensitive, part of the name); whatever is typed, when it is not exactly a listed
//! name, is offered as a last row too, so a model that is in no table
//! (`ollama/qwen3-coder`) can be picked by its whole name. Up/Down/PgUp/PgDn/Home/End move,
//! Enter switches, Esc or Ctrl-C closes and nothing changes.
//!
//! Under the configured models come those the provider's server lists (`GET
//! {base_url}/models`, asked by the loop in the background when the picker opens, once a
//! session per server: [`ServerModels`]): "asking …" until they come, then its models
//! that are not configured, or the one line saying why there are none.

use crossterm::event::{KeyEvent, KeyEventKind, MouseEvent, MouseEventKind};

use super::input::{edit_filter, paste_line};
use super::keymap::{keymap, Action, Mode};
use rein_core::agent::Prices;

/// What the loop found when asked to list models (`Effect::ListModels`).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelList {
    /// The model in use, with the window in effect; no name when none is configured.
    pub current: ModelChoice,
    /// The configured models (`provider/model`), in the providers' order.
    pub models: Vec<ModelChoice>,
    /// Where the server of the model in use lists its models (`None`: there is no server
    /// to ask, as in the demo).
    pub server_url: Option<String>,
}

/// What the server of the model in use listed, as `--model` names its models (with the
/// provider's prefix when the model in use has one), for the URL it was asked at.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerModels {
    pub url: String,
    pub result: Result<Vec<ModelChoice>, String>,
}

/// The server's part of the picker.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerState {
    /// No server to ask.
    None,
    /// Asked at this URL; no answer yet.
    Asking(String),
    /// Its models are listed (those configured already are not repeated).
    Listed(String),
    /// Why it listed none.
    Failed(String),
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
    /// The models the server listed that are not configured, in its order.
    pub server_models: Vec<ModelChoice>,
    pub server: ServerState,
}

/// A row of the picker.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ModelRow<'a> {
    Model(&'a ModelChoice),
    /// A model the server listed.
    Server(&'a ModelChoice),
    /// The filter as a whole name, not in the list.
    Typed(&'a str),
}

impl ModelRow<'_> {
    /// The name the row switches to.
    pub fn name(&self) -> &str {
        match self {
            ModelRow::Model(m) | ModelRow::Server(m) => &m.name,
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
            server_models: Vec::new(),
            server: match list.server_url {
                Some(url) => ServerState::Asking(url),
                None => ServerState::None,
            },
        }
    }

    /// The server's answer, when it is for the URL this picker asked at.
    pub fn server_answered(&mut self, answer: &ServerModels) {
        if self.server != ServerState::Asking(answer.url.clone()) {
            return;
        }
        match &answer.result {
            Ok(listed) => {
                self.server_models = listed
                    .iter()
                    .filter(|m| !self.models.iter().any(|c| c.name == m.name))
                    .cloned()
                    .collect();
                self.server = ServerState::Listed(answer.url.clone());
            }
            Err(why) => self.server = ServerState::Failed(why.clone()),
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
        rows.extend(
            self.server_models
                .iter()
                .filter(|m| m.name.to_lowercase().contains(&needle))
                .map(ModelRow::Server),
        );
        let listed = self
            .models
            .iter()
            .chain(&self.server_models)
            .any(|m| m.name == typed);
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

/// What a key in the model picker leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelPickerOutcome {
    /// It stays open.
    Stay,
    /// Esc: close it, nothing changes.
    Close,
    /// Enter: switch to this model (the picker closes).
    Choose(String),
}

/// The keymap modes the model picker consults.
pub const MODES: &[Mode] = &[Mode::Models];

/// What the footer names while the model picker is on top.
pub const FOOTER: &[(Mode, Action)] = &[
    (Mode::Models, Action::ChooseModel),
    (Mode::Models, Action::ClosePicker),
    (Mode::Models, Action::ClearFilter),
];

impl ModelPicker {
    /// A key while the picker is open; `page` is the rows a page moves.
    pub fn handle_key(&mut self, key: &KeyEvent, page: usize) -> ModelPickerOutcome {
        if key.kind == KeyEventKind::Release {
            return ModelPickerOutcome::Stay;
        }
        let action = keymap().lookup(MODES, key).next().map(|b| b.action);
        match action {
            Some(Action::ClosePicker) => return ModelPickerOutcome::Close,
            Some(Action::ChooseModel) => {
                if let Some(name) = self.selected_name() {
                    return ModelPickerOutcome::Choose(name);
                }
            }
            Some(Action::ScrollUp) => self.move_by(-1),
            Some(Action::ScrollDown) => self.move_by(1),
            Some(Action::PageUp) => self.move_by(-(page as isize)),
            Some(Action::PageDown) => self.move_by(page as isize),
            Some(Action::ScrollTop) => self.selected = 0,
            Some(Action::ScrollBottom) => self.move_by(isize::MAX),
            Some(Action::ClearFilter) => {
                self.filter.clear();
                self.selected = 0;
            }
            Some(_) => {}
            None => {
                if edit_filter(&mut self.filter, key) {
                    self.selected = 0;
                }
            }
        }
        ModelPickerOutcome::Stay
    }

    /// A paste goes into the filter, as one line.
    pub fn paste(&mut self, text: &str) {
        self.filter.push_str(&paste_line(text));
        self.selected = 0;
    }

    /// The mouse wheel moves the selection.
    pub fn mouse(&mut self, mouse: &MouseEvent) {
        match mouse.kind {
            MouseEventKind::ScrollUp => self.move_by(-(WHEEL_ROWS as isize)),
            MouseEventKind::ScrollDown => self.move_by(WHEEL_ROWS as isize),
            _ => {}
        }
    }
}
