//! Hooks: the scripts people wrote for Claude Code, run by rein unchanged (issue 26).
//!
//! - `config`: `hooks.json` in Claude Code's settings shape, the user's and the project's.
//! - `matcher`: Claude Code's matcher syntax.
//! - `names`: rein's tools under Claude Code's names and field names, both ways.
//! - `run`: one hook as a process that can never hang rein (stdin closed after the
//!   payload, a timeout that kills the whole group, an orphan holding stdout let go).
//! - `outcome`: what a run means by Claude Code's rules, and what several mean together.
//!
//! [`Hooks::fire`] runs the hooks one event matches, at once, an identical command once,
//! and combines what they said. With no hook for an event it returns at once and costs
//! nothing: a session without hooks pays for none.

pub mod config;
pub mod matcher;
pub mod names;
pub mod outcome;
pub mod run;

use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

use serde_json::{Map, Value};

pub use config::{Event, Hook, OnFailure, Source};
pub use outcome::{Combined, Permission, Said};

/// The hooks that run for a project, and what the user should hear about them.
#[derive(Debug, Default)]
pub struct Loaded {
    pub hooks: Hooks,
    /// Lines naming a file and key that could not be used, and the project's hooks held.
    pub notices: Vec<String>,
    /// The project's hooks, held until the user approves them.
    pub held: Option<Held>,
}

/// A project's hooks that wait for the user's approval: what a front end puts to the
/// user, and what [`Held::allow`] approves (exactly these definitions, not the file as it
/// may be by the time the user answers).
#[derive(Debug, Clone)]
pub struct Held {
    /// The project's `hooks.json`.
    pub file: PathBuf,
    /// The hooks as they would run.
    pub hooks: Vec<Hook>,
    /// Lines of the file that cannot be used (said when they are approved).
    pub problems: Vec<String>,
    /// The user approved an earlier version of the file.
    pub changed: bool,
    /// The definitions the approval pins.
    declared: Value,
    root: PathBuf,
}

impl Held {
    /// Approve these hooks for the project (remembered in `data_dir`'s trust store) and
    /// add them to `hooks`, so they run from the next event on.
    pub fn allow(&self, hooks: &Hooks, data_dir: &Path) -> Result<(), String> {
        let (mut store, _) = crate::trust::TrustStore::load(data_dir);
        store
            .trust(&self.root, TRUST_NAME, &self.declared)
            .map_err(|e| format!("the approval was not saved: {e}"))?;
        hooks.admit(self.hooks.clone());
        Ok(())
    }

    /// The held hooks, a line each (as [`describe`] puts them).
    pub fn lines(&self) -> Vec<String> {
        self.hooks.iter().map(describe).collect()
    }
}

/// The name a project's hooks are approved under in the trust store (no MCP server's
/// table can equal a hooks file's, so the two never approve each other).
const TRUST_NAME: &str = "(hooks)";

/// The user's hooks (`hooks.json` beside `user_config`) for the project `root`, and the
/// project's own `.rein/hooks.json` when the user approved it as it is now (`rein hooks
/// allow`, remembered in `data_dir`'s trust store). Unapproved or changed since, the
/// project's hooks would run as the user, outside the sandbox, from a file a cloned
/// repository can ship: they are held, and a notice says so.
pub fn load(user_config: &Path, root: &Path, data_dir: &Path) -> Loaded {
    let mut notices = Vec::new();
    let mut hooks = Vec::new();
    let mut held = None;
    if let Some(file) = config::user_file(user_config) {
        let parsed = config::load(&file, Source::User);
        hooks.extend(parsed.hooks);
        notices.extend(parsed.problems);
    }
    let project = config::project_file(root);
    let parsed = config::load(&project, Source::Project);
    if !parsed.hooks.is_empty() {
        let (store, _) = crate::trust::TrustStore::load(data_dir);
        match project_definitions(root) {
            Some(declared) if store.is_trusted(root, TRUST_NAME, &declared) => {
                hooks.extend(parsed.hooks);
                notices.extend(parsed.problems);
            }
            declared => {
                let changed = store.approved(root, TRUST_NAME).is_some();
                notices.push(format!(
                    "{}: {} project hook{} held: {}; a project's hooks run as you, outside \
                     the sandbox (`rein hooks allow`, or /hooks allow in the dashboard, shows \
                     them and approves them)",
                    project.display(),
                    parsed.hooks.len(),
                    if parsed.hooks.len() == 1 { "" } else { "s" },
                    if changed {
                        "the file changed since you approved it"
                    } else {
                        "you have not approved them"
                    }
                ));
                held = declared.map(|declared| Held {
                    file: project.clone(),
                    hooks: parsed.hooks,
                    problems: parsed.problems,
                    changed,
                    declared,
                    root: root.to_path_buf(),
                });
            }
        }
    }
    Loaded {
        hooks: Hooks::new(hooks, root),
        notices,
        held,
    }
}

/// The project's hook definitions as approved: its `hooks.json` as JSON (keys sorted by
/// `serde_json`, so spacing does not count and every key does). `None` when it is not
/// there or not JSON.
pub fn project_definitions(root: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(config::project_file(root)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Approve the project's hooks as they are now: the commands approved, one per line.
pub fn allow_project(root: &Path, data_dir: &Path) -> Result<Vec<String>, String> {
    let file = config::project_file(root);
    let declared = project_definitions(root)
        .ok_or_else(|| format!("{} does not exist or is not JSON", file.display()))?;
    let parsed = config::load(&file, Source::Project);
    let (mut store, _) = crate::trust::TrustStore::load(data_dir);
    store
        .trust(root, TRUST_NAME, &declared)
        .map_err(|e| format!("the approval was not saved: {e}"))?;
    Ok(parsed
        .hooks
        .iter()
        .map(describe)
        .chain(parsed.problems)
        .collect())
}

/// One hook on a line: event, matcher, command, timeout, source.
pub fn describe(hook: &Hook) -> String {
    let matcher = if hook.matcher_text.is_empty() {
        String::new()
    } else {
        format!(" [{}]", hook.matcher_text)
    };
    let block = if hook.on_failure == OnFailure::Block {
        ", blocks on failure"
    } else {
        ""
    };
    format!(
        "{}{matcher}: {} (timeout {}s{block}; {} {})",
        hook.event.name(),
        crate::sanitize::sanitize(&hook.command),
        hook.timeout.as_secs_f64(),
        hook.source.name(),
        hook.file.display()
    )
}

/// What every payload carries besides the event's own fields.
#[derive(Debug, Clone, Default)]
pub struct Common {
    pub session_id: String,
    /// The session file (Claude Code's transcript).
    pub transcript_path: String,
    /// The approval mode, in Claude Code's words (`default`, `plan`, `bypassPermissions`
    /// for auto).
    pub permission_mode: String,
}

/// The hooks in force, and the project they run in. Shared (`Arc<Hooks>`) by the agent,
/// its subagents and the front end: a project's hooks the user approves mid-session are
/// [`Hooks::admit`]ted once and run from the next event on, everywhere.
#[derive(Debug, Default)]
pub struct Hooks {
    /// Swapped whole when hooks are admitted; a firing event works on the list it read.
    hooks: RwLock<Arc<Vec<Hook>>>,
    root: PathBuf,
    /// True while the user is being asked about the project's hooks: the session's start
    /// waits for the answer, so an approved SessionStart hook sees this session start.
    asking: tokio::sync::watch::Sender<bool>,
}

impl Clone for Hooks {
    fn clone(&self) -> Hooks {
        let hooks = Hooks::new(self.all().to_vec(), &self.root);
        hooks.asking.send_replace(*self.asking.borrow());
        hooks
    }
}

impl Hooks {
    /// `hooks` (the user's first, then the project's) running in `root`.
    pub fn new(hooks: Vec<Hook>, root: &Path) -> Hooks {
        Hooks {
            hooks: RwLock::new(Arc::new(hooks)),
            root: root.to_path_buf(),
            asking: tokio::sync::watch::Sender::new(false),
        }
    }

    /// The user is being asked about the project's hooks ([`Held`]): sessions wait in
    /// [`Hooks::asked`] before they start until [`Hooks::answered`].
    pub fn asking(&self) {
        self.asking.send_replace(true);
    }

    /// The user answered (allowed the project's hooks, or kept them held).
    pub fn answered(&self) {
        self.asking.send_replace(false);
    }

    /// Wait while the user is being asked about the project's hooks (at once when not).
    pub async fn asked(&self) {
        let mut answer = self.asking.subscribe();
        // Err only when the sender is gone, and it lives as long as `self`.
        let _ = answer.wait_for(|asking| !asking).await;
    }

    pub fn is_empty(&self) -> bool {
        self.all().is_empty()
    }

    /// Every hook, in order.
    pub fn all(&self) -> Arc<Vec<Hook>> {
        self.hooks
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Add `more` after the hooks in force (a project's, once approved).
    pub fn admit(&self, more: Vec<Hook>) {
        let mut list = self.hooks.write().unwrap_or_else(PoisonError::into_inner);
        let mut next = list.as_ref().clone();
        next.extend(more);
        *list = Arc::new(next);
    }

    /// The hooks `event` runs for `subject` (the tool's name in Claude Code's words, a
    /// source, an agent type; `None` for an event without a matcher), an identical command
    /// once.
    pub fn matching(&self, event: Event, subject: Option<&str>) -> Vec<Hook> {
        let mut out: Vec<Hook> = Vec::new();
        for hook in self.all().iter().filter(|h| h.event == event) {
            let matched = match subject {
                Some(s) if event.has_matcher() => hook.matcher.matches(s),
                _ => true,
            };
            if matched && !out.iter().any(|h| h.command == hook.command) {
                out.push(hook.clone());
            }
        }
        out
    }

    /// Run the hooks `event` matches for `subject` with `fields` (the event's own payload
    /// fields) and `common`; what they said together. `None` when no hook matched.
    pub async fn fire(
        &self,
        event: Event,
        subject: Option<&str>,
        common: &Common,
        fields: Map<String, Value>,
    ) -> Option<Combined> {
        let hooks = self.matching(event, subject);
        if hooks.is_empty() {
            return None;
        }
        let payload = self.payload(event, common, fields);
        let root = self.root.to_string_lossy().into_owned();
        let env = [
            ("CLAUDE_PROJECT_DIR", root.as_str()),
            ("REIN_PROJECT_DIR", root.as_str()),
        ];
        let runs = hooks.iter().map(|hook| async {
            let ran = run::run(&hook.command, &self.root, &payload, &env, hook.timeout).await;
            outcome::read(event, hook.on_failure, &ran)
        });
        let mut combined = Combined::default();
        for said in futures_util::future::join_all(runs).await {
            combined.add(said);
        }
        Some(combined)
    }

    /// The JSON a hook reads on stdin.
    fn payload(&self, event: Event, common: &Common, fields: Map<String, Value>) -> Vec<u8> {
        let mut payload = Map::new();
        payload.insert("session_id".into(), common.session_id.clone().into());
        payload.insert(
            "transcript_path".into(),
            common.transcript_path.clone().into(),
        );
        payload.insert(
            "cwd".into(),
            self.root.to_string_lossy().into_owned().into(),
        );
        payload.insert(
            "permission_mode".into(),
            common.permission_mode.clone().into(),
        );
        payload.insert("hook_event_name".into(), event.name().into());
        payload.extend(fields);
        serde_json::to_vec(&Value::Object(payload)).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hooks(root: &Path, text: &str) -> Hooks {
        let parsed = config::parse(text, &root.join("hooks.json"), Source::User);
        assert_eq!(parsed.problems, Vec::<String>::new());
        Hooks::new(parsed.hooks, root)
    }

    /// Allowed as shown, a project's hooks join the hooks in force at once and are not held
    /// at the next start; the file changed, they are held again and say so.
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
        let loaded = load(&user, project.path(), data.path());
        let hooks = Arc::new(loaded.hooks);
        let held = loaded.held.expect("held");
        assert!(hooks.is_empty());
        assert_eq!(held.lines().len(), 1);
        // The file changes while the user reads the question: what was shown is approved.
        std::fs::write(&file, stop("touch other")).unwrap();
        held.allow(&hooks, data.path()).unwrap();
        assert_eq!(hooks.matching(Event::Stop, None)[0].command, "touch shown");
        let again = load(&user, project.path(), data.path());
        assert!(again.held.as_ref().is_some_and(|h| h.changed), "{again:?}");
        std::fs::write(&file, stop("touch shown")).unwrap();
        let again = load(&user, project.path(), data.path());
        assert!(again.held.is_none(), "{again:?}");
        assert_eq!(again.hooks.all().len(), 1);
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
        tokio::time::timeout(std::time::Duration::from_secs(5), waiting)
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
                    {"type": "command", "command": "cat > bash.json; sleep 0.3; echo no >&2; exit 2"},
                    {"type": "command", "command": "sleep 0.3; echo \"$CLAUDE_PROJECT_DIR\" > dir.txt"}]},
                {"matcher": "*", "hooks": [
                    {"type": "command", "command": "sleep 0.3; echo \"$CLAUDE_PROJECT_DIR\" > dir.txt"}]},
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
        let started = std::time::Instant::now();
        let said = h
            .fire(Event::PreToolUse, Some("Bash"), &common, fields)
            .await
            .expect("hooks matched");
        // Together, not one after the other.
        assert!(started.elapsed() < std::time::Duration::from_millis(550));
        assert_eq!(said.block.as_deref(), Some("no"));
        let payload: Value =
            serde_json::from_str(&std::fs::read_to_string(root.join("bash.json")).unwrap())
                .unwrap();
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
        // No hook for an event: nothing runs, nothing to say.
        assert!(h
            .fire(Event::Stop, None, &common, Map::new())
            .await
            .is_none());
    }
}
