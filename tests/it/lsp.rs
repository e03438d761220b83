//! Language servers through the real binary: `rein -p` with a scripted model whose edits
//! a real pyright checks (from npm, in `$REIN_LSP_SERVERS`, `target/lsp-servers` by
//! default; `.ci/run` installs it there). Where it is missing a test says so and passes,
//! unless `REIN_LSP=1` (set by `.ci/run`) makes that a failure. The sandbox must work
//! (language servers run only inside it).

use crate::support;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use support::{Reply, ScriptedServer};

/// The folder of the installed servers' programs, or `None` (said) when pyright is not
/// there and `REIN_LSP` is not set.
fn servers_bin() -> Option<PathBuf> {
    let dir = std::env::var_os("REIN_LSP_SERVERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| support::repository().join("target/lsp-servers"));
    let bin = dir.join("node_modules/.bin");
    if bin.join("pyright-langserver").exists() {
        return Some(bin);
    }
    if std::env::var("REIN_LSP").is_ok_and(|v| v == "1") {
        panic!("REIN_LSP=1 but {} has no pyright-langserver", bin.display());
    }
    eprintln!(
        "skipped: pyright is not installed in {} (run .ci/run)",
        bin.display()
    );
    None
}

/// `rein -p PROMPT --yes` in `project` against `server`, with the servers in `bin` first
/// on `PATH`.
async fn run(home: &Path, project: &Path, server: &ScriptedServer, bin: &Path) -> String {
    run_with(home, project, server, bin, &["-p", "go"]).await
}

/// [`run`] with `args` after the common ones.
async fn run_with(
    home: &Path,
    project: &Path,
    server: &ScriptedServer,
    bin: &Path,
    args: &[&str],
) -> String {
    output(home, project, server, bin, args).await.1
}

/// [`run_with`]'s standard output and standard error.
async fn output(
    home: &Path,
    project: &Path,
    server: &ScriptedServer,
    bin: &Path,
    args: &[&str],
) -> (String, String) {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = support::rein_command(home)
        .env("PATH", path)
        .args([
            "--base-url",
            &server.base_url(),
            "--model",
            "m",
            "--yes",
            "--cwd",
        ])
        .arg(project)
        .args(args)
        .output()
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    (String::from_utf8_lossy(&out.stdout).into_owned(), err)
}

/// The text of the tool result the model got in request `n` (its last message).
fn result(server: &ScriptedServer, n: usize) -> String {
    let request: Value = server.requests()[n].clone();
    let last = request["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "tool", "{last}");
    last["content"].as_str().unwrap().to_string()
}

fn call(name: &str, args: Value) -> Reply {
    Reply::tool_calls(&[(name, &args.to_string())])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyright_reports_what_an_edit_broke_and_nothing_else() {
    let Some(bin) = servers_bin() else { return };
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    // An error that was there before any edit.
    support::write(
        &project.path().join("old.py"),
        "print(undefined_before)\n\nvalue = 1\n",
    );
    let server = ScriptedServer::start(vec![
        // 1: a clean new file.
        call(
            "write_file",
            json!({"path": "a.py", "content": "def f(x):\n    return x\n"}),
        ),
        // 2: another, calling it.
        call(
            "write_file",
            json!({"path": "b.py", "content": "from a import f\n\nprint(f(1))\n"}),
        ),
        // 3: a name that is not defined.
        call(
            "str_replace",
            json!({"path": "a.py", "old": "return x", "new": "return x + y"}),
        ),
        // 4: the signature changes: b.py's call breaks.
        call(
            "str_replace",
            json!({"path": "a.py", "old": "def f(x):", "new": "def f(x, y):"}),
        ),
        // 5: a clean edit of a file that had an error before.
        call(
            "str_replace",
            json!({"path": "old.py", "old": "value = 1", "new": "value = 2"}),
        ),
        Reply::text("Done."),
    ])
    .await
    .unwrap();
    let err = run(home.path(), project.path(), &server, &bin).await;
    let clean = result(&server, 1);
    assert!(clean.starts_with("Created a.py"), "{clean}\n{err}");
    assert!(
        !clean.contains("pyright"),
        "a clean write says nothing: {clean}\n{err}"
    );
    let second = result(&server, 2);
    assert!(!second.contains("pyright"), "{second}\n{err}");
    let undefined = result(&server, 3);
    assert!(
        undefined.contains("pyright reports 1 error this edit introduced:")
            && undefined.contains("a.py:2:")
            && undefined.contains("\"y\" is not defined"),
        "{undefined}\n{err}"
    );
    let signature = result(&server, 4);
    assert!(
        signature.contains("b.py:3:") && signature.contains("\"y\""),
        "the broken caller in another file: {signature}\n{err}"
    );
    assert!(
        !signature.contains("a.py:2:"),
        "the fixed error is not news: {signature}"
    );
    let before = result(&server, 5);
    assert!(
        before.starts_with("Replaced 1 occurrence in old.py") && !before.contains("pyright"),
        "an error that was there before is not blamed: {before}\n{err}"
    );
}

/// The fake server's script (`tests/lsp/fake_server.py`).
fn fake() -> String {
    support::repository()
        .join("tests/lsp/fake_server.py")
        .display()
        .to_string()
}

/// `[lsp.NAME]` running the fake server in `mode` for `.EXT` files, tagged with `tag` (so
/// its processes can be found), with `env` set.
fn fake_table(name: &str, mode: &str, tag: &str, env: &str) -> String {
    // The script itself is the command (its folder is made readable in the sandbox, even
    // under /tmp).
    format!(
        "[lsp.{name}]\ncommand = {:?}\nargs = [{mode:?}, {tag:?}]\nextensions = [{name:?}]\nenv = {{ {env} }}\n",
        fake()
    )
}

/// The processes whose command line holds `tag`.
fn tagged(tag: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(tag) {
            out.push(pid);
        }
    }
    out
}

/// No `bwrap` here: the sandbox tests run in CI, where it is installed.
fn no_sandbox() -> bool {
    let path = std::env::var_os("PATH");
    let missing = rein_core::lsp::spec::find_program("bwrap", path.as_deref()).is_none();
    if missing {
        eprintln!("skipped: bwrap is not installed");
    }
    missing
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_server_cannot_write_outside_the_project_or_reach_the_network() {
    if no_sandbox() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let escaped = home.path().join("escaped.txt");
    let tag = format!("tag-{}", std::process::id());
    // Commands may use the network here; a language server still may not.
    support::write(
        &home.path().join("rein-home/config.toml"),
        &format!(
            "[sandbox]\nnetwork = true\n\n{}",
            fake_table(
                "evil",
                "escape",
                &tag,
                &format!(
                    "ESCAPE_FILE = {:?}, ESCAPE_PORT = \"{port}\"",
                    escaped.display().to_string()
                ),
            )
        ),
    );
    let server = ScriptedServer::start(vec![
        call(
            "write_file",
            json!({"path": "x.evil", "content": "hello BAD\n"}),
        ),
        Reply::text("Done."),
    ])
    .await
    .unwrap();
    let err = run(
        home.path(),
        project.path(),
        &server,
        Path::new("/nonexistent"),
    )
    .await;
    let got = result(&server, 1);
    // It ran (the edit's error is its report of the attempts), in the project it may
    // write. (A write outside may seem to succeed inside: /tmp there is the sandbox's own.)
    assert!(
        got.contains("x.evil:1:7: outside: ") && got.contains("network: no; inside: ok (fake)"),
        "{got}\n{err}"
    );
    assert!(project.path().join("inside.txt").exists());
    assert!(!escaped.exists(), "it wrote outside the project\n{got}");
    assert!(
        matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "it reached the network"
    );
    assert!(tagged(&tag).is_empty(), "the server outlived rein");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_hangs_breaks_floods_or_dies_never_fails_an_edit() {
    if no_sandbox() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let tag = format!("faults-{}", std::process::id());
    let mut config = "[lsp]\nstart_timeout_ms = 1500\ndiagnostics_wait_ms = 3000\n".to_string();
    for mode in ["hang", "garbage", "flood", "crash", "normal"] {
        config.push_str(&fake_table(mode, mode, &tag, ""));
    }
    support::write(&home.path().join("rein-home/config.toml"), &config);
    let mut replies = Vec::new();
    for mode in ["hang", "garbage", "flood", "crash", "normal"] {
        let path = format!("a.{mode}");
        replies.push(call(
            "write_file",
            json!({"path": path, "content": "fine\n"}),
        ));
        replies.push(call(
            "str_replace",
            json!({"path": path, "old": "fine", "new": "BAD"}),
        ));
    }
    replies.push(Reply::text("Done."));
    let server = ScriptedServer::start(replies).await.unwrap();
    let err = run(
        home.path(),
        project.path(),
        &server,
        Path::new("/nonexistent"),
    )
    .await;
    for (i, mode) in ["hang", "garbage", "flood", "crash", "normal"]
        .iter()
        .enumerate()
    {
        let write = result(&server, 2 * i + 1);
        assert!(
            write.starts_with(&format!("Created a.{mode}")),
            "{write}\n{err}"
        );
        let edit = result(&server, 2 * i + 2);
        assert!(
            edit.starts_with(&format!("Replaced 1 occurrence in a.{mode}")),
            "{edit}\n{err}"
        );
        if *mode == "normal" {
            assert!(
                edit.contains("a.normal:1:1: BAD here (fake)"),
                "{edit}\n{err}"
            );
        } else {
            assert!(!edit.contains("BAD here"), "{edit}\n{err}");
        }
    }
    // Each fault is said to the user (again each time a restarted server fails again).
    for said in [
        "hang could not start: initialize failed: it did not answer initialize within 1.5 s",
        "garbage stopped: it sent what is not the protocol",
        "flood stopped: it sent a message of",
        "crash stopped: it closed its output",
    ] {
        let times = err.matches(said).count();
        assert!(
            (1..=rein_core::lsp::MAX_TRIES as usize).contains(&times),
            "{said}\n{err}"
        );
    }
    assert!(tagged(&tag).is_empty(), "a server outlived rein");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_asks_pyright_where_a_name_is_defined_used_and_what_it_is() {
    let Some(bin) = servers_bin() else { return };
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    support::write(
        &project.path().join("a.py"),
        "def greet(name: str) -> str:\n    \"\"\"Say hello.\"\"\"\n    return \"hi \" + name\n",
    );
    support::write(
        &project.path().join("b.py"),
        "from a import greet\n\nprint(greet(\"x\"))\n",
    );
    let ask = |args: Value| call("lsp", args);
    let server = ScriptedServer::start(vec![
        ask(json!({"operation": "definition", "path": "b.py", "line": 3, "symbol": "greet"})),
        ask(json!({"operation": "references", "path": "a.py", "line": 1, "symbol": "greet"})),
        ask(json!({"operation": "hover", "path": "a.py", "line": 1, "column": 5})),
        ask(json!({"operation": "symbols", "path": "a.py"})),
        ask(json!({"operation": "hover", "path": "a.py", "line": 9, "symbol": "greet"})),
        ask(json!({"operation": "definition", "path": "a.py", "line": 1, "symbol": "nope"})),
        ask(json!({"operation": "workspace_symbols", "query": "greet"})),
        Reply::text("Done."),
        Reply::text("Again."),
    ])
    .await
    .unwrap();
    let err = run(home.path(), project.path(), &server, &bin).await;
    let definition = result(&server, 1);
    assert_eq!(definition, "1 place of definition:\na.py:1:5", "{err}");
    let references = result(&server, 2);
    assert!(
        references.contains("a.py:1:5")
            && references.contains("b.py:1:15")
            && references.contains("b.py:3:7"),
        "{references}\n{err}"
    );
    let hover = result(&server, 3);
    assert!(hover.contains("def greet(name: str) -> str"), "{hover}");
    assert!(hover.contains("Say hello."), "{hover}");
    let symbols = result(&server, 4);
    assert!(symbols.contains("function greet (line 1)"), "{symbols}");
    let past_the_end = result(&server, 5);
    assert!(
        past_the_end.contains("a.py has 3 lines, not 9"),
        "{past_the_end}"
    );
    let not_there = result(&server, 6);
    assert!(
        not_there.contains("`nope` is not on line 1 of a.py, which reads: def greet"),
        "{not_there}"
    );
    let anywhere = result(&server, 7);
    assert!(anywhere.contains("function greet a.py:1:5"), "{anywhere}");
    // The tool is offered once a server runs, from the next turn: not in this turn's
    // requests, which extend each other byte for byte.
    let offered = |n: usize| {
        server.requests()[n]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["function"]["name"] == "lsp")
    };
    assert!(!offered(0) && !offered(7));
    // The next turn (here a continued session, whose history called it) offers it.
    let id = err
        .split("--resume ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .unwrap_or_else(|| panic!("a session id: {err}"))
        .to_string();
    run_with(
        home.path(),
        project.path(),
        &server,
        &bin,
        &["--resume", &id, "-p", "again"],
    )
    .await;
    assert!(offered(8), "the lsp tool is offered in the next turn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_errors_of_the_files_touched_are_a_diagnostics_event_in_jsonl() {
    let Some(bin) = servers_bin() else { return };
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        call(
            "write_file",
            json!({"path": "a.py", "content": "print(nowhere)\n"}),
        ),
        call(
            "str_replace",
            json!({"path": "a.py", "old": "nowhere", "new": "1"}),
        ),
        Reply::text("Done."),
    ])
    .await
    .unwrap();
    let args = ["--output-format", "jsonl", "-p", "go"];
    let (out, err) = output(home.path(), project.path(), &server, &bin, &args).await;
    let events: Vec<Value> = out
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "diagnostics")
        .collect();
    assert_eq!(
        events.len(),
        2,
        "one when it broke, one when it was fixed\n{out}\n{err}"
    );
    assert_eq!(events[0]["errors"], 1);
    assert_eq!(
        events[0]["files"][0],
        json!({"path": "a.py", "errors": 1, "warnings": 0})
    );
    assert_eq!(
        events[1],
        json!({"type": "diagnostics", "errors": 0, "warnings": 0, "files": []})
    );
    let servers: Vec<Value> = out
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "language_servers")
        .collect();
    assert_eq!(servers[0]["servers"][0]["name"], "pyright", "{out}");
    assert_eq!(servers[0]["servers"][0]["root"], ".", "{out}");
    assert_eq!(servers[0]["servers"][0]["state"], "running", "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_servers_word_comes_with_the_next_result() {
    if no_sandbox() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let tag = format!("slow-{}", std::process::id());
    support::write(
        &home.path().join("rein-home/config.toml"),
        &format!(
            "[lsp]\ndiagnostics_wait_ms = 300\n{}",
            fake_table("slow", "slow", &tag, "")
        ),
    );
    let server = ScriptedServer::start(vec![
        call(
            "write_file",
            json!({"path": "a.slow", "content": "fine\nBAD\n"}),
        ),
        call("bash", json!({"command": "sleep 2"})),
        Reply::text("Done."),
    ])
    .await
    .unwrap();
    let err = run(
        home.path(),
        project.path(),
        &server,
        Path::new("/nonexistent"),
    )
    .await;
    let write = result(&server, 1);
    assert!(
        write.contains("(slow had not reported on this edit within 0.3 s; what it finds comes with a later result)"),
        "{write}\n{err}"
    );
    let next = result(&server, 2);
    assert!(
        next.contains("(Late, about the earlier edit of a.slow:) slow reports 1 error this edit introduced:\na.slow:2:1: BAD here (fake)"),
        "{next}\n{err}"
    );
}

/// The first thing the session does is an edit that breaks a caller in a file nobody
/// opened, in a project with an error elsewhere: the caller is reported, the old error is
/// not (pyright's first check of the project is waited for before the edit).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_edit_reports_the_caller_it_broke_and_not_an_old_error_elsewhere() {
    let Some(bin) = servers_bin() else { return };
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    support::write(&project.path().join("a.py"), "def f(x):\n    return x\n");
    support::write(
        &project.path().join("b.py"),
        "from a import f\n\nprint(f(1))\n",
    );
    support::write(&project.path().join("old.py"), "print(undefined_before)\n");
    let server = ScriptedServer::start(vec![
        call(
            "str_replace",
            json!({"path": "a.py", "old": "def f(x):", "new": "def f(x, y):"}),
        ),
        Reply::text("Done."),
    ])
    .await
    .unwrap();
    let err = run(home.path(), project.path(), &server, &bin).await;
    let got = result(&server, 1);
    assert!(
        got.contains("pyright reports 1 error this edit introduced:\nb.py:3:7:"),
        "{got}\n{err}"
    );
    assert!(!got.contains("old.py"), "{got}");
}

/// `rein config` lists every language server: found on PATH (and where), not installed,
/// or turned off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rein_config_shows_the_servers_found() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let program = bin.path().join("pyright-langserver");
    support::write(&program, "#!/bin/sh\n");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    support::write(
        &home.path().join("rein-home/config.toml"),
        "[lsp.gopls]\nenabled = false\n\n[lsp.mine]\ncommand = \"/bin/true\"\nextensions = [\"x\"]\n",
    );
    let out = support::rein_command(home.path())
        .env("PATH", bin.path())
        .args(["--cwd"])
        .arg(project.path())
        .arg("config")
        .output()
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("lsp.{name} ")))
            .unwrap_or_else(|| panic!("no lsp.{name} in {text}"))
            .to_string()
    };
    assert!(
        line("pyright").ends_with(&format!(".py .pyi  found: {}", program.display())),
        "{text}"
    );
    assert!(line("gopls").ends_with("off"), "{text}");
    assert!(line("mine").ends_with(".x  found: /bin/true"), "{text}");
    assert!(
        line("clangd").contains("not installed (clangd is not on PATH)"),
        "{text}"
    );
}

/// A file a command changed (found by the turn's checkpoint) is told to its server, and
/// what that introduced comes with a later tool result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_command_broke_in_an_open_file_comes_with_a_later_result() {
    if no_sandbox() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let tag = format!("command-{}", std::process::id());
    support::write(
        &home.path().join("rein-home/config.toml"),
        &fake_table("normal", "normal", &tag, ""),
    );
    let server = ScriptedServer::start(vec![
        call(
            "write_file",
            json!({"path": "a.normal", "content": "fine\n"}),
        ),
        call(
            "bash",
            json!({"command": "printf 'fine\\nBAD\\n' > a.normal"}),
        ),
        call("bash", json!({"command": "sleep 1"})),
        call("bash", json!({"command": "true"})),
        Reply::text("Done."),
    ])
    .await
    .unwrap();
    let err = run(
        home.path(),
        project.path(),
        &server,
        Path::new("/nonexistent"),
    )
    .await;
    let later: String = (3..=4).map(|n| result(&server, n)).collect();
    assert!(
        later.contains("(After a command changed a.normal:) normal reports 1 error this edit introduced:\na.normal:2:1: BAD here (fake)"),
        "{later}\n{err}"
    );
    assert_eq!(
        later.matches("After a command changed").count(),
        1,
        "{later}"
    );
}
