//! Project instructions: the `AGENTS.md` and `CLAUDE.md` files other terminal agents read,
//! found once per session and put into the system prompt, and those of the folders below
//! the project the agent works in, found as it goes ([`nested`]).
//!
//! In order, outermost first: the user's own (`~/.agents/AGENTS.md`, or failing that
//! Claude Code's `~/.claude/CLAUDE.md` or Codex's `~/.codex/AGENTS.md`; then `AGENTS.md` in
//! rein's config folder), then those of each directory from the repository's root (the
//! nearest folder above the project holding `.git`, else the project itself) down to the
//! project: its `AGENTS.md`, then its `CLAUDE.md` (one file reached twice, a `CLAUDE.md`
//! linking to the `AGENTS.md` beside it, is read once). Each file's `@path` imports follow
//! it (`imports.rs`). Later files are closer to the work and take precedence; the prompt
//! says so. Together they get at most `max_bytes`: the closest keep their room, and what
//! does not fit is cut from the outer ones, each cut file marked in the prompt and named in
//! a notice. A file that is not a regular UTF-8 file under 1 MiB is skipped with a notice.
//! Nothing here panics on what the files hold.

mod imports;
pub mod nested;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::permissions::{AllowAll, PermissionPolicy};

pub use imports::MAX_DEPTH as MAX_IMPORT_DEPTH;
pub use nested::Nested;

/// `instructions.max_bytes` unless configured: all files together.
pub const DEFAULT_MAX_BYTES: usize = 32 * 1024;

/// The largest single file read at all.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// The names of a folder's instruction files, in the order they are read.
pub const FILE_NAMES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// One instruction file as it goes into the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionFile {
    pub path: PathBuf,
    /// What goes into the prompt (the whole file, or its head when cut).
    pub text: String,
    /// The file's size in bytes.
    pub bytes: usize,
    /// Whether the cap cut it.
    pub cut: bool,
    /// The file whose `@path` import brought this one in; `None` for a folder's own file.
    pub imported_by: Option<PathBuf>,
}

impl InstructionFile {
    /// Its path and size, whether the cap cut it, and what imported it:
    /// `/repo/AGENTS.md (120 bytes)`, `/repo/docs/style.md (80 bytes, imported by
    /// /repo/CLAUDE.md)`.
    pub fn label(&self) -> String {
        format!(
            "{} ({} bytes{}{})",
            self.path.display(),
            self.bytes,
            if self.cut { ", cut" } else { "" },
            match &self.imported_by {
                Some(by) => format!(", imported by {}", by.display()),
                None => String::new(),
            }
        )
    }
}

/// What a file read for the instructions may be and where it may lead: the permission
/// rules (a file they would ask about before `read_file` reads it is not read), the
/// project they judge in, the most bytes an import may have (`context.attach_max_bytes`,
/// as an `@` mention), and the home folder (`@~/…`).
#[derive(Clone)]
pub struct ReadRules {
    pub policy: Arc<dyn PermissionPolicy>,
    pub root: PathBuf,
    pub max_import_bytes: usize,
    pub home: Option<PathBuf>,
}

impl ReadRules {
    /// Rules that refuse nothing the paths allow (tests): every file readable, imports up
    /// to 64 KiB, no home folder.
    pub fn permissive(root: &Path) -> ReadRules {
        ReadRules {
            policy: Arc::new(AllowAll),
            root: root.to_path_buf(),
            max_import_bytes: 64 * 1024,
            home: None,
        }
    }
}

impl std::fmt::Debug for ReadRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadRules")
            .field("root", &self.root)
            .field("max_import_bytes", &self.max_import_bytes)
            .field("home", &self.home)
            .finish_non_exhaustive()
    }
}

impl PartialEq for ReadRules {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.policy, &other.policy)
            && self.root == other.root
            && self.max_import_bytes == other.max_import_bytes
            && self.home == other.home
    }
}

impl Eq for ReadRules {}

/// Where to look and by what rules: the user's files, outermost first (each a list of
/// alternatives: the first that exists is read), the bytes all may take together, and the
/// rules for imports and the folders' files found later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovery {
    pub user: Vec<Vec<PathBuf>>,
    pub max_bytes: usize,
    pub rules: ReadRules,
}

/// The instructions of one session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Instructions {
    /// Outermost first, each file's imports after it.
    pub files: Vec<InstructionFile>,
    /// What was skipped or cut, in words for the user.
    pub notices: Vec<String>,
    /// Where they were looked for, to look again ([`Instructions::reload`]); none for
    /// instructions not found by [`discover`].
    source: Option<Source>,
    /// Every file that was or could have been read, with its size and time when read
    /// (`None`: not there): what [`Instructions::changed`] compares against.
    seen: Vec<(PathBuf, Option<Stamp>)>,
    /// The files as [`Instructions::changed`] last found them, when that differs from
    /// `files` (which stay what the prompt holds).
    latest: Option<Vec<InstructionFile>>,
}

/// The arguments of [`discover_with`], kept to look again.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Source {
    discovery: Discovery,
    project: PathBuf,
}

/// A file's size and modification time: changed when either moved.
type Stamp = (u64, Option<std::time::SystemTime>);

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()))
}

/// Every file [`discover_with`] reads or would read (imports aside), outermost first.
fn candidates(user: &[Vec<PathBuf>], project: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = user.iter().flatten().cloned().collect();
    for dir in project_dirs(project) {
        out.extend(FILE_NAMES.iter().map(|name| dir.join(name)));
    }
    out
}

/// The folders whose `AGENTS.md` (or `CLAUDE.md`) apply to `project`: the repository's
/// root down to `project` (custom commands are found along the same folders).
pub fn project_dirs(project: &Path) -> Vec<PathBuf> {
    let mut chain: Vec<PathBuf> = project.ancestors().map(Path::to_path_buf).collect();
    match chain.iter().position(|d| d.join(".git").exists()) {
        Some(root) => chain.truncate(root + 1),
        None => chain.truncate(1),
    }
    chain.reverse();
    chain
}

/// The text of the instruction file at `path`: `Ok(None)` when there is none, `Err` when
/// there is one that cannot be used (said in `notices`).
fn read(path: &Path, notices: &mut Vec<String>) -> Result<Option<String>, ()> {
    match crate::host::safe_fs::read_small_text(path, MAX_FILE_BYTES) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => {
            notices.push(format!("{} was skipped: {e}", path.display()));
            Err(())
        }
    }
}

/// A file found, before the cap: its path, text and importer.
type Found = (PathBuf, String, Option<PathBuf>);

/// `found` within `max_bytes` in all: the last files keep their room and the first are cut
/// (each cut one named in `notices`); files left with no text are dropped.
fn fit(found: Vec<Found>, max_bytes: usize, notices: &mut Vec<String>) -> Vec<InstructionFile> {
    let mut left = max_bytes;
    let mut files: Vec<InstructionFile> = found
        .into_iter()
        .rev()
        .map(|(path, text, imported_by)| {
            let bytes = text.len();
            let keep = bytes.min(left);
            left -= keep;
            let cut = keep < bytes;
            let mut end = keep;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            InstructionFile {
                path,
                text: text[..end].to_string(),
                bytes,
                cut,
                imported_by,
            }
        })
        .collect();
    files.reverse();
    for f in files.iter().filter(|f| f.cut) {
        let what = if f.text.is_empty() {
            "was left out".to_string()
        } else {
            format!("was cut to {} of its {} bytes", f.text.len(), f.bytes)
        };
        notices.push(format!(
            "{} {what}: the instruction files may take {max_bytes} bytes together \
             (instructions.max_bytes)",
            f.path.display()
        ));
    }
    files.retain(|f| !f.text.trim().is_empty());
    files
}

/// The resolved form of `path` (itself when it leads through too many links).
fn resolved(path: &Path) -> PathBuf {
    crate::host::safe_fs::resolve(path, Path::new("/")).unwrap_or_else(|_| path.to_path_buf())
}

/// The instructions for `project`: `user_files` first (each read if it exists), then the
/// project's own, within `max_bytes` in all; imports read by [`ReadRules::permissive`].
pub fn discover(user_files: &[PathBuf], project: &Path, max_bytes: usize) -> Instructions {
    discover_with(
        Discovery {
            user: user_files.iter().map(|p| vec![p.clone()]).collect(),
            max_bytes,
            rules: ReadRules::permissive(project),
        },
        project,
    )
}

/// The instructions for `project` as `discovery` says (see the module doc).
pub fn discover_with(discovery: Discovery, project: &Path) -> Instructions {
    // Stamped before reading: a file changed while it is read shows as changed later.
    let mut seen: Vec<(PathBuf, Option<Stamp>)> = candidates(&discovery.user, project)
        .into_iter()
        .map(|p| {
            let s = stamp(&p);
            (p, s)
        })
        .collect();
    let mut notices = Vec::new();
    let mut found: Vec<Found> = Vec::new();
    // Every file in the prompt, resolved: none is read twice.
    let mut included: HashSet<PathBuf> = HashSet::new();
    let dirs = project_dirs(project);
    let boundary = resolved(dirs.first().map_or(project, PathBuf::as_path));
    let mut tops: Vec<(PathBuf, String, bool)> = Vec::new();
    for alternatives in &discovery.user {
        for path in alternatives {
            match read(path, &mut notices) {
                Ok(Some(text)) => {
                    tops.push((path.clone(), text, true));
                    break;
                }
                Ok(None) => continue,
                Err(()) => break,
            }
        }
    }
    for dir in &dirs {
        for name in FILE_NAMES {
            let path = dir.join(name);
            if let Ok(Some(text)) = read(&path, &mut notices) {
                tops.push((path, text, false));
            }
        }
    }
    for (path, text, user) in tops {
        if !included.insert(resolved(&path)) {
            continue;
        }
        let scope = if user {
            imports::Scope::User
        } else {
            imports::Scope::Project(&boundary)
        };
        let imported = imports::expand(
            &path,
            &text,
            scope,
            &discovery.rules,
            &mut included,
            &mut notices,
        );
        found.push((path, text, None));
        for file in imported {
            seen.push((file.path.clone(), stamp(&file.path)));
            found.push((file.path, file.text, Some(file.by)));
        }
    }
    let files = fit(found, discovery.max_bytes, &mut notices);
    Instructions {
        files,
        notices,
        source: Some(Source {
            discovery,
            project: project.to_path_buf(),
        }),
        seen,
        latest: None,
    }
}

impl Instructions {
    /// The same files read again (what `/clear` starts the new conversation with); empty
    /// for instructions not found by [`discover`].
    pub fn reload(&self) -> Instructions {
        match &self.source {
            Some(s) => discover_with(s.discovery.clone(), &s.project),
            None => Instructions::default(),
        }
    }

    /// The instruction files written, created or removed since these were read or last
    /// asked, outermost first: each is named once per change (an imported file too). A file
    /// whose change does not alter the prompt (a touched file, a `~/.claude/CLAUDE.md`
    /// behind a `~/.agents/AGENTS.md`) is not named.
    /// Only stats the files unless one moved.
    pub fn changed(&mut self) -> Vec<PathBuf> {
        let mut moved = false;
        for (path, seen) in &mut self.seen {
            let now = stamp(path);
            if now != *seen {
                *seen = now;
                moved = true;
            }
        }
        if !moved {
            return Vec::new();
        }
        let now = self.reload().files;
        let before = self.latest.as_ref().unwrap_or(&self.files);
        let text_of = |files: &[InstructionFile], p: &Path| {
            files.iter().find(|f| f.path == p).map(|f| f.text.clone())
        };
        let out = self
            .seen
            .iter()
            .map(|(path, _)| path)
            .filter(|path| text_of(before, path) != text_of(&now, path))
            .cloned()
            .collect();
        // Reported once: later calls compare against what is there now.
        self.latest = Some(now);
        out
    }

    /// The system prompt's section: each file under its path, outermost first; empty when
    /// there are none.
    pub fn prompt_section(&self) -> String {
        if self.files.is_empty() {
            return String::new();
        }
        let mut out = String::from(
            "# Project instructions\n\nThe user and the project give these instructions \
             (AGENTS.md and CLAUDE.md files, outermost first, each followed by the files it \
             imports; where they disagree, the later one wins; what the user says in the \
             conversation wins over all of them).\n",
        );
        for f in &self.files {
            out.push_str(&section(f));
        }
        out
    }

    /// A line per file: path, size, whether cut.
    pub fn labels(&self) -> Vec<String> {
        self.files.iter().map(InstructionFile::label).collect()
    }

    /// A line per file (path, size, whether cut), then what was skipped or cut.
    pub fn lines(&self) -> Vec<String> {
        let mut out = self.labels();
        out.extend(self.notices.iter().cloned());
        out
    }

    /// One line for the user: which files were loaded, with their sizes.
    pub fn summary(&self) -> Option<String> {
        if self.files.is_empty() {
            return None;
        }
        Some(format!(
            "project instructions from {}",
            self.labels().join(", ")
        ))
    }
}

/// One file under its heading (its path, and what imported it), with a note when cut; ends
/// with a newline.
pub(crate) fn section(f: &InstructionFile) -> String {
    let by = match &f.imported_by {
        Some(by) => format!(" (imported by {})", by.display()),
        None => String::new(),
    };
    let mut out = format!("\n## {}{by}\n\n{}", f.path.display(), f.text.trim_end());
    if f.cut {
        out.push_str(&format!(
            "\n\n[… the rest of this file ({} of {} bytes) was left out to keep the \
             prompt short; read it with read_file if you need it]",
            f.bytes - f.text.len(),
            f.bytes
        ));
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::sync::Arc;

    #[test]
    fn outer_files_first_both_files_of_a_folder_and_the_cap_cuts_outer_ones() {
        let home = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        let sub = repo.path().join("crates/parser");
        fs::create_dir_all(&sub).unwrap();
        fs::create_dir(repo.path().join(".git")).unwrap();
        let user = home.path().join("AGENTS.md");
        fs::write(&user, "USER: be brief.\n").unwrap();
        fs::write(repo.path().join("AGENTS.md"), "ROOT: run cargo test.\n").unwrap();
        fs::write(repo.path().join("CLAUDE.md"), "BESIDE: claude too.\n").unwrap();
        fs::write(
            repo.path().join("crates/CLAUDE.md"),
            "CRATES: claude only.\n",
        )
        .unwrap();
        fs::write(sub.join("AGENTS.md"), "PARSER: no unsafe.\n").unwrap();
        // A CLAUDE.md that is a link to the AGENTS.md beside it is read once.
        std::os::unix::fs::symlink("AGENTS.md", sub.join("CLAUDE.md")).unwrap();
        let missing = home.path().join("nope/AGENTS.md");

        let i = discover(&[missing, user.clone()], &sub, DEFAULT_MAX_BYTES);
        let names: Vec<&Path> = i.files.iter().map(|f| f.path.as_path()).collect();
        assert_eq!(
            names,
            [
                user.as_path(),
                &repo.path().join("AGENTS.md"),
                &repo.path().join("CLAUDE.md"),
                &repo.path().join("crates/CLAUDE.md"),
                &sub.join("AGENTS.md"),
            ]
        );
        assert!(i.notices.is_empty(), "{:?}", i.notices);
        assert_eq!(
            i.lines()[0],
            format!("{} (16 bytes)", home.path().join("AGENTS.md").display())
        );
        let prompt = i.prompt_section();
        let at = |s: &str| prompt.find(s).unwrap();
        assert!(
            at("USER") < at("ROOT")
                && at("ROOT") < at("BESIDE")
                && at("BESIDE") < at("CRATES")
                && at("CRATES") < at("PARSER")
        );
        assert_eq!(prompt.matches("PARSER").count(), 1);

        // 30 bytes in all: the closest file whole, the next one cut, the outer ones out.
        let i = discover(&[user], &sub, 30);
        assert_eq!(i.files.last().unwrap().text, "PARSER: no unsafe.\n");
        let crates = &i.files[i.files.len() - 2];
        assert!(crates.cut && crates.text == "CRATES: cla", "{crates:?}");
        assert_eq!(i.files.len(), 2);
        assert_eq!(i.notices.len(), 4, "{:?}", i.notices);
        assert!(i
            .prompt_section()
            .contains("was left out to keep the prompt short"));
    }

    #[test]
    fn the_users_file_falls_back_to_the_first_alternative_there() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let agents = home.path().join(".agents/AGENTS.md");
        let claude = home.path().join(".claude/CLAUDE.md");
        let codex = home.path().join(".codex/AGENTS.md");
        for (path, text) in [(&claude, "CLAUDE-USER"), (&codex, "CODEX-USER")] {
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
        let look = || {
            discover_with(
                Discovery {
                    user: vec![vec![agents.clone(), claude.clone(), codex.clone()]],
                    max_bytes: DEFAULT_MAX_BYTES,
                    rules: ReadRules::permissive(project.path()),
                },
                project.path(),
            )
        };
        assert_eq!(look().files[0].text, "CLAUDE-USER");
        assert_eq!(look().files.len(), 1);
        fs::remove_file(&claude).unwrap();
        assert_eq!(look().files[0].text, "CODEX-USER");
        fs::create_dir_all(agents.parent().unwrap()).unwrap();
        fs::write(&agents, "AGENTS-USER").unwrap();
        let i = look();
        assert_eq!(i.files.len(), 1);
        assert_eq!(i.files[0].text, "AGENTS-USER");
    }

    /// Claude Code's `@path` imports: relative to the file, `~/` from home, depth first
    /// after the importing file; code is not imported; a cycle, a missing, outside,
    /// sensitive or oversized file and a sixth hop are named and left as written.
    #[test]
    fn imports_are_expanded_within_the_rules_and_refusals_are_named() {
        let home = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path().canonicalize().unwrap();
        fs::create_dir(root.join(".git")).unwrap();
        fs::create_dir_all(root.join("docs/deep")).unwrap();
        let home_dir = home.path().canonicalize().unwrap();
        fs::write(home_dir.join("mine.md"), "MINE").unwrap();
        fs::write(home_dir.join("user.md"), "USER-FILE imports @~/mine.md").unwrap();
        fs::write(
            root.join("CLAUDE.md"),
            "Read @docs/style.md and @AGENTS.md.\n`@docs/code.md` is code.\n\
             Also @docs/missing.md, @~/mine.md, @.env, @big.md, @team.\n",
        )
        .unwrap();
        fs::write(root.join("AGENTS.md"), "AGENTS-BODY\n").unwrap();
        fs::write(root.join("docs/code.md"), "CODE").unwrap();
        fs::write(root.join("docs/style.md"), "STYLE then @deep/a.md\n").unwrap();
        fs::write(root.join("docs/deep/a.md"), "A then @../style.md and @b.md").unwrap();
        fs::write(root.join("docs/deep/b.md"), "B then @c.md").unwrap();
        for (name, next) in [("c", "d"), ("d", "e"), ("e", "f")] {
            fs::write(
                root.join(format!("docs/deep/{name}.md")),
                format!("{} then @{next}.md", name.to_uppercase()),
            )
            .unwrap();
        }
        fs::write(root.join("docs/deep/f.md"), "F-TOO-DEEP").unwrap();
        fs::write(root.join(".env"), "TOKEN=1").unwrap();
        fs::write(root.join("big.md"), "x".repeat(200)).unwrap();
        let sensitive: Vec<String> = crate::permissions::DEFAULT_SENSITIVE_READS
            .iter()
            .map(|s| s.to_string())
            .collect();
        let policy =
            crate::permissions::policy::RulePolicy::new(&root, &[], &sensitive, None).unwrap();
        let i = discover_with(
            Discovery {
                user: vec![vec![home_dir.join("user.md")]],
                max_bytes: DEFAULT_MAX_BYTES,
                rules: ReadRules {
                    policy: Arc::new(policy),
                    root: root.clone(),
                    max_import_bytes: 100,
                    home: Some(home_dir.clone()),
                },
            },
            &root,
        );
        let names: Vec<String> = i
            .files
            .iter()
            .map(|f| match f.path.strip_prefix(&root) {
                Ok(rel) => rel.display().to_string(),
                Err(_) => format!("~/{}", f.path.strip_prefix(&home_dir).unwrap().display()),
            })
            .collect();
        // The AGENTS.md, read first, is not imported again by the CLAUDE.md.
        assert_eq!(
            names,
            [
                "~/user.md",
                "~/mine.md",
                "AGENTS.md",
                "CLAUDE.md",
                "docs/style.md",
                "docs/deep/a.md",
                "docs/deep/b.md",
                "docs/deep/c.md",
                "docs/deep/d.md",
            ]
        );
        assert_eq!(
            i.files[4].imported_by.as_deref(),
            Some(root.join("CLAUDE.md").as_path())
        );
        assert!(i.labels()[4].ends_with(&format!(
            "(22 bytes, imported by {})",
            root.join("CLAUDE.md").display()
        )));
        let prompt = i.prompt_section();
        assert!(!prompt.contains("CODE\n") && !prompt.contains("E then @f.md"));
        assert!(!prompt.contains("TOKEN=1"));
        assert!(prompt.contains(&format!(
            "## {} (imported by {})",
            root.join("docs/style.md").display(),
            root.join("CLAUDE.md").display()
        )));
        let said = |needle: &str| {
            assert!(
                i.notices.iter().any(|n| n.contains(needle)),
                "no notice with {needle}: {:#?}",
                i.notices
            )
        };
        said("@docs/missing.md was not imported: there is no such file; it stays as written");
        said("@~/mine.md was not imported: it leads outside the project");
        said("@.env was not imported: reading");
        said("@big.md was not imported: it is 200 bytes, more than context.attach_max_bytes (100 bytes)");
        said("@../style.md was not imported:");
        said("(a cycle)");
        // CLAUDE.md → style → a → b → c → d is five hops; e would be the sixth.
        said("@e.md was not imported: imports go at most 5 deep");
        assert!(
            !i.notices.iter().any(|n| n.contains("@team")),
            "{:#?}",
            i.notices
        );
        assert_eq!(i.notices.len(), 6, "{:#?}", i.notices);
    }

    #[test]
    fn without_a_repository_only_the_project_folder_counts_and_bad_files_are_skipped() {
        let outer = tempfile::tempdir().unwrap();
        let project = outer.path().join("p");
        fs::create_dir(&project).unwrap();
        fs::write(outer.path().join("AGENTS.md"), "OUTSIDE").unwrap();
        fs::write(project.join("AGENTS.md"), b"\xff\xfe").unwrap();
        fs::write(project.join("CLAUDE.md"), "FALLBACK").unwrap();
        let i = discover(&[], &project, DEFAULT_MAX_BYTES);
        assert_eq!(i.files.len(), 1, "{i:?}");
        assert_eq!(i.files[0].text, "FALLBACK");
        assert!(i.notices[0].contains("not UTF-8"), "{:?}", i.notices);
        assert_eq!(discover(&[], outer.path(), 0).files, []);
    }

    #[test]
    fn changes_are_named_once_and_only_where_they_change_the_prompt() {
        let repo = tempfile::tempdir().unwrap();
        fs::create_dir(repo.path().join(".git")).unwrap();
        let agents = repo.path().join("AGENTS.md");
        let claude = repo.path().join("CLAUDE.md");
        let style = repo.path().join("style.md");
        fs::write(&agents, "ONE, see @style.md\n").unwrap();
        fs::write(&style, "STYLE\n").unwrap();
        let mut i = discover(&[], repo.path(), DEFAULT_MAX_BYTES);
        assert_eq!(i.files.len(), 2);
        assert_eq!(i.changed(), Vec::<PathBuf>::new(), "nothing moved");
        // A CLAUDE.md beside an AGENTS.md counts too.
        fs::write(&claude, "BESIDE\n").unwrap();
        assert_eq!(i.changed(), vec![claude.clone()]);
        fs::write(&agents, "TWO, longer, see @style.md\n").unwrap();
        assert_eq!(i.changed(), vec![agents.clone()]);
        assert_eq!(i.changed(), Vec::<PathBuf>::new(), "told once");
        assert_eq!(
            i.files[0].text, "ONE, see @style.md\n",
            "the prompt's files stay"
        );
        // An imported file is watched as well.
        fs::write(&style, "STYLE, changed\n").unwrap();
        let style_resolved = style.canonicalize().unwrap();
        assert_eq!(i.changed(), vec![style_resolved]);
        fs::remove_file(&agents).unwrap();
        let gone = i.changed();
        assert!(gone.contains(&agents), "{gone:?}");
        let again = i.reload();
        assert_eq!(again.files.len(), 1);
        assert_eq!(again.files[0].path, claude);
        assert_eq!(Instructions::default().reload(), Instructions::default());
    }
}
