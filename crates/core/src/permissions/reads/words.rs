//! Evaluating a command's words as bash would, as far as rein can: quotes, `~`, the
//! parameter forms it can follow, the values the line gives variables, and the folders it
//! changes to; what it cannot know is an unknown stretch of text.

use std::path::{Path, PathBuf};

use super::meets;
use super::{
    lits, read_class, Evaluated, Sensitive, Tok, WordPattern, MAX_ALTERNATIVES, MAX_FOLDERS,
};
use crate::permissions::bash::LineFacts;
use crate::permissions::shell::Word;
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
