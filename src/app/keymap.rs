//! Key bindings as data: `assets/keymap.toml`, compiled in, per mode, with descriptions for
//! the footer and `/help`.
//!
//! The file lists, for each [`Mode`], entries `{ on, action, when?, desc }`. [`Keymap::parse`]
//! turns it into [`Binding`]s; the update step asks [`Keymap::lookup`] which bindings a key
//! press matches and runs the first whose condition ([`Condition`]) holds. A file that does
//! not parse is a bug (a unit test parses it); at run time [`keymap`] then falls back to
//! no bindings instead of panicking. The user's `keymap.toml` is merged over it at start
//! (`super::keymap_user`) and [`install`]ed: [`keymap`] is then that merged keymap, for the
//! update step, the footer and `/help` alike.

use std::fmt;
use std::str::FromStr;
use std::sync::{LazyLock, OnceLock};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde::Deserialize;

use tui_textarea::TextArea;

/// The compiled-in key bindings.
pub const DEFAULT_KEYMAP: &str = include_str!("../../assets/keymap.toml");

/// Where keys go. The main screen consults [`Mode::Global`] then [`Mode::Composer`]; the
/// approval modal takes every key ([`Mode::Approval`], or [`Mode::Feedback`] while its text
/// field is open), and so do the pickers and the `/context` layer
/// ([`super::layer::Layer`] says which is on top).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    Global,
    Composer,
    Approval,
    Feedback,
    /// The session picker (`/resume`).
    Picker,
    /// The model picker (`/model`).
    Models,
    /// The context layer (`/context`).
    Context,
    /// The `/` completion list (before `global` and `composer`).
    Slash,
    /// The reverse history search (Ctrl-R) over the input box.
    Search,
    /// The `@` file finder's list (over the main screen's modes).
    Finder,
    /// The rewind layer (`/rewind`, Esc Esc).
    Rewind,
    /// The question about a project's hooks (at start, `/hooks allow`).
    Hooks,
    /// The help layer (`/help`, F1).
    Help,
    /// The plan review, when a turn in plan mode ends with a plan.
    Plan,
    /// The transcript pager: the whole transcript, everything expanded.
    Pager,
    /// An MCP server's form (elicitation).
    Form,
    /// The MCP servers (`/mcp`).
    Mcp,
}

impl Mode {
    /// Every mode, in the keymap file's order.
    pub const ALL: [Mode; 17] = [
        Mode::Global,
        Mode::Composer,
        Mode::Approval,
        Mode::Feedback,
        Mode::Picker,
        Mode::Models,
        Mode::Context,
        Mode::Slash,
        Mode::Search,
        Mode::Finder,
        Mode::Rewind,
        Mode::Hooks,
        Mode::Help,
        Mode::Plan,
        Mode::Pager,
        Mode::Form,
        Mode::Mcp,
    ];

    /// The mode's name in the keymap file and in `/help`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Global => "global",
            Mode::Composer => "composer",
            Mode::Approval => "approval",
            Mode::Feedback => "feedback",
            Mode::Picker => "picker",
            Mode::Models => "models",
            Mode::Context => "context",
            Mode::Slash => "slash",
            Mode::Search => "search",
            Mode::Finder => "finder",
            Mode::Rewind => "rewind",
            Mode::Hooks => "hooks",
            Mode::Help => "help",
            Mode::Plan => "plan",
            Mode::Pager => "pager",
            Mode::Form => "form",
            Mode::Mcp => "mcp",
        }
    }
}

/// What a key does. Its meaning depends on the mode it is bound in: `page_up` scrolls the
/// transcript on the main screen and the modal's text in the approval modal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Busy: interrupt. Idle: clear the input. Empty and idle: arm quitting. A second
    /// press within `update::DOUBLE_CTRL_C` quits.
    Cancel,
    /// Interrupt the running turn.
    Interrupt,
    Quit,
    Help,
    Send,
    Newline,
    HistoryPrev,
    HistoryNext,
    ScrollUp,
    ScrollDown,
    PageUp,
    PageDown,
    ScrollTop,
    ScrollBottom,
    ToggleToolOutput,
    ToggleReasoning,
    ToggleTodos,
    ToggleMouse,
    /// The next approval mode (default → auto → plan).
    CycleMode,
    Approve,
    ApproveSession,
    ApproveProject,
    Deny,
    DenyWithFeedback,
    SubmitFeedback,
    CloseFeedback,
    /// Picker: continue the selected session.
    Resume,
    /// Picker: close it and stay in the current session.
    ClosePicker,
    /// Picker: empty the filter.
    ClearFilter,
    /// Model picker: switch to the selected model.
    ChooseModel,
    /// Context layer: close it.
    CloseContext,
    /// Completion list: the next match, the one before.
    SlashNext,
    SlashPrev,
    /// Completion list: the selected name and a space in place of the first word.
    SlashComplete,
    /// Completion list: run the typed command when it names one, else complete.
    SlashAccept,
    /// Completion list: close it, keeping the text.
    SlashClose,
    /// Open the input in `$VISUAL` / `$EDITOR`.
    EditInEditor,
    /// Delete from the cursor to the start of its line (undo brings it back).
    DeleteToLineStart,
    /// Undo the last edit of the input.
    Undo,
    /// Take the last message queued during a turn back into the input.
    Unqueue,
    /// The help layer: close it.
    CloseHelp,
    /// Search earlier inputs (reverse incremental search).
    HistorySearch,
    /// Search: the next older match.
    SearchOlder,
    /// Search: the next newer match.
    SearchNewer,
    /// Search: put the match in the input box (not sent).
    AcceptSearch,
    /// Search: close it, the input as it was.
    CancelSearch,
    /// `@` finder: put the selected path in the input.
    InsertPath,
    /// Rewind layer: choose the turn, then confirm the choice.
    RewindChoose,
    /// A project's hooks: allow them to run (for this project, as they are now).
    AllowHooks,
    /// A project's hooks: keep them held (the question closes; `/hooks allow` asks again).
    KeepHooksHeld,
    /// Plan review: approve the plan and go on in default mode.
    ApprovePlan,
    /// Plan review: approve the plan and go on in auto mode.
    ApprovePlanAuto,
    /// Plan review: keep planning (the review closes, plan mode stays).
    KeepPlanning,
    /// Plan review: keep planning and tell the model what to change.
    PlanFeedback,
    /// Open the transcript pager.
    OpenPager,
    /// Pager: close it.
    ClosePager,
    /// A server's form: the next field, the one before.
    FormNext,
    FormPrev,
    /// A server's form: the chosen field's next choice, the one before (an enum, yes/no).
    FormChoiceNext,
    FormChoicePrev,
    /// A server's form: send the answers (when every field is valid).
    FormAccept,
    /// A server's form: say no to it.
    FormDecline,
    /// A server's form: dismiss it without an answer.
    FormCancel,
    /// The MCP servers: log in to the selected one (an HTTP server).
    McpLogin,
    /// The MCP servers: forget the selected one's login.
    McpLogout,
    /// The MCP servers: restart the selected one.
    McpRestart,
    /// The MCP servers: allow the selected project's server.
    McpAllow,
}

/// When a binding applies; otherwise the key goes on to the next binding or the input box.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Condition {
    /// The input box holds no text.
    InputEmpty,
    /// The input's cursor is on its first line.
    FirstLine,
    /// The input's cursor is on its last line.
    LastLine,
}

impl Condition {
    /// Whether the condition holds for the input box as it is.
    pub fn holds(self, textarea: &TextArea<'_>) -> bool {
        match self {
            Condition::InputEmpty => textarea.is_empty(),
            Condition::FirstLine => textarea.cursor().0 == 0,
            Condition::LastLine => textarea.cursor().0 + 1 >= textarea.lines().len(),
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Condition::InputEmpty => "input empty",
            Condition::FirstLine => "on the first line",
            Condition::LastLine => "on the last line",
        }
    }
}

/// One key with its modifiers, normalised so that a press and a keymap entry compare equal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeySpec {
    pub code: KeyCode,
    pub modifiers: KeyModifiers,
}

impl KeySpec {
    /// The key of a press. A character carries its own case, so Shift is dropped from
    /// characters; with Ctrl or Alt the letter is lower-cased (Ctrl-C with Caps Lock on is
    /// still Ctrl-C). Only Ctrl, Alt and Shift count.
    pub fn from_event(key: &KeyEvent) -> KeySpec {
        let mut modifiers =
            key.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT);
        let code = match key.code {
            KeyCode::Char(c) => {
                modifiers.remove(KeyModifiers::SHIFT);
                if modifiers.is_empty() {
                    KeyCode::Char(c)
                } else {
                    KeyCode::Char(c.to_ascii_lowercase())
                }
            }
            // Shift+Tab arrives as BackTab, with or without the Shift flag.
            KeyCode::BackTab => {
                modifiers.remove(KeyModifiers::SHIFT);
                KeyCode::BackTab
            }
            KeyCode::Tab if modifiers.contains(KeyModifiers::SHIFT) => {
                modifiers.remove(KeyModifiers::SHIFT);
                KeyCode::BackTab
            }
            other => other,
        };
        KeySpec { code, modifiers }
    }
}

impl KeySpec {
    /// Whether every terminal sends this key as itself, not only those that speak the
    /// kitty keyboard protocol: a way out of a mode must be one of these. Not so: F13 to
    /// F24 (few keyboards have them), Ctrl with a digit or a character beyond ASCII letters
    /// and `@[\]^_?` and space (a legacy terminal sends the plain character, or nothing),
    /// and Enter, Tab, Backspace or Esc with a modifier (sent as the plain key).
    pub fn reliably_sent(&self) -> bool {
        let ctrl = self.modifiers.contains(KeyModifiers::CONTROL);
        let modified = !self.modifiers.is_empty();
        match self.code {
            KeyCode::F(n) => n <= 12,
            KeyCode::Char(c) if ctrl => {
                c.is_ascii_lowercase()
                    || matches!(c, ' ' | '@' | '[' | '\\' | ']' | '^' | '_' | '?')
            }
            KeyCode::Char(_) => true,
            KeyCode::Enter | KeyCode::Tab | KeyCode::Backspace | KeyCode::Esc => !modified,
            _ => true,
        }
    }
}

/// A key name the keymap file cannot mean.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown key \"{0}\" (examples: \"ctrl-c\", \"shift-enter\", \"pgup\", \"f2\", \"y\")")]
pub struct UnknownKey(pub String);

impl FromStr for KeySpec {
    type Err = UnknownKey;

    fn from_str(text: &str) -> Result<KeySpec, UnknownKey> {
        let unknown = || UnknownKey(text.to_string());
        let mut modifiers = KeyModifiers::NONE;
        let mut rest = text;
        loop {
            let lower = rest.to_ascii_lowercase();
            let (modifier, len) = if lower.starts_with("ctrl-") {
                (KeyModifiers::CONTROL, 5)
            } else if lower.starts_with("alt-") {
                (KeyModifiers::ALT, 4)
            } else if lower.starts_with("shift-") {
                (KeyModifiers::SHIFT, 6)
            } else {
                break;
            };
            if rest.len() == len {
                return Err(unknown());
            }
            modifiers |= modifier;
            rest = &rest[len..];
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) => KeyCode::Char(c),
            _ => match rest.to_ascii_lowercase().as_str() {
                "enter" | "return" => KeyCode::Enter,
                "esc" | "escape" => KeyCode::Esc,
                "tab" => KeyCode::Tab,
                "backtab" => KeyCode::BackTab,
                "backspace" => KeyCode::Backspace,
                "delete" | "del" => KeyCode::Delete,
                "insert" | "ins" => KeyCode::Insert,
                "up" => KeyCode::Up,
                "down" => KeyCode::Down,
                "left" => KeyCode::Left,
                "right" => KeyCode::Right,
                "home" => KeyCode::Home,
                "end" => KeyCode::End,
                "pgup" | "pageup" => KeyCode::PageUp,
                "pgdn" | "pagedown" => KeyCode::PageDown,
                "space" => KeyCode::Char(' '),
                name => match name.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
                    Some(n @ 1..=24) => KeyCode::F(n),
                    _ => return Err(unknown()),
                },
            },
        };
        // Normalise the way a press is normalised, so the two compare equal.
        let spec = KeySpec::from_event(&KeyEvent::new(code, modifiers));
        if matches!(code, KeyCode::Char(_)) && modifiers.contains(KeyModifiers::SHIFT) {
            // "shift-y" never arrives as such: the terminal sends "Y".
            return Err(unknown());
        }
        Ok(spec)
    }
}

impl fmt::Display for KeySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (modifier, name) in [
            (KeyModifiers::CONTROL, "Ctrl-"),
            (KeyModifiers::ALT, "Alt-"),
            (KeyModifiers::SHIFT, "Shift-"),
        ] {
            if self.modifiers.contains(modifier) {
                f.write_str(name)?;
            }
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("Space"),
            KeyCode::Char(c) if self.modifiers.is_empty() => write!(f, "{c}"),
            KeyCode::Char(c) => write!(f, "{}", c.to_ascii_uppercase()),
            KeyCode::Enter => f.write_str("Enter"),
            KeyCode::Esc => f.write_str("Esc"),
            KeyCode::Tab => f.write_str("Tab"),
            KeyCode::BackTab => f.write_str("Shift-Tab"),
            KeyCode::Backspace => f.write_str("Backspace"),
            KeyCode::Delete => f.write_str("Del"),
            KeyCode::Insert => f.write_str("Ins"),
            KeyCode::Up => f.write_str("Up"),
            KeyCode::Down => f.write_str("Down"),
            KeyCode::Left => f.write_str("Left"),
            KeyCode::Right => f.write_str("Right"),
            KeyCode::Home => f.write_str("Home"),
            KeyCode::End => f.write_str("End"),
            KeyCode::PageUp => f.write_str("PgUp"),
            KeyCode::PageDown => f.write_str("PgDn"),
            KeyCode::F(n) => write!(f, "F{n}"),
            other => write!(f, "{other:?}"),
        }
    }
}

impl<'de> Deserialize<'de> for KeySpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// One entry of the keymap: these keys do this, when the condition holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    pub keys: Vec<KeySpec>,
    pub action: Action,
    pub when: Option<Condition>,
    pub desc: String,
}

impl Binding {
    /// Whether the binding applies with the input box as it is.
    pub fn applies(&self, input: &TextArea<'_>) -> bool {
        self.when.is_none_or(|c| c.holds(input))
    }

    /// The keys as the footer shows them: "Shift-Enter/Alt-Enter/Ctrl-J", with the
    /// condition when there is one ("Home (input empty)").
    pub fn keys_label(&self) -> String {
        let keys = self
            .keys
            .iter()
            .map(KeySpec::to_string)
            .collect::<Vec<_>>()
            .join("/");
        match self.when {
            Some(c) => format!("{keys} ({})", c.describe()),
            None => keys,
        }
    }
}

/// Why the keymap file did not load.
#[derive(Debug, thiserror::Error)]
pub enum KeymapError {
    #[error("the keymap does not parse: {0}")]
    Toml(#[from] toml::de::Error),
    #[error("the keymap binds {key} twice in the {mode} mode")]
    Duplicate { mode: &'static str, key: String },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKeymap {
    #[serde(default)]
    global: Vec<RawBinding>,
    #[serde(default)]
    composer: Vec<RawBinding>,
    #[serde(default)]
    approval: Vec<RawBinding>,
    #[serde(default)]
    feedback: Vec<RawBinding>,
    #[serde(default)]
    picker: Vec<RawBinding>,
    #[serde(default)]
    models: Vec<RawBinding>,
    #[serde(default)]
    context: Vec<RawBinding>,
    #[serde(default)]
    slash: Vec<RawBinding>,
    search: Vec<RawBinding>,
    finder: Vec<RawBinding>,
    #[serde(default)]
    rewind: Vec<RawBinding>,
    #[serde(default)]
    hooks: Vec<RawBinding>,
    #[serde(default)]
    help: Vec<RawBinding>,
    #[serde(default)]
    plan: Vec<RawBinding>,
    #[serde(default)]
    pager: Vec<RawBinding>,
    #[serde(default)]
    form: Vec<RawBinding>,
    #[serde(default)]
    mcp: Vec<RawBinding>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBinding {
    on: OneOrMany,
    action: Action,
    #[serde(default)]
    when: Option<Condition>,
    desc: String,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(KeySpec),
    Many(Vec<KeySpec>),
}

/// The bindings of every mode.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Keymap {
    global: Vec<Binding>,
    composer: Vec<Binding>,
    approval: Vec<Binding>,
    feedback: Vec<Binding>,
    picker: Vec<Binding>,
    models: Vec<Binding>,
    context: Vec<Binding>,
    slash: Vec<Binding>,
    search: Vec<Binding>,
    finder: Vec<Binding>,
    rewind: Vec<Binding>,
    hooks: Vec<Binding>,
    help: Vec<Binding>,
    plan: Vec<Binding>,
    pager: Vec<Binding>,
    form: Vec<Binding>,
    mcp: Vec<Binding>,
}

impl Keymap {
    /// Parse a keymap file. Unknown modes, actions, conditions or key names are errors, and
    /// so is a key bound twice without a condition in one mode.
    pub fn parse(text: &str) -> Result<Keymap, KeymapError> {
        let raw: RawKeymap = toml::from_str(text)?;
        let convert = |list: Vec<RawBinding>| -> Vec<Binding> {
            list.into_iter()
                .map(|b| Binding {
                    keys: match b.on {
                        OneOrMany::One(k) => vec![k],
                        OneOrMany::Many(ks) => ks,
                    },
                    action: b.action,
                    when: b.when,
                    desc: b.desc,
                })
                .collect()
        };
        let keymap = Keymap {
            global: convert(raw.global),
            composer: convert(raw.composer),
            approval: convert(raw.approval),
            feedback: convert(raw.feedback),
            picker: convert(raw.picker),
            models: convert(raw.models),
            context: convert(raw.context),
            slash: convert(raw.slash),
            search: convert(raw.search),
            finder: convert(raw.finder),
            rewind: convert(raw.rewind),
            hooks: convert(raw.hooks),
            help: convert(raw.help),
            plan: convert(raw.plan),
            pager: convert(raw.pager),
            form: convert(raw.form),
            mcp: convert(raw.mcp),
        };
        keymap.check_duplicates()?;
        Ok(keymap)
    }

    /// The bindings of one mode, in file order.
    pub fn bindings(&self, mode: Mode) -> &[Binding] {
        match mode {
            Mode::Global => &self.global,
            Mode::Composer => &self.composer,
            Mode::Approval => &self.approval,
            Mode::Feedback => &self.feedback,
            Mode::Picker => &self.picker,
            Mode::Models => &self.models,
            Mode::Context => &self.context,
            Mode::Finder => &self.finder,
            Mode::Rewind => &self.rewind,
            Mode::Hooks => &self.hooks,
            Mode::Help => &self.help,
            Mode::Slash => &self.slash,
            Mode::Search => &self.search,
            Mode::Plan => &self.plan,
            Mode::Pager => &self.pager,
            Mode::Form => &self.form,
            Mode::Mcp => &self.mcp,
        }
    }

    /// The bindings of one mode, to change (the user's keymap, `super::keymap_user`).
    pub(super) fn bindings_mut(&mut self, mode: Mode) -> &mut Vec<Binding> {
        match mode {
            Mode::Global => &mut self.global,
            Mode::Composer => &mut self.composer,
            Mode::Approval => &mut self.approval,
            Mode::Feedback => &mut self.feedback,
            Mode::Picker => &mut self.picker,
            Mode::Models => &mut self.models,
            Mode::Context => &mut self.context,
            Mode::Finder => &mut self.finder,
            Mode::Rewind => &mut self.rewind,
            Mode::Hooks => &mut self.hooks,
            Mode::Help => &mut self.help,
            Mode::Slash => &mut self.slash,
            Mode::Search => &mut self.search,
            Mode::Plan => &mut self.plan,
            Mode::Pager => &mut self.pager,
            Mode::Form => &mut self.form,
            Mode::Mcp => &mut self.mcp,
        }
    }

    /// The bindings of these modes that this press matches, in lookup order (conditions
    /// not yet checked).
    pub fn lookup<'a>(
        &'a self,
        modes: &'a [Mode],
        key: &KeyEvent,
    ) -> impl Iterator<Item = &'a Binding> + 'a {
        let spec = KeySpec::from_event(key);
        modes
            .iter()
            .flat_map(move |&m| self.bindings(m).iter())
            .filter(move |b| b.keys.contains(&spec))
    }

    /// The first action this press triggers in these modes (in lookup order), with the
    /// input box as it is (the bindings' conditions read it).
    pub fn action(&self, modes: &[Mode], key: &KeyEvent, input: &TextArea<'_>) -> Option<Action> {
        self.lookup(modes, key)
            .find(|b| b.applies(input))
            .map(|b| b.action)
    }

    /// (keys, description) pairs of a mode, for the footer and `/help`.
    pub fn hints(&self, mode: Mode) -> Vec<(String, &str)> {
        self.bindings(mode)
            .iter()
            .map(|b| (b.keys_label(), b.desc.as_str()))
            .collect()
    }

    /// The first binding of an action in a mode, as (keys, description).
    pub fn hint(&self, mode: Mode, action: Action) -> Option<(String, &str)> {
        self.bindings(mode)
            .iter()
            .find(|b| b.action == action)
            .map(|b| (b.keys_label(), b.desc.as_str()))
    }

    /// The keys bound to an action in a mode, as the footer shows them ("Alt-R/F3").
    pub fn keys_for(&self, mode: Mode, action: Action) -> Option<String> {
        let keys: Vec<String> = self
            .bindings(mode)
            .iter()
            .filter(|b| b.action == action)
            .flat_map(|b| b.keys.iter().map(KeySpec::to_string))
            .collect();
        (!keys.is_empty()).then(|| keys.join("/"))
    }

    fn check_duplicates(&self) -> Result<(), KeymapError> {
        for mode in Mode::ALL {
            let mut seen = Vec::new();
            for binding in self.bindings(mode).iter().filter(|b| b.when.is_none()) {
                for key in &binding.keys {
                    if seen.contains(key) {
                        return Err(KeymapError::Duplicate {
                            mode: mode.name(),
                            key: key.to_string(),
                        });
                    }
                    seen.push(*key);
                }
            }
        }
        Ok(())
    }
}

// The file is compiled in and a unit test parses it, so it cannot fail here; were it to,
// no key would be bound rather than rein panicking.
static KEYMAP: LazyLock<Keymap> =
    LazyLock::new(|| Keymap::parse(DEFAULT_KEYMAP).unwrap_or_default());

/// The keymap put in force at start ([`install`]): the built-in one with the user's file.
static INSTALLED: OnceLock<Keymap> = OnceLock::new();

/// The compiled-in `assets/keymap.toml`.
pub fn builtin() -> &'static Keymap {
    &KEYMAP
}

/// The key bindings in force: the one [`install`]ed at start (the user's keymap merged
/// in, `super::keymap_user`), else the compiled-in `assets/keymap.toml`. The update step,
/// the footer and `/help` all read this one.
pub fn keymap() -> &'static Keymap {
    INSTALLED.get().unwrap_or(&KEYMAP)
}

/// Put `keymap` in force for the rest of the process, before the dashboard starts. Only
/// the first call counts; false when a keymap was installed already.
pub fn install(keymap: Keymap) -> bool {
    INSTALLED.set(keymap).is_ok()
}

#[cfg(test)]
mod tests;
