//! The slash list and custom commands: opening, filtering, moving, completing and closing
//! the list; a custom command's prompt, a project's command hiding the user's, /help, and
//! commands read again after /clear.

use crate::support;

use crossterm::event::KeyCode;
use rein::app::state::Cell;
use rein::app::{AppEvent, Effect};
use rein_core::agent::TurnOutcome;
use support::app::Script;
use support::app::{app, sent};

use super::{is_interrupt, is_quit, Steps};

// ---- the / completion list and custom commands ------------------------------------------

/// Custom commands from files in a temporary project (`name.md` → text).
fn custom_commands(
    files: &[(&str, &str)],
) -> (tempfile::TempDir, rein_core::custom_commands::CommandSet) {
    let dir = tempfile::tempdir().unwrap();
    let commands = dir.path().join(".agents/commands");
    std::fs::create_dir_all(&commands).unwrap();
    for (name, text) in files {
        std::fs::write(commands.join(name), text).unwrap();
    }
    let set = rein_core::custom_commands::CommandSet::discover(
        None,
        dir.path(),
        &rein::app::commands::is_builtin,
    );
    assert!(set.notices.is_empty(), "{:?}", set.notices);
    (dir, set)
}

/// An app with `/fix-issue` and `/review` as custom commands.
fn app_with_commands() -> (tempfile::TempDir, Script) {
    let (dir, set) = custom_commands(&[
        (
            "fix-issue.md",
            "---\ndescription: Fix a GitHub issue\nargument-hint: <issue-number>\n---\nFix issue #$1 ($ARGUMENTS).\n",
        ),
        ("review.md", "Review the staged diff.\n"),
    ]);
    let mut app = app();
    app.custom_commands = set;
    (dir, Script::with(app))
}

fn menu_names(s: &Script) -> Vec<String> {
    s.app.slash_matches().into_iter().map(|e| e.name).collect()
}

fn selected_name(s: &Script) -> String {
    let list = s.app.slash_matches();
    list[s.app.slash_selected(list.len())].name.clone()
}

#[test]
fn typing_a_slash_opens_the_list_of_built_in_then_custom_commands() {
    let (_dir, mut s) = app_with_commands();
    assert_eq!(rein::app::Layer::top(&s.app), rein::app::Layer::Main);
    s.type_text("/");
    assert_eq!(rein::app::Layer::top(&s.app), rein::app::Layer::Slash);
    let names = menu_names(&s);
    assert_eq!(names.first().map(String::as_str), Some("/help"));
    assert_eq!(
        &names[names.len() - 2..],
        ["/fix-issue", "/review"],
        "custom ones last"
    );
    assert_eq!(selected_name(&s), "/help");
}

#[test]
fn the_list_filters_as_the_user_types_prefix_matches_first() {
    let (_dir, mut s) = app_with_commands();
    s.type_text("/co");
    assert_eq!(
        menu_names(&s),
        ["/context", "/compact", "/cost"],
        "the table's order"
    );
    s.type_text("n");
    assert_eq!(menu_names(&s), ["/context"]);
    for _ in 0..3 {
        s.plain(KeyCode::Backspace);
    }
    assert_eq!(s.input(), "/");
    s.type_text("re");
    assert_eq!(menu_names(&s), ["/resume", "/rewind", "/rename", "/review"]);
    // Names that hold the text, then names that hold its letters in order.
    composer_set(&mut s, "/ss");
    assert_eq!(menu_names(&s), ["/fix-issue", "/skills", "/bashes"]);
    composer_set(&mut s, "/iss");
    assert_eq!(menu_names(&s), ["/fix-issue"]);
    composer_set(&mut s, "/xt");
    assert_eq!(menu_names(&s), ["/context"]);
}

#[test]
fn down_up_and_ctrl_n_ctrl_p_move_the_selection_and_wrap() {
    let (_dir, mut s) = app_with_commands();
    s.type_text("/co");
    assert_eq!(selected_name(&s), "/context");
    assert!(s.plain(KeyCode::Down).is_empty());
    assert_eq!(selected_name(&s), "/compact");
    s.ctrl('n');
    assert_eq!(selected_name(&s), "/cost");
    s.plain(KeyCode::Down);
    assert_eq!(selected_name(&s), "/context", "wraps to the first");
    s.plain(KeyCode::Up);
    assert_eq!(selected_name(&s), "/cost", "wraps to the last");
    s.ctrl('p');
    assert_eq!(selected_name(&s), "/compact");
    assert!(s.app.composer.history_pos.is_none(), "Up did not recall");
    assert_eq!(s.input(), "/co", "the text is unchanged");
    // Another letter: the selection starts again at the first match.
    s.type_text("s");
    assert_eq!(selected_name(&s), "/cost");
}

#[test]
fn tab_completes_the_selected_name_and_a_space_and_the_list_closes() {
    let (_dir, mut s) = app_with_commands();
    s.type_text("/co");
    assert!(s.plain(KeyCode::Tab).is_empty());
    assert_eq!(s.input(), "/context ");
    assert_eq!(s.app.composer.textarea.cursor(), (0, 9));
    assert_eq!(rein::app::Layer::top(&s.app), rein::app::Layer::Main);
    // The text after the word stays.
    composer_set(&mut s, "/fi 42");
    s.app
        .composer
        .textarea
        .move_cursor(tui_textarea::CursorMove::Jump(0, 3));
    assert_eq!(menu_names(&s), ["/fix-issue"]);
    s.plain(KeyCode::Tab);
    assert_eq!(s.input(), "/fix-issue 42");
}

fn composer_set(s: &mut Script, text: &str) {
    rein::app::composer::clear(&mut s.app.composer.textarea);
    s.app.composer.textarea.insert_str(text);
}

#[test]
fn enter_completes_a_partial_name_then_runs_it() {
    let (_dir, mut s) = app_with_commands();
    s.type_text("/cont");
    assert!(s.plain(KeyCode::Enter).is_empty());
    assert_eq!(s.input(), "/context ");
    assert!(!s.app.context_open, "not run yet");
    assert!(s.plain(KeyCode::Enter).is_empty());
    assert!(s.app.context_open, "the second Enter runs it");
    assert_eq!(s.input(), "");
}

#[test]
fn enter_runs_a_whole_name_at_once() {
    let (_dir, mut s) = app_with_commands();
    s.type_text("/todos");
    assert_eq!(rein::app::Layer::top(&s.app), rein::app::Layer::Slash);
    let shown = s.app.show_todos;
    s.plain(KeyCode::Enter);
    assert_eq!(s.app.show_todos, !shown);
    assert_eq!(s.input(), "");
    // An alias no entry shows (/exit) closes the list and is still a command.
    s.type_text("/exit");
    assert!(menu_names(&s).is_empty());
    assert!(is_quit(&s.plain(KeyCode::Enter)));
}

#[test]
fn esc_closes_the_list_keeps_the_text_and_does_not_interrupt() {
    let (_dir, mut s) = app_with_commands();
    s.turn("working");
    s.type_text("/rev");
    assert_eq!(rein::app::Layer::top(&s.app), rein::app::Layer::Slash);
    let effects = s.plain(KeyCode::Esc);
    assert!(!is_interrupt(&effects), "{effects:?}");
    assert_eq!(s.input(), "/rev");
    assert_eq!(rein::app::Layer::top(&s.app), rein::app::Layer::Main);
    // Closed, Esc is the main screen's again; typing opens the list anew.
    assert!(is_interrupt(&s.plain(KeyCode::Esc)));
    s.type_text("i");
    assert_eq!(menu_names(&s), ["/review"]);
}

#[test]
fn the_list_closes_when_the_text_no_longer_starts_a_command() {
    let (_dir, mut s) = app_with_commands();
    s.type_text("/review");
    assert!(!menu_names(&s).is_empty());
    s.type_text(" ");
    assert!(menu_names(&s).is_empty(), "a space after the name");
    composer_set(&mut s, "");
    s.type_text("/");
    assert!(!menu_names(&s).is_empty());
    s.plain(KeyCode::Backspace);
    assert!(menu_names(&s).is_empty(), "the slash deleted");
    s.type_text("/etc/hosts");
    assert!(menu_names(&s).is_empty(), "no command looks like a path");
    composer_set(&mut s, "see /help");
    assert!(menu_names(&s).is_empty(), "not at the start");
}

#[test]
fn enter_in_the_tail_of_a_paste_does_not_run_a_command() {
    let (_dir, mut s) = app_with_commands();
    s.at(AppEvent::Paste("/review".into()));
    let effects = s.plain(KeyCode::Enter);
    assert!(effects.is_empty(), "{effects:?}");
    assert_eq!(s.input_lines(), ["/review", ""]);
}

#[test]
fn a_custom_command_sends_its_prompt_and_the_transcript_shows_what_was_typed() {
    let (_dir, mut s) = app_with_commands();
    s.type_text("/fix-issue 123 \"the parser\"");
    let effects = s.plain(KeyCode::Enter);
    let expanded = "Fix issue #123 (123 \"the parser\").";
    assert_eq!(sent(&effects), [expanded]);
    assert_eq!(
        s.app.composer.history.last().map(String::as_str),
        Some("/fix-issue 123 \"the parser\""),
        "the history keeps what was typed"
    );
    s.turn(expanded);
    match s.cells().last() {
        Some(Cell::User(u)) => {
            assert_eq!(u.text, "/fix-issue 123 \"the parser\"");
            assert_eq!(
                u.expanded_from.as_deref(),
                Some(".agents/commands/fix-issue.md")
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(s.app.composer.sent_commands.is_empty());
    // An ordinary message is shown as sent.
    s.end_turn(TurnOutcome::Completed);
    let effects = s.send("hello");
    assert_eq!(sent(&effects), ["hello"]);
    s.turn("hello");
    assert!(matches!(s.cells().last(), Some(Cell::User(u)) if u.expanded_from.is_none()));
}

/// Issue 41: a project's command that hides the user's own of the same name says so as it
/// runs (a repository, or a model that wrote into it, could otherwise answer the name the
/// user trusts with a prompt of its own); one that hides nothing says nothing.
#[test]
fn a_project_command_that_hides_the_users_own_says_so_when_it_runs() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    for (dir, text) in [
        (home.path().join(".claude/commands"), "my own review"),
        (
            project.path().join(".claude/commands"),
            "the project's review",
        ),
    ] {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("review.md"), text).unwrap();
    }
    std::fs::write(project.path().join(".claude/commands/lint.md"), "lint it").unwrap();
    let mut app = app();
    app.custom_commands = rein_core::custom_commands::CommandSet::discover(
        Some(home.path()),
        project.path(),
        &rein::app::commands::is_builtin,
    );
    let mut s = Script::with(app);
    let effects = s.send("/review");
    assert_eq!(sent(&effects), ["the project's review"]);
    let (_, text) = s.notices().pop().expect("a notice");
    assert_eq!(
        text,
        "/review runs the project's .claude/commands/review.md, not your own \
         ~/.claude/commands/review.md, which it shadows"
    );
    s.turn("the project's review");
    s.end_turn(TurnOutcome::Completed);
    let before = s.notices().len();
    let effects = s.send("/lint");
    assert_eq!(sent(&effects), ["lint it"]);
    assert_eq!(s.notices().len(), before, "nothing hidden, nothing said");
}

#[test]
fn help_lists_the_custom_commands_with_their_hints_and_files() {
    let (_dir, mut s) = app_with_commands();
    s.plain(KeyCode::F(1));
    let text = s.app.help.as_ref().expect("help").lines.join("\n") + "\n";
    assert!(text.contains("Custom commands\n"), "{text}");
    assert!(
        text.contains(
            "  /fix-issue <issue-number>  Fix a GitHub issue  (project: .agents/commands/fix-issue.md)\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "  /review                    Review the staged diff.  (project: .agents/commands/review.md)\n"
        ),
        "{text}"
    );
    assert!(text.contains("Command completion (type /)"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("Tab ") && l.ends_with(" complete")),
        "{text}"
    );
}

/// A name shaped like a custom command's (`/word-with-hyphens`, `/ns:name`) that no file
/// defines is refused like any unknown command: a hint, nothing sent; a defined one still
/// expands, and a path stays a message.
#[test]
fn an_unknown_hyphenated_command_is_refused_not_sent() {
    let (_dir, mut s) = app_with_commands();
    for typed in ["/fix-issues 12", "/frontend:test"] {
        let effects = s.send(typed);
        assert!(
            effects.is_empty(),
            "{typed} never reaches the model: {effects:?}"
        );
        let name = typed.split_whitespace().next().unwrap();
        assert_eq!(
            s.app.hint.as_deref(),
            Some(format!("unknown command {name}; /help lists them").as_str())
        );
    }
    let effects = s.send("/fix-issue 12");
    assert_eq!(sent(&effects), ["Fix issue #12 (12)."]);
    s.end_turn(TurnOutcome::Completed);
    let effects = s.send("/usr/local-bin is missing");
    assert_eq!(sent(&effects), ["/usr/local-bin is missing"]);
}

/// Where `.agents/commands/x.md` and Claude Code's `.claude/commands/x.md` are both there,
/// `/help` names the one in force and the one it hides.
#[test]
fn help_names_the_claude_command_a_project_command_hides() {
    let dir = tempfile::tempdir().unwrap();
    for (folder, text) in [
        (".claude/commands", "claude's review"),
        (".agents/commands", "rein's review"),
    ] {
        std::fs::create_dir_all(dir.path().join(folder)).unwrap();
        std::fs::write(dir.path().join(folder).join("review.md"), text).unwrap();
    }
    let set = rein_core::custom_commands::CommandSet::discover(
        None,
        dir.path(),
        &rein::app::commands::is_builtin,
    );
    let mut app = app();
    app.custom_commands = set;
    let mut s = Script::with(app);
    s.plain(KeyCode::F(1));
    let help = s.app.help.as_ref().expect("the help overlay");
    assert!(
        help.lines.iter().any(|l| l
            == "  /review  rein's review  (project: .agents/commands/review.md; hides .claude/commands/review.md)"),
        "{:#?}",
        help.lines
    );
}

#[test]
fn custom_commands_read_again_after_clear_replace_the_old_ones() {
    let (_dir, mut s) = app_with_commands();
    let effects = s.send("/clear");
    assert!(
        effects.iter().any(|e| matches!(e, Effect::ReloadCommands)),
        "{effects:?}"
    );
    let dir = tempfile::tempdir().unwrap();
    let commands = dir.path().join(".agents/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(commands.join("deploy.md"), "Deploy it.").unwrap();
    std::fs::write(commands.join("Bad.md"), "x").unwrap();
    let set = rein_core::custom_commands::CommandSet::discover(
        None,
        dir.path(),
        &rein::app::commands::is_builtin,
    );
    assert!(s.at(AppEvent::CommandsLoaded(set)).is_empty());
    s.type_text("/");
    let names = menu_names(&s);
    assert!(names.contains(&"/deploy".to_string()), "{names:?}");
    assert!(!names.contains(&"/review".to_string()), "{names:?}");
    let (_, notice) = s.notices().pop().expect("the skipped file's notice");
    assert!(
        notice.starts_with("command .agents/commands/Bad.md skipped: the name \"Bad\""),
        "{notice}"
    );
}
