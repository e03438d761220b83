//! Sessions in the dashboard: resuming from the picker, a long result read back from the session
//! file, an open session copied, a model switch mid-conversation, rewind, context and compact,
//! and the inputs of an earlier session.

use crate::support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use support::{Reply, ScriptedServer};

use super::{rein_command, Tmux};

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
    let deadline = Instant::now() + support::GIVE_UP;
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
