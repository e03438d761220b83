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
pub mod guard;
pub mod matcher;
pub mod named;
pub mod names;
pub mod outcome;
pub mod run;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use serde_json::{Map, Value};

pub use config::{Event, Hook, OnFailure, Source};
pub use guard::{HeldWhy, Hold, ProjectApproval, TRUST_NAME};
pub use outcome::{Combined, Permission, Said};

use crate::consent::file_pin::Pins;

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
/// user, and what [`Held::allow`] approves (exactly these definitions and the files their
/// commands name as they were when the question was put, not as they may be by the time
/// the user answers).
#[derive(Debug, Clone)]
pub struct Held {
    /// The project's `hooks.json`.
    pub file: PathBuf,
    /// The hooks as they would run.
    pub hooks: Vec<Hook>,
    /// Lines of the file that cannot be used (said when they are approved).
    pub problems: Vec<String>,
    /// The user approved an earlier version of the file or of a file its hooks run.
    pub changed: bool,
    /// Why they wait.
    pub why: HeldWhy,
    /// The project files their commands name, as the approval would pin them.
    pub pins: Pins,
    approval: ProjectApproval,
    root: PathBuf,
}

impl Held {
    /// Approve these hooks for the project (remembered in `data_dir`'s trust store, with
    /// the files their commands name) and add them to `hooks`, so they run from the next
    /// event on.
    pub fn allow(&self, hooks: &Hooks, data_dir: &Path) -> Result<(), String> {
        let (mut store, _) = crate::consent::trust::TrustStore::load(data_dir);
        store
            .trust_pinned(&self.root, TRUST_NAME, &self.approval.declared, &self.pins)
            .map_err(|e| format!("the approval was not saved: {e}"))?;
        hooks.admit_project(self.hooks.clone(), self.approval.clone());
        Ok(())
    }

    /// The held hooks, a line each (as [`describe`] puts them).
    pub fn lines(&self) -> Vec<String> {
        self.hooks.iter().map(describe).collect()
    }

    /// The project files the approval pins, a line each (path and hash).
    pub fn file_lines(&self) -> Vec<String> {
        self.pins.lines()
    }
}

/// The paths inside `root` the commands of `hooks` name.
fn named_paths(hooks: &[Hook], root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for hook in hooks {
        for path in named::project_paths(&hook.command, root) {
            if !out.contains(&path) {
                out.push(path);
            }
        }
    }
    out
}

/// The user's hooks (`hooks.json` beside `user_config`) for the project `root`, and the
/// project's own `.rein/hooks.json` when the user approved it as it is now, with the
/// project files its commands name as they are now (`rein hooks allow`, remembered in
/// `data_dir`'s trust store). Unapproved or changed since, the project's hooks would run
/// as the user, outside the sandbox, from a file a cloned repository can ship: they are
/// held, and a notice says so. The project's host-tool files are recorded here at its
/// first session ([`crate::consent::host_tools::baseline`]); the hooks returned check them, and the
/// project's approval, each time they are about to run ([`guard`]).
pub fn load(user_config: &Path, root: &Path, data_dir: &Path) -> Loaded {
    load_with(user_config, root, data_dir, None)
}

/// [`load`] with the trust store a start has already read (`None`: read it here, when the
/// project has hooks).
pub fn load_with(
    user_config: &Path,
    root: &Path,
    data_dir: &Path,
    trust: Option<&crate::consent::trust::TrustStore>,
) -> Loaded {
    let mut notices = Vec::new();
    let mut hooks = Vec::new();
    let mut held = None;
    let mut approval = None;
    if let Err(e) = crate::consent::host_tools::baseline(data_dir, root) {
        notices.push(format!(
            "the state of the project's host-tool files could not be recorded in {} ({e}); \
             hooks compare them with the next record",
            data_dir
                .join(crate::consent::host_tools::FILE_NAME)
                .display()
        ));
    }
    if let Some(file) = config::user_file(user_config) {
        let parsed = config::load(&file, Source::User);
        hooks.extend(parsed.hooks);
        notices.extend(parsed.problems);
    }
    let project = config::project_file(root);
    let (parsed, declared) = config::load_declared(&project, Source::Project);
    if !parsed.hooks.is_empty() {
        let read;
        let store = match trust {
            Some(store) => store,
            None => {
                read = crate::consent::trust::TrustStore::load(data_dir).0;
                &read
            }
        };
        let paths = named_paths(&parsed.hooks, root);
        match declared {
            Some(declared) => {
                let why = guard::verdict(store, root, &declared, &paths);
                let this = ProjectApproval { declared, paths };
                match why {
                    None => {
                        hooks.extend(parsed.hooks);
                        notices.extend(parsed.problems);
                        approval = Some(this);
                    }
                    Some(why) => {
                        notices.push(held_notice(&project, parsed.hooks.len(), &why));
                        held = Some(Held {
                            file: project.clone(),
                            changed: why != HeldWhy::New,
                            pins: Pins::take(root, &this.paths),
                            why,
                            hooks: parsed.hooks,
                            problems: parsed.problems,
                            approval: this,
                            root: root.to_path_buf(),
                        });
                    }
                }
            }
            None => notices.push(held_notice(&project, parsed.hooks.len(), &HeldWhy::New)),
        }
    } else {
        // A file that cannot be read or used says so, though nothing of it would run.
        notices.extend(parsed.problems);
    }
    let hooks = Hooks::new(hooks, root).guarded(data_dir, approval);
    Loaded {
        hooks,
        notices,
        held,
    }
}

/// The notice that the project's `n` hooks in `file` are held, and why.
fn held_notice(file: &Path, n: usize, why: &HeldWhy) -> String {
    format!(
        "{}: {n} project hook{} held: {why}; a project's hooks run as you, outside the \
         sandbox (`rein hooks allow`, or /hooks allow in the dashboard, shows them with the \
         files they run and approves them)",
        file.display(),
        if n == 1 { "" } else { "s" },
    )
}

/// The project's hook definitions as approved: its `hooks.json` as JSON (keys sorted by
/// `serde_json`, so spacing does not count and every key does). `None` when it is not
/// there, not a regular file of a sane size, or not JSON.
pub fn project_definitions(root: &Path) -> Option<Value> {
    config::load_declared(&config::project_file(root), Source::Project).1
}

/// What `rein hooks allow` approved: the hooks, one per line, and the project files their
/// commands name, as pinned.
#[derive(Debug, Clone, Default)]
pub struct Allowed {
    pub hooks: Vec<String>,
    pub files: Vec<String>,
}

/// Approve the project's hooks as they are now, with the project files their commands
/// name as they are now.
pub fn allow_project(root: &Path, data_dir: &Path) -> Result<Allowed, String> {
    let file = config::project_file(root);
    let (parsed, declared) = config::load_declared(&file, Source::Project);
    let declared = declared.ok_or_else(|| {
        let why = parsed.problems.first().cloned().unwrap_or_default();
        format!("{} does not exist or is not JSON {why}", file.display())
    })?;
    let pins = Pins::take(root, &named_paths(&parsed.hooks, root));
    let (mut store, _) = crate::consent::trust::TrustStore::load(data_dir);
    store
        .trust_pinned(root, TRUST_NAME, &declared, &pins)
        .map_err(|e| format!("the approval was not saved: {e}"))?;
    Ok(Allowed {
        hooks: parsed
            .hooks
            .iter()
            .map(describe)
            .chain(parsed.problems)
            .collect(),
        files: pins.lines(),
    })
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
        crate::text::sanitize::sanitize(&hook.command),
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

/// Why a session ends: the SessionEnd hooks' `reason` (and matcher), in Claude Code's
/// words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EndReason {
    /// `/clear`: the conversation ends and a new one starts.
    Clear,
    /// The user logged out (Claude Code's; rein has no login of its own).
    Logout,
    /// The user left at the prompt: `/quit`, Ctrl-D on an empty input, Ctrl-C twice.
    PromptInputExit,
    /// Anything else: the end of `rein -p`, a signal (SIGTERM, SIGHUP), the terminal gone,
    /// another session resumed in its place.
    #[default]
    Other,
}

impl EndReason {
    pub fn name(self) -> &'static str {
        match self {
            EndReason::Clear => "clear",
            EndReason::Logout => "logout",
            EndReason::PromptInputExit => "prompt_input_exit",
            EndReason::Other => "other",
        }
    }
}

/// The hooks in force, and the project they run in. Shared (`Arc<Hooks>`) by the agent,
/// its subagents and the front end: a project's hooks the user approves mid-session are
/// [`Hooks::admit_project`]ed once and run from the next event on, everywhere.
#[derive(Debug, Default)]
pub struct Hooks {
    /// Swapped whole when hooks are admitted; a firing event works on the list it read.
    hooks: RwLock<Arc<Vec<Hook>>>,
    root: PathBuf,
    /// True while the user is being asked about the project's hooks: the session's start
    /// waits for the answer, so an approved SessionStart hook sees this session start.
    asking: tokio::sync::watch::Sender<bool>,
    /// rein's data folder, where the guard reads the host-tool record and the trust store
    /// ([`guard`]); `None`: hooks built without one ([`Hooks::new`]) are not guarded.
    data_dir: Option<PathBuf>,
    /// What the project's hooks in force were approved as.
    project: RwLock<Option<ProjectApproval>>,
    /// The holds already told (a hold is said once a session).
    told: Mutex<HashSet<String>>,
}

impl Clone for Hooks {
    fn clone(&self) -> Hooks {
        let mut hooks = Hooks::new(self.all().to_vec(), &self.root);
        hooks.data_dir = self.data_dir.clone();
        hooks.project = RwLock::new(self.approval());
        hooks.asking.send_replace(*self.asking.borrow());
        hooks
    }
}

impl Hooks {
    /// `hooks` (the user's first, then the project's) running in `root`, unguarded (see
    /// [`guarded`](Self::guarded)).
    pub fn new(hooks: Vec<Hook>, root: &Path) -> Hooks {
        Hooks {
            hooks: RwLock::new(Arc::new(hooks)),
            root: root.to_path_buf(),
            asking: tokio::sync::watch::Sender::new(false),
            data_dir: None,
            project: RwLock::new(None),
            told: Mutex::new(HashSet::new()),
        }
    }

    /// These hooks, checked before each run against the host-tool record and the trust
    /// store in `data_dir` ([`guard`]); `project` is what the project's hooks among them
    /// were approved as.
    pub fn guarded(mut self, data_dir: &Path, project: Option<ProjectApproval>) -> Hooks {
        self.data_dir = Some(data_dir.to_path_buf());
        self.project = RwLock::new(project);
        self
    }

    fn approval(&self) -> Option<ProjectApproval> {
        self.project
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
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

    /// The longest timeout of the SessionEnd hooks that would run for `reason`; `None`
    /// when none would.
    pub fn end_timeout(&self, reason: EndReason) -> Option<std::time::Duration> {
        self.matching(Event::SessionEnd, Some(reason.name()))
            .iter()
            .map(|h| h.timeout)
            .max()
    }

    /// Add the project's hooks `more`, approved as `approval`, after the hooks in force.
    pub fn admit_project(&self, more: Vec<Hook>, approval: ProjectApproval) {
        *self.project.write().unwrap_or_else(PoisonError::into_inner) = Some(approval);
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
        let mut hooks = self.matching(event, subject);
        if hooks.is_empty() {
            return None;
        }
        let mut combined = Combined::default();
        self.hold(event, &mut hooks, &mut combined);
        if hooks.is_empty() {
            return Some(combined);
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
        for said in futures_util::future::join_all(runs).await {
            combined.add(said);
        }
        Some(combined)
    }

    /// The user approved a write of `path` (absolute) in the question: when it is a
    /// host-tool file at the project root, its record follows ([`crate::consent::host_tools`]), so
    /// the user's own change holds nothing. Unguarded hooks record nothing.
    pub fn approved_write(&self, path: &Path) {
        if let Some(data_dir) = &self.data_dir {
            // A record that cannot be written holds the hooks, as any change would.
            let _ = crate::consent::host_tools::record_write(data_dir, &self.root, path);
        }
    }

    /// Take out of `hooks` those that may not run now ([`guard`]: a host-tool file changed,
    /// or the project's approval no longer holds); what holds them goes in `combined`, each
    /// the first time only, and a held PreToolUse hook that blocks on failure blocks.
    fn hold(&self, event: Event, hooks: &mut Vec<Hook>, combined: &mut Combined) {
        let Some(data_dir) = &self.data_dir else {
            return;
        };
        let project = hooks
            .iter()
            .any(|h| h.source == Source::Project)
            .then(|| self.approval())
            .flatten();
        let holds = guard::holds(data_dir, &self.root, project.as_ref());
        if holds.is_empty() {
            return;
        }
        let all = holds.iter().any(|h| matches!(h, Hold::HostTool(_)));
        let (held, run): (Vec<Hook>, Vec<Hook>) = std::mem::take(hooks)
            .into_iter()
            .partition(|h| all || h.source == Source::Project);
        *hooks = run;
        if event == Event::PreToolUse && held.iter().any(|h| h.on_failure == OnFailure::Block) {
            combined.block = Some(format!(
                "a hook that blocks on failure is held ({})",
                holds
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
        let mut told = self.told.lock().unwrap_or_else(PoisonError::into_inner);
        for hold in holds {
            if told.insert(hold.to_string()) {
                combined.held.push(hold);
            }
        }
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
mod tests;
