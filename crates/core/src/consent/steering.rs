//! The files of a project that steer what runs outside the sandbox, or what a later
//! session is told: one list, read by the file tools' rules (a write asks), the sandbox
//! (read-only inside it, where the file or folder exists) and the guard that keeps hooks
//! and project servers from running after such a file changed without the user's yes.
//!
//! Three kinds:
//! - **host-tool files**: configuration that makes a program the user (or a hook of
//!   theirs, or an MCP server) runs in the project start other programs: cargo's aliases
//!   and runners (`.cargo/config.toml`), direnv's `.envrc`, npm's and yarn's settings
//!   (`script-shell`, `yarnPath`), bun's preloads, version managers' pins (a
//!   `rust-toolchain.toml` may name a toolchain by path) and mise's tasks, the git hook
//!   managers' files and folders (pre-commit, lefthook, overcommit, husky, a `.githooks/`
//!   that `core.hooksPath` names: git runs them at the user's next commit), Nix shells
//!   (direnv's `use nix`/`use flake` runs their `shellHook`), dev containers
//!   (`initializeCommand` runs on the host), debuggers' and consoles' start files, and
//!   JetBrains' run configurations;
//! - **agent folders**: the settings, hooks, commands, skills and agent definitions that
//!   Claude Code, Codex, Gemini CLI, Cursor and rein (`.agents/`) read from a project, and
//!   editors' task and language-server settings, which run commands when the user opens
//!   the project;
//! - **instruction files**: `AGENTS.md`, `CLAUDE.md` and the other agents' equivalents,
//!   read into a later session's instructions.
//!
//! Names are compared without regard to case (a case-insensitive filesystem opens
//! `.CARGO/Config.toml` as `.cargo/config.toml`). Nothing here touches the filesystem.

use std::path::{Component, Path};

/// What a steering file decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// It makes a host tool run programs.
    HostTool,
    /// It is an agent's or an editor's settings, hooks, commands, skills or agents.
    AgentFolder,
    /// A later session reads it into the model's instructions.
    Instructions,
}

impl Kind {
    /// Why writing such a file matters, for an approval's reason.
    pub fn why(self) -> &'static str {
        match self {
            Kind::HostTool => {
                "it makes programs run outside the sandbox (a build tool, a hook or a server \
                 started in the project reads it)"
            }
            Kind::AgentFolder => {
                "it holds an agent's or an editor's settings, hooks, commands, skills or agent \
                 definitions, which run commands or instruct later sessions"
            }
            Kind::Instructions => {
                "a later session started here reads it into the model's instructions"
            }
        }
    }
}

/// Files (a path's last components) that make host tools run programs, at any depth:
/// a tool started in that folder, or below it, reads them.
pub const HOST_TOOL_FILES: &[&str] = &[
    ".cargo/config",
    ".cargo/config.toml",
    "rust-toolchain",
    "rust-toolchain.toml",
    ".envrc",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pnpmfile.cjs",
    ".pnpmfile.mjs",
    ".python-version",
    ".tool-versions",
    "mise.toml",
    ".mise.toml",
    "mise.local.toml",
    ".mise.local.toml",
    ".mise/config.toml",
    "mise/config.toml",
    ".config/mise.toml",
    ".config/mise/config.toml",
    "bunfig.toml",
    ".pre-commit-config.yaml",
    "lefthook.yml",
    ".lefthook.yml",
    "lefthook-local.yml",
    ".overcommit.yml",
    "shell.nix",
    "flake.nix",
    "default.nix",
    "devenv.nix",
    ".devcontainer.json",
    ".bazelrc",
    ".pdbrc",
    ".gdbinit",
    ".lldbinit",
    ".irbrc",
    ".pryrc",
    ".Rprofile",
    ".exrc",
    ".nvimrc",
    ".nvim.lua",
    ".mcp.json",
    ".vscode/settings.json",
    ".vscode/tasks.json",
    ".vscode/launch.json",
    ".vscode/mcp.json",
];

/// Folders whose whole contents make host tools run programs, at any depth: git hook
/// managers' scripts, dev containers' definitions, JetBrains' project settings.
pub const HOST_TOOL_FOLDERS: &[&str] = &[".husky", ".githooks", ".devcontainer", ".idea"];

/// Folders whose whole contents steer agents and editors, at any depth.
pub const AGENT_FOLDERS: &[&str] = &[
    ".claude", ".codex", ".gemini", ".cursor", ".agents", ".zed", ".helix",
];

/// Instruction files, by name, at any depth.
pub const INSTRUCTION_FILES: &[&str] = &[
    "AGENTS.md",
    "AGENTS.override.md",
    "CLAUDE.md",
    "CLAUDE.local.md",
    "GEMINI.md",
    ".cursorrules",
    ".windsurfrules",
    ".github/copilot-instructions.md",
];

/// What `path` (relative to the project, or absolute with `root` its project) is, if it
/// steers anything. A path outside `root` is judged by its own components.
pub fn kind(path: &Path, root: &Path) -> Option<Kind> {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let names: Vec<String> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_string_lossy().to_ascii_lowercase()),
            _ => None,
        })
        .collect();
    let ends_with = |suffix: &str| {
        let parts: Vec<String> = suffix.split('/').map(|p| p.to_ascii_lowercase()).collect();
        names.len() >= parts.len() && names[names.len() - parts.len()..] == parts[..]
    };
    if INSTRUCTION_FILES.iter().any(|f| ends_with(f)) {
        return Some(Kind::Instructions);
    }
    if HOST_TOOL_FILES.iter().any(|f| ends_with(f)) {
        return Some(Kind::HostTool);
    }
    // A folder's contents, or the folder itself (a link or a file in its place).
    if names
        .iter()
        .any(|n| HOST_TOOL_FOLDERS.iter().any(|f| f.eq_ignore_ascii_case(n)))
    {
        return Some(Kind::HostTool);
    }
    if names
        .iter()
        .any(|n| AGENT_FOLDERS.iter().any(|f| f.eq_ignore_ascii_case(n)))
    {
        return Some(Kind::AgentFolder);
    }
    None
}

/// The steering paths directly under a project `root` (not looked for below it): the
/// host-tool files and instruction files as they would be there, and the agent folders.
/// What the sandbox binds read-only when it exists, and what the guard watches.
pub fn at_root(root: &Path) -> Vec<std::path::PathBuf> {
    HOST_TOOL_FILES
        .iter()
        .chain(INSTRUCTION_FILES)
        .chain(HOST_TOOL_FOLDERS)
        .chain(AGENT_FOLDERS)
        .map(|f| root.join(f))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_name_at_any_depth_and_in_any_case() {
        let root = Path::new("/p");
        for (path, want) in [
            (".cargo/config.toml", Some(Kind::HostTool)),
            ("/p/sub/.CARGO/Config.TOML", Some(Kind::HostTool)),
            (".envrc", Some(Kind::HostTool)),
            ("web/.npmrc", Some(Kind::HostTool)),
            (".vscode/tasks.json", Some(Kind::HostTool)),
            (".husky/pre-commit", Some(Kind::HostTool)),
            ("web/.githooks/pre-push", Some(Kind::HostTool)),
            (".devcontainer/devcontainer.json", Some(Kind::HostTool)),
            ("flake.nix", Some(Kind::HostTool)),
            (".config/mise/config.toml", Some(Kind::HostTool)),
            ("lefthook.yml", Some(Kind::HostTool)),
            (".claude/settings.json", Some(Kind::AgentFolder)),
            (".claude/skills/x/SKILL.md", Some(Kind::AgentFolder)),
            ("a/.agents/commands/review.md", Some(Kind::AgentFolder)),
            (".codex", Some(Kind::AgentFolder)),
            ("docs/CLAUDE.md", Some(Kind::Instructions)),
            ("agents.md", Some(Kind::Instructions)),
            (".github/copilot-instructions.md", Some(Kind::Instructions)),
            ("src/main.rs", None),
            ("cargo/config.toml", None),
            (".vscode/extensions.json", None),
            ("README.md", None),
            ("src/claude.rs", None),
            ("nix/flake.nix.md", None),
            (".config/other.toml", None),
            ("husky/x", None),
        ] {
            assert_eq!(kind(Path::new(path), root), want, "{path}");
        }
    }

    #[test]
    fn the_root_list_names_each_kind() {
        let list = at_root(Path::new("/p"));
        assert!(list.contains(&Path::new("/p/.cargo/config.toml").to_path_buf()));
        assert!(list.contains(&Path::new("/p/.claude").to_path_buf()));
        assert!(list.contains(&Path::new("/p/CLAUDE.md").to_path_buf()));
    }
}
