//! The dashboard as a person uses it: the real binary in a real terminal (tmux), against the
//! scripted model server. Keys go in with `send-keys`, the screen comes back with
//! `capture-pane`. `.ci/run` installs tmux.

use crate::support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

mod approvals;
mod hooks;
mod input;
mod keys;
mod sessions;
mod terminal;

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
        let deadline = Instant::now() + support::GIVE_UP;
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
    /// quit): rein must quit.
    async fn quit_with_ctrl_c(&self) {
        self.send("", &["C-c"]);
        self.wait_for("the hint of the first Ctrl-C", |s| {
            s.contains("press Ctrl-C again to quit")
        })
        .await;
        assert!(self.alive(), "one Ctrl-C quit");
        self.send("", &["C-c"]);
        let deadline = Instant::now() + support::GIVE_UP;
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

/// What tmux says about the pane (`#{pane_pid}`, `#{alternate_on}`, `#{pane_dead}`).
fn pane(tmux: &Tmux, format: &str) -> String {
    let out = Command::new("tmux")
        .args(["display-message", "-p", "-t", &tmux.name, format])
        .output()
        .expect("tmux display-message");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
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
