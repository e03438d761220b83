//! Approval modes and `!COMMAND` on the dashboard: the update step (Shift+Tab, the
//! agent's mode events, auto-approved calls, the user's commands) and render snapshots of
//! the status line in each mode (`tests/snapshots/mode_*.txt`).

use crate::support;

use std::path::PathBuf;
use std::time::Duration;

use crossterm::event::{KeyCode, KeyModifiers};
use rein::app::state::{Activity, App, Cell, SessionInfo, ToolStatus};
use rein::app::update::modes::{AUTO_APPROVED, RUN_BY_YOU};
use rein::app::Effect;
use rein_core::agent::{AgentCommand, AgentEvent, ToolOutcome};
use rein_core::permissions::ApprovalMode;
use support::app::{snapshot, Script};

fn app(sandbox_works: bool) -> App {
    let info = SessionInfo {
        model: "qwen3-coder".into(),
        project: PathBuf::from("/projects/parser"),
        branch: Some("fix-tabs".into()),
        sandbox: "on (bubblewrap)".into(),
        sandbox_ok: true,
        ..SessionInfo::default()
    };
    let mut app = App::new(info, 128_000);
    if !sandbox_works {
        app.no_auto = Some("auto mode needs the sandbox: bwrap was not found".into());
    }
    app
}

fn shift_tab(s: &mut Script) -> Vec<Effect> {
    // Terminals report it as BackTab, some with the Shift flag too.
    s.key(KeyCode::BackTab, KeyModifiers::SHIFT)
}

fn commands(effects: &[Effect]) -> Vec<AgentCommand> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Agent(c) => Some(c.clone()),
            _ => None,
        })
        .collect()
}

fn set_mode(effects: &[Effect]) -> Vec<ApprovalMode> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Agent(AgentCommand::SetMode(m)) => Some(*m),
            _ => None,
        })
        .collect()
}

#[test]
fn shift_tab_cycles_default_auto_plan() {
    let mut s = Script::with(app(true));
    assert_eq!(s.app.mode, ApprovalMode::Default);
    assert_eq!(set_mode(&shift_tab(&mut s)), [ApprovalMode::Auto]);
    assert_eq!(s.app.mode, ApprovalMode::Auto);
    assert_eq!(
        set_mode(&s.key(KeyCode::BackTab, KeyModifiers::NONE)),
        [ApprovalMode::Plan]
    );
    assert_eq!(set_mode(&shift_tab(&mut s)), [ApprovalMode::Default]);
    assert_eq!(s.app.hint, None);
    assert!(s.input().is_empty(), "the key edits nothing");
}

#[test]
fn without_a_sandbox_auto_is_skipped_and_the_first_time_says_why() {
    let mut s = Script::with(app(false));
    assert_eq!(set_mode(&shift_tab(&mut s)), [ApprovalMode::Plan]);
    assert_eq!(
        s.app.hint.as_deref(),
        Some("auto mode needs the sandbox: bwrap was not found")
    );
    assert_eq!(set_mode(&shift_tab(&mut s)), [ApprovalMode::Default]);
    assert_eq!(s.app.hint, None);
    assert_eq!(set_mode(&shift_tab(&mut s)), [ApprovalMode::Plan]);
    assert_eq!(s.app.hint, None, "said once");
}

#[test]
fn shift_tab_works_while_a_turn_runs_and_the_agents_word_leaves_a_notice() {
    let mut s = Script::with(app(true));
    s.agent(AgentEvent::TurnStarted { text: "go".into() });
    assert_eq!(set_mode(&shift_tab(&mut s)), [ApprovalMode::Auto]);
    s.agent(AgentEvent::ModeChanged {
        mode: ApprovalMode::Auto,
    });
    let last = s.app.transcript.cells.last().unwrap();
    match last {
        Cell::Notice(n) => assert!(n.text.starts_with("auto mode:"), "{}", n.text),
        other => panic!("{other:?}"),
    }
    // A resumed session's mode arrives the same way.
    s.agent(AgentEvent::ModeChanged {
        mode: ApprovalMode::Plan,
    });
    assert_eq!(s.app.mode, ApprovalMode::Plan);
}

#[test]
fn an_auto_approved_call_is_marked_in_its_cell() {
    let mut s = Script::with(app(true));
    s.agent(AgentEvent::TurnStarted { text: "go".into() });
    s.agent(AgentEvent::ToolCallStarted {
        id: "c1".into(),
        name: "bash".into(),
        args: serde_json::json!({"command": "cargo build"}),
    });
    let effects = s.agent(AgentEvent::AutoApproved {
        id: "c1".into(),
        name: "bash".into(),
        summary: "bash: cargo build".into(),
        reason: "no rule allows `cargo build`".into(),
        subagent: None,
    });
    assert!(effects.is_empty(), "no modal, no notification");
    assert!(s.app.approvals.queue.is_empty());
    let cell = s
        .app
        .transcript
        .cells
        .iter()
        .find_map(|c| match c {
            Cell::Tool(t) if t.id == "c1" => Some(t),
            _ => None,
        })
        .unwrap();
    assert_eq!(cell.note.as_deref(), Some(AUTO_APPROVED));
    assert_eq!(cell.status, ToolStatus::Running);
}

#[test]
fn a_bang_message_runs_a_command_and_is_queued_while_a_turn_runs() {
    let mut s = Script::with(app(true));
    let effects = s.send("!git status");
    assert_eq!(
        commands(&effects),
        [AgentCommand::RunCommand("git status".into())]
    );
    assert!(matches!(s.app.activity, Activity::Tool { .. }));
    s.agent(AgentEvent::UserCommandStarted {
        id: "user-1".into(),
        command: "git status".into(),
    });
    s.agent(AgentEvent::UserCommandFinished {
        id: "user-1".into(),
        command: "git status".into(),
        output: "clean".into(),
        outcome: ToolOutcome::Ok,
        duration: Duration::from_millis(30),
    });
    assert_eq!(s.app.activity, Activity::Idle);
    let cell = match s.app.transcript.cells.last().unwrap() {
        Cell::Tool(t) => t,
        other => panic!("{other:?}"),
    };
    assert_eq!(cell.note.as_deref(), Some(RUN_BY_YOU));
    assert_eq!(cell.key_arg, "git status");
    assert_eq!(cell.result, Some("clean".into()));
    assert_eq!(cell.status, ToolStatus::Done { approved: false });

    // During a turn: queued, and shown as such until it starts.
    s.agent(AgentEvent::TurnStarted { text: "go".into() });
    let effects = s.send("!ls");
    assert_eq!(commands(&effects), [AgentCommand::RunCommand("ls".into())]);
    assert_eq!(s.app.composer.queued, ["!ls"]);
    s.agent(AgentEvent::UserCommandStarted {
        id: "user-2".into(),
        command: "ls".into(),
    });
    assert!(s.app.composer.queued.is_empty());
    // A bare `!` is a message like any other.
    let effects = s.send("!");
    assert_eq!(commands(&effects), [AgentCommand::UserMessage("!".into())]);
}

#[test]
fn a_denied_command_shows_refused() {
    let mut s = Script::with(app(true));
    s.send("!rm -rf /");
    s.agent(AgentEvent::UserCommandStarted {
        id: "user-1".into(),
        command: "rm -rf /".into(),
    });
    s.agent(AgentEvent::UserCommandFinished {
        id: "user-1".into(),
        command: "rm -rf /".into(),
        output: "denied by the permission rules (rm); it did not run".into(),
        outcome: ToolOutcome::Denied,
        duration: Duration::ZERO,
    });
    match s.app.transcript.cells.last().unwrap() {
        Cell::Tool(t) => assert_eq!(t.status, ToolStatus::Refused),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_status_line_in_each_mode() {
    for (mode, name) in [
        (ApprovalMode::Default, "mode_default"),
        (ApprovalMode::Plan, "mode_plan"),
        (ApprovalMode::Auto, "mode_auto"),
    ] {
        let mut s = Script::with(app(true));
        s.app.mode = mode;
        let screen = snapshot(name, &s.app, 100, 8, s.now);
        let status = screen.lines().find(|l| l.contains("ready")).unwrap();
        match mode {
            ApprovalMode::Default => assert!(!status.contains("mode"), "{status}"),
            _ => assert!(
                status.contains(&format!("{mode} mode (Shift-Tab)")),
                "{status}"
            ),
        }
    }
}

#[test]
fn cells_of_auto_approved_and_users_commands() {
    let mut s = Script::with(app(true));
    s.send("!git status");
    s.agent(AgentEvent::UserCommandStarted {
        id: "user-1".into(),
        command: "git status".into(),
    });
    s.agent(AgentEvent::UserCommandFinished {
        id: "user-1".into(),
        command: "git status".into(),
        output: "On branch fix-tabs\nnothing to commit".into(),
        outcome: ToolOutcome::Ok,
        duration: Duration::from_millis(40),
    });
    s.agent(AgentEvent::TurnStarted {
        text: "build it".into(),
    });
    s.agent(AgentEvent::ToolCallStarted {
        id: "c1".into(),
        name: "bash".into(),
        args: serde_json::json!({"command": "cargo build"}),
    });
    s.agent(AgentEvent::AutoApproved {
        id: "c1".into(),
        name: "bash".into(),
        summary: "bash: cargo build".into(),
        reason: "no rule".into(),
        subagent: None,
    });
    s.agent(AgentEvent::ToolFinished {
        id: "c1".into(),
        name: "bash".into(),
        result: "Finished".into(),
        is_error: false,
        outcome: ToolOutcome::Ok,
        duration: Duration::from_millis(1200),
        stored: None,
    });
    s.app.mode = ApprovalMode::Auto;
    snapshot("mode_cells", &s.app, 80, 16, s.now);
}

#[test]
fn the_mode_command_shows_and_switches_the_mode() {
    let mut s = Script::with(app(false));
    assert!(set_mode(&s.send("/mode")).is_empty());
    let (_, text) = s.notices().pop().expect("a notice");
    assert!(
        text.starts_with("default mode: ") && text.contains("Shift+Tab"),
        "{text}"
    );
    assert_eq!(set_mode(&s.send("/mode PLAN")), [ApprovalMode::Plan]);
    assert_eq!(s.app.mode, ApprovalMode::Plan);
    // Without a working sandbox auto is not offered: the hint says why.
    assert!(set_mode(&s.send("/mode auto")).is_empty());
    assert_eq!(
        s.app.hint.as_deref(),
        Some("auto mode needs the sandbox: bwrap was not found")
    );
    assert!(set_mode(&s.send("/mode careful")).is_empty());
    assert_eq!(
        s.app.hint.as_deref(),
        Some("unknown mode \"careful\" (plan, default or auto)")
    );
    assert_eq!(s.app.mode, ApprovalMode::Plan);
    let mut s = Script::with(app(true));
    assert_eq!(set_mode(&s.send("/mode auto")), [ApprovalMode::Auto]);
}

/// A turn in plan mode: it starts, the plan streams in, the turn completes.
fn planned_turn(s: &mut Script, plan: &str) {
    s.agent(AgentEvent::TurnStarted {
        text: "plan the tab fix".into(),
    });
    s.agent(AgentEvent::TextDelta { text: plan.into() });
    s.agent(AgentEvent::AssistantMessage {
        text: plan.into(),
        refusal: false,
        finish_reason: Some("stop".into()),
    });
    s.agent(AgentEvent::TurnFinished {
        outcome: rein_core::agent::TurnOutcome::Completed,
    });
}

const PLAN: &str = "## Plan\n\n1. Split lines on tabs in `parse_line`.\n2. Add a test for tabs inside words.\n3. Run `cargo test`.";

fn messages(effects: &[Effect]) -> Vec<String> {
    commands(effects)
        .into_iter()
        .filter_map(|c| match c {
            AgentCommand::UserMessage(text) => Some(text.text),
            _ => None,
        })
        .collect()
}

/// Issue 28: a plan mode turn that ends with a plan offers it; `y` approves it in default
/// mode: the mode switches first, then the model is told to go ahead.
#[test]
fn a_plan_is_offered_and_approving_it_switches_the_mode_and_goes_ahead() {
    let mut s = Script::with(app(true));
    s.app.mode = ApprovalMode::Plan;
    planned_turn(&mut s, PLAN);
    let review = s.app.plan_review.as_ref().expect("the plan is offered");
    assert_eq!(review.plan, PLAN);
    // Keys that are no choice do nothing; a paste's tail approves nothing.
    assert!(commands(&s.plain(KeyCode::Enter)).is_empty());
    assert!(commands(&s.plain(KeyCode::Char('x'))).is_empty());
    assert!(s.app.plan_review.is_some());
    let effects = s.plain(KeyCode::Char('y'));
    assert!(s.app.plan_review.is_none());
    assert_eq!(
        commands(&effects),
        [
            AgentCommand::SetMode(ApprovalMode::Default),
            AgentCommand::UserMessage(rein::app::plan_review::APPROVED_MESSAGE.into()),
        ]
    );
    assert_eq!(s.app.mode, ApprovalMode::Default);
    assert!(s.app.busy(), "the approved plan's turn starts");
}

/// `a` approves it in auto mode, where the sandbox works; without one it says why and
/// the review stays.
#[test]
fn approving_in_auto_mode_needs_the_sandbox() {
    let mut s = Script::with(app(true));
    s.app.mode = ApprovalMode::Plan;
    planned_turn(&mut s, PLAN);
    let effects = s.plain(KeyCode::Char('a'));
    assert_eq!(set_mode(&effects), [ApprovalMode::Auto]);
    assert_eq!(messages(&effects).len(), 1);

    let mut s = Script::with(app(false));
    s.app.mode = ApprovalMode::Plan;
    planned_turn(&mut s, PLAN);
    let effects = s.plain(KeyCode::Char('a'));
    assert!(commands(&effects).is_empty());
    assert!(s.app.plan_review.is_some());
    assert_eq!(
        s.app.hint.as_deref(),
        Some("auto mode needs the sandbox: bwrap was not found")
    );
}

/// Keep planning: `n` (or Esc) closes the review and the mode stays plan; `e` takes what
/// to change and sends it, still in plan mode; Esc in the field goes back to the choices.
#[test]
fn keeping_on_planning_stays_in_plan_mode_and_sends_what_to_change() {
    let mut s = Script::with(app(true));
    s.app.mode = ApprovalMode::Plan;
    planned_turn(&mut s, PLAN);
    assert!(commands(&s.plain(KeyCode::Esc)).is_empty());
    assert!(s.app.plan_review.is_none());
    assert_eq!(s.app.mode, ApprovalMode::Plan);

    planned_turn(&mut s, PLAN);
    s.plain(KeyCode::Char('e'));
    s.type_text("also handle CRLF");
    // Esc goes back to the choices, with nothing sent; `e` again starts a new field.
    assert!(commands(&s.plain(KeyCode::Esc)).is_empty());
    assert!(s.app.plan_review.is_some());
    s.plain(KeyCode::Char('e'));
    // An empty answer sends nothing.
    assert!(commands(&s.plain(KeyCode::Enter)).is_empty());
    s.type_text("also handle CRLF");
    let effects = s.plain(KeyCode::Enter);
    assert_eq!(messages(&effects), ["also handle CRLF"]);
    assert!(set_mode(&effects).is_empty());
    assert!(s.app.plan_review.is_none());
    assert_eq!(s.app.mode, ApprovalMode::Plan);
    assert!(s.input().is_empty(), "the input box is untouched");
}

/// No review outside plan mode, after an interrupted turn, or for a turn without words.
#[test]
fn only_a_completed_plan_mode_turn_with_a_reply_offers_a_plan() {
    let mut s = Script::with(app(true));
    planned_turn(&mut s, PLAN);
    assert!(s.app.plan_review.is_none(), "default mode");
    s.app.mode = ApprovalMode::Plan;
    planned_turn(&mut s, "   ");
    assert!(s.app.plan_review.is_none(), "no words");
    s.agent(AgentEvent::TurnStarted { text: "x".into() });
    s.agent(AgentEvent::TextDelta { text: PLAN.into() });
    s.agent(AgentEvent::TurnFinished {
        outcome: rein_core::agent::TurnOutcome::Interrupted,
    });
    assert!(s.app.plan_review.is_none(), "interrupted");
}

#[test]
fn the_plan_review_snapshot() {
    let mut s = Script::with(app(true));
    s.app.mode = ApprovalMode::Plan;
    planned_turn(&mut s, PLAN);
    let screen = snapshot("plan_review_80x24", &s.app, 80, 24, s.now);
    assert!(screen.contains("The plan is ready"), "{screen}");
    assert!(screen.contains("Split lines on tabs"), "{screen}");
    assert!(
        screen.contains("y  approve, go on in default mode"),
        "{screen}"
    );
    assert!(
        screen.contains("a  approve, go on in auto mode"),
        "{screen}"
    );
    assert!(screen.contains("n  keep planning"), "{screen}");
    s.plain(KeyCode::Char('e'));
    s.type_text("and CRLF");
    let screen = snapshot("plan_review_feedback_80x24", &s.app, 80, 24, s.now);
    assert!(screen.contains("What to change?"), "{screen}");
    assert!(screen.contains("and CRLF"), "{screen}");
}

/// The plan is offered while the user types a message for later: their `a`s and `y`s go
/// on into the input box (an `a` would approve the plan in auto mode); after a pause, `y`
/// approves.
#[test]
fn typing_on_as_the_plan_opens_approves_nothing() {
    let mut s = Script::with(app(true));
    s.app.mode = ApprovalMode::Plan;
    s.agent(AgentEvent::TurnStarted {
        text: "plan the tab fix".into(),
    });
    for c in "stay".chars() {
        s.plain(KeyCode::Char(c));
        s.advance(Duration::from_millis(100));
    }
    s.agent(AgentEvent::TextDelta { text: PLAN.into() });
    s.agent(AgentEvent::AssistantMessage {
        text: PLAN.into(),
        refusal: false,
        finish_reason: Some("stop".into()),
    });
    s.agent(AgentEvent::TurnFinished {
        outcome: rein_core::agent::TurnOutcome::Completed,
    });
    assert!(s.app.plan_review.is_some());
    for c in " away".chars() {
        s.advance(Duration::from_millis(100));
        assert!(commands(&s.plain(KeyCode::Char(c))).is_empty(), "{c:?}");
    }
    assert!(s.app.plan_review.is_some());
    assert_eq!(s.input(), "stay away");
    assert_eq!(s.app.mode, ApprovalMode::Plan);
    s.advance(rein::app::approval::TYPING_PAUSE);
    let effects = s.plain(KeyCode::Char('y'));
    assert_eq!(set_mode(&effects), [ApprovalMode::Default]);
}
