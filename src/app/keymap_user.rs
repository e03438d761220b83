//! The user's keymap: `keymap.toml` in rein's config folder, merged over the compiled-in
//! `assets/keymap.toml` per mode.
//!
//! The file has the built-in's format (`mode = [{ on, action, when?, desc? }]`). Each
//! entry takes its keys away from whatever binds them in that mode (the other keys of a
//! built-in multi-key entry keep their binding), then binds them to its action, in the
//! place of the first binding it took a key from (so the footer and `/help` keep their
//! order), or at the end for keys that were free. `action = "none"` only unbinds. A
//! missing `desc` borrows the built-in's description of the action in that mode.
//!
//! Nothing in the file can break the keymap: a file that does not parse is one error and
//! the built-in keymap stays whole; an entry with an unknown mode, action or condition, or
//! a key rein cannot read, is one error naming the file, the mode and the key, and only
//! that entry is skipped. [`load`] never fails; it says what it did ([`UserKeymap`]), and
//! warns when a mode is left without a way out (no key to quit, none to deny).

use std::path::{Path, PathBuf};

use serde::de::value::{Error as ValueError, StrDeserializer};
use serde::Deserialize;

use super::keymap::{Action, Binding, Condition, KeySpec, Keymap, Mode};

/// The largest keymap file read (a keymap is a few KiB at most).
pub const MAX_KEYMAP_BYTES: u64 = 256 * 1024;

/// The file's name in rein's config folder (beside `config.toml`).
pub const FILE_NAME: &str = "keymap.toml";

/// The keymap in force and where it came from.
#[derive(Debug, Clone)]
pub struct UserKeymap {
    /// The built-in keymap with the user's entries merged in.
    pub keymap: Keymap,
    /// The user's file, when there was one that parsed.
    pub path: Option<PathBuf>,
    /// How many of its entries were applied.
    pub applied: usize,
    /// One line per problem: a bad file, a skipped entry, a mode left without a way out.
    pub errors: Vec<String>,
}

impl UserKeymap {
    /// The built-in keymap alone.
    pub fn builtin(builtin: &Keymap) -> UserKeymap {
        UserKeymap {
            keymap: builtin.clone(),
            path: None,
            applied: 0,
            errors: Vec::new(),
        }
    }

    /// Where the keys came from, for `rein config`: "built-in", or "built-in +
    /// /path/keymap.toml (3 bindings)".
    pub fn source(&self) -> String {
        match &self.path {
            None => "built-in".to_string(),
            Some(path) => {
                let plural = if self.applied == 1 { "" } else { "s" };
                format!(
                    "built-in + {} ({} binding{plural})",
                    path.display(),
                    self.applied
                )
            }
        }
    }
}

/// Read the user's keymap file at `path` (a missing file is no error) and merge it over
/// `builtin`.
pub fn load(path: &Path, builtin: &Keymap) -> UserKeymap {
    let mut loaded = UserKeymap::builtin(builtin);
    let text = match rein_core::host::safe_fs::read_small_text(path, MAX_KEYMAP_BYTES) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return loaded,
        Err(e) => {
            loaded.errors.push(format!(
                "{}: cannot read it ({e}); the built-in keymap is used",
                path.display()
            ));
            return loaded;
        }
    };
    merge_text(&mut loaded, path, &text);
    loaded
}

/// Merge the keymap file `text` (read from `path`) into `loaded`.
fn merge_text(loaded: &mut UserKeymap, path: &Path, text: &str) {
    let file = path.display();
    let table: toml::Table = match text.parse() {
        Ok(table) => table,
        Err(e) => {
            let e: toml::de::Error = e;
            let line = e
                .span()
                .map(|span| {
                    let before = &text.as_bytes()[..span.start.min(text.len())];
                    format!(
                        " line {}:",
                        before.iter().filter(|&&b| b == b'\n').count() + 1
                    )
                })
                .unwrap_or_default();
            let message = e.message().split_whitespace().collect::<Vec<_>>().join(" ");
            loaded.errors.push(format!(
                "{file}:{line} {message}; the built-in keymap is used"
            ));
            return;
        }
    };
    loaded.path = Some(path.to_path_buf());
    for (mode_name, entries) in &table {
        let Some(mode) = Mode::ALL.into_iter().find(|m| m.name() == mode_name) else {
            let known: Vec<&str> = Mode::ALL.iter().map(|m| m.name()).collect();
            loaded.errors.push(format!(
                "{file}: unknown mode \"{mode_name}\" (known: {}); its entries are skipped",
                known.join(", ")
            ));
            continue;
        };
        let Some(entries) = entries.as_array() else {
            loaded.errors.push(format!(
                "{file}: mode {mode_name}: expected a list of {{ on, action }} entries; skipped"
            ));
            continue;
        };
        for (i, entry) in entries.iter().enumerate() {
            match parse_entry(entry, builtin_desc(&loaded.keymap, mode)) {
                Ok(entry) => {
                    apply(&mut loaded.keymap, mode, entry);
                    loaded.applied += 1;
                }
                Err((key, problem)) => {
                    let key = key.unwrap_or_else(|| format!("entry {}", i + 1));
                    loaded.errors.push(format!(
                        "{file}: mode {mode_name}, key {key}: {problem}; this entry is skipped"
                    ));
                }
            }
        }
    }
    loaded.errors.extend(lockout_warnings(&loaded.keymap, path));
}

/// One entry of the user's file, checked.
struct Entry {
    keys: Vec<KeySpec>,
    /// `None` unbinds the keys (`action = "none"`).
    action: Option<Action>,
    when: Option<Condition>,
    desc: String,
}

/// The description of an action, for entries without `desc`: its binding's in this mode,
/// else in any mode.
fn builtin_desc(keymap: &Keymap, mode: Mode) -> impl Fn(Action) -> Option<String> + '_ {
    move |action| {
        std::iter::once(mode)
            .chain(Mode::ALL)
            .flat_map(|m| keymap.bindings(m))
            .find(|b| b.action == action)
            .map(|b| b.desc.clone())
    }
}

/// Check one entry. The error is (the key as written, when known; the problem).
fn parse_entry(
    entry: &toml::Value,
    desc_of: impl Fn(Action) -> Option<String>,
) -> Result<Entry, (Option<String>, String)> {
    let Some(table) = entry.as_table() else {
        return Err((None, "expected a table { on, action }".to_string()));
    };
    let written: Vec<String> = match table.get("on") {
        Some(toml::Value::String(s)) => vec![s.clone()],
        Some(toml::Value::Array(items)) if !items.is_empty() => {
            match items
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect()
            {
                Some(keys) => keys,
                None => return Err((None, "`on` must be a key or a list of keys".to_string())),
            }
        }
        Some(_) => return Err((None, "`on` must be a key or a list of keys".to_string())),
        None => return Err((None, "`on` is missing".to_string())),
    };
    let label = written.join("/");
    let fail = |problem: String| Err((Some(label.clone()), problem));
    if let Some(unknown) = table
        .keys()
        .find(|k| !["on", "action", "when", "desc"].contains(&k.as_str()))
    {
        return fail(format!(
            "unknown field `{unknown}` (an entry has on, action, when, desc)"
        ));
    }
    let mut keys = Vec::new();
    for key in &written {
        match key.parse::<KeySpec>() {
            Ok(spec) => keys.push(spec),
            Err(e) => return Err((Some(key.clone()), e.to_string())),
        }
    }
    let action = match table.get("action") {
        Some(toml::Value::String(s)) if s == "none" => None,
        Some(toml::Value::String(s)) => {
            match Action::deserialize(StrDeserializer::<ValueError>::new(s)) {
                Ok(action) => Some(action),
                Err(_) => return fail(format!("unknown action \"{s}\"")),
            }
        }
        Some(_) => return fail("`action` must be a string".to_string()),
        None => return fail("`action` is missing (\"none\" unbinds the key)".to_string()),
    };
    let when = match table.get("when") {
        None => None,
        Some(toml::Value::String(s)) => {
            match Condition::deserialize(StrDeserializer::<ValueError>::new(s)) {
                Ok(c) => Some(c),
                Err(_) => {
                    return fail(format!(
                        "unknown condition \"{s}\" (known: input_empty, first_line, last_line)"
                    ))
                }
            }
        }
        Some(_) => return fail("`when` must be a string".to_string()),
    };
    let desc = match table.get("desc") {
        Some(toml::Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(toml::Value::String(_)) | None => action
            .and_then(&desc_of)
            .or_else(|| action.map(|a| format!("{a:?}")))
            .unwrap_or_default(),
        Some(_) => return fail("`desc` must be a string".to_string()),
    };
    Ok(Entry {
        keys,
        action,
        when,
        desc,
    })
}

/// Take the entry's keys from every binding of the mode, then bind them where the first
/// of those bindings was (or at the end).
fn apply(keymap: &mut Keymap, mode: Mode, entry: Entry) {
    let bindings = keymap.bindings_mut(mode);
    let mut place = None;
    for (i, binding) in bindings.iter_mut().enumerate() {
        let before = binding.keys.len();
        binding.keys.retain(|k| !entry.keys.contains(k));
        if binding.keys.len() != before && place.is_none() {
            place = Some(i);
        }
    }
    let Some(action) = entry.action else {
        bindings.retain(|b| !b.keys.is_empty());
        return;
    };
    let binding = Binding {
        keys: entry.keys,
        action,
        when: entry.when,
        desc: entry.desc,
    };
    match place {
        Some(i) => bindings.insert(i, binding),
        None => bindings.push(binding),
    }
    bindings.retain(|b| !b.keys.is_empty());
}

/// The ways out a keymap must keep: per mode, actions of which at least one needs a key.
const WAYS_OUT: &[(Mode, &[Action], &str)] = &[
    (
        Mode::Global,
        &[Action::Cancel, Action::Quit],
        "no key is left to interrupt or quit (cancel, quit); /quit still leaves",
    ),
    (
        Mode::Approval,
        &[Action::Deny],
        "no key is left to deny a request (deny)",
    ),
    (
        Mode::Approval,
        &[
            Action::Approve,
            Action::ApproveSession,
            Action::ApproveProject,
        ],
        "no key is left to allow a request (approve, approve_session, approve_project)",
    ),
    (
        Mode::Search,
        &[Action::CancelSearch],
        "no key is left to leave the history search (cancel_search)",
    ),
    (
        Mode::Help,
        &[Action::CloseHelp],
        "no key is left to close the help (close_help)",
    ),
    (
        Mode::Plan,
        &[Action::KeepPlanning],
        "no key is left to close the plan review (keep_planning)",
    ),
    (
        Mode::Pager,
        &[Action::ClosePager],
        "no key is left to close the transcript pager (close_pager)",
    ),
    (
        Mode::Form,
        &[Action::FormCancel, Action::FormDecline],
        "no key is left to close a server's form (form_cancel)",
    ),
    (
        Mode::Mcp,
        &[Action::ClosePicker],
        "no key is left to close the MCP servers (close_picker)",
    ),
];

/// One warning per mode the merged keymap leaves without a way out: no binding of those
/// actions with a key every terminal sends ([`KeySpec::reliably_sent`]; a way out bound
/// only to `f20` or `ctrl-1` is none in most terminals).
fn lockout_warnings(keymap: &Keymap, path: &Path) -> Vec<String> {
    WAYS_OUT
        .iter()
        .filter(|(mode, actions, _)| {
            !keymap
                .bindings(*mode)
                .iter()
                .any(|b| actions.contains(&b.action) && b.keys.iter().any(KeySpec::reliably_sent))
        })
        .map(|(mode, _, what)| format!("{}: mode {}: {what}", path.display(), mode.name()))
        .collect()
}

/// `keymap.toml` beside the user's `config.toml`.
pub fn path_beside(user_config: &Path) -> Option<PathBuf> {
    user_config.parent().map(|dir| dir.join(FILE_NAME))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::keymap::DEFAULT_KEYMAP;

    fn builtin() -> Keymap {
        Keymap::parse(DEFAULT_KEYMAP).unwrap_or_else(|e| panic!("{e}"))
    }

    fn merged(text: &str) -> UserKeymap {
        let mut loaded = UserKeymap::builtin(&builtin());
        merge_text(&mut loaded, Path::new("/cfg/keymap.toml"), text);
        loaded
    }

    fn key(name: &str) -> KeySpec {
        name.parse().unwrap_or_else(|e| panic!("{e}"))
    }

    fn action_of(keymap: &Keymap, mode: Mode, name: &str) -> Option<Action> {
        keymap
            .bindings(mode)
            .iter()
            .find(|b| b.keys.contains(&key(name)))
            .map(|b| b.action)
    }

    #[test]
    fn an_entry_replaces_one_key_of_a_multi_key_binding_and_adds_new_keys() {
        let loaded = merged(
            r#"
approval = [{ on = "esc", action = "deny_with_feedback" }]
global = [{ on = "ctrl-y", action = "toggle_todos", desc = "todos" }]
"#,
        );
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
        assert_eq!(loaded.applied, 2);
        let k = &loaded.keymap;
        assert_eq!(
            action_of(k, Mode::Approval, "esc"),
            Some(Action::DenyWithFeedback)
        );
        assert_eq!(action_of(k, Mode::Approval, "n"), Some(Action::Deny));
        assert_eq!(action_of(k, Mode::Approval, "ctrl-c"), Some(Action::Deny));
        // The new binding sits where the one it took a key from was, its desc borrowed.
        let deny_at = builtin()
            .bindings(Mode::Approval)
            .iter()
            .position(|b| b.action == Action::Deny);
        let esc_at = k
            .bindings(Mode::Approval)
            .iter()
            .position(|b| b.keys == [key("esc")]);
        assert_eq!(esc_at, deny_at);
        assert_eq!(
            k.hint(Mode::Approval, Action::DenyWithFeedback)
                .map(|(_, d)| d.to_string()),
            Some("deny and say why".to_string())
        );
        assert_eq!(
            action_of(k, Mode::Global, "ctrl-y"),
            Some(Action::ToggleTodos)
        );
        assert_eq!(
            action_of(k, Mode::Global, "ctrl-t"),
            Some(Action::ToggleTodos)
        );
        assert_eq!(
            loaded.source_for("/cfg/keymap.toml"),
            "built-in + /cfg/keymap.toml (2 bindings)"
        );
    }

    #[test]
    fn none_unbinds_and_a_binding_with_no_key_left_goes() {
        let loaded = merged(r#"global = [{ on = ["ctrl-t", "f1"], action = "none" }]"#);
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
        let k = &loaded.keymap;
        assert_eq!(action_of(k, Mode::Global, "ctrl-t"), None);
        assert!(k.hint(Mode::Global, Action::ToggleTodos).is_none());
        assert!(k.hint(Mode::Global, Action::Help).is_none());
        assert_eq!(action_of(k, Mode::Global, "ctrl-c"), Some(Action::Cancel));
    }

    #[test]
    fn a_bad_file_keeps_the_built_in_keymap_whole() {
        let loaded = merged("global = [\n  { on = \"ctrl-t\" action = \"none\" },\n]\n");
        assert_eq!(loaded.keymap, builtin());
        assert_eq!(loaded.errors.len(), 1, "{:?}", loaded.errors);
        assert!(
            loaded.errors[0].starts_with("/cfg/keymap.toml: line 2:"),
            "{}",
            loaded.errors[0]
        );
        assert!(loaded.path.is_none());
        assert_eq!(loaded.source(), "built-in");
    }

    #[test]
    fn a_bad_entry_is_one_line_naming_file_mode_and_key_and_the_rest_applies() {
        let loaded = merged(
            r#"
global = [
  { on = "ctrl-y", action = "explode" },
  { on = "hyper-x", action = "help" },
  { on = "ctrl-u", action = "help", when = "sometimes" },
  { on = "ctrl-q", action = "quit" },
]
globl = [{ on = "ctrl-c", action = "quit" }]
"#,
        );
        let errors = &loaded.errors;
        assert_eq!(errors.len(), 4, "{errors:?}");
        assert!(
            errors[0]
                .contains("/cfg/keymap.toml: mode global, key ctrl-y: unknown action \"explode\""),
            "{}",
            errors[0]
        );
        assert!(
            errors[1].contains("mode global, key hyper-x: unknown key"),
            "{}",
            errors[1]
        );
        assert!(
            errors[2].contains("key ctrl-u: unknown condition \"sometimes\""),
            "{}",
            errors[2]
        );
        assert!(
            errors[3].contains("unknown mode \"globl\""),
            "{}",
            errors[3]
        );
        assert!(errors.iter().all(|e| !e.contains('\n')));
        assert_eq!(loaded.applied, 1);
        assert_eq!(
            action_of(&loaded.keymap, Mode::Global, "ctrl-q"),
            Some(Action::Quit)
        );
        assert_eq!(action_of(&loaded.keymap, Mode::Global, "ctrl-y"), None);
        assert_eq!(
            action_of(&loaded.keymap, Mode::Global, "ctrl-c"),
            Some(Action::Cancel)
        );
    }

    #[test]
    fn a_keymap_without_a_way_out_is_warned_about_but_applied() {
        let loaded = merged(
            r#"
global = [{ on = "ctrl-c", action = "none" }]
approval = [{ on = ["n", "esc", "ctrl-c"], action = "scroll_down" }]
"#,
        );
        assert_eq!(loaded.errors.len(), 2, "{:?}", loaded.errors);
        assert!(loaded.errors[0].contains("mode global: no key is left to interrupt or quit"));
        assert!(loaded.errors[1].contains("mode approval: no key is left to deny"));
        assert_eq!(action_of(&loaded.keymap, Mode::Global, "ctrl-c"), None);
    }

    #[test]
    fn a_way_out_bound_only_to_keys_terminals_do_not_send_is_no_way_out() {
        for keys in [r#""f20""#, r#"["ctrl-1", "shift-enter", "ctrl-é"]"#] {
            let loaded = merged(&format!(
                r#"global = [{{ on = "ctrl-c", action = "none" }}, {{ on = {keys}, action = "quit" }}]"#
            ));
            assert_eq!(loaded.errors.len(), 1, "{keys}: {:?}", loaded.errors);
            assert!(loaded.errors[0].contains("mode global: no key is left to interrupt or quit"));
        }
        let loaded = merged(
            r#"global = [{ on = "ctrl-c", action = "none" }, { on = ["f20", "ctrl-q"], action = "quit" }]"#,
        );
        assert_eq!(loaded.errors, Vec::<String>::new());
        for (key, sent) in [
            ("ctrl-q", true),
            ("alt-x", true),
            ("ctrl-up", true),
            ("shift-f5", true),
            ("ctrl-space", true),
            ("f13", false),
            ("ctrl-5", false),
            ("ctrl-enter", false),
            ("alt-esc", false),
        ] {
            let spec: KeySpec = key.parse().unwrap();
            assert_eq!(spec.reliably_sent(), sent, "{key}");
        }
    }

    #[test]
    fn an_action_new_to_a_mode_borrows_its_words_from_another_mode() {
        let loaded = merged(r#"global = [{ on = "ctrl-e", action = "edit_in_editor" }]"#);
        assert_eq!(
            loaded
                .keymap
                .hint(Mode::Global, Action::EditInEditor)
                .map(|(k, d)| (k, d.to_string())),
            Some(("Ctrl-E".to_string(), "edit in $VISUAL/$EDITOR".to_string()))
        );
    }

    #[test]
    fn a_missing_file_is_the_built_in_keymap_and_no_error() {
        let dir = std::env::temp_dir().join(format!("rein-keymap-missing-{}", std::process::id()));
        let loaded = load(&dir.join(FILE_NAME), &builtin());
        assert!(loaded.errors.is_empty());
        assert_eq!(loaded.source(), "built-in");
        assert_eq!(loaded.keymap, builtin());
    }

    impl UserKeymap {
        fn source_for(&self, path: &str) -> String {
            let mut with = self.clone();
            with.path = Some(PathBuf::from(path));
            with.source()
        }
    }
}
