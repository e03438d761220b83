//! What a restore puts back and what it never touches: a change made after the agent's
//! write, links the turn planted, folders, one kind of entry replaced by another, and
//! names that are not UTF-8.

use super::*;

#[test]
fn a_change_made_after_the_agents_write_is_kept_and_said() {
    let p = project();
    repository(&p);
    let root = &p.root;
    let store = Store::open(&p.data, root, Settings::default()).unwrap();
    let start = store.take(None).unwrap();
    write(root, "src/lib.rs", "agent\n");
    write(root, "src/new.rs", "agent\n");
    let after = store.take(Some(&start.commit)).unwrap();
    // The user edits one of the agent's files afterwards.
    write(root, "src/lib.rs", "agent, then the user\n");
    let dry = store
        .restore(
            &steps(&after.changed, &start.commit, &after.commit),
            false,
            true,
            None,
        )
        .unwrap();
    assert_eq!(
        outcomes(&dry),
        [
            ("src/lib.rs".to_string(), "kept: changed".to_string()),
            ("src/new.rs".to_string(), "removed".to_string())
        ]
    );
    // A dry run wrote nothing.
    assert!(root.join("src/new.rs").exists());
    let report = store
        .restore(
            &steps(&after.changed, &start.commit, &after.commit),
            false,
            false,
            None,
        )
        .unwrap();
    assert_eq!(outcomes(&report), outcomes(&dry));
    assert_eq!(
        std::fs::read_to_string(root.join("src/lib.rs")).unwrap(),
        "agent, then the user\n"
    );
    assert!(!root.join("src/new.rs").exists());
    // Undo: the removed file comes back, the kept one is untouched.
    let undo = store
        .restore(
            &steps(&report.changed(), &report.before, &report.after),
            false,
            false,
            None,
        )
        .unwrap();
    assert_eq!(
        outcomes(&undo),
        [("src/new.rs".to_string(), "restored".to_string())]
    );
    assert_eq!(
        std::fs::read_to_string(root.join("src/new.rs")).unwrap(),
        "agent\n"
    );
    // Forced, the user's change goes too.
    let forced = store
        .restore(
            &steps(&[RelPath::from("src/lib.rs")], &start.commit, &after.commit),
            true,
            false,
            None,
        )
        .unwrap();
    assert_eq!(
        outcomes(&forced),
        [("src/lib.rs".to_string(), "restored".to_string())]
    );
    assert_eq!(
        std::fs::read_to_string(root.join("src/lib.rs")).unwrap(),
        "fn a() {}\n"
    );
}

/// A hostile turn swaps a folder for a link to somewhere outside the project: the restore
/// never writes through it; it removes the turn's link and makes the folder again.
#[test]
fn a_restore_never_writes_through_a_link_the_turn_planted() {
    let p = project();
    repository(&p);
    let root = &p.root;
    let outside = p.data.parent().unwrap().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let store = Store::open(&p.data, root, Settings::default()).unwrap();
    let start = store.take(None).unwrap();
    let before = without_git(files(root));
    std::fs::remove_dir_all(root.join("src")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("src")).unwrap();
    let after = store.take(Some(&start.commit)).unwrap();
    let report = store
        .restore(
            &steps(&after.changed, &start.commit, &after.commit),
            false,
            false,
            None,
        )
        .unwrap();
    assert!(
        std::fs::read_dir(&outside).unwrap().next().is_none(),
        "nothing written outside"
    );
    assert_eq!(
        outcomes(&report),
        [
            ("src".to_string(), "removed".to_string()),
            ("src/lib.rs".to_string(), "restored".to_string()),
            ("src/util.rs".to_string(), "restored".to_string())
        ]
    );
    assert!(!root.join("src").is_symlink());
    assert_eq!(without_git(files(root)), before);
}

/// A folder's birth time comes from the kernel's coarse clock, up to a tick behind the
/// clock a turn's time is read from: a folder the turn made at once still counts as the
/// turn's (tmux_e2e's rewind test once found `extra/` left behind), and one made well
/// before the turn, left empty, stays.
#[test]
fn a_folder_made_at_once_by_the_turn_goes_and_an_older_empty_one_stays() {
    let p = project();
    repository(&p);
    let root = &p.root;
    std::fs::create_dir_all(root.join("older")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(120));
    let store = Store::open(&p.data, root, Settings::default()).unwrap();
    let start = store.take(None).unwrap();
    let turn = std::time::SystemTime::now();
    write(root, "made/new.rs", "// new\n");
    write(root, "older/new.rs", "// new\n");
    let after = store.take(Some(&start.commit)).unwrap();
    // As the coarse clock can make it look: the folder born a little before the turn.
    let turn_time = turn + std::time::Duration::from_millis(20);
    store
        .restore(
            &steps(&after.changed, &start.commit, &after.commit),
            false,
            false,
            Some(turn_time),
        )
        .unwrap();
    assert!(!root.join("made").exists());
    assert!(!root.join("older/new.rs").exists());
    assert!(root.join("older").is_dir());
}

/// Every entry under `dir` by its name's bytes: a file's content, a link's target, a
/// folder as `/` (so a folder left behind counts).
fn entries_of(dir: &Path) -> BTreeMap<Vec<u8>, Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(dir)
                .unwrap()
                .as_os_str()
                .as_bytes()
                .to_vec();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(rel, [b"-> ", target.as_os_str().as_bytes()].concat());
            } else if meta.is_dir() {
                out.insert(rel, b"/".to_vec());
                stack.push(path);
            } else {
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    File,
    Folder,
    Link,
}

/// Make `name` in `root` as `kind` (a folder with files two deep).
fn make(root: &Path, name: &str, kind: Kind) {
    let full = root.join(name);
    match kind {
        Kind::File => std::fs::write(&full, "a file\n").unwrap(),
        Kind::Folder => {
            std::fs::create_dir_all(full.join("deep")).unwrap();
            std::fs::write(full.join("inner.txt"), "inner\n").unwrap();
            std::fs::write(full.join("deep/more.txt"), "more\n").unwrap();
        }
        Kind::Link => std::os::unix::fs::symlink("elsewhere/target", &full).unwrap(),
    }
}

fn unmake(root: &Path, name: &str) {
    let full = root.join(name);
    if std::fs::symlink_metadata(&full).unwrap().is_dir() {
        std::fs::remove_dir_all(full).unwrap();
    } else {
        std::fs::remove_file(full).unwrap();
    }
}

/// The undo of `report`: what it changed, back to the checkpoint before it.
fn undo_of(report: &RestoreReport) -> Vec<PathStep> {
    steps(&report.changed(), &report.before, &report.after)
}

#[test]
fn a_file_folder_or_link_replaced_by_another_kind_is_taken_back_and_undone() {
    use Kind::*;
    for (was, became) in [
        (File, Folder),
        (Folder, File),
        (File, Link),
        (Link, File),
        (Folder, Link),
        (Link, Folder),
    ] {
        let p = project();
        let root = &p.root;
        write(root, "bystander.txt", "left alone\n");
        make(root, "x", was);
        let store = Store::open(&p.data, root, Settings::default()).unwrap();
        let start = store.take(None).unwrap();
        let before = entries_of(root);
        unmake(root, "x");
        make(root, "x", became);
        let after = store.take(Some(&start.commit)).unwrap();
        let turned = entries_of(root);
        let steps = steps(&after.changed, &start.commit, &after.commit);
        let dry = store.restore(&steps, false, true, None).unwrap();
        assert_eq!(entries_of(root), turned, "{was:?} -> {became:?}: dry run");
        let report = store.restore(&steps, false, false, None).unwrap();
        assert_eq!(
            outcomes(&dry),
            outcomes(&report),
            "{was:?} -> {became:?}: the dry run says what the rewind does"
        );
        assert!(
            report
                .paths
                .iter()
                .all(|p| matches!(p.outcome, Outcome::Restored | Outcome::Removed)),
            "{was:?} -> {became:?}: {:?}",
            outcomes(&report)
        );
        assert_eq!(entries_of(root), before, "{was:?} -> {became:?}");
        let undone = store
            .restore(&undo_of(&report), false, false, None)
            .unwrap();
        assert_eq!(
            entries_of(root),
            turned,
            "{was:?} -> {became:?}: undo {:?}",
            outcomes(&undone)
        );
    }
}

#[test]
fn what_else_stands_in_a_folders_place_is_kept_unless_forced_and_never_if_unrecorded() {
    let p = project();
    let root = &p.root;
    write(root, "x", "the file\n");
    let store = Store::open(&p.data, root, Settings::default()).unwrap();
    let start = store.take(None).unwrap();
    let before = entries_of(root);
    // The turn makes a folder of x; then the user adds a file of their own in it.
    std::fs::remove_file(root.join("x")).unwrap();
    write(root, "x/turn.txt", "the turn's\n");
    let after = store.take(Some(&start.commit)).unwrap();
    write(root, "x/mine.txt", "the user's\n");
    let steps = steps(&after.changed, &start.commit, &after.commit);
    let report = store.restore(&steps, false, false, None).unwrap();
    assert_eq!(
        outcomes(&report),
        [
            ("x".to_string(), "kept: a".to_string()),
            ("x/turn.txt".to_string(), "removed".to_string())
        ]
    );
    let kept = report.kept().next().unwrap();
    assert!(
        matches!(&kept.outcome, Outcome::Kept { why } if why.starts_with("a folder is there now") && why.contains("x/mine.txt") && why.contains("--force")),
        "{kept:?}"
    );
    assert_eq!(
        std::fs::read(root.join("x/mine.txt")).unwrap(),
        b"the user's\n"
    );
    // Forced: the user's file goes too, said, and an undo brings it back.
    let forced = store.restore(&steps, true, false, None).unwrap();
    assert_eq!(
        outcomes(&forced),
        [
            ("x".to_string(), "restored".to_string()),
            ("x/mine.txt".to_string(), "removed".to_string()),
            ("x/turn.txt".to_string(), "unchanged".to_string())
        ]
    );
    assert_eq!(entries_of(root), before);
    store
        .restore(&undo_of(&forced), false, false, None)
        .unwrap();
    assert_eq!(
        std::fs::read(root.join("x/mine.txt")).unwrap(),
        b"the user's\n"
    );

    // A file the record does not hold (in a heavy folder, never recorded) is never
    // removed, forced or not: nothing could bring it back.
    write(root, "x/node_modules/dep.js", "unrecorded\n");
    std::fs::remove_file(root.join("x/mine.txt")).unwrap();
    let forced = store.restore(&steps, true, false, None).unwrap();
    let kept = forced.kept().next().unwrap();
    assert!(
        matches!(&kept.outcome, Outcome::Kept { why } if why.contains("x/node_modules/dep.js") && why.contains("not in the record")),
        "{:?}",
        outcomes(&forced)
    );
    assert!(root.join("x/node_modules/dep.js").exists());
}

#[test]
fn names_that_are_not_utf8_or_hold_newlines_quotes_and_dashes_are_recorded_and_restored() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let p = project();
    let root = &p.root;
    let at = |name: &[u8]| root.join(OsStr::from_bytes(name));
    let names: [&[u8]; 8] = [
        b"caf\xe9.txt",
        b"new\nline",
        b"tab\there",
        b"say \"hi\"",
        b"-rf",
        b"back\\slash",
        b"trailing ",
        b"d\xff/inner",
    ];
    std::fs::create_dir_all(at(b"d\xff")).unwrap();
    for name in &names[..4] {
        std::fs::write(at(name), b"old").unwrap();
    }
    let store = Store::open(&p.data, root, Settings::default()).unwrap();
    let start = store.take(None).unwrap();
    assert!(start.skipped.is_empty(), "{:?}", start.skipped);
    let before = entries_of(root);
    // Changed, removed, made.
    std::fs::write(at(names[0]), b"new").unwrap();
    std::fs::remove_file(at(names[1])).unwrap();
    std::fs::write(at(names[2]), b"new").unwrap();
    std::fs::remove_file(at(names[3])).unwrap();
    for name in &names[4..] {
        std::fs::write(at(name), b"made").unwrap();
    }
    let after = store.take(Some(&start.commit)).unwrap();
    let mut changed: Vec<&[u8]> = after.changed.iter().map(RelPath::as_bytes).collect();
    changed.sort();
    let mut all = names.to_vec();
    all.sort();
    assert_eq!(changed, all);
    let report = store
        .restore(
            &steps(&after.changed, &start.commit, &after.commit),
            false,
            false,
            None,
        )
        .unwrap();
    assert_eq!(entries_of(root), before, "{:?}", outcomes(&report));
    let shown: Vec<String> = report.paths.iter().map(|p| p.path.to_string()).collect();
    assert!(shown.contains(&r#""caf\xe9.txt""#.to_string()), "{shown:?}");
    assert!(shown.contains(&r#""new\nline""#.to_string()), "{shown:?}");
    assert!(shown.contains(&"-rf".to_string()), "{shown:?}");
}

/// A file someone else put where a folder of the checkpoint's must be is kept and named,
/// unless forced; forced, it goes (the restore's own checkpoint holds it).
#[test]
fn a_file_where_a_folder_must_be_is_kept_unless_forced() {
    let p = project();
    let root = &p.root;
    write(root, "d/f.txt", "in the folder\n");
    let store = Store::open(&p.data, root, Settings::default()).unwrap();
    let start = store.take(None).unwrap();
    std::fs::remove_dir_all(root.join("d")).unwrap();
    let after = store.take(Some(&start.commit)).unwrap();
    write(root, "d", "the user's file\n");
    let steps = steps(&after.changed, &start.commit, &after.commit);
    let report = store.restore(&steps, false, false, None).unwrap();
    let kept = report.kept().next().unwrap();
    assert!(
        matches!(&kept.outcome, Outcome::Kept { why } if why.starts_with("a file is there now where its folder must be (d)")),
        "{kept:?}"
    );
    assert_eq!(std::fs::read(root.join("d")).unwrap(), b"the user's file\n");
    let forced = store.restore(&steps, true, false, None).unwrap();
    assert_eq!(
        outcomes(&forced),
        [
            ("d".to_string(), "removed".to_string()),
            ("d/f.txt".to_string(), "restored".to_string())
        ]
    );
    assert_eq!(
        std::fs::read(root.join("d/f.txt")).unwrap(),
        b"in the folder\n"
    );
}

/// A forced restore that must remove a file now reached through a link (someone replaced
/// its folder with one) never removes through it: the path fails, and says why.
#[test]
fn a_file_reached_through_a_link_is_never_removed_and_the_failure_is_said() {
    let p = project();
    let root = &p.root;
    let outside = p.data.parent().unwrap().join("outside");
    write(&outside, "new.txt", "outside the project\n");
    write(root, "d/old.txt", "old\n");
    let store = Store::open(&p.data, root, Settings::default()).unwrap();
    let start = store.take(None).unwrap();
    write(root, "d/new.txt", "the turn's\n");
    let after = store.take(Some(&start.commit)).unwrap();
    assert_eq!(after.changed, ["d/new.txt"]);
    std::fs::remove_dir_all(root.join("d")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("d")).unwrap();
    let steps = steps(&after.changed, &start.commit, &after.commit);
    let report = store.restore(&steps, true, false, None).unwrap();
    let [PathReport {
        path,
        outcome: Outcome::Failed { why },
    }] = report.paths.as_slice()
    else {
        panic!("{:?}", outcomes(&report));
    };
    assert_eq!(*path, "d/new.txt");
    assert!(
        why.starts_with("a symbolic link appeared on the way"),
        "{why}"
    );
    assert_eq!(
        std::fs::read(outside.join("new.txt")).unwrap(),
        b"outside the project\n"
    );
}
