//! What a bash command line could read by name: the sensitive-file check behind
//! [`super::policy::RulePolicy::judge_bash`].
//!
//! In: an allowed part's [`Operands`] (its words as written), the [`LineFacts`] of the whole
//! line, the project root and home, and the sensitive patterns. Out: the sensitive pattern a
//! word could name, if any.
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

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::bash::{LineFacts, Operands};
use super::paths::PathRules;
use super::shell::Word;

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

/// Evaluates the words of one command line.
pub struct Evaluator<'a> {
    facts: &'a LineFacts,
    home: Option<String>,
    /// The folders the line may be in, as tokens.
    folders: Vec<Vec<Tok>>,
}

impl<'a> Evaluator<'a> {
    pub fn new(facts: &'a LineFacts, root: &Path, home: Option<&Path>) -> Evaluator<'a> {
        let mut evaluator = Evaluator {
            facts,
            home: home.map(|h| h.display().to_string()),
            folders: vec![lits(&root.display().to_string())],
        };
        let mut folders = evaluator.folders.clone();
        for target in &facts.cds {
            let target = if target == "-" { "$OLDPWD" } else { target };
            let value = evaluator.eval_text(target, 0);
            let mut more = Vec::new();
            for alt in &value.alternatives {
                for folder in &folders {
                    more.push(join(folder, alt));
                }
            }
            for folder in more {
                if !folders.contains(&folder) {
                    folders.push(folder);
                }
            }
            folders.truncate(MAX_FOLDERS);
        }
        evaluator.folders = folders.into_iter().map(|f| normalise(&f)).collect();
        evaluator
    }

    /// The paths `word` could name: each alternative made absolute from every folder the
    /// line may be in. A word that is an option names nothing; `--opt=VALUE` names VALUE.
    pub fn paths(&self, word: &Word) -> Evaluated {
        let raw = word.raw.as_str();
        let text = if raw.starts_with('-') {
            match raw.split_once('=') {
                Some((_, value)) => value,
                None => return Evaluated::default(),
            }
        } else {
            raw
        };
        let value = self.eval_text(text, 0);
        let mut alternatives = Vec::new();
        for alt in value.alternatives {
            if alt.first() == Some(&Tok::Lit('/')) {
                alternatives.push(normalise(&alt));
            } else {
                for folder in &self.folders {
                    alternatives.push(normalise(&join(folder, &alt)));
                }
            }
        }
        Evaluated {
            alternatives,
            from_output: value.from_output,
        }
    }

    /// Evaluate a word's (or an assigned value's) raw text.
    fn eval_text(&self, raw: &str, depth: usize) -> Evaluated {
        let chars: Vec<char> = raw.chars().collect();
        let mut b = Builder::new();
        let mut from_output = false;
        let mut i = 0;
        if chars.first() == Some(&'~') {
            let end = chars.iter().position(|&c| c == '/').unwrap_or(chars.len());
            let user: String = chars[1..end].iter().collect();
            match user.as_str() {
                "+" => b.push_alts(self.var("PWD", depth, &mut from_output)),
                "-" => b.push(Tok::Unknown),
                u if u.is_empty()
                    || u.chars().all(|c| c.is_alphanumeric() || "._-".contains(c)) =>
                {
                    match &self.home {
                        Some(home) => b.push_lits(home),
                        None => b.push(Tok::Unknown),
                    }
                }
                // Not a tilde prefix bash expands: the loop reads it as text.
                _ => {}
            }
            i = if b.pushed { end } else { 0 };
        }
        let mut quoted = false;
        while i < chars.len() {
            let c = chars[i];
            match c {
                '\\' if !quoted => {
                    if let Some(&n) = chars.get(i + 1) {
                        b.push(Tok::Lit(n));
                    }
                    i += 2;
                }
                '\\' => match chars.get(i + 1) {
                    Some(&n) if "$`\"\\\n".contains(n) => {
                        b.push(Tok::Lit(n));
                        i += 2;
                    }
                    _ => {
                        b.push(Tok::Lit('\\'));
                        i += 1;
                    }
                },
                '\'' if !quoted => {
                    let end = chars[i + 1..]
                        .iter()
                        .position(|&c| c == '\'')
                        .map_or(chars.len(), |p| i + 1 + p);
                    for &c in chars.get(i + 1..end).unwrap_or_default() {
                        b.push(Tok::Lit(c));
                    }
                    i = end + 1;
                }
                '"' => {
                    quoted = !quoted;
                    i += 1;
                }
                '$' => i = self.dollar(&chars, i, quoted, depth, &mut b, &mut from_output),
                '`' => {
                    let mut k = i + 1;
                    while k < chars.len() && chars[k] != '`' {
                        k += if chars[k] == '\\' { 2 } else { 1 };
                    }
                    b.push(Tok::Unknown);
                    from_output = true;
                    i = k + 1;
                }
                '<' | '>' if !quoted && chars.get(i + 1) == Some(&'(') => {
                    i = skip_parens(&chars, i + 1);
                    b.push(Tok::Unknown);
                    from_output = true;
                }
                '*' if !quoted => {
                    b.push(Tok::Star);
                    i += 1;
                }
                '?' if !quoted => {
                    b.push(Tok::Quest);
                    i += 1;
                }
                '[' if !quoted => match read_class(&chars, i) {
                    Some((class, next)) => {
                        b.push(Tok::Class(class));
                        i = next;
                    }
                    None => {
                        b.push(Tok::Lit('['));
                        i += 1;
                    }
                },
                '{' if !quoted => {
                    // A brace list left in a word with expansions: any text of the word's.
                    match chars[i..].iter().position(|&c| c == '}') {
                        Some(p)
                            if chars[i..i + p].contains(&',')
                                || chars[i..i + p].windows(2).any(|w| w == ['.', '.']) =>
                        {
                            b.push(Tok::Any);
                            i += p + 1;
                        }
                        _ => {
                            b.push(Tok::Lit('{'));
                            i += 1;
                        }
                    }
                }
                c => {
                    b.push(Tok::Lit(c));
                    i += 1;
                }
            }
        }
        Evaluated {
            alternatives: b.alternatives,
            from_output,
        }
    }

    /// At a `$` of `chars`: its value pushed onto `b`; the index after it.
    fn dollar(
        &self,
        chars: &[char],
        i: usize,
        quoted: bool,
        depth: usize,
        b: &mut Builder,
        from_output: &mut bool,
    ) -> usize {
        match chars.get(i + 1) {
            Some('(') => {
                if chars.get(i + 2) != Some(&'(') {
                    *from_output = true;
                }
                b.push(Tok::Unknown);
                skip_parens(chars, i + 1)
            }
            Some('{') => {
                let mut k = i + 2;
                let mut open = 1;
                while k < chars.len() {
                    match chars[k] {
                        '\\' => k += 1,
                        '$' if chars.get(k + 1) == Some(&'{') => {
                            open += 1;
                            k += 1;
                        }
                        '}' => {
                            open -= 1;
                            if open == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    k += 1;
                }
                let inside: String = chars.get(i + 2..k).unwrap_or_default().iter().collect();
                if inside.starts_with([' ', '\t', '\n', '|']) {
                    *from_output = true;
                    b.push(Tok::Unknown);
                } else {
                    let value = self.parameter(&inside, depth, from_output);
                    b.push_alts(split_unquoted(value, quoted));
                }
                k + 1
            }
            Some(&c) if c == '_' || c.is_ascii_alphabetic() => {
                let mut k = i + 1;
                while chars
                    .get(k)
                    .is_some_and(|c| *c == '_' || c.is_ascii_alphanumeric())
                {
                    k += 1;
                }
                let name: String = chars[i + 1..k].iter().collect();
                b.push_alts(split_unquoted(self.var(&name, depth, from_output), quoted));
                k
            }
            Some(&c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
                b.push(Tok::Unknown);
                i + 2
            }
            Some('\'') if !quoted => {
                let mut k = i + 2;
                let mut plain = true;
                while k < chars.len() && chars[k] != '\'' {
                    if chars[k] == '\\' {
                        plain = false;
                        k += 1;
                    }
                    k += 1;
                }
                if plain {
                    for &c in chars.get(i + 2..k).unwrap_or_default() {
                        b.push(Tok::Lit(c));
                    }
                } else {
                    b.push(Tok::Any);
                }
                k + 1
            }
            Some('"') if !quoted => i + 1,
            _ => {
                b.push(Tok::Lit('$'));
                i + 1
            }
        }
    }

    /// The values of `${inside}`.
    fn parameter(&self, inside: &str, depth: usize, from_output: &mut bool) -> Vec<Vec<Tok>> {
        let name_len = inside
            .char_indices()
            .find(|&(_, c)| !(c == '_' || c.is_ascii_alphanumeric()))
            .map_or(inside.len(), |(i, _)| i);
        let (name, rest) = inside.split_at(name_len);
        if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
            return vec![vec![Tok::Unknown]];
        }
        let values = self.var(name, depth, from_output);
        // An element of an array (`${a[0]}`, `${a[@]}`): any of its values.
        let rest = match rest.strip_prefix('[') {
            Some(after) => match after.split_once(']') {
                Some((_, tail)) => tail,
                None => return vec![vec![Tok::Unknown]],
            },
            None => rest,
        };
        let word = |text: &str, from_output: &mut bool| {
            let value = self.eval_text(text, depth + 1);
            *from_output |= value.from_output;
            value.alternatives
        };
        if rest.is_empty() {
            return values;
        }
        for op in [":-", ":=", ":?", "-", "=", "?"] {
            if let Some(text) = rest.strip_prefix(op) {
                let mut all = values;
                all.extend(word(text, from_output));
                return all;
            }
        }
        for op in [":+", "+"] {
            if let Some(text) = rest.strip_prefix(op) {
                let mut all = vec![Vec::new()];
                all.extend(word(text, from_output));
                return all;
            }
        }
        if let Some(replace) = rest.strip_prefix('/') {
            // `${f/x/.env}`: the value, or one with the replacement somewhere in it.
            let replacement = replace
                .trim_start_matches(['/', '#', '%'])
                .split_once('/')
                .map_or("", |(_, r)| r);
            let mut all = values;
            for alt in word(replacement, from_output) {
                let mut around = vec![Tok::Unknown];
                around.extend(alt);
                around.push(Tok::Unknown);
                all.push(around);
            }
            return all;
        }
        if rest.starts_with(['^', ',', '~']) || matches!(rest, "@L" | "@U" | "@u") {
            // Case changed: the value in either case.
            let mut all = values.clone();
            for alt in values {
                for lower in [true, false] {
                    all.push(
                        alt.iter()
                            .map(|t| match t {
                                Tok::Lit(c) if lower => Tok::Lit(c.to_ascii_lowercase()),
                                Tok::Lit(c) => Tok::Lit(c.to_ascii_uppercase()),
                                other => other.clone(),
                            })
                            .collect(),
                    );
                }
            }
            return all;
        }
        for (op, suffix) in [("%%", true), ("%", true), ("##", false), ("#", false)] {
            if let Some(pattern) = rest.strip_prefix(op) {
                let plain = !pattern.contains(['*', '?', '[', '$', '`', '\\', '\'', '"']);
                return values
                    .into_iter()
                    .flat_map(|alt| {
                        let cut = plain.then(|| strip(&alt, pattern, suffix)).flatten();
                        match cut {
                            Some(cut) => vec![cut],
                            // A pattern rein does not follow: the value, or any part of it.
                            None => vec![alt, vec![Tok::Any]],
                        }
                    })
                    .collect();
            }
        }
        // A form rein does not follow (`${f@E}` expands escapes): any text.
        vec![vec![Tok::Any]]
    }

    /// The values a variable may have on this line.
    fn var(&self, name: &str, depth: usize, from_output: &mut bool) -> Vec<Vec<Tok>> {
        let mut values: Vec<Vec<Tok>> = Vec::new();
        let mut assigned = false;
        for (n, value) in &self.facts.vars {
            if n != name {
                continue;
            }
            assigned = true;
            match value {
                Some(raw) if depth < 4 => {
                    let raw = raw.strip_prefix('(').and_then(|r| r.strip_suffix(')'));
                    let elements: Vec<&str> = match raw {
                        // An array's elements, each one of its values.
                        Some(list) => list.split_whitespace().collect(),
                        None => vec![value.as_deref().unwrap_or_default()],
                    };
                    for element in elements {
                        let value = self.eval_text(element, depth + 1);
                        *from_output |= value.from_output;
                        values.extend(value.alternatives);
                    }
                }
                _ => values.push(vec![Tok::Unknown]),
            }
        }
        match name {
            "HOME" => match &self.home {
                Some(home) => values.push(lits(home)),
                None => values.push(vec![Tok::Unknown]),
            },
            "PWD" if !assigned => values.extend(self.folders.iter().cloned()),
            _ if !assigned => values.push(vec![Tok::Unknown]),
            _ => {}
        }
        values.truncate(MAX_ALTERNATIVES);
        values
    }
}

/// An unquoted expansion is split at blanks: each piece is a word of its own too.
fn split_unquoted(values: Vec<Vec<Tok>>, quoted: bool) -> Vec<Vec<Tok>> {
    if quoted {
        return values;
    }
    let mut out = Vec::new();
    for value in values {
        let pieces: Vec<Vec<Tok>> = value
            .split(|t| matches!(t, Tok::Lit(' ' | '\t' | '\n')))
            .map(<[Tok]>::to_vec)
            .collect();
        if pieces.len() > 1 {
            out.extend(pieces.into_iter().filter(|p| !p.is_empty()));
        }
        out.push(value);
    }
    out.truncate(MAX_ALTERNATIVES);
    out
}

/// `alt` without `pattern` (plain text) at its end (`suffix`) or start, when it is there.
fn strip(alt: &[Tok], pattern: &str, suffix: bool) -> Option<Vec<Tok>> {
    let pat = lits(pattern);
    if suffix {
        alt.ends_with(&pat)
            .then(|| alt[..alt.len() - pat.len()].to_vec())
    } else {
        alt.starts_with(&pat).then(|| alt[pat.len()..].to_vec())
    }
    .or_else(|| Some(alt.to_vec()))
}

/// The index after the `)` matching the `(` at `open`.
fn skip_parens(chars: &[char], open: usize) -> usize {
    let mut depth = 0;
    let mut k = open;
    let mut quote: Option<char> = None;
    while k < chars.len() {
        let c = chars[k];
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) if c == '\\' => k += 1,
            Some(_) => {}
            None => match c {
                '\\' => k += 1,
                '\'' | '"' => quote = Some(c),
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return k + 1;
                    }
                }
                _ => {}
            },
        }
        k += 1;
    }
    chars.len()
}

fn lits(text: &str) -> Vec<Tok> {
    text.chars().map(Tok::Lit).collect()
}

fn join(folder: &[Tok], relative: &[Tok]) -> Vec<Tok> {
    if relative.first() == Some(&Tok::Lit('/')) {
        return relative.to_vec();
    }
    let mut out = folder.to_vec();
    out.push(Tok::Lit('/'));
    out.extend_from_slice(relative);
    out
}

/// `.` and `..` components applied; the parent of a component with an unknown stretch is
/// unknown.
fn normalise(path: &[Tok]) -> Vec<Tok> {
    let mut parts: Vec<Vec<Tok>> = Vec::new();
    for part in path.split(|t| *t == Tok::Lit('/')) {
        if part.is_empty() || part == [Tok::Lit('.')] {
            continue;
        }
        if part == [Tok::Lit('.'), Tok::Lit('.')] {
            match parts.pop() {
                Some(last) if last.contains(&Tok::Unknown) => parts.push(vec![Tok::Unknown]),
                _ => {}
            }
            continue;
        }
        parts.push(part.to_vec());
    }
    let mut out = Vec::new();
    for part in parts {
        out.push(Tok::Lit('/'));
        out.extend(part);
    }
    if out.is_empty() {
        out.push(Tok::Lit('/'));
    }
    out
}

/// Alternatives built piece by piece, bounded.
struct Builder {
    alternatives: Vec<Vec<Tok>>,
    pushed: bool,
}

impl Builder {
    fn new() -> Builder {
        Builder {
            alternatives: vec![Vec::new()],
            pushed: false,
        }
    }

    fn push(&mut self, tok: Tok) {
        self.pushed = true;
        for alt in &mut self.alternatives {
            alt.push(tok.clone());
        }
    }

    fn push_lits(&mut self, text: &str) {
        for c in text.chars() {
            self.push(Tok::Lit(c));
        }
    }

    fn push_alts(&mut self, values: Vec<Vec<Tok>>) {
        self.pushed = true;
        if values.is_empty() {
            return;
        }
        if self.alternatives.len() * values.len() > MAX_ALTERNATIVES {
            self.push(Tok::Any);
            return;
        }
        let mut out = Vec::with_capacity(self.alternatives.len() * values.len());
        for alt in &self.alternatives {
            for value in &values {
                let mut joined = alt.clone();
                joined.extend(value.iter().cloned());
                out.push(joined);
            }
        }
        self.alternatives = out;
    }
}

impl Evaluated {
    /// The alternatives that are plain paths, as text.
    pub fn literal_paths(&self) -> impl Iterator<Item = String> + '_ {
        self.alternatives.iter().filter_map(|alt| {
            alt.iter()
                .map(|t| match t {
                    Tok::Lit(c) => Some(*c),
                    _ => None,
                })
                .collect()
        })
    }

    /// The sensitive pattern some alternative with a pattern or an unknown stretch could
    /// name, shown as configured.
    pub fn sensitive_pattern<'s>(
        &self,
        sensitive: &'s [Sensitive],
        dotglob: bool,
    ) -> Option<&'s str> {
        for alt in &self.alternatives {
            if alt.iter().all(|t| matches!(t, Tok::Lit(_))) {
                continue;
            }
            let unknown = alt.contains(&Tok::Unknown);
            for s in sensitive {
                if (!s.any_home || unknown) && meets(alt, &s.toks, dotglob) {
                    return Some(&s.configured);
                }
            }
        }
        None
    }

    /// The folders a command reading this word whole would look through: each
    /// alternative's literal leading folder (before its first pattern or unknown), unless
    /// an unknown stretch comes first (rein cannot tell where it reads).
    pub fn folders(&self) -> Vec<(PathBuf, Option<WordPattern>)> {
        let mut out = Vec::new();
        for alt in &self.alternatives {
            let cut = alt
                .iter()
                .position(|t| !matches!(t, Tok::Lit(_)))
                .unwrap_or(alt.len());
            if cut < alt.len() && matches!(alt[cut], Tok::Unknown) {
                continue;
            }
            let literal: String = alt[..cut]
                .iter()
                .map(|t| match t {
                    Tok::Lit(c) => *c,
                    _ => '/',
                })
                .collect();
            let folder = if cut < alt.len() {
                literal.rfind('/').map(|s| literal[..s.max(1)].to_string())
            } else {
                Some(literal)
            };
            if let Some(folder) = folder {
                let pattern = (cut < alt.len()).then(|| WordPattern(alt.clone()));
                out.push((PathBuf::from(folder), pattern));
            }
        }
        out
    }
}

/// A word's path that holds a pattern (`src/*`), which chooses what below its folder is read.
#[derive(Debug, Clone)]
pub struct WordPattern(Vec<Tok>);

/// How a folder is read whole.
#[derive(Debug, Clone, Copy, Default)]
pub struct Walk {
    /// Files and folders whose name starts with a dot are read too.
    pub hidden: bool,
    /// The ignore files (`.gitignore`, `.ignore`, ...) are obeyed, as ripgrep and git do.
    pub ignores: bool,
    /// Only the folder's own entries (`ls` without `-R`).
    pub shallow: bool,
}

/// What a folder read whole holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Below {
    Nothing,
    /// A sensitive file (or a sensitive pattern's own folder), and the pattern as configured.
    Sensitive(PathBuf, String),
    /// More than [`MAX_WALK`] entries: not looked through.
    TooMany,
}

/// A sensitive file (or a sensitive pattern's own folder) below `folder`, read as `walk`
/// says, with the pattern it matches. `names`: basename patterns a file must match to count (`find -name`,
/// `grep --include`), none for every file. `pattern`: the word's own pattern, which an
/// entry directly below the folder must match (`grep -r x src/*`).
pub fn sensitive_below(
    paths: &PathRules,
    folder: &Path,
    walk: Walk,
    names: &[String],
    pattern: Option<&WordPattern>,
    dotglob: bool,
) -> Below {
    let named = |path: &Path| {
        names.is_empty()
            || path.file_name().is_some_and(|n| {
                let name = n.to_string_lossy();
                names
                    .iter()
                    .any(|p| meets(&lits(&name), &pattern_toks(p), true))
            })
    };
    let hidden = |path: &Path| {
        path.strip_prefix(folder).is_ok_and(|rest| {
            rest.components()
                .any(|c| c.as_os_str().to_string_lossy().starts_with('.'))
        })
    };
    for (_, configured, prefix) in paths.sensitive_patterns() {
        let Some(prefix) = prefix else { continue };
        if prefix.starts_with(folder)
            && prefix != folder
            && (walk.hidden || !hidden(prefix))
            && !(walk.shallow && prefix.parent() != Some(folder))
            && std::fs::symlink_metadata(prefix).is_ok()
        {
            return Below::Sensitive(prefix.to_path_buf(), configured.to_string());
        }
    }
    if !std::fs::symlink_metadata(folder).is_ok_and(|m| m.is_dir()) {
        return Below::Nothing;
    }
    let mut builder = ignore::WalkBuilder::new(folder);
    builder
        .standard_filters(walk.ignores)
        .hidden(!walk.hidden)
        .follow_links(false)
        .max_depth(walk.shallow.then_some(1))
        .filter_entry(|e| {
            !(e.depth() > 0
                && e.file_type().is_some_and(|t| t.is_dir())
                && SKIPPED_DIRS.contains(&e.file_name().to_string_lossy().as_ref()))
        });
    if walk.ignores {
        builder.require_git(false);
    }
    for (seen, entry) in builder.build().enumerate() {
        if seen > MAX_WALK {
            return Below::TooMany;
        }
        let Ok(entry) = entry else { continue };
        let path = entry.path();
        if entry.depth() == 0 {
            continue;
        }
        if let Some(pattern) = pattern {
            // The word's own pattern chooses the entries directly below the folder.
            let top: PathBuf = folder.join(
                path.strip_prefix(folder)
                    .ok()
                    .and_then(|r| r.components().next())
                    .map(|c| c.as_os_str().to_os_string())
                    .unwrap_or_default(),
            );
            let top = lits(&top.display().to_string());
            let chosen = meets(&top, &pattern.0, dotglob);
            if !chosen {
                continue;
            }
        }
        if let Some(configured) = paths.sensitive_name(path) {
            if named(path) {
                return Below::Sensitive(path.to_path_buf(), configured.to_string());
            }
        }
    }
    Below::Nothing
}

/// How `operands`' program reads the folders among its arguments: whole, as [`Walk`] says,
/// and the basename patterns a file must match to be read; `None` when it does not read
/// folders whole. With no folder among its arguments, such a program reads `.`
/// (`grep -r x`, `rg x`).
pub fn reads_folders(operands: &Operands) -> Option<(Walk, Vec<String>)> {
    let args: Vec<&str> = operands.args.iter().map(Word::text).collect();
    let flag = |short: char, long: &[&str]| {
        args.iter().any(|a| {
            long.contains(a)
                || (a.starts_with('-')
                    && !a.starts_with("--")
                    && a[1..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphabetic())
                        .any(|c| c == short))
        })
    };
    let valued = |names: &[&str]| -> Vec<String> {
        let mut out = Vec::new();
        for (i, a) in args.iter().enumerate() {
            for name in names {
                if let Some(v) = a.strip_prefix(&format!("{name}=")) {
                    out.push(v.to_string());
                } else if a == name {
                    if let Some(v) = args.get(i + 1) {
                        out.push(v.to_string());
                    }
                }
            }
        }
        out
    };
    let all = Walk {
        hidden: true,
        ignores: false,
        shallow: false,
    };
    match operands.program.as_str() {
        "grep" | "egrep" | "fgrep" | "zgrep" => {
            let recursive = flag('r', &["--recursive"])
                || flag('R', &["--dereference-recursive"])
                || args.contains(&"--directories=recurse")
                || args.windows(2).any(|w| w == ["-d", "recurse"]);
            recursive.then(|| (all, valued(&["--include"])))
        }
        "rgrep" => Some((all, valued(&["--include"]))),
        "rg" | "ripgrep" => {
            let unrestricted = args
                .iter()
                .filter(|a| a.starts_with('-') && !a.starts_with("--"))
                .map(|a| a.matches('u').count())
                .sum::<usize>();
            let globs = !valued(&["-g", "--glob", "--iglob"]).is_empty();
            let hidden = flag('.', &["--hidden"]) || unrestricted >= 2 || globs;
            let ignores =
                !(args.iter().any(|a| a.starts_with("--no-ignore")) || unrestricted >= 1 || globs);
            Some((
                Walk {
                    hidden,
                    ignores,
                    shallow: false,
                },
                Vec::new(),
            ))
        }
        "ag" | "ack" | "ugrep" => Some((all, Vec::new())),
        "diff" => flag('r', &["--recursive"]).then(|| (all, Vec::new())),
        "cp" => (flag('r', &["--recursive"]) || flag('R', &[]) || flag('a', &["--archive"]))
            .then(|| (all, Vec::new())),
        "rsync" => {
            (flag('r', &["--recursive"]) || flag('a', &["--archive"])).then(|| (all, Vec::new()))
        }
        "zip" => flag('r', &["--recurse-paths"]).then(|| (all, Vec::new())),
        "tar" | "bsdtar" | "7z" | "scp" => Some((all, Vec::new())),
        _ => None,
    }
}

/// How `operands`' program lists the folders among its arguments, when it prints names
/// another command on the line may open (`find`, `ls`, `git ls-files`, `rg --files`, ...),
/// with the basename patterns a name must match to be printed.
pub fn lists_folders(operands: &Operands) -> Option<(Walk, Vec<String>)> {
    let args: Vec<&str> = operands.args.iter().map(Word::text).collect();
    let all = Walk {
        hidden: true,
        ignores: false,
        shallow: false,
    };
    match operands.program.as_str() {
        "find" => {
            let mut names = Vec::new();
            let alternatives = args
                .iter()
                .any(|a| matches!(*a, "-o" | "-or" | "!" | "-not" | ","));
            for w in args.windows(2) {
                if matches!(w[0], "-name" | "-iname") && !alternatives {
                    names.push(w[1].to_string());
                }
            }
            Some((all, names))
        }
        "ls" => {
            let short = |c: char| {
                args.iter()
                    .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains(c))
            };
            Some((
                Walk {
                    hidden: short('a') || short('A') || args.contains(&"--all"),
                    ignores: false,
                    shallow: !(short('R') || args.contains(&"--recursive")),
                },
                Vec::new(),
            ))
        }
        "tree" | "du" | "fd" | "fdfind" => Some((all, Vec::new())),
        "git" if args.first() == Some(&"ls-files") => Some((
            Walk {
                hidden: true,
                ignores: true,
                shallow: false,
            },
            Vec::new(),
        )),
        "rg" if args
            .iter()
            .any(|a| matches!(*a, "--files" | "-l" | "--files-with-matches")) =>
        {
            reads_folders(operands)
        }
        "grep" | "egrep" | "fgrep"
            if args.iter().any(|a| {
                a.starts_with('-') && !a.starts_with("--") && (a.contains('l') || a.contains('L'))
            }) =>
        {
            reads_folders(operands)
        }
        _ => None,
    }
}
