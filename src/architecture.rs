//! The house's rule on imports, checked against the source: nothing imports upward, so no
//! import circle ties the top-level modules of a crate (`agent`, `tools`, `text`, …).
//!
//! The check reads every package of the workspace (this one's `src/` and each
//! `crates/*/src/`) as text. Each crate root (`lib.rs`, `main.rs`,
//! `bin/*.rs`, `bin/*/main.rs`) is followed through its `mod NAME;` declarations to every
//! file of its module tree; a file that no tree reaches is reported, so nothing escapes
//! the check unseen. In each file's code, without comments, string and character literals and
//! what `#[cfg(test)]` keeps for tests, every path that starts with `crate::` (or
//! `$crate::` in a macro) or climbs out with `super::` is resolved to the longest module
//! it names; a path to another top-level module is an arrow between the two. The arrows
//! may not close a circle: the test names each circle's modules and, for each arrow in
//! it, the first line that draws it. `app/architecture.rs` holds the dashboard's own
//! rules over the same reading. Test-only: nothing here is compiled into rein.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One module of a crate, read from its file.
pub(crate) struct Module {
    /// Its path from the crate root (`["agent", "runloop"]`; empty for the root).
    pub path: Vec<String>,
    /// Its file, from `src/` (`agent/runloop.rs`).
    pub file: String,
    /// The file as written.
    pub text: String,
    /// The file's code: comments, literals and test-only items blanked, lines kept.
    pub code: String,
    /// Declared under `#[cfg(test)]` (itself or a module above it).
    pub test_only: bool,
}

/// A path in a module's code to a module of its crate.
pub(crate) struct Reference {
    /// The module named: the longest one the path names.
    pub to: Vec<String>,
    /// The line it is on (from 1).
    pub line: usize,
}

/// A crate of the package: its root file and the modules it reaches.
pub(crate) struct Crate {
    pub root: String,
    pub modules: Vec<Module>,
}

/// The crates whose roots are in `src`, and the `.rs` files under `src` that none reaches.
pub(crate) struct Package {
    pub crates: Vec<Crate>,
    pub unreached: Vec<String>,
}

/// The top-level modules' arrows: from, to, and the first line that draws each
/// (`agent/mod.rs:50: use crate::tools::ToolContext;`).
pub(crate) type Arrows = BTreeMap<(String, String), String>;

/// This package as its source stands.
pub(crate) fn this_package() -> Package {
    read_package(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

/// Every package of the workspace, as its source stands: its `src` folder, from the
/// workspace's root (`src`, `crates/core/src`), and what it holds.
pub(crate) fn workspace_packages() -> Vec<(String, Package)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources = vec!["src".to_string()];
    if let Ok(entries) = std::fs::read_dir(root.join("crates")) {
        let mut members: Vec<String> = entries
            .flatten()
            .filter(|e| e.path().join("src").is_dir())
            .map(|e| format!("crates/{}/src", e.file_name().to_string_lossy()))
            .collect();
        members.sort();
        sources.extend(members);
    }
    sources
        .into_iter()
        .map(|src| {
            let package = read_package(&root.join(&src));
            (src, package)
        })
        .collect()
}

/// The package whose source is under `src`.
pub(crate) fn read_package(src: &Path) -> Package {
    let mut roots: Vec<PathBuf> = ["lib.rs", "main.rs"]
        .iter()
        .map(|r| src.join(r))
        .filter(|p| p.is_file())
        .collect();
    if let Ok(entries) = std::fs::read_dir(src.join("bin")) {
        let mut bins: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter_map(|p| match p.extension() {
                Some(e) if e == "rs" => Some(p),
                _ => Some(p.join("main.rs")).filter(|m| m.is_file()),
            })
            .collect();
        bins.sort();
        roots.extend(bins);
    }
    let crates: Vec<Crate> = roots.iter().map(|r| read_crate(src, r)).collect();
    let reached: BTreeSet<&str> = crates
        .iter()
        .flat_map(|c| c.modules.iter().map(|m| m.file.as_str()))
        .collect();
    let unreached = rust_files(src)
        .into_iter()
        .filter(|f| !reached.contains(f.as_str()))
        .collect();
    Package { crates, unreached }
}

/// Every `.rs` file under `src`, from `src/`, sorted.
fn rust_files(src: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for path in entries.flatten().map(|e| e.path()) {
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(relative(src, &path));
            }
        }
    }
    out.sort();
    out
}

fn relative(src: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(src).unwrap_or(path);
    rel.to_string_lossy().replace('\\', "/")
}

/// The crate rooted at `root`: every module its `mod NAME;` declarations reach.
fn read_crate(src: &Path, root: &Path) -> Crate {
    let mut modules = Vec::new();
    // (file, module path, test-only, whether its children sit beside it)
    let mut todo = vec![(root.to_path_buf(), Vec::<String>::new(), false, true)];
    while let Some((file, path, test_only, beside)) = todo.pop() {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let all = clean(&text);
        let code = without_tests(&all);
        let kept: BTreeSet<String> = declared(&code).into_iter().collect();
        let dir = match file.parent() {
            Some(parent) if beside => parent.to_path_buf(),
            Some(parent) => parent.join(file.file_stem().unwrap_or_default()),
            None => PathBuf::new(),
        };
        for name in declared(&all) {
            let flat = dir.join(format!("{name}.rs"));
            let (child, beside) = if flat.is_file() {
                (flat, false)
            } else {
                (dir.join(&name).join("mod.rs"), true)
            };
            if !child.is_file() {
                continue;
            }
            let mut child_path = path.clone();
            child_path.push(name.clone());
            let child_test = test_only || !kept.contains(&name);
            todo.push((child, child_path, child_test, beside));
        }
        modules.push(Module {
            path,
            file: relative(src, &file),
            text,
            code,
            test_only,
        });
    }
    modules.sort_by(|a, b| a.file.cmp(&b.file));
    Crate {
        root: relative(src, root),
        modules,
    }
}

impl Crate {
    /// Whether `path` is one of this crate's modules.
    fn has(&self, path: &[String]) -> bool {
        self.modules.iter().any(|m| m.path == path)
    }

    /// The modules of this crate that `module`'s code names with `crate::` or `super::`.
    pub(crate) fn references(&self, module: &Module) -> Vec<Reference> {
        let mut out = Vec::new();
        for (at, base, segments) in paths(&module.code, &module.path) {
            let Some(base) = base else {
                continue;
            };
            let segments: Vec<String> = segments.into_iter().filter(|s| s != "self").collect();
            let to = (0..=segments.len()).rev().find_map(|k| {
                let mut path = base.clone();
                path.extend(segments[..k].iter().cloned());
                self.has(&path).then_some(path)
            });
            if let Some(to) = to {
                let line = module.code[..at].matches('\n').count() + 1;
                out.push(Reference { to, line });
            }
        }
        out
    }

    /// The arrows between this crate's top-level modules, from code that is not test-only.
    pub(crate) fn arrows(&self) -> Arrows {
        let mut out = Arrows::new();
        for module in self.modules.iter().filter(|m| !m.test_only) {
            let Some(from) = module.path.first() else {
                continue;
            };
            for reference in self.references(module) {
                let Some(to) = reference.to.first() else {
                    continue;
                };
                if to == from {
                    continue;
                }
                let line = module.text.lines().nth(reference.line - 1).unwrap_or("");
                out.entry((from.clone(), to.clone())).or_insert_with(|| {
                    format!("{}:{}: {}", module.file, reference.line, line.trim())
                });
            }
        }
        out
    }
}

/// The graph of `arrows`: each module and those it imports.
pub(crate) fn graph(arrows: &Arrows) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, to) in arrows.keys() {
        out.entry(from.clone()).or_default().insert(to.clone());
        out.entry(to.clone()).or_default();
    }
    out
}

/// The import circles: groups of two or more modules that each reach the others.
pub(crate) fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&str> = vec![from];
        while let Some(m) = todo.pop() {
            for d in graph.get(m).into_iter().flatten() {
                if seen.insert(d.clone()) {
                    todo.push(d);
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&str, BTreeSet<String>> =
        graph.keys().map(|m| (m.as_str(), reach(m))).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for (m, seen) in &reaches {
        if !seen.contains(*m) || out.iter().any(|c| c.iter().any(|x| x == m)) {
            continue;
        }
        let circle: Vec<String> = seen
            .iter()
            .filter(|o| reaches.get(o.as_str()).is_some_and(|r| r.contains(*m)))
            .cloned()
            .collect();
        out.push(circle);
    }
    out
}

/// Each circle of `arrows` in words: its modules, then each arrow inside it with the first
/// line that draws it. Empty when there is none.
pub(crate) fn circles_in_words(arrows: &Arrows) -> String {
    let mut out = String::new();
    for circle in circles(&graph(arrows)) {
        out.push_str(&format!("circle: {}\n", circle.join(", ")));
        for ((from, to), line) in arrows {
            if circle.contains(from) && circle.contains(to) {
                out.push_str(&format!("  {from} -> {to}: {line}\n"));
            }
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `text` with its comments and the insides of its string and character literals turned
/// to spaces; line breaks stay, so lines keep their numbers. Lifetimes stay as they are.
fn clean(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = chars.clone();
    let blank = |out: &mut Vec<char>, from: usize, to: usize| {
        for c in out.iter_mut().take(to.min(chars.len())).skip(from) {
            if *c != '\n' {
                *c = ' ';
            }
        }
    };
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        // A literal starts after no identifier, or after a lone `b` (b"…", b'…', br"…").
        let before = if i > 0 { at(i - 1) } else { '\0' };
        let literal = !is_ident(before) || (before == 'b' && !is_ident(at(i.wrapping_sub(2))));
        if c == '/' && at(i + 1) == '/' {
            let end = (i..chars.len())
                .find(|&j| chars[j] == '\n')
                .unwrap_or(chars.len());
            blank(&mut out, i, end);
            i = end;
        } else if c == '/' && at(i + 1) == '*' {
            let (mut depth, mut j) = (1, i + 2);
            while j < chars.len() && depth > 0 {
                if chars[j] == '/' && at(j + 1) == '*' {
                    depth += 1;
                    j += 2;
                } else if chars[j] == '*' && at(j + 1) == '/' {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if c == 'r' && (at(i + 1) == '"' || at(i + 1) == '#') && literal {
            // A raw string: r"…", r#"…"#, br"…".
            let hashes = (i + 1..chars.len())
                .take_while(|&j| chars[j] == '#')
                .count();
            if at(i + 1 + hashes) != '"' {
                i += 1;
                continue;
            }
            let start = i + 2 + hashes;
            let end = (start..chars.len())
                .find(|&j| chars[j] == '"' && (1..=hashes).all(|h| at(j + h) == '#'))
                .map_or(chars.len(), |j| j + 1 + hashes);
            blank(&mut out, start, end.saturating_sub(1 + hashes));
            i = end;
        } else if c == '"' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '"' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            blank(&mut out, i + 1, j);
            i = j + 1;
        } else if c == '\'' && literal {
            // A character literal ('x', '\n', '\u{1F600}', '{'), else a lifetime or a label.
            let end = if at(i + 1) == '\\' {
                (i + 3..chars.len()).find(|&j| chars[j] == '\'')
            } else if at(i + 2) == '\'' {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    blank(&mut out, i + 1, end);
                    i = end + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    out.into_iter().collect()
}

/// `code` (cleaned) with every item under `#[cfg(test)]` (or `#[cfg(all(test, …))]`)
/// blanked, attribute and all; line breaks stay.
fn without_tests(code: &str) -> String {
    let mut chars: Vec<char> = code.chars().collect();
    let mut from = 0;
    loop {
        let text: String = chars[from..].iter().collect();
        let found = ["#[cfg(test)]", "#[cfg(all(test,"]
            .iter()
            .filter_map(|a| text.find(a))
            .min();
        let Some(found) = found else {
            break;
        };
        let start = from + text[..found].chars().count();
        let end = item_end(&chars, start);
        for c in chars.iter_mut().take(end).skip(start) {
            if *c != '\n' {
                *c = ' ';
            }
        }
        from = end;
    }
    chars.into_iter().collect()
}

/// Where the item that starts at `start` (with its attributes) ends: after its `;` or its
/// closing brace, whichever comes first outside parentheses and brackets.
fn item_end(chars: &[char], start: usize) -> usize {
    let mut depth = 0i32;
    let mut i = start;
    // The attributes: `#[…]`, brackets matched.
    while i < chars.len() {
        match chars[i] {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            '{' if depth == 0 => break,
            ';' if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    let mut braces = 0;
    while i < chars.len() {
        match chars[i] {
            '{' => braces += 1,
            '}' => {
                braces -= 1;
                if braces == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    chars.len()
}

/// The modules `code` declares with `mod NAME;` (not inline ones).
fn declared(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("mod") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(is_ident) {
            continue;
        }
        let rest = &code[at + 3..];
        if !rest.starts_with(char::is_whitespace) {
            continue;
        }
        let rest = rest.trim_start();
        let rest = rest.strip_prefix("r#").unwrap_or(rest);
        let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
        if !name.is_empty() && rest[name.len()..].trim_start().starts_with(';') {
            out.push(name);
        }
    }
    out
}

/// Each path in `code` that starts with `crate::` or `super::`, as where it starts (a
/// group's piece: where the piece starts), the module it is relative to (`None` when
/// `super` climbs above the crate root) and its segments after that; `crate::{a::b, c}`
/// gives one path a piece.
fn paths(code: &str, module: &[String]) -> Vec<(usize, Option<Vec<String>>, Vec<String>)> {
    let mut out = Vec::new();
    for start in ["crate::", "super::"] {
        for (at, _) in code.match_indices(start) {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| is_ident(c) || c == ':') {
                continue;
            }
            for (offset, segments) in expand(&code[at..]) {
                let mut base = Some(module.to_vec());
                let mut rest = &segments[..];
                if rest.first().is_some_and(|s| s == "crate") {
                    base = Some(Vec::new());
                    rest = &rest[1..];
                }
                while rest.first().is_some_and(|s| s == "super") {
                    base = base.and_then(|mut b| b.pop().map(|_| b));
                    rest = &rest[1..];
                }
                out.push((at + offset, base, rest.to_vec()));
            }
        }
    }
    out
}

/// The path at the start of `text` (`a::b::{c, d::e}`) as its paths: where each starts
/// in `text` (a group's piece: where the piece starts) and its segments (`[a, b, c]`,
/// `[a, b, d, e]`); a glob or a name's end stops a path.
fn expand(text: &str) -> Vec<(usize, Vec<String>)> {
    let mut segments = Vec::new();
    let mut rest = text;
    loop {
        let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
        if name.is_empty() {
            break;
        }
        rest = &rest[name.len()..];
        segments.push(name);
        let Some(after) = rest.trim_start().strip_prefix("::") else {
            break;
        };
        rest = after.trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            let group_at = text.len() - group.len();
            let mut out = Vec::new();
            let mut depth = 0;
            let mut piece_at = 0;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        out.extend(expand_piece(&segments, group, piece_at, i, group_at));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.extend(expand_piece(&segments, group, piece_at, i, group_at));
                        piece_at = i + 1;
                    }
                    _ => {}
                }
            }
            return out;
        }
    }
    vec![(0, segments)]
}

/// The piece `group[from..to]` of a `{…}` group that starts at `group_at` in the text,
/// after the path before it.
fn expand_piece(
    prefix: &[String],
    group: &str,
    from: usize,
    to: usize,
    group_at: usize,
) -> Vec<(usize, Vec<String>)> {
    let piece = &group[from..to];
    let skipped = piece.len() - piece.trim_start().len();
    let piece = piece.trim();
    if piece.is_empty() {
        return Vec::new();
    }
    expand(piece)
        .into_iter()
        .map(|(at, tail)| {
            let segments = prefix.iter().cloned().chain(tail).collect();
            (group_at + from + skipped + at, segments)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_import_circle_between_the_top_level_modules_of_any_crate() {
        let packages = workspace_packages();
        assert!(
            packages.iter().any(|(src, _)| src == "crates/core/src"),
            "the check no longer finds the core crate: {:?}",
            packages.iter().map(|(src, _)| src).collect::<Vec<_>>()
        );
        let mut said = String::new();
        for (src, package) in &packages {
            assert!(
                package.unreached.is_empty(),
                "files under {src}/ that no crate's module tree reaches, so the check cannot \
                 read them (a #[path], a file of an inline module, a forgotten file): {:?}",
                package.unreached
            );
            if src == "crates/core/src" {
                let lib = package.crates.iter().find(|c| c.root == "lib.rs");
                let arrows = lib.map(Crate::arrows).unwrap_or_default();
                assert!(
                    arrows.contains_key(&("agent".to_string(), "tools".to_string())),
                    "the check no longer sees that the agent imports the tools: {:#?}",
                    arrows.keys()
                );
            }
            for krate in &package.crates {
                let circles = circles_in_words(&krate.arrows());
                if !circles.is_empty() {
                    said.push_str(&format!(
                        "in the crate of {src}/{} (files from {src}/):\n{circles}",
                        krate.root
                    ));
                }
            }
        }
        assert!(
            said.is_empty(),
            "top-level modules import each other; the lower one must not name the higher \
             (move the shared piece down, or hand the lower one a type or a callback):\n{said}"
        );
    }

    /// Files that fit in a head: no Rust file of the workspace (sources, tests, benches,
    /// the support crate) is over 800 lines. A file that grows past it is split by topic
    /// into a folder, as `tests/it/tmux_e2e/` and `agent/toolcall/` are.
    #[test]
    fn no_rust_file_is_over_800_lines() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut folders = vec![root.join("src"), root.join("tests")];
        if let Ok(entries) = std::fs::read_dir(root.join("crates")) {
            for entry in entries.flatten() {
                folders.push(entry.path().join("src"));
                folders.push(entry.path().join("tests"));
            }
        }
        let mut long = Vec::new();
        let mut seen = 0;
        for folder in folders.iter().filter(|f| f.is_dir()) {
            for file in rust_files(folder) {
                let path = folder.join(&file);
                let text = std::fs::read_to_string(&path).unwrap();
                seen += 1;
                let lines = text.lines().count();
                if lines > 800 {
                    long.push(format!("{} ({lines} lines)", path.display()));
                }
            }
        }
        assert!(seen > 300, "the check read only {seen} files");
        assert!(long.is_empty(), "over 800 lines: {long:#?}");
    }

    /// A package under a temporary folder with `files` (paths from `src/`).
    fn package(files: &[(&str, &str)]) -> (tempfile::TempDir, Package) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join("src").join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let package = read_package(&dir.path().join("src"));
        (dir, package)
    }

    /// `lib.rs`'s doc is the map a reader starts from: it names every top-level module
    /// (in backticks), so a new module is placed on it when it is added.
    #[test]
    fn the_library_doc_names_every_module() {
        for (src, _) in workspace_packages() {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(&src)
                .join("lib.rs");
            let lib = std::fs::read_to_string(&path).unwrap();
            let doc: String = lib
                .lines()
                .filter_map(|l| l.strip_prefix("//!"))
                .collect::<Vec<_>>()
                .join("\n");
            let modules: Vec<&str> = lib
                .lines()
                .filter_map(|l| {
                    let l = l.trim();
                    let l = l.strip_prefix("pub ").unwrap_or(l);
                    l.strip_prefix("mod ")?.strip_suffix(';')
                })
                .collect();
            assert!(modules.len() > 5, "{src}/lib.rs: {modules:?}");
            let missing: Vec<_> = modules
                .iter()
                .filter(|m| !doc.contains(&format!("`{m}`")))
                .collect();
            assert!(
                missing.is_empty(),
                "{src}/lib.rs's doc does not name {missing:?}"
            );
        }
    }

    #[test]
    fn an_upward_import_is_named_as_a_circle_with_its_line() {
        let (_dir, package) = package(&[
            ("lib.rs", "pub mod agent;\npub mod text;\npub mod tools;\n"),
            ("agent/mod.rs", "pub mod events;\nuse crate::tools::bash;\n"),
            ("agent/events.rs", "pub enum AgentEvent {}\n"),
            ("tools/mod.rs", "pub mod bash;\n"),
            (
                "tools/bash.rs",
                "use crate::text::clip;\n\nuse crate::agent::events::AgentEvent;\n",
            ),
            ("text.rs", "pub fn clip() {}\n"),
        ]);
        assert!(package.unreached.is_empty(), "{:?}", package.unreached);
        let arrows = package.crates[0].arrows();
        assert_eq!(
            circles_in_words(&arrows),
            "circle: agent, tools\n  \
             agent -> tools: agent/mod.rs:2: use crate::tools::bash;\n  \
             tools -> agent: tools/bash.rs:3: use crate::agent::events::AgentEvent;\n"
        );
    }

    #[test]
    fn comments_literals_and_tests_draw_no_arrow_and_groups_and_super_do() {
        let (_dir, package) = package(&[
            (
                "lib.rs",
                "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n#[cfg(test)]\nmod e;\n",
            ),
            (
                "a.rs",
                concat!(
                    "// crate::b in a comment\n",
                    "/* crate::b /* nested */ crate::b */\n",
                    "const S: &str = \"crate::b \\\" crate::b\";\n",
                    "const R: &str = r#\"crate::b \" crate::b\"#;\n",
                    "const C: char = '{';\n",
                    "fn f<'a>(x: &'a str) {}\n",
                    "#[cfg(test)]\nfn helper() { crate::b::x(); }\n",
                    "#[cfg(all(test, unix))]\nmod tests { use crate::b; }\n",
                    "use crate::{\n    c::{self, X},\n    d,\n};\n",
                    "pub mod inner;\n",
                ),
            ),
            ("a/inner.rs", "use super::super::b::Y;\n"),
            ("b.rs", ""),
            ("c.rs", ""),
            ("d.rs", ""),
            ("e.rs", "use crate::a;\n"),
        ]);
        let arrows = package.crates[0].arrows();
        let lines: Vec<String> = arrows
            .iter()
            .map(|((f, t), l)| format!("{f} -> {t}: {l}"))
            .collect();
        assert_eq!(
            lines,
            [
                "a -> b: a/inner.rs:1: use super::super::b::Y;",
                "a -> c: a.rs:12: c::{self, X},",
                "a -> d: a.rs:13: d,",
            ]
        );
        let e = package.crates[0].modules.iter().find(|m| m.file == "e.rs");
        assert!(e.is_some_and(|e| e.test_only));
    }

    #[test]
    fn a_file_no_module_tree_reaches_is_reported_and_each_crate_is_read() {
        let (_dir, package) = package(&[
            ("lib.rs", "pub mod a;\n"),
            ("a.rs", "mod inner { mod deep; }\n"),
            ("a/inner/deep.rs", ""),
            ("main.rs", "mod cli;\nuse crate::cli::run;\n"),
            ("cli/mod.rs", "pub fn run() {}\n"),
            ("bin/tool/main.rs", "mod x;\n"),
            ("bin/tool/x.rs", ""),
            ("forgotten.rs", ""),
        ]);
        let roots: Vec<&str> = package.crates.iter().map(|c| c.root.as_str()).collect();
        assert_eq!(roots, ["lib.rs", "main.rs", "bin/tool/main.rs"]);
        assert_eq!(package.unreached, ["a/inner/deep.rs", "forgotten.rs"]);
    }

    #[test]
    fn a_path_names_the_longest_module_it_reaches() {
        let segments =
            |text| -> Vec<Vec<String>> { expand(text).into_iter().map(|(_, s)| s).collect() };
        assert_eq!(
            segments("crate::a::{b::{c, d}, e}; x"),
            [
                vec!["crate", "a", "b", "c"],
                vec!["crate", "a", "b", "d"],
                vec!["crate", "a", "e"]
            ]
        );
        let starts: Vec<usize> = expand("crate::a::{b::{c, d}, e}")
            .iter()
            .map(|p| p.0)
            .collect();
        assert_eq!(starts, [15, 18, 22]);
        assert_eq!(
            segments("super::super::x::*;"),
            [vec!["super", "super", "x"]]
        );
        assert_eq!(
            declared("pub mod a;\nmod b { }\npub(crate) mod r#c ;"),
            ["a", "c"]
        );
    }
}
