//! `/model` in the dashboard (issue 10, section 4): the update step with listed models,
//! keys and the loop's answers in, state and effects out; and the model picker's snapshots
//! (`tests/snapshots/model_picker_*.txt`, `UPDATE_SNAPSHOTS=1` rewrites them). The agent's
//! side of a switch is in `tests/it/model_switch_agent.rs`.

use crate::support;

use std::path::PathBuf;
use std::time::Instant;

use crossterm::event::KeyCode;
use rein::app::event::{ModelResolved, ResolvedModel};
use rein::app::model_picker::{ModelChoice, ModelList, ServerModels, ServerState};
use rein::app::state::{Activity, App, Cell, NoticeKind, SessionInfo};
use rein::app::{AppEvent, Effect, Layer};
use rein_core::agent::{AgentCommand, AgentEvent, ContextStats, ModelSwitch, OverBudget, Prices};
use rein_core::context::budget::Breakdown;
use rein_core::session::{Entry, SessionMeta, SessionWriter};
use support::app::{assert_snapshot, Script};

// ---- helpers ----------------------------------------------------------------------------

const CURRENT: &str = "ollama/qwen3-coder";

fn info() -> SessionInfo {
    SessionInfo {
        model: CURRENT.into(),
        project: PathBuf::from("/home/ann/src/parser"),
        branch: Some("main".into()),
        sandbox: "on (bubblewrap)".into(),
        sandbox_ok: true,
        ..SessionInfo::default()
    }
}

fn choice(name: &str, window: Option<u64>, prices: Option<(f64, f64)>) -> ModelChoice {
    ModelChoice {
        name: name.into(),
        window,
        prices: prices.map(|(input, output)| Prices {
            input,
            cached_input: None,
            output,
            cache_write: None,
        }),
    }
}

/// What the loop lists: the model in use (also a configured one), and the configured ones
/// in the providers' order.
fn models() -> ModelList {
    ModelList {
        current: choice(CURRENT, Some(32_768), None),
        models: vec![
            choice("openai/gpt-4.1", Some(1_047_576), Some((2.0, 8.0))),
            choice(CURRENT, Some(32_768), None),
            choice(
                "openrouter/anthropic/claude-sonnet-4.5",
                Some(200_000),
                Some((3.0, 15.0)),
            ),
            choice("lab/qwen3-coder-30b", None, None),
        ],
        server_url: None,
    }
}

fn switch(name: &str, window: u64) -> ModelSwitch {
    ModelSwitch {
        name: name.into(),
        model: name.split_once('/').map_or(name, |(_, m)| m).into(),
        base_url: "http://127.0.0.1:9/v1".into(),
        api_key: "sk-new".into(),
        headers: Vec::new(),
        window,
        window_known: true,
        prices: None,
        images: false,
        api: Default::default(),
    }
}

fn resolved(name: &str, window: u64) -> AppEvent {
    AppEvent::ModelResolved(Box::new(ModelResolved {
        name: name.into(),
        result: Ok(ResolvedModel {
            switch: switch(name, window),
            warnings: Vec::new(),
        }),
    }))
}

fn script() -> Script {
    Script::with(App::new(info(), 32_768))
}

/// The `/model` picker's steps on the shared script.
trait ModelPicker {
    /// `/model` + Enter, then the loop's answer: the listed models.
    fn open(&mut self);
    /// The rows' names, the typed row as `"typed: NAME"`.
    fn rows(&self) -> Vec<String>;
}

impl ModelPicker for Script {
    fn open(&mut self) {
        let effects = self.send("/model");
        assert!(
            matches!(effects.as_slice(), [Effect::ListModels]),
            "{effects:?}"
        );
        assert!(self.at(AppEvent::Models(models())).is_empty());
        assert_eq!(Layer::top(&self.app), Layer::Models, "the picker opens");
    }

    fn rows(&self) -> Vec<String> {
        let picker = self.app.model_picker.as_ref().expect("the picker is open");
        picker
            .rows()
            .iter()
            .map(|r| match r {
                rein::app::model_picker::ModelRow::Model(m) => m.name.clone(),
                rein::app::model_picker::ModelRow::Server(m) => format!("server: {}", m.name),
                rein::app::model_picker::ModelRow::Typed(t) => format!("typed: {t}"),
            })
            .collect()
    }
}

fn switched_to(effects: &[Effect]) -> String {
    match effects {
        [Effect::SwitchModel(name)] => name.clone(),
        other => panic!("expected one SwitchModel, got {other:?}"),
    }
}

// ---- the picker -------------------------------------------------------------------------

#[test]
fn model_lists_the_models_with_the_one_in_use_first_and_once() {
    let mut s = script();
    s.open();
    assert_eq!(s.input(), "", "the command left the input");
    assert_eq!(
        s.rows(),
        [
            CURRENT,
            "openai/gpt-4.1",
            "openrouter/anthropic/claude-sonnet-4.5",
            "lab/qwen3-coder-30b"
        ]
    );
    let picker = s.app.model_picker.as_ref().unwrap();
    assert_eq!(picker.current, CURRENT);
    assert_eq!(picker.selected_name().as_deref(), Some(CURRENT));
}

#[test]
fn typing_filters_ignoring_case_and_enter_switches_to_the_selection() {
    let mut s = script();
    s.open();
    s.type_text("CLAUDE");
    assert_eq!(
        s.rows(),
        ["openrouter/anthropic/claude-sonnet-4.5", "typed: CLAUDE"],
        "a match, then what was typed as a name"
    );
    s.ctrl('u');
    s.type_text("qwen3");
    assert_eq!(s.rows(), [CURRENT, "lab/qwen3-coder-30b", "typed: qwen3"]);
    s.plain(KeyCode::Down);
    let effects = s.plain(KeyCode::Enter);
    assert_eq!(switched_to(&effects), "lab/qwen3-coder-30b");
    assert!(s.app.model_picker.is_none(), "Enter closes the picker");
    assert_eq!(
        s.app.hint.as_deref(),
        Some("switching to lab/qwen3-coder-30b…")
    );
    assert!(
        s.app.info.model == CURRENT,
        "nothing changes before the agent says so"
    );
}

#[test]
fn a_whole_name_that_is_not_listed_can_be_picked_as_typed() {
    let mut s = script();
    s.open();
    s.type_text("ollama/qwen3");
    // A prefix of a listed name: the listed one first, the typed name below it.
    assert_eq!(s.rows(), [CURRENT, "typed: ollama/qwen3"]);
    s.plain(KeyCode::End);
    assert_eq!(switched_to(&s.plain(KeyCode::Enter)), "ollama/qwen3");

    // A name no listed one contains: it is the only row, selected.
    s.open();
    s.at(AppEvent::Paste("groq/openai/gpt-oss-120b\n".into()));
    // Keys right behind a paste are taken as part of it; these come later.
    s.now += rein::app::update::PASTE_TAIL;
    assert_eq!(s.rows(), ["typed: groq/openai/gpt-oss-120b"]);
    assert_eq!(
        switched_to(&s.plain(KeyCode::Enter)),
        "groq/openai/gpt-oss-120b"
    );

    // An exact listed name is not offered twice.
    s.open();
    s.type_text("openai/gpt-4.1");
    assert_eq!(s.rows(), ["openai/gpt-4.1"]);
}

#[test]
fn esc_and_ctrl_c_close_and_nothing_changes() {
    let mut s = script();
    s.open();
    s.type_text("gpt");
    assert!(s.plain(KeyCode::Esc).is_empty(), "Esc does not interrupt");
    assert!(s.app.model_picker.is_none());
    assert_eq!(s.input(), "", "the filter did not reach the input");
    s.open();
    assert!(s.ctrl('c').is_empty(), "Ctrl-C closes, does not quit");
    assert!(s.app.model_picker.is_none());
    assert!(s.app.model_switch.is_none());
}

#[test]
fn keys_go_to_the_picker_and_the_footer_says_what_enter_does() {
    let mut s = script();
    s.open();
    for code in [KeyCode::F(1), KeyCode::Tab, KeyCode::Left] {
        assert!(s.plain(code).is_empty());
    }
    assert!(s.ctrl('t').is_empty());
    assert!(s.app.show_todos, "Ctrl-T did not toggle the todo pane");
    assert!(s.app.transcript.cells.is_empty(), "F1 did not print help");
    let hints = rein::ui::status::hints(&s.app);
    assert_eq!(hints[0], ("Enter".to_string(), "switch to it".to_string()));
    // An approval request goes over the picker, which keeps its filter.
    s.type_text("gpt");
    let help = rein::app::commands::help_text();
    assert!(help.contains("Model picker (/model"), "{help}");
    assert!(help.contains("/model [NAME]"), "{help}");
}

#[test]
fn choosing_the_model_in_use_changes_nothing() {
    let mut s = script();
    s.open();
    assert!(s.plain(KeyCode::Enter).is_empty());
    assert_eq!(
        s.app.hint.as_deref(),
        Some("already using ollama/qwen3-coder")
    );
    assert!(s.app.model_switch.is_none());
}

// ---- the switch -------------------------------------------------------------------------

#[test]
fn model_name_switches_directly_and_the_resolved_model_goes_to_the_agent() {
    let mut s = script();
    let effects = s.send("/model openrouter/anthropic/claude-sonnet-4.5");
    assert_eq!(
        switched_to(&effects),
        "openrouter/anthropic/claude-sonnet-4.5"
    );
    assert!(s.app.model_picker.is_none(), "no picker for a named model");
    let effects = s.at(resolved("openrouter/anthropic/claude-sonnet-4.5", 200_000));
    match effects.as_slice() {
        [Effect::Agent(AgentCommand::SetModel(m))] => {
            assert_eq!(m.name, "openrouter/anthropic/claude-sonnet-4.5");
            assert_eq!(m.model, "anthropic/claude-sonnet-4.5");
            assert_eq!(m.window, 200_000);
        }
        other => panic!("expected SetModel, got {other:?}"),
    }
    assert!(s.notices().is_empty(), "idle: no 'queued' notice");
    assert!(s.app.hint.is_none(), "the 'switching' hint is gone");
    assert!(s.app.model_switch.is_none());

    // The agent switched: the status line, the prices, a notice; the gauge follows the
    // Context event's window.
    s.at(AppEvent::Agent(AgentEvent::ModelSwitched {
        name: "openrouter/anthropic/claude-sonnet-4.5".into(),
        model: "anthropic/claude-sonnet-4.5".into(),
        base_url: "https://openrouter.ai/api/v1".into(),
        window: 200_000,
        over_budget: None,
        prices: Some(Prices {
            input: 3.0,
            cached_input: Some(0.3),
            output: 15.0,
            cache_write: None,
        }),
    }));
    assert_eq!(s.app.info.model, "openrouter/anthropic/claude-sonnet-4.5");
    assert_eq!(s.app.info.prices.map(|p| p.output), Some(15.0));
    assert_eq!(
        s.notices(),
        [(
            NoticeKind::Info,
            "now using openrouter/anthropic/claude-sonnet-4.5 (window 200k tokens)".to_string()
        )]
    );
    s.at(AppEvent::Agent(AgentEvent::Context(ContextStats {
        tokens: 12_000,
        window: 200_000,
        compact_at: 0.85,
        estimated: false,
        chars_per_token: 3.5,
        messages: 9,
        breakdown: Breakdown::default(),
    })));
    assert_eq!(s.app.gauge.limit, 200_000);
    assert_eq!(s.app.gauge.reported, 12_000);
}

#[test]
fn a_switch_during_a_turn_is_queued_and_says_so() {
    let mut s = script();
    s.at(AppEvent::Agent(AgentEvent::TurnStarted {
        text: "go".into(),
    }));
    assert!(s.app.busy());
    // The picker opens during a turn too.
    s.at(AppEvent::Agent(AgentEvent::TextDelta {
        text: "The first half of the reply, ".into(),
    }));
    s.open();
    s.type_text("gpt-4.1");
    assert_eq!(switched_to(&s.plain(KeyCode::Enter)), "openai/gpt-4.1");
    let effects = s.at(resolved("openai/gpt-4.1", 1_047_576));
    assert!(
        matches!(effects.as_slice(), [Effect::Agent(AgentCommand::SetModel(m))] if m.name == "openai/gpt-4.1"),
        "{effects:?}"
    );
    // Said under the input; nothing lands in the middle of the streaming reply.
    assert_eq!(
        s.app.hint.as_deref(),
        Some("switch to openai/gpt-4.1 queued: it happens when this turn ends")
    );
    assert_eq!(s.notices(), []);
    s.at(AppEvent::Agent(AgentEvent::TextDelta {
        text: "and the second.".into(),
    }));
    let replies: Vec<&str> = s
        .app
        .transcript
        .cells
        .iter()
        .filter_map(|c| match c {
            rein::app::state::Cell::Assistant(a) => Some(a.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(replies, ["The first half of the reply, and the second."]);
}

#[test]
fn a_name_that_does_not_resolve_is_one_error_line_and_nothing_changes() {
    let mut s = script();
    let effects = s.send("/model ollama/");
    assert_eq!(switched_to(&effects), "ollama/");
    let effects = s.at(AppEvent::ModelResolved(Box::new(ModelResolved {
        name: "ollama/".into(),
        result: Err(
            "cannot switch to ollama/: no model after the `/`; still using ollama/qwen3-coder"
                .into(),
        ),
    })));
    assert!(effects.is_empty(), "{effects:?}");
    let notices = s.notices();
    assert_eq!(notices.len(), 1);
    assert_eq!(notices[0].0, NoticeKind::Error);
    assert!(!notices[0].1.contains('\n'));
    assert_eq!(s.app.info.model, CURRENT);
    assert!(s.app.model_switch.is_none());
}

#[test]
fn messages_sent_while_the_switch_resolves_wait_and_go_to_the_new_model() {
    let mut s = script();
    s.send("/model openai/gpt-4.1");
    assert!(s.send("first question").is_empty(), "held, not sent");
    assert!(s.send("second question").is_empty());
    assert_eq!(
        s.app.composer.queued,
        ["first question", "second question"],
        "shown as queued"
    );
    let effects = s.at(resolved("openai/gpt-4.1", 1_047_576));
    let sent: Vec<String> = effects
        .iter()
        .map(|e| match e {
            Effect::Agent(AgentCommand::SetModel(m)) => format!("switch {}", m.name),
            Effect::Agent(AgentCommand::UserMessage(t)) => format!("message {}", t.text),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(
        sent,
        [
            "switch openai/gpt-4.1",
            "message first question",
            "message second question"
        ],
        "the switch first: the agent takes commands in order"
    );
    assert!(matches!(s.app.activity, Activity::Thinking { .. }));
    // After the answer, messages go out at once again.
    s.at(AppEvent::Agent(AgentEvent::TurnStarted {
        text: "first question".into(),
    }));
    assert!(matches!(
        s.send("third").as_slice(),
        [Effect::Agent(AgentCommand::UserMessage(t))] if t == "third"
    ));
}

#[test]
fn an_answer_for_a_replaced_switch_is_ignored() {
    let mut s = script();
    s.send("/model openai/gpt-4.1");
    s.send("/model lab/qwen3-coder-30b");
    // The first name's window took longer to ask for.
    assert!(s.at(resolved("openai/gpt-4.1", 1_047_576)).is_empty());
    let effects = s.at(resolved("lab/qwen3-coder-30b", 65_536));
    assert!(
        matches!(effects.as_slice(), [Effect::Agent(AgentCommand::SetModel(m))] if m.name == "lab/qwen3-coder-30b"),
        "{effects:?}"
    );
}

#[test]
fn a_conversation_left_over_the_new_budget_is_said_so() {
    let mut s = script();
    s.at(AppEvent::Agent(AgentEvent::ModelSwitched {
        name: "lab/small".into(),
        model: "small".into(),
        base_url: "http://10.0.0.5:9000/v1".into(),
        window: 8_192,
        over_budget: Some(OverBudget {
            tokens: 9_400,
            budget: 6_963,
        }),
        prices: None,
    }));
    let notices = s.notices();
    assert!(
        notices[0].1.starts_with("now using lab/small (window 8k tokens); the conversation (9k tokens) is over the new window's budget (6k)"),
        "{notices:?}"
    );
    assert_eq!(s.app.info.model, "lab/small");
}

#[test]
fn a_session_resumed_from_the_picker_goes_on_with_its_own_model() {
    let data = tempfile::tempdir().unwrap();
    let mut writer = SessionWriter::create(data.path(), SessionMeta::new("/p", "gpt-4.1")).unwrap();
    writer
        .append(&Entry::Model {
            name: "openai/gpt-4.1".into(),
            model: "gpt-4.1".into(),
            base_url: "https://api.openai.com/v1".into(),
            window: 1_047_576,
        })
        .unwrap();
    writer
        .append(&Entry::message(rein_core::agent::Message::user("hi")))
        .unwrap();
    let path = writer.path().to_path_buf();
    drop(writer);
    let loaded = rein_core::session::load(&path).unwrap();
    assert_eq!(loaded.model_name(), Some("openai/gpt-4.1"));

    let mut s = script();
    let effects = s.at(AppEvent::Resumed(Ok(Box::new(loaded.clone()))));
    assert_eq!(switched_to(&effects), "openai/gpt-4.1");

    // On the same model already: no switch.
    let mut s = script();
    s.app.info.model = "openai/gpt-4.1".into();
    assert!(s.at(AppEvent::Resumed(Ok(Box::new(loaded)))).is_empty());
}

// ---- rendering --------------------------------------------------------------------------

fn open_picker() -> Script {
    let mut s = script();
    s.app
        .transcript
        .cells
        .push(Cell::user("this is the conversation underneath"));
    s.open();
    s.plain(KeyCode::Down);
    s
}

#[test]
fn snapshot_model_picker_90x24() {
    let s = open_picker();
    let screen = draw(&s.app, 90, 24);
    assert_snapshot("model_picker_90x24", &screen);
    assert!(screen.contains("Switch model (4)"), "{screen}");
    assert!(screen.contains("ollama/qwen3-coder  ● in use"), "{screen}");
    assert!(screen.contains("› openai/gpt-4.1"), "{screen}");
    assert!(
        screen.contains("200k") && screen.contains("1.0M"),
        "{screen}"
    );
    assert!(screen.contains("$3 in · $15 out"), "{screen}");
    assert!(
        screen.contains("Enter switch to it"),
        "the footer: {screen}"
    );
}

#[test]
fn snapshot_model_picker_filtered_60x20() {
    let mut s = open_picker();
    s.type_text("qwen3");
    let screen = draw(&s.app, 60, 20);
    assert_snapshot("model_picker_filtered_60x20", &screen);
    assert!(screen.contains("(2 of 4)"), "{screen}");
    assert!(screen.contains("filter qwen3"), "{screen}");
    assert!(screen.contains("use \"qwen3\" as typed"), "{screen}");
}

// ---- the server's models (issue 28) -------------------------------------------------------

const MODELS_URL: &str = "http://127.0.0.1:11434/v1/models";

fn with_server() -> ModelList {
    ModelList {
        server_url: Some(MODELS_URL.into()),
        ..models()
    }
}

fn server_answer(result: Result<Vec<ModelChoice>, String>) -> AppEvent {
    AppEvent::ServerModels(ServerModels {
        url: MODELS_URL.into(),
        result,
    })
}

/// `/model` lists the configured models at once and asks the server in the background;
/// its models come under them (those configured not twice), and one of them is switched
/// to like any other. The answer is kept: the next `/model` asks no more.
#[test]
fn the_servers_models_come_under_the_configured_ones_and_are_kept() {
    let mut s = script();
    s.send("/model");
    let effects = s.at(AppEvent::Models(with_server()));
    assert!(
        matches!(effects.as_slice(), [Effect::ListServerModels]),
        "{effects:?}"
    );
    let picker = s.app.model_picker.as_ref().unwrap();
    assert_eq!(picker.server, ServerState::Asking(MODELS_URL.into()));
    let asking = draw(&s.app, 90, 24);
    assert!(asking.contains(&format!("asking {MODELS_URL}")), "{asking}");
    // An answer for another server is not this picker's.
    s.at(AppEvent::ServerModels(ServerModels {
        url: "http://elsewhere/v1/models".into(),
        result: Ok(vec![choice("ollama/elsewhere", None, None)]),
    }));
    assert!(!s.rows().iter().any(|r| r.contains("elsewhere")));
    s.at(server_answer(Ok(vec![
        choice(CURRENT, None, None),
        choice("ollama/llama3.3", Some(131_072), None),
        choice("ollama/gemma3", None, None),
    ])));
    assert_eq!(
        s.rows()[4..],
        ["server: ollama/llama3.3", "server: ollama/gemma3"]
    );
    let screen = draw(&s.app, 90, 24);
    assert_snapshot("model_picker_server_90x24", &screen);
    assert!(screen.contains("from the server"), "{screen}");
    assert!(
        screen.contains(&format!("2 more models from {MODELS_URL}")),
        "{screen}"
    );
    s.type_text("gemma");
    let effects = s.plain(KeyCode::Enter);
    assert!(
        matches!(effects.as_slice(), [Effect::SwitchModel(name)] if name == "ollama/gemma3"),
        "{effects:?}"
    );
    // Kept for the session: the picker lists them at once.
    s.send("/model");
    assert!(s.at(AppEvent::Models(with_server())).is_empty());
    assert!(s.rows().contains(&"server: ollama/llama3.3".to_string()));
}

/// A server that lists nothing says why in a line of the picker; nothing else changes,
/// and the next `/model` asks again.
#[test]
fn a_server_that_lists_nothing_says_why_and_is_asked_again() {
    let mut s = script();
    s.send("/model");
    s.at(AppEvent::Models(with_server()));
    s.at(server_answer(Err(format!(
        "{MODELS_URL} answered 401 Unauthorized"
    ))));
    assert_eq!(s.rows().len(), 4, "the configured ones");
    let screen = draw(&s.app, 90, 24);
    assert!(
        screen.contains("✗ the server listed no models") && screen.contains("401"),
        "{screen}"
    );
    s.plain(KeyCode::Esc);
    s.send("/model");
    let effects = s.at(AppEvent::Models(with_server()));
    assert!(
        matches!(effects.as_slice(), [Effect::ListServerModels]),
        "{effects:?}"
    );
}

fn draw(app: &App, width: u16, height: u16) -> String {
    support::app::draw(app, width, height, Instant::now())
}
