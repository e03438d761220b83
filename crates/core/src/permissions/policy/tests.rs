//! Unit tests for the rule policy: bash rules and sensitive arguments, session grants, the
//! file tools' path rules, MCP tool rules and persisting what the user allowed.

use super::*;
use serde_json::json;

struct Fixture {
    project: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        Fixture {
            project: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        }
    }

    fn policy(&self, rules: &[(&str, RuleAction)]) -> RulePolicy {
        let entries: Vec<BashRuleEntry> = rules
            .iter()
            .map(|(pattern, action)| BashRuleEntry {
                pattern: pattern.to_string(),
                action: *action,
                file: self.project.path().join(".rein/config.toml"),
                project: true,
            })
            .collect();
        let sensitive: Vec<String> = crate::permissions::DEFAULT_SENSITIVE_READS
            .iter()
            .map(|s| s.to_string())
            .collect();
        RulePolicy::new(
            self.project.path(),
            &entries,
            &sensitive,
            Some(self.home.path()),
        )
        .unwrap()
    }

    fn check(&self, policy: &RulePolicy, tool: &str, args: serde_json::Value) -> Verdict {
        policy.check(&ToolRequest {
            tool,
            args: &args,
            root: self.project.path(),
        })
    }
}

fn bash(command: &str) -> serde_json::Value {
    json!({ "command": command })
}

#[test]
fn config_rules_come_after_the_defaults_and_win() {
    let f = Fixture::new();
    let p = f.policy(&[
        ("make *", RuleAction::Allow),
        ("cat secret*", RuleAction::Deny),
    ]);
    assert_eq!(f.check(&p, "bash", bash("make build")), Verdict::Allow);
    assert!(
        matches!(f.check(&p, "bash", bash("cat secret.txt")), Verdict::Deny { reason } if reason.contains("cat secret*"))
    );
    assert_eq!(f.check(&p, "bash", bash("cat notes.txt")), Verdict::Allow);
    assert!(matches!(
        f.check(&p, "bash", bash("python3 x.py")),
        Verdict::Ask { .. }
    ));
}

#[test]
fn bad_config_patterns_name_file_and_pattern() {
    let f = Fixture::new();
    let entries = [BashRuleEntry {
        pattern: "ls [".into(),
        action: RuleAction::Allow,
        file: PathBuf::from("/p/.rein/config.toml"),
        project: true,
    }];
    let e = RulePolicy::new(f.project.path(), &entries, &[], None).unwrap_err();
    let text = e.to_string();
    assert!(
        text.starts_with("/p/.rein/config.toml: [[permissions.bash]] pattern `ls [`"),
        "{text}"
    );
}

#[test]
fn allowed_commands_that_name_sensitive_files_ask() {
    let f = Fixture::new();
    let p = f.policy(&[]);
    for command in [
        "cat ~/.ssh/id_rsa",
        "head -n 3 $HOME/.aws/credentials",
        "grep KEY .env",
        "ls && cat config/.env",
        "diff --from-file=~/.gnupg/x y",
    ] {
        match f.check(&p, "bash", bash(command)) {
            Verdict::Ask { reason, grants } => {
                assert!(reason.contains("sensitive"), "{command}: {reason}");
                assert_eq!(grants.len(), 1, "{command}");
            }
            other => panic!("{command}: {other:?}"),
        }
    }
    assert_eq!(
        f.check(&p, "bash", bash("cat .env.example")),
        Verdict::Allow
    );
    // Names and metadata are not contents, unless the names are handed on.
    assert_eq!(f.check(&p, "bash", bash("ls -la ~/.ssh")), Verdict::Allow);
    assert_eq!(
        f.check(&p, "bash", bash("stat .env | head -1")),
        Verdict::Allow
    );
    assert!(matches!(
        f.check(&p, "bash", bash("ls -d ~/.ssh/* | xargs cat")),
        Verdict::Ask { .. }
    ));
    assert_eq!(f.check(&p, "bash", bash("grep -r env src")), Verdict::Allow);
}

/// `~user/` is judged as if it were the user's own home; `~+/` is the working folder
/// (the project), not a home; `~-/` is the previous folder, inherited from rein's
/// environment, which may be the home; and `REV:PATH` is looked into only where REV
/// has no `/` (a path that merely holds a colon is one path).
#[test]
fn home_forms_and_revision_paths_in_arguments() {
    let f = Fixture::new();
    let p = f.policy(&[]);
    for command in [
        "cat ~bob/.ssh/id_rsa",
        "git show main:~/.ssh/id_rsa",
        "cat ~-/.ssh/id_rsa",
        "cat ~+/.env",
    ] {
        assert!(
            matches!(f.check(&p, "bash", bash(command)), Verdict::Ask { .. }),
            "{command}"
        );
    }
    for command in [
        "cat ~+/.ssh/id_rsa",
        "cat /tmp/a:~/.ssh/id_rsa",
        // A flag is not a file, whatever it spells.
        "cat -/.env",
    ] {
        assert_eq!(
            f.check(&p, "bash", bash(command)),
            Verdict::Allow,
            "{command}"
        );
    }
}

#[test]
fn session_grants_let_the_approved_prefix_through() {
    let f = Fixture::new();
    let p = f.policy(&[]);
    let Verdict::Ask { grants, .. } = f.check(&p, "bash", bash("npm run build && ls")) else {
        panic!("npm asks");
    };
    assert_eq!(
        grants,
        [Grant::Bash(super::super::rules::prefix_pattern(
            "npm run build"
        ))]
    );
    p.grant(&grants);
    for command in ["npm run build && ls", "npm run build -- --prod"] {
        assert_eq!(f.check(&p, "bash", bash(command)), Verdict::Allow);
    }
    assert!(matches!(
        f.check(&p, "bash", bash("npm run deploy")),
        Verdict::Ask { .. }
    ));
    // A grant never lifts a deny, the built-in ones included, also when its pattern is
    // escaped as the prompt escapes it.
    p.grant(&[Grant::Bash("rm -rf build".into())]);
    p.grant(&[Grant::Bash(crate::permissions::rules::escape_glob(
        "rm -rf build/*.o",
    ))]);
    for command in ["npm run build; rm -rf build", "rm -rf build/*.o"] {
        assert!(
            matches!(f.check(&p, "bash", bash(command)), Verdict::Deny { .. }),
            "{command}"
        );
    }
    // Nor is it remembered: the only session rule is the one for `npm run build`.
    let session: Vec<String> = p
        .bash
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .rules()
        .iter()
        .filter(|r| r.origin == RuleOrigin::Session)
        .map(|r| r.pattern.clone())
        .collect();
    assert_eq!(
        session,
        [super::super::rules::prefix_pattern("npm run build")]
    );

    let Verdict::Ask { grants, .. } = f.check(&p, "bash", bash("cat ~/.ssh/config")) else {
        panic!("sensitive read asks");
    };
    p.grant(&grants);
    assert_eq!(
        f.check(&p, "bash", bash("cat ~/.ssh/config")),
        Verdict::Allow
    );
    assert!(matches!(
        f.check(&p, "bash", bash("cat ~/.ssh/id_rsa")),
        Verdict::Ask { .. }
    ));
}

#[test]
fn file_tools_follow_the_path_rules_and_grants() {
    let f = Fixture::new();
    let p = f.policy(&[]);
    let write = |path: &str| json!({"path": path, "content": "x"});
    assert_eq!(f.check(&p, "write_file", write("src/a.rs")), Verdict::Allow);
    assert!(matches!(
        f.check(&p, "str_replace", write(".git/config")),
        Verdict::Deny { .. }
    ));
    assert!(matches!(
        f.check(&p, "write_file", write(".rein/config.toml")),
        Verdict::Deny { .. }
    ));
    let outside = f.home.path().join("notes.txt").display().to_string();
    let Verdict::Ask { grants, .. } = f.check(&p, "write_file", write(&outside)) else {
        panic!("outside asks");
    };
    p.grant(&grants);
    assert_eq!(f.check(&p, "write_file", write(&outside)), Verdict::Allow);
    // The write grant is not a read grant of a sensitive file, nor another path.
    let other = f.home.path().join("other.txt").display().to_string();
    assert!(matches!(
        f.check(&p, "write_file", write(&other)),
        Verdict::Ask { .. }
    ));
    let key = f.home.path().join(".ssh/id_rsa").display().to_string();
    assert!(matches!(
        f.check(&p, "read_file", json!({"path": key})),
        Verdict::Ask { .. }
    ));
    assert_eq!(
        f.check(&p, "read_file", json!({"path": "/etc/hostname"})),
        Verdict::Allow
    );
}

#[test]
fn without_a_saver_project_rules_are_refused() {
    let f = Fixture::new();
    let p = f.policy(&[]);
    assert!(p.persist(&[Grant::Bash("npm run *".into())]).is_err());
}

#[test]
fn a_new_session_forgets_the_old_sessions_grants() {
    let f = Fixture::new();
    let p = f.policy(&[("make *", RuleAction::Allow)]);
    p.grant(&[Grant::Bash("npm test".into())]);
    let outside = f.home.path().join("n.txt");
    p.grant(&[Grant::Write(outside.clone())]);
    assert_eq!(f.check(&p, "bash", bash("npm test")), Verdict::Allow);
    p.forget_session_grants();
    assert!(matches!(
        f.check(&p, "bash", bash("npm test")),
        Verdict::Ask { .. }
    ));
    let write = json!({"path": outside.display().to_string(), "content": "x"});
    assert!(matches!(
        f.check(&p, "write_file", write),
        Verdict::Ask { .. }
    ));
    assert_eq!(
        f.check(&p, "bash", bash("make all")),
        Verdict::Allow,
        "config rules stay"
    );
}

#[test]
fn tools_without_rules_ask() {
    let f = Fixture::new();
    let p = f.policy(&[]);
    assert_eq!(
        f.check(&p, "launch_rockets", json!({})),
        Verdict::Ask {
            reason: "no permission rule covers the tool `launch_rockets`".into(),
            grants: Vec::new(),
        }
    );
    // The MCP tools' rules are for MCP tools: a rule allowing every tool there does
    // not reach a tool rein does not know.
    let user = "/home/u/.config/rein/config.toml";
    let p = tool_policy(&f, &[("*", RuleAction::Allow, user)]);
    assert!(matches!(
        f.check(&p, "launch_rockets", json!({})),
        Verdict::Ask { .. }
    ));
}

fn tool_policy(f: &Fixture, rules: &[(&str, RuleAction, &str)]) -> RulePolicy {
    let entries: Vec<ToolRuleEntry> = rules
        .iter()
        .map(|(pattern, action, file)| ToolRuleEntry {
            pattern: pattern.to_string(),
            action: *action,
            file: PathBuf::from(file),
            project: file.ends_with(".rein/config.toml"),
        })
        .collect();
    f.policy(&[]).with_tool_rules(&entries).unwrap()
}

#[test]
fn mcp_tools_follow_their_rules_and_ask_without_one() {
    let f = Fixture::new();
    let user = "/home/me/.config/rein/config.toml";
    let p = tool_policy(
        &f,
        &[
            ("mcp__github__*", RuleAction::Allow, user),
            ("mcp__*__delete_*", RuleAction::Deny, user),
        ],
    );
    let args = json!({"title": "x"});
    assert_eq!(
        f.check(&p, "mcp__github__create_issue", args.clone()),
        Verdict::Allow
    );
    match f.check(&p, "mcp__github__delete_repo", args.clone()) {
        Verdict::Deny { reason } => assert_eq!(
            reason,
            format!("`mcp__github__delete_repo` matches `mcp__*__delete_*` (deny) in {user}")
        ),
        other => panic!("{other:?}"),
    }
    match f.check(&p, "mcp__time__get_current_time", args.clone()) {
        Verdict::Ask { reason, grants } => {
            assert!(reason.contains("no [[permissions.tools]] rule"), "{reason}");
            assert_eq!(grants, [Grant::Tool("mcp__time__get_current_time".into())]);
        }
        other => panic!("{other:?}"),
    }
    // Without any tool rules an MCP tool asks too; other tools are not touched.
    let plain = f.policy(&[]);
    assert!(matches!(
        f.check(&plain, "mcp__github__create_issue", args),
        Verdict::Ask { .. }
    ));
    assert_eq!(f.check(&p, "bash", bash("ls")), Verdict::Allow);
}

#[test]
fn a_tool_grant_allows_that_tool_for_the_session_only() {
    let f = Fixture::new();
    let p = tool_policy(&f, &[("mcp__*__delete_*", RuleAction::Deny, "/u.toml")]);
    let Verdict::Ask { grants, .. } = f.check(&p, "mcp__gh__create_issue", json!({})) else {
        panic!("asks");
    };
    p.grant(&grants);
    assert_eq!(
        f.check(&p, "mcp__gh__create_issue", json!({})),
        Verdict::Allow
    );
    assert!(matches!(
        f.check(&p, "mcp__gh__create_pull", json!({})),
        Verdict::Ask { .. }
    ));
    // A grant never lifts a deny.
    p.grant(&[Grant::Tool("mcp__gh__delete_repo".into())]);
    assert!(matches!(
        f.check(&p, "mcp__gh__delete_repo", json!({})),
        Verdict::Deny { .. }
    ));
    p.forget_session_grants();
    assert!(matches!(
        f.check(&p, "mcp__gh__create_issue", json!({})),
        Verdict::Ask { .. }
    ));
}

#[test]
fn bad_tool_patterns_name_file_and_pattern() {
    let f = Fixture::new();
    let entries = [ToolRuleEntry {
        pattern: "mcp__[".into(),
        action: RuleAction::Deny,
        file: PathBuf::from("/p/.rein/config.toml"),
        project: true,
    }];
    let e = f.policy(&[]).with_tool_rules(&entries).unwrap_err();
    let text = e.to_string();
    assert!(
        text.starts_with("/p/.rein/config.toml: [[permissions.tools]] pattern `mcp__[`"),
        "{text}"
    );
}

#[test]
fn persisting_writes_bash_and_tool_rules_to_their_lists() {
    let f = Fixture::new();
    let saved = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let into = saved.clone();
    let saver: RuleSaver = std::sync::Arc::new(move |rules: &[(RuleList, &str)]| {
        let mut list = into.lock().unwrap();
        list.extend(rules.iter().map(|(l, p)| (*l, p.to_string())));
        Ok(PathBuf::from("/p/.rein/config.toml"))
    });
    let p = f.policy(&[]).with_saver(saver);
    let said = p
        .persist(&[
            Grant::Tool("mcp__gh__create_issue".into()),
            Grant::Bash("npm test".into()),
            Grant::Write("/x".into()),
        ])
        .unwrap();
    assert_eq!(
        said,
        "allowed `mcp__gh__create_issue`, `npm test` in this project from now on (/p/.rein/config.toml)"
    );
    assert_eq!(
        *saved.lock().unwrap(),
        [
            (RuleList::Tools, "mcp__gh__create_issue".to_string()),
            (RuleList::Bash, "npm test".to_string())
        ]
    );
    assert!(p.persist(&[Grant::Read("/x".into())]).is_err());
}

#[test]
fn rein_own_tools_are_allowed() {
    let f = Fixture::new();
    let p = f.policy(&[]);
    assert_eq!(
        f.check(&p, "write_todos", json!({"todos": []})),
        Verdict::Allow
    );
    assert_eq!(
        f.check(&p, "read_skill", json!({"name": "review"})),
        Verdict::Allow
    );
}
