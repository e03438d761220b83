//! The terminal around rein: the first frame while the window question hangs, a prompt on the
//! command line and how quitting says to resume, termination signals, a full redraw after a
//! reply scrolls, and background commands that end with rein.

use crate::support;

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use support::{Reply, ScriptedServer};

use super::{in_a_shell, pane, redrawn, rein_command, Tmux};

/// The input is on screen at once while the model's server hangs on the question about
/// its window, and a short message goes and is answered meanwhile. The question may take
/// five minutes here, the most it may (`client.window_timeout_secs`), so nothing races its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_input_shows_while_the_window_probe_hangs() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    support::write(
        &home.path().join("rein-home/config.toml"),
        "[client]\nwindow_timeout_secs = 300\n",
    );
    let server = ScriptedServer::start(vec![Reply::text("Answered before the window.")])
        .await
        .unwrap();
    server.hang_props();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        120,
        40,
    );
    let screen = tmux
        .wait_for("the dashboard", |s| s.contains("scripted-model"))
        .await;
    // Drawn while the question is open.
    assert!(screen.contains("window: asking the server…"), "{screen}");
    tmux.send("hello", &["Enter"]);
    let screen = tmux
        .wait_for("the reply", |s| s.contains("Answered before the window."))
        .await;
    assert!(screen.contains("window: asking the server…"), "{screen}");
    assert_eq!(server.probes(), 1);
}

/// A question about the window that gets no answer gives up after
/// `client.window_timeout_secs`, and the gauge shows the configured window.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_window_question_gives_up_to_the_configured_window() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    support::write(
        &home.path().join("rein-home/config.toml"),
        "[client]\nwindow_timeout_secs = 1\n",
    );
    let server = ScriptedServer::start(Vec::new()).await.unwrap();
    server.hang_props();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        120,
        40,
    );
    let screen = tmux
        .wait_for("the configured window", |s| s.contains("/128k"))
        .await;
    assert!(!screen.contains("asking the server"), "{screen}");
    assert_eq!(server.probes(), 1);
}

/// Issue 12, item 5: SIGTERM, SIGHUP and SIGQUIT end the dashboard as quitting does: the
/// terminal leaves the alternate screen and raw mode, no dead frame left behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn termination_signals_restore_the_terminal() {
    for signal in ["TERM", "HUP", "QUIT"] {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let server = ScriptedServer::start(vec![]).await.unwrap();
        let tmux = Tmux::start(
            &rein_command(home.path(), project.path(), &server.base_url()),
            100,
            30,
        );
        let _ = Command::new("tmux")
            .args(["set-option", "-t", &tmux.name, "remain-on-exit", "on"])
            .status();
        tmux.wait_for("the dashboard", |s| s.contains("scripted-model"))
            .await;
        assert_eq!(pane(&tmux, "#{alternate_on}"), "1", "the dashboard is up");
        let pid = pane(&tmux, "#{pane_pid}");
        let status = Command::new("kill")
            .args([format!("-{signal}"), pid])
            .status()
            .unwrap();
        assert!(status.success());
        let deadline = Instant::now() + support::GIVE_UP;
        while pane(&tmux, "#{pane_dead}") != "1" {
            assert!(
                Instant::now() < deadline,
                "rein did not exit on SIG{signal}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(
            pane(&tmux, "#{alternate_on}"),
            "0",
            "SIG{signal} left the alternate screen on:\n{}",
            tmux.screen()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_that_scrolls_leaves_the_screen_a_full_redraw_gives() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    // 150 numbered lines of a code block, three at a time with a pause, so that the
    // transcript scrolls over many frames (rein moves the rows in the terminal and writes
    // only the new ones).
    let mut steps = vec![support::Step::Data(support::chunk(
        json!({"role": "assistant", "content": "Here they are:\n\n```text\n"}),
        None,
    ))];
    for i in (1..=150).step_by(3) {
        let piece: String = (i..i + 3)
            .map(|n| format!("line {n:03} of the listing\n"))
            .collect();
        steps.push(support::Step::Data(support::chunk(
            json!({ "content": piece }),
            None,
        )));
        steps.push(support::Step::Sleep(Duration::from_millis(15)));
    }
    steps.push(support::Step::Data(support::chunk(
        json!({"content": "```\n\nDONE-MARK"}),
        Some("stop"),
    )));
    steps.push(support::Step::Done);
    let server = ScriptedServer::start(vec![Reply::sse(steps)])
        .await
        .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        120,
        40,
    );
    tmux.wait_for("the dashboard", |s| s.contains("scripted-model"))
        .await;
    tmux.send("list the lines", &["Enter"]);
    let shown = tmux
        .wait_for("the end of the reply", |s| {
            s.contains("DONE-MARK") && s.contains("ready")
        })
        .await;
    // The last lines, each once and in order, and the panes below in place.
    let numbers: Vec<u32> = shown
        .lines()
        .filter_map(|l| l.trim().strip_prefix("line ")?.get(..3)?.parse().ok())
        .collect();
    assert!(
        numbers.len() > 20,
        "the listing fills the transcript:\n{shown}"
    );
    assert_eq!(numbers.last(), Some(&150), "{shown}");
    assert!(
        numbers.windows(2).all(|w| w[1] == w[0] + 1),
        "in order:\n{shown}"
    );
    assert_eq!(
        redrawn(&tmux).await,
        shown,
        "the streamed screen is the drawn one"
    );

    // Paging up moves the rows the other way.
    tmux.send("", &["PPage"]);
    let paged = tmux
        .wait_for("the page above", |s| s.contains("more lines (End)"))
        .await;
    assert!(!paged.contains("line 150"), "{paged}");
    assert_eq!(
        redrawn(&tmux).await,
        paged,
        "the paged screen is the drawn one"
    );
    tmux.send("", &["C-c"]);
}

/// A background command the model starts: the status line counts it, `/bashes` lists it
/// with its last line and stops it, and quitting stops the one still running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_commands_are_counted_listed_stopped_and_end_with_rein() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    // Each sleeps a length of its own, to be found among the host's processes (inside the
    // sandbox `$$` is a pid of its own namespace).
    let start = |name: &str, secs: u32| {
        Reply::tool_calls(&[(
            "bash",
            &json!({
                "command": format!("echo {name} listening; exec sleep {secs}"),
                "run_in_background": true
            })
            .to_string(),
        )])
    };
    let server = ScriptedServer::start(vec![
        start("first", 3001),
        Reply::text("The first server runs."),
        start("second", 3002),
        Reply::text("The second server runs."),
    ])
    .await
    .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        120,
        40,
    );
    tmux.wait_for("the dashboard", |s| s.contains("scripted-model"))
        .await;
    tmux.send("start the server", &["Enter"]);
    // Judged like any command: `sleep` asks.
    tmux.wait_for("the approval modal", |s| s.contains("allow once"))
        .await;
    tmux.send("y", &[]);
    tmux.wait_for("the turn's end with one task running", |s| {
        s.contains("The first server runs.") && s.contains("● ready") && s.contains("1 bg")
    })
    .await;
    let alive = |secs: u32| {
        Command::new("pgrep")
            .args(["-f", &format!("^sleep {secs}$")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let first = 3001;
    assert!(alive(first));
    tmux.send("/bashes", &["Enter"]);
    tmux.wait_for("the list with the last line", |s| {
        s.contains("bash-1 running") && s.contains("first listening")
    })
    .await;
    tmux.send("/bashes kill bash-1", &["Enter"]);
    tmux.wait_for("the stop said and the count gone", |s| {
        s.contains("bash-1 was stopped") && !s.contains("1 bg")
    })
    .await;
    let deadline = Instant::now() + support::GIVE_UP;
    while alive(first) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!alive(first), "/bashes kill left it running");

    tmux.send("and another", &["Enter"]);
    tmux.wait_for("the approval modal", |s| s.contains("allow once"))
        .await;
    tmux.send("y", &[]);
    tmux.wait_for("the second running", |s| {
        s.contains("The second server runs.") && s.contains("● ready") && s.contains("1 bg")
    })
    .await;
    let second = 3002;
    assert!(alive(second));
    tmux.quit_with_ctrl_c().await;
    let deadline = Instant::now() + support::GIVE_UP;
    while alive(second) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        !alive(second),
        "a background command outlived the dashboard"
    );
}

/// Ctrl-C twice on an idle dashboard run [`in_a_shell`]: the terminal once rein has gone.
async fn quit_to_the_shell(tmux: &Tmux) -> String {
    tmux.send("", &["C-c"]);
    tmux.wait_for("the quit hint", |s| s.contains("again to quit"))
        .await;
    tmux.send("", &["C-c"]);
    tmux.wait_for("rein to quit", |s| s.contains("rein exited: 0"))
        .await
}

/// `rein "PROMPT"` opens the dashboard with the prompt sent; quitting prints how to resume
/// the session on the terminal rein leaves (naming the project, since tmux started rein
/// elsewhere). A session with nothing in it gets no such line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_on_the_command_line_is_sent_and_quitting_says_how_to_resume() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("The parser reads tokens one by one.")])
        .await
        .unwrap();
    let mut command = rein_command(home.path(), project.path(), &server.base_url());
    command.push("explain the parser".into());
    let tmux = Tmux::start(&in_a_shell(command), 120, 40);
    tmux.wait_for("the prompt and its answer", |s| {
        s.contains("explain the parser")
            && s.contains("The parser reads tokens one by one.")
            && s.contains("● ready")
    })
    .await;
    let first = server.requests()[0].to_string();
    assert!(first.contains("explain the parser"), "{first}");
    let screen = quit_to_the_shell(&tmux).await;
    let sessions: Vec<String> = std::fs::read_dir(home.path().join("rein-home/sessions"))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".jsonl").map(str::to_string)
        })
        .collect();
    let [id] = sessions.as_slice() else {
        panic!("one session expected: {sessions:?}")
    };
    let project_dir = project.path().canonicalize().unwrap();
    assert!(
        screen.contains(&format!(
            "Resume this session with: rein --resume {id} --cwd {}",
            project_dir.display()
        )),
        "{screen}"
    );
    drop(tmux);

    // Opened and left at once: nothing worth resuming, nothing said.
    let tmux = Tmux::start(
        &in_a_shell(rein_command(
            home.path(),
            project.path(),
            &server.base_url(),
        )),
        120,
        40,
    );
    tmux.wait_for("the dashboard", |s| s.contains("scripted-model"))
        .await;
    let screen = quit_to_the_shell(&tmux).await;
    assert!(!screen.contains("Resume this session"), "{screen}");
}
