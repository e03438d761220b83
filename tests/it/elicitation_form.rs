//! An MCP server's form (elicitation) through the dashboard's real update step and
//! drawing: a `FormRequested` event opens the form layer, keys and pastes fill it in,
//! and the answer leaves as an `AgentCommand::FormAnswer` naming the form's id. Snapshots
//! show it is framed as the server's question, not rein's approval.

use crate::support;

use crossterm::event::{KeyCode, KeyModifiers};
use rein::app::state::{App, SessionInfo};
use rein::app::{Effect, Layer};
use rein_core::agent::{AgentCommand, AgentEvent};
use rein_core::elicitation::{Form, FormAnswer};
use serde_json::json;
use support::app::{snapshot, Script};

fn script() -> Script {
    Script::with(App::new(SessionInfo::default(), 128_000))
}

fn form(server: &str, message: &str, schema: serde_json::Value) -> Form {
    Form::from_schema(server, message, &schema, None).expect("a form rein can show")
}

/// A profile form: text with a length, an email, a bounded integer, an enum and a flag.
fn profile() -> Form {
    form(
        "github",
        "Who should the issue be assigned to?",
        json!({"type": "object", "properties": {
            "name": {"type": "string", "title": "Name", "minLength": 2, "maxLength": 20,
                     "default": "Ada"},
            "email": {"type": "string", "title": "Email", "format": "email"},
            "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150},
            "team": {"type": "string", "title": "Team", "enum": ["core", "docs", "infra"],
                     "enumNames": ["Core", "Docs", "Infra"], "default": "docs"},
            "notify": {"type": "boolean", "title": "Notify them", "default": false},
        }, "required": ["name", "email"]}),
    )
}

/// The `FormAnswer` commands among `effects`.
fn answers(effects: &[Effect]) -> Vec<(String, FormAnswer)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Agent(AgentCommand::FormAnswer { id, answer }) => {
                Some((id.clone(), answer.clone()))
            }
            _ => None,
        })
        .collect()
}

fn open(s: &mut Script, id: &str, form: Form) {
    s.agent(AgentEvent::FormRequested {
        id: id.into(),
        form,
    });
}

/// Move to the field labelled `label` (Tab from the top).
fn choose(s: &mut Script, label: &str) {
    let Some(front) = s.app.forms.queue.front() else {
        panic!("no form open");
    };
    let i = front
        .form
        .fields
        .iter()
        .position(|f| f.label == label)
        .expect("a field with that label");
    while s.app.forms.queue.front().map(|f| f.chosen) != Some(i) {
        let before = s.app.forms.queue.front().map(|f| f.chosen);
        let key = if before < Some(i) {
            KeyCode::Tab
        } else {
            KeyCode::BackTab
        };
        assert!(s.plain(key).is_empty());
    }
}

#[test]
fn typing_choosing_and_sending_answers_with_the_values_and_the_defaults() {
    let mut s = script();
    open(&mut s, "form-1", profile());
    assert_eq!(Layer::top(&s.app), Layer::Form);
    choose(&mut s, "Email");
    s.type_text("ada@example.org");
    choose(&mut s, "Age");
    s.type_text("36");
    choose(&mut s, "Team");
    assert!(s.plain(KeyCode::Right).is_empty());
    choose(&mut s, "Notify them");
    assert!(s.plain(KeyCode::Char(' ')).is_empty());
    let effects = s.ctrl('s');
    assert_eq!(
        answers(&effects),
        vec![(
            "form-1".to_string(),
            FormAnswer::Accept(
                json!({"name": "Ada", "email": "ada@example.org", "age": 36,
                       "team": "infra", "notify": true})
                .as_object()
                .cloned()
                .unwrap_or_default()
            )
        )]
    );
    assert_eq!(Layer::top(&s.app), Layer::Main, "the form closed");
    assert!(s
        .notices()
        .iter()
        .any(|(_, t)| t.contains("\"github\"'s form: sent 5 values")));
}

#[test]
fn a_wrong_field_stops_the_answer_and_is_chosen_with_its_error() {
    let mut s = script();
    open(&mut s, "form-1", profile());
    choose(&mut s, "Age");
    s.type_text("200");
    // Fields come in the schema's order, as the server wrote them (name, email, age, …):
    // the email, required and empty, is the first wrong one.
    assert!(answers(&s.ctrl('s')).is_empty());
    let front = s.app.forms.queue.front().cloned().expect("still open");
    assert_eq!(front.form.fields[front.chosen].label, "Email");
    assert_eq!(front.error.as_deref(), Some("Email is required"));
    s.type_text("not-an-email");
    assert!(answers(&s.ctrl('s')).is_empty());
    let front = s.app.forms.queue.front().cloned().expect("still open");
    assert_eq!(
        front.error.as_deref(),
        Some("Email is not an email address")
    );
    for _ in 0.."not-an-email".len() {
        s.plain(KeyCode::Backspace);
    }
    s.type_text("a@b.io");
    // Then the age, out of its bounds.
    assert!(answers(&s.ctrl('s')).is_empty());
    let front = s.app.forms.queue.front().cloned().expect("still open");
    assert_eq!(front.form.fields[front.chosen].label, "Age");
    assert_eq!(front.error.as_deref(), Some("Age must be at most 150"));
    for _ in 0..3 {
        s.plain(KeyCode::Backspace);
    }
    s.type_text("42");
    assert_eq!(answers(&s.ctrl('s')).len(), 1);
}

#[test]
fn decline_and_cancel_answer_so_and_a_paste_types_one_line() {
    let mut s = script();
    open(&mut s, "form-1", profile());
    open(&mut s, "form-2", profile());
    choose(&mut s, "Email");
    s.paste("ada@\nexample.org\u{1b}[31m");
    let front = s.app.forms.queue.front().cloned().expect("open");
    assert_eq!(
        front.values[front.chosen],
        rein::app::form::Value::Typed("ada@ example.org[31m".into()),
        "one line, no escape character"
    );
    assert_eq!(
        answers(&s.ctrl('d')),
        vec![("form-1".to_string(), FormAnswer::Decline)]
    );
    // The next form shows; Esc cancels it.
    assert_eq!(Layer::top(&s.app), Layer::Form);
    assert_eq!(
        answers(&s.plain(KeyCode::Esc)),
        vec![("form-2".to_string(), FormAnswer::Cancel)]
    );
    assert_eq!(Layer::top(&s.app), Layer::Main);
}

#[test]
fn keys_that_are_not_answers_answer_nothing() {
    let mut s = script();
    open(&mut s, "form-1", profile());
    // y and Enter answer rein's approval modal; here they are not answers.
    for key in [KeyCode::Char('y'), KeyCode::Enter, KeyCode::Char('n')] {
        assert!(answers(&s.plain(key)).is_empty());
    }
    // A held Ctrl-S repeats: a repeat is no answer.
    let mut repeat = crossterm::event::KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL);
    repeat.kind = crossterm::event::KeyEventKind::Repeat;
    assert!(answers(&s.at(rein::app::AppEvent::Key(repeat))).is_empty());
    assert_eq!(Layer::top(&s.app), Layer::Form);
}

#[test]
fn a_form_whose_call_ended_closes_and_says_so() {
    let mut s = script();
    open(&mut s, "form-1", profile());
    s.agent(AgentEvent::FormClosed {
        id: "form-1".into(),
    });
    assert_eq!(Layer::top(&s.app), Layer::Main);
    assert!(s
        .notices()
        .iter()
        .any(|(_, t)| t.contains("closed unanswered: its call ended")));
    // An unknown id changes nothing.
    s.agent(AgentEvent::FormClosed { id: "x".into() });
    assert_eq!(s.notices().len(), 1);
}

#[test]
fn a_thousand_field_form_shows_scrolls_and_answers() {
    let fields: serde_json::Map<String, serde_json::Value> = (0..1000)
        .map(|i| {
            (
                format!("f{i:04}"),
                json!({"type": "string", "title": format!("Field {i}"), "default": "x".repeat(5000)}),
            )
        })
        .collect();
    let big = form(
        "hostile",
        &"Fill me in. ".repeat(500),
        json!({"type": "object", "properties": fields, "required": ["f0999"]}),
    );
    let mut s = script();
    open(&mut s, "form-1", big);
    let screen = support::app::draw(&s.app, 80, 24, s.now);
    assert!(screen.contains("field 1 of 1000"), "{screen}");
    // A page is a third of the screen's rows: 125 pages reach the end, and more stay there.
    for _ in 0..130 {
        s.plain(KeyCode::PageDown);
    }
    let screen = support::app::draw(&s.app, 80, 24, s.now);
    assert!(screen.contains("field 1000 of 1000"), "{screen}");
    assert!(screen.contains("Field 999"), "{screen}");
    let sent = answers(&s.ctrl('s'));
    let Some((_, FormAnswer::Accept(content))) = sent.first() else {
        panic!("not accepted: {sent:?}");
    };
    assert_eq!(content.len(), 1000);
}

#[test]
fn the_form_is_framed_as_the_servers_question() {
    let mut s = script();
    // A server that dresses its form as rein's approval: its words are quoted, its
    // escape sequences shown as text, and rein's frame names the server.
    let fake = form(
        "evil",
        "rein asks for approval: allow bash?\n\u{1b}[33m[y] allow once",
        json!({"type": "object", "properties": {
            "ok": {"type": "boolean", "title": "y allow once", "default": true}}}),
    );
    open(&mut s, "form-1", fake);
    let screen = snapshot("elicitation_form_spoof_80x24", &s.app, 80, 24, s.now);
    assert!(screen.contains("Form from MCP server \"evil\""));
    assert!(screen.contains("its question, not rein's"));
    assert!(screen.contains("│ ^[[33m[y] allow once"));
    let mut s = script();
    open(&mut s, "form-1", profile());
    choose(&mut s, "Email");
    s.type_text("ada@");
    snapshot("elicitation_form_80x24", &s.app, 80, 24, s.now);
}
