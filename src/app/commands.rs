//! Slash commands typed in the input: `/help`, `/clear`, `/resume`, `/model`, `/todos`,
//! `/skills`, `/rename`, `/context`, `/compact`, `/cost`, `/init`, `/quit`.
//!
//! A command is `/` and a name as the first word: letters, and `-`, `_` or `:` between
//! them (`/fix-issue`, `/frontend:test`); anything else that starts with `/`
//! (`/etc/hosts is broken`, `/v2`) is an ordinary message, unless it names a custom command
//! ([`rein_core::custom_commands`], sent by `super::update::send::submit`). Unknown commands
//! get a one-line hint and never reach the model. `/help` is generated from the keymap's
//! descriptions and lists the custom commands.
//!
//! A leaf: the table, the parser and the texts that need no state. Carrying a command out
//! is the router's (`super::update::slash`).

use super::keymap::{keymap, Action, Mode};
use rein_core::custom_commands::CommandSet;

/// The commands, with what `/help` says about them.
pub const COMMANDS: &[(&str, &str)] = &[
    ("/help", "this list"),
    (
        "/clear",
        "start a new conversation (clears the transcript and the todo list)",
    ),
    (
        "/resume",
        "pick an earlier session and continue it (type to filter)",
    ),
    (
        "/rewind",
        "take a turn back: its files, its conversation, or both (also Esc twice on an empty input)",
    ),
    (
        "/diff",
        "what this session's turns changed, as a diff, whatever tool made the change",
    ),
    (
        "/model [NAME]",
        "switch the model, keeping the conversation: pick a configured one (type to filter), or NAME (PROVIDER/MODEL) directly",
    ),
    ("/todos", "show or hide the todo pane"),
    ("/skills", "list the skills the model can load"),
    (
        "/memory",
        "list the project instructions (AGENTS.md files) in the system prompt",
    ),
    (
        "/init [NOTES]",
        "write a first AGENTS.md: the model explores the project, then proposes the file for your approval",
    ),
    (
        "/rename NAME",
        "give this session a name (`rein sessions` lists them)",
    ),
    ("/context", "show where the context window's tokens go"),
    (
        "/compact [FOCUS]",
        "compact now: the conversation becomes a handoff note (FOCUS: what it should keep)",
    ),
    (
        "/cost",
        "tokens used in this conversation, the prompt cache's share and, with prices, the cost",
    ),
    (
        "/mcp",
        "list the MCP servers and their state (/mcp restart|login|logout NAME; /mcp allow NAME runs a project's server)",
    ),
    (
        "/lsp",
        "list the language servers this session started, their state and what they last said",
    ),
    (
        "/mode [MODE]",
        "show the approval mode, or switch to MODE: plan, default or auto (Shift+Tab cycles)",
    ),
    (
        "/hooks",
        "list the hooks that run (Claude Code's hooks.json) and those held; allow: ask about the project's",
    ),
    (
        "/bashes",
        "list the background commands with their last line (/bashes kill ID stops one; /bashes kill all)",
    ),
    ("/quit", "leave rein (also /exit)"),
];

/// A slash command as typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlashCommand {
    Help,
    Clear,
    Resume,
    Rewind,
    Diff,
    /// `/model [NAME]`: the name when given, else the picker.
    Model(Option<String>),
    Todos,
    Skills,
    Memory,
    /// `/init [NOTES]`: the model writes a first AGENTS.md (NOTES: what else to heed).
    Init(Option<String>),
    /// `/rename NAME`: the new title (empty when none was given).
    Rename(String),
    Context,
    /// `/compact [FOCUS]`: what the handoff note should keep, when given.
    Compact(Option<String>),
    Cost,
    /// `/mode [NAME]`: the mode to switch to, when given.
    Mode(Option<String>),
    /// `/mcp`, `/mcp restart NAME`, `/mcp allow NAME`.
    Mcp(McpAction),
    /// `/bashes`, `/bashes kill ID`.
    Bashes(BashesAction),
    /// `/lsp`.
    Lsp,
    /// `/hooks`, `/hooks allow`.
    Hooks(HooksAction),
    Quit,
    /// Not a command rein knows: the name as typed, with its slash.
    Unknown(String),
}

/// The command this input is, or `None` when it is a message.
pub fn parse(input: &str) -> Option<SlashCommand> {
    let first = input.split_whitespace().next()?;
    let name = first.strip_prefix('/')?;
    if !is_command_name(name) {
        return None;
    }
    let rest = || {
        input
            .trim_start()
            .get(first.len()..)
            .unwrap_or("")
            .trim()
            .to_string()
    };
    Some(match name.to_ascii_lowercase().as_str() {
        "help" => SlashCommand::Help,
        "clear" => SlashCommand::Clear,
        "resume" => SlashCommand::Resume,
        "rewind" => SlashCommand::Rewind,
        "diff" => SlashCommand::Diff,
        "model" | "models" => SlashCommand::Model(Some(rest()).filter(|n| !n.is_empty())),
        "todos" => SlashCommand::Todos,
        "skills" => SlashCommand::Skills,
        "memory" => SlashCommand::Memory,
        "init" => SlashCommand::Init(Some(rest()).filter(|n| !n.is_empty())),
        "rename" => SlashCommand::Rename(rest()),
        "context" => SlashCommand::Context,
        "compact" => SlashCommand::Compact(Some(rest()).filter(|f| !f.is_empty())),
        "cost" | "usage" => SlashCommand::Cost,
        "mode" => SlashCommand::Mode(Some(rest()).filter(|m| !m.is_empty())),
        "mcp" => SlashCommand::Mcp(mcp_action(&rest())),
        "bashes" | "bash" => SlashCommand::Bashes(bashes_action(&rest())),
        "lsp" => SlashCommand::Lsp,
        "hooks" => SlashCommand::Hooks(match rest().as_str() {
            "" => HooksAction::List,
            "allow" => HooksAction::Allow,
            other => HooksAction::Unknown(other.to_string()),
        }),
        "quit" | "exit" => SlashCommand::Quit,
        _ => SlashCommand::Unknown(first.to_string()),
    })
}

/// Whether `name` (without the slash) is shaped like a command's: ASCII letters, with
/// `-`, `_` or `:` between them (`help`, `fix-issue`, `frontend:test`); a path (`etc/hosts`)
/// or a version (`v2`) is not.
fn is_command_name(name: &str) -> bool {
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphabetic());
    edge(name.chars().next())
        && edge(name.chars().next_back())
        && name
            .chars()
            .all(|c| c.is_ascii_alphabetic() || matches!(c, '-' | '_' | ':'))
}

/// What `/mcp` was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpAction {
    List,
    Restart(String),
    /// Allow a project's server to run what it declares, and start it.
    Allow(String),
    /// Log in to an HTTP server with OAuth (in the background), then restart it.
    Login(String),
    /// Forget an HTTP server's OAuth tokens, then restart it.
    Logout(String),
    /// Anything else: the words as typed.
    Unknown(String),
}

/// What `/hooks` was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HooksAction {
    List,
    /// Ask about the project's held hooks again.
    Allow,
    /// Anything else: the words as typed.
    Unknown(String),
}

/// What `/bashes` was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BashesAction {
    List,
    /// Stop the task of this id (`all`: every running one).
    Kill(String),
    /// Anything else: the words as typed.
    Unknown(String),
}

fn bashes_action(rest: &str) -> BashesAction {
    let mut words = rest.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (None, _, _) => BashesAction::List,
        (Some("kill" | "stop"), Some(id), None) => BashesAction::Kill(id.to_string()),
        _ => BashesAction::Unknown(rest.to_string()),
    }
}

fn mcp_action(rest: &str) -> McpAction {
    let mut words = rest.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (None, _, _) => McpAction::List,
        (Some("restart"), Some(name), None) => McpAction::Restart(name.to_string()),
        (Some("allow"), Some(name), None) => McpAction::Allow(name.to_string()),
        (Some("login"), Some(name), None) => McpAction::Login(name.to_string()),
        (Some("logout"), Some(name), None) => McpAction::Logout(name.to_string()),
        _ => McpAction::Unknown(rest.to_string()),
    }
}

/// Where `/init`'s prompt comes from, as the transcript names it.
pub const INIT_FROM: &str = "rein's /init prompt";

/// What `/init` asks of the model (`assets/init_prompt.md`), with the user's notes.
pub fn init_prompt(notes: Option<&str>) -> String {
    let prompt = include_str!("../../assets/init_prompt.md").trim_end();
    match notes {
        Some(notes) => format!(
            "{prompt}

The user adds: {notes}"
        ),
        None => prompt.to_string(),
    }
}

/// Whether `name` (without the slash) is one of rein's own commands or their aliases: a
/// custom command of that name is skipped.
pub fn is_builtin(name: &str) -> bool {
    matches!(parse(&format!("/{name}")), Some(c) if !matches!(c, SlashCommand::Unknown(_)))
}

/// The `/skills` text: each skill as `name: description`, then the skills left out and why.
pub fn skills_text(skills: &[(String, String)], notices: &[String]) -> String {
    let mut out = if skills.is_empty() {
        String::from(
            "No skills. A skill is a folder with a SKILL.md whose front matter has a name and a \
             description, in ~/.agents/skills/ or ~/.claude/skills/, in rein's data dir under \
             skills/ ($REIN_HOME/skills/) or in the project's .agents/skills/ or .claude/skills/.",
        )
    } else {
        let mut out = format!(
            "Skills ({}): the model loads one with read_skill when the task fits",
            skills.len()
        );
        for (name, description) in skills {
            out.push_str(&format!("\n  {name}: {description}"));
        }
        out
    };
    if !notices.is_empty() {
        out.push_str("\nSkipped");
        for notice in notices {
            out.push_str(&format!("\n  {notice}"));
        }
    }
    out
}

/// The `/help` text without custom commands.
pub fn help_text() -> String {
    help_text_with(&CommandSet::empty())
}

/// The `/help` text: the commands, the custom ones, then every mode's keys from the keymap.
pub fn help_text_with(custom: &CommandSet) -> String {
    let keymap = keymap();
    let mut out = String::from("Commands\n");
    // One column for the descriptions, however long a command with its arguments is.
    let width = COMMANDS
        .iter()
        .map(|(name, _)| name.chars().count())
        .max()
        .unwrap_or(0);
    for (name, desc) in COMMANDS {
        out.push_str(&format!("  {name:<width$}  {desc}\n"));
    }
    out.push_str(&custom_commands_text(custom));
    for (title, modes) in [
        ("Keys", &[Mode::Global, Mode::Composer][..]),
        ("Approval", &[Mode::Approval][..]),
        ("Approval, deny and say why", &[Mode::Feedback][..]),
        (
            "Session picker (/resume; type to filter)",
            &[Mode::Picker][..],
        ),
        ("Model picker (/model; type to filter)", &[Mode::Models][..]),
        ("Context (/context)", &[Mode::Context][..]),
        ("Help (/help, F1)", &[Mode::Help][..]),
        ("Command completion (type /)", &[Mode::Slash][..]),
        ("File finder (type @)", &[Mode::Finder][..]),
        ("Rewind (/rewind, Esc twice)", &[Mode::Rewind][..]),
        (
            "A project's hooks (at start, /hooks allow)",
            &[Mode::Hooks][..],
        ),
        (
            "Searching earlier inputs (type to search)",
            &[Mode::Search][..],
        ),
        ("Plan review (a plan mode turn ended)", &[Mode::Plan][..]),
        ("Transcript pager", &[Mode::Pager][..]),
        ("An MCP server's form", &[Mode::Form][..]),
        ("MCP servers (/mcp)", &[Mode::Mcp][..]),
    ] {
        out.push_str(title);
        out.push('\n');
        let hints: Vec<(String, &str)> = modes.iter().flat_map(|&m| keymap.hints(m)).collect();
        let width = hints
            .iter()
            .map(|(k, _)| k.chars().count())
            .max()
            .unwrap_or(0);
        for (keys, desc) in hints {
            out.push_str(&format!("  {keys:<width$}  {desc}\n"));
        }
    }
    out.push_str(&format!(
        "Typing\n  \\ then Enter starts a new line (as Shift-Enter does).\n  A paste of more than \
         {} lines or {} characters shows as [Pasted text #1 +N lines]: it is sent whole, and \
         Backspace removes it whole.\n  Messages sent while the agent works are queued above \
         the input; the model gets them with its next tool results (or when the turn ends). \
         An interrupt puts them back in the input.\n",
        crate::app::paste::FOLD_LINES,
        crate::app::paste::FOLD_CHARS
    ));
    match keymap.keys_for(Mode::Global, Action::ToggleMouse) {
        Some(keys) => out.push_str(&format!(
            "The mouse is not captured at start, so the terminal selects text; {keys} turns mouse scrolling on and off."
        )),
        None => out.push_str("The mouse is not captured, so the terminal selects text."),
    }
    out
}

/// `/help`'s part on custom commands: each as `/name <hint>  description  (source: file)`,
/// then the files skipped and why.
fn custom_commands_text(custom: &CommandSet) -> String {
    let mut out = String::new();
    if custom.is_empty() {
        out.push_str(
            "Custom commands: none (a Markdown file in .agents/commands/ or .claude/commands/, \
             the project's or under ~/, becomes /its-name)\n",
        );
    } else {
        out.push_str("Custom commands\n");
        let width = custom
            .iter()
            .map(|c| c.usage().chars().count())
            .max()
            .unwrap_or(0);
        for c in custom.iter() {
            let hides = if c.shadows.is_empty() {
                String::new()
            } else {
                format!("; hides {}", c.shadows.join(", "))
            };
            out.push_str(&format!(
                "  {:<width$}  {}  ({}: {}{hides})\n",
                c.usage(),
                c.description,
                c.source.name(),
                c.label
            ));
        }
    }
    if !custom.notices.is_empty() {
        out.push_str("Custom commands skipped\n");
        for notice in &custom.notices {
            out.push_str(&format!("  {notice}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_slash_and_letters_as_the_first_word() {
        assert_eq!(parse("/help"), Some(SlashCommand::Help));
        assert_eq!(parse("/HELP me"), Some(SlashCommand::Help));
        assert_eq!(parse("/exit"), Some(SlashCommand::Quit));
        assert_eq!(parse("/skills"), Some(SlashCommand::Skills));
        assert_eq!(parse("/resume"), Some(SlashCommand::Resume));
        assert_eq!(parse("/model"), Some(SlashCommand::Model(None)));
        assert_eq!(
            parse("/model  ollama/qwen3-coder "),
            Some(SlashCommand::Model(Some("ollama/qwen3-coder".into())))
        );
        assert_eq!(parse("/context"), Some(SlashCommand::Context));
        assert_eq!(parse("/cost"), Some(SlashCommand::Cost));
        assert_eq!(parse("/init"), Some(SlashCommand::Init(None)));
        assert_eq!(
            parse("/init  mention the fixtures "),
            Some(SlashCommand::Init(Some("mention the fixtures".into())))
        );
        assert_eq!(parse("/compact"), Some(SlashCommand::Compact(None)));
        assert_eq!(parse("/compact   "), Some(SlashCommand::Compact(None)));
        assert_eq!(
            parse("/compact  keep the parser plan "),
            Some(SlashCommand::Compact(Some("keep the parser plan".into())))
        );
        assert_eq!(parse("/xyz"), Some(SlashCommand::Unknown("/xyz".into())));
        assert_eq!(parse("/etc/hosts is broken"), None);
        assert_eq!(parse("/tmp"), Some(SlashCommand::Unknown("/tmp".into())));
        assert_eq!(parse("/ something"), None);
        assert_eq!(parse("/"), None);
        assert_eq!(parse("/v2"), None);
        // A custom command's shape is a command too: unknown, it is refused, not sent.
        assert_eq!(
            parse("/fix-issue 12"),
            Some(SlashCommand::Unknown("/fix-issue".into()))
        );
        assert_eq!(
            parse("/frontend:test"),
            Some(SlashCommand::Unknown("/frontend:test".into()))
        );
        assert_eq!(
            parse("/snake_case"),
            Some(SlashCommand::Unknown("/snake_case".into()))
        );
        assert_eq!(parse("/re- x"), None);
        assert_eq!(parse("/-x"), None);
        assert_eq!(parse("/:)"), None);
        assert_eq!(parse("please /help"), None);
    }

    #[test]
    fn help_lists_commands_and_keys() {
        let help = help_text();
        for needle in [
            "/clear",
            "/todos",
            "/skills",
            "/context",
            "/compact [FOCUS]",
            "/model [NAME]",
            "switch to it",
            "Ctrl-C",
            "Shift-Enter",
            "allow once",
            "F2",
        ] {
            assert!(help.contains(needle), "{needle} missing from:\n{help}");
        }
    }
}
