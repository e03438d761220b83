//! The dashboard's module rules, checked against the source: no import circle inside
//! `app/`, and only the router (`update/`), the state that defines [`super::App`], the
//! layer stack that reads it and the module root name `App` or `Effect` — every other
//! module is a leaf that knows its own state only.
//!
//! The check reads `src/app/**.rs` as [`crate::architecture`] reads the whole crate (the
//! crate-wide rule, no circle between top-level modules, is there): a module's
//! dependencies are the other modules of `app/` its code names (`super::x`,
//! `crate::app::x`), comments, literals and test-only code left out; a module naming what
//! a module above it holds (`super::Item`, the root's `App`) is no dependency. Test-only:
//! nothing here is compiled into rein.

use std::collections::{BTreeMap, BTreeSet};

use crate::architecture::{circles, this_package, Crate, Module};

/// A module's name relative to `app/`: `picker`, `update/send`; `update` for
/// `update/mod.rs`, the empty name for `app/mod.rs`.
fn name(path: &[String]) -> Option<String> {
    match path.split_first() {
        Some((app, rest)) if app == "app" => Some(rest.join("/")),
        _ => None,
    }
}

/// Each module of `app/` (not test-only) and the other modules of `app/` it names, those
/// above it left out.
fn graph(krate: &Crate) -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for module in krate.modules.iter().filter(|m| !m.test_only) {
        let Some(from) = name(&module.path) else {
            continue;
        };
        let deps = krate
            .references(module)
            .into_iter()
            .filter(|r| !module.path.starts_with(&r.to))
            .filter_map(|r| name(&r.to))
            .collect();
        out.insert(from, deps);
    }
    out
}

/// The library crate's modules of `app/`, by name, and the crate.
fn app() -> (Crate, Vec<String>) {
    let package = this_package();
    let lib = package.crates.into_iter().find(|c| c.root == "lib.rs");
    let Some(lib) = lib else {
        panic!("src/lib.rs was not read");
    };
    let names: Vec<String> = lib
        .modules
        .iter()
        .filter(|m| !m.test_only)
        .filter_map(|m| name(&m.path))
        .collect();
    assert!(
        names.iter().any(|n| n == "update") && names.iter().any(|n| n == "picker"),
        "the modules of src/app were not found: {names:?}"
    );
    (lib, names)
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

    #[test]
    fn no_import_circle_is_left_inside_app() {
        let (lib, _) = app();
        let graph = graph(&lib);
        assert_eq!(circles(&graph), Vec::<Vec<String>>::new(), "{graph:#?}");
    }

    #[test]
    fn only_the_router_the_state_and_the_stack_know_the_whole_app() {
        let allowed = |name: &str| {
            name.is_empty()
                || name == "update"
                || name.starts_with("update/")
                || matches!(name, "state" | "event" | "layer")
        };
        let (lib, _) = app();
        let offenders: Vec<String> = lib
            .modules
            .iter()
            .filter(|m| !m.test_only)
            .filter_map(|m: &Module| Some((name(&m.path)?, &m.code)))
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
        let dir = tempfile::tempdir().unwrap();
        let files = [
            ("lib.rs", "pub mod app;"),
            (
                "app/mod.rs",
                "pub mod a;\npub mod b;\npub mod c;\npub mod update;\npub struct App;",
            ),
            ("app/a.rs", "use super::b::B;\nuse super::App;"),
            ("app/b.rs", "fn f() { crate::app::update::send::go() }"),
            ("app/update/mod.rs", "pub mod send;\npub fn route() {}"),
            (
                "app/update/send.rs",
                "use super::super::a; use crate::app::a::A; use super::route;",
            ),
            ("app/c.rs", "// super::a is only a comment\nuse super::b;"),
        ];
        for (path, text) in files {
            let path = dir.path().join("src").join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let package = crate::architecture::read_package(&dir.path().join("src"));
        let graph = graph(&package.crates[0]);
        assert_eq!(
            graph["b"],
            BTreeSet::from(["update/send".to_string()]),
            "the longest path that names a module"
        );
        assert_eq!(graph["c"], BTreeSet::from(["b".to_string()]));
        assert_eq!(graph["update/send"], BTreeSet::from(["a".to_string()]));
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
    }
}
