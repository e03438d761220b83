//! The dashboard's module rules, checked against the source: no import circle inside
//! `app/`, and only the router (`update/`), the state that defines [`super::App`], the
//! layer stack that reads it and the module root name `App` or `Effect` — every other
//! module is a leaf that knows its own state only.
//!
//! The check reads `src/app/**.rs` as text: a module's dependencies are the sibling
//! modules its code names (`super::x`, `crate::app::x`), comments and its `mod tests`
//! left out. Test-only: nothing here is compiled into rein.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module's name relative to `app/` (`picker`, `update/send`; `update` for
/// `update/mod.rs`, the empty name for `app/mod.rs`), and its code without comments and
/// tests.
fn modules(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let Ok(rel) = path.strip_prefix(root) else {
                continue;
            };
            let rel = rel.with_extension("").to_string_lossy().replace('\\', "/");
            let name = match rel.strip_suffix("/mod") {
                Some(dir) => dir.to_string(),
                None if rel == "mod" => String::new(),
                None => rel,
            };
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            out.insert(name, code_of(&text));
        }
    }
    out
}

/// The code of a file: before its `#[cfg(test)] mod tests`, without `//` comments.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The path segments after each occurrence of `prefix` in `code` (`super::picker::Picker`
/// gives `["picker", "Picker"]`), where `prefix` starts a path.
fn paths_after<'a>(code: &'a str, prefix: &str) -> Vec<Vec<&'a str>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find(prefix) {
        let start = from + at;
        from = start + prefix.len();
        let before = code[..start].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let rest = &code[from..];
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        out.push(rest[..end].split("::").filter(|s| !s.is_empty()).collect());
    }
    out
}

/// Each module and the other modules of `app/` its code names.
fn graph(modules: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let resolve = |base: &str, segments: &[&str]| -> Option<String> {
        (1..=segments.len()).rev().find_map(|k| {
            let mut parts: Vec<&str> = Vec::new();
            if !base.is_empty() {
                parts.push(base);
            }
            parts.extend(&segments[..k]);
            let name = parts.join("/");
            modules.contains_key(&name).then_some(name)
        })
    };
    modules
        .iter()
        .map(|(name, code)| {
            // `super` of `update/send` is `update`; of `picker` (or `update`) it is the root.
            let parent = name.rsplit_once('/').map_or("", |(dir, _)| dir);
            let mut deps = BTreeSet::new();
            for segments in paths_after(code, "crate::app::") {
                deps.extend(resolve("", &segments));
            }
            for segments in paths_after(code, "super::") {
                // `super::super::x` climbs one more level for each `super`.
                let mut base = parent;
                let mut segments = &segments[..];
                while let Some((&"super", rest)) = segments.split_first() {
                    base = base.rsplit_once('/').map_or("", |(dir, _)| dir);
                    segments = rest;
                }
                deps.extend(resolve(base, segments));
            }
            // A directory module names its own children with `self::` or bare paths;
            // only links between siblings and upward matter here.
            deps.remove(name);
            deps.remove("");
            (name.clone(), deps)
        })
        .collect()
}

/// The import circles: groups of two or more modules that each reach the others.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
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

/// Whether `code` names the identifier `word` (not as part of a longer one).
fn names(code: &str, word: &str) -> bool {
    code.match_indices(word).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = code[at + word.len()..].chars().next();
        let ident = |c: char| c.is_alphanumeric() || c == '_';
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app_modules() -> BTreeMap<String, String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/app");
        let modules = modules(&root);
        assert!(
            modules.contains_key("update") && modules.contains_key("picker"),
            "the modules of src/app were not found: {:?}",
            modules.keys().collect::<Vec<_>>()
        );
        modules
    }

    #[test]
    fn no_import_circle_is_left_inside_app() {
        let graph = graph(&app_modules());
        assert_eq!(circles(&graph), Vec::<Vec<String>>::new(), "{graph:#?}");
    }

    #[test]
    fn only_the_router_the_state_and_the_stack_know_the_whole_app() {
        let allowed = |name: &str| {
            name.is_empty()
                || name == "update"
                || name.starts_with("update/")
                || matches!(name, "state" | "event" | "layer" | "architecture")
        };
        let modules = app_modules();
        let offenders: Vec<&String> = modules
            .iter()
            .filter(|(name, code)| {
                !allowed(name) && ["App", "Effect", "AppEvent"].iter().any(|w| names(code, w))
            })
            .map(|(name, _)| name)
            .collect();
        assert!(
            offenders.is_empty(),
            "leaf modules that name App, Effect or AppEvent: {offenders:?}"
        );
    }

    #[test]
    fn the_check_sees_a_circle_and_the_paths_that_make_it() {
        let modules: BTreeMap<String, String> = [
            ("a", "use super::b::B;"),
            ("b", "fn f() { crate::app::update::send::go() }"),
            ("update", "pub mod send;"),
            ("update/send", "use super::super::a; use crate::app::a::A;"),
            ("c", "// super::a is only a comment\nuse super::b;"),
        ]
        .into_iter()
        .map(|(n, c)| (n.to_string(), code_of(c)))
        .collect();
        let graph = graph(&modules);
        assert_eq!(
            graph["b"],
            BTreeSet::from(["update/send".to_string()]),
            "the longest path that names a module"
        );
        assert_eq!(graph["c"], BTreeSet::from(["b".to_string()]));
        assert_eq!(
            circles(&graph),
            vec![vec![
                "a".to_string(),
                "b".to_string(),
                "update/send".to_string()
            ]]
        );
        assert!(names("fn f(app: &App)", "App"));
        assert!(!names("fn f(app: &AppEvent2)", "App"));
        assert_eq!(
            code_of("use a;\n#[cfg(test)]\nmod tests {\n use super::App;\n}"),
            "use a;"
        );
    }
}
