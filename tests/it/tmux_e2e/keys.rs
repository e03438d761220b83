//! Keys a person presses: Shift-Tab and `!`, the keys known from other agents, the user's
//! keymap, the bell when a turn ends unfocused, a queued message, a paste that holds its own
//! end marker.

use crate::support;

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use support::{Reply, ScriptedServer};

use super::{rein_command, Tmux};

/// Issue 12, minor: pasted text that holds the end-of-paste marker and a carriage return
/// used to send the message there and then, and the rest became a second one. Now the
/// keys right behind a paste stay in the input box.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paste_holding_its_own_end_marker_does_not_send() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("Got both lines.")])
        .await
        .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        100,
        24,
    );
    tmux.wait_for("the dashboard", |s| s.contains("scripted-model"))
        .await;
    let buffer = home.path().join("paste.txt");
    std::fs::write(&buffer, "first pasted line\x1b[201~\rsecond pasted line").unwrap();
    let name = format!("{}-paste", tmux.name);
    let load = Command::new("tmux")
        .args(["load-buffer", "-b", &name])
        .arg(&buffer)
        .status()
        .unwrap();
    assert!(load.success());
    // -p: as a bracketed paste, the way a terminal pastes into an application that asks.
    let paste = Command::new("tmux")
        .args(["paste-buffer", "-p", "-d", "-b", &name, "-t", &tmux.name])
        .status()
        .unwrap();
    assert!(paste.success());
    let screen = tmux
        .wait_for("both lines in the input", |s| {
            s.contains("first pasted line") && s.contains("second pasted line")
        })
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(server.requests().is_empty(), "sent by the paste:\n{screen}");
    assert!(!tmux.screen().contains("working"), "{}", tmux.screen());
    // A real Enter, later, sends both lines as one message.
    tmux.send("", &["Enter"]);
    tmux.wait_for("the reply", |s| s.contains("Got both lines."))
        .await;
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let text = requests[0].to_string();
    assert!(
        text.contains("first pasted line\\nsecond pasted line"),
        "{text:.2000}"
    );
    tmux.send("", &["C-c"]);
}

/// Issue 14: the user's keymap is in force in the real binary: a new key works, the
/// footer and /help show the bindings in force, and a bad entry is a notice naming the
/// file, the mode and the key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_keymap_is_in_force_in_the_footer_and_help() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let rein_home = home.path().join("rein-home");
    std::fs::create_dir_all(&rein_home).unwrap();
    std::fs::write(
        rein_home.join("keymap.toml"),
        r#"
global = [
  { on = "f1", action = "none" },
  { on = "f5", action = "help", desc = "show the help" },
  { on = "hyper-q", action = "quit" },
]
composer = [{ on = "ctrl-e", action = "history_search" }]
"#,
    )
    .unwrap();
    let server = ScriptedServer::start(vec![]).await.unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        120,
        30,
    );
    let screen = tmux
        .wait_for("the dashboard", |s| s.contains("scripted-model"))
        .await;
    assert!(screen.contains("F5 show the help"), "the footer:\n{screen}");
    assert!(
        screen.contains("keymap.toml: mode global, key hyper-q: unknown key"),
        "{screen}"
    );
    tmux.send("", &["F5"]);
    // The help opens over the screen at its start: the commands.
    tmux.wait_for("the help", |s| {
        s.contains("Commands") && s.contains("╭ Help")
    })
    .await;
    // A row of the help, inside the box's borders: the keys, then what they do.
    let help_line = |s: &str, key: &str, desc: &str| {
        s.lines().any(|l| {
            l.split('│')
                .any(|part| part.trim_start().starts_with(key) && part.trim_end().ends_with(desc))
        })
    };
    // Page down to its end (the search's keys), keeping every screen on the way.
    let mut seen = tmux.screen();
    for _ in 0..20 {
        tmux.send("", &["NPage"]);
        tokio::time::sleep(Duration::from_millis(150)).await;
        seen.push_str(&tmux.screen());
        if seen.contains("older match") {
            break;
        }
    }
    assert!(seen.contains("older match"), "{seen}");
    assert!(
        help_line(&seen, "Ctrl-E", "search earlier inputs"),
        "{seen}"
    );
    assert!(help_line(&seen, "F5", "show the help"), "{seen}");
    assert!(!help_line(&seen, "F1", "help"), "{seen}");
    // The new binding runs: Ctrl-E opens the history search.
    tmux.send("", &["Escape"]);
    tmux.wait_for("the help closed", |s| !s.contains("╭ Help"))
        .await;
    tmux.send("", &["C-e"]);
    tmux.wait_for("the search", |s| s.contains("reverse-i-search"))
        .await;
    tmux.send("", &["Escape", "C-c"]);
}

/// Issue 14: a turn that ends while the terminal has lost the focus calls the user back
/// (the bell; tmux runs its `alert-bell` hook), and not while it has the focus or before
/// it ever reported (focus reports are fed in as the terminal sends them: ESC [ O, ESC [ I).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_that_ends_unfocused_rings_the_bell() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let rein_home = home.path().join("rein-home");
    std::fs::create_dir_all(&rein_home).unwrap();
    // Every turn counts as long, so the test need not wait.
    std::fs::write(
        rein_home.join("config.toml"),
        "[ui]\nnotify_after_secs = 0\n",
    )
    .unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text("First answer."),
        Reply::text("Second answer."),
        Reply::text("Third answer."),
    ])
    .await
    .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        100,
        30,
    );
    tmux.wait_for("the dashboard", |s| s.contains("scripted-model"))
        .await;
    let rang = home.path().join("rang");
    let status = Command::new("tmux")
        .args(["set-hook", "-t", &tmux.name, "alert-bell"])
        .arg(format!("run-shell 'touch {}'", rang.display()))
        .status()
        .unwrap();
    assert!(status.success());
    let focus = |gained: bool| {
        let status = Command::new("tmux")
            .args(["send-keys", "-t", &tmux.name, "-H", "1b", "5b"])
            .arg(if gained { "49" } else { "4f" })
            .status()
            .unwrap();
        assert!(status.success());
    };
    let settle = || tokio::time::sleep(Duration::from_millis(400));

    // The focus never reported: a turn's end does not ring.
    tmux.send("one", &["Enter"]);
    tmux.wait_for("the first reply", |s| s.contains("First answer."))
        .await;
    settle().await;
    assert!(!rang.exists(), "rang with the focus unknown");

    focus(false);
    tmux.send("two", &["Enter"]);
    tmux.wait_for("the second reply", |s| s.contains("Second answer."))
        .await;
    let deadline = Instant::now() + support::GIVE_UP;
    while !rang.exists() {
        assert!(Instant::now() < deadline, "no bell while unfocused");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    std::fs::remove_file(&rang).unwrap();
    focus(true);
    tmux.send("three", &["Enter"]);
    tmux.wait_for("the third reply", |s| s.contains("Third answer."))
        .await;
    settle().await;
    assert!(!rang.exists(), "rang while focused");
    // The focus reports were not typed into the input.
    let screen = tmux.screen();
    assert!(!screen.contains("[O") && !screen.contains("[I"), "{screen}");
    tmux.send("", &["C-c"]);
}

/// Issue 14: Shift+Tab switches the approval mode in the real binary (the status line says
/// it), and `!COMMAND` runs a command the user typed: its cell says "run by you", and its
/// output goes to the model with the next message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shift_tab_switches_to_plan_mode_and_a_bang_command_reaches_the_model() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("It printed from-me.")])
        .await
        .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        110,
        30,
    );
    tmux.wait_for("the dashboard", |s| s.contains("scripted-model"))
        .await;
    // default → auto → plan (auto is skipped where the sandbox does not work).
    for _ in 0..2 {
        if tmux.screen().contains("plan mode (Shift-Tab)") {
            break;
        }
        tmux.send("", &["BTab"]);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tmux.wait_for("plan mode in the status line", |s| {
        s.contains("plan mode (Shift-Tab)")
    })
    .await;
    tmux.send("!echo from-me", &["Enter"]);
    tmux.wait_for("the user's command", |s| {
        s.contains("run by you") && s.contains("from-me")
    })
    .await;
    assert!(
        server.requests().is_empty(),
        "a command of one's own asks no model"
    );
    tmux.send("what did it print?", &["Enter"]);
    tmux.wait_for("the reply", |s| s.contains("It printed from-me."))
        .await;
    let request = &server.requests()[0];
    let messages = request["messages"].as_array().unwrap();
    let last = messages[messages.len() - 1]["content"].as_str().unwrap();
    assert!(
        last.starts_with("I ran this command myself:")
            && last.contains("$ echo from-me\nfrom-me")
            && last.contains("what did it print?"),
        "{last}"
    );
    assert!(
        last.contains("approval mode: plan"),
        "the reminder says the mode: {last}"
    );
    tmux.send("", &["C-c"]);
}

/// The keys a Claude Code user types without thinking, in a real terminal: `\` then Enter
/// for a new line, a 400-line paste folded into one placeholder and sent whole, F1's help
/// over the screen, Ctrl-C's hint that goes by itself, and Ctrl-D on an empty input.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn familiar_keys_in_a_real_terminal() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text("Got two lines."),
        Reply::text("Read the whole log."),
    ])
    .await
    .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        100,
        30,
    );
    tmux.wait_for("the dashboard", |s| s.contains("scripted-model"))
        .await;
    tmux.send("first line \\", &["Enter"]);
    tmux.send("second line", &[]);
    tmux.wait_for("two lines in the input", |s| {
        s.contains("│ first line ") && s.contains("│ second line")
    })
    .await;
    assert!(server.requests().is_empty(), "the backslash's Enter sent");
    tmux.send("", &["Enter"]);
    tmux.wait_for("the reply", |s| s.contains("Got two lines."))
        .await;
    let first = server.requests()[0].to_string();
    assert!(first.contains("first line \\nsecond line"), "{first:.2000}");

    let log: Vec<String> = (1..=400).map(|i| format!("row {i} of the log")).collect();
    tmux.paste(home.path(), &log.join("\n"));
    let screen = tmux
        .wait_for("the placeholder", |s| {
            s.contains("[Pasted text #1 +400 lines]")
        })
        .await;
    assert!(!screen.contains("row 2 of the log"), "{screen}");
    // Keys right behind a paste are taken as the rest of it (an Enter there is a new
    // line): typing starts a moment later, as a person's would.
    tokio::time::sleep(Duration::from_millis(300)).await;
    tmux.send(" what failed?", &["Enter"]);
    let screen = tmux
        .wait_for("the second reply", |s| s.contains("Read the whole log."))
        .await;
    assert!(
        screen.contains("› [Pasted text #1 +400 lines] what failed?"),
        "folded in the transcript too:\n{screen}"
    );
    let second = server.requests()[1].to_string();
    assert!(
        second.contains("row 1 of the log\\nrow 2 of the log")
            && second.contains("row 400 of the log what failed?"),
        "{second:.500}"
    );

    tmux.send("", &["F1"]);
    tmux.wait_for("the help", |s| s.contains("Help") && s.contains("Commands"))
        .await;
    tmux.send("", &["Escape"]);
    tmux.wait_for("the help closed", |s| !s.contains("Commands"))
        .await;

    // One Ctrl-C on the empty input only warns, and the warning goes by itself.
    tmux.send("", &["C-c"]);
    tmux.wait_for("the hint", |s| s.contains("press Ctrl-C again to quit"))
        .await;
    tmux.wait_for("the hint gone", |s| !s.contains("press Ctrl-C again"))
        .await;
    assert!(tmux.alive());
    tmux.send("", &["C-d"]);
    let deadline = Instant::now() + support::GIVE_UP;
    while tmux.alive() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!tmux.alive(), "Ctrl-D on an empty input did not quit");
}

/// A message typed while a command runs: listed above the input, then taken by the model
/// with the command's result in the same turn, and shown in the transcript.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_message_shows_above_the_input_and_goes_with_the_result() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(
            "bash",
            &json!({"command": "sleep 3; echo slow done"}).to_string(),
        )]),
        Reply::text("Done, and I saw your note."),
    ])
    .await
    .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        100,
        30,
    );
    tmux.wait_for("the dashboard", |s| s.contains("scripted-model"))
        .await;
    tmux.send("run the slow one", &["Enter"]);
    tmux.wait_for("the approval modal", |s| s.contains("allow once"))
        .await;
    tmux.send("y", &[]);
    tmux.wait_for("the command running", |s| s.contains("running bash"))
        .await;
    tmux.send("also mind the note", &["Enter"]);
    let screen = tmux
        .wait_for("the queue above the input", |s| {
            s.contains("↳ also mind the note") && s.contains("1 message queued")
        })
        .await;
    assert!(screen.contains("Esc interrupt"), "{screen}");
    let screen = tmux
        .wait_for("the reply and the turn's end", |s| {
            s.contains("Done, and I saw your note.") && s.contains("● ready")
        })
        .await;
    assert!(screen.contains("› also mind the note"), "{screen}");
    assert!(!screen.contains("↳ also mind the note"), "{screen}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "one turn");
    let messages = requests[1]["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "tool");
    let text = last["content"].as_str().unwrap();
    assert!(
        text.contains("slow done") && text.ends_with("also mind the note"),
        "{text}"
    );
    tmux.quit_with_ctrl_c().await;
}
