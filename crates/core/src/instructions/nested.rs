//! The instruction files of folders below the project, loaded as the agent works there, as
//! Claude Code loads a nested `CLAUDE.md`: reading or editing `sub/deeper/x.rs` brings in
//! `sub/AGENTS.md` and `sub/deeper/AGENTS.md` (and the `CLAUDE.md` beside each), once per
//! session and folder.
//!
//! In: the path a file tool was given, and what the session loaded so far ([`Nested`]).
//! Out: the files not loaded yet ([`Found`]), with their imports and a notice per file that
//! could not be read; the agent sends their text with the next message it adds (a tool
//! result's reminder, or the next turn's message: [`section`]), never in the system prompt,
//! whose bytes stay those the provider cached. A folder's file is read by the rules of an
//! `@` mention ([`crate::permissions::readable`]): inside the project (a link leading out
//! is not followed), not a file the permission rules ask about, a regular UTF-8 file of at
//! most 1 MiB; together a batch takes at most `instructions.max_bytes`. A path outside the
//! project loads nothing. The files in force survive a resume ([`Nested::resumed`]) and a
//! compaction ([`super::Instructions::nested_again`] reads them again to send once more).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::{fit, imports, project_dirs, resolved, Found as Read, InstructionFile, Instructions};
use crate::permissions::readable::{self, NotReadable};

/// What a session loaded of the folders below its project.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Nested {
    /// The folders looked at (resolved).
    checked: HashSet<PathBuf>,
    /// The folders' files in force (resolved), in the order loaded.
    loaded: Vec<PathBuf>,
}

impl Nested {
    /// A resumed session's: the files it loaded are in force, and their folders are not
    /// looked at again.
    pub fn resumed(loaded: &[PathBuf]) -> Nested {
        Nested {
            checked: loaded
                .iter()
                .filter_map(|p| p.parent().map(Path::to_path_buf))
                .collect(),
            loaded: loaded.to_vec(),
        }
    }

    /// The folders' files in force, in the order loaded.
    pub fn loaded(&self) -> &[PathBuf] {
        &self.loaded
    }
}

/// The folders' files a look found, to send; and what could not be read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    /// Each folder's file followed by its imports, outermost folder first.
    pub files: Vec<InstructionFile>,
    /// The folders' own files among them (resolved): what a session file records.
    pub loaded: Vec<PathBuf>,
    /// One sentence per file not read, naming it and why.
    pub notices: Vec<String>,
}

impl Instructions {
    /// The instruction files of the folders from below the project down to the folder of
    /// `touched` (a path as a file tool was given it: relative to the project, or
    /// absolute) that `nested` has not looked at yet; each folder is looked at once.
    /// Nothing for a path outside the project or in its own folder (whose files are in
    /// the system prompt), nor for instructions not found by [`super::discover`].
    pub fn nested_for(&self, nested: &mut Nested, touched: &str) -> Found {
        let Some(source) = &self.source else {
            return Found::default();
        };
        if source.discovery.max_bytes == 0 || touched.is_empty() {
            return Found::default();
        }
        let root = resolved(&source.project);
        let Ok(target) = crate::host::safe_fs::resolve(Path::new(touched), &root) else {
            return Found::default();
        };
        let Some(parent) = target.parent().filter(|p| p.starts_with(&root)) else {
            return Found::default();
        };
        let mut folders: Vec<&Path> = parent.ancestors().take_while(|d| *d != root).collect();
        folders.reverse();
        let mut paths = Vec::new();
        for folder in folders {
            if nested.checked.insert(folder.to_path_buf()) {
                paths.extend(super::FILE_NAMES.iter().map(|name| folder.join(name)));
            }
        }
        let found = self.read_nested(&paths, &nested.loaded);
        nested.loaded.extend(found.loaded.iter().cloned());
        found
    }

    /// The folders' files `paths` (loaded before) read again with their imports: to send
    /// once more after a compaction summarised them away, or what a resumed session had
    /// not sent since its last compaction. A file gone since is left out quietly; one
    /// that is no longer readable is named in a notice.
    pub fn nested_again(&self, paths: &[PathBuf]) -> Found {
        self.read_nested(paths, &[])
    }

    /// `paths` read as folders' files (a missing one quietly skipped), each followed by
    /// its imports; `loaded` and the system prompt's files are not read again.
    fn read_nested(&self, paths: &[PathBuf], loaded: &[PathBuf]) -> Found {
        let mut out = Found::default();
        let Some(source) = &self.source else {
            return out;
        };
        if paths.is_empty() || source.discovery.max_bytes == 0 {
            return out;
        }
        let rules = &source.discovery.rules;
        let root = resolved(&source.project);
        let boundary = resolved(
            project_dirs(&source.project)
                .first()
                .map_or(source.project.as_path(), PathBuf::as_path),
        );
        let mut included: HashSet<PathBuf> = self
            .files
            .iter()
            .map(|f| resolved(&f.path))
            .chain(loaded.iter().cloned())
            .collect();
        let mut found: Vec<Read> = Vec::new();
        for path in paths {
            let file = match readable::check(path, &root, Some(&root), &*rules.policy, &rules.root)
            {
                Ok(file) => file,
                Err(NotReadable::Nothing { .. }) => continue,
                Err(why) => {
                    out.notices.push(format!(
                        "{} was not read: {}",
                        path.display(),
                        why.describe()
                    ));
                    continue;
                }
            };
            if !included.insert(file.resolved.clone()) {
                continue;
            }
            let text = match imports::read_text(&file.resolved, super::MAX_FILE_BYTES as usize) {
                Ok(text) => text,
                Err(why) => {
                    out.notices
                        .push(format!("{} was not read: {why}", path.display()));
                    continue;
                }
            };
            let imported = imports::expand(
                path,
                &text,
                imports::Scope::Project(&boundary),
                rules,
                &mut included,
                &mut out.notices,
            );
            out.loaded.push(file.resolved);
            found.push((path.clone(), text, None));
            found.extend(imported.into_iter().map(|i| (i.path, i.text, Some(i.by))));
        }
        out.files = fit(found, source.discovery.max_bytes, &mut out.notices);
        out
    }
}

/// What the model reads of `files` (folders' files found as it works): a sentence on how
/// they apply, then each file under its path. Empty when there are none.
pub fn section(files: &[InstructionFile]) -> String {
    if files.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "Instruction files of the folders you are working in, read now: they apply to the \
         files under their folders, with the project's instructions; where they disagree, \
         these are closer to the work and win.\n",
    );
    for f in files {
        out.push_str(&super::section(f));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instructions::{discover, discover_with, Discovery, ReadRules};
    use std::fs;
    use std::sync::Arc;

    /// A repository with instruction files at its root and in `sub/` and `sub/deeper/`.
    fn repo() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::create_dir(root.join(".git")).unwrap();
        fs::create_dir_all(root.join("sub/deeper")).unwrap();
        fs::create_dir_all(root.join("other")).unwrap();
        fs::write(root.join("AGENTS.md"), "ROOT\n").unwrap();
        fs::write(root.join("sub/AGENTS.md"), "SUB: see @notes.md\n").unwrap();
        fs::write(root.join("sub/notes.md"), "SUB-NOTES\n").unwrap();
        fs::write(root.join("sub/deeper/AGENTS.md"), "DEEPER-AGENTS\n").unwrap();
        fs::write(root.join("sub/deeper/CLAUDE.md"), "DEEPER-CLAUDE\n").unwrap();
        (dir, root)
    }

    fn names(found: &Found, root: &Path) -> Vec<String> {
        found
            .files
            .iter()
            .map(|f| f.path.strip_prefix(root).unwrap().display().to_string())
            .collect()
    }

    #[test]
    fn a_touched_file_brings_in_its_folders_files_once_outermost_first() {
        let (_dir, root) = repo();
        let i = discover(&[], &root, 4096);
        let mut nested = Nested::default();
        let found = i.nested_for(&mut nested, "sub/deeper/x.rs");
        assert!(found.notices.is_empty(), "{:?}", found.notices);
        assert_eq!(
            names(&found, &root),
            [
                "sub/AGENTS.md",
                "sub/notes.md",
                "sub/deeper/AGENTS.md",
                "sub/deeper/CLAUDE.md"
            ]
        );
        assert_eq!(
            found.files[1].imported_by.as_deref(),
            Some(root.join("sub/AGENTS.md").as_path())
        );
        assert_eq!(
            found.loaded,
            [
                root.join("sub/AGENTS.md"),
                root.join("sub/deeper/AGENTS.md"),
                root.join("sub/deeper/CLAUDE.md")
            ]
        );
        let text = section(&found.files);
        assert!(
            text.contains("DEEPER-CLAUDE") && text.contains("imported by"),
            "{text}"
        );
        // Once per folder: again, or a sibling file, or an absolute path into it, nothing.
        for again in [
            "sub/deeper/y.rs",
            "sub/z.rs",
            &root.join("sub/w.rs").display().to_string(),
        ] {
            assert_eq!(
                i.nested_for(&mut nested, again),
                Found::default(),
                "{again}"
            );
        }
        // The project's own folder (in the system prompt) and paths outside bring nothing.
        let mut fresh = Nested::default();
        for nothing in ["top.rs", "../elsewhere/x.rs", "/etc/hosts", "other/x.rs"] {
            assert!(
                i.nested_for(&mut fresh, nothing).files.is_empty(),
                "{nothing}"
            );
        }
        // A resumed session keeps what it loaded.
        let mut resumed = Nested::resumed(nested.loaded());
        assert!(i
            .nested_for(&mut resumed, "sub/deeper/q.rs")
            .files
            .is_empty());
        // After a compaction: the same files read again.
        let again = i.nested_again(nested.loaded());
        assert_eq!(again.files, found.files);
    }

    #[test]
    fn unsafe_folder_files_are_named_and_never_read() {
        let (_dir, root) = repo();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("AGENTS.md"), "OUTSIDE-SECRET").unwrap();
        fs::create_dir(root.join("linked")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("AGENTS.md"),
            root.join("linked/AGENTS.md"),
        )
        .unwrap();
        fs::create_dir(root.join("secret")).unwrap();
        fs::write(root.join("secret/AGENTS.md"), "SENSITIVE").unwrap();
        let sensitive = vec!["**/secret/**".to_string()];
        let policy =
            crate::permissions::policy::RulePolicy::new(&root, &[], &sensitive, None).unwrap();
        let i = discover_with(
            Discovery {
                user: Vec::new(),
                max_bytes: 4096,
                rules: ReadRules {
                    policy: Arc::new(policy),
                    ..ReadRules::permissive(&root)
                },
            },
            &root,
        );
        let mut nested = Nested::default();
        let linked = i.nested_for(&mut nested, "linked/a.rs");
        assert!(linked.files.is_empty());
        assert!(
            linked.notices[0]
                .contains("linked/AGENTS.md was not read: it leads outside the project"),
            "{:?}",
            linked.notices
        );
        let secret = i.nested_for(&mut nested, "secret/a.rs");
        assert!(secret.files.is_empty());
        assert!(
            secret.notices[0].contains("sensitive"),
            "{:?}",
            secret.notices
        );
        // Turned off with the rest.
        let off = discover(&[], &root, 0);
        assert_eq!(
            off.nested_for(&mut Nested::default(), "sub/x.rs"),
            Found::default()
        );
    }
}
