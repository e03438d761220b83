//! Logging in from the dashboard with /mcp login.

use crate::support;

use std::process::Command;

use support::{Reply, ScriptedServer};

use super::{home_for, text, Fake, Fault, TOKEN};

/// A tmux session running one command; killed on drop.
struct Tmux {
    name: String,
    /// No real model runs beside a session (`support::machine`).
    _machine: support::machine::Share,
}

impl Tmux {
    fn start(command: &[String]) -> Tmux {
        let machine = support::machine::share();
        let name = format!("rein-oauth-{}-{}", std::process::id(), TOKEN.len());
        let out = Command::new("tmux")
            .args([
                "new-session",
                "-d",
                "-s",
                &name,
                "-x",
                "120",
                "-y",
                "40",
                "--",
            ])
            .args(command)
            .output()
            .expect("tmux runs (install it: apt install tmux)");
        assert!(out.status.success(), "{}", text(&out.stderr));
        Tmux {
            name,
            _machine: machine,
        }
    }

    fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["capture-pane", "-p", "-J", "-S", "-200", "-t", &self.name])
            .output()
            .expect("tmux capture-pane");
        text(&out.stdout)
    }

    /// Press one key (a tmux key name, or a character), nothing after it.
    fn key(&self, key: &str) {
        let status = Command::new("tmux")
            .args(["send-keys", "-t", &self.name, key])
            .status()
            .expect("tmux send-keys");
        assert!(status.success());
    }

    fn send(&self, typed: &str) {
        for args in [vec!["-l", typed], vec!["Enter"]] {
            let status = Command::new("tmux")
                .args(["send-keys", "-t", &self.name])
                .args(args)
                .status()
                .expect("tmux send-keys");
            assert!(status.success());
        }
    }

    /// Wait until the screen satisfies `check`; fail with the screen otherwise.
    async fn wait_for(&self, what: &str, check: impl Fn(&str) -> bool) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let screen = self.screen();
            if check(&screen) {
                return screen;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "timed out waiting for {what}; the screen:\n{screen}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.name])
            .status();
    }
}

/// The dashboard says the server needs a login; `l` in `/mcp`'s layer logs in through the
/// browser in the background, the server restarts with its tool (offered to the model
/// from the next turn), and `/mcp logout docs` forgets the tokens: it needs a login again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_logs_in_with_slash_mcp_login_and_the_tool_appears() {
    if Command::new("tmux").arg("-V").output().is_err() {
        return;
    }
    let fake = Fake::start(Fault::None).await;
    let home = home_for(&fake, "");
    let project = tempfile::tempdir().unwrap();
    let model = ScriptedServer::start(vec![Reply::text("Hello there.")])
        .await
        .unwrap();
    let browser = support::script(
        home.path(),
        "browser",
        "exec curl -s -L -o /dev/null \"$1\"\n",
    );
    let command: Vec<String> = vec![
        "env".into(),
        "-i".into(),
        format!("PATH={}", std::env::var("PATH").unwrap_or_default()),
        format!("HOME={}", home.path().display()),
        format!("REIN_HOME={}", home.path().join("rein-home").display()),
        format!("BROWSER={browser}"),
        "TERM=xterm-256color".into(),
        "LANG=C.UTF-8".into(),
        env!("CARGO_BIN_EXE_rein").into(),
        "--base-url".into(),
        model.base_url(),
        "--model".into(),
        "m".into(),
        "--cwd".into(),
        project.path().display().to_string(),
    ];
    let tmux = Tmux::start(&command);
    tmux.wait_for("the server needing a login", |s| {
        s.contains("MCP server docs: needs login") && s.contains("/mcp login docs")
    })
    .await;
    // `/mcp` opens the servers' layer, which says so too; `l` logs in.
    tmux.send("/mcp");
    tmux.wait_for("the servers' layer", |s| {
        s.contains("MCP servers (1)") && s.contains("› docs: needs login") && s.contains("l log in")
    })
    .await;
    tmux.key("l");
    let screen = tmux
        .wait_for("the server ready", |s| {
            s.contains("MCP server docs: ready, 1 tool")
        })
        .await;
    assert!(
        screen.contains("open this URL in a browser to log in") && screen.contains("/authorize?"),
        "{screen}"
    );
    assert!(
        screen.contains("logged in to the MCP server docs; restarting it"),
        "{screen}"
    );
    assert_eq!(fake.seen("/authorize").len(), 1);
    assert!(home.path().join("rein-home/mcp-oauth/docs.json").exists());

    tmux.send("hi");
    tmux.wait_for("the reply", |s| s.contains("Hello there."))
        .await;
    let tools: Vec<String> = model.requests()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(
        tools.contains(&"mcp__docs__whoami".to_string()),
        "{tools:?}"
    );

    tmux.send("/mcp logout docs");
    tmux.wait_for("the logout", |s| {
        s.contains("logged out of the MCP server docs")
            && s.matches("MCP server docs: needs login").count() >= 2
    })
    .await;
    assert!(!home.path().join("rein-home/mcp-oauth/docs.json").exists());
}
