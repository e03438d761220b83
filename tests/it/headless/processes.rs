//! The commands rein runs: Ctrl-C, signals that end rein end them, and the environment they
//! see (no API key, no secret rein can recognise unless passed through).

use crate::support;

use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use support::{rein_command, stderr};
use support::{Reply, ScriptedServer};

use super::*;

#[tokio::test]
async fn ctrl_c_interrupts_the_turn_and_leaves_nothing_running() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::tool_calls(&[(
        "bash",
        &json!({"command": "sleep 86399 & echo $! > child.pid; wait"}).to_string(),
    )])
    .without_usage()])
    .await
    .unwrap();
    let child = rein_command(home.path())
        .args(print_args("wait", &server.base_url(), "m", project.path()))
        .arg("--yes") // `sleep` asks under the default rules
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid_file = project.path().join("child.pid");
    let deadline = std::time::Instant::now() + support::GIVE_UP;
    // The pid in the file is the sandbox's own (a PID namespace); find the host's by its
    // unique command line instead.
    loop {
        if pid_file.exists() && !running_with_args(&["sleep", "86399"]).is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the command never started"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let rein_pid = child.id().unwrap() as i32;
    // SAFETY: kill(2) on a pid we spawned; no memory is involved.
    unsafe { libc::kill(rein_pid, libc::SIGINT) };
    let out = tokio::time::timeout(support::GIVE_UP, child.wait_with_output())
        .await
        .expect("rein exits after Ctrl-C")
        .unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(stderr(&out).contains("interrupted"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("(estimated: the server sent no usage)"),
        "{}",
        stderr(&out)
    );
    // SIGKILL was sent before rein exited; the kernel finishes it off asynchronously.
    let gone = std::time::Instant::now() + support::GIVE_UP;
    while !running_with_args(&["sleep", "86399"]).is_empty() && std::time::Instant::now() < gone {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let left = running_with_args(&["sleep", "86399"]);
    assert!(
        left.is_empty(),
        "sleep 86399 survived Ctrl-C: pids {left:?}"
    );
}

/// Host pids of live (not zombie) processes whose command line is exactly `args`.
fn running_with_args(args: &[&str]) -> Vec<u32> {
    let want: Vec<u8> = args.iter().flat_map(|a| a.bytes().chain([0])).collect();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == want))
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .to_string();
            !stat.is_empty() && !state.starts_with('Z')
        })
        .collect()
}

#[tokio::test]
async fn commands_never_see_the_api_key_or_rein_variables() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", &json!({"command": "env"}).to_string())]),
        Reply::text("ok"),
    ])
    .await
    .unwrap();
    let out = output_of(
        rein_command(home.path())
            .args(print_args(
                "print env",
                &server.base_url(),
                "m",
                project.path(),
            ))
            .arg("--yes") // `env` asks under the default rules
            .env("REIN_API_KEY", "sk-secret-from-rein-env-1234")
            .env("OPENAI_API_KEY", "sk-secret-from-openai-env-5678")
            .env("OPENAI_ORG_ID", "org-visible-nowhere")
            .env("INNOCENT_COPY", "sk-secret-from-rein-env-1234")
            .env("HARMLESS_VARIABLE", "still-here"),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The key did reach the server, as a bearer token.
    assert!(server.request_headers()[0]
        .iter()
        .any(|(k, v)| k == "authorization" && v == "Bearer sk-secret-from-rein-env-1234"));
    let requests = server.requests();
    let env_output = last_stored(&requests[1])["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        env_output.contains("HARMLESS_VARIABLE=still-here"),
        "{env_output}"
    );
    for leaked in [
        "sk-secret",
        "org-visible-nowhere",
        "REIN_",
        "OPENAI_",
        "INNOCENT_COPY",
    ] {
        assert!(
            !env_output.contains(leaked),
            "{leaked} reached the command: {env_output}"
        );
    }
}

/// Processes whose command line is `sleep MARK`.
fn sleepers(mark: &str) -> Vec<i32> {
    let want = format!("sleep\0{mark}\0");
    std::fs::read_dir("/proc")
        .map(|dir| {
            dir.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
                .filter(|pid| {
                    std::fs::read(format!("/proc/{pid}/cmdline"))
                        .is_ok_and(|c| c == want.as_bytes())
                })
                .collect()
        })
        .unwrap_or_default()
}

async fn until(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + support::GIVE_UP;
    while !check() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Issue 12, item 4: without the sandbox, a command dies with rein, whether rein is
/// stopped by SIGTERM or SIGHUP (it ends the turn as Ctrl-C does) or killed by SIGKILL
/// (the command's shell has a parent-death signal).
#[tokio::test]
async fn commands_die_with_rein_on_sigterm_sighup_and_sigkill() {
    for (signal, mark) in [("TERM", "31337"), ("HUP", "31338"), ("KILL", "31339")] {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join("rein-home")).unwrap();
        std::fs::write(
            home.path().join("rein-home/config.toml"),
            "[sandbox]\nmode = \"off\"\n",
        )
        .unwrap();
        let args = json!({ "command": format!("sleep {mark}") }).to_string();
        let server = ScriptedServer::start(vec![
            Reply::tool_calls(&[("bash", args.as_str())]),
            Reply::text("done"),
        ])
        .await
        .unwrap();
        let mut child = rein_command(home.path())
            .args(print_args("go", &server.base_url(), "m", project.path()))
            .arg("--yes")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        until("the command to start", || !sleepers(mark).is_empty()).await;
        let pid = child.id().unwrap().to_string();
        let status = std::process::Command::new("kill")
            .args([format!("-{signal}"), pid])
            .status()
            .unwrap();
        assert!(status.success());
        let exited = tokio::time::timeout(support::GIVE_UP, child.wait())
            .await
            .expect("rein exits")
            .unwrap();
        if signal != "KILL" {
            assert_eq!(
                exited.code(),
                Some(if signal == "TERM" { 143 } else { 129 }),
                "{signal}"
            );
        }
        until(&format!("sleep {mark} to die after SIG{signal}"), || {
            sleepers(mark).is_empty()
        })
        .await;
    }
}

#[tokio::test]
async fn commands_never_see_a_secret_rein_can_recognise_unless_passed_through() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let key = "key-in-use-0123456789abcdef";
    std::fs::create_dir_all(home.path().join("rein-home")).unwrap();
    std::fs::write(
        home.path().join("rein-home/config.toml"),
        "[providers.corp]\nbase_url = \"http://corp.invalid/v1\"\napi_key_env = \"CORP_LLM\"\n\
         [mcp_servers.gh]\nurl = \"https://gh.invalid/mcp\"\nbearer_token_env = \"GH_BEARER\"\n\
         enabled = false\n",
    )
    .unwrap();
    std::fs::create_dir(project.path().join(".rein")).unwrap();
    std::fs::write(
        project.path().join(".rein/config.toml"),
        "[tools]\nenv_passthrough = [\"NPM_TOKEN\", \"SNEAKY\"]\n",
    )
    .unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", &json!({"command": "env"}).to_string())]),
        Reply::text("ok"),
    ])
    .await
    .unwrap();
    let out = output_of(
        rein_command(home.path())
            .args(print_args("env", &server.base_url(), "m", project.path()))
            .arg("--yes")
            .env("REIN_API_KEY", key)
            // By name.
            .env("DEEPSEEK_API_KEY", "deepseek-secret-value")
            .env("GITHUB_TOKEN", "github-token-value")
            .env("AWS_SECRET_ACCESS_KEY", "aws-secret-value")
            .env("SSH_AUTH_SOCK", "/tmp/ssh-agent-socket-value")
            // By value: the key in use, another provider's key, an MCP server's token,
            // a URL with a password.
            .env("INNOCENT_COPY", key)
            .env("WRAPPED", format!("Bearer {key}"))
            .env("CORP_LLM", "corp-provider-key-value")
            .env("GH_BEARER", "mcp-bearer-value")
            .env("COPY_OF_BEARER", "mcp-bearer-value")
            .env("DATABASE_URL", "postgres://app:db-password-value@db/app")
            // Passed through by the project: kept, but never the provider key.
            .env("NPM_TOKEN", "npm-token-passed")
            .env("SNEAKY", key)
            // What builds need.
            .env("CARGO_HOME", "/opt/cargo-home")
            .env("RUSTUP_TOOLCHAIN", "stable")
            .env("LANG", "C.UTF-8")
            .env("HARMLESS", "still-here"),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("passes NPM_TOKEN, SNEAKY to commands"),
        "{}",
        stderr(&out)
    );
    let seen = last_stored(&server.requests()[1])["content"]
        .as_str()
        .unwrap()
        .to_string();
    for kept in [
        "PATH=",
        "HOME=",
        "CARGO_HOME=/opt/cargo-home",
        "RUSTUP_TOOLCHAIN=stable",
        "LANG=C.UTF-8",
        "HARMLESS=still-here",
        "NPM_TOKEN=npm-token-passed",
    ] {
        assert!(seen.contains(kept), "{kept} is missing: {seen}");
    }
    for leaked in [
        key,
        "deepseek-secret-value",
        "github-token-value",
        "aws-secret-value",
        "ssh-agent-socket-value",
        "corp-provider-key-value",
        "mcp-bearer-value",
        "db-password-value",
        "SNEAKY",
    ] {
        assert!(
            !seen.contains(leaked),
            "{leaked} reached the command: {seen}"
        );
    }
}
