//! Custom commands through the real binary: `rein -p "/name args"` sends the command
//! file's prompt with the arguments put in, the project's file winning over the user's,
//! and says on stderr where it came from and which files were skipped.

use crate::support;

use serde_json::Value;
use support::{Reply, ScriptedServer};

/// The last user message of a request, without the context note rein appends to it.
fn user_text(request: &Value) -> String {
    let text = request["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default();
    text.split_once("\n\n(rein context")
        .map_or(text, |(typed, _)| typed)
        .to_string()
}

fn run(
    home: &std::path::Path,
    project: &std::path::Path,
    url: &str,
    prompt: &str,
) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_rein"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("REIN_HOME", home.join("rein-home"))
        .args(["-p", prompt, "--base-url", url, "--model", "m", "--cwd"])
        .arg(project)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_custom_command_sends_its_expanded_prompt() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let user = home.path().join(".agents/commands");
    let own = project.path().join(".agents/commands");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::create_dir_all(&own).unwrap();
    std::fs::write(user.join("fix-issue.md"), "USER VERSION $ARGUMENTS").unwrap();
    std::fs::write(user.join("greet.md"), "Say hello to $1.").unwrap();
    std::fs::write(
        own.join("fix-issue.md"),
        "---\ndescription: Fix an issue\nargument-hint: <number> [area]\n---\nFix issue #$1 in $2 (asked: $ARGUMENTS).\n",
    )
    .unwrap();
    std::fs::write(own.join("broken.md"), "---\ndescription: never closed\n").unwrap();
    let server = ScriptedServer::start(vec![Reply::text("fixed"), Reply::text("hello")])
        .await
        .unwrap();

    let out = run(
        home.path(),
        project.path(),
        &server.base_url(),
        "/fix-issue 123 'the parser'",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("rein: /fix-issue expanded from .agents/commands/fix-issue.md"),
        "{err}"
    );
    assert!(
        err.contains("rein: warning: command .agents/commands/broken.md skipped: the front matter has no closing `---` line"),
        "{err}"
    );
    // Issue 41: the project's command hides the user's own of the same name, and says so.
    assert!(
        err.contains(
            "rein: warning: /fix-issue runs the project's .agents/commands/fix-issue.md, not \
             your own ~/.agents/commands/fix-issue.md, which it shadows"
        ),
        "{err}"
    );
    let out = run(
        home.path(),
        project.path(),
        &server.base_url(),
        "/greet Ann",
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("shadows"),
        "the user's own command hides nothing"
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        user_text(&requests[0]),
        "Fix issue #123 in the parser (asked: 123 'the parser')."
    );
    assert_eq!(
        user_text(&requests[1]),
        "Say hello to Ann.",
        "the user's own"
    );
}

/// Issue 28: a `/word` that is no custom command is refused headless too (exit 2), as the
/// dashboard refuses it, rather than sent to the model as a message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_command_is_refused_not_sent() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("ok")])
        .await
        .unwrap();
    let out = run(
        home.path(),
        project.path(),
        &server.base_url(),
        "/review this",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("unknown command /review"), "{stderr}");
    assert!(server.requests().is_empty());
}

/// Issue 25: a cloned repository's command file that multiplies its arguments cannot
/// build a prompt of gigabytes: the expansion stops at 4 MiB, says so, and the turn runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expansion_past_its_cap_is_cut_and_said() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let own = project.path().join(".agents/commands");
    std::fs::create_dir_all(&own).unwrap();
    // 65 KB of `$ARGUMENTS $1 `: with a 50 KB argument, about 460 MB uncut.
    std::fs::write(own.join("x.md"), "$ARGUMENTS $1 ".repeat(4_600)).unwrap();
    let server = ScriptedServer::start(vec![Reply::text("ok")])
        .await
        .unwrap();
    let out = run(
        home.path(),
        project.path(),
        &server.base_url(),
        &format!("/x {}", "a".repeat(50_000)),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("the prompt expanded from .agents/commands/x.md was cut at 4 MiB"),
        "{err}"
    );
    let sent = user_text(&server.requests()[0]);
    assert!(sent.len() <= 4 << 20, "{} bytes sent", sent.len());
}
