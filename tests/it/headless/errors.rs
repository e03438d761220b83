//! Configuration and errors: an unreachable endpoint, a refused key, a missing model and a bad
//! config, `rein config`, a base URL that is not a URL, a prompt that does not wait for a
//! hanging window probe.

use crate::support;

use serde_json::Value;
use support::{rein_command, stderr, stdout};
use support::{Reply, ScriptedServer};

use super::*;

#[tokio::test]
async fn unreachable_endpoint_exits_non_zero_with_a_clear_message() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".rein")).unwrap();
    std::fs::write(
        project.path().join(".rein/config.toml"),
        "[client]\nmax_tries = 2\n",
    )
    .unwrap();
    // A port nothing listens on: bind one, then free it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let out = rein(home.path(), print_args("hi", &url, "m", project.path())).await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    // Worded as the dashboard words it (`rein::describe::retry`).
    assert!(err.contains("rein: retrying in "), "{err}");
    assert!(err.contains("s (attempt 2 of 2): "), "{err}");
    assert!(err.contains("cannot reach the model server"), "{err}");
    assert!(
        !err.contains("panicked") && !err.contains("Backtrace"),
        "{err}"
    );
}

#[tokio::test]
async fn refused_key_exits_non_zero_with_the_servers_words() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::error(401, "Incorrect API key provided")])
        .await
        .unwrap();
    let out = rein(
        home.path(),
        print_args("hi", &server.base_url(), "m", project.path()),
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("401"), "{}", stderr(&out));
    assert!(stderr(&out).contains("Incorrect API key provided"));
}

#[tokio::test]
async fn missing_model_and_bad_config_are_one_line_errors() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let cwd = project.path().to_str().unwrap();
    let out = rein(
        home.path(),
        [
            "-p",
            "hi",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--cwd",
            cwd,
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no model configured"),
        "{}",
        stderr(&out)
    );

    std::fs::create_dir(project.path().join(".rein")).unwrap();
    std::fs::write(
        project.path().join(".rein/config.toml"),
        "[tools]\nbash_timeout_secs = \"soon\"\n",
    )
    .unwrap();
    let out = rein(home.path(), ["-p", "hi", "--model", "m", "--cwd", cwd]).await;
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("config.toml") && err.contains("bash_timeout_secs"),
        "{err}"
    );
}

#[tokio::test]
async fn config_command_shows_sources_and_masks_the_key() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let out = output_of(
        rein_command(home.path())
            .args([
                "config",
                "--cwd",
                project.path().to_str().unwrap(),
                "--model",
                "from-flag",
            ])
            .env("REIN_API_KEY", "sk-abcdefghijklmnopwxyz")
            .env("OPENAI_BASE_URL", "http://example.invalid/v1"),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.contains("sk-abcdefghijklmnopwxyz"), "{text}");
    assert!(text.contains("wxyz"), "{text}");
    let line = |key: &str| {
        text.lines()
            .find(|l| l.starts_with(key))
            .unwrap_or_else(|| panic!("{key} in {text}"))
            .to_string()
    };
    assert!(
        line("model").contains("from-flag") && line("model").contains("--model"),
        "{text}"
    );
    assert!(line("api_key").contains("REIN_API_KEY"), "{text}");
    assert!(line("base_url").contains("OPENAI_BASE_URL"), "{text}");
    assert!(
        line("context_window").contains("128000") && line("context_window").contains("default"),
        "{text}"
    );
}

/// Issue 14: `rein config` says where the keymap comes from, and a bad entry of the
/// user's keymap is one warning naming the file, the mode and the key.
#[tokio::test]
async fn config_command_names_the_keymap_source() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let cwd = project.path().to_str().unwrap();
    let out = rein(home.path(), ["config", "--cwd", cwd]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).lines().any(|l| l == "keymap     built-in"),
        "{}",
        stdout(&out)
    );
    let rein_home = home.path().join("rein-home");
    std::fs::create_dir_all(&rein_home).unwrap();
    let keymap = rein_home.join("keymap.toml");
    std::fs::write(
        &keymap,
        "global = [\n  { on = \"f5\", action = \"help\" },\n  { on = \"ctrl-q\", action = \"quit\" },\n  { on = \"hyper-x\", action = \"help\" },\n]\n",
    )
    .unwrap();
    let out = rein(home.path(), ["config", "--cwd", cwd]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let expected = format!("keymap     built-in + {} (2 bindings)", keymap.display());
    assert!(
        stdout(&out).lines().any(|l| l == expected),
        "{}",
        stdout(&out)
    );
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "{}: mode global, key hyper-x: unknown key",
            keymap.display()
        )),
        "{err}"
    );
}

/// A server that never says its window: a short prompt goes at once (the question still
/// open), a long one waits for the question to give up (two seconds) and then goes in the
/// configured window.
#[tokio::test]
async fn a_short_prompt_does_not_wait_for_a_window_probe_that_hangs() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("short answer"), Reply::text("long")])
        .await
        .unwrap();
    server.hang_props();
    let mut args = print_args("hello", &server.base_url(), "scripted", project.path());
    args.extend(["--output-format".into(), "jsonl".into()]);
    let out = rein(home.path(), &args).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert_eq!(server.probes(), 1, "the server was asked");
    let lines = stdout(&out);
    // A prompt that waited would have the question give up (a `window_learnt`) before
    // its reply; one that went at once has it after its reply, if at all.
    let reply_at = lines
        .find("short answer")
        .unwrap_or_else(|| panic!("{lines}"));
    assert!(
        lines
            .find("\"window_learnt\"")
            .is_none_or(|learnt_at| learnt_at > reply_at),
        "the prompt waited for the window: {lines}"
    );

    // 20 000 characters are not clearly small: the request waits for the answer, which
    // never comes; after the two seconds it goes in the configured window.
    let long = "word ".repeat(4_000);
    let mut args = print_args(&long, &server.base_url(), "scripted", project.path());
    args.extend(["--output-format".into(), "jsonl".into()]);
    let out = rein(home.path(), &args).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let events: Vec<Value> = stdout(&out)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let at = |kind: &str| events.iter().position(|e| e["type"] == kind);
    let learnt = at("window_learnt").expect("the question gave up");
    assert_eq!(events[learnt]["window"], 128_000);
    assert!(events[learnt].get("url").is_none());
    assert!(learnt < at("request_started").expect("a request"));
    assert_eq!(server.requests().len(), 2);
}

/// Issue 25, item 3: a base URL that cannot work is a configuration error like any other:
/// exit 2, one line, and no session left behind.
#[tokio::test]
async fn a_base_url_that_is_not_a_url_is_a_configuration_error() {
    for (url, says) in [
        ("127.0.0.1:8080/v1", "is not a URL"),
        ("ftp://example.com/v1", "is not http:// or https://"),
    ] {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let out = rein(home.path(), print_args("hi", url, "m", project.path())).await;
        assert_eq!(out.status.code(), Some(2), "{url}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{}", stderr(&out));
        let sessions = home.path().join("rein-home/sessions");
        let left = std::fs::read_dir(&sessions).map(|d| d.count()).unwrap_or(0);
        assert_eq!(
            left,
            0,
            "{url}: a session was left in {}",
            sessions.display()
        );
    }
}
