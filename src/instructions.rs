//! Project instructions: the `AGENTS.md` files other terminal agents read, found once per
//! session and put into the system prompt.
//!
//! In order, outermost first: the user's own (`~/.agents/AGENTS.md`, then `AGENTS.md` in
//! rein's config folder), then one per directory from the repository's root (the nearest
//! folder above the project holding `.git`, else the project itself) down to the project,
//! where a directory without an `AGENTS.md` is read for its `CLAUDE.md` instead. Later files
//! are closer to the work and take precedence; the prompt says so. Together they get at
//! most `max_bytes`: the closest keep their room, and what does not fit is cut from the
//! outer ones, each cut file marked in the prompt and named in a notice. A file that is not
//! a regular UTF-8 file under 1 MiB is skipped with a notice. Nothing here panics on what
//! the files hold.

use std::path::{Path, PathBuf};

/// `instructions.max_bytes` unless configured: all files together.
pub const DEFAULT_MAX_BYTES: usize = 32 * 1024;

/// The largest single file read at all.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

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
}

impl InstructionFile {
    /// Its path and size, and whether the cap cut it: `/repo/AGENTS.md (120 bytes)`.
    pub fn label(&self) -> String {
        format!(
            "{} ({} bytes{})",
            self.path.display(),
            self.bytes,
            if self.cut { ", cut" } else { "" }
        )
    }
}

/// The instructions of one session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Instructions {
    /// Outermost first.
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

/// The arguments of [`discover`], kept to look again.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Source {
    user_files: Vec<PathBuf>,
    project: PathBuf,
    max_bytes: usize,
}

/// A file's size and modification time: changed when either moved.
type Stamp = (u64, Option<std::time::SystemTime>);

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()))
}

/// Every file [`discover`] reads or would read, outermost first.
fn candidates(user_files: &[PathBuf], project: &Path) -> Vec<PathBuf> {
    let mut out = user_files.to_vec();
    for dir in project_dirs(project) {
        out.push(dir.join("AGENTS.md"));
        out.push(dir.join("CLAUDE.md"));
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

fn read(path: &Path, notices: &mut Vec<String>) -> Option<String> {
    match crate::safe_fs::read_small_text(path, MAX_FILE_BYTES) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            notices.push(format!("{} was skipped: {e}", path.display()));
            None
        }
    }
}

/// The instructions for `project`: `user_files` first (each read if it exists), then the
/// project's own, within `max_bytes` in all.
pub fn discover(user_files: &[PathBuf], project: &Path, max_bytes: usize) -> Instructions {
    // Stamped before reading: a file changed while it is read shows as changed later.
    let seen = candidates(user_files, project)
        .into_iter()
        .map(|p| {
            let s = stamp(&p);
            (p, s)
        })
        .collect();
    let mut notices = Vec::new();
    let mut found: Vec<(PathBuf, String)> = Vec::new();
    for path in user_files {
        if let Some(text) = read(path, &mut notices) {
            found.push((path.clone(), text));
        }
    }
    for dir in project_dirs(project) {
        let agents = dir.join("AGENTS.md");
        let text = read(&agents, &mut notices)
            .map(|t| (agents, t))
            .or_else(|| {
                let claude = dir.join("CLAUDE.md");
                read(&claude, &mut notices).map(|t| (claude, t))
            });
        found.extend(text);
    }
    // The closest files keep their room; the outer ones are cut first.
    let mut left = max_bytes;
    let mut files: Vec<InstructionFile> = found
        .into_iter()
        .rev()
        .map(|(path, text)| {
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
    Instructions {
        files,
        notices,
        source: Some(Source {
            user_files: user_files.to_vec(),
            project: project.to_path_buf(),
            max_bytes,
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
            Some(s) => discover(&s.user_files, &s.project, s.max_bytes),
            None => Instructions::default(),
        }
    }

    /// The instruction files written, created or removed since these were read or last
    /// asked, outermost first: each is named once per change. A file whose change does not
    /// alter the prompt (a `CLAUDE.md` beside an `AGENTS.md`, a touched file) is not named.
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
             (AGENTS.md files, outermost first; where they disagree, the later one wins; \
             what the user says in the conversation wins over all of them).\n",
        );
        for f in &self.files {
            out.push_str(&format!(
                "\n## {}\n\n{}",
                f.path.display(),
                f.text.trim_end()
            ));
            if f.cut {
                out.push_str(&format!(
                    "\n\n[… the rest of this file ({} of {} bytes) was left out to keep the \
                     prompt short; read it with read_file if you need it]",
                    f.bytes - f.text.len(),
                    f.bytes
                ));
            }
            out.push('\n');
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn outer_files_first_claude_md_where_there_is_no_agents_md_and_the_cap_cuts_outer_ones() {
        let home = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        let sub = repo.path().join("crates/parser");
        fs::create_dir_all(&sub).unwrap();
        fs::create_dir(repo.path().join(".git")).unwrap();
        let user = home.path().join("AGENTS.md");
        fs::write(&user, "USER: be brief.\n").unwrap();
        fs::write(repo.path().join("AGENTS.md"), "ROOT: run cargo test.\n").unwrap();
        fs::write(
            repo.path().join("CLAUDE.md"),
            "IGNORED: an AGENTS.md is here.\n",
        )
        .unwrap();
        fs::write(
            repo.path().join("crates/CLAUDE.md"),
            "CRATES: claude only.\n",
        )
        .unwrap();
        fs::write(sub.join("AGENTS.md"), "PARSER: no unsafe.\n").unwrap();
        let missing = home.path().join("nope/AGENTS.md");

        let i = discover(&[missing, user.clone()], &sub, DEFAULT_MAX_BYTES);
        let names: Vec<&Path> = i.files.iter().map(|f| f.path.as_path()).collect();
        assert_eq!(
            names,
            [
                user.as_path(),
                &repo.path().join("AGENTS.md"),
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
            at("USER") < at("ROOT") && at("ROOT") < at("CRATES") && at("CRATES") < at("PARSER")
        );
        assert!(!prompt.contains("IGNORED"));

        // 30 bytes in all: the closest file whole, the next one cut, the outer ones out.
        let i = discover(&[user], &sub, 30);
        assert_eq!(i.files.last().unwrap().text, "PARSER: no unsafe.\n");
        let crates = &i.files[i.files.len() - 2];
        assert!(crates.cut && crates.text == "CRATES: cla", "{crates:?}");
        assert!(i
            .files
            .iter()
            .all(|f| !f.path.ends_with("AGENTS.md") || f.path.starts_with(&sub)));
        assert_eq!(i.notices.len(), 3, "{:?}", i.notices);
        assert!(i
            .prompt_section()
            .contains("was left out to keep the prompt short"));
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
        fs::write(&agents, "ONE\n").unwrap();
        let mut i = discover(&[], repo.path(), DEFAULT_MAX_BYTES);
        assert_eq!(i.changed(), Vec::<PathBuf>::new(), "nothing moved");
        // A CLAUDE.md beside an AGENTS.md does not count.
        fs::write(&claude, "IGNORED\n").unwrap();
        assert_eq!(i.changed(), Vec::<PathBuf>::new());
        fs::write(&agents, "TWO, longer\n").unwrap();
        assert_eq!(i.changed(), vec![agents.clone()]);
        assert_eq!(i.changed(), Vec::<PathBuf>::new(), "told once");
        assert_eq!(i.files[0].text, "ONE\n", "the prompt's files stay");
        // Removed: the CLAUDE.md now applies, so the one file changed.
        fs::remove_file(&agents).unwrap();
        assert_eq!(i.changed(), vec![agents.clone(), claude.clone()]);
        let again = i.reload();
        assert_eq!(again.files.len(), 1);
        assert_eq!(again.files[0].path, claude);
        assert_eq!(Instructions::default().reload(), Instructions::default());
    }
}
