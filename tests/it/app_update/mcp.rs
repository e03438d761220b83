//! MCP servers in the dashboard: ready or failed, /mcp, logging in and out off the loop,
//! allowing a project's server, and the MCP layer's keys.

use crate::support;

use crossterm::event::KeyCode;
use rein::app::state::{App, NoticeKind, SessionInfo};
use rein::app::{AppEvent, Effect};
use support::app::app;
use support::app::Script;

#[test]
fn mcp_servers_say_when_they_are_ready_or_fail_and_slash_mcp_lists_them() {
    use rein_core::mcp::{McpEvent, ServerState};
    let mut s = Script::with(app());
    s.send("/mcp");
    // The servers' layer opens over the listing; Esc closes it.
    s.plain(KeyCode::Esc);
    assert!(s
        .notices()
        .pop()
        .unwrap()
        .1
        .starts_with("No MCP servers run"));
    for (name, state) in [
        ("github", ServerState::Starting),
        ("time", ServerState::Starting),
        ("github", ServerState::Ready { tools: 12 }),
        (
            "time",
            ServerState::Failed {
                reason: "it exited during initialize".into(),
                stderr: vec!["ModuleNotFoundError: mcp".into()],
            },
        ),
    ] {
        s.at(AppEvent::Mcp(McpEvent::ServerState {
            name: name.into(),
            state,
        }));
    }
    let notices = s.notices();
    let texts: Vec<&str> = notices.iter().map(|(_, t)| t.as_str()).collect();
    assert!(
        texts.contains(&"MCP server github: ready, 12 tools"),
        "{texts:?}"
    );
    let failed = notices.last().unwrap();
    assert_eq!(failed.0, NoticeKind::Error);
    assert_eq!(
        failed.1,
        "MCP server time failed: it exited during initialize\n  ModuleNotFoundError: mcp"
    );
    s.send("/mcp");
    // The servers' layer opens over the listing; Esc closes it.
    s.plain(KeyCode::Esc);
    assert_eq!(
        s.notices().pop().unwrap().1,
        "MCP servers:\n  github: ready, 12 tools\n  time: failed: it exited during initialize"
    );
    let effects = s.send("/mcp restart time");
    assert!(
        matches!(effects.as_slice(), [Effect::RestartMcp(name)] if name == "time"),
        "{effects:?}"
    );
    s.send("/mcp restart");
    assert_eq!(
        s.app.hint.as_deref(),
        Some("/mcp restart: expected /mcp, /mcp restart NAME, /mcp allow NAME, /mcp login NAME or /mcp logout NAME")
    );
}

#[test]
fn slash_mcp_login_runs_off_the_loop_shows_its_steps_and_restarts_the_server_once_logged_in() {
    use rein::app::event::McpLoginStep;
    use rein_core::mcp::oauth::LoginOutcome;
    use rein_core::mcp::{McpEvent, ServerState};
    let mut s = Script::with(app());
    for (name, state) in [
        (
            "docs",
            ServerState::NeedsLogin {
                name: "docs".into(),
            },
        ),
        ("time", ServerState::Disabled),
    ] {
        s.at(AppEvent::Mcp(McpEvent::ServerState {
            name: name.into(),
            state,
        }));
    }
    s.send("/mcp");
    // The servers' layer opens over the listing; Esc closes it.
    s.plain(KeyCode::Esc);
    assert!(
        s.notices().pop().unwrap().1.contains(
            "docs: needs login: the server asks for an OAuth login; `rein mcp login docs` in a \
             shell, or /mcp login docs in the dashboard, logs in"
        ),
        "{:?}",
        s.notices()
    );

    // Unknown and disabled servers, and a second login while one runs, ask nothing of the loop.
    for (input, hint) in [
        (
            "/mcp login nope",
            "no MCP server named nope in this session; /mcp lists them",
        ),
        (
            "/mcp login time",
            "the MCP server time is disabled (enabled = false)",
        ),
    ] {
        let effects = s.send(input);
        assert!(
            effects.iter().all(|e| !matches!(e, Effect::LoginMcp(_))),
            "{effects:?}"
        );
        assert_eq!(s.app.hint.as_deref(), Some(hint));
    }
    let effects = s.send("/mcp login docs");
    assert!(
        matches!(effects.as_slice(), [Effect::LoginMcp(name)] if name == "docs"),
        "{effects:?}"
    );
    assert!(s
        .notices()
        .pop()
        .unwrap()
        .1
        .starts_with("logging in to the MCP server docs (OAuth)"));
    let effects = s.send("/mcp login docs");
    assert!(
        effects.iter().all(|e| !matches!(e, Effect::LoginMcp(_))),
        "{effects:?}"
    );
    assert_eq!(
        s.app.hint.as_deref(),
        Some("a login to docs is under way: finish it in the browser")
    );

    // The URL, capped, attributed to the server.
    let huge = format!("https://auth.example/authorize?x={}", "a".repeat(10_000));
    let effects = s.at(AppEvent::McpLogin {
        name: "docs".into(),
        step: McpLoginStep::Url(huge),
    });
    assert!(effects.is_empty());
    let (kind, text) = s.notices().pop().unwrap();
    assert_eq!(kind, NoticeKind::Info);
    assert!(text.starts_with(
        "MCP server docs: open this URL in a browser to log in (rein tries to open it):\n  https://auth.example/authorize?x=aaa"
    ), "{text}");
    assert!(
        text.ends_with('…') && text.chars().count() < 4200,
        "{}",
        text.len()
    );

    // A failure says why and lets a new login start.
    s.at(AppEvent::McpLogin {
        name: "docs".into(),
        step: McpLoginStep::Finished(Err("no answer from the browser within 300 s".into())),
    });
    assert_eq!(
        s.notices().pop().unwrap(),
        (
            NoticeKind::Error,
            "the login to the MCP server docs failed: no answer from the browser within 300 s"
                .to_string()
        )
    );
    assert!(matches!(
        s.send("/mcp login docs").as_slice(),
        [Effect::LoginMcp(_)]
    ));

    // Logged in: the server restarts, so its tools appear.
    let effects = s.at(AppEvent::McpLogin {
        name: "docs".into(),
        step: McpLoginStep::Finished(Ok(LoginOutcome::LoggedIn)),
    });
    assert!(
        matches!(effects.as_slice(), [Effect::RestartMcp(name)] if name == "docs"),
        "{effects:?}"
    );
    assert_eq!(
        s.notices().pop().unwrap().1,
        "logged in to the MCP server docs; restarting it"
    );
}

#[test]
fn slash_mcp_logout_forgets_the_tokens_through_the_loop_and_restarts_the_server() {
    use rein::app::event::McpLoginStep;
    use rein_core::mcp::{McpEvent, ServerState};
    let mut s = Script::with(app());
    s.at(AppEvent::Mcp(McpEvent::ServerState {
        name: "docs".into(),
        state: ServerState::Ready { tools: 1 },
    }));
    let effects = s.send("/mcp logout nope");
    assert!(effects.is_empty(), "{effects:?}");
    let effects = s.send("/mcp logout docs");
    assert!(
        matches!(effects.as_slice(), [Effect::LogoutMcp(name)] if name == "docs"),
        "{effects:?}"
    );
    let effects = s.at(AppEvent::McpLogin {
        name: "docs".into(),
        step: McpLoginStep::LoggedOut(Ok(true)),
    });
    assert!(matches!(effects.as_slice(), [Effect::RestartMcp(name)] if name == "docs"));
    assert_eq!(
        s.notices().pop().unwrap().1,
        "logged out of the MCP server docs: its tokens are forgotten; restarting it"
    );
    let effects = s.at(AppEvent::McpLogin {
        name: "docs".into(),
        step: McpLoginStep::LoggedOut(Ok(false)),
    });
    assert!(effects.is_empty());
    assert_eq!(
        s.notices().pop().unwrap().1,
        "the MCP server docs had no login to forget"
    );
}

#[test]
fn slash_mcp_allow_starts_a_projects_server_that_waits_and_nothing_else() {
    use rein_core::mcp::{McpEvent, ServerState, Unapproved};
    let mut s = Script::with(app());
    for (name, state) in [
        ("github", ServerState::Ready { tools: 3 }),
        (
            "db",
            ServerState::NotAllowed {
                launch: "node db.js".into(),
                why: Unapproved::New,
            },
        ),
        (
            "docs",
            ServerState::NotAllowed {
                launch: "https://docs.example/mcp [sends your token from GITHUB_TOKEN]".into(),
                why: Unapproved::Changed(vec![
                    "bearer_token_env: (unset) -> \"GITHUB_TOKEN\"".into()
                ]),
            },
        ),
    ] {
        s.at(AppEvent::Mcp(McpEvent::ServerState {
            name: name.into(),
            state,
        }));
    }
    s.send("/mcp");
    // The servers' layer opens over the listing; Esc closes it.
    s.plain(KeyCode::Esc);
    assert_eq!(
        s.notices().pop().unwrap().1,
        "MCP servers:\n  github: ready, 3 tools\n  db: not allowed yet: the project declares it; it \
         would run `node db.js` outside rein's sandbox (/mcp allow db allows it for this project)\n  \
         docs: not allowed since the project changed it (bearer_token_env: (unset) -> \"GITHUB_TOKEN\"); \
         it would run `https://docs.example/mcp [sends your token from GITHUB_TOKEN]` outside rein's \
         sandbox (/mcp allow docs allows it for this project)"
    );
    // Only a server that waits is allowed; the command line is said.
    let effects = s.send("/mcp allow github");
    assert!(
        effects.iter().all(|e| !matches!(e, Effect::AllowMcp(_))),
        "{effects:?}"
    );
    assert!(s
        .notices()
        .pop()
        .unwrap()
        .1
        .contains("github needs no approval"));
    let effects = s.send("/mcp allow nope");
    assert!(effects.iter().all(|e| !matches!(e, Effect::AllowMcp(_))));
    assert!(s
        .app
        .hint
        .as_deref()
        .unwrap()
        .contains("no MCP server named nope"));
    let effects = s.send("/mcp allow db");
    assert!(
        matches!(effects.as_slice(), [Effect::AllowMcp(name)] if name == "db"),
        "{effects:?}"
    );
    let said = s.notices().pop().unwrap().1;
    assert!(
        said.contains("runs `node db.js` outside rein's sandbox") && !said.contains("changed"),
        "{said}"
    );
    // What changed since the user allowed it before is said with the approval.
    let effects = s.send("/mcp allow docs");
    assert!(
        matches!(effects.as_slice(), [Effect::AllowMcp(name)] if name == "docs"),
        "{effects:?}"
    );
    let said = s.notices().pop().unwrap().1;
    assert!(
        said.ends_with(
            "(changed since you allowed it before:\n  bearer_token_env: (unset) -> \"GITHUB_TOKEN\")"
        ),
        "{said}"
    );
}

/// `/mcp` opens the servers' layer over its listing: a server that needs a login says so,
/// and `l` on it logs in (as `/mcp login NAME` does); Down moves, `r` restarts the selected
/// one, `a` allows a project's server that waits; each closes the layer.
#[test]
fn the_mcp_layer_logs_in_restarts_and_allows_on_a_key() {
    use rein::app::layer::Layer;
    use rein_core::mcp::{McpEvent, ServerState, Unapproved};
    let mut s = Script::with(App::new(SessionInfo::default(), 128_000));
    for (name, state) in [
        (
            "docs",
            ServerState::NeedsLogin {
                name: "docs".into(),
            },
        ),
        ("github", ServerState::Ready { tools: 3 }),
        (
            "db",
            ServerState::NotAllowed {
                launch: "node db.js".into(),
                why: Unapproved::New,
            },
        ),
    ] {
        s.at(AppEvent::Mcp(McpEvent::ServerState {
            name: name.into(),
            state,
        }));
    }
    s.send("/mcp");
    assert_eq!(Layer::top(&s.app), Layer::Mcp);
    let screen = support::app::draw(&s.app, 100, 24, s.now);
    assert!(screen.contains("MCP servers (3)"), "{screen}");
    assert!(screen.contains("› docs: needs login"), "{screen}");
    assert!(screen.contains("l log in"), "{screen}");
    let effects = s.plain(KeyCode::Char('l'));
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::LoginMcp(n) if n == "docs")),
        "{effects:?}"
    );
    assert!(s.app.mcp_panel.is_none(), "the layer closes");

    s.send("/mcp");
    s.plain(KeyCode::Down);
    let effects = s.plain(KeyCode::Char('r'));
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::RestartMcp(n) if n == "github")),
        "{effects:?}"
    );

    s.send("/mcp");
    s.plain(KeyCode::Down);
    s.plain(KeyCode::Down);
    s.plain(KeyCode::Down);
    let effects = s.plain(KeyCode::Char('a'));
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::AllowMcp(n) if n == "db")),
        "{effects:?}"
    );

    // Esc closes it and nothing happens; keys that are no action do nothing.
    s.send("/mcp");
    assert!(s.plain(KeyCode::Char('x')).is_empty());
    assert!(s.plain(KeyCode::Esc).is_empty());
    assert_eq!(Layer::top(&s.app), Layer::Main);
}
