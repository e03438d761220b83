//! MCP servers from both files and their approval, rein's own folders as sensitive reads, and the command environment.

use super::*;

#[test]
fn mcp_servers_come_from_both_files_and_rein_config_lists_them_with_their_file() {
    let f = Fixture::new();
    f.write_user(
        "[mcp_servers.time]\ncommand = \"uvx\"\nargs = [\"mcp-server-time\"]\n\
         [mcp_servers.gh]\nurl = \"https://gh.example/mcp\"\nbearer_token_env = \"GH_TOKEN\"\n",
    );
    f.write_project(
        "[mcp_servers.time]\ncommand = \"./time-server\"\nenabled = false\n\
         [mcp_servers.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"fs\", \".\"]\ndeny = [\"write_*\"]\n\
         env_vars = [\"GITHUB_TOKEN\"]\nsubagents = \"read_only\"\n",
    );
    let c = f.load().unwrap();
    let servers: Vec<_> = c
        .mcp_servers
        .iter()
        .map(|s| {
            (
                s.name.as_str(),
                s.summary(),
                s.enabled,
                s.origin.path().to_path_buf(),
            )
        })
        .collect();
    assert_eq!(
        servers,
        [
            ("fs", "npx -y fs .".to_string(), true, f.project_file()),
            (
                "gh",
                "https://gh.example/mcp".to_string(),
                true,
                f.user_file()
            ),
            ("time", "./time-server".to_string(), false, f.project_file()),
        ]
    );
    let text = c.describe();
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("mcp_servers.{name} ")))
            .unwrap_or_else(|| panic!("no line for {name} in:\n{text}"))
            .to_string()
    };
    assert!(line("fs").contains(
        "stdio `npx -y fs .`, gets GITHUB_TOKEN, deny write_*, subagents get read-only tools, project server"
    ));
    assert!(line("fs").ends_with(&format!("({})", f.project_file().display())));
    assert!(line("gh").contains("http https://gh.example/mcp, token in GH_TOKEN"));
    assert!(line("gh").ends_with(&format!("({})", f.user_file().display())));
    assert!(line("time").contains("disabled, project server"));

    f.write_project("[mcp_servers.fs]\nurl = \"http://x\"\ncwd = \"a\"\n");
    let error = f.load().err().unwrap().to_string();
    assert_eq!(
        error,
        format!(
            "{}: key `mcp_servers.fs.cwd`: not used by a `url` (HTTP) server; it is for `command` servers",
            f.project_file().display()
        )
    );
}

/// rein's data folder holds every project's sessions, history and approvals: the file
/// tools and bash arguments ask before reading it (except this rein's own spill
/// folders), and no file tool writes into it or the config folder.
#[test]
fn reins_own_folders_are_a_sensitive_read_and_never_written() {
    use crate::permissions::{PermissionPolicy, ToolRequest, Verdict};
    let f = Fixture::new();
    let c = f.load().unwrap();
    let policy = c.policy(f.root.path(), Some(f.home.path()), true).unwrap();
    let data = f.rein_home.path();
    let other_session = data.join("sessions/other-project.jsonl");
    let own_spill = data.join(format!("spill/{}-3/call_1.txt", std::process::id()));
    let other_spill = data.join(format!("spill/{}-3/call_1.txt", std::process::id() + 1));
    let check = |tool: &str, args: serde_json::Value| {
        policy.check(&ToolRequest {
            tool,
            args: &args,
            root: f.root.path(),
        })
    };
    let read = |path: &Path| check("read_file", serde_json::json!({ "path": path }));
    assert!(matches!(read(&other_session), Verdict::Ask { .. }));
    assert!(matches!(read(&other_spill), Verdict::Ask { .. }));
    assert!(matches!(
        read(&data.join("trusted-mcp-servers.json")),
        Verdict::Ask { .. }
    ));
    assert_eq!(
        read(&own_spill),
        Verdict::Allow,
        "this rein's spill folders"
    );
    let write = |path: &Path| {
        check(
            "write_file",
            serde_json::json!({ "path": path, "content": "[]" }),
        )
    };
    assert!(matches!(
        write(&data.join("allowed-tools.json")),
        Verdict::Deny { .. }
    ));
    assert!(matches!(write(&f.user_file()), Verdict::Deny { .. }));
    let grep = format!("grep -r TOKEN {}", data.display());
    assert_eq!(policy.judge_bash(&grep).action, RuleAction::Ask, "{grep}");
    let cat = format!("cat {}", own_spill.display());
    assert_eq!(policy.judge_bash(&cat).action, RuleAction::Allow, "{cat}");
}

#[test]
fn env_passthrough_names_are_checked_listed_and_a_projects_is_warned_about() {
    let f = Fixture::new();
    let c = f.load().unwrap();
    assert!(c.env_passthrough.value.is_empty());
    assert!(c.describe().contains("tools.env_passthrough"));
    f.write_user("[tools]\nenv_passthrough = [\"GITHUB_TOKEN\", \"SSH_AUTH_SOCK\"]\n");
    let c = f.load().unwrap();
    assert_eq!(c.env_passthrough.value, ["GITHUB_TOKEN", "SSH_AUTH_SOCK"]);
    assert!(
        c.warnings(true).is_empty(),
        "the user's own list is trusted"
    );
    let listed = c.describe();
    let line = listed
        .lines()
        .find(|l| l.contains("tools.env_passthrough"))
        .unwrap();
    assert!(
        line.contains("GITHUB_TOKEN, SSH_AUTH_SOCK") && line.contains("config.toml"),
        "{line}"
    );
    // A project's list replaces the user's, and is said at start.
    f.write_project("[tools]\nenv_passthrough = [\"NPM_TOKEN\"]\n");
    let c = f.load().unwrap();
    assert_eq!(c.env_passthrough.value, ["NPM_TOKEN"]);
    let warnings = c.warnings(true);
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("passes NPM_TOKEN to commands")),
        "{warnings:?}"
    );
    f.write_project("[tools]\nenv_passthrough = [\"A B\"]\n");
    let e = f.error();
    assert!(
        e.contains(".rein/config.toml")
            && e.ends_with(
                "key `tools.env_passthrough`: \"A B\" is not an environment variable name"
            ),
        "{e}"
    );
    f.write_project("[tools]\nenv_passthrough = \"NPM_TOKEN\"\n");
    assert!(f.error().ends_with(
        "key `tools.env_passthrough`: expected an array of variable names, got string \"NPM_TOKEN\""
    ));
}

/// Every secret the settings know reaches the command environment: the keys of every
/// source and provider, secret-named headers, MCP servers' tokens and secret `env`.
#[test]
fn the_command_environment_knows_every_secret_of_the_settings() {
    let mut f = Fixture::new();
    f.set("REIN_API_KEY", "key-from-rein-env")
        .set("CORP_LLM", "corp-key-from-its-variable")
        .set("GH_BEARER", "mcp-bearer-from-its-variable");
    f.write_agents("API_KEY=key-from-agents-env\n");
    f.write_user(
        "api_key = \"key-from-the-user-file\"\n\
         [providers.corp]\nbase_url = \"http://corp.example/v1\"\napi_key_env = \"CORP_LLM\"\n\
         headers = { \"X-Api-Key\" = \"header-key-value\", \"X-Team\" = \"blue\" }\n\
         [mcp_servers.gh]\nurl = \"https://gh.example/mcp\"\nbearer_token_env = \"GH_BEARER\"\n\
         headers = { Authorization = \"Basic mcp-header-credential\" }\nenabled = false\n\
         [mcp_servers.db]\ncommand = \"db-server\"\n\
         env = { DB_PASSWORD = \"mcp-env-password\", LOG_LEVEL = \"debug\" }\n\
         [tools]\nenv_passthrough = [\"PASSED\", \"SNEAKY\"]\n",
    );
    let c = f.load().unwrap();
    let env = c.command_env(&f.env);
    let vars = [
        ("A", "key-from-rein-env"),
        ("B", "key-from-agents-env"),
        ("C", "key-from-the-user-file"),
        ("D", "corp-key-from-its-variable"),
        ("E", "header-key-value"),
        ("F", "mcp-bearer-from-its-variable"),
        ("G", "mcp-header-credential"),
        ("H", "mcp-env-password"),
        ("TEAM", "blue"),
        ("LEVEL", "debug"),
        ("PASSED", "mcp-env-password"),
        ("SNEAKY", "key-from-the-user-file"),
    ]
    .map(|(n, v)| (n.into(), v.into()));
    let removed: Vec<String> = env
        .removed(vars, &[])
        .into_iter()
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        removed,
        ["A", "B", "C", "D", "E", "F", "G", "H", "SNEAKY"],
        "a header or `env` value under an ordinary name is no secret; a passed-through \
         name keeps a token but never a provider key"
    );
}

/// Issue 22: a user's own server takes no path relative to something implicit: a relative
/// `cwd` or a `command` with a `/` in the user's file is an error naming the file and the
/// key; `${project}`, `~` and absolute paths are fine, and in a project's file a relative
/// one is the project's.
#[test]
fn a_users_server_names_the_project_explicitly_or_not_at_all() {
    let f = Fixture::new();
    let user = f.user_file().display().to_string();
    for (table, key) in [
        ("command = \"python3\"\ncwd = \"tools\"", "cwd"),
        ("command = \"python3\"\ncwd = \".\"", "cwd"),
        ("command = \"./server.sh\"", "command"),
        ("command = \"bin/srv\"", "command"),
        ("command = \"~user/srv\"", "command"),
    ] {
        f.write_user(&format!("[mcp_servers.t]\n{table}\n"));
        let err = f.error();
        assert!(
            err.starts_with(&format!("{user}: key `mcp_servers.t.{key}`: ")),
            "{table}: {err}"
        );
        let why = if key == "cwd" {
            "write an absolute path, `~/…`, or `${project}/…`"
        } else {
            "a command with a `/` must be an absolute path"
        };
        assert!(err.contains(why), "{err}");
    }
    f.write_user(
        "[mcp_servers.a]\ncommand = \"${project}/bin/srv\"\ncwd = \"${project}/tools\"\n\
         [mcp_servers.b]\ncommand = \"~/bin/srv\"\ncwd = \"~\"\n\
         [mcp_servers.c]\ncommand = \"/usr/bin/node\"\ncwd = \"/srv\"\n\
         [mcp_servers.d]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"${project}\"]\n",
    );
    assert_eq!(f.load().unwrap().mcp_servers.len(), 4);
    f.write_user("");
    f.write_project("[mcp_servers.p]\ncommand = \"./server.sh\"\ncwd = \"tools\"\n");
    assert_eq!(f.load().unwrap().mcp_servers.len(), 1);
}

/// Issue 22's reproduction: the user allows the project's HTTP server `docs`; the project
/// then adds `bearer_token_env = "GITHUB_TOKEN"`. The server is held again and the notice
/// says what changed. Every key of the table is pinned, however it is written.
#[test]
fn approving_a_projects_server_pins_its_whole_table() {
    use crate::consent::trust::TrustStore;
    use crate::mcp::external::startable;
    use crate::mcp::Unapproved;
    let f = Fixture::new();
    let root = f.root.path();
    let load = |text: &str| {
        f.write_project(text);
        f.load().unwrap()
    };
    let c = load("[mcp_servers.docs]\nurl = \"https://docs.example/mcp\"\n");
    let (mut trust, _) = TrustStore::load(&c.data_dir);
    let out = startable(&c.mcp_servers, &trust, root);
    assert!(out.start.is_empty());
    assert_eq!(out.held[0].why, Unapproved::New);
    // What `rein mcp allow docs` and `/mcp allow docs` store.
    trust
        .trust(root, "docs", &c.mcp_servers[0].declared.to_json())
        .unwrap();
    let (trust, _) = TrustStore::load(&c.data_dir);
    let out = startable(&c.mcp_servers, &trust, root);
    assert_eq!(out.start.len(), 1);
    assert!(out.held.is_empty() && out.notices.is_empty());
    // The same table written another way is the same approval.
    let c = load("# docs\n[mcp_servers.docs]\n\"url\" = \"https://docs.example/mcp\" # the same\n");
    assert_eq!(startable(&c.mcp_servers, &trust, root).start.len(), 1);

    let c = load(
        "[mcp_servers.docs]\nurl = \"https://docs.example/mcp\"\nbearer_token_env = \"GITHUB_TOKEN\"\n",
    );
    let out = startable(&c.mcp_servers, &trust, root);
    assert!(out.start.is_empty(), "the token is not sent without asking");
    let change = "bearer_token_env: (unset) -> \"GITHUB_TOKEN\"";
    assert_eq!(
        out.held[0].why,
        Unapproved::Changed(vec![change.to_string()])
    );
    let notice = &out.notices[0];
    assert!(
        notice.contains(&format!("changed since you allowed it ({change})"))
            && notice.contains("[sends your token from GITHUB_TOKEN]")
            && notice.contains("rein mcp allow docs"),
        "{notice}"
    );

    // Every key, HTTP and stdio, decides: each edit of an approved table is held again.
    let mut trust = trust;
    for (base, edits) in [
        (
            "url = \"https://docs.example/mcp\"\n",
            &[
                "url = \"https://evil.example/mcp\"\n",
                "url = \"https://docs.example/mcp\"\nheaders = { Authorization = \"x\" }\n",
                "url = \"https://docs.example/mcp\"\ntool_timeout_secs = 600\n",
                "url = \"https://docs.example/mcp\"\nsubagents = true\n",
            ][..],
        ),
        (
            "command = \"node\"\nargs = [\"db.js\"]\n",
            &[
                "command = \"node\"\nargs = [\"db.js\", \"--evil\"]\n",
                "command = \"node\"\nargs = [\"db.js\"]\nenv = { LD_PRELOAD = \"/tmp/x.so\" }\n",
                "command = \"node\"\nargs = [\"db.js\"]\nenv_vars = [\"AWS_SECRET_ACCESS_KEY\"]\n",
                "command = \"node\"\nargs = [\"db.js\"]\ncwd = \"/\"\n",
                "command = \"node\"\nargs = [\"db.js\"]\nstartup_timeout_secs = 99\n",
                "command = \"node\"\nargs = [\"db.js\"]\nallow = [\"*\"]\n",
                "command = \"node\"\nargs = [\"db.js\"]\ndeny = []\n",
                "command = \"node\"\nargs = [\"db.js\"]\nenabled = true\n",
            ][..],
        ),
    ] {
        let c = load(&format!("[mcp_servers.s]\n{base}"));
        trust
            .trust(root, "s", &c.mcp_servers[0].declared.to_json())
            .unwrap();
        assert_eq!(startable(&c.mcp_servers, &trust, root).start.len(), 1);
        for edit in edits {
            let c = load(&format!("[mcp_servers.s]\n{edit}"));
            let out = startable(&c.mcp_servers, &trust, root);
            assert!(
                out.start.is_empty()
                    && matches!(&out.held[0].why, Unapproved::Changed(c) if !c.is_empty()),
                "{edit}: {out:?}"
            );
        }
    }
}

/// An approval written by an older rein (the command line only) asks again, and says why.
#[test]
fn an_older_approval_asks_again_and_says_why() {
    use crate::mcp::external::startable;
    use crate::mcp::Unapproved;
    let f = Fixture::new();
    let root = f.root.path();
    f.write_project("[mcp_servers.db]\ncommand = \"node\"\nargs = [\"db.js\"]\n");
    let c = f.load().unwrap();
    fs::create_dir_all(&c.data_dir).unwrap();
    fs::write(
        c.data_dir.join("trusted-mcp-servers.json"),
        serde_json::json!([{"project": root, "server": "db", "launch": "node db.js"}]).to_string(),
    )
    .unwrap();
    let (trust, problem) = crate::consent::trust::TrustStore::load(&c.data_dir);
    assert_eq!(problem, None);
    let out = startable(&c.mcp_servers, &trust, root);
    assert_eq!(out.held[0].why, Unapproved::OlderApproval);
    assert!(
        out.notices[0].contains("allowed by an older rein, which pinned only its command line"),
        "{}",
        out.notices[0]
    );
}
