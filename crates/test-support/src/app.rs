//! The dashboard's state machine as the tests drive it: a [`Script`] feeds events to the
//! real update step at a clock the test moves, and [`draw`] / [`assert_snapshot`] render
//! the real UI to a `TestBackend` and compare it with `tests/snapshots/NAME.txt`
//! (`UPDATE_SNAPSHOTS=1` writes the files instead; review them before committing).

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use rein::app::state::{App, Cell, NoticeKind, SessionInfo};
use rein::app::update::update_at;
use rein::app::{AppEvent, Effect};
use rein::ui::{buffer_text, render};
use rein_core::agent::{AgentCommand, AgentEvent};

/// A fresh app with the default session and a 128k-token window.
pub fn app() -> App {
    App::new(SessionInfo::default(), 128_000)
}

/// The user messages `effects` send to the agent.
pub fn sent(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Agent(AgentCommand::UserMessage(text)) => Some(text.text.clone()),
            _ => None,
        })
        .collect()
}

/// An app and the instant events arrive at.
pub struct Script {
    pub app: App,
    pub now: Instant,
}

impl Script {
    pub fn with(app: App) -> Script {
        Script {
            app,
            now: Instant::now(),
        }
    }

    pub fn at(&mut self, event: AppEvent) -> Vec<Effect> {
        update_at(&mut self.app, event, self.now)
    }

    pub fn agent(&mut self, event: AgentEvent) -> Vec<Effect> {
        self.at(AppEvent::Agent(event))
    }

    /// The transcript's notices, oldest first: their kind and text.
    pub fn notices(&self) -> Vec<(NoticeKind, String)> {
        self.app
            .transcript
            .cells
            .iter()
            .filter_map(|c| match c {
                Cell::Notice(n) => Some((n.kind, n.text.clone())),
                _ => None,
            })
            .collect()
    }

    pub fn key(&mut self, code: KeyCode, modifiers: KeyModifiers) -> Vec<Effect> {
        self.at(AppEvent::Key(KeyEvent::new(code, modifiers)))
    }

    pub fn plain(&mut self, code: KeyCode) -> Vec<Effect> {
        self.key(code, KeyModifiers::NONE)
    }

    pub fn ctrl(&mut self, c: char) -> Vec<Effect> {
        self.key(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    /// Type `text` key by key; none of it may have an effect.
    pub fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            let effects = self.plain(KeyCode::Char(c));
            assert!(effects.is_empty(), "typing {c:?} did {effects:?}");
        }
    }

    /// Type a line and press Enter.
    pub fn send(&mut self, text: &str) -> Vec<Effect> {
        self.type_text(text);
        self.plain(KeyCode::Enter)
    }

    /// Paste `text`, then let the moment pass in which keys count as part of the paste.
    pub fn paste(&mut self, text: &str) -> Vec<Effect> {
        let effects = self.at(AppEvent::Paste(text.into()));
        self.advance(rein::app::update::PASTE_TAIL);
        effects
    }

    pub fn advance(&mut self, by: Duration) {
        self.now += by;
    }

    /// The input box, line by line.
    pub fn input_lines(&self) -> Vec<String> {
        self.app.composer.textarea.lines().to_vec()
    }

    /// The input box as one string.
    pub fn input(&self) -> String {
        self.app.composer.textarea.lines().join("\n")
    }
}

/// The screen's text for `app` at `now`.
pub fn draw(app: &App, width: u16, height: u16, now: Instant) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| render(app, frame, now)).unwrap();
    buffer_text(terminal.backend().buffer())
}

/// Compare `screen` with `tests/snapshots/NAME.txt`.
pub fn assert_snapshot(name: &str, screen: &str) {
    let path = crate::repository()
        .join("tests/snapshots")
        .join(format!("{name}.txt"));
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, screen).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "no snapshot {}; run with UPDATE_SNAPSHOTS=1 to write it:\n{screen}",
            path.display()
        )
    });
    if expected != screen {
        panic!(
            "snapshot {name} differs (UPDATE_SNAPSHOTS=1 rewrites it)\n--- expected\n{expected}\n--- got\n{screen}"
        );
    }
}

/// Draw `app` and compare it with snapshot `name`; the screen, for further checks.
pub fn snapshot(name: &str, app: &App, width: u16, height: u16, now: Instant) -> String {
    let screen = draw(app, width, height, now);
    assert_snapshot(name, &screen);
    screen
}
