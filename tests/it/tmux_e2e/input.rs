//! The input's helpers: the slash list and a custom command, the external editor (Ctrl-G) and
//! one that fails, the @ file finder.

use crate::support;

use std::path::Path;

use support::{Reply, ScriptedServer};

use super::{pane, rein_command, Tmux};

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
        s.contains("commands (21)") && s.contains("/help") && s.contains("Tab complete")
    })
    .await;
    tmux.send("rev", &[]);
    tmux.wait_for("the list filtered to the custom command", |s| {
        s.contains("commands (1 of 21)")
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
