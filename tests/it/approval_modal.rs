//! The approval modal through the update step: scripted approval requests and key presses
//! in; state, and the answers (approval commands naming the request's id), out.

use std::cell::RefCell;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::support::app::app;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyEventState, KeyModifiers};
use rein::app::state::{Activity, App, Cell, ToolStatus};
use rein::app::update::{update_at, PASTE_TAIL};
use rein::app::{AppEvent, Effect};
use rein_core::agent::{AgentCommand, AgentEvent, ApprovalDecision, ToolOutcome, TurnOutcome};
use rein_core::permissions::Grant;

fn press(code: KeyCode, modifiers: KeyModifiers) -> AppEvent {
    AppEvent::Key(KeyEvent::new(code, modifiers))
}

fn ch(c: char) -> AppEvent {
    press(KeyCode::Char(c), KeyModifiers::NONE)
}

fn ctrl(c: char) -> AppEvent {
    press(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn code(code: KeyCode) -> AppEvent {
    press(code, KeyModifiers::NONE)
}

/// A request the agent is waiting on, by its id.
struct Ask {
    id: String,
}

thread_local! {
    /// The answers the loop sent to the agent in this test: (request id, decision).
    static SENT: RefCell<Vec<(String, ApprovalDecision)>> = const { RefCell::new(Vec::new()) };
}

/// A bash call that needs approval, as the agent announces it.
fn ask(app: &mut App, now: Instant, id: &str, grants: Vec<Grant>) -> (Vec<Effect>, Ask) {
    update_at(
        app,
        AppEvent::Agent(AgentEvent::ToolCallStarted {
            id: id.into(),
            name: "bash".into(),
            args: serde_json::json!({ "command": format!("rm -rf {id}") }),
        }),
        now,
    );
    let effects = update_at(
        app,
        AppEvent::Agent(AgentEvent::ApprovalNeeded {
            id: id.into(),
            name: "bash".into(),
            summary: format!("rm -rf {id}"),
            reason: "rm is not allowed by the rules".into(),
            grants,
            preview: None,
            subagent: None,
            repeated: 0,
            period: 0,
            mcp: None,
        }),
        now,
    );
    (effects, Ask { id: id.into() })
}

fn bash_grant(id: &str) -> Vec<Grant> {
    vec![Grant::Bash(format!("rm -rf {id}"))]
}

/// The decisions in these effects, sent to the agent as the loop would (see [`received`]).
fn answers(effects: Vec<Effect>) -> Vec<ApprovalDecision> {
    effects
        .into_iter()
        .filter_map(|e| match e {
            Effect::Agent(AgentCommand::Approval { id, decision }) => {
                SENT.with(|sent| sent.borrow_mut().push((id, decision.clone())));
                Some(decision)
            }
            _ => None,
        })
        .collect()
}

/// The answer the agent got for `ask`'s request, if one was sent (taken, so each counts
/// once).
fn received(ask: &mut Ask) -> Option<ApprovalDecision> {
    SENT.with(|sent| {
        let mut sent = sent.borrow_mut();
        let i = sent.iter().position(|(id, _)| *id == ask.id)?;
        Some(sent.remove(i).1)
    })
}

fn tool_status(app: &App, id: &str) -> ToolStatus {
    app.transcript
        .cells
        .iter()
        .find_map(|c| match c {
            Cell::Tool(t) if t.id == id => Some(t.status.clone()),
            _ => None,
        })
        .expect("no such tool cell")
}

fn busy_app(now: Instant) -> App {
    let mut app = app();
    update_at(
        &mut app,
        AppEvent::Agent(AgentEvent::TurnStarted {
            text: "clean up".into(),
        }),
        now,
    );
    app
}

#[test]
fn an_ask_opens_the_modal_notifies_and_y_approves_once() {
    let now = Instant::now();
    let mut app = busy_app(now);
    let (effects, mut ask) = ask(&mut app, now, "c1", bash_grant("c1"));
    assert!(
        matches!(effects.as_slice(), [Effect::Notify { message }] if message.contains("rm -rf c1"))
    );
    assert_eq!(tool_status(&app, "c1"), ToolStatus::WaitingApproval);
    assert!(matches!(app.activity, Activity::WaitingApproval { .. }));
    assert_eq!((app.approvals.batch_total, app.approvals.answered), (1, 0));

    let later = now + Duration::from_secs(3);
    let decisions = answers(update_at(&mut app, ch('y'), later));
    assert_eq!(decisions, vec![ApprovalDecision::Approve]);
    assert_eq!(received(&mut ask), Some(ApprovalDecision::Approve));
    assert!(app.approvals.queue.is_empty());
    assert_eq!(app.approvals.answered, 1);
    assert_eq!(tool_status(&app, "c1"), ToolStatus::Running);
    assert!(
        matches!(&app.activity, Activity::Tool { name, detail, since } if name == "bash" && detail == "bash rm -rf c1" && *since == later)
    );

    update_at(
        &mut app,
        AppEvent::Agent(AgentEvent::ToolFinished {
            id: "c1".into(),
            name: "bash".into(),
            result: "exit code 0".into(),
            is_error: false,
            outcome: ToolOutcome::Ok,
            duration: Duration::from_millis(40),
            stored: None,
        }),
        later,
    );
    assert!(matches!(tool_status(&app, "c1"), ToolStatus::Done { .. }));
}

#[test]
fn a_approves_for_the_session_only_when_there_are_grants() {
    let now = Instant::now();
    let mut app = busy_app(now);
    let (_, mut without) = ask(&mut app, now, "c1", Vec::new());
    assert!(answers(update_at(&mut app, ch('a'), now)).is_empty());
    assert_eq!(app.approvals.queue.len(), 1);
    assert!(app.hint.as_deref().is_some_and(|h| h.contains("y allows")));
    assert_eq!(received(&mut without), None);
    assert_eq!(
        answers(update_at(&mut app, ch('y'), now)),
        vec![ApprovalDecision::Approve]
    );

    let (_, mut with) = ask(&mut app, now, "c2", bash_grant("c2"));
    assert_eq!(
        answers(update_at(&mut app, ch('a'), now)),
        vec![ApprovalDecision::ApproveForSession]
    );
    assert_eq!(
        received(&mut with),
        Some(ApprovalDecision::ApproveForSession)
    );
}

#[test]
fn p_approves_for_the_project_only_with_a_command_rule() {
    let now = Instant::now();
    let mut app = busy_app(now);
    let write = vec![Grant::Write(PathBuf::from("/project/src/main.rs"))];
    let (_, _write_ask) = ask(&mut app, now, "c1", write);
    assert!(answers(update_at(&mut app, ch('p'), now)).is_empty());
    assert_eq!(app.approvals.queue.len(), 1);
    assert!(app.hint.is_some());
    // `a` still works for a write grant.
    assert_eq!(
        answers(update_at(&mut app, ch('a'), now)),
        vec![ApprovalDecision::ApproveForSession]
    );

    let (_, mut bash) = ask(&mut app, now, "c2", bash_grant("c2"));
    assert_eq!(
        answers(update_at(&mut app, ch('p'), now)),
        vec![ApprovalDecision::ApproveForProject]
    );
    assert_eq!(
        received(&mut bash),
        Some(ApprovalDecision::ApproveForProject)
    );
}

#[test]
fn n_esc_and_ctrl_c_deny_without_feedback() {
    let now = Instant::now();
    let mut app = busy_app(now);
    for (i, event) in [ch('n'), code(KeyCode::Esc), ctrl('c')]
        .into_iter()
        .enumerate()
    {
        let id = format!("c{i}");
        let (_, mut asked) = ask(&mut app, now, &id, bash_grant(&id));
        let deny = ApprovalDecision::Deny { feedback: None };
        assert_eq!(answers(update_at(&mut app, event, now)), vec![deny.clone()]);
        assert_eq!(received(&mut asked), Some(deny));
        assert_eq!(tool_status(&app, &id), ToolStatus::Refused);
        assert!(matches!(app.activity, Activity::Thinking { .. }));
    }
    // Ctrl-C in the modal is an answer, not the first half of a quit.
    assert_eq!(app.last_ctrl_c, None);
    let effects = update_at(&mut app, ctrl('c'), now);
    assert!(matches!(
        effects.as_slice(),
        [Effect::Agent(AgentCommand::Interrupt)]
    ));

    // The agent's refusal result keeps the cell refused.
    update_at(
        &mut app,
        AppEvent::Agent(AgentEvent::ToolFinished {
            id: "c0".into(),
            name: "bash".into(),
            result: "Error: bash was not run: approval was refused by the user. Do not retry the same action; choose another way or explain what you need.".into(),
            is_error: true,
            outcome: ToolOutcome::Refused,
            duration: Duration::from_millis(1),
            stored: None,
        }),
        now,
    );
    assert_eq!(tool_status(&app, "c0"), ToolStatus::Refused);
}

#[test]
fn e_opens_a_field_and_enter_denies_with_its_text() {
    let now = Instant::now();
    let mut app = busy_app(now);
    let (_, mut asked) = ask(&mut app, now, "c1", bash_grant("c1"));
    assert!(answers(update_at(&mut app, ch('e'), now)).is_empty());
    assert!(app.approvals.feedback.is_some());
    // While the field is open, y, a, p and n are text.
    for c in "  use git clean, not rm".chars() {
        assert!(answers(update_at(&mut app, ch(c), now)).is_empty());
    }
    // Line breaks do not go into a one-line field.
    update_at(&mut app, ctrl('j'), now);
    update_at(&mut app, ctrl('m'), now);
    update_at(&mut app, AppEvent::Paste(" -n\nfirst ".into()), now);
    assert_eq!(
        app.approvals.feedback.as_ref().map(|f| f.lines().len()),
        Some(1)
    );
    let now = now + PASTE_TAIL;
    let decisions = answers(update_at(&mut app, code(KeyCode::Enter), now));
    let expected = ApprovalDecision::Deny {
        feedback: Some("use git clean, not rm -n first".into()),
    };
    assert_eq!(decisions, vec![expected.clone()]);
    assert_eq!(received(&mut asked), Some(expected));
    assert!(app.approvals.feedback.is_none());
    assert!(app.approvals.queue.is_empty());
    // Nothing leaked into the input box.
    assert!(app.composer.textarea.is_empty());
}

#[test]
fn esc_in_the_field_goes_back_to_the_choices_and_an_empty_reason_is_none() {
    let now = Instant::now();
    let mut app = busy_app(now);
    let (_, _asked) = ask(&mut app, now, "c1", bash_grant("c1"));
    update_at(&mut app, ch('e'), now);
    update_at(&mut app, ch('x'), now);
    assert!(answers(update_at(&mut app, code(KeyCode::Esc), now)).is_empty());
    assert!(app.approvals.feedback.is_none());
    assert_eq!(app.approvals.queue.len(), 1);
    // Reopened, the field starts empty; Enter with nothing typed denies without feedback.
    update_at(&mut app, ch('e'), now);
    assert_eq!(
        app.approvals.feedback.as_ref().map(|f| f.is_empty()),
        Some(true)
    );
    update_at(&mut app, ch(' '), now);
    assert_eq!(
        answers(update_at(&mut app, code(KeyCode::Enter), now)),
        vec![ApprovalDecision::Deny { feedback: None }]
    );
}

#[test]
fn ctrl_c_in_the_field_denies() {
    let now = Instant::now();
    let mut app = busy_app(now);
    let (_, _asked) = ask(&mut app, now, "c1", bash_grant("c1"));
    update_at(&mut app, ch('e'), now);
    update_at(&mut app, ch('z'), now);
    assert_eq!(
        answers(update_at(&mut app, ctrl('c'), now)),
        vec![ApprovalDecision::Deny { feedback: None }]
    );
}

#[test]
fn three_asks_queue_as_a_batch_and_are_answered_in_order() {
    let now = Instant::now();
    let mut app = busy_app(now);
    let mut notifications = 0;
    let mut asks = Vec::new();
    for id in ["c1", "c2", "c3"] {
        let (effects, asked) = ask(&mut app, now, id, bash_grant(id));
        notifications += effects
            .iter()
            .filter(|e| matches!(e, Effect::Notify { .. }))
            .count();
        asks.push(asked);
    }
    assert_eq!(notifications, 1, "one notification when the modal opens");
    assert_eq!(app.approvals.batch_total, 3);
    let front = |app: &App| app.approvals.queue.front().map(|p| p.id.clone());

    assert_eq!(
        (front(&app).as_deref(), app.approvals.answered),
        (Some("c1"), 0)
    );
    update_at(&mut app, code(KeyCode::Down), now);
    assert_eq!(app.approvals.scroll, 1, "the modal scrolls");
    assert_eq!(
        answers(update_at(&mut app, ch('y'), now)),
        vec![ApprovalDecision::Approve]
    );
    assert_eq!(
        app.approvals.scroll, 0,
        "the next request starts at the top"
    );
    assert_eq!(
        (front(&app).as_deref(), app.approvals.answered),
        (Some("c2"), 1)
    );
    assert!(matches!(app.activity, Activity::WaitingApproval { .. }));

    assert_eq!(
        answers(update_at(&mut app, ch('n'), now)),
        vec![ApprovalDecision::Deny { feedback: None }]
    );
    assert_eq!(
        (front(&app).as_deref(), app.approvals.answered),
        (Some("c3"), 2)
    );
    assert_eq!(
        answers(update_at(&mut app, ch('a'), now)),
        vec![ApprovalDecision::ApproveForSession]
    );
    assert_eq!((front(&app), app.approvals.answered), (None, 3));

    let got: Vec<_> = asks.iter_mut().map(received).collect();
    assert_eq!(
        got,
        vec![
            Some(ApprovalDecision::Approve),
            Some(ApprovalDecision::Deny { feedback: None }),
            Some(ApprovalDecision::ApproveForSession)
        ]
    );
    assert_eq!(tool_status(&app, "c1"), ToolStatus::Running);
    assert_eq!(tool_status(&app, "c2"), ToolStatus::Refused);
    assert_eq!(tool_status(&app, "c3"), ToolStatus::Running);

    // The next ask starts a new batch.
    let (_, _c4) = ask(&mut app, now, "c4", bash_grant("c4"));
    assert_eq!((app.approvals.batch_total, app.approvals.answered), (1, 0));
}

#[test]
fn no_other_key_approves() {
    let now = Instant::now();
    let mut app = busy_app(now);
    let (_, mut asked) = ask(&mut app, now, "c1", bash_grant("c1"));
    let repeat = |c: char| {
        AppEvent::Key(KeyEvent {
            code: KeyCode::Char(c),
            modifiers: KeyModifiers::NONE,
            kind: KeyEventKind::Repeat,
            state: KeyEventState::NONE,
        })
    };
    let release = |c: char| {
        AppEvent::Key(KeyEvent {
            code: KeyCode::Char(c),
            modifiers: KeyModifiers::NONE,
            kind: KeyEventKind::Release,
            state: KeyEventState::NONE,
        })
    };
    let events = vec![
        code(KeyCode::Enter),
        ch(' '),
        code(KeyCode::Tab),
        code(KeyCode::Backspace),
        press(KeyCode::Char('Y'), KeyModifiers::SHIFT),
        press(KeyCode::Char('A'), KeyModifiers::SHIFT),
        press(KeyCode::Enter, KeyModifiers::SHIFT),
        ctrl('y'),
        press(KeyCode::Char('y'), KeyModifiers::ALT),
        ctrl('j'),
        ch('x'),
        ch('q'),
        ch('1'),
        code(KeyCode::F(2)),
        code(KeyCode::Home),
        code(KeyCode::End),
        code(KeyCode::Up),
        code(KeyCode::PageDown),
        repeat('y'),
        release('y'),
        AppEvent::Paste("y\n".into()),
        AppEvent::Resize {
            width: 100,
            height: 30,
        },
        AppEvent::Tick(now),
    ];
    let count = events.len();
    for event in events {
        let effects = update_at(&mut app, event, now);
        assert!(
            !effects
                .iter()
                .any(|e| matches!(e, Effect::Agent(AgentCommand::Approval { .. }))),
            "answered: {effects:?}"
        );
    }
    assert!(count >= 12);
    assert_eq!(app.approvals.queue.len(), 1);
    assert_eq!(app.approvals.answered, 0);
    assert_eq!(received(&mut asked), None);
    assert!(
        app.composer.textarea.is_empty(),
        "keys leaked into the input"
    );
    assert_eq!(tool_status(&app, "c1"), ToolStatus::WaitingApproval);
}

#[test]
fn the_end_of_a_turn_drops_requests_it_can_no_longer_take() {
    let now = Instant::now();
    let mut app = busy_app(now);
    let (_, mut asked) = ask(&mut app, now, "c1", bash_grant("c1"));
    update_at(&mut app, ch('e'), now);
    update_at(
        &mut app,
        AppEvent::Agent(AgentEvent::TurnFinished {
            outcome: TurnOutcome::Interrupted,
        }),
        now,
    );
    assert!(app.approvals.queue.is_empty());
    assert!(app.approvals.feedback.is_none());
    assert_eq!(tool_status(&app, "c1"), ToolStatus::Interrupted);
    assert_eq!(app.activity, Activity::Idle);
    // Nothing was answered: the agent's own end of the turn settled the request.
    assert_eq!(received(&mut asked), None);
    // Keys go to the input again.
    update_at(&mut app, ch('y'), now);
    assert_eq!(app.composer.textarea.lines(), ["y"]);
}

#[test]
fn the_modal_scrolls_within_its_text() {
    let now = Instant::now();
    let mut app = busy_app(now);
    let preview: String = (0..50).map(|i| format!("+line {i}\n")).collect();
    update_at(
        &mut app,
        AppEvent::Agent(AgentEvent::ApprovalNeeded {
            id: "w1".into(),
            name: "write_file".into(),
            summary: "src/lib.rs".into(),
            reason: "writes need approval".into(),
            grants: vec![Grant::Write(PathBuf::from("src/lib.rs"))],
            preview: Some(preview),
            subagent: None,
            repeated: 0,
            period: 0,
            mcp: None,
        }),
        now,
    );
    update_at(&mut app, code(KeyCode::PageDown), now);
    let page = app.approvals.scroll;
    assert!(page > 1);
    for _ in 0..20 {
        update_at(&mut app, code(KeyCode::PageDown), now);
    }
    assert_eq!(app.approvals.scroll, 52, "bounded by the text");
    update_at(&mut app, code(KeyCode::Up), now);
    assert_eq!(app.approvals.scroll, 51);
    for _ in 0..20 {
        update_at(&mut app, code(KeyCode::PageUp), now);
    }
    assert_eq!(app.approvals.scroll, 0);
}

#[test]
fn an_ask_goes_over_the_context_layer_and_takes_the_keys() {
    let now = Instant::now();
    let mut app = busy_app(now);
    app.context_open = true;
    let (_, mut ask) = ask(&mut app, now, "c1", bash_grant("c1"));
    // Esc answers the request (deny), not the layer under it.
    let decisions = answers(update_at(&mut app, code(KeyCode::Esc), now));
    assert_eq!(decisions, vec![ApprovalDecision::Deny { feedback: None }]);
    assert!(received(&mut ask).is_some());
    assert!(app.context_open, "the layer is still there");
    update_at(&mut app, code(KeyCode::Esc), now);
    assert!(!app.context_open);
}

#[test]
fn keys_right_behind_a_paste_never_answer_an_approval() {
    let now = Instant::now();
    let mut app = busy_app(now);
    let (_, mut asked) = ask(&mut app, now, "c1", bash_grant("c1"));
    // A paste whose text held the end marker: "y" and Enter arrive as keys at once.
    update_at(&mut app, AppEvent::Paste("oops".into()), now);
    let soon = now + Duration::from_millis(5);
    assert!(answers(update_at(&mut app, ch('y'), soon)).is_empty());
    assert!(answers(update_at(&mut app, code(KeyCode::Enter), soon)).is_empty());
    assert_eq!(received(&mut asked), None);
    assert_eq!(app.approvals.queue.len(), 1, "still asking");
    // A key pressed after the burst answers as usual.
    let later = soon + PASTE_TAIL;
    assert_eq!(
        answers(update_at(&mut app, ch('y'), later)),
        vec![ApprovalDecision::Approve]
    );
}

/// A call to an MCP tool that needs approval, as the agent announces it.
fn ask_mcp(app: &mut App, now: Instant, id: &str, args: serde_json::Value) -> Ask {
    let name = "mcp__github__create_issue";
    update_at(
        app,
        AppEvent::Agent(AgentEvent::ToolCallStarted {
            id: id.into(),
            name: name.into(),
            args: args.clone(),
        }),
        now,
    );
    update_at(
        app,
        AppEvent::Agent(AgentEvent::ApprovalNeeded {
            id: id.into(),
            name: name.into(),
            summary: name.into(),
            reason: format!("no [[permissions.tools]] rule matches `{name}`"),
            grants: vec![Grant::Tool(name.into())],
            preview: None,
            subagent: None,
            repeated: 0,
            period: 0,
            mcp: rein_core::permissions::tools::McpCall::for_call(name, &args),
        }),
        now,
    );
    Ask { id: id.into() }
}

#[test]
fn y_a_and_p_answer_an_mcp_call() {
    let now = Instant::now();
    let mut app = busy_app(now);
    let args = serde_json::json!({"title": "Tabs split words"});
    let mut once = ask_mcp(&mut app, now, "m1", args.clone());
    let front = app.approvals.queue.front().unwrap();
    let call = front
        .mcp
        .as_ref()
        .expect("the request carries the MCP call");
    assert_eq!(
        (call.server.as_str(), call.tool.as_str()),
        ("github", "create_issue")
    );
    assert_eq!(call.args, args);
    assert_eq!(tool_status(&app, "m1"), ToolStatus::WaitingApproval);
    assert_eq!(
        answers(update_at(&mut app, ch('y'), now)),
        vec![ApprovalDecision::Approve]
    );
    assert_eq!(received(&mut once), Some(ApprovalDecision::Approve));
    assert_eq!(tool_status(&app, "m1"), ToolStatus::Running);

    let mut session = ask_mcp(&mut app, now, "m2", args.clone());
    assert_eq!(
        answers(update_at(&mut app, ch('a'), now)),
        vec![ApprovalDecision::ApproveForSession]
    );
    assert_eq!(
        received(&mut session),
        Some(ApprovalDecision::ApproveForSession)
    );

    // A tool rule can be saved to the project, as a command rule can.
    let mut project = ask_mcp(&mut app, now, "m3", args);
    assert_eq!(
        answers(update_at(&mut app, ch('p'), now)),
        vec![ApprovalDecision::ApproveForProject]
    );
    assert_eq!(
        received(&mut project),
        Some(ApprovalDecision::ApproveForProject)
    );
    assert!(app.approvals.queue.is_empty());
    assert!(app.hint.is_none());
}

#[test]
fn long_mcp_arguments_scroll_to_their_end_and_no_further() {
    let now = Instant::now();
    let mut app = busy_app(now);
    app.size = (60, 20);
    let items: Vec<String> = (0..40).map(|i| format!("item {i}")).collect();
    let args = serde_json::json!({"items": items, "body": "word ".repeat(100)});
    ask_mcp(&mut app, now, "m1", args);
    for _ in 0..40 {
        update_at(&mut app, code(KeyCode::PageDown), now);
    }
    let end = app.approvals.scroll;
    // 40 items, the braces and the key lines, the header, and the body's wrapped lines.
    assert!(end >= 45, "the scroll reaches the end of the JSON: {end}");
    assert!(end < 80, "and stops near it: {end}");
    update_at(&mut app, code(KeyCode::Up), now);
    assert_eq!(app.approvals.scroll, end - 1);
}

/// The modal opens while the user types a message: the rest of their typing (a `y` and an
/// `a` among it) goes on into the input box and answers nothing; after a pause, `y`
/// answers. Esc is not typing, and still denies at once.
#[test]
fn keys_typed_on_as_the_modal_opens_go_to_the_input_not_the_answer() {
    let mut now = Instant::now();
    let mut app = busy_app(now);
    for c in "say yes".chars() {
        update_at(&mut app, ch(c), now);
        now += Duration::from_millis(120);
    }
    let (_, mut first) = ask(&mut app, now, "c1", bash_grant("c1"));
    for c in " any day".chars() {
        now += Duration::from_millis(150);
        let decisions = answers(update_at(&mut app, ch(c), now));
        assert!(decisions.is_empty(), "{c:?} answered {decisions:?}");
    }
    // Enter too is typing: it neither approves nor sends.
    now += Duration::from_millis(100);
    assert!(answers(update_at(&mut app, code(KeyCode::Enter), now)).is_empty());
    assert_eq!(app.composer.textarea.lines().join("\n"), "say yes any day");
    assert!(
        app.hint
            .as_deref()
            .is_some_and(|h| h.contains("while you typed")),
        "{:?}",
        app.hint
    );
    assert_eq!(app.approvals.queue.len(), 1);
    assert_eq!(received(&mut first), None);
    // A pause, then the answer.
    now += rein::app::approval::TYPING_PAUSE;
    let decisions = answers(update_at(&mut app, ch('y'), now));
    assert_eq!(decisions, vec![ApprovalDecision::Approve]);
    assert_eq!(received(&mut first), Some(ApprovalDecision::Approve));
    assert_eq!(app.composer.textarea.lines().join("\n"), "say yes any day");

    // Typing again as the next one opens: Esc still denies at once.
    now += Duration::from_millis(100);
    update_at(&mut app, ch('x'), now);
    now += Duration::from_millis(100);
    let (_, mut second) = ask(&mut app, now, "c2", bash_grant("c2"));
    now += Duration::from_millis(50);
    let decisions = answers(update_at(&mut app, code(KeyCode::Esc), now));
    assert_eq!(decisions, vec![ApprovalDecision::Deny { feedback: None }]);
    assert_eq!(
        received(&mut second),
        Some(ApprovalDecision::Deny { feedback: None })
    );
}

/// A message sent with Enter is not typing: an approval that opens right after it takes
/// the next key as its answer, however soon.
#[test]
fn after_enter_sent_the_message_the_first_key_answers() {
    let mut now = Instant::now();
    let mut app = app();
    for c in "clean up".chars() {
        update_at(&mut app, ch(c), now);
        now += Duration::from_millis(80);
    }
    update_at(&mut app, code(KeyCode::Enter), now);
    update_at(
        &mut app,
        AppEvent::Agent(AgentEvent::TurnStarted {
            text: "clean up".into(),
        }),
        now,
    );
    now += Duration::from_millis(50);
    let (_, mut asked) = ask(&mut app, now, "c1", bash_grant("c1"));
    now += Duration::from_millis(50);
    let decisions = answers(update_at(&mut app, ch('y'), now));
    assert_eq!(decisions, vec![ApprovalDecision::Approve]);
    assert_eq!(received(&mut asked), Some(ApprovalDecision::Approve));
}
