//! Permission rules and sandbox settings from both files, a project's limits, and saved rules.

use super::*;

// ---- permissions and sandbox ----

#[test]
fn bash_rules_add_up_user_file_first_then_project_file() {
    let f = Fixture::new();
    f.write_user(
        "[[permissions.bash]]\npattern = \"make *\"\naction = \"allow\"\n\
         [[permissions.bash]]\npattern = \"git push*\"\naction = \"ask\"\n",
    );
    f.write_project("[[permissions.bash]]\npattern = \"make deploy*\"\naction = \"deny\"\n");
    let c = f.load().unwrap();
    let rules: Vec<(&str, RuleAction, &Path)> = c
        .bash_rules
        .iter()
        .map(|r| (r.pattern.as_str(), r.action, r.file.as_path()))
        .collect();
    assert_eq!(
        rules,
        [
            ("make *", RuleAction::Allow, f.user_file().as_path()),
            ("git push*", RuleAction::Ask, f.user_file().as_path()),
            ("make deploy*", RuleAction::Deny, f.project_file().as_path()),
        ]
    );
    assert!(c.describe().contains("permissions.bash"));
    assert!(c.describe().contains("deny `make deploy*`"));
}

#[test]
fn bad_bash_rules_name_the_rule_and_field() {
    let f = Fixture::new();
    let path = f.project_file().display().to_string();
    f.write_project("[[permissions.bash]]\npattern = \"ls\"\naction = \"maybe\"\n");
    assert_eq!(
        f.error(),
        format!("{path}: key `permissions.bash[0].action`: expected \"allow\", \"ask\" or \"deny\", got \"maybe\"")
    );
    f.write_project(
        "[[permissions.bash]]\npattern = \"ls\"\naction = \"allow\"\n[[permissions.bash]]\naction = \"deny\"\n",
    );
    assert_eq!(
        f.error(),
        format!("{path}: key `permissions.bash[1].pattern`: missing")
    );
    f.write_project("[[permissions.bash]]\npattern = \"ls\"\naction = \"allow\"\nwhen = 1\n");
    assert!(
        f.error()
            .contains("`permissions.bash[0].when`: unknown key"),
        "{}",
        f.error()
    );
    f.write_project("[permissions]\nbash = \"ls\"\n");
    assert!(f
        .error()
        .contains("key `permissions.bash`: expected [[permissions.bash]] tables"));
    f.write_project("[permissions]\nsensitive_reads = [\"a\", 3]\n");
    assert!(f.error().ends_with(
        "key `permissions.sensitive_reads`: expected an array of strings, got an array"
    ));
}

#[test]
fn tool_rules_add_up_user_file_first_then_project_file_and_the_later_wins() {
    use crate::permissions::{PermissionPolicy, ToolRequest, Verdict};
    let f = Fixture::new();
    f.write_user(
        "[[permissions.tools]]\npattern = \"mcp__github__*\"\naction = \"allow\"\n\
         [[permissions.tools]]\npattern = \"mcp__*__delete_*\"\naction = \"deny\"\n",
    );
    f.write_project(
        "[[permissions.tools]]\npattern = \"mcp__github__create_*\"\naction = \"ask\"\n",
    );
    let c = f.load().unwrap();
    let rules: Vec<(&str, RuleAction, &Path)> = c
        .tool_rules
        .iter()
        .map(|r| (r.pattern.as_str(), r.action, r.file.as_path()))
        .collect();
    assert_eq!(
        rules,
        [
            ("mcp__github__*", RuleAction::Allow, f.user_file().as_path()),
            (
                "mcp__*__delete_*",
                RuleAction::Deny,
                f.user_file().as_path()
            ),
            (
                "mcp__github__create_*",
                RuleAction::Ask,
                f.project_file().as_path()
            ),
        ]
    );
    assert!(c.describe().contains("ask `mcp__github__create_*`"));
    let policy = c.policy(f.root.path(), Some(f.home.path()), true).unwrap();
    let check = |tool: &str| {
        policy.check(&ToolRequest {
            tool,
            args: &serde_json::json!({}),
            root: f.root.path(),
        })
    };
    assert_eq!(check("mcp__github__list_issues"), Verdict::Allow);
    assert!(matches!(
        check("mcp__github__delete_repo"),
        Verdict::Deny { .. }
    ));
    match check("mcp__github__create_issue") {
        Verdict::Ask { reason, .. } => assert_eq!(
            reason,
            format!(
                "`mcp__github__create_issue` matches `mcp__github__create_*` (ask) in {}",
                f.project_file().display()
            )
        ),
        other => panic!("{other:?}"),
    }
    assert!(matches!(check("mcp__time__now"), Verdict::Ask { .. }));
}

#[test]
fn bad_tool_rules_name_the_file_and_key() {
    let f = Fixture::new();
    let path = f.project_file().display().to_string();
    f.write_project("[[permissions.tools]]\npattern = \"mcp__x__*\"\naction = \"yes\"\n");
    assert_eq!(
        f.error(),
        format!("{path}: key `permissions.tools[0].action`: expected \"allow\", \"ask\" or \"deny\", got \"yes\"")
    );
    f.write_project("[[permissions.tools]]\npattern = \"\"\naction = \"allow\"\n");
    assert_eq!(
        f.error(),
        format!("{path}: key `permissions.tools[0].pattern`: the pattern is empty")
    );
    f.write_project("[[permissions.tools]]\npattern = \"a\"\naction = \"allow\"\nserver = \"x\"\n");
    assert!(f
        .error()
        .contains("`permissions.tools[0].server`: unknown key"));
    f.write_project("[permissions]\ntools = [\"mcp__*\"]\n");
    assert!(
        f.error()
            .contains("key `permissions.tools[0]`: expected a table with `pattern` and `action`"),
        "{}",
        f.error()
    );
    f.write_project("[permissions]\ntools = \"mcp__*\"\n");
    assert!(f
        .error()
        .contains("key `permissions.tools`: expected [[permissions.tools]] tables"));
    // A pattern that is not a glob: the policy names the file and the list.
    let user = f.user_file().display().to_string();
    f.write_project("");
    f.write_user("[[permissions.tools]]\npattern = \"mcp__[\"\naction = \"deny\"\n");
    let c = f.load().unwrap();
    let err = c
        .policy(f.root.path(), Some(f.home.path()), true)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(&format!("{user}: [[permissions.tools]] pattern `mcp__[`")),
        "{err}"
    );
}

#[test]
fn project_tool_rules_that_allow_are_ignored_and_said_so() {
    let f = Fixture::new();
    f.write_user("[[permissions.tools]]\npattern = \"mcp__*\"\naction = \"allow\"\n");
    assert!(f.load().unwrap().warnings(true).is_empty());
    f.write_project("[[permissions.tools]]\npattern = \"mcp__evil__*\"\naction = \"allow\"\n");
    let warnings = f.load().unwrap().warnings(true);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("allows the tools `mcp__evil__*`, which is ignored"),
        "{}",
        warnings[0]
    );
}

/// The red team's reproduction, through the config layer: the user denies every delete,
/// the project allows its server's tools; the delete stays denied and the rest ask.
#[test]
fn a_projects_tool_allow_lifts_neither_the_users_deny_nor_an_ask() {
    use crate::permissions::{PermissionPolicy, ToolRequest, Verdict};
    let f = Fixture::new();
    f.write_user("[[permissions.tools]]\npattern = \"mcp__*__delete_*\"\naction = \"deny\"\n");
    f.write_project(
        "[[permissions.tools]]\npattern = \"mcp__github__*\"\naction = \"allow\"\n\
         [[permissions.tools]]\npattern = \"mcp__github__merge_*\"\naction = \"deny\"\n",
    );
    let config = f.load().unwrap();
    let policy = config
        .policy(f.root.path(), Some(f.home.path()), true)
        .unwrap();
    let args = serde_json::json!({});
    let check = |tool: &str| {
        policy.check(&ToolRequest {
            tool,
            args: &args,
            root: f.root.path(),
        })
    };
    assert!(matches!(
        check("mcp__github__delete_repo"),
        Verdict::Deny { .. }
    ));
    assert!(matches!(
        check("mcp__github__list_issues"),
        Verdict::Ask { .. }
    ));
    assert!(
        matches!(check("mcp__github__merge_pr"), Verdict::Deny { .. }),
        "a project's deny is obeyed"
    );
}

/// "Always allow in this project" for an MCP tool is kept in rein's data folder, where the
/// project cannot write, not in the project's `.rein/config.toml`; the next load reads it
/// back for this project only.
#[test]
fn tool_allows_are_saved_to_the_data_folder_and_read_back() {
    use crate::permissions::{PermissionPolicy, ToolRequest, Verdict};
    let f = Fixture::new();
    f.write_project("# mine");
    let config = f.load().unwrap();
    let policy = config
        .policy(f.root.path(), Some(f.home.path()), true)
        .unwrap();
    let args = serde_json::json!({"title": "x"});
    let check = |p: &crate::permissions::policy::RulePolicy, root: &Path| {
        p.check(&ToolRequest {
            tool: "mcp__github__create_issue",
            args: &args,
            root,
        })
    };
    let Verdict::Ask { grants, .. } = check(&policy, f.root.path()) else {
        panic!("an MCP tool asks");
    };
    let saved = policy.persist(&grants).unwrap();
    assert!(saved.contains("`mcp__github__create_issue`"), "{saved}");
    let store = config
        .data_dir
        .join(crate::consent::allowed_tools::FILE_NAME);
    assert!(saved.contains(&store.display().to_string()), "{saved}");
    assert_eq!(std::fs::read_to_string(f.project_file()).unwrap(), "# mine");
    let config = f.load().unwrap();
    assert!(config.tool_rules.is_empty() && config.bash_rules.is_empty());
    let reread = config
        .policy(f.root.path(), Some(f.home.path()), true)
        .unwrap();
    assert_eq!(check(&reread, f.root.path()), Verdict::Allow);
    // Another project is not covered by it.
    let other = tempfile::tempdir().unwrap();
    let elsewhere = config
        .policy(other.path(), Some(f.home.path()), true)
        .unwrap();
    assert!(matches!(
        check(&elsewhere, other.path()),
        Verdict::Ask { .. }
    ));
    // A project's deny still wins over the user's stored allow.
    f.write_project(
        "[[permissions.tools]]\npattern = \"mcp__github__create_*\"\naction = \"deny\"\n",
    );
    let config = f.load().unwrap();
    let denied = config
        .policy(f.root.path(), Some(f.home.path()), true)
        .unwrap();
    assert!(matches!(
        check(&denied, f.root.path()),
        Verdict::Deny { .. }
    ));
}

#[test]
fn sandbox_settings_come_from_the_user_file_only() {
    let f = Fixture::new();
    let c = f.load().unwrap();
    assert_eq!(c.sandbox_mode.value, SandboxMode::Auto);
    assert!(!c.sandbox_network.value);
    assert!(c.sandbox_writable.value.is_empty());
    assert_eq!(
        c.sensitive_reads.value,
        crate::config::DEFAULT_SENSITIVE_READS
    );

    f.write_user("[sandbox]\nmode = \"required\"\nnetwork = true\nwritable = [\"~/.cache/x\", \"build\", \"/opt/y\"]\n");
    let c = f.load().unwrap();
    assert_eq!(c.sandbox_mode.value, SandboxMode::Required);
    assert_eq!(c.sandbox_mode.source, Source::UserFile(f.user_file()));
    assert!(c.sandbox_network.value);
    assert_eq!(
        c.sandbox_writable.value,
        [
            f.home.path().join(".cache/x"),
            f.root.path().join("build"),
            PathBuf::from("/opt/y")
        ]
    );

    f.write_user("[sandbox]\nmode = \"bwrap\"\n");
    assert!(f.error().ends_with(
        "key `sandbox.mode`: expected \"auto\", \"required\" or \"off\", got \"bwrap\""
    ));
    f.write_user("[sandbox]\nnetwork = \"yes\"\n");
    assert!(f
        .error()
        .ends_with("key `sandbox.network`: expected true or false, got string \"yes\""));

    f.write_user("");
    f.write_project("[sandbox]\nmode = \"off\"\n");
    assert_eq!(
        f.error(),
        format!(
            "{}: key `[sandbox]`: [sandbox] may only be set in your own config.toml, not in a project's (a project must not loosen its own sandbox)",
            f.project_file().display()
        )
    );
}

#[test]
fn project_rules_that_allow_are_warned_about() {
    let f = Fixture::new();
    f.write_user("[[permissions.bash]]\npattern = \"make *\"\naction = \"allow\"\n");
    assert!(
        f.load().unwrap().warnings(true).is_empty(),
        "the user's own rules are trusted"
    );
    f.write_project(
        "[permissions]\nsensitive_reads = []\n[[permissions.bash]]\npattern = \"*\"\naction = \"allow\"\n",
    );
    let warnings = f.load().unwrap().warnings(true);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("allows `*` without asking (inside the sandbox)"));
    let warnings = f.load().unwrap().warnings(false);
    assert!(
        warnings[0].contains("allows `*`, which is ignored: commands run without a sandbox"),
        "{warnings:?}"
    );
}

/// Without a working sandbox a project's bash allows are not obeyed; its asks and denies
/// are, and a deny from either file wins over the other's allow.
#[test]
fn a_projects_bash_allows_count_only_inside_the_sandbox() {
    let f = Fixture::new();
    f.write_user("[[permissions.bash]]\npattern = \"make deploy*\"\naction = \"deny\"\n");
    f.write_project(
        "[[permissions.bash]]\npattern = \"make *\"\naction = \"allow\"\n\
         [[permissions.bash]]\npattern = \"cargo publish*\"\naction = \"deny\"\n",
    );
    let c = f.load().unwrap();
    let confined = c.policy(f.root.path(), Some(f.home.path()), true).unwrap();
    assert_eq!(confined.judge_bash("make all").action, RuleAction::Allow);
    assert_eq!(
        confined.judge_bash("make deploy prod").action,
        RuleAction::Deny,
        "the user's deny beats the project's allow"
    );
    let open = c.policy(f.root.path(), Some(f.home.path()), false).unwrap();
    assert_eq!(open.judge_bash("make all").action, RuleAction::Ask);
    assert_eq!(open.judge_bash("cargo publish").action, RuleAction::Deny);
}

/// A project's `sensitive_reads` adds to the user's list (or the defaults), never
/// replaces it: `read_file` runs outside the sandbox.
#[test]
fn a_projects_sensitive_reads_only_add() {
    let f = Fixture::new();
    f.write_project("[permissions]\nsensitive_reads = [\"**/secrets.yml\"]\n");
    let c = f.load().unwrap();
    for pattern in crate::config::DEFAULT_SENSITIVE_READS {
        assert!(
            c.sensitive_reads.value.iter().any(|p| p == pattern),
            "{pattern}"
        );
    }
    assert!(c
        .sensitive_reads
        .value
        .iter()
        .any(|p| p == "**/secrets.yml"));
    f.write_user("[permissions]\nsensitive_reads = [\"~/.mine/**\"]\n");
    f.write_project("[permissions]\nsensitive_reads = []\n");
    assert_eq!(f.load().unwrap().sensitive_reads.value, ["~/.mine/**"]);
}

#[test]
fn ui_keys_turn_the_bell_and_notifications_off() {
    let f = Fixture::new();
    let c = f.load().unwrap();
    assert!(c.ui_bell.value && c.ui_notifications.value == "unfocused");
    assert_eq!(
        c.ui_notify_after_secs.value,
        crate::config::DEFAULT_NOTIFY_AFTER_SECS
    );
    f.write_user("[ui]\nnotifications = true\n");
    assert_eq!(f.load().unwrap().ui_notifications.value, "unfocused");
    f.write_user("[ui]\nnotifications = \"always\"\nnotify_after_secs = 30\n");
    let c = f.load().unwrap();
    assert_eq!(c.ui_notifications.value, "always");
    assert_eq!(c.ui_notify_after_secs.value, 30);
    f.write_user("[ui]\nnotifications = \"sometimes\"\n");
    assert!(f
        .error()
        .ends_with("key `ui.notifications`: expected \"unfocused\", \"always\" or \"never\", got \"sometimes\""));
    f.write_user("[ui]\nbell = false\nnotifications = false\n");
    let c = f.load().unwrap();
    assert!(!c.ui_bell.value && c.ui_notifications.value == "never");
    f.write_user("[ui]\nbell = \"off\"\n");
    assert!(f
        .error()
        .ends_with("key `ui.bell`: expected true or false, got string \"off\""));
}

/// "Always allow in this project" writes through the config layer, and the rule is read
/// back by the next load.
#[test]
fn project_rules_are_saved_to_the_project_config_and_read_back() {
    use crate::permissions::{Grant, PermissionPolicy, ToolRequest, Verdict};
    let f = Fixture::new();
    f.write_project("[permissions]\nsensitive_reads = []");
    let config = f.load().unwrap();
    let policy = config
        .policy(f.root.path(), Some(f.home.path()), true)
        .unwrap();
    let args = serde_json::json!({ "command": "npm run [x] \"quoted\"" });
    let check = |p: &crate::permissions::policy::RulePolicy| {
        p.check(&ToolRequest {
            tool: "bash",
            args: &args,
            root: f.root.path(),
        })
    };
    let Verdict::Ask { grants, .. } = check(&policy) else {
        panic!("npm asks");
    };
    let saved = policy.persist(&grants).unwrap();
    assert!(saved.contains(".rein/config.toml"), "{saved}");
    assert!(policy.persist(&[Grant::Write("/x".into())]).is_err());
    let config = f.load().unwrap();
    assert_eq!(config.bash_rules.len(), 1);
    assert_eq!(config.bash_rules[0].pattern, "npm run \\[x\\] quoted");
    assert_eq!(
        config.bash_rules[0].action,
        crate::permissions::RuleAction::Allow
    );
    let reread = config
        .policy(f.root.path(), Some(f.home.path()), true)
        .unwrap();
    assert_eq!(check(&reread), Verdict::Allow);
}

/// A project config that exists but cannot be read is never rewritten from nothing.
#[test]
fn an_unreadable_project_config_is_not_overwritten_by_a_saved_rule() {
    let f = Fixture::new();
    std::fs::create_dir_all(f.project_file().parent().unwrap()).unwrap();
    std::fs::write(f.project_file(), b"model = \"\xff\"\n").unwrap();
    let before = std::fs::read(f.project_file()).unwrap();
    let err = super::file::save_allow_rules(
        &f.project_file(),
        &[(crate::permissions::policy::RuleList::Bash, "make *")],
    )
    .unwrap_err();
    assert!(err.contains("not UTF-8"), "{err}");
    assert_eq!(std::fs::read(f.project_file()).unwrap(), before);
}

/// A saved rule makes `.rein/` 0700 and the file 0600, and never follows a link put in the
/// file's place (a cloned repository's `.rein/config.toml -> ~/.config/rein/config.toml`).
#[test]
fn a_saved_rule_is_private_and_never_written_through_a_link() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::new();
    let bits = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let rules = [(crate::permissions::policy::RuleList::Bash, "make *")];
    super::file::save_allow_rules(&f.project_file(), &rules).unwrap();
    assert_eq!(bits(f.project_file().parent().unwrap()), 0o700);
    assert_eq!(bits(&f.project_file()), 0o600);
    assert!(std::fs::read_to_string(f.project_file())
        .unwrap()
        .contains("make *"));

    let elsewhere = f.home.path().join("their-config.toml");
    std::fs::write(&elsewhere, "# theirs\n").unwrap();
    std::fs::remove_file(f.project_file()).unwrap();
    std::os::unix::fs::symlink(&elsewhere, f.project_file()).unwrap();
    let err = super::file::save_allow_rules(&f.project_file(), &rules).unwrap_err();
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "# theirs\n");
}
