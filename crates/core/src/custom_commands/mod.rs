//! Custom slash commands: Markdown prompt files that become `/name` commands.
//!
//! [`CommandSet::discover`] reads, in this order, the user's `~/.claude/commands/` and
//! `~/.agents/commands/`, then `.claude/commands/` and `.agents/commands/` in every folder
//! from the repository's root down to the project (the same folders [`crate::instructions`]
//! reads `AGENTS.md` from); on a name clash the later place wins, so the folder closest to
//! the project has the last word and, within one folder, `.agents/` wins over Claude
//! Code's `.claude/`. The command in force names the files it hides
//! ([`CustomCommand::shadows`]), so a listing can say so. Each `*.md` file is
//! a command named after the file (`review.md` is `/review`); a file in a subfolder gets the
//! folder as a namespace (`frontend/test.md` is `/frontend:test`). A name is lowercase
//! letters, digits, `-`, `_` and `:`, starting with a letter or digit.
//!
//! A file may open with a front matter ([`crate::skills::front_matter`], the parser skills
//! use) giving `description` and `argument-hint`; the rest is the prompt. Without a
//! `description` the prompt's first line stands for it. What is sent is the prompt with the
//! arguments put in ([`expand`]).
//!
//! A file that cannot be a command (bad name, not UTF-8, larger than [`MAX_COMMAND_BYTES`],
//! a symbolic link, a broken front matter, an empty prompt, a name a built-in command has)
//! is skipped with a one-line notice naming the file and why; discovery never fails.
//! The dashboard discovers them at start and again on `/clear` (`Effect::ReloadCommands`).
//!
//! An MCP server's prompts join the set as commands of their own ([`CommandSource::Mcp`],
//! [`CommandSet::set_mcp`]): listed and completed like the others, but what they send is
//! the typed line itself, which the agent fetches from the server (`/mcp__SERVER__PROMPT`).
//! Nothing here imports the rest of rein but `safe_fs`, `instructions` (its folder chain)
//! and the skills' front matter parser: which names are built in is asked of the caller.

pub mod expand;

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::skills::front_matter;

/// Largest command file read; a bigger one is skipped with a notice.
pub const MAX_COMMAND_BYTES: u64 = 64 * 1024;
/// Longest one-line description kept (the completion list and `/help` show it).
pub const MAX_DESCRIPTION_CHARS: usize = 120;
/// How deep subfolders are read for namespaced commands (`a:b:c`).
const MAX_DEPTH: usize = 3;
/// The folder, under a home or a project folder, that holds the command files.
pub const COMMANDS_DIR: &str = ".agents/commands";
/// Claude Code's folder for them, read too (before [`COMMANDS_DIR`] in the same place, so
/// rein's own wins a clash there).
pub const CLAUDE_COMMANDS_DIR: &str = ".claude/commands";

/// Where a command was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandSource {
    /// `~/.agents/commands` or `~/.claude/commands`.
    User,
    /// `.agents/commands` or `.claude/commands` of the project or a folder above it in the
    /// repository.
    Project,
    /// An MCP server's prompt (its label is the server's name).
    Mcp,
}

impl CommandSource {
    pub fn name(self) -> &'static str {
        match self {
            CommandSource::User => "user",
            CommandSource::Project => "project",
            CommandSource::Mcp => "MCP server",
        }
    }
}

/// One usable custom command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCommand {
    /// Without the slash: `review`, `frontend:test`.
    pub name: String,
    /// One line: the front matter's `description`, else the prompt's first line, cut.
    pub description: String,
    /// What the arguments are, as the front matter's `argument-hint` gives it.
    pub argument_hint: Option<String>,
    /// The prompt, front matter removed.
    pub body: String,
    pub path: PathBuf,
    /// The path as the user knows it: relative to the project, or under `~`.
    pub label: String,
    pub source: CommandSource,
    /// The files of the same name this one hides (their labels, outermost first): from a
    /// place read earlier, or Claude Code's `.claude/commands` beside `.agents/commands`.
    pub shadows: Vec<String>,
    /// The label of the user's own command of this name that this project command hides
    /// (`~/.claude/commands/review.md`): said when it runs ([`CustomCommand::hides_users`]).
    pub hides_user: Option<String>,
}

impl CustomCommand {
    /// `/name <hint>`, as `/help` and the completion list show it.
    pub fn usage(&self) -> String {
        match &self.argument_hint {
            Some(hint) => format!("/{} {hint}", self.name),
            None => format!("/{}", self.name),
        }
    }

    /// When this is a project's command that hides one of the user's own: a sentence for
    /// the front ends to show as it runs, since a repository (or a model that wrote into it)
    /// could otherwise put its own prompt behind the name the user trusts.
    pub fn hides_users(&self) -> Option<String> {
        let user = self.hides_user.as_ref()?;
        Some(format!(
            "/{} runs the project's {}, not your own {user}, which it shadows",
            self.name, self.label
        ))
    }
}

/// The custom commands of a session, by name, and what was skipped on the way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandSet {
    commands: Vec<CustomCommand>,
    /// One sentence per file skipped, naming it and the problem.
    pub notices: Vec<String>,
}

/// A typed `/name args` that is a custom command, and the text it expands to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expansion<'a> {
    pub command: &'a CustomCommand,
    /// The whole argument text, trimmed.
    pub args: String,
    /// What the model gets.
    pub text: String,
    /// The prompt was cut at [`expand::MAX_EXPANDED_BYTES`].
    pub cut: bool,
}

impl CommandSet {
    /// No custom commands.
    pub fn empty() -> CommandSet {
        CommandSet::default()
    }

    /// The commands of the user (`home`) and of the folders from the repository's root down
    /// to `project`; `is_builtin` says which names rein's own commands have (they win).
    pub fn discover(
        home: Option<&Path>,
        project: &Path,
        is_builtin: &dyn Fn(&str) -> bool,
    ) -> CommandSet {
        let mut places = Vec::new();
        if let Some(home) = home {
            for sub in [CLAUDE_COMMANDS_DIR, COMMANDS_DIR] {
                places.push((home.join(sub), CommandSource::User));
            }
        }
        for dir in crate::instructions::project_dirs(project) {
            for sub in [CLAUDE_COMMANDS_DIR, COMMANDS_DIR] {
                places.push((dir.join(sub), CommandSource::Project));
            }
        }
        let labeller = Labeller { home, project };
        CommandSet::from_places(&places, &labeller, is_builtin)
    }

    fn from_places(
        places: &[(PathBuf, CommandSource)],
        labeller: &Labeller<'_>,
        is_builtin: &dyn Fn(&str) -> bool,
    ) -> CommandSet {
        let mut notices = Vec::new();
        let mut by_name: BTreeMap<String, CustomCommand> = BTreeMap::new();
        for (dir, source) in crate::skills::distinct_places(places) {
            let mut found = Vec::new();
            scan(dir, "", 0, labeller, &mut found, &mut notices);
            for path_and_name in found {
                let (path, name) = path_and_name;
                let label = labeller.label(&path);
                if is_builtin(&name) {
                    notices.push(format!(
                        "command {label} skipped: /{name} is a built-in command"
                    ));
                    continue;
                }
                match read_command(&path) {
                    Ok((description, argument_hint, body)) => {
                        let (shadows, hides_user) = match by_name.remove(&name) {
                            Some(hidden) => {
                                let user = match hidden.source {
                                    CommandSource::User => Some(hidden.label.clone()),
                                    _ => hidden.hides_user,
                                };
                                let mut all = hidden.shadows;
                                all.push(hidden.label);
                                (all, user.filter(|_| *source == CommandSource::Project))
                            }
                            None => (Vec::new(), None),
                        };
                        by_name.insert(
                            name.clone(),
                            CustomCommand {
                                name,
                                description,
                                argument_hint,
                                body,
                                path,
                                label,
                                source: *source,
                                shadows,
                                hides_user,
                            },
                        );
                    }
                    Err(why) => notices.push(format!("command {label} skipped: {why}")),
                }
            }
        }
        CommandSet {
            commands: by_name.into_values().collect(),
            notices,
        }
    }

    /// The command called `name` (without the slash).
    pub fn get(&self, name: &str) -> Option<&CustomCommand> {
        self.commands.iter().find(|c| c.name == name)
    }

    /// The commands, by name.
    pub fn iter(&self) -> std::slice::Iter<'_, CustomCommand> {
        self.commands.iter()
    }

    pub fn len(&self) -> usize {
        self.commands.len()
    }

    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    /// Put `prompts` (commands of [`CommandSource::Mcp`]) in place of the MCP prompts
    /// the set had; the files' commands win a clash of names.
    pub fn set_mcp(&mut self, prompts: Vec<CustomCommand>) {
        self.commands.retain(|c| c.source != CommandSource::Mcp);
        for prompt in prompts {
            if self.get(&prompt.name).is_none() {
                self.commands.push(prompt);
            }
        }
        self.commands.sort_by(|a, b| a.name.cmp(&b.name));
    }

    /// The MCP prompts of the set (to carry over into a set read again).
    pub fn mcp(&self) -> Vec<CustomCommand> {
        self.commands
            .iter()
            .filter(|c| c.source == CommandSource::Mcp)
            .cloned()
            .collect()
    }

    /// `input` expanded, when its first word is `/name` of a custom command; `None` for
    /// anything else (a message, a built-in command). Both front ends send the result. An
    /// MCP prompt's expansion is the typed line: the agent fetches the prompt.
    pub fn expand<'a>(&'a self, input: &str) -> Option<Expansion<'a>> {
        let input = input.trim();
        let first = input.split_whitespace().next()?;
        let command = self.get(first.strip_prefix('/')?)?;
        let args = input[first.len()..].trim().to_string();
        if command.source == CommandSource::Mcp {
            return Some(Expansion {
                command,
                args,
                text: input.to_string(),
                cut: false,
            });
        }
        let (text, cut) =
            expand::substitute_within(&command.body, &args, expand::MAX_EXPANDED_BYTES);
        Some(Expansion {
            command,
            args,
            text,
            cut,
        })
    }
}

/// Says where a file is in the words the user knows.
struct Labeller<'a> {
    home: Option<&'a Path>,
    project: &'a Path,
}

impl Labeller<'_> {
    fn label(&self, path: &Path) -> String {
        if let Ok(rest) = path.strip_prefix(self.project) {
            return rest.display().to_string();
        }
        if let Some(rest) = self
            .home
            .filter(|h| h.parent().is_some())
            .and_then(|h| path.strip_prefix(h).ok())
        {
            return format!("~/{}", rest.display());
        }
        path.display().to_string()
    }
}

/// Whether `name` may name a command: lowercase ASCII letters, digits, `-`, `_`, `:`,
/// starting with a letter or digit, at most 64 characters.
pub fn valid_name(name: &str) -> bool {
    name.len() <= 64
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | ':'))
}

/// The `*.md` files in `dir` (and its subfolders, to [`MAX_DEPTH`]) with their command
/// names, in path order; names that do not fit the rules are noticed. A missing `dir` is
/// no commands, quietly. Links are not followed.
fn scan(
    dir: &Path,
    prefix: &str,
    depth: usize,
    labeller: &Labeller<'_>,
    found: &mut Vec<(PathBuf, String)>,
    notices: &mut Vec<String>,
) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound && depth == 0 => return,
        Err(e) => {
            notices.push(format!(
                "commands in {} skipped: cannot read the folder: {e}",
                labeller.label(dir)
            ));
            return;
        }
    };
    let mut entries: Vec<_> = entries
        .filter_map(Result::ok)
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let file_name = entry.file_name().to_string_lossy().into_owned();
        if kind.is_dir() {
            if depth + 1 < MAX_DEPTH {
                let prefix = format!("{prefix}{file_name}:");
                scan(&path, &prefix, depth + 1, labeller, found, notices);
            }
            continue;
        }
        let Some(stem) = file_name.strip_suffix(".md") else {
            continue;
        };
        if kind.is_symlink() {
            notices.push(format!(
                "command {} skipped: it is a symbolic link (rein does not follow links here)",
                labeller.label(&path)
            ));
            continue;
        }
        let name = format!("{prefix}{stem}");
        if !valid_name(&name) {
            notices.push(format!(
                "command {} skipped: the name \"{}\" may only have lowercase letters, digits, `-`, `_` and `:`",
                labeller.label(&path),
                name.chars().flat_map(char::escape_debug).take(80).collect::<String>()
            ));
            continue;
        }
        found.push((path, name));
    }
}

/// A command file's description, argument hint and prompt, or why it cannot be used.
fn read_command(path: &Path) -> Result<(String, Option<String>, String), String> {
    let text =
        crate::host::safe_fs::read_small_text(path, MAX_COMMAND_BYTES).map_err(|e| {
            match e.kind() {
                ErrorKind::InvalidData | ErrorKind::InvalidInput => e.to_string(),
                _ => format!("cannot read it: {e}"),
            }
        })?;
    let (description, hint, body) =
        match front_matter::split(&text, &["description", "argument-hint"]) {
            Ok(block) => (
                block.get("description").map(str::to_string),
                block.get("argument-hint").map(str::to_string),
                block.body.to_string(),
            ),
            Err(front_matter::FrontMatterError::NoOpening) => (
                None,
                None,
                text.strip_prefix('\u{feff}').unwrap_or(&text).to_string(),
            ),
            Err(e) => return Err(e.to_string()),
        };
    let body = body.trim().to_string();
    if body.is_empty() {
        return Err("the prompt after the front matter is empty".to_string());
    }
    let description = description
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| description_line(&body));
    Ok((
        front_matter::cap(description, MAX_DESCRIPTION_CHARS),
        hint.filter(|h| !h.is_empty()),
        body,
    ))
}

/// The prompt's first line with text, as a description: Markdown heading marks dropped,
/// whitespace and control characters collapsed.
/// A command without a `description` is described by its first line of text, a Markdown
/// heading's `#`s dropped and its words joined by single spaces.
fn description_line(body: &str) -> String {
    let line = body
        .lines()
        .map(|l| l.trim().trim_start_matches('#').trim())
        .find(|l| !l.is_empty())
        .unwrap_or("");
    line.split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests;
