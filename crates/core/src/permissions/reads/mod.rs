//! What a bash command line could read by name: the sensitive-file check behind
//! [`super::policy::RulePolicy::judge_bash`].
//!
//! In: an allowed part's [`Operands`](super::bash::Operands) (its words as written), the
//! [`LineFacts`](super::bash::LineFacts) of the whole line, the project root and home, and
//! the sensitive patterns. Out: the sensitive pattern a word could name, if any.
//!
//! A word is evaluated as bash would, as far as rein can: quotes removed, `~`, `~+`,
//! `$HOME`, `${HOME}`, `${HOME%/}` and the other `${NAME...}` forms whose value follows from
//! what rein knows, the values the line gives variables (`f=.env`, `for f in .env`), and a
//! relative word joined to every folder the line changes to (`cd ~/.ssh && cat id_rsa`).
//! What rein cannot know (a variable from the environment, the output of `$(...)`) is an
//! unknown stretch of text. The result is matched as a pattern, not expanded against the
//! disk: its glob characters (`*`, `?`, `[...]`, as bash's pathname expansion reads them:
//! no leading dot unless `GLOBIGNORE` is set on the line) may stand for any text the
//! sensitive pattern matches, so `.e*`, `.[e]nv` and `~/.ss?/id_rsa` ask whether or not such
//! a file exists now, and the check needs no listing of folders. An unknown stretch may only
//! stand for text the sensitive pattern's own wildcards match: rein assumes what it cannot
//! read is not itself a sensitive name (`cat "$x"` stays allowed, as before), but the text
//! the command adds to it may make one (`cat "$x/.env"`, `cat "$d/.ssh/id_rsa"` ask).
//!
//! A program that reads folders whole (`grep -r`, `rg`, `diff -r`, `cp -r`, `tar`, ...)
//! reads every file below the folders it is given, and a program fed names it cannot see
//! (`xargs cat`, `find -exec cat {}`, `cat $(find ...)`) reads what the line's listing
//! programs (`find`, `ls`, `git ls-files`, `rg --files`, ...) print: for those the folders
//! are looked through on disk (bounded, links not followed), and a sensitive file there, or
//! a sensitive pattern's own folder (`~/.ssh`), asks.
//!
//! This file holds the patterns and how a word's pattern meets a sensitive one; `words`
//! evaluates words; `folders` knows which programs read or list folders whole and looks
//! through them.

use std::collections::HashSet;
use std::path::Path;

use super::paths::PathRules;

mod folders;
mod words;

pub use folders::{lists_folders, reads_folders, sensitive_below, Below, Walk};
pub use words::Evaluator;

/// Most alternatives one word is evaluated to; beyond, the rest is any text.
const MAX_ALTERNATIVES: usize = 32;

/// Most folders the line may be in at once (the project root and where `cd` goes).
const MAX_FOLDERS: usize = 8;

/// Most entries looked at below the folders a command reads whole; beyond, the command asks.
pub const MAX_WALK: usize = 20_000;

/// Folders not looked into when a folder is read whole: what they hold is the project's
/// history, dependencies and build output, not the user's credentials.
const SKIPPED_DIRS: [&str; 3] = [".git", "node_modules", "target"];

/// One piece of a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Lit(char),
    /// Text rein cannot know: any string, standing only for the other side's wildcards.
    Unknown,
    /// `*` in a path component.
    Star,
    /// `?`.
    Quest,
    /// `[...]`.
    Class(Class),
    /// Any text the command's own words could make (a brace list in a word with expansions).
    Any,
    /// `**` of a sensitive pattern: any text, `/` included.
    GlobStar,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Class {
    negated: bool,
    items: Vec<(char, char)>,
}

impl Class {
    fn accepts(&self, c: char) -> bool {
        self.items.iter().any(|&(a, b)| a <= c && c <= b) != self.negated
    }
}

impl Tok {
    fn repeats(&self) -> bool {
        matches!(self, Tok::Unknown | Tok::Star | Tok::Any | Tok::GlobStar)
    }

    fn accepts(&self, c: char) -> bool {
        match self {
            Tok::Lit(l) => *l == c,
            Tok::Star | Tok::Quest => c != '/',
            Tok::Class(class) => c != '/' && class.accepts(c),
            Tok::Unknown | Tok::Any | Tok::GlobStar => true,
        }
    }

    /// A pathname-expansion character of a word, which cannot match a leading dot.
    fn is_word_glob(&self) -> bool {
        matches!(self, Tok::Star | Tok::Quest | Tok::Class(_))
    }
}

/// A word evaluated: its alternatives, and whether some of it is a command's output.
#[derive(Debug, Default)]
pub struct Evaluated {
    alternatives: Vec<Vec<Tok>>,
    pub from_output: bool,
}

/// A sensitive pattern, ready to be met with a word.
#[derive(Debug, Clone)]
pub struct Sensitive {
    configured: String,
    toks: Vec<Tok>,
    /// Only met by words with an unknown stretch: a home pattern for any home
    /// (`**/.ssh/**` of `~/.ssh/**`), since the unknown may be the home itself.
    any_home: bool,
}

/// The sensitive patterns of `paths` as tokens (brace lists expanded), each home pattern
/// also for any home, and each folder pattern (`~/.ssh/**`) also for the folder itself.
pub fn sensitive_patterns(paths: &PathRules, home: Option<&Path>) -> Vec<Sensitive> {
    let home = home.map(|h| h.display().to_string());
    let mut out = Vec::new();
    for (expanded, configured, _) in paths.sensitive_patterns() {
        for text in expand_braces(expanded) {
            let mut variants = vec![(text.clone(), false)];
            if let Some(folder) = text.strip_suffix("/**") {
                variants.push((folder.to_string(), false));
            }
            if let Some(rest) = home
                .as_deref()
                .and_then(|h| text.strip_prefix(h))
                .and_then(|r| r.strip_prefix('/'))
            {
                variants.push((format!("**/{rest}"), true));
            }
            for (variant, any_home) in variants {
                out.push(Sensitive {
                    configured: configured.to_string(),
                    toks: pattern_toks(&variant),
                    any_home,
                });
            }
        }
    }
    out
}

/// `{a,b}` lists of a glob, expanded (bounded).
fn expand_braces(pattern: &str) -> Vec<String> {
    let Some(open) = pattern.find('{') else {
        return vec![pattern.to_string()];
    };
    let Some(close) = pattern[open..].find('}').map(|c| c + open) else {
        return vec![pattern.to_string()];
    };
    let (head, body, tail) = (
        &pattern[..open],
        &pattern[open + 1..close],
        &pattern[close + 1..],
    );
    body.split(',')
        .flat_map(|choice| expand_braces(&format!("{head}{choice}{tail}")))
        .take(MAX_ALTERNATIVES)
        .collect()
}

/// A sensitive glob (globset's syntax, separators literal) as tokens.
fn pattern_toks(pattern: &str) -> Vec<Tok> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '*' if chars.get(i + 1) == Some(&'*') => {
                toks.push(Tok::GlobStar);
                i += 2;
            }
            '*' => {
                toks.push(Tok::Star);
                i += 1;
            }
            '?' => {
                toks.push(Tok::Quest);
                i += 1;
            }
            '[' => match read_class(&chars, i) {
                Some((class, next)) => {
                    toks.push(Tok::Class(class));
                    i = next;
                }
                None => {
                    toks.push(Tok::Lit('['));
                    i += 1;
                }
            },
            '\\' if i + 1 < chars.len() => {
                toks.push(Tok::Lit(chars[i + 1]));
                i += 2;
            }
            c => {
                toks.push(Tok::Lit(c));
                i += 1;
            }
        }
    }
    toks
}

/// `[...]` at `at`: the class and the index after its `]`.
fn read_class(chars: &[char], at: usize) -> Option<(Class, usize)> {
    let mut i = at + 1;
    let negated = matches!(chars.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut items = Vec::new();
    let mut first = true;
    loop {
        let c = *chars.get(i)?;
        if c == ']' && !first {
            return Some((Class { negated, items }, i + 1));
        }
        first = false;
        if chars.get(i + 1) == Some(&'-') && chars.get(i + 2).is_some_and(|&e| e != ']') {
            items.push((c, chars[i + 2]));
            i += 3;
        } else {
            items.push((c, c));
            i += 1;
        }
    }
}

/// Whether some path is named by `word` and matched by `sensitive`. `dotglob`: the word's
/// glob characters may match a leading dot.
fn meets(word: &[Tok], sensitive: &[Tok], dotglob: bool) -> bool {
    let (n, m) = (word.len(), sensitive.len());
    let mut seen: HashSet<(usize, usize, bool)> = HashSet::new();
    let mut stack = vec![(0usize, 0usize, true)];
    while let Some(state @ (i, j, at_start)) = stack.pop() {
        if !seen.insert(state) {
            continue;
        }
        if i == n && j == m {
            return true;
        }
        if i < n && word[i].repeats() {
            stack.push((i + 1, j, at_start));
        }
        if j < m && sensitive[j].repeats() {
            stack.push((i, j + 1, at_start));
        }
        let (Some(w), Some(s)) = (word.get(i), sensitive.get(j)) else {
            continue;
        };
        // What the unknown stands for is not the sensitive pattern's own text.
        if *w == Tok::Unknown && matches!(s, Tok::Lit(_)) {
            continue;
        }
        let next_i = if w.repeats() { i } else { i + 1 };
        let next_j = if s.repeats() { j } else { j + 1 };
        for slash in [true, false] {
            let possible = match (w, s) {
                (Tok::Lit(c), other) | (other, Tok::Lit(c)) => {
                    (*c == '/') == slash
                        && other.accepts(*c)
                        && w.accepts(*c)
                        && !(*c == '.' && at_start && w.is_word_glob() && !dotglob)
                }
                _ if slash => w.accepts('/') && s.accepts('/'),
                _ => {
                    // Some other character both take: a leading dot only where the word's
                    // glob may match one.
                    let dot_only = at_start && w.is_word_glob() && !dotglob;
                    match (w, s) {
                        (Tok::Class(a), Tok::Class(b)) => {
                            let ranges = a.items.iter().chain(&b.items);
                            ranges
                                .flat_map(|&(x, y)| [x, y])
                                .chain(['a', '0'])
                                .any(|c| {
                                    c != '/'
                                        && a.accepts(c)
                                        && b.accepts(c)
                                        && !(dot_only && c == '.')
                                })
                        }
                        (Tok::Class(a), _) | (_, Tok::Class(a)) => a
                            .items
                            .iter()
                            .flat_map(|&(x, y)| [x, y])
                            .chain(['a', '0'])
                            .any(|c| c != '/' && a.accepts(c) && !(dot_only && c == '.')),
                        _ => true,
                    }
                }
            };
            if possible {
                stack.push((next_i, next_j, slash));
            }
        }
    }
    false
}

fn lits(text: &str) -> Vec<Tok> {
    text.chars().map(Tok::Lit).collect()
}

/// A word's path that holds a pattern (`src/*`), which chooses what below its folder is read.
#[derive(Debug, Clone)]
pub struct WordPattern(Vec<Tok>);

#[cfg(test)]
mod tests {
    use super::*;

    fn word(text: &str) -> Vec<Tok> {
        text.chars()
            .map(|c| match c {
                '*' => Tok::Star,
                '?' => Tok::Quest,
                '$' => Tok::Unknown,
                c => Tok::Lit(c),
            })
            .collect()
    }

    /// A word's glob meets a sensitive pattern where some path matches both; a glob
    /// character skips a leading dot unless `dotglob`; an unknown stretch stands only for
    /// the pattern's wildcards.
    #[test]
    fn where_a_word_meets_a_sensitive_pattern() {
        let env = pattern_toks("**/.env");
        let ssh = pattern_toks("/h/.ssh/**");
        for (w, s, dotglob, meets_it) in [
            ("/p/.e*", &env, false, true),
            ("/p/*", &env, false, false),
            ("/p/*", &env, true, true),
            ("/p/?env", &env, false, false),
            ("/p/*/.env", &env, false, true),
            ("/h/.ss?/id_rsa", &ssh, false, true),
            ("/h/*/id_rsa", &ssh, false, false),
            ("/p/$", &env, false, false),
            ("/p/$/.env", &env, false, true),
            ("$/id_rsa", &ssh, false, false),
            ("$.txt", &env, false, false),
        ] {
            assert_eq!(meets(&word(w), s, dotglob), meets_it, "{w}");
        }
        let class = pattern_toks("/p/.[e]nv");
        assert!(meets(&lits("/p/.env"), &class, false));
        assert!(!meets(&lits("/p/.xnv"), &class, false));
    }
}
