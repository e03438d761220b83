//! The tools the model can call, and the defensive dispatcher in front of them.
//!
//! A tool call from the model is untrusted input. [`prepare`] checks it and the agent's
//! tool runner turns it into exactly one result string, whatever arrives: broken JSON, an invented tool name, wrong or missing
//! fields, a refused permission or a failing tool all become `Error: ...` text the model can
//! act on. Nothing here panics on model input. A [`Toolset`] says which tools a caller may
//! use: a subagent's call to any other tool is refused here, where calls are prepared, not
//! only left out of its schema list.

pub mod background;
pub mod bash;
pub mod diff;
pub mod editor;
pub mod external;
pub(crate) mod live;
pub mod lsp;
pub mod read_file;
pub mod read_skill;
pub mod str_replace;
pub mod task;
pub mod write_file;
pub mod write_todos;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::sandbox::Sandbox;
use crate::skills::SkillSet;

/// What every tool gets to run: where the project is and the limits that apply.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The project root; relative paths resolve against it and `bash` runs in it.
    pub root: PathBuf,
    /// How long a `bash` command may run before its whole process group is killed.
    pub bash_timeout: Duration,
    /// The keys of the models in use (the API key, and that of a model switched to): no
    /// variable that holds one reaches a command, whatever its name. The sandbox knows the
    /// rest ([`crate::sandbox::CommandEnv`]).
    pub secrets: Vec<String>,
    /// The sandbox `bash` commands run in.
    pub sandbox: Arc<Sandbox>,
    /// The session's todo list, which `write_todos` replaces.
    pub todos: write_todos::TodoList,
    /// The session's skills, which `read_skill` reads.
    pub skills: Arc<SkillSet>,
    /// The editor's view of files, when the front end offers one: the file tools read and
    /// write through it ([`editor`]).
    pub editor: Option<Arc<dyn editor::EditorFiles>>,
    /// Where a `bash` command's output goes as it is printed, for this call (set per call
    /// when the front end shows it live; `None`: only the result at the end).
    pub live: Option<Live>,
    /// The session's language servers, when any may run: an edit's result gets the errors
    /// it introduced, a read opens the file in its server ([`crate::lsp`]).
    pub lsp: Option<crate::lsp::Lsp>,
}

/// Where a running command's output goes as it is printed (see [`ToolContext::live`]).
#[derive(Clone)]
pub struct Live(pub external::Report);

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Live")
    }
}

impl ToolContext {
    /// Where a path argument leads: against the project root, every symbolic link followed
    /// (targets that do not exist yet included), as the permission rules judge it; the
    /// path as written when it leads through too many links. For previews: the file tools
    /// use [`locate`](Self::locate).
    pub fn resolve(&self, path: &str) -> PathBuf {
        crate::host::safe_fs::resolve(Path::new(path), &self.root)
            .unwrap_or_else(|_| self.root.join(path))
    }

    /// The file a tool reads or writes: the path against the project root, `.` and `..`
    /// taken as written, no link followed. The agent gives the tools paths it already
    /// resolved and had judged ([`PreparedCall::pin_path`]); the tools then open them
    /// without following links, so a link found on the way is an error, never a detour.
    pub fn locate(&self, path: &str) -> PathBuf {
        let mut out = PathBuf::from("/");
        let joined = self.root.join(path);
        for component in joined.components() {
            match component {
                std::path::Component::ParentDir => {
                    out.pop();
                }
                std::path::Component::Normal(name) => out.push(name),
                _ => {}
            }
        }
        out
    }
}

/// A tool's description for the model: name, what it does, and a JSON Schema of its arguments.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub parameters: serde_json::Value,
}

/// Every tool of the main agent, in the order the model sees them.
pub fn all_specs() -> Vec<ToolSpec> {
    vec![
        bash::spec(),
        background::output_spec(),
        background::kill_spec(),
        read_file::spec(),
        lsp::spec(),
        write_file::spec(),
        str_replace::spec(),
        write_todos::spec(),
        read_skill::spec(),
        task::spec(),
    ]
}

/// The tools one agent may call: the main agent has them all; a subagent only reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toolset {
    Main,
    Subagent,
}

/// What a subagent may call.
const SUBAGENT_TOOLS: &[&str] = &[bash::NAME, read_file::NAME, lsp::NAME, read_skill::NAME];

impl Toolset {
    /// The schemas this agent's requests carry, in the order the model sees them.
    pub fn specs(self) -> Vec<ToolSpec> {
        let all = all_specs();
        match self {
            Toolset::Main => all,
            Toolset::Subagent => all
                .into_iter()
                .filter(|s| SUBAGENT_TOOLS.contains(&s.name))
                .collect(),
        }
    }

    /// Check a call as [`prepare`] does, and refuse a real tool this agent may not use.
    pub fn prepare(self, name: &str, raw_args: &str) -> Result<PreparedCall, String> {
        let specs = self.specs();
        if self == Toolset::Subagent
            && !specs.iter().any(|s| s.name == name)
            && all_specs().iter().any(|s| s.name == name)
        {
            let usable: Vec<&str> = SUBAGENT_TOOLS
                .iter()
                .copied()
                .filter(|n| *n != lsp::NAME)
                .collect();
            return Err(format!(
                "Error: {name} is not available to a subagent; it can use {}.",
                usable.join(", ")
            ));
        }
        prepare(&specs, name, raw_args)
    }
}

/// The `tools` array of a chat-completions request.
pub fn specs_json(specs: &[ToolSpec]) -> serde_json::Value {
    serde_json::Value::Array(
        specs
            .iter()
            .map(|s| function_json(s.name, s.description, &s.parameters))
            .collect(),
    )
}

/// One entry of a request's `tools`.
pub(crate) fn function_json(
    name: &str,
    description: &str,
    parameters: &serde_json::Value,
) -> serde_json::Value {
    serde_json::json!({
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": parameters,
        }
    })
}

/// A call on the background tasks: start a command, read a task's output, stop a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackgroundCall<'a> {
    Start(&'a str),
    Output(&'a str),
    Kill(&'a str),
}

/// A tool call whose arguments passed every check, ready to be judged and run.
#[derive(Debug)]
pub struct PreparedCall {
    pub name: std::borrow::Cow<'static, str>,
    /// The validated argument object (what the permission policy sees).
    pub args: serde_json::Value,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Bash(bash::Args),
    BashOutput(background::Args),
    BashKill(background::Args),
    ReadFile(read_file::Args),
    Lsp(lsp::Args),
    WriteFile(write_file::Args),
    StrReplace(str_replace::Args),
    WriteTodos(write_todos::Args),
    ReadSkill(read_skill::Args),
    Task(task::Args),
    /// A tool from outside rein ([`external`]): the agent runs it through its provider.
    External,
}

/// Parse a call's raw argument text. An empty string means no arguments (`{}`).
pub fn parse_arguments(raw: &str) -> Result<serde_json::Value, String> {
    if raw.trim().is_empty() {
        return Ok(serde_json::Value::Object(Default::default()));
    }
    serde_json::from_str(raw).map_err(|e| {
        format!(
            "Error: arguments were not valid JSON ({e}). Send the arguments as one JSON object matching the tool's schema."
        )
    })
}

/// Longest string value kept by [`display_arguments`], in bytes.
pub const DISPLAY_STRING_BYTES: usize = 4096;

/// A call's arguments for the front ends: the object with every string value cut to
/// [`DISPLAY_STRING_BYTES`] (a `write_file` of megabytes shows as its path and the start of
/// its content), or the raw text, cut the same way, when it is not JSON. The strings are
/// cut as they are read, so the whole content is never copied.
pub fn display_arguments(raw: &str) -> serde_json::Value {
    if raw.trim().is_empty() {
        return serde_json::Value::Object(Default::default());
    }
    match serde_json::from_str::<Capped>(raw) {
        Ok(Capped(value)) => value,
        Err(_) => serde_json::Value::String(cut(raw).to_string()),
    }
}

/// `s` cut to at most [`DISPLAY_STRING_BYTES`], at a character boundary.
fn cut(s: &str) -> &str {
    let mut end = s.len().min(DISPLAY_STRING_BYTES);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// A JSON value read with its strings cut (see [`display_arguments`]).
struct Capped(serde_json::Value);

impl<'de> serde::Deserialize<'de> for Capped {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(CappedVisitor).map(Capped)
    }
}

struct CappedVisitor;

impl<'de> serde::de::Visitor<'de> for CappedVisitor {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, Into::into))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(serde_json::Value::String(cut(v).to_string()))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Capped(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(serde_json::Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut obj = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let Capped(value) = map.next_value()?;
            obj.insert(key, value);
        }
        Ok(serde_json::Value::Object(obj))
    }
}

/// Check a tool call in the dispatcher's order: valid JSON, a real tool, the right fields.
/// The error is the complete text of the tool result.
pub fn prepare(specs: &[ToolSpec], name: &str, raw_args: &str) -> Result<PreparedCall, String> {
    let args = parse_arguments(raw_args)?;
    let Some(spec) = specs.iter().find(|s| s.name == name) else {
        // `lsp` is offered only while a language server runs: not named here.
        let names: Vec<&str> = specs
            .iter()
            .map(|s| s.name)
            .filter(|n| *n != lsp::NAME)
            .collect();
        return Err(format!(
            "Error: unknown tool \"{}\". The available tools are: {}.",
            printable(name),
            names.join(", ")
        ));
    };
    let wrong = |detail: String| format!("Error: wrong arguments for {} ({detail})", spec.name);
    validate(&spec.parameters, &args).map_err(wrong)?;
    let kind = match spec.name {
        bash::NAME => serde_json::from_value(args.clone()).map(Kind::Bash),
        background::OUTPUT_NAME => serde_json::from_value(args.clone()).map(Kind::BashOutput),
        background::KILL_NAME => serde_json::from_value(args.clone()).map(Kind::BashKill),
        read_file::NAME => serde_json::from_value(args.clone()).map(Kind::ReadFile),
        lsp::NAME => serde_json::from_value(args.clone()).map(Kind::Lsp),
        // The content (often most of the call) stays in `args` alone, not copied: the
        // preview reads it there and the tool takes it when it runs.
        write_file::NAME => serde_json::from_value(without(&args, "content")).map(Kind::WriteFile),
        str_replace::NAME => serde_json::from_value(args.clone()).map(Kind::StrReplace),
        write_todos::NAME => serde_json::from_value(args.clone()).map(Kind::WriteTodos),
        read_skill::NAME => serde_json::from_value(args.clone()).map(Kind::ReadSkill),
        task::NAME => serde_json::from_value(args.clone()).map(Kind::Task),
        other => {
            return Err(format!("Error: {other} failed - this tool cannot run here"));
        }
    }
    .map_err(|e| wrong(e.to_string()))?;
    Ok(PreparedCall {
        name: spec.name.into(),
        args,
        kind,
    })
}

/// Check a call of the external tool `spec` ([`external`]): valid JSON, an object. The
/// schema is the server's to enforce (it may use more of JSON Schema than rein reads).
pub fn prepare_external(
    spec: &external::ExternalSpec,
    raw_args: &str,
) -> Result<PreparedCall, String> {
    let args = parse_arguments(raw_args)?;
    if !args.is_object() {
        return Err(format!(
            "Error: wrong arguments for {} (send one JSON object matching the tool's schema)",
            spec.name
        ));
    }
    Ok(PreparedCall {
        name: spec.name.clone().into(),
        args,
        kind: Kind::External,
    })
}

impl PreparedCall {
    /// For the file tools: replace the path argument by where it leads
    /// ([`crate::host::safe_fs::resolve`], against `root`), before the permission check, so the
    /// rules judge and the tool then reads or writes one and the same place (the tool never
    /// follows a link on the way: a link swapped in after the check makes it fail). The
    /// path as given is kept as `path_as_given` for read rules that match names (`.env`).
    /// An error for a path through too many links, or one that leads to a name that is not
    /// UTF-8.
    pub fn pin_path(&mut self, root: &Path) -> Result<(), String> {
        let path = match &mut self.kind {
            Kind::ReadFile(a) => &mut a.path,
            Kind::Lsp(lsp::Args {
                path: Some(path), ..
            }) => path,
            Kind::WriteFile(a) => &mut a.path,
            Kind::StrReplace(a) => &mut a.path,
            _ => return Ok(()),
        };
        let resolved = crate::host::safe_fs::resolve(Path::new(path.as_str()), root)
            .map_err(|e| format!("Error: {} was not run: {e}", self.name))?;
        let Some(text) = resolved.to_str() else {
            return Err(format!(
                "Error: {} was not run: {} leads to a path that is not UTF-8",
                self.name, path
            ));
        };
        let given = std::mem::replace(path, text.to_string());
        if let Some(args) = self.args.as_object_mut() {
            args.insert("path".into(), serde_json::Value::String(text.to_string()));
            args.insert("path_as_given".into(), serde_json::Value::String(given));
        }
        Ok(())
    }

    /// One line for approval prompts and logs: the tool and its key argument.
    pub fn summary(&self) -> String {
        match &self.kind {
            Kind::Bash(a) => format!("bash: {}", a.command),
            Kind::ReadFile(a) => format!("read_file: {}", a.path),
            Kind::Lsp(a) => format!(
                "lsp: {} {}",
                a.operation,
                a.path.as_deref().or(a.query.as_deref()).unwrap_or("")
            ),
            Kind::WriteFile(a) => format!("write_file: {}", a.path),
            Kind::StrReplace(a) => format!("str_replace: {}", a.path),
            Kind::WriteTodos(a) => format!("write_todos: {} items", a.todos.len()),
            Kind::ReadSkill(a) => format!("read_skill: {}", printable(&a.name)),
            Kind::Task(a) => format!("task: {}", a.description),
            Kind::BashOutput(a) => format!("bash_output: {}", printable(&a.id)),
            Kind::BashKill(a) => format!("bash_kill: {}", printable(&a.id)),
            Kind::External => {
                let args = self.args.to_string();
                let mut end = args.len().min(200);
                while !args.is_char_boundary(end) {
                    end -= 1;
                }
                let more = if end < args.len() { "…" } else { "" };
                format!("{}: {}{more}", self.name, &args[..end])
            }
        }
    }

    /// A call the agent runs on its background tasks ([`background`]), if this is one.
    pub fn background(&self) -> Option<BackgroundCall<'_>> {
        match &self.kind {
            Kind::Bash(a) if a.run_in_background == Some(true) => {
                Some(BackgroundCall::Start(&a.command))
            }
            Kind::BashOutput(a) => Some(BackgroundCall::Output(&a.id)),
            Kind::BashKill(a) => Some(BackgroundCall::Kill(&a.id)),
            _ => None,
        }
    }

    /// Whether the agent runs this call through its external tools' provider.
    pub fn is_external(&self) -> bool {
        matches!(self.kind, Kind::External)
    }

    /// The question of a `task` call, which the agent loop runs itself.
    pub fn task_description(&self) -> Option<&str> {
        match &self.kind {
            Kind::Task(a) => Some(&a.description),
            _ => None,
        }
    }

    /// What the call would change, for the approval prompt: a unified diff for file edits.
    pub fn preview(&self, ctx: &ToolContext) -> Option<String> {
        match &self.kind {
            Kind::WriteFile(a) => {
                diff::write_file_preview(&a.path, string_field(&self.args, "content"), ctx)
            }
            Kind::StrReplace(a) => diff::str_replace_preview(a, ctx),
            _ => None,
        }
    }

    /// Run the tool. A failure's text is the complete error text of the tool result
    /// (`Error: NAME failed - ...`). Cancel by dropping the future: a running command's
    /// whole process group is killed.
    pub async fn execute(self, ctx: &ToolContext) -> crate::conversation::ToolResult {
        let PreparedCall {
            name,
            mut args,
            kind,
        } = self;
        let mut whole = None;
        let result = match kind {
            Kind::Bash(a) => bash::run(a, ctx).await.map(|ran| {
                whole = ran.printed;
                ran.text
            }),
            Kind::ReadFile(a) => read_file::run(a, ctx).await,
            Kind::Lsp(a) => lsp::run(a, ctx).await,
            Kind::WriteFile(mut a) => {
                if let Some(serde_json::Value::String(content)) =
                    args.get_mut("content").map(serde_json::Value::take)
                {
                    a.content = content;
                }
                write_file::run(a, ctx).await
            }
            Kind::StrReplace(a) => str_replace::run(a, ctx).await,
            Kind::WriteTodos(a) => write_todos::run(a, ctx).await,
            Kind::ReadSkill(a) => read_skill::run(a, ctx).await,
            // The agent loop runs subagents, background tasks and external tools; nothing
            // else may.
            Kind::Task(_) => Err("a task cannot run here".to_string()),
            Kind::BashOutput(_) | Kind::BashKill(_) => {
                Err("background tasks are the agent's to run".to_string())
            }
            Kind::External => Err("an external tool cannot run here".to_string()),
        };
        let mut result = crate::conversation::ToolResult::from_tool(
            result.map_err(|e| format!("Error: {name} failed - {e}")),
        );
        result.whole = whole;
        result
    }
}

/// A copy of the argument object `args` without the field `key`.
fn without(args: &serde_json::Value, key: &str) -> serde_json::Value {
    match args.as_object() {
        Some(obj) => serde_json::Value::Object(
            obj.iter()
                .filter(|(k, _)| k.as_str() != key)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        None => args.clone(),
    }
}

/// The string field `key` of `args`; empty when there is none.
fn string_field<'a>(args: &'a serde_json::Value, key: &str) -> &'a str {
    args.get(key).and_then(|v| v.as_str()).unwrap_or("")
}

/// Check `args` against a tool's JSON Schema (the subset the tools use: an object with
/// typed properties and required names), naming the field that is wrong.
fn validate(schema: &serde_json::Value, args: &serde_json::Value) -> Result<(), String> {
    let Some(obj) = args.as_object() else {
        return Err(format!(
            "expected a JSON object of named arguments, got {}",
            json_kind(args)
        ));
    };
    let props = schema.get("properties").and_then(|p| p.as_object());
    if let Some(required) = schema.get("required").and_then(|r| r.as_array()) {
        for name in required.iter().filter_map(|n| n.as_str()) {
            if obj.get(name).is_none_or(|v| v.is_null()) {
                let mut msg = format!("missing required field \"{name}\"");
                if !obj.is_empty() {
                    let got: Vec<String> = obj.keys().map(|k| printable(k)).collect();
                    msg.push_str(&format!("; got: {}", got.join(", ")));
                }
                return Err(msg);
            }
        }
    }
    for (name, value) in obj {
        let Some(expected) = props
            .and_then(|p| p.get(name))
            .and_then(|p| p.get("type"))
            .and_then(|t| t.as_str())
        else {
            continue; // extra fields are ignored
        };
        if value.is_null() {
            continue; // an optional field sent as null is as good as absent
        }
        let ok = match expected {
            "string" => value.is_string(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "array" => value.is_array(),
            "object" => value.is_object(),
            _ => true,
        };
        if !ok {
            return Err(format!(
                "field \"{name}\" must be {}, got {}",
                with_article(expected),
                json_kind(value)
            ));
        }
    }
    Ok(())
}

fn with_article(kind: &str) -> String {
    match kind {
        "integer" | "array" | "object" => format!("an {kind}"),
        other => format!("a {other}"),
    }
}

fn json_kind(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => "null".into(),
        serde_json::Value::Bool(_) => "a boolean".into(),
        serde_json::Value::Number(n) if n.is_f64() => format!("the number {n}"),
        serde_json::Value::Number(n) => format!("the integer {n}"),
        serde_json::Value::String(_) => "a string".into(),
        serde_json::Value::Array(_) => "an array".into(),
        serde_json::Value::Object(_) => "an object".into(),
    }
}

/// A model-supplied name made safe to echo: control characters escaped, length capped.
pub(crate) fn printable(s: &str) -> String {
    let escaped: String = s.chars().flat_map(char::escape_debug).take(80).collect();
    escaped
}

/// A context for the tools' unit tests: `root` as the project, no secrets.
#[cfg(test)]
pub(crate) fn test_context(root: &Path, bash_timeout: Duration) -> ToolContext {
    ToolContext {
        root: root.to_path_buf(),
        bash_timeout,
        secrets: Vec::new(),
        sandbox: Arc::new(Sandbox::off(root)),
        todos: Default::default(),
        skills: Arc::new(SkillSet::empty()),
        editor: None,
        live: None,
        lsp: None,
    }
}

#[cfg(test)]
mod dispatch_tests {
    use super::*;

    fn prep(name: &str, args: &str) -> Result<PreparedCall, String> {
        prepare(&all_specs(), name, args)
    }

    #[test]
    fn bad_json_comes_first() {
        let e = prep("nonexistent", "{\"command\": ").unwrap_err();
        assert!(
            e.starts_with("Error: arguments were not valid JSON ("),
            "{e}"
        );
    }

    #[test]
    fn unknown_tool_lists_the_real_ones() {
        let e = prep("run_shell", "{}").unwrap_err();
        assert_eq!(
            e,
            "Error: unknown tool \"run_shell\". The available tools are: bash, bash_output, bash_kill, read_file, write_file, str_replace, write_todos, read_skill, task."
        );
    }

    #[test]
    fn wrong_arguments_name_the_field() {
        let e = prep("bash", "[1]").unwrap_err();
        assert_eq!(e, "Error: wrong arguments for bash (expected a JSON object of named arguments, got an array)");
        let e = prep("bash", "{\"command\": 5}").unwrap_err();
        assert_eq!(e, "Error: wrong arguments for bash (field \"command\" must be a string, got the integer 5)");
        let e = prep("read_file", "{\"file\": \"x\"}").unwrap_err();
        assert_eq!(
            e,
            "Error: wrong arguments for read_file (missing required field \"path\"; got: file)"
        );
        let e = prep("read_file", "{\"path\": \"x\", \"offset\": \"3\"}").unwrap_err();
        assert_eq!(e, "Error: wrong arguments for read_file (field \"offset\" must be an integer, got a string)");
    }

    #[test]
    fn good_calls_prepare_and_summarise() {
        let c = prep("bash", "{\"command\": \"ls -la\", \"extra\": 1}").unwrap();
        assert_eq!(c.summary(), "bash: ls -la");
        let c = prep("read_file", "{\"path\": \"a.txt\", \"offset\": null}").unwrap();
        assert_eq!(c.name, "read_file");
    }

    #[test]
    fn a_subagent_cannot_call_what_it_does_not_have() {
        let names: Vec<&str> = Toolset::Subagent.specs().iter().map(|s| s.name).collect();
        assert_eq!(names, ["bash", "read_file", "lsp", "read_skill"]);
        // (`lsp` is offered only while a language server runs; the errors do not name it.)
        for tool in ["write_file", "str_replace", "write_todos", "task"] {
            let e = Toolset::Subagent.prepare(tool, "{}").unwrap_err();
            assert_eq!(
                e,
                format!("Error: {tool} is not available to a subagent; it can use bash, read_file, read_skill.")
            );
        }
        let e = Toolset::Subagent.prepare("rm", "{}").unwrap_err();
        assert!(
            e.starts_with(
                "Error: unknown tool \"rm\". The available tools are: bash, read_file, read_skill."
            ),
            "{e}"
        );
        assert!(Toolset::Subagent
            .prepare("bash", "{\"command\": \"ls\"}")
            .is_ok());
        let task = Toolset::Main
            .prepare("task", "{\"description\": \"where?\"}")
            .unwrap();
        assert_eq!(task.task_description(), Some("where?"));
    }

    #[test]
    fn a_huge_write_is_prepared_without_copying_its_content() {
        let content = "line\n".repeat(10_000);
        let raw = serde_json::json!({ "path": "a.txt", "content": content }).to_string();
        let call = prep("write_file", &raw).unwrap();
        // The content lives once, in the argument object the policy sees.
        assert_eq!(call.args["content"].as_str(), Some(content.as_str()));
        match &call.kind {
            Kind::WriteFile(a) => assert!(a.path == "a.txt" && a.content.is_empty()),
            other => panic!("{other:?}"),
        }
        let shown = display_arguments(&raw);
        assert_eq!(shown["path"], "a.txt");
        assert_eq!(
            shown["content"].as_str().map(str::len),
            Some(DISPLAY_STRING_BYTES)
        );
        let broken = format!("{{\"path\": \"é{}", "é".repeat(5000));
        let shown = display_arguments(&broken);
        assert!(shown
            .as_str()
            .is_some_and(|s| s.len() <= DISPLAY_STRING_BYTES));
        assert_eq!(display_arguments(" "), serde_json::json!({}));
    }

    #[test]
    fn schemas_are_objects_with_required_fields() {
        for spec in all_specs() {
            assert_eq!(spec.parameters["type"], "object", "{}", spec.name);
            assert!(spec.parameters["properties"].is_object(), "{}", spec.name);
            assert!(!spec.description.trim().is_empty(), "{}", spec.name);
        }
    }
}
