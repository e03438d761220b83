//! The dashboard as a person uses it: the real binary in a real terminal (tmux), against the
//! scripted model server. Keys go in with `send-keys`, the screen comes back with
//! `capture-pane`. `.ci/run` installs tmux.

use crate::support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use support::{Reply, ScriptedServer};

/// A tmux session running one command; killed on drop.
struct Tmux {
    name: String,
    /// No real model runs beside a session (`support::machine`).
    _machine: support::machine::Share,
}

impl Tmux {
    fn start(command: &[String], width: u16, height: u16) -> Tmux {
        let machine = support::machine::share();
        // Tests start sessions in parallel, and the first ones race to start the tmux
        // server ("server exited unexpectedly"): a failed start is tried again, under a
        // new name.
        let mut last_error = String::new();
        for attempt in 0..5 {
            let name = format!(
                "rein-e2e-{}-{}-{attempt}",
                std::process::id(),
                rand_suffix()
            );
            let out = Command::new("tmux")
                .args(["new-session", "-d", "-s", &name, "-x"])
                .arg(width.to_string())
                .arg("-y")
                .arg(height.to_string())
                .arg("--")
                .args(command)
                .output()
                .expect("tmux runs (install it: apt install tmux)");
            if out.status.success() {
                return Tmux {
                    name,
                    _machine: machine,
                };
            }
            last_error = String::from_utf8_lossy(&out.stderr).into_owned();
            std::thread::sleep(Duration::from_millis(100 * (attempt + 1)));
        }
        panic!("tmux new-session failed: {last_error}");
    }

    fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["capture-pane", "-p", "-t", &self.name])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Type text literally, then press the named keys (tmux key names: Enter, C-c, ...).
    fn send(&self, text: &str, keys: &[&str]) {
        if !text.is_empty() {
            let status = Command::new("tmux")
                .args(["send-keys", "-t", &self.name, "-l", text])
                .status()
                .expect("tmux send-keys");
            assert!(status.success());
        }
        for key in keys {
            let status = Command::new("tmux")
                .args(["send-keys", "-t", &self.name, key])
                .status()
                .expect("tmux send-keys");
            assert!(status.success());
        }
    }

    /// Wait until the screen satisfies `check`; fail with the screen otherwise.
    async fn wait_for(&self, what: &str, check: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let screen = self.screen();
            if check(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; the screen:\n{screen}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Ctrl-C twice on an idle dashboard with an empty input (the first only says how to
    /// quit): rein must quit within 5 s.
    async fn quit_with_ctrl_c(&self) {
        self.send("", &["C-c"]);
        self.wait_for("the hint of the first Ctrl-C", |s| {
            s.contains("press Ctrl-C again to quit")
        })
        .await;
        assert!(self.alive(), "one Ctrl-C quit");
        self.send("", &["C-c"]);
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.alive() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(!self.alive(), "rein did not quit on Ctrl-C");
    }

    /// Paste `text` as a terminal pastes into an application that asks for bracketed
    /// pastes (tmux's `paste-buffer -p`).
    fn paste(&self, dir: &Path, text: &str) {
        let buffer = dir.join("paste.txt");
        std::fs::write(&buffer, text).unwrap();
        let name = format!("{}-paste", self.name);
        let load = Command::new("tmux")
            .args(["load-buffer", "-b", &name])
            .arg(&buffer)
            .status()
            .unwrap();
        assert!(load.success());
        let paste = Command::new("tmux")
            .args(["paste-buffer", "-p", "-d", "-b", &name, "-t", &self.name])
            .status()
            .unwrap();
        assert!(paste.success());
    }

    fn alive(&self) -> bool {
        Command::new("tmux")
            .args(["has-session", "-t", &self.name])
            .stderr(std::process::Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.name])
            .status();
    }
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() % 1_000_000_000)
        .unwrap_or(0)
}

fn rein_command(home: &Path, project: &Path, base_url: &str) -> Vec<String> {
    vec![
        "env".into(),
        "-i".into(),
        format!("PATH={}", std::env::var("PATH").unwrap_or_default()),
        format!("HOME={}", home.display()),
        format!("REIN_HOME={}", home.join("rein-home").display()),
        "TERM=xterm-256color".into(),
        "LANG=C.UTF-8".into(),
        env!("CARGO_BIN_EXE_rein").into(),
        "--base-url".into(),
        base_url.into(),
        "--model".into(),
        "scripted-model".into(),
        "--cwd".into(),
        project.display().to_string(),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_a_command_from_the_keyboard() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text_then_tool_calls(
            "I will create the file.",
            &[(
                "bash",
                &json!({"command": "touch approved.txt"}).to_string(),
            )],
        ),
        Reply::text("Created **approved.txt**."),
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
    tmux.send("please create approved.txt", &["Enter"]);
    let screen = tmux
        .wait_for("the approval modal", |s| {
            s.contains("touch approved.txt") && s.contains("allow once")
        })
        .await;
    assert!(
        !project.path().join("approved.txt").exists(),
        "not before approval:\n{screen}"
    );
    tmux.send("y", &[]);
    // The turn over (its last checkpoint recorded): the status line says ready.
    tmux.wait_for("the final reply and the turn's end", |s| {
        s.contains("Created approved.txt") && s.contains("● ready")
    })
    .await;
    assert!(project.path().join("approved.txt").exists());
    let screen = tmux.screen();
    assert!(screen.contains("please create approved.txt"), "{screen}");
    // Ctrl-C when idle with an empty input quits and restores the terminal.
    tmux.quit_with_ctrl_c().await;
}

/// The input is on screen at once while the model's server hangs on the question about
/// its window, and a short message goes and is answered meanwhile. The question may take
/// ten minutes here (`client.window_timeout_secs`), so nothing races its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_input_shows_while_the_window_probe_hangs() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    support::write(
        &home.path().join("rein-home/config.toml"),
        "[client]\nwindow_timeout_secs = 600\n",
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
    let started = Instant::now();
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
    // It gave up, not sooner than it was told to.
    assert!(started.elapsed() >= Duration::from_secs(1));
}

/// One headless turn (`rein -p PROMPT`) recorded as a session of `project`.
async fn record_headless(home: &Path, project: &Path, server: &ScriptedServer, prompt: &str) {
    let mut headless = rein_command(home, project, &server.base_url());
    headless.extend(["-p".into(), prompt.into()]);
    let out = tokio::task::spawn_blocking(move || {
        Command::new(&headless[0])
            .args(&headless[1..])
            .output()
            .expect("rein -p runs")
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "rein -p failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_a_headless_session_from_the_picker() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("The tokenizer splits on **spaces**.")])
        .await
        .unwrap();
    // Record a session headlessly.
    record_headless(
        home.path(),
        project.path(),
        &server,
        "explain the tokenizer please",
    )
    .await;

    // `--resume` without an id opens the dashboard with the picker.
    let mut command = rein_command(home.path(), project.path(), &server.base_url());
    command.push("--resume".into());
    let tmux = Tmux::start(&command, 100, 30);
    let screen = tmux
        .wait_for("the picker", |s| s.contains("Resume a session (1)"))
        .await;
    assert!(screen.contains("explain the tokenizer please"), "{screen}");
    assert!(
        !screen.contains("The tokenizer splits"),
        "not resumed yet:\n{screen}"
    );
    tmux.send("tokeni", &[]);
    tmux.wait_for("the filter", |s| s.contains("filter tokeni"))
        .await;
    tmux.send("", &["Enter"]);
    let screen = tmux
        .wait_for("the old transcript", |s| {
            s.contains("The tokenizer splits on spaces.") && !s.contains("Resume a session")
        })
        .await;
    assert!(screen.contains("continuing session"), "{screen}");
    tmux.send("", &["C-c"]);
}

/// Issue 16, item 4: a resumed session keeps only the head of a long result; Ctrl-O reads
/// the rest back from the session file, and folding it again lets it go.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_long_result_expands_from_the_session_file() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let rows: String = (1..=400)
        .map(|i| format!("row {i:03} of the long file\n"))
        .collect();
    std::fs::write(project.path().join("long.txt"), rows).unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("read_file", r#"{"path":"long.txt"}"#)]),
        Reply::text("Read all of it."),
    ])
    .await
    .unwrap();
    record_headless(home.path(), project.path(), &server, "read long.txt please").await;

    let mut command = rein_command(home.path(), project.path(), &server.base_url());
    command.push("--continue".into());
    let tmux = Tmux::start(&command, 100, 30);
    let screen = tmux
        .wait_for("the folded result", |s| {
            s.contains("more lines (Ctrl-O)") && s.contains("Read all of it.")
        })
        .await;
    assert!(screen.contains("row 001"), "{screen}");
    assert!(!screen.contains("row 400"), "folded:\n{screen}");
    tmux.send("", &["C-o"]);
    let screen = tmux
        .wait_for("the whole result", |s| {
            s.contains("row 400 of the long file") && !s.contains("more lines (Ctrl-O)")
        })
        .await;
    assert!(screen.contains("Read all of it."), "{screen}");
    tmux.send("", &["C-o"]);
    tmux.wait_for("folded again", |s| {
        s.contains("more lines (Ctrl-O)") && !s.contains("row 400")
    })
    .await;
    tmux.send("", &["C-c"]);
}

/// Issue 12, item 2: the picker marks a session another rein has open, and choosing it
/// goes on in a copy instead of writing into the same file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_picker_marks_an_open_session_and_resumes_a_copy() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text("The parser is **recursive descent**."),
        Reply::sse(vec![support::Step::Sleep(Duration::from_secs(60))]),
        Reply::text("Answered in the copy."),
    ])
    .await
    .unwrap();
    let headless = |args: &[&str]| {
        let mut command = rein_command(home.path(), project.path(), &server.base_url());
        command.extend(args.iter().map(|a| a.to_string()));
        let mut cmd = Command::new(&command[0]);
        cmd.args(&command[1..])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        cmd
    };
    let status = headless(&["-p", "explain the parser"]).status().unwrap();
    assert!(status.success());
    let mut holder = headless(&["-p", "keep going", "--continue"])
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.requests().len() < 2 {
        assert!(
            Instant::now() < deadline,
            "the holder never asked the model"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let mut command = rein_command(home.path(), project.path(), &server.base_url());
    command.push("--resume".into());
    let tmux = Tmux::start(&command, 110, 30);
    let mark = format!("(open in rein pid {})", holder.id());
    let screen = tmux
        .wait_for("the picker", |s| s.contains("Resume a session (1)"))
        .await;
    assert!(screen.contains("explain the parser"), "{screen}");
    assert!(screen.contains(&mark), "{screen}");
    tmux.send("", &["Enter"]);
    let screen = tmux
        .wait_for("the copy", |s| s.contains("so this is a copy of it"))
        .await;
    assert!(
        screen.contains("The parser is recursive descent."),
        "{screen}"
    );
    tmux.send("and the lexer?", &["Enter"]);
    tmux.wait_for("the answer", |s| s.contains("Answered in the copy."))
        .await;
    // The original and the copy (the dashboard's own fresh session stays empty).
    let sessions: Vec<_> = rein_core::session::list(&home.path().join("rein-home"))
        .into_iter()
        .filter(|s| s.messages != rein_core::session::MessageCount::Exact(0))
        .collect();
    assert_eq!(sessions.len(), 2, "{sessions:?}");
    let copy = sessions
        .iter()
        .find(|s| s.title.as_deref() == Some("explain the parser (fork)"))
        .expect("the copy is listed");
    assert!(copy.open.is_some(), "the dashboard holds the copy");
    let original = sessions.iter().find(|s| s.id != copy.id).unwrap();
    assert_eq!(
        original.open.and_then(|h| h.pid),
        Some(holder.id()),
        "the holder still has the original"
    );
    tmux.send("", &["C-c"]);
    let _ = holder.kill();
    let _ = holder.wait();
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_and_compact_from_the_dashboard() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        // No usage: every count stays rein's estimate.
        Reply::text("The parser lives in **src/parse.rs**.").without_usage(),
        // The handoff note `/compact` asks for.
        Reply::text("The user asked where the parser is: src/parse.rs.").without_usage(),
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
    tmux.send("where is the parser?", &["Enter"]);
    tmux.wait_for("the reply, and the status line's note", |s| {
        s.contains("The parser lives in src/parse.rs.") && s.contains("ctx estimated")
    })
    .await;

    tmux.send("/context", &["Enter"]);
    let screen = tmux
        .wait_for("the context layer", |s| s.contains("Context window"))
        .await;
    for needle in [
        "tool schemas",
        "assistant messages",
        "at 4 characters a token",
    ] {
        assert!(screen.contains(needle), "{needle} missing:\n{screen}");
    }
    tmux.send("q", &[]);
    tmux.wait_for("the layer to close", |s| !s.contains("Context window"))
        .await;

    tmux.send("/compact keep the file names", &["Enter"]);
    tmux.wait_for("the compaction cell", |s| {
        s.contains("⇊ compacted:") && s.contains("handoff note (1 line")
    })
    .await;
    let summariser = server.requests().last().cloned().unwrap_or_default();
    assert!(
        summariser.to_string().contains("keep the file names"),
        "the focus reaches the summariser: {summariser}"
    );
    tmux.send("", &["C-o"]);
    tmux.wait_for("the note, expanded", |s| {
        s.contains("│ The user asked where the parser is: src/parse.rs.")
    })
    .await;
    tmux.send("", &["C-c"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switch_the_model_from_the_picker_mid_conversation() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let alpha = ScriptedServer::start(vec![Reply::text("Alpha answers **first**.")])
        .await
        .unwrap();
    let beta = ScriptedServer::start(vec![Reply::text("Beta answers **second**.")])
        .await
        .unwrap();
    let rein_home = home.path().join("rein-home");
    std::fs::create_dir_all(&rein_home).unwrap();
    std::fs::write(
        rein_home.join("config.toml"),
        format!(
            r#"model = "alpha/model-a"

[providers.alpha]
base_url = "{}"
models = {{ "model-a" = {{ context_window = 128000 }} }}

[providers.beta]
base_url = "{}"
api_key_env = "BETA_KEY"
models = {{ "model-b" = {{ context_window = 50000, input_price = 1, output_price = 2 }} }}
"#,
            alpha.base_url(),
            beta.base_url()
        ),
    )
    .unwrap();
    let command: Vec<String> = vec![
        "env".into(),
        "-i".into(),
        format!("PATH={}", std::env::var("PATH").unwrap_or_default()),
        format!("HOME={}", home.path().display()),
        format!("REIN_HOME={}", rein_home.display()),
        "BETA_KEY=sk-beta".into(),
        "TERM=xterm-256color".into(),
        "LANG=C.UTF-8".into(),
        env!("CARGO_BIN_EXE_rein").into(),
        "--cwd".into(),
        project.path().display().to_string(),
    ];
    let tmux = Tmux::start(&command, 110, 32);
    tmux.wait_for("the dashboard on alpha", |s| s.contains("alpha/model-a"))
        .await;
    tmux.send("first question", &["Enter"]);
    tmux.wait_for("alpha's reply", |s| s.contains("Alpha answers first."))
        .await;

    tmux.send("/model", &["Enter"]);
    // The configured models, and the ones the openai and anthropic presets know; then,
    // once alpha's server answered `GET /v1/models`, the one it lists (issue 28).
    let screen = tmux
        .wait_for("the model picker with the server's models", |s| {
            s.contains("Switch model (21)") && s.contains("1 more model from")
        })
        .await;
    assert!(screen.contains("alpha/model-a  ● in use"), "{screen}");
    assert!(screen.contains("beta/model-b"), "{screen}");
    assert!(screen.contains("anthropic/claude-sonnet-4-5"), "{screen}");
    tmux.send("scripted", &[]);
    let screen = tmux
        .wait_for("the server's model", |s| s.contains("(1 of 21)"))
        .await;
    assert!(
        screen.contains("alpha/scripted") && screen.contains("from the server"),
        "{screen}"
    );
    tmux.send("", &["C-u"]);
    tmux.send("BETA", &[]);
    tmux.wait_for("the filter", |s| {
        s.contains("filter BETA") && s.contains("(1 of 21)")
    })
    .await;
    tmux.send("", &["Enter"]);
    let screen = tmux
        .wait_for("the switch", |s| {
            s.contains("now using beta/model-b (window 50k tokens)") && !s.contains("Switch model")
        })
        .await;
    let status = screen
        .lines()
        .find(|l| l.contains("ready"))
        .unwrap_or_default();
    assert!(status.contains("beta/model-b"), "the status line: {screen}");
    assert!(screen.contains("/50k"), "the gauge's new window: {screen}");

    tmux.send("second question", &["Enter"]);
    tmux.wait_for("beta's reply", |s| s.contains("Beta answers second."))
        .await;
    assert_eq!(
        alpha.requests().len(),
        1,
        "alpha got only the first question"
    );
    let request = &beta.requests()[0];
    assert_eq!(request["model"], "model-b");
    let text = request.to_string();
    assert!(
        text.contains("first question") && text.contains("Alpha answers"),
        "the history goes along: {text:.800}"
    );
    tmux.send("", &["C-c"]);
}

/// What tmux says about the pane (`#{pane_pid}`, `#{alternate_on}`, `#{pane_dead}`).
fn pane(tmux: &Tmux, format: &str) -> String {
    let out = Command::new("tmux")
        .args(["display-message", "-p", "-t", &tmux.name, format])
        .output()
        .expect("tmux display-message");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
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
        let deadline = Instant::now() + Duration::from_secs(10);
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
async fn slash_lists_commands_tab_completes_and_a_custom_command_runs() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let commands = project.path().join(".agents/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("review.md"),
        "---\ndescription: Review a part of the code\nargument-hint: <area>\n---\nREVIEW-PROMPT: look hard at $ARGUMENTS.\n",
    )
    .unwrap();
    let server = ScriptedServer::start(vec![Reply::text("The parser looks fine.")])
        .await
        .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        100,
        30,
    );
    tmux.wait_for("the dashboard", |s| s.contains("scripted-model"))
        .await;
    tmux.send("/", &[]);
    tmux.wait_for("the completion list", |s| {
        s.contains("commands (20)") && s.contains("/help") && s.contains("Tab complete")
    })
    .await;
    tmux.send("rev", &[]);
    tmux.wait_for("the list filtered to the custom command", |s| {
        s.contains("commands (1 of 20)")
            && s.contains("/review <area>")
            && s.contains("Review a part of the code (project)")
    })
    .await;
    tmux.send("", &["Tab"]);
    let screen = tmux
        .wait_for("the name completed and the list closed", |s| {
            !s.contains("commands (") && s.contains("│ /review ")
        })
        .await;
    assert!(!screen.contains("/revrev"), "{screen}");
    tmux.send("the parser", &["Enter"]);
    tmux.wait_for("the reply", |s| s.contains("The parser looks fine."))
        .await;
    let screen = tmux.screen();
    assert!(screen.contains("› /review the parser"), "{screen}");
    assert!(
        screen.contains("expanded from .agents/commands/review.md"),
        "{screen}"
    );
    assert!(
        !screen.contains("REVIEW-PROMPT"),
        "the prompt is not shown:\n{screen}"
    );
    let request = server.requests().last().cloned().unwrap_or_default();
    assert!(
        request
            .to_string()
            .contains("REVIEW-PROMPT: look hard at the parser."),
        "the model gets the prompt: {request}"
    );
    tmux.send("", &["C-c"]);
}

/// `rein_command` with more variables set in its environment.
fn rein_command_with(home: &Path, project: &Path, base_url: &str, vars: &[String]) -> Vec<String> {
    let mut command = rein_command(home, project, base_url);
    // After `env -i`, before the binary.
    for (i, var) in vars.iter().enumerate() {
        command.insert(2 + i, var.clone());
    }
    command
}

/// Issue 14: Ctrl-G opens the input in `$EDITOR` with the dashboard suspended (the
/// alternate screen left), and the dashboard comes back whole with the editor's text in
/// the input box, not sent until Enter.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_g_edits_the_input_in_the_editor_and_the_screen_comes_back() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("Edited text received.")])
        .await
        .unwrap();
    // The "editor": says it runs, waits for the test's go, then rewrites the file with
    // what it held and a trailing newline (which rein trims).
    let go = home.path().join("go");
    let editor = home.path().join("editor.sh");
    std::fs::write(
        &editor,
        format!(
            "#!/bin/sh\necho EDITOR RUNNING ON \"$1\"\ni=0\nwhile [ ! -e '{}' ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done\norig=$(cat \"$1\")\nprintf 'edited: %s\\n' \"$orig\" > \"$1\"\n",
            go.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).unwrap();
    let tmux = Tmux::start(
        &rein_command_with(
            home.path(),
            project.path(),
            &server.base_url(),
            &[format!("EDITOR={}", editor.display())],
        ),
        100,
        30,
    );
    tmux.wait_for("the dashboard", |s| s.contains("scripted-model"))
        .await;
    tmux.send("hello world", &["C-g"]);
    let screen = tmux
        .wait_for("the editor", |s| s.contains("EDITOR RUNNING"))
        .await;
    assert_eq!(
        pane(&tmux, "#{alternate_on}"),
        "0",
        "the dashboard is suspended"
    );
    assert!(!screen.contains("scripted-model"), "{screen}");
    let file = screen
        .lines()
        .find_map(|l| l.strip_prefix("EDITOR RUNNING ON "))
        .unwrap()
        .trim()
        .to_string();
    assert!(
        file.starts_with(
            &home
                .path()
                .join("rein-home")
                .join("tmp")
                .display()
                .to_string()
        ),
        "{file}"
    );
    std::fs::write(&go, "").unwrap();
    let screen = tmux
        .wait_for("the dashboard back with the edited input", |s| {
            s.contains("edited: hello world") && s.contains("scripted-model")
        })
        .await;
    assert_eq!(pane(&tmux, "#{alternate_on}"), "1", "the dashboard is back");
    assert!(
        !screen.contains("EDITOR RUNNING"),
        "redrawn whole:\n{screen}"
    );
    assert!(!Path::new(&file).exists(), "the temporary file is removed");
    assert!(server.requests().is_empty(), "not sent by the editor");
    // Typing still reaches the input after the terminal came back, and Enter sends.
    tmux.send("!", &["Enter"]);
    tmux.wait_for("the reply", |s| s.contains("Edited text received."))
        .await;
    let request = &server.requests()[0];
    let messages = request["messages"].as_array().unwrap();
    let last = &messages[messages.len() - 1];
    let content = last["content"].as_str().unwrap();
    assert!(
        content.starts_with("edited: hello world!\n\n(rein context"),
        "the editor's newline trimmed, then the typing: {content}"
    );
    tmux.send("", &["C-c"]);
}

/// An editor that fails leaves the input as it was and says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_editor_keeps_the_input() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![]).await.unwrap();
    let tmux = Tmux::start(
        &rein_command_with(
            home.path(),
            project.path(),
            &server.base_url(),
            &["VISUAL=false".to_string()],
        ),
        100,
        30,
    );
    tmux.wait_for("the dashboard", |s| s.contains("scripted-model"))
        .await;
    tmux.send("keep this", &["C-g"]);
    let screen = tmux
        .wait_for("the hint", |s| s.contains("the input is unchanged"))
        .await;
    assert!(screen.contains("keep this"), "{screen}");
    assert!(screen.contains("`false` failed"), "{screen}");
    tmux.send("", &["C-c", "C-c"]);
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
    let deadline = Instant::now() + Duration::from_secs(5);
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mention_a_file_from_the_at_finder() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let content = "pub fn answer() -> u32 {\n    42\n}\n";
    std::fs::create_dir_all(project.path().join("src/deep")).unwrap();
    std::fs::write(project.path().join("src/deep/answer.rs"), content).unwrap();
    std::fs::write(project.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    // Ignored: never listed.
    std::fs::write(project.path().join(".gitignore"), "build/\n").unwrap();
    std::fs::create_dir_all(project.path().join("build")).unwrap();
    std::fs::write(project.path().join("build/answer.rs.bak"), "old\n").unwrap();
    let server = ScriptedServer::start(vec![Reply::text("It returns **42**.")])
        .await
        .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        100,
        30,
    );
    tmux.wait_for("the dashboard", |s| s.contains("scripted-model"))
        .await;
    tmux.send("what does @", &[]);
    tmux.send("answ", &[]);
    let screen = tmux
        .wait_for("the finder's match", |s| s.contains("src/deep/answer.rs"))
        .await;
    assert!(!screen.contains("build/"), "{screen}");
    tmux.send("", &["Tab"]);
    tmux.wait_for("the path in the input", |s| {
        s.contains("what does @src/deep/answer.rs") && !s.contains("╭ @")
    })
    .await;
    tmux.send("return?", &["Enter"]);
    let screen = tmux
        .wait_for("the reply", |s| s.contains("It returns 42."))
        .await;
    // The transcript shows the mention, not the file.
    assert!(
        screen.contains("what does @src/deep/answer.rs return?"),
        "{screen}"
    );
    assert!(!screen.contains("pub fn answer"), "{screen}");
    let requests = server.requests();
    let user = requests[0]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        user.starts_with(&format!(
            "what does @src/deep/answer.rs return?\n\n<file path=\"src/deep/answer.rs\" \
             attached_by=\"user\">\n{content}</file>"
        )),
        "{user}"
    );
}

/// Issue 14: the inputs of an earlier session of the project come back with Up and
/// Ctrl-R in the next one (`history.jsonl` in the data folder), and another project's
/// do not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inputs_of_an_earlier_session_come_back_with_up_and_ctrl_r() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text("First answer."),
        Reply::text("Second answer."),
        Reply::text("Elsewhere."),
    ])
    .await
    .unwrap();
    let first = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        100,
        30,
    );
    first
        .wait_for("the dashboard", |s| s.contains("scripted-model"))
        .await;
    first.send("explain the parser module", &["Enter"]);
    first
        .wait_for("a reply", |s| s.contains("First answer."))
        .await;
    first.send("now the lexer", &["Enter"]);
    first
        .wait_for("a reply", |s| s.contains("Second answer."))
        .await;
    first.quit_with_ctrl_c().await;
    // REIN_HOME holds the data folder too.
    let saved = std::fs::read_to_string(home.path().join("rein-home/history.jsonl"))
        .expect("a history file");
    assert_eq!(saved.lines().count(), 2, "{saved}");

    // Another project's inputs stay there.
    let elsewhere = Tmux::start(
        &rein_command(home.path(), other.path(), &server.base_url()),
        100,
        30,
    );
    elsewhere
        .wait_for("the dashboard", |s| s.contains("scripted-model"))
        .await;
    elsewhere.send("", &["Up"]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !elsewhere.screen().contains("now the lexer"),
        "{}",
        elsewhere.screen()
    );
    drop(elsewhere);

    let second = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        100,
        30,
    );
    second
        .wait_for("the dashboard", |s| s.contains("scripted-model"))
        .await;
    // The history is read off the loop: Up does nothing until it is there.
    for _ in 0..50 {
        if !second.screen().contains("Ask rein to do something") {
            break;
        }
        second.send("", &["Up"]);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    second
        .wait_for("the newest input", |s| s.contains("│ now the lexer"))
        .await;
    second.send("", &["C-u", "C-a", "C-k", "C-r"]);
    second.send("pars", &[]);
    second
        .wait_for("the search's match", |s| {
            s.contains("reverse-i-search: pars") && s.contains("explain the parser module")
        })
        .await;
    second.send("", &["Enter"]);
    second
        .wait_for("the match in the input", |s| {
            s.contains("│ explain the parser module") && !s.contains("reverse-i-search")
        })
        .await;
    assert_eq!(server.requests().len(), 2, "nothing sent by recalling");
    second.send("", &["C-c", "C-c"]);
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

/// Issue 15: a call to a real MCP server's tool (server-everything, where `.ci/run`
/// installed it) opens the approval modal with the server, the tool and the arguments as
/// JSON; approving runs it and the result reaches the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_call_asks_in_the_modal_and_runs_once_approved() {
    let Some(program) = support::mcp::installed("node_modules/.bin/mcp-server-everything") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let rein_home = home.path().join("rein-home");
    std::fs::create_dir_all(&rein_home).unwrap();
    std::fs::write(
        rein_home.join("config.toml"),
        format!(
            "[mcp_servers.everything]\ncommand = {:?}\nargs = [\"stdio\"]\n",
            program.display().to_string()
        ),
    )
    .unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(
            "mcp__everything__echo",
            &json!({"message": "approve me"}).to_string(),
        )]),
        Reply::text("It was echoed."),
    ])
    .await
    .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        110,
        32,
    );
    tmux.wait_for("the server ready", |s| {
        s.contains("MCP server everything: ready")
    })
    .await;
    tmux.send("echo it", &["Enter"]);
    let screen = tmux
        .wait_for("the approval modal", |s| {
            s.contains("server everything · tool echo")
        })
        .await;
    assert!(screen.contains("\"message\": \"approve me\""), "{screen}");
    assert!(
        screen.contains("allow `mcp__everything__echo` for this session"),
        "{screen}"
    );
    tmux.send("y", &[]);
    tmux.wait_for("the reply", |s| s.contains("It was echoed."))
        .await;
    let requests = server.requests();
    let result = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap()
        .to_string();
    assert!(result.contains("approve me"), "{result}");
    // `/clear`: a new conversation with a fresh server (the transcript is cleared, then
    // the restarted server says it is ready again).
    tmux.send("/clear", &["Enter"]);
    tmux.wait_for("the transcript cleared", |s| !s.contains("It was echoed."))
        .await;
    tmux.wait_for("the server ready again", |s| {
        s.contains("MCP server everything: ready")
    })
    .await;
    tmux.send("", &["C-c"]);
}

/// A project's MCP server waits for the user; `/mcp allow NAME` in the dashboard allows it
/// (remembered for the project: `rein mcp list` then starts it) and starts it, and its
/// tools are offered from the next turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_projects_mcp_server_is_allowed_from_the_dashboard() {
    let Some(program) = support::mcp::installed("node_modules/.bin/mcp-server-everything") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".rein")).unwrap();
    std::fs::write(
        project.path().join(".rein/config.toml"),
        format!(
            "[mcp_servers.cloned]\ncommand = {:?}\nargs = [\"stdio\"]\n",
            program.display().to_string()
        ),
    )
    .unwrap();
    let server = ScriptedServer::start(vec![Reply::text("Hello there.")])
        .await
        .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        120,
        32,
    );
    tmux.wait_for("the notice", |s| {
        s.contains("does not run until you allow it")
    })
    .await;
    tmux.send("/mcp allow cloned", &["Enter"]);
    let screen = tmux
        .wait_for("the server ready", |s| {
            s.contains("MCP server cloned: ready")
        })
        .await;
    assert!(screen.contains("outside rein's sandbox"), "{screen}");
    tmux.send("hi", &["Enter"]);
    tmux.wait_for("the reply", |s| s.contains("Hello there."))
        .await;
    let tools: Vec<String> = server.requests()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        tools.contains(&"mcp__cloned__echo".to_string()),
        "{tools:?}"
    );
    tmux.send("", &["C-c"]);
    // Remembered for this project.
    let list = std::process::Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(["mcp", "list"])
        .current_dir(project.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("REIN_HOME", home.path().join("rein-home"))
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(listed.contains("cloned: ready"), "{listed}");
}

fn resize(tmux: &Tmux, width: u16) {
    let status = Command::new("tmux")
        .args(["resize-window", "-t", &tmux.name, "-x", &width.to_string()])
        .status()
        .expect("tmux resize-window");
    assert!(status.success());
}

/// The screen as rein left it, then as it draws it from nothing (a resize clears the
/// terminal and writes every cell): they must be the same.
async fn redrawn(tmux: &Tmux) -> String {
    resize(tmux, 100);
    tmux.wait_for("the narrower screen", |s| {
        s.lines().all(|l| l.chars().count() <= 100)
    })
    .await;
    // Wait for the frame at 100 columns to be drawn before going back.
    tokio::time::sleep(Duration::from_millis(300)).await;
    resize(tmux, 120);
    tokio::time::sleep(Duration::from_millis(300)).await;
    tmux.wait_for("the screen at 120 columns", |s| {
        s.lines().any(|l| l.chars().count() > 100)
    })
    .await
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

/// Issue 24: Esc twice on an empty input opens the turns; one is picked, the preview says
/// what goes back, Enter takes the files and the conversation back, and the message
/// returns to the input for editing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn esc_esc_rewinds_a_turn_and_gives_its_message_back() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("notes.md"), "first version\n").unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text("Nothing to change yet."),
        Reply::tool_calls(&[
            (
                "write_file",
                &json!({"path": "notes.md", "content": "rewritten by the agent\n"}).to_string(),
            ),
            (
                "write_file",
                &json!({"path": "extra/new.md", "content": "new file\n"}).to_string(),
            ),
        ]),
        Reply::text("Rewrote the notes."),
    ])
    .await
    .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        110,
        32,
    );
    tmux.wait_for("the input", |s| s.contains("Enter send"))
        .await;
    tmux.send("just look around", &["Enter"]);
    tmux.wait_for("the first reply", |s| s.contains("Nothing to change yet."))
        .await;
    tmux.send("rewrite the notes please", &["Enter"]);
    let screen = tmux
        .wait_for("the second reply and the turn's end", |s| {
            s.contains("Rewrote the notes.") && s.contains("● ready")
        })
        .await;
    // Each edit's cell shows what it changed.
    assert!(screen.contains("│ - first version"), "{screen}");
    assert!(screen.contains("│ + rewritten by the agent"), "{screen}");
    assert!(screen.contains("│ + new file"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(project.path().join("notes.md")).unwrap(),
        "rewritten by the agent\n"
    );
    tmux.send("", &["Escape"]);
    tmux.wait_for("the hint", |s| s.contains("Esc again to rewind"))
        .await;
    tmux.send("", &["Escape"]);
    let screen = tmux
        .wait_for("the turns", |s| s.contains("Take back a turn"))
        .await;
    assert!(screen.contains("just look around"), "{screen}");
    assert!(screen.contains("2 files"), "{screen}");
    tmux.send("", &["Enter"]);
    let screen = tmux
        .wait_for("the preview", |s| {
            s.contains("Back to before turn 2") && s.contains("restore") && s.contains("remove")
        })
        .await;
    assert!(screen.contains("code and conversation"), "{screen}");
    assert!(screen.contains("notes.md"), "{screen}");
    assert!(screen.contains("extra/new.md"), "{screen}");
    tmux.send("", &["Enter"]);
    let screen = tmux
        .wait_for("the rewind's report", |s| {
            s.contains("files back to before turn 2") && s.contains("went back to before turn 2")
        })
        .await;
    assert!(
        !screen.contains("Rewrote the notes."),
        "the fork shows no turn 2:\n{screen}"
    );
    assert!(screen.contains("just look around"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(project.path().join("notes.md")).unwrap(),
        "first version\n"
    );
    assert!(!project.path().join("extra").exists());
    // The message is back in the input, to edit and send.
    let input_line = screen
        .lines()
        .rev()
        .find(|l| l.contains("rewrite the notes please"));
    assert!(input_line.is_some(), "{screen}");
    tmux.send("", &["C-c", "C-c"]);
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
    let deadline = Instant::now() + Duration::from_secs(5);
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
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(second) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        !alive(second),
        "a background command outlived the dashboard"
    );
}

/// Hooks in the dashboard: a held project hook said at start, `/hooks` listing the user's,
/// and a PreToolUse validator's block in the transcript.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_show_in_the_dashboard_what_they_did() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let rein_home = home.path().join("rein-home");
    std::fs::create_dir_all(&rein_home).unwrap();
    let validator = support::script(
        home.path(),
        "validate.sh",
        "cat > /dev/null\necho 'no force pushes here' >&2\nexit 2\n",
    );
    std::fs::write(
        rein_home.join("hooks.json"),
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": validator}]}]}})
        .to_string(),
    )
    .unwrap();
    std::fs::create_dir_all(project.path().join(".rein")).unwrap();
    std::fs::write(
        project.path().join(".rein/hooks.json"),
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch pwned"}]}]}})
            .to_string(),
    )
    .unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", &json!({"command": "git push --force"}).to_string())]),
        Reply::text("The hook refused it."),
    ])
    .await
    .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        120,
        40,
    );
    // The project's hook is put to the user before anything runs: its command in full.
    tmux.wait_for("the question about the project's hook", |s| {
        s.contains("Project hooks")
            && s.contains("$ touch pwned")
            && s.contains("would run 1 command as you")
    })
    .await;
    // Typing is not an answer; n keeps it held.
    tmux.send("/hooks", &["Enter"]);
    tmux.send("n", &[]);
    tmux.wait_for("kept held", |s| {
        s.contains("hook stays held") && !s.contains("Project hooks")
    })
    .await;
    tmux.send("/hooks", &["Enter"]);
    tmux.wait_for("the list", |s| {
        s.contains("Hooks (1):") && s.contains("PreToolUse [Bash]")
    })
    .await;
    tmux.send("push it", &["Enter"]);
    tmux.wait_for("the block in the transcript", |s| {
        s.contains("hook PreToolUse: blocked Bash: no force pushes here")
            && s.contains("The hook refused it.")
            && s.contains("● ready")
    })
    .await;
    assert!(
        !project.path().join("pwned").exists(),
        "a held project hook ran"
    );
    tmux.quit_with_ctrl_c().await;
}

/// A project's hooks are asked about at start, with every command shown; allowed, they run
/// from this session's start on (the session waits for the answer, so a SessionStart hook
/// sees it). Changed afterwards, they are asked about again and say so; kept held, none
/// runs, and `/hooks allow` asks again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_projects_hooks_are_asked_about_at_start_and_run_once_allowed() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("rein-home")).unwrap();
    let log = home.path().join("hook.log");
    let hooks = |tag: &str| {
        json!({"hooks": {
            "SessionStart": [{"hooks": [{"type": "command",
                "command": format!("echo 'the project hook says {tag}'")}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
                "command": format!("echo {tag} >> '{}'", log.display())}]}]
        }})
        .to_string()
    };
    std::fs::create_dir_all(project.path().join(".rein")).unwrap();
    std::fs::write(project.path().join(".rein/hooks.json"), hooks("hello")).unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", &json!({"command": "true"}).to_string())]),
        Reply::text("Ran it."),
        Reply::tool_calls(&[("bash", &json!({"command": "true; true"}).to_string())]),
        Reply::text("Ran it again."),
    ])
    .await
    .unwrap();
    let command = rein_command(home.path(), project.path(), &server.base_url());
    let tmux = Tmux::start(&command, 120, 40);
    tmux.wait_for("the question", |s| {
        s.contains("Project hooks")
            && s.contains("would run 2 commands as you, outside rein's sandbox")
            && s.contains("$ echo 'the project hook says hello'")
            && s.contains("PreToolUse [Bash]")
            && !s.contains("changed since you allowed")
    })
    .await;
    tmux.send("a", &[]);
    tmux.wait_for("allowed", |s| {
        s.contains("allowed the project's hooks: 2 run as you") && !s.contains("Project hooks")
    })
    .await;
    tmux.send("run it", &["Enter"]);
    tmux.wait_for("the turn", |s| {
        s.contains("Ran it.") && s.contains("● ready")
    })
    .await;
    assert_eq!(std::fs::read_to_string(&log).unwrap().trim(), "hello");
    let first = &server.requests()[0];
    assert!(
        first.to_string().contains("the project hook says hello"),
        "SessionStart's context did not reach the model: {first}"
    );
    tmux.quit_with_ctrl_c().await;
    drop(tmux);

    // The file changes: asked again, and it says so. Kept held, nothing of it runs.
    std::fs::write(project.path().join(".rein/hooks.json"), hooks("changed")).unwrap();
    let tmux = Tmux::start(&command, 120, 40);
    tmux.wait_for("asked again", |s| {
        s.contains("The file changed since you allowed it.")
            && s.contains("$ echo 'the project hook says changed'")
    })
    .await;
    tmux.send("", &["Escape"]);
    tmux.wait_for("kept held", |s| s.contains("hooks stay held"))
        .await;
    tmux.send("/hooks allow", &["Enter"]);
    tmux.wait_for("asked once more", |s| s.contains("The file changed since"))
        .await;
    tmux.send("n", &[]);
    tmux.send("run it again", &["Enter"]);
    tmux.wait_for("the second turn", |s| {
        s.contains("Ran it again.") && s.contains("● ready")
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(&log).unwrap().trim(),
        "hello",
        "a held hook ran"
    );
    let later = server.requests();
    assert!(
        !later.last().unwrap().to_string().contains("says changed"),
        "a held SessionStart hook ran"
    );
    tmux.quit_with_ctrl_c().await;
}

/// Scripts written to Claude Code's documented payload, in the dashboard as a person sees
/// them (`tests/it/hooks.rs` has each headless): a prompt hook that blocks one prompt and adds
/// context to the next, a Write guard denying in JSON, a Bash hook that hangs (cut at its
/// timeout, the call goes on), a PostToolUse logger whose child keeps stdout open, an MCP
/// call a hook allows, a Notification hook hearing that rein waits for an approval, a
/// subagent's call, and a Stop hook that blocks once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_hook_scripts_act_in_the_dashboard() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let rein_home = home.path().join("rein-home");
    std::fs::create_dir_all(&rein_home).unwrap();
    let log = dir.path().join("post.log");
    let mark = dir.path().join("stopped-once");
    let prompt = support::script(
        dir.path(),
        "prompt.sh",
        "p=$(cat)\ncase \"$p\" in *secret*) echo 'no secrets in prompts' >&2; exit 2;; esac\necho 'the build uses make'\n",
    );
    let write_guard = support::script(
        dir.path(),
        "guard.sh",
        "cat > /dev/null\nprintf '%s' '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"deny\", \"permissionDecisionReason\": \"no writes to .env\"}}'\n",
    );
    let hang = support::script(
        dir.path(),
        "hang.sh",
        "p=$(cat)\ncase \"$p\" in *sleepy*) sleep 600;; esac\nexit 0\n",
    );
    let allow_mcp = support::script(
        dir.path(),
        "allow.sh",
        "cat > /dev/null\nprintf '%s' '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"allow\"}}'\n",
    );
    let logger = support::script(
        dir.path(),
        "log.sh",
        &format!(
            "cat >> '{0}'\necho >> '{0}'\n# A child that would keep stdout open for 1000 s.\nsleep 1000 &\n",
            log.display()
        ),
    );
    let stop_once = support::script(
        dir.path(),
        "stop.sh",
        &format!(
            "cat > /dev/null\nif [ ! -e '{0}' ]; then touch '{0}'; echo '{{\"decision\": \"block\", \"reason\": \"say that the tests ran\"}}'; fi\n",
            mark.display()
        ),
    );
    let notified = dir.path().join("notified.json");
    let notify = support::script(
        dir.path(),
        "notify.sh",
        &format!("cat > '{}'\n", notified.display()),
    );
    let one = |path: &str| json!([{"type": "command", "command": path}]);
    std::fs::write(
        rein_home.join("hooks.json"),
        json!({"hooks": {
            "UserPromptSubmit": [{"hooks": one(&prompt)}],
            "PreToolUse": [
                {"matcher": "Write", "hooks": one(&write_guard)},
                {"matcher": "Bash", "hooks": [{"type": "command", "command": hang, "timeout": 1}]},
                {"matcher": "mcp__plain__.*", "hooks": one(&allow_mcp)}
            ],
            "PostToolUse": [{"hooks": one(&logger)}],
            "Notification": [{"matcher": "permission_prompt", "hooks": one(&notify)}],
            "Stop": [{"hooks": one(&stop_once)}]
        }})
        .to_string(),
    )
    .unwrap();
    let server_script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/hostile_server.py");
    std::fs::write(
        rein_home.join("config.toml"),
        format!(
            "[mcp_servers.plain]\ncommand = \"python3\"\nargs = [{:?}, \"plain\"]\n",
            server_script.display().to_string()
        ),
    )
    .unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(
            "write_file",
            &json!({"path": ".env", "content": "TOKEN=1\n"}).to_string(),
        )]),
        Reply::tool_calls(&[("bash", &json!({"command": "echo sleepy"}).to_string())]),
        Reply::tool_calls(&[("mcp__plain__work", r#"{"bytes": 5}"#)]),
        // `sleep` asks: the Notification hook hears that rein waits.
        Reply::tool_calls(&[("bash", r#"{"command":"sleep 0.1"}"#)]),
        Reply::tool_calls(&[("task", r#"{"description":"look at the readme"}"#)]),
        // The subagent: a call, then its answer.
        Reply::tool_calls(&[("bash", r#"{"command":"echo from-sub"}"#)]),
        Reply::text("the readme is short"),
        Reply::text("Done."),
        // The Stop hook kept the turn going.
        Reply::text("The tests ran."),
    ])
    .await
    .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        120,
        50,
    );
    tmux.wait_for("the MCP server", |s| s.contains("MCP server plain: ready"))
        .await;
    // Blocked: the prompt never reaches the model, and the user sees why.
    tmux.send("here is my secret", &["Enter"]);
    tmux.wait_for("the prompt blocked", |s| {
        s.contains("no secrets in prompts") && s.contains("● ready")
    })
    .await;
    assert!(server.requests().is_empty(), "a blocked prompt was sent");
    tmux.send("set things up", &["Enter"]);
    tmux.wait_for("the approval modal", |s| {
        s.contains("sleep 0.1") && s.contains("allow once")
    })
    .await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !notified.exists() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let note: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&notified).unwrap()).unwrap();
    assert_eq!(note["hook_event_name"], "Notification");
    assert_eq!(note["notification_type"], "permission_prompt");
    assert_eq!(note["message"], "rein needs your permission to use Bash");
    tmux.send("y", &[]);
    let screen = tmux
        .wait_for("the turn", |s| {
            s.contains("The tests ran.") && s.contains("● ready")
        })
        .await;
    // The hanging hook cost its timeout, the orphan holding stdout nothing: waiting for
    // either would have outlasted `wait_for`'s guard, and the hook's failure is said.
    for needle in [
        "hook UserPromptSubmit: added context for the model",
        "hook PreToolUse: denied Write: no writes to .env",
        "hook PreToolUse: failed: timed out",
        "hook Stop: kept the turn going: say that the tests ran",
    ] {
        assert!(screen.contains(needle), "{needle} missing:\n{screen}");
    }
    assert!(
        !project.path().join(".env").exists(),
        "the denied write ran"
    );
    let requests = server.requests();
    assert!(
        requests[0]["messages"]
            .to_string()
            .contains("the build uses make"),
        "the prompt hook's context did not reach the model"
    );
    // PostToolUse saw the bash call, the MCP call (allowed by its hook, never asked) and
    // the subagent's call with its id.
    let logged: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let seen: Vec<String> = logged
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["tool_name"].as_str().unwrap_or("-"),
                e["agent_id"].as_str().map_or("main", |_| "sub")
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            "Bash main",
            "mcp__plain__work main",
            "Bash main",
            "Bash sub",
            "Task main"
        ],
        "{logged:#?}"
    );
    tmux.quit_with_ctrl_c().await;
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
    let deadline = Instant::now() + Duration::from_secs(5);
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

// ---- the command line as Claude Code users know it (issue 28) -----------------------------

/// `command` run by a shell that says how it ended and stays, so the test reads what rein
/// left on the terminal after it quit.
fn in_a_shell(command: Vec<String>) -> Vec<String> {
    let mut shell: Vec<String> = [
        "sh",
        "-c",
        "\"$@\"; echo \"rein exited: $?\"; exec sleep 600",
        "sh",
    ]
    .map(String::from)
    .to_vec();
    shell.extend(command);
    shell
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

/// `/init`: the model reads the project, proposes AGENTS.md through write_file, and the
/// approval modal asks (an instruction file, though inside the project); approved, it is
/// written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_proposes_an_agents_md_for_approval() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("Makefile"), "test:\n\tcargo test\n").unwrap();
    let content = "# AGENTS.md\n\n- Run the tests with `make test`.\n";
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", &json!({"command": "cat Makefile"}).to_string())]),
        Reply::tool_calls(&[(
            "write_file",
            &json!({"path": "AGENTS.md", "content": content}).to_string(),
        )]),
        Reply::text("Wrote AGENTS.md: the test command."),
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
    tmux.send("/init", &["Enter"]);
    let screen = tmux
        .wait_for("the approval of AGENTS.md", |s| {
            s.contains("AGENTS.md") && s.contains("allow once")
        })
        .await;
    assert!(screen.contains("is an instruction file"), "{screen}");
    assert!(!project.path().join("AGENTS.md").exists(), "{screen}");
    let first = server.requests()[0].to_string();
    assert!(first.contains("Write a first AGENTS.md"), "{first}");
    tmux.send("y", &[]);
    let screen = tmux
        .wait_for("the end of the turn", |s| {
            s.contains("Wrote AGENTS.md: the test command.") && s.contains("● ready")
        })
        .await;
    assert!(
        screen.contains("expanded from rein's /init prompt"),
        "{screen}"
    );
    assert_eq!(
        std::fs::read_to_string(project.path().join("AGENTS.md")).unwrap(),
        content
    );
    tmux.quit_with_ctrl_c().await;
}

/// Types `text` and sends it, closing the `/` completion list first with Esc when it is
/// open. An Esc and an Enter arriving in one read are Alt-Enter (a new line) to the
/// terminal parser, which a loaded machine makes likely: Enter goes only once the screen
/// shows the text typed and, if the list was open, the list gone (the Esc read). Where
/// nothing matches the list is not shown, and no Esc is sent (nothing would show it read).
async fn send_past_the_slash_list(tmux: &Tmux, text: &str) {
    tmux.send(text, &[]);
    let screen = tmux.wait_for("the text typed", |s| s.contains(text)).await;
    if screen.contains("commands (") {
        tmux.send("", &["Escape"]);
        tmux.wait_for("the completion list to close", |s| {
            !s.contains("commands (")
        })
        .await;
    }
    tmux.send("", &["Enter"]);
}

/// Issue 28 (their setup, read as it is): a Claude Code command file from
/// `.claude/commands` runs as `/commit`, a mistyped `/comit-wip` is refused with a hint
/// (nothing sent), and the agent reading a file in `sub/` brings `sub/CLAUDE.md` in, which
/// the transcript says and `/memory` lists after the system prompt's `AGENTS.md`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_code_setup_works_in_the_dashboard() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let root = project.path();
    std::fs::create_dir_all(root.join(".claude/commands")).unwrap();
    std::fs::write(
        root.join(".claude/commands/commit.md"),
        "---\ndescription: Commit the work\nallowed-tools: Bash(git commit:*)\n---\nCOMMIT-PROMPT: read sub/x.rs, then commit as $1.\n",
    )
    .unwrap();
    std::fs::write(root.join("AGENTS.md"), "ROOT-RULE\n").unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/CLAUDE.md"), "SUB-RULE: keep it short.\n").unwrap();
    std::fs::write(root.join("sub/x.rs"), "fn x() {}\n").unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("read_file", &json!({"path": "sub/x.rs"}).to_string())]),
        Reply::text("Read it; committing next."),
    ])
    .await
    .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), root, &server.base_url()),
        120,
        40,
    );
    tmux.wait_for("the dashboard", |s| s.contains("scripted-model"))
        .await;
    send_past_the_slash_list(&tmux, "/comit-wip now").await;
    tmux.wait_for("the hint", |s| {
        s.contains("unknown command /comit-wip; /help lists them")
    })
    .await;
    assert!(server.requests().is_empty(), "nothing was sent");
    send_past_the_slash_list(&tmux, "/commit wip").await;
    let screen = tmux
        .wait_for("the reply", |s| s.contains("Read it; committing next."))
        .await;
    assert!(
        screen.contains("expanded from .claude/commands/commit.md"),
        "{screen}"
    );
    assert!(
        screen.contains("instruction files for the folders worked in"),
        "{screen}"
    );
    let requests = server.requests();
    assert!(requests[0].to_string().contains("COMMIT-PROMPT"));
    assert!(requests[1].to_string().contains("SUB-RULE: keep it short."));
    send_past_the_slash_list(&tmux, "/memory").await;
    let screen = tmux
        .wait_for("the listing", |s| {
            s.contains("Loaded for the folders worked in (sent with a message):")
        })
        .await;
    assert!(screen.contains("sub/CLAUDE.md (25 bytes)"), "{screen}");
    tmux.send("", &["C-c"]);
}

/// Issue 28: a turn in plan mode ends with the plan offered; `y` approves it, the mode
/// goes back to default and the model is told to go ahead, and its edit then runs. Alt-O
/// then shows the whole transcript in the pager, the edit's diff in it; q closes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_is_approved_from_the_keyboard_and_the_pager_shows_the_transcript() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text("Plan:\n\n1. Write notes.md with the two findings.\n2. Say done."),
        Reply::tool_calls(&[(
            "write_file",
            &json!({"path": "notes.md", "content": "finding one\nfinding two\n"}).to_string(),
        )]),
        Reply::text("Done: notes.md holds both findings."),
    ])
    .await
    .unwrap();
    let mut command = rein_command(home.path(), project.path(), &server.base_url());
    command.extend(["--mode".to_string(), "plan".to_string()]);
    let tmux = Tmux::start(&command, 100, 32);
    tmux.wait_for("plan mode in the status line", |s| {
        s.contains("plan mode (Shift-Tab)")
    })
    .await;
    tmux.send("plan the notes", &["Enter"]);
    let screen = tmux
        .wait_for("the plan offered", |s| s.contains("The plan is ready"))
        .await;
    assert!(
        screen.contains("Write notes.md with the two findings"),
        "{screen}"
    );
    assert!(
        screen.contains("approve, go on in default mode"),
        "{screen}"
    );
    tmux.send("y", &[]);
    tmux.wait_for("the approved plan carried out", |s| {
        s.contains("Done: notes.md holds both findings.")
    })
    .await;
    let screen = tmux.screen();
    assert!(!screen.contains("plan mode (Shift-Tab)"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(project.path().join("notes.md")).unwrap(),
        "finding one\nfinding two\n"
    );
    let requests = server.requests();
    let messages = requests[1]["messages"].as_array().unwrap();
    let last = messages[messages.len() - 1]["content"].as_str().unwrap();
    assert!(
        last.contains(rein::app::plan_review::APPROVED_MESSAGE),
        "{last}"
    );
    tmux.send("", &["M-o"]);
    let pager = tmux
        .wait_for("the pager", |s| {
            s.contains("Transcript, everything expanded")
        })
        .await;
    assert!(pager.contains("+ finding two"), "{pager}");
    tmux.send("q", &[]);
    tmux.wait_for("the pager closed", |s| {
        !s.contains("Transcript, everything expanded")
    })
    .await;
    tmux.quit_with_ctrl_c().await;
}

/// A server's form (MCP elicitation) as a person sees it: the call's server asks for a
/// form mid-call, the dashboard shows it framed as the server's, the user types into the
/// first field and sends it with Ctrl-S, and the server's answer reaches the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_form_is_filled_in_and_sent_from_the_dashboard() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let rein_home = home.path().join("rein-home");
    std::fs::create_dir_all(&rein_home).unwrap();
    let server_script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/hostile_server.py");
    std::fs::write(
        rein_home.join("config.toml"),
        format!(
            "[[permissions.tools]]\npattern = \"mcp__plain__work\"\naction = \"allow\"\n\n\
             [mcp_servers.plain]\ncommand = \"python3\"\nargs = [{:?}, \"plain\"]\n",
            server_script.display().to_string()
        ),
    )
    .unwrap();
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Your name"},
            "tabs": {"type": "boolean", "title": "Tabs", "default": true}
        },
        "required": ["name"]
    });
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("mcp__plain__work", &json!({ "elicit": schema }).to_string())]),
        Reply::text("Thanks for the form."),
    ])
    .await
    .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        110,
        32,
    );
    tmux.wait_for("the server ready", |s| {
        s.contains("MCP server plain: ready")
    })
    .await;
    tmux.send("set me up", &["Enter"]);
    let screen = tmux
        .wait_for("the form", |s| s.contains("Form from MCP server \"plain\""))
        .await;
    assert!(screen.contains("Your name"), "{screen}");
    // Sending with a required field empty: the field says why, nothing is sent.
    tmux.send("", &["C-s"]);
    tmux.wait_for("the field's complaint", |s| s.contains("required"))
        .await;
    tmux.send("Ada", &[]);
    tmux.send("", &["C-s"]);
    tmux.wait_for("the reply", |s| s.contains("Thanks for the form."))
        .await;
    let result = server.requests()[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap()
        .to_string();
    assert!(
        result.contains("accept") && result.contains("Ada") && result.contains("tabs"),
        "{result}"
    );
    tmux.send("", &["C-c"]);
}

/// A question that opens while you type a message does not take your typing as its answer:
/// the `y`s and `a`s go on into the input box, and after a pause a key answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typing_as_an_approval_opens_goes_to_the_input_not_the_answer() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let rein_home = home.path().join("rein-home");
    std::fs::create_dir_all(&rein_home).unwrap();
    std::fs::write(
        rein_home.join("config.toml"),
        "[[permissions.bash]]\npattern = \"sleep 1\"\naction = \"allow\"\n",
    )
    .unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", &json!({"command": "sleep 1"}).to_string())]),
        Reply::tool_calls(&[("bash", &json!({"command": "sleep 2"}).to_string())]),
        Reply::text("Left it alone."),
    ])
    .await
    .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        110,
        32,
    );
    tmux.wait_for("the dashboard", |s| s.contains("scripted-model"))
        .await;
    tmux.send("tidy up", &["Enter"]);
    tmux.wait_for("the sleep running", |s| s.contains("sleep 1"))
        .await;
    // Type on, a key every 60 ms, while the sleep ends and the question opens.
    let typed = "yay ".repeat(12);
    let mut opened_while_typing = false;
    for c in typed.chars() {
        tmux.send(&c.to_string(), &[]);
        tokio::time::sleep(Duration::from_millis(60)).await;
        if !opened_while_typing && tmux.screen().contains("sleep 2") {
            opened_while_typing = true;
        }
    }
    let screen = tmux
        .wait_for("the question, still open", |s| {
            s.contains("sleep 2") && s.contains("while you typed")
        })
        .await;
    assert!(opened_while_typing, "{screen}");
    assert_eq!(server.requests().len(), 2, "nothing was answered: {screen}");
    // A pause, then the answer.
    tokio::time::sleep(Duration::from_millis(700)).await;
    tmux.send("n", &[]);
    let screen = tmux
        .wait_for("the reply", |s| s.contains("Left it alone."))
        .await;
    let result = server.requests()[2]["messages"].to_string();
    assert!(
        result.contains("denied") || result.contains("refused"),
        "{result}"
    );
    // What was typed is in the input box, ready to send.
    assert!(screen.contains("yay yay yay"), "{screen}");
    tmux.send("", &["C-c"]);
}

/// Issue 41: a cloned project's `.rein/config.toml` that names its own endpoint is held,
/// and the dashboard says so in its transcript (the warning on stderr is behind the
/// screen), with how to allow it; the conversation goes to the user's own server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_projects_held_endpoint_is_said_in_the_dashboard() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".rein")).unwrap();
    std::fs::write(
        project.path().join(".rein/config.toml"),
        "base_url = \"http://127.0.0.1:9/v1\"\n",
    )
    .unwrap();
    let server = ScriptedServer::start(vec![Reply::text("Answered by your own server.")])
        .await
        .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        120,
        40,
    );
    let screen = tmux
        .wait_for("the held endpoint in the transcript", |s| {
            s.contains("which is held") && s.contains("rein config allow")
        })
        .await;
    assert!(screen.contains("http://127.0.0.1:9/v1"), "{screen}");
    tmux.send("hello", &["Enter"]);
    tmux.wait_for("the user's server's answer", |s| {
        s.contains("Answered by your own server.") && s.contains("● ready")
    })
    .await;
    assert_eq!(server.requests().len(), 1);
    tmux.quit_with_ctrl_c().await;
}

/// Issue 42: leaving the dashboard ends the session: `/quit`, Ctrl-D on an empty input
/// and Ctrl-C twice each run the SessionEnd hooks once with Claude Code's reason
/// `prompt_input_exit`, on the terminal rein leaves, which says rein waits for a slow one;
/// what the hook started with `setsid` does not outlive it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaving_the_dashboard_runs_the_session_end_hooks() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let rein_home = home.path().join("rein-home");
    std::fs::create_dir_all(&rein_home).unwrap();
    std::fs::write(rein_home.join("config.toml"), "[sandbox]\nmode = \"off\"\n").unwrap();
    let log = home.path().join("end.log");
    let pids = home.path().join("daemon.pids");
    let hook = support::script(
        home.path(),
        "end.sh",
        &format!(
            "cat >> {log}; echo >> {log}\n\
             setsid sh -c 'echo $$ >> {pids}; exec sleep 300' > /dev/null 2>&1 &\n\
             sleep 2\n",
            log = log.display(),
            pids = pids.display()
        ),
    );
    std::fs::write(
        rein_home.join("hooks.json"),
        json!({"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": hook}]}]}})
            .to_string(),
    )
    .unwrap();
    let server = ScriptedServer::start(vec![]).await.unwrap();
    let ways: [(&str, &[&str]); 3] = [("/quit", &["Enter"]), ("", &["C-d"]), ("", &["C-c"])];
    for (n, (text, keys)) in ways.into_iter().enumerate() {
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
        tmux.send(text, keys);
        if keys == ["C-c"] {
            tmux.wait_for("the quit hint", |s| s.contains("again to quit"))
                .await;
            tmux.send("", &["C-c"]);
        }
        let screen = tmux
            .wait_for("rein to quit after its hook", |s| {
                s.contains("rein exited: 0")
            })
            .await;
        assert!(
            screen.contains("waiting for the SessionEnd hooks to finish"),
            "{screen}"
        );
        let ends: Vec<serde_json::Value> = std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(ends.len(), n + 1, "{ends:?}");
        assert_eq!(ends[n]["reason"], "prompt_input_exit", "{:?}", ends[n]);
    }
    for pid in std::fs::read_to_string(&pids).unwrap().lines() {
        let pid: i32 = pid.trim().parse().unwrap();
        let mut gone = false;
        for _ in 0..500 {
            if !Path::new(&format!("/proc/{pid}")).exists()
                || std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                    s.rsplit_once(')')
                        .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
                })
            {
                gone = true;
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert!(gone, "the hook's daemon {pid} outlived rein");
    }
}
