//! Rules for the file tools: where `read_file` may read and `write_file`/`str_replace` may
//! write without asking.
//!
//! A path is judged where it really leads ([`crate::safe_fs::resolve`]): relative paths
//! against the project root, `..` applied, and every symbolic link followed whether its
//! target exists yet or not, so neither `src/../../etc/passwd`, nor a link inside the
//! project that points outside, nor a dangling `cfg -> .rein/config.toml` gets a
//! project-local verdict; a path through more than 40 links is denied. The file tools then
//! read and write exactly the resolved place, never through a link (see `safe_fs`).
//! Writes inside the project are allowed, outside it ask, and into any `.git` or `.rein`
//! directory (compared without regard to case, as a case-insensitive filesystem would) or
//! the directory a `.git` file points to are denied: the agent must never edit its own
//! permission rules, a repository's history, or git config and hooks that run commands
//! later. Writing a file that would make a folder a git repository of its own (`HEAD`,
//! `config` or `objects/` beside the other two, `commondir`, `gitdir`) asks, and so does
//! writing a steering file ([`crate::steering`]): a host tool's configuration that makes it
//! run programs (`.cargo/config.toml`, `.envrc`, `.npmrc`, …), anything in an agent's or
//! editor's folder (`.claude/`, `.codex/`, `.agents/`, …), or an instruction file
//! (`AGENTS.md`, `CLAUDE.md`, in any case), which every later session started there reads
//! into the model's instructions (`/init` proposes one this way, for the user to approve).
//! The name as given counts as well as where it leads (a link called `.envrc` is still
//! `.envrc`). Files known to steer only at start, the files an instruction file imports and
//! those an approved hook or project server names, are added by
//! [`PathRules::add_steering_files`] and ask the same way. "Allow for the session" on such
//! a question allows that one resolved file, never the others.
//! Reads are allowed anywhere except files matching the sensitive globs, which ask.
//!
//! rein's own folders ([`PathRules::with_rein_folders`]) are another user's business than
//! the project's: its data folder holds every project's sessions (with what the user
//! approved reading, a `.env` in one project say), input history, spill files and trust
//! store, so reading anything there asks, except the spill folders of this rein (the model
//! is told to read its own long outputs there); and no file tool writes into the data
//! folder or the user's config folder (an approval, an allowed tool or a rule written
//! there would be the user's word).

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use super::RuleAction;
use crate::steering::{self, Kind};

/// The file-tool rules for one project.
#[derive(Debug, Clone)]
pub struct PathRules {
    /// The project root, resolved.
    root: PathBuf,
    /// Resolved directories no file tool may write into.
    protected: Vec<PathBuf>,
    sensitive: GlobSet,
    /// The sensitive patterns as configured, for reasons.
    patterns: Vec<String>,
    /// The same with `~/` turned into the home directory, as matched.
    expanded: Vec<String>,
    /// Each pattern's literal leading folder (`/home/u/.ssh` of `~/.ssh/**`), when it has
    /// one: naming that folder reads what the pattern protects.
    prefixes: Vec<Option<PathBuf>>,
    /// rein's data folder (resolved): reading in it asks, unless [`Self::shown`] matches.
    private: Vec<PathBuf>,
    /// The spill folders of this rein and what is in them, readable without asking.
    shown: GlobSet,
    /// Files known at start to steer later work (resolved), with their kind: what
    /// [`crate::steering::kind`] cannot tell by name. Shared by clones: a file added later
    /// (an import of a folder's instruction file) counts for every holder.
    steering_files: Arc<RwLock<Vec<(PathBuf, Kind)>>>,
}

/// A path rule's verdict with its reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathVerdict {
    pub action: RuleAction,
    pub reason: String,
    /// The path as judged (resolved).
    pub resolved: PathBuf,
}

/// A sensitive-read glob that does not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("permissions.sensitive_reads: `{pattern}` is not a valid glob: {problem}")]
pub struct PathRuleError {
    pub pattern: String,
    pub problem: String,
}

impl PathRules {
    /// `sensitive` globs may start with `~/` (the home directory).
    pub fn new(
        root: &Path,
        sensitive: &[String],
        home: Option<&Path>,
    ) -> Result<PathRules, PathRuleError> {
        let root = resolve(root, Path::new("/")).unwrap_or_else(|| root.to_path_buf());
        let mut protected = vec![root.join(".git"), root.join(".rein")];
        if let Some(target) = git_pointer_target(&root) {
            protected.push(target);
        }
        let mut builder = GlobSetBuilder::new();
        let mut prefixes = Vec::new();
        let mut expanded_all = Vec::new();
        for pattern in sensitive {
            let expanded = match (pattern.strip_prefix("~/"), home) {
                (Some(rest), Some(home)) => format!("{}/{rest}", home.display()),
                _ => pattern.clone(),
            };
            prefixes.push(literal_folder(&expanded));
            expanded_all.push(expanded.clone());
            let glob = GlobBuilder::new(&expanded)
                .literal_separator(true)
                .build()
                .map_err(|e| PathRuleError {
                    pattern: pattern.clone(),
                    problem: e.kind().to_string(),
                })?;
            builder.add(glob);
        }
        let sensitive_set = builder.build().map_err(|e| PathRuleError {
            pattern: sensitive.join(", "),
            problem: e.to_string(),
        })?;
        Ok(PathRules {
            root,
            protected,
            sensitive: sensitive_set,
            patterns: sensitive.to_vec(),
            expanded: expanded_all,
            prefixes,
            private: Vec::new(),
            shown: GlobSet::empty(),
            steering_files: Arc::default(),
        })
    }

    /// These rules with `files` (absolute, or relative to the project) known to steer
    /// later work as `kind` says: writing one asks. See [`Self::add_steering_files`].
    pub fn with_steering_files(self, files: &[PathBuf], kind: Kind) -> PathRules {
        self.add_steering_files(files, kind);
        self
    }

    /// Make writing each of `files` (absolute, or relative to the project) ask, with the
    /// reason `kind` gives: the files an instruction file imports (`Kind::Instructions`),
    /// the scripts and programs an approved hook or project server runs
    /// (`Kind::HostTool`). Each is judged where it leads, as the write is.
    pub fn add_steering_files(&self, files: &[PathBuf], kind: Kind) {
        let mut list = self
            .steering_files
            .write()
            .unwrap_or_else(|e| e.into_inner());
        for file in files {
            let lexical = absolute(&self.root, &file.to_string_lossy());
            let resolved = resolve(&lexical, &self.root).unwrap_or(lexical);
            if !list.iter().any(|(p, _)| *p == resolved) {
                list.push((resolved, kind));
            }
        }
    }

    /// What steers of `lexical` (the path as given, absolute) or `resolved` (where it
    /// leads): by name, or because it was added as a steering file.
    fn steering_kind(&self, lexical: &Path, resolved: &Path) -> Option<Kind> {
        steering::kind(resolved, &self.root)
            .or_else(|| steering::kind(lexical, &self.root))
            .or_else(|| {
                self.steering_files
                    .read()
                    .unwrap_or_else(|e| e.into_inner())
                    .iter()
                    .find(|(p, _)| p == resolved || p == lexical)
                    .map(|(_, kind)| *kind)
            })
    }

    /// Keep the file tools out of rein's own folders: reading in `data_dir` asks except
    /// in the folders `shown` names (globs: this rein's spill folders), and no file tool
    /// writes into `data_dir` or any of `config_dirs`.
    pub fn with_rein_folders(
        mut self,
        data_dir: &Path,
        config_dirs: &[PathBuf],
        shown: &[String],
    ) -> PathRules {
        let resolved = |p: &Path| resolve(p, Path::new("/")).unwrap_or_else(|| p.to_path_buf());
        // A folder that holds the project (rein's home set to a folder above it) cannot be
        // kept from the file tools without keeping the project from them too.
        let beside = |dir: &PathBuf| !self.root.starts_with(dir);
        let data = Some(resolved(data_dir)).filter(beside);
        let config: Vec<PathBuf> = config_dirs
            .iter()
            .map(|d| resolved(d))
            .filter(beside)
            .collect();
        self.protected.extend(data.iter().cloned());
        self.protected.extend(config);
        self.private.extend(data);
        let mut builder = GlobSetBuilder::new();
        for pattern in shown {
            if let Ok(glob) = GlobBuilder::new(pattern).literal_separator(true).build() {
                builder.add(glob);
            }
        }
        self.shown = builder.build().unwrap_or_else(|_| GlobSet::empty());
        self
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Judge reading `path` (as the model gave it).
    pub fn read(&self, path: &str) -> PathVerdict {
        let lexical = absolute(&self.root, path);
        let Some(resolved) = resolve(&lexical, &self.root) else {
            return too_many_links(lexical);
        };
        if let Some(dir) = self.private.iter().find(|d| {
            (resolved.starts_with(d) || lexical.starts_with(d)) && !self.shown.is_match(&resolved)
        }) {
            return PathVerdict {
                action: RuleAction::Ask,
                reason: format!(
                    "reading {} looks into rein's data folder {} (the sessions, input history \
                     and approvals of every project)",
                    resolved.display(),
                    dir.display()
                ),
                resolved,
            };
        }
        // Match the name as given and where it leads: a `.env` symlink is still `.env`.
        let hit = self
            .sensitive
            .matches(&lexical)
            .into_iter()
            .chain(self.sensitive.matches(&resolved))
            .next()
            .or_else(|| {
                // The folder a pattern protects, named itself (`grep -r . ~/.ssh`).
                self.prefixes
                    .iter()
                    .position(|p| p.as_deref() == Some(resolved.as_path()))
            });
        match hit {
            Some(i) => PathVerdict {
                action: RuleAction::Ask,
                reason: format!(
                    "reading {} matches the sensitive pattern `{}`",
                    resolved.display(),
                    self.patterns.get(i).map_or("?", String::as_str)
                ),
                resolved,
            },
            None => PathVerdict {
                action: RuleAction::Allow,
                reason: format!("reading {} is allowed", resolved.display()),
                resolved,
            },
        }
    }

    /// Judge writing `path` (as the model gave it).
    pub fn write(&self, path: &str) -> PathVerdict {
        let lexical = absolute(&self.root, path);
        let Some(resolved) = resolve(&lexical, &self.root) else {
            return too_many_links(lexical);
        };
        // Any git directory, not just the project's: a `sub/.git/config` written now is
        // a `core.fsmonitor` command run later by an innocent `git status` in `sub`. Any
        // case: on a case-insensitive filesystem `.GIT` is `.git`.
        let named = |name: &str| {
            resolved
                .components()
                .any(|c| c.as_os_str().to_string_lossy().eq_ignore_ascii_case(name))
        };
        if named(".git") {
            return PathVerdict {
                action: RuleAction::Deny,
                reason: format!(
                    "{} is inside a .git directory, which rein never writes (its config and hooks run commands)",
                    resolved.display()
                ),
                resolved,
            };
        }
        // Rein's settings in any folder: a `.rein/config.toml` written into a subfolder
        // would be the rules of a later session started there.
        if named(".rein") {
            return PathVerdict {
                action: RuleAction::Deny,
                reason: format!(
                    "{} is inside a .rein directory, which rein never writes (its permission rules)",
                    resolved.display()
                ),
                resolved,
            };
        }
        if let Some(dir) = self
            .protected
            .iter()
            .find(|p| starts_with_ignoring_case(&resolved, p))
        {
            return PathVerdict {
                action: RuleAction::Deny,
                reason: format!(
                    "{} is inside {}, which rein never writes (the repository's history, or \
                     rein's own settings and data)",
                    resolved.display(),
                    dir.display()
                ),
                resolved,
            };
        }
        if let Some(kind) = self.steering_kind(&lexical, &resolved) {
            let what = match kind {
                Kind::HostTool => "is a host tool's configuration",
                Kind::AgentFolder => "is in an agent's or an editor's folder",
                Kind::Instructions => "is an instruction file (or one an instruction file imports)",
            };
            let named = if lexical == resolved || steering::kind(&resolved, &self.root).is_some() {
                resolved.display().to_string()
            } else {
                format!("{} (through {})", resolved.display(), lexical.display())
            };
            return PathVerdict {
                action: RuleAction::Ask,
                reason: format!("{named} {what}: {}", kind.why()),
                resolved,
            };
        }
        if let Some(why) = makes_a_repository(&resolved) {
            return PathVerdict {
                action: RuleAction::Ask,
                reason: format!(
                    "{} {why}: git would run its config's commands (core.fsmonitor, hooks) \
                     in that folder",
                    resolved.display()
                ),
                resolved,
            };
        }
        if resolved.starts_with(&self.root) {
            PathVerdict {
                action: RuleAction::Allow,
                reason: format!("{} is inside the project", resolved.display()),
                resolved,
            }
        } else {
            PathVerdict {
                action: RuleAction::Ask,
                reason: format!("{} is outside the project", resolved.display()),
                resolved,
            }
        }
    }

    /// The sensitive patterns: each as matched (`~/` expanded), as configured, and its
    /// literal leading folder when it has one.
    pub fn sensitive_patterns(&self) -> impl Iterator<Item = (&str, &str, Option<&Path>)> {
        self.expanded
            .iter()
            .zip(&self.patterns)
            .zip(&self.prefixes)
            .map(|((e, p), f)| (e.as_str(), p.as_str(), f.as_deref()))
    }

    /// The configured sensitive pattern an absolute path matches by name, links not
    /// followed (for walking a folder).
    pub fn sensitive_name(&self, path: &Path) -> Option<&str> {
        let i = self.sensitive.matches(path).into_iter().next()?;
        self.patterns.get(i).map(String::as_str)
    }

    /// Whether `path` (absolute or relative to the project) is a sensitive file to read.
    pub fn is_sensitive(&self, path: &str) -> Option<String> {
        let v = self.read(path);
        (v.action == RuleAction::Ask).then_some(v.reason)
    }
}

/// The folder a glob names literally before its first wildcard (`/home/u/.ssh` of
/// `/home/u/.ssh/**`; the whole path of a pattern without wildcards); `None` when it starts
/// with one (`**/.env`).
fn literal_folder(pattern: &str) -> Option<PathBuf> {
    let cut = pattern.find(['*', '?', '[', '{']).unwrap_or(pattern.len());
    let literal = &pattern[..cut];
    let folder = if cut < pattern.len() {
        // Up to the last separator before the wildcard.
        &literal[..literal.rfind('/')?]
    } else {
        literal
    };
    let folder = Path::new(folder);
    (folder.is_absolute() && folder.components().count() > 1).then(|| folder.to_path_buf())
}

/// The verdict for a path that leads through too many links.
fn too_many_links(lexical: PathBuf) -> PathVerdict {
    PathVerdict {
        action: RuleAction::Deny,
        reason: format!(
            "{} leads through more than {} symbolic links",
            lexical.display(),
            crate::safe_fs::MAX_LINKS
        ),
        resolved: lexical,
    }
}

/// `path` starts with `prefix`, component by component, without regard to ASCII case.
fn starts_with_ignoring_case(path: &Path, prefix: &Path) -> bool {
    let mut path = path.components();
    prefix.components().all(|p| {
        path.next().is_some_and(|c| {
            c.as_os_str()
                .to_string_lossy()
                .eq_ignore_ascii_case(&p.as_os_str().to_string_lossy())
        })
    })
}

/// Why writing `path` would turn a folder into a git repository git would act on:
/// `commondir` or `gitdir` files, or the last of `HEAD`, `config` and `objects/` (at any
/// depth below it).
fn makes_a_repository(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    if name == "commondir" || name == "gitdir" {
        return Some("is a git pointer file");
    }
    // The folder that would be the repository, and which of its three parts this is.
    let (folder, part) = match path.ancestors().skip(1).find(|a| {
        a.file_name()
            .is_some_and(|n| n.eq_ignore_ascii_case("objects"))
    }) {
        Some(objects) => (objects.parent()?, "objects".to_string()),
        None if name == "head" || name == "config" => (path.parent()?, name),
        None => return None,
    };
    let has = |n: &str| part.eq_ignore_ascii_case(n) || folder.join(n).exists();
    (has("HEAD") && has("config") && has("objects"))
        .then_some("would complete a git repository (HEAD, config and objects/)")
}

/// `path` made absolute against `root`.
fn absolute(root: &Path, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        root.join(p)
    }
}

/// Where `path` leads (relative ones against `base`); see [`crate::safe_fs::resolve`]. A
/// path through too many links gives `None`.
pub fn resolve(path: &Path, base: &Path) -> Option<PathBuf> {
    crate::safe_fs::resolve(path, base).ok()
}

/// The directory a `.git` file (`gitdir: PATH`, as in worktrees and submodules) points to.
fn git_pointer_target(root: &Path) -> Option<PathBuf> {
    let git = root.join(".git");
    if !git.is_file() {
        return None;
    }
    // Bounded, and a regular file only: a project's `.git` may be a link to `/dev/zero`.
    let target = crate::git_pointer::gitdir_of(&git)?;
    resolve(&target, root)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::Grant;

    fn rules(root: &Path, home: &Path) -> PathRules {
        let sensitive: Vec<String> = crate::permissions::DEFAULT_SENSITIVE_READS
            .iter()
            .map(|s| s.to_string())
            .collect();
        PathRules::new(root, &sensitive, Some(home)).unwrap()
    }

    struct Dirs {
        project: tempfile::TempDir,
        home: tempfile::TempDir,
        outside: tempfile::TempDir,
    }

    fn dirs() -> Dirs {
        Dirs {
            project: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
            outside: tempfile::tempdir().unwrap(),
        }
    }

    /// rein's data folder is judged by the name as given and by where it leads: a link in
    /// the project into it asks, and so does a link inside it that leads out.
    #[test]
    fn reads_into_reins_data_folder_ask_by_either_name() {
        let d = dirs();
        let root = std::fs::canonicalize(d.project.path()).unwrap();
        let data = std::fs::canonicalize(d.outside.path()).unwrap();
        std::fs::write(data.join("sessions.jsonl"), "{}").unwrap();
        std::os::unix::fs::symlink(data.join("sessions.jsonl"), root.join("log")).unwrap();
        std::fs::write(root.join("notes.txt"), "n").unwrap();
        std::os::unix::fs::symlink(root.join("notes.txt"), data.join("out")).unwrap();
        let r = rules(&root, d.home.path()).with_rein_folders(&data, &[], &[]);
        for path in ["log", data.join("out").to_str().unwrap()] {
            let v = r.read(path);
            assert_eq!(v.action, RuleAction::Ask, "{path}: {}", v.reason);
            assert!(v.reason.contains("rein's data folder"), "{}", v.reason);
        }
        assert_eq!(r.read("notes.txt").action, RuleAction::Allow);
    }

    /// The folder a sensitive pattern names before its first wildcard, which a read of
    /// the folder itself is judged by (`grep -r . ~/.ssh`).
    #[test]
    fn a_patterns_literal_folder_stops_at_the_separator_before_its_wildcard() {
        let folder = |p: &str| literal_folder(p).map(|f| f.display().to_string());
        assert_eq!(folder("/home/u/.ssh/**").as_deref(), Some("/home/u/.ssh"));
        assert_eq!(
            folder("/home/u/.aws/cred*").as_deref(),
            Some("/home/u/.aws")
        );
        // No wildcard: the whole path.
        assert_eq!(folder("/etc/shadow").as_deref(), Some("/etc/shadow"));
        // Relative, starting with a wildcard, or the root itself: none.
        for pattern in ["a/b/*", "**/.env", "/", "/x*"] {
            assert_eq!(folder(pattern), None, "{pattern}");
        }
    }

    /// A write that would make a folder a repository git acts on asks: a pointer file, or
    /// the last of HEAD, config and objects/; the same names elsewhere are plain files.
    #[test]
    fn writes_that_would_make_a_git_repository_ask() {
        let d = dirs();
        let root = std::fs::canonicalize(d.project.path()).unwrap();
        std::fs::create_dir_all(root.join("x/objects")).unwrap();
        std::fs::write(root.join("x/HEAD"), "ref: refs/heads/main").unwrap();
        let r = rules(&root, d.home.path());
        for path in ["x/config", "sub/gitdir", "sub/commondir"] {
            let v = r.write(path);
            assert_eq!(v.action, RuleAction::Ask, "{path}: {}", v.reason);
            assert!(v.reason.contains("git would run"), "{}", v.reason);
        }
        for path in ["y/config", "x/notes.txt", "HEADER"] {
            assert_eq!(r.write(path).action, RuleAction::Allow, "{path}");
        }
        // HEAD as the last part asks too.
        std::fs::create_dir_all(root.join("w/objects")).unwrap();
        std::fs::write(root.join("w/config"), "[core]").unwrap();
        assert_eq!(r.write("w/HEAD").action, RuleAction::Ask);
        // One part alone completes nothing, and a folder that has all three is not
        // completed by another file in it.
        std::fs::create_dir_all(root.join("z/objects")).unwrap();
        std::fs::write(root.join("z/config"), "[core]").unwrap();
        std::fs::write(root.join("z/HEAD"), "ref: refs/heads/main").unwrap();
        for path in ["e/HEAD", "f/objects/ab/cd", "z/notes.txt"] {
            assert_eq!(r.write(path).action, RuleAction::Allow, "{path}");
        }
    }

    /// An instruction file asks wherever it is: later sessions read it as instructions.
    #[test]
    fn writing_an_instruction_file_asks() {
        let d = dirs();
        let root = std::fs::canonicalize(d.project.path()).unwrap();
        let r = rules(&root, d.home.path());
        for path in ["AGENTS.md", "CLAUDE.md", "sub/dir/agents.md", "./Claude.MD"] {
            let v = r.write(path);
            assert_eq!(v.action, RuleAction::Ask, "{path}: {}", v.reason);
            assert!(v.reason.contains("is an instruction file"), "{}", v.reason);
        }
        for path in ["AGENTS.md.bak", "docs/AGENTS.txt", "MY-AGENTS.md"] {
            assert_eq!(r.write(path).action, RuleAction::Allow, "{path}");
        }
    }

    /// Every kind of steering file asks wherever it stands and in any case, with the
    /// reason its kind gives; names that only look alike are plain files.
    #[test]
    fn writing_a_steering_file_asks_with_its_reason() {
        let d = dirs();
        let root = std::fs::canonicalize(d.project.path()).unwrap();
        let r = rules(&root, d.home.path());
        for (path, kind) in [
            (".cargo/config.toml", Kind::HostTool),
            ("crates/x/.CARGO/config", Kind::HostTool),
            (".envrc", Kind::HostTool),
            ("web/.npmrc", Kind::HostTool),
            (".pre-commit-config.yaml", Kind::HostTool),
            (".vscode/tasks.json", Kind::HostTool),
            (".mcp.json", Kind::HostTool),
            (".claude/settings.json", Kind::AgentFolder),
            (".claude/hooks/check.sh", Kind::AgentFolder),
            (".claude/skills/review/SKILL.md", Kind::AgentFolder),
            (".claude/commands/review.md", Kind::AgentFolder),
            ("sub/.agents/skills/a/SKILL.md", Kind::AgentFolder),
            (".codex/config.toml", Kind::AgentFolder),
            ("CLAUDE.md", Kind::Instructions),
            ("docs/GEMINI.md", Kind::Instructions),
            (".github/copilot-instructions.md", Kind::Instructions),
        ] {
            let v = r.write(path);
            assert_eq!(v.action, RuleAction::Ask, "{path}: {}", v.reason);
            assert!(v.reason.contains(kind.why()), "{path}: {}", v.reason);
        }
        for path in [
            "src/main.rs",
            "cargo/config.toml",
            ".cargo/config.toml.md",
            ".vscode/extensions.json",
            ".github/workflows/ci.yml",
            "docs/claude.txt",
            "envrc",
        ] {
            assert_eq!(r.write(path).action, RuleAction::Allow, "{path}");
        }
    }

    /// A link is judged by its name as well as where it leads: writing `.envrc` that
    /// leads to `notes.txt` changes what direnv runs.
    #[test]
    fn a_link_named_like_a_steering_file_asks() {
        let d = dirs();
        let root = std::fs::canonicalize(d.project.path()).unwrap();
        std::fs::write(root.join("notes.txt"), "n").unwrap();
        std::os::unix::fs::symlink(root.join("notes.txt"), root.join(".envrc")).unwrap();
        std::os::unix::fs::symlink(root.join(".claude"), root.join("cfg")).unwrap();
        let r = rules(&root, d.home.path());
        let v = r.write(".envrc");
        assert_eq!(v.action, RuleAction::Ask, "{}", v.reason);
        assert!(v.reason.contains("(through "), "{}", v.reason);
        assert_eq!(v.resolved, root.join("notes.txt"));
        // And the other way round: an innocent name that leads into `.claude/`.
        assert_eq!(r.write("cfg/settings.json").action, RuleAction::Ask);
        assert_eq!(r.write("notes.txt").action, RuleAction::Allow);
    }

    /// Files known to steer only at start (an import, a hook's script) ask once added,
    /// by their own path or through a link, in every clone of the rules.
    #[test]
    fn files_added_at_start_ask_as_their_kind_says() {
        let d = dirs();
        let root = std::fs::canonicalize(d.project.path()).unwrap();
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::write(root.join("docs/style.md"), "s").unwrap();
        std::os::unix::fs::symlink(root.join("docs/style.md"), root.join("style")).unwrap();
        let r = rules(&root, d.home.path())
            .with_steering_files(&[PathBuf::from("docs/style.md")], Kind::Instructions);
        let clone = r.clone();
        r.add_steering_files(&[root.join("scripts/check.py")], Kind::HostTool);
        for (rules, path, kind) in [
            (&r, "docs/style.md", Kind::Instructions),
            (&r, "style", Kind::Instructions),
            (&r, "./docs/../docs/style.md", Kind::Instructions),
            (&clone, "scripts/check.py", Kind::HostTool),
        ] {
            let v = rules.write(path);
            assert_eq!(v.action, RuleAction::Ask, "{path}: {}", v.reason);
            assert!(v.reason.contains(kind.why()), "{path}: {}", v.reason);
        }
        for path in ["docs/other.md", "scripts/check.py.bak"] {
            assert_eq!(r.write(path).action, RuleAction::Allow, "{path}");
        }
    }

    /// "Allow for the session" on a steering file's question allows that file, never
    /// another steering file, nor one added later.
    #[test]
    fn a_session_grant_covers_only_the_steering_file_it_named() {
        use crate::permissions::policy::RulePolicy;
        use crate::permissions::{PermissionPolicy, ToolRequest, Verdict};
        let d = dirs();
        let root = std::fs::canonicalize(d.project.path()).unwrap();
        let sensitive: Vec<String> = crate::permissions::DEFAULT_SENSITIVE_READS
            .iter()
            .map(|s| s.to_string())
            .collect();
        let policy = RulePolicy::new(&root, &[], &sensitive, Some(d.home.path())).unwrap();
        let write = |path: &str| {
            let args = serde_json::json!({"path": path, "content": "x"});
            policy.check(&ToolRequest {
                tool: "write_file",
                args: &args,
                root: &root,
            })
        };
        let Verdict::Ask { grants, .. } = write(".cargo/config.toml") else {
            panic!("a cargo config was not asked about")
        };
        assert_eq!(grants, [Grant::Write(root.join(".cargo/config.toml"))]);
        policy.grant(&grants);
        assert_eq!(write(".cargo/config.toml"), Verdict::Allow);
        assert_eq!(write("./.cargo/../.cargo/config.toml"), Verdict::Allow);
        for path in [
            ".cargo/config",
            ".envrc",
            ".claude/settings.json",
            "AGENTS.md",
        ] {
            assert!(matches!(write(path), Verdict::Ask { .. }), "{path}");
        }
        PermissionPolicy::add_steering_files(
            &policy,
            &[root.join("docs/x.md")],
            Kind::Instructions,
        );
        assert!(matches!(write("docs/x.md"), Verdict::Ask { .. }));
        assert_eq!(write("src/lib.rs"), Verdict::Allow);
    }

    #[test]
    fn writes_inside_allow_outside_ask_git_and_rein_deny() {
        let d = dirs();
        std::fs::create_dir(d.project.path().join(".git")).unwrap();
        let r = rules(d.project.path(), d.home.path());
        assert_eq!(r.write("src/main.rs").action, RuleAction::Allow);
        assert_eq!(r.write("new/dir/file.txt").action, RuleAction::Allow);
        let outside = d.outside.path().join("x").display().to_string();
        assert_eq!(r.write(&outside).action, RuleAction::Ask);
        assert_eq!(r.write("../escape.txt").action, RuleAction::Ask);
        assert_eq!(r.write("src/../../escape.txt").action, RuleAction::Ask);
        assert_eq!(r.write(".git/config").action, RuleAction::Deny);
        assert_eq!(r.write("./.git/hooks/pre-commit").action, RuleAction::Deny);
        assert_eq!(r.write(".rein/config.toml").action, RuleAction::Deny);
        assert_eq!(r.write("src/../.rein/config.toml").action, RuleAction::Deny);
        let abs = d.project.path().join(".rein/x").display().to_string();
        assert_eq!(r.write(&abs).action, RuleAction::Deny);
        // Nested repositories and other repositories are protected too.
        assert_eq!(r.write("vendor/lib/.git/config").action, RuleAction::Deny);
        assert_eq!(
            r.write("sub/.git/hooks/pre-commit").action,
            RuleAction::Deny
        );
        let other_repo = d
            .outside
            .path()
            .join("repo/.git/config")
            .display()
            .to_string();
        assert_eq!(r.write(&other_repo).action, RuleAction::Deny);
        // A name that only starts like a protected one is fine.
        assert_eq!(
            r.write(".github/workflows/ci.yml").action,
            RuleAction::Allow
        );
        assert_eq!(r.write(".reinrc").action, RuleAction::Allow);
    }

    #[test]
    fn symlinks_are_judged_where_they_lead() {
        let d = dirs();
        let p = d.project.path();
        std::os::unix::fs::symlink(d.outside.path(), p.join("out")).unwrap();
        std::fs::create_dir(p.join(".rein")).unwrap();
        std::os::unix::fs::symlink(p.join(".rein"), p.join("settings")).unwrap();
        let r = rules(p, d.home.path());
        assert_eq!(
            r.write("out/file").action,
            RuleAction::Ask,
            "a link out of the project"
        );
        assert_eq!(r.write("settings/config.toml").action, RuleAction::Deny);
        // A link from outside into the project is inside.
        let back = d.outside.path().join("back");
        std::os::unix::fs::symlink(p, &back).unwrap();
        assert_eq!(
            r.write(&back.join("ok.txt").display().to_string()).action,
            RuleAction::Allow
        );
    }

    #[test]
    fn a_git_pointer_file_protects_its_target() {
        let d = dirs();
        let p = d.project.path();
        let gitdir = d.outside.path().join("worktrees/feature");
        std::fs::create_dir_all(&gitdir).unwrap();
        std::fs::write(p.join(".git"), format!("gitdir: {}\n", gitdir.display())).unwrap();
        let r = rules(p, d.home.path());
        let target = gitdir.join("HEAD").display().to_string();
        assert_eq!(r.write(&target).action, RuleAction::Deny);
    }

    #[test]
    fn sensitive_reads_ask_and_others_allow() {
        let d = dirs();
        let p = d.project.path();
        let home = d.home.path();
        let r = rules(p, home);
        assert_eq!(r.read("src/main.rs").action, RuleAction::Allow);
        assert_eq!(r.read("/etc/hostname").action, RuleAction::Allow);
        let key = home.join(".ssh/id_ed25519").display().to_string();
        assert_eq!(r.read(&key).action, RuleAction::Ask);
        let aws = home.join(".aws/credentials").display().to_string();
        assert_eq!(r.read(&aws).action, RuleAction::Ask);
        assert_eq!(r.read(".env").action, RuleAction::Ask);
        assert_eq!(r.read("deploy/.env").action, RuleAction::Ask);
        assert_eq!(r.read(".env.example").action, RuleAction::Allow);
        // Through `..` from the project, and through a link with an innocent name.
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(home.join(".ssh/id_rsa"), "secret").unwrap();
        std::os::unix::fs::symlink(home.join(".ssh/id_rsa"), p.join("notes.txt")).unwrap();
        assert_eq!(r.read("notes.txt").action, RuleAction::Ask);
        assert!(r.read("notes.txt").reason.contains("~/.ssh/**"));
    }

    #[test]
    fn bad_globs_name_the_pattern() {
        let e = PathRules::new(Path::new("/"), &["a[".to_string()], None).unwrap_err();
        assert_eq!(e.pattern, "a[");
    }

    #[test]
    fn resolve_handles_dots_and_missing_tails() {
        let d = dirs();
        let base = resolve(d.project.path(), Path::new("/"));
        let base = base.unwrap();
        assert_eq!(
            resolve(Path::new("a/./b/../c"), &base),
            Some(base.join("a/c"))
        );
        assert_eq!(
            resolve(Path::new("../../.."), &base).unwrap().parent(),
            None
        );
    }
}
