//! `@path` imports in instruction files, expanded as Claude Code expands them in `CLAUDE.md`.
//!
//! In: an instruction file's path and text, where its imports may lead ([`Scope`]), and the
//! rules a read goes by ([`super::ReadRules`]). Out: the imported files, depth first in the
//! order they are named (each after the file that imports it), and a notice per import
//! that was refused. An import is an `@path` word as a mention is one
//! ([`crate::conversation::mention::mentions`]), outside code spans and fenced code blocks;
//! the path is relative to the importing file's folder, `~/…` from the home folder, or
//! absolute. Imports nest at most [`MAX_DEPTH`] hops. Each import goes by the rules of an
//! `@` mention ([`crate::permissions::readable`]): inside the project for a project's file
//! (a user's own file may import any file of the user's), not a file the permission rules
//! ask about before reading, at most `context.attach_max_bytes`, UTF-8 text. A refused
//! import (missing, unsafe, too large, a cycle, too deep) is named in a notice and stays
//! in the text as written; a file already in the prompt is not imported again (a
//! `CLAUDE.md` that says `@AGENTS.md` beside that `AGENTS.md`). A word that names nothing
//! and does not look like a path (`@alice`) is just text, quietly. Nothing here panics on
//! what the files hold.

use std::collections::HashSet;
use std::io::Read;
use std::ops::Range;
use std::path::{Path, PathBuf};

use super::ReadRules;
use crate::permissions::readable::{self, NotReadable};

/// The most hops from an instruction file to a file it imports, through imports.
pub const MAX_DEPTH: usize = 5;

/// The most refused imports named one by one for one instruction file; the rest are
/// counted (a file of a hundred thousand `@x/y` words must not flood the screen).
const MAX_NOTICES: usize = 20;

/// Where an instruction file's imports may lead.
#[derive(Debug, Clone, Copy)]
pub(super) enum Scope<'a> {
    /// A user's own file (`~/.agents/AGENTS.md`): any file of the user's.
    User,
    /// A project's file: inside this folder (resolved), the repository's root.
    Project(&'a Path),
}

/// An imported file, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Imported {
    /// Where the import leads (resolved).
    pub path: PathBuf,
    pub text: String,
    /// The file whose `@path` named it.
    pub by: PathBuf,
}

/// The imports of `file` (holding `text`), recursively; `included` holds the files already
/// in the prompt (resolved) and gets the imported ones.
pub(super) fn expand(
    file: &Path,
    text: &str,
    scope: Scope<'_>,
    rules: &ReadRules,
    included: &mut HashSet<PathBuf>,
    notices: &mut Vec<String>,
) -> Vec<Imported> {
    let mut out = Vec::new();
    let start = crate::host::safe_fs::resolve(file, Path::new("/")).unwrap_or_else(|_| file.into());
    let mut said = Vec::new();
    let mut walk = Walk {
        scope,
        rules,
        included,
        notices: &mut said,
        chain: vec![start],
        out: &mut out,
    };
    walk.file(file, text, 1);
    let more = said.len().saturating_sub(MAX_NOTICES);
    notices.extend(said.into_iter().take(MAX_NOTICES));
    if more > 0 {
        notices.push(format!(
            "{}: {more} more imports were not imported; they stay as written",
            file.display()
        ));
    }
    out
}

/// One expansion's state.
struct Walk<'a, 'b> {
    scope: Scope<'b>,
    rules: &'b ReadRules,
    included: &'a mut HashSet<PathBuf>,
    notices: &'a mut Vec<String>,
    /// The files from the top one down to the one being read (resolved): a cycle's test.
    chain: Vec<PathBuf>,
    out: &'a mut Vec<Imported>,
}

impl Walk<'_, '_> {
    /// The imports of `file`, which is `depth - 1` hops from the top.
    fn file(&mut self, file: &Path, text: &str, depth: usize) {
        for word in imports_in(text) {
            let refuse = |why: String| {
                format!(
                    "{}: @{word} was not imported: {why}; it stays as written",
                    file.display()
                )
            };
            let Some(target) = self.target(file, word) else {
                continue;
            };
            let parent = file.parent().unwrap_or(Path::new("/"));
            let base = crate::host::safe_fs::resolve(parent, Path::new("/"))
                .unwrap_or_else(|_| parent.to_path_buf());
            let boundary = match self.scope {
                Scope::User => None,
                Scope::Project(root) => Some(root),
            };
            let found = readable::check(
                &target,
                &base,
                boundary,
                &*self.rules.policy,
                &self.rules.root,
            );
            let found = match found {
                Ok(found) => found,
                Err(NotReadable::Nothing { missing: true }) if !looks_like_path(word) => continue,
                Err(NotReadable::Nothing { missing: false }) => continue,
                Err(why) => {
                    self.notices.push(refuse(why.describe()));
                    continue;
                }
            };
            if self.chain.contains(&found.resolved) {
                self.notices.push(refuse(format!(
                    "{} imports itself through it (a cycle)",
                    found.resolved.display()
                )));
                continue;
            }
            if self.included.contains(&found.resolved) {
                continue;
            }
            if depth > MAX_DEPTH {
                self.notices
                    .push(refuse(format!("imports go at most {MAX_DEPTH} deep")));
                continue;
            }
            let max = self.rules.max_import_bytes;
            if found.size > max as u64 {
                self.notices.push(refuse(format!(
                    "it is {} bytes, more than context.attach_max_bytes ({max} bytes)",
                    found.size
                )));
                continue;
            }
            let text = match read_text(&found.resolved, max) {
                Ok(text) => text,
                Err(why) => {
                    self.notices.push(refuse(why));
                    continue;
                }
            };
            self.included.insert(found.resolved.clone());
            self.out.push(Imported {
                path: found.resolved.clone(),
                text: text.clone(),
                by: file.to_path_buf(),
            });
            self.chain.push(found.resolved.clone());
            self.file(&found.resolved, &text, depth + 1);
            self.chain.pop();
        }
    }

    /// Where `word` points from `file`: `~/…` from the home folder, an absolute path as
    /// it is, else relative to the file's folder (`None`: `~` without a home).
    fn target(&mut self, file: &Path, word: &str) -> Option<PathBuf> {
        if let Some(rest) = word.strip_prefix("~/") {
            return match &self.rules.home {
                Some(home) => Some(home.join(rest)),
                None => {
                    self.notices.push(format!(
                        "{}: @{word} was not imported: the home folder is not known; it \
                         stays as written",
                        file.display()
                    ));
                    None
                }
            };
        }
        if word.starts_with('~') {
            return None;
        }
        Some(PathBuf::from(word))
    }
}

/// A word that names a file even where nothing is there: a folder in it or an extension
/// (`docs/style.md`, `README.md`; not `alice` or `v1.2`), so its absence is worth a notice.
fn looks_like_path(word: &str) -> bool {
    word.contains('/')
        || Path::new(word)
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.chars().any(|c| c.is_ascii_alphabetic()))
}

/// The text of the regular file at `path` (resolved), read without following a link, at
/// most `max` bytes: or why not, in words.
pub(super) fn read_text(path: &Path, max: usize) -> Result<String, String> {
    let file =
        crate::host::safe_fs::open_read(path).map_err(|e| crate::host::safe_fs::describe(&e))?;
    // A named pipe or a device is never read (the open did not block on a pipe).
    if !file.metadata().map_err(|e| e.to_string())?.is_file() {
        return Err("it is not a regular file".to_string());
    }
    let mut bytes = Vec::new();
    file.take(max as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() > max {
        return Err(format!("it is larger than {max} bytes"));
    }
    String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_string())
}

/// The `@path` words of `text` outside code: each the path after its `@`.
pub(super) fn imports_in(text: &str) -> Vec<&str> {
    let code = code_ranges(text);
    crate::conversation::mention::mentions(text)
        .into_iter()
        .filter(|(range, _)| !code.iter().any(|c| c.contains(&range.start)))
        .map(|(_, path)| path)
        .collect()
}

/// The byte ranges of `text` that are code: fenced blocks (```` ``` ```` or `~~~`, to their
/// closing fence or the end) and inline code spans (a run of backticks to the next run of
/// as many).
fn code_ranges(text: &str) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut open: Option<(char, usize, usize)> = None;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start_matches(' ');
        let indent = line.len() - trimmed.len();
        let mark = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        let run = mark.map_or(0, |m| trimmed.chars().take_while(|c| *c == m).count());
        match open {
            None if run >= 3 && indent <= 3 => open = mark.map(|m| (m, run, at)),
            Some((m, n, start))
                if mark == Some(m) && run >= n && trimmed[run..].trim().is_empty() =>
            {
                out.push(start..at + line.len());
                open = None;
            }
            _ => {}
        }
        at += line.len();
    }
    if let Some((_, _, start)) = open {
        out.push(start..text.len());
    }
    let fenced = out.clone();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if let Some(block) = fenced.iter().find(|r| r.contains(&i)) {
            i = block.end;
            continue;
        }
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let run = bytes[i..].iter().take_while(|b| **b == b'`').count();
        let mut j = i + run;
        let mut closed = None;
        while j < bytes.len() {
            if fenced.iter().any(|r| r.contains(&j)) {
                break;
            }
            if bytes[j] == b'`' {
                let other = bytes[j..].iter().take_while(|b| **b == b'`').count();
                if other == run {
                    closed = Some(j + other);
                    break;
                }
                j += other;
            } else {
                j += 1;
            }
        }
        match closed {
            Some(end) => {
                out.push(i..end);
                i = end;
            }
            None => i += run,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_are_words_outside_code() {
        let text = "See @docs/style.md and @README.md.\n\
                    Run `npm i @types/node` first; mail ann@example.com.\n\
                    ```sh\n@inside/fence.md\n```\n\
                    ~~~\n@tilde/fence.md\n~~~\n\
                    Then ``a ` @double/tick.md`` and @after/all.md";
        assert_eq!(
            imports_in(text),
            ["docs/style.md", "README.md", "after/all.md"]
        );
        // An unclosed fence runs to the end; an unclosed backtick is just a character.
        assert_eq!(imports_in("a ` @open.md\n```\n@x.md"), ["open.md"]);
    }

    #[test]
    fn a_flood_of_refused_imports_is_counted_not_listed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let file = root.join("CLAUDE.md");
        let text: String = (0..1000).map(|i| format!("@gone/{i}.md\n")).collect();
        std::fs::write(&file, &text).unwrap();
        let mut notices = Vec::new();
        let got = expand(
            &file,
            &text,
            Scope::Project(&root),
            &ReadRules::permissive(&root),
            &mut HashSet::new(),
            &mut notices,
        );
        assert!(got.is_empty());
        assert_eq!(notices.len(), MAX_NOTICES + 1);
        assert!(
            notices[MAX_NOTICES]
                .ends_with("980 more imports were not imported; they stay as written"),
            "{}",
            notices[MAX_NOTICES]
        );
    }

    #[test]
    fn only_path_like_words_are_worth_a_notice_when_missing() {
        for yes in ["docs/style.md", "README.md", "a/b"] {
            assert!(looks_like_path(yes), "{yes}");
        }
        for no in ["alice", "v1.2", "team"] {
            assert!(!looks_like_path(no), "{no}");
        }
    }
}
