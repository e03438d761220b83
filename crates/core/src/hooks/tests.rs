//! The hooks' tests: loading and approving a project's hooks, the guard at each firing,
//! and hooks fired together.

use super::*;
use serde_json::json;

fn hooks(root: &Path, text: &str) -> Hooks {
    let parsed = config::parse(text, &root.join("hooks.json"), Source::User);
    assert_eq!(parsed.problems, Vec::<String>::new());
    Hooks::new(parsed.hooks, root)
}

/// Allowed as shown, a project's hooks join the hooks in force at once and are not held
/// at the next start; the file changed, or a file a command names, they are held again
/// and say so.
#[tokio::test]
async fn held_hooks_allowed_run_at_once_and_are_pinned_to_what_was_shown() {
    let project = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let user = data.path().join("config.toml");
    std::fs::create_dir_all(project.path().join(".rein")).unwrap();
    let file = project.path().join(".rein/hooks.json");
    let stop = |command: &str| {
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}})
            .to_string()
    };
    std::fs::write(&file, stop("touch shown")).unwrap();
    std::fs::write(project.path().join("shown"), "").unwrap();
    let loaded = load(&user, project.path(), data.path());
    let hooks = Arc::new(loaded.hooks);
    let held = loaded.held.expect("held");
    assert!(hooks.is_empty());
    let lines = held.lines();
    assert!(
        matches!(lines.as_slice(), [l] if l.starts_with("Stop: touch shown (timeout ")),
        "{lines:?}"
    );
    // The file its command names is pinned too, as it is now.
    let files = held.file_lines();
    assert!(
        matches!(files.as_slice(), [l] if l.starts_with("shown (")),
        "{files:?}"
    );
    // The file changes while the user reads the question: what was shown is approved.
    std::fs::write(&file, stop("touch other")).unwrap();
    held.allow(&hooks, data.path()).unwrap();
    assert!(!hooks.is_empty());
    assert_eq!(hooks.matching(Event::Stop, None)[0].command, "touch shown");
    let again = load(&user, project.path(), data.path());
    assert!(again.held.as_ref().is_some_and(|h| h.changed), "{again:?}");
    std::fs::write(&file, stop("touch shown")).unwrap();
    let again = load(&user, project.path(), data.path());
    assert!(again.held.is_none(), "{again:?}");
    assert_eq!(again.hooks.all().len(), 1);
    // A file the command names changed: held again.
    std::fs::write(project.path().join("shown"), "changed").unwrap();
    let again = load(&user, project.path(), data.path());
    assert!(again.held.as_ref().is_some_and(|h| h.changed), "{again:?}");
}

/// `rein hooks allow` approves the project's hooks as they are, with the files they
/// name, and says so: a hook a line, a pinned file a line.
#[test]
fn allowing_the_project_approves_its_hooks_as_they_are() {
    let project = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let user = data.path().join("config.toml");
    assert_eq!(project_definitions(project.path()), None);
    std::fs::create_dir_all(project.path().join(".rein")).unwrap();
    let file = project.path().join(".rein/hooks.json");
    let text = r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "sh check.sh", "timeout": 5, "on_failure": "block"},
        {"type": "command", "command": "true", "timeout": 1.5}]}]}}"#;
    std::fs::write(&file, text).unwrap();
    std::fs::write(project.path().join("check.sh"), "exit 0\n").unwrap();
    assert_eq!(
        project_definitions(project.path()),
        serde_json::from_str(text).ok()
    );
    let loaded = load(&user, project.path(), data.path());
    let notice = format!("{}: 2 project hooks held: ", file.display());
    assert!(
        loaded.notices.iter().any(|n| n.starts_with(&notice)),
        "{:?}",
        loaded.notices
    );
    let allowed = allow_project(project.path(), data.path()).unwrap();
    let source = format!("project {}", file.display());
    assert_eq!(
        allowed.hooks,
        [
            format!("PreToolUse [Bash]: sh check.sh (timeout 5s, blocks on failure; {source})"),
            format!("PreToolUse [Bash]: true (timeout 1.5s; {source})"),
        ]
    );
    assert!(
        matches!(allowed.files.as_slice(), [l] if l.starts_with("check.sh (sha256 ")),
        "{:?}",
        allowed.files
    );
    let again = load(&user, project.path(), data.path());
    assert!(again.held.is_none(), "{again:?}");
    assert_eq!(again.hooks.all().len(), 2);
}

/// A session that ends waits for the SessionEnd hooks of its reason only.
#[test]
fn a_session_end_waits_for_the_hooks_of_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let end = |matcher: &str, timeout: u32| json!({"matcher": matcher, "hooks": [{"type": "command", "command": matcher, "timeout": timeout}]});
    let h = hooks(
        dir.path(),
        &json!({"hooks": {"SessionEnd": [
            end("clear", 5), end("logout", 6), end("prompt_input_exit", 7)
        ]}})
        .to_string(),
    );
    let secs = |reason| h.end_timeout(reason).map(|t| t.as_secs());
    assert_eq!(secs(EndReason::Clear), Some(5));
    assert_eq!(secs(EndReason::Logout), Some(6));
    assert_eq!(secs(EndReason::PromptInputExit), Some(7));
    assert_eq!(secs(EndReason::Other), None);
}

/// The guard at each firing: a host-tool file a command created holds every hook (a
/// blocking PreToolUse hook blocks), said once; a write the user approved is recorded
/// and holds nothing.
#[tokio::test]
async fn a_changed_host_tool_file_holds_the_hooks_until_approved() {
    let project = tempfile::tempdir().unwrap();
    let root = project.path().canonicalize().unwrap();
    let data = tempfile::tempdir().unwrap();
    let text = json!({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "echo ran >> ran.txt", "on_failure": "block"}]}]}})
    .to_string();
    let parsed = config::parse(&text, &data.path().join("hooks.json"), Source::User);
    crate::consent::host_tools::baseline(data.path(), &root).unwrap();
    let h = Hooks::new(parsed.hooks, &root).guarded(data.path(), None);
    let common = Common::default();
    let fire = || h.fire(Event::PreToolUse, Some("Bash"), &common, Map::new());
    assert_eq!(fire().await.unwrap().block, None);
    std::fs::write(
        root.join(".envrc"),
        "export X=1
",
    )
    .unwrap();
    let said = fire().await.unwrap();
    assert!(said.block.is_some_and(|b| b.contains(".envrc was created")));
    assert!(matches!(said.held.as_slice(), [Hold::HostTool(c)] if c.file == root.join(".envrc")));
    assert!(fire().await.unwrap().held.is_empty(), "said once");
    h.approved_write(&root.join(".envrc"));
    let said = fire().await.unwrap();
    assert_eq!((said.block, said.held.len()), (None, 0));
    let ran = std::fs::read_to_string(root.join("ran.txt")).unwrap();
    assert_eq!(ran.lines().count(), 2, "ran before and after the hold only");
}

/// A session start waits while the user is asked, and goes on once answered.
#[tokio::test]
async fn a_start_waits_for_the_answer() {
    let hooks = Arc::new(Hooks::default());
    hooks.asked().await;
    hooks.asking();
    let waiting = tokio::spawn({
        let hooks = hooks.clone();
        async move { hooks.asked().await }
    });
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    assert!(!waiting.is_finished());
    hooks.answered();
    // A guard against a hang, not a claim about speed: it goes on at once.
    tokio::time::timeout(std::time::Duration::from_secs(120), waiting)
        .await
        .expect("it went on")
        .unwrap();
}

#[tokio::test]
async fn matching_hooks_run_together_on_claude_codes_payload() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let h = hooks(
        root,
        r#"{"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [
                {"type": "command", "command": "cat > bash.json; touch a.started; until [ -e b.started ]; do sleep 0.02; done; echo no >&2; exit 2"},
                {"type": "command", "command": "touch b.started; until [ -e a.started ]; do sleep 0.02; done; echo \"$CLAUDE_PROJECT_DIR\" > dir.txt"}]},
            {"matcher": "*", "hooks": [
                {"type": "command", "command": "touch b.started; until [ -e a.started ]; do sleep 0.02; done; echo \"$CLAUDE_PROJECT_DIR\" > dir.txt"}]},
            {"matcher": "Write", "hooks": [{"type": "command", "command": "touch write.txt"}]}
        ]}}"#,
    );
    assert_eq!(h.matching(Event::PreToolUse, Some("Bash")).len(), 2);
    let common = Common {
        session_id: "s1".into(),
        transcript_path: "/data/s1.jsonl".into(),
        permission_mode: "default".into(),
    };
    let mut fields = Map::new();
    fields.insert("tool_name".into(), "Bash".into());
    fields.insert("tool_input".into(), json!({"command": "git push --force"}));
    let said = h
        .fire(Event::PreToolUse, Some("Bash"), &common, fields)
        .await
        .expect("hooks matched");
    // Together, not one after the other: each hook waits until the other has started,
    // so run in turn the first would wait until its timeout and block nothing.
    assert_eq!(said.block.as_deref(), Some("no"));
    let payload: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("bash.json")).unwrap()).unwrap();
    assert_eq!(payload["hook_event_name"], "PreToolUse");
    assert_eq!(payload["session_id"], "s1");
    assert_eq!(payload["tool_input"]["command"], "git push --force");
    assert_eq!(payload["cwd"], root.to_string_lossy().as_ref());
    assert_eq!(
        std::fs::read_to_string(root.join("dir.txt"))
            .unwrap()
            .trim(),
        root.to_string_lossy()
    );
    assert!(!root.join("write.txt").exists());
    // A Stop hook's matcher is ignored: it matches whatever it is asked about.
    let stop = hooks(
        root,
        r#"{"hooks": {"Stop": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]}}"#,
    );
    assert_eq!(stop.matching(Event::Stop, Some("main")).len(), 1);
    // No hook for an event: nothing runs, nothing to say.
    assert!(h
        .fire(Event::Stop, None, &common, Map::new())
        .await
        .is_none());
}

/// Hooks cloned (a subagent's) keep the project's approval: a file the project's hook
/// runs, changed mid-session, holds it there too, and says why.
#[tokio::test]
async fn a_clone_holds_the_projects_hooks_when_a_file_they_run_changes() {
    let project = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let user = data.path().join("config.toml");
    std::fs::create_dir_all(project.path().join(".rein")).unwrap();
    let stop =
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "sh check.sh"}]}]}});
    std::fs::write(project.path().join(".rein/hooks.json"), stop.to_string()).unwrap();
    std::fs::write(project.path().join("check.sh"), "touch ran\n").unwrap();
    allow_project(project.path(), data.path()).unwrap();
    let loaded = load(&user, project.path(), data.path());
    assert!(loaded.held.is_none(), "{loaded:?}");
    let twin = loaded.hooks.clone();
    let common = Common::default();
    let fire = || twin.fire(Event::Stop, None, &common, Map::new());
    let said = fire().await.expect("the hook matched");
    assert!(said.held.is_empty(), "{said:?}");
    assert!(project.path().join("ran").exists());
    std::fs::remove_file(project.path().join("ran")).unwrap();
    std::fs::write(project.path().join("check.sh"), "touch ran; curl evil\n").unwrap();
    let said = fire().await.expect("the hook matched");
    assert!(
        matches!(said.held.as_slice(), [Hold::Project(HeldWhy::Files(_))]),
        "{said:?}"
    );
    assert!(!project.path().join("ran").exists());
}

/// The user's `hooks.json`, beside their `config.toml`, runs without a question.
#[test]
fn the_users_hooks_beside_their_config_run() {
    let project = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let stop = json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}});
    std::fs::write(data.path().join("hooks.json"), stop.to_string()).unwrap();
    let loaded = load(
        &data.path().join("config.toml"),
        project.path(),
        data.path(),
    );
    assert!(loaded.held.is_none(), "{loaded:?}");
    assert_eq!(loaded.hooks.matching(Event::Stop, None).len(), 1);
}

/// The project's approval lapsing mid-session holds the project's hooks only: the user's
/// own hook of the same event still runs, and held hooks that do not block on failure
/// block nothing.
#[tokio::test]
async fn a_lapsed_project_approval_holds_only_the_projects_hooks() {
    let project = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let pre = |command: &str| {
        json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": command}]}]}})
            .to_string()
    };
    std::fs::write(data.path().join("hooks.json"), pre("touch user.ran")).unwrap();
    std::fs::create_dir_all(project.path().join(".rein")).unwrap();
    std::fs::write(project.path().join(".rein/hooks.json"), pre("sh check.sh")).unwrap();
    std::fs::write(project.path().join("check.sh"), "touch project.ran\n").unwrap();
    allow_project(project.path(), data.path()).unwrap();
    let loaded = load(
        &data.path().join("config.toml"),
        project.path(),
        data.path(),
    );
    assert!(loaded.held.is_none(), "{loaded:?}");
    let common = Common::default();
    let fire = || {
        loaded
            .hooks
            .fire(Event::PreToolUse, Some("Bash"), &common, Map::new())
    };
    std::fs::write(
        project.path().join("check.sh"),
        "touch project.ran; curl evil\n",
    )
    .unwrap();
    let said = fire().await.expect("the hooks matched");
    assert!(
        matches!(said.held.as_slice(), [Hold::Project(HeldWhy::Files(_))]),
        "{said:?}"
    );
    assert_eq!(said.block, None, "no held hook blocks on failure");
    assert!(
        project.path().join("user.ran").exists(),
        "the user's hook ran"
    );
    assert!(
        !project.path().join("project.ran").exists(),
        "the project's did not"
    );
}
