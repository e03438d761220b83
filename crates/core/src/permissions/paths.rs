//! Rules for the file tools: where `read_file` may read and `write_file`/`str_replace` may
//! write without asking.
//!
//! A path is judged where it really leads ([`crate::host::safe_fs::resolve`]): relative paths
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
//! writing a steering file ([`crate::consent::steering`]): a host tool's configuration that makes it
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
use crate::consent::steering::{self, Kind};

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
    /// [`crate::consent::steering::kind`] cannot tell by name. Shared by clones: a file added later
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
            crate::host::safe_fs::MAX_LINKS
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

/// Where `path` leads (relative ones against `base`); see [`crate::host::safe_fs::resolve`]. A
/// path through too many links gives `None`.
pub fn resolve(path: &Path, base: &Path) -> Option<PathBuf> {
    crate::host::safe_fs::resolve(path, base).ok()
}

/// The directory a `.git` file (`gitdir: PATH`, as in worktrees and submodules) points to.
fn git_pointer_target(root: &Path) -> Option<PathBuf> {
    let git = root.join(".git");
    if !git.is_file() {
        return None;
    }
    // Bounded, and a regular file only: a project's `.git` may be a link to `/dev/zero`.
    let target = crate::host::git_pointer::gitdir_of(&git)?;
    resolve(&target, root)
}

#[cfg(test)]
mod tests;
