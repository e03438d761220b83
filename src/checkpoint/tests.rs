//! The record against real git on real folders: what it records, what it leaves out, what
//! a restore puts back and what it never touches.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::plan::PathStep;
use super::*;

struct Project {
    _dir: tempfile::TempDir,
    data: PathBuf,
    root: PathBuf,
}

fn project() -> Project {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let data = base.join("data");
    let root = base.join("project");
    std::fs::create_dir_all(&root).unwrap();
    Project {
        _dir: dir,
        data,
        root,
    }
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

fn write(root: &Path, path: &str, text: &str) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, text).unwrap();
}

/// Every file under `dir` (links as their targets), by path.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let rel = path
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .to_string();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(rel, format!("-> {}", target.display()).into_bytes());
            } else {
                let mode = entry.metadata().unwrap().permissions().mode() & 0o111;
                let mut bytes = std::fs::read(&path).unwrap();
                bytes.extend_from_slice(format!(" [x{mode:o}]").as_bytes());
                out.insert(rel, bytes);
            }
        }
    }
    out
}

fn without_git(mut files: BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    files.retain(|k, _| !k.starts_with(".git/") && k != ".git");
    files
}

fn steps(paths: &[RelPath], target: &str, expected: &str) -> Vec<PathStep> {
    paths
        .iter()
        .map(|p| PathStep {
            path: p.clone(),
            target: target.to_string(),
            expected: expected.to_string(),
        })
        .collect()
}

fn outcomes(report: &RestoreReport) -> Vec<(String, String)> {
    report
        .paths
        .iter()
        .map(|p| {
            let o = match &p.outcome {
                Outcome::Restored => "restored".to_string(),
                Outcome::Removed => "removed".to_string(),
                Outcome::Unchanged => "unchanged".to_string(),
                Outcome::Kept { why } => format!("kept: {}", why.split(' ').next().unwrap()),
                Outcome::Failed { why } => format!("failed: {why}"),
            };
            (p.path.to_string(), o)
        })
        .collect()
}

/// A repository with tracked, untracked and ignored files, an executable and a link.
fn repository(p: &Project) {
    let root = &p.root;
    git(root, &["init", "-q"]);
    write(root, ".gitignore", "*.log\nbuild/\n");
    write(root, "src/lib.rs", "fn a() {}\n");
    write(root, "src/util.rs", "fn u() {}\n");
    write(root, "crlf.txt", "one\r\ntwo\r\n");
    write(
        root,
        ".gitattributes",
        "* text=auto\n*.txt filter=evil ident\n",
    );
    write(root, "run.sh", "#!/bin/sh\necho hi\n");
    std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("src/lib.rs", root.join("link")).unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "first"]);
    write(root, "notes.md", "untracked but not ignored\n");
    write(root, "debug.log", "ignored\n");
    write(root, "build/out.bin", "ignored output\n");
}

#[test]
fn a_turn_of_edits_by_any_means_is_taken_back_byte_for_byte() {
    let p = project();
    repository(&p);
    let root = &p.root;
    let git_before = files(&root.join(".git"));
    let store = Store::open(&p.data, root, Settings::default()).unwrap();
    let start = store.take(None).unwrap();
    let before = files(root);
    // The turn: an in-place edit, an unlink, a rename, a generated folder, a new file in
    // an ignored folder, a mode change, a link retargeted, CRLF rewritten.
    write(root, "src/lib.rs", "fn a() { changed }\n");
    std::fs::remove_file(root.join("src/util.rs")).unwrap();
    std::fs::rename(root.join("notes.md"), root.join("docs/notes.md")).unwrap_or_else(|_| {
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::rename(root.join("notes.md"), root.join("docs/notes.md")).unwrap();
    });
    for i in 0..5 {
        write(root, &format!("gen/mod{i}/file.rs"), &format!("// {i}\n"));
    }
    write(root, "build/new.bin", "ignored, untouched\n");
    write(root, "debug.log", "ignored and changed\n");
    std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::remove_file(root.join("link")).unwrap();
    std::os::unix::fs::symlink("src/other.rs", root.join("link")).unwrap();
    write(root, "crlf.txt", "one\r\nTWO\r\n");
    let after = store.take(Some(&start.commit)).unwrap();
    assert_eq!(
        after.changed,
        [
            "crlf.txt",
            "docs/notes.md",
            "gen/mod0/file.rs",
            "gen/mod1/file.rs",
            "gen/mod2/file.rs",
            "gen/mod3/file.rs",
            "gen/mod4/file.rs",
            "link",
            "notes.md",
            "run.sh",
            "src/lib.rs",
            "src/util.rs",
        ]
    );
    let ignored_now = (
        std::fs::read(root.join("debug.log")).unwrap(),
        std::fs::read(root.join("build/new.bin")).unwrap(),
    );
    let report = store
        .restore(
            &steps(&after.changed, &start.commit, &after.commit),
            false,
            false,
            Some(std::time::SystemTime::UNIX_EPOCH),
        )
        .unwrap();
    assert!(report.kept().next().is_none(), "{:?}", outcomes(&report));
    let mut now = files(root);
    // Ignored files are not the record's: left as they are.
    assert_eq!(
        (
            std::fs::read(root.join("debug.log")).unwrap(),
            std::fs::read(root.join("build/new.bin")).unwrap()
        ),
        ignored_now
    );
    now.remove("build/new.bin");
    now.insert("debug.log".into(), before["debug.log"].clone());
    assert_eq!(without_git(now), without_git(before));
    // The folders the turn made are gone with their files.
    assert!(!root.join("gen").exists());
    assert!(!root.join("docs").exists());
    // The user's repository is byte-identical: refs, index, config, hooks, no lock.
    assert_eq!(files(&root.join(".git")), git_before);
}

#[test]
fn an_unchanged_tree_makes_no_new_checkpoint_and_a_change_lists_only_itself() {
    let p = project();
    repository(&p);
    let store = Store::open(&p.data, &p.root, Settings::default()).unwrap();
    let first = store.take(None).unwrap();
    let again = store.take(Some(&first.commit)).unwrap();
    assert_eq!(again.commit, first.commit);
    assert!(again.changed.is_empty());
    write(&p.root, "src/lib.rs", "x\n");
    let third = store.take(Some(&first.commit)).unwrap();
    assert_ne!(third.commit, first.commit);
    assert_eq!(third.changed, ["src/lib.rs"]);
    // Changed back: the same tree as the first, a checkpoint all the same.
    write(&p.root, "src/lib.rs", "fn a() {}\n");
    let fourth = store.take(Some(&third.commit)).unwrap();
    assert_eq!(fourth.changed, ["src/lib.rs"]);
}

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

#[test]
fn nested_repositories_and_submodules_are_left_alone() {
    let p = project();
    repository(&p);
    let root = &p.root;
    // A submodule: its own repository behind a `.git` file.
    let upstream = p.data.parent().unwrap().join("upstream");
    std::fs::create_dir_all(&upstream).unwrap();
    git(&upstream, &["init", "-q"]);
    write(&upstream, "lib.c", "int x;\n");
    git(&upstream, &["add", "-A"]);
    git(&upstream, &["commit", "-qm", "u"]);
    git(
        root,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            upstream.to_str().unwrap(),
            "sub",
        ],
    );
    git(root, &["commit", "-qm", "sub"]);
    // A nested repository with no commit at all.
    std::fs::create_dir_all(root.join("nested")).unwrap();
    git(&root.join("nested"), &["init", "-q"]);
    write(root, "nested/file.txt", "nested\n");
    let nested_git = files(&root.join("nested/.git"));
    let store = Store::open(&p.data, root, Settings::default()).unwrap();
    let start = store.take(None).unwrap();
    let mut skipped: Vec<String> = start.skipped.iter().map(|s| s.to_string()).collect();
    skipped.sort();
    assert_eq!(
        skipped,
        [
            "nested/ (a repository of its own)",
            "sub/ (a repository of its own)"
        ]
    );
    write(
        root,
        "nested/file.txt",
        "changed inside the nested repository\n",
    );
    write(root, "sub/lib.c", "changed inside the submodule\n");
    let after = store.take(Some(&start.commit)).unwrap();
    assert!(after.changed.is_empty(), "{:?}", after.changed);
    assert!(after.skipped.is_empty(), "told once");
    assert_eq!(files(&root.join("nested/.git")), nested_git);
}

#[test]
fn outside_a_repository_the_folder_is_recorded_less_heavy_folders() {
    let p = project();
    let root = &p.root;
    write(root, "main.py", "print(1)\n");
    write(root, "node_modules/x/index.js", "heavy\n");
    write(root, "deep/target/debug/out", "heavy\n");
    write(root, ".gitignore", "secret.txt\n");
    write(root, "secret.txt", "ignored by the stray .gitignore too\n");
    let store = Store::open(&p.data, root, Settings::default()).unwrap();
    assert!(!store.in_repository());
    let start = store.take(None).unwrap();
    write(root, "main.py", "print(2)\n");
    write(root, "node_modules/x/index.js", "changed\n");
    write(root, "deep/target/debug/out", "changed\n");
    let after = store.take(Some(&start.commit)).unwrap();
    assert_eq!(after.changed, ["main.py"]);
    store
        .restore(
            &steps(&after.changed, &start.commit, &after.commit),
            false,
            false,
            None,
        )
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("main.py")).unwrap(),
        "print(1)\n"
    );
}

#[test]
fn big_files_and_big_untracked_folders_are_skipped_and_listed() {
    let p = project();
    repository(&p);
    let root = &p.root;
    let settings = Settings {
        max_file_bytes: 1000,
        max_folder_files: 20,
        ..Settings::default()
    };
    let store = Store::open(&p.data, root, settings).unwrap();
    let start = store.take(None).unwrap();
    write(root, "big.bin", &"x".repeat(1001));
    write(root, "small.bin", &"x".repeat(1000));
    for i in 0..21 {
        write(root, &format!("dataset/part{}/f{i}", i % 3), "d");
    }
    for i in 0..20 {
        write(root, &format!("fixtures/f{i}"), "d");
    }
    // A tracked file that grows over the cap leaves the record.
    write(root, "src/util.rs", &"y".repeat(2000));
    let after = store.take(Some(&start.commit)).unwrap();
    let skipped: Vec<String> = after.skipped.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        skipped,
        [
            "src/util.rs (0.0 MiB, over the size cap)",
            "dataset/ (21 new files, over the folder cap)",
            "big.bin (0.0 MiB, over the size cap)",
        ]
    );
    assert!(after.changed.contains(&RelPath::from("small.bin")));
    assert!(after.changed.contains(&RelPath::from("fixtures/f0")));
    assert!(
        after.changed.contains(&RelPath::from("src/util.rs")),
        "it left the record"
    );
    assert!(!after
        .changed
        .iter()
        .any(|c| c.as_bytes().starts_with(b"dataset") || *c == "big.bin"));
    // Told once: the next checkpoint is quiet, and the skipped stay out.
    write(root, "big.bin", &"z".repeat(1001));
    let again = store.take(Some(&after.commit)).unwrap();
    assert!(
        again.skipped.is_empty() && again.changed.is_empty(),
        "{again:?}"
    );
    // A restore does not write over a file the record no longer holds.
    let report = store
        .restore(
            &steps(
                &[RelPath::from("src/util.rs")],
                &start.commit,
                &start.commit,
            ),
            false,
            true,
            None,
        )
        .unwrap();
    assert_eq!(
        outcomes(&report),
        [("src/util.rs".to_string(), "kept: not".to_string())]
    );
}

#[test]
fn a_killed_checkpoint_leaves_a_record_the_next_one_can_use() {
    let p = project();
    repository(&p);
    let store = Store::open(&p.data, &p.root, Settings::default()).unwrap();
    let first = store.take(None).unwrap();
    // What a git killed mid-write leaves behind.
    let git_dir = store.record().join("git");
    std::fs::write(git_dir.join("index.lock"), "").unwrap();
    std::fs::write(git_dir.join("HEAD.lock"), "").unwrap();
    write(&p.root, "src/lib.rs", "after the crash\n");
    let second = store.take(Some(&first.commit)).unwrap();
    assert_eq!(second.changed, ["src/lib.rs"]);
    assert!(!git_dir.join("index.lock").exists());
}

#[test]
fn a_project_below_the_top_of_its_repository_records_only_itself() {
    let p = project();
    repository(&p);
    let sub = p.root.join("src");
    let store = Store::open(&p.data, &sub, Settings::default()).unwrap();
    let start = store.take(None).unwrap();
    write(&p.root, "notes.md", "outside the project\n");
    write(&sub, "lib.rs", "inside\n");
    let after = store.take(Some(&start.commit)).unwrap();
    assert_eq!(after.changed, ["lib.rs"]);
    store
        .restore(
            &steps(&after.changed, &start.commit, &after.commit),
            false,
            false,
            None,
        )
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(sub.join("lib.rs")).unwrap(),
        "fn a() {}\n"
    );
    assert_eq!(
        std::fs::read_to_string(p.root.join("notes.md")).unwrap(),
        "outside the project\n"
    );
}

#[test]
fn the_quota_prunes_the_oldest_checkpoints_and_keeps_the_latest() {
    let p = project();
    repository(&p);
    let settings = Settings {
        quota_bytes: 1,
        ..Settings::default()
    };
    let store = Store::open(&p.data, &p.root, settings).unwrap();
    let mut commits = Vec::new();
    for i in 0..6 {
        write(
            &p.root,
            "src/lib.rs",
            &format!("version {i} {}\n", "pad ".repeat(i * 100)),
        );
        commits.push(store.take(None).unwrap().commit);
    }
    let report = store.maintain().unwrap();
    assert!(report.pruned >= 5, "{report:?}");
    let oldest = steps(&[RelPath::from("src/lib.rs")], &commits[0], &commits[5]);
    assert!(matches!(
        store.restore(&oldest, false, true, None),
        Err(CheckpointError::Pruned(_))
    ));
    let latest = steps(&[RelPath::from("src/lib.rs")], &commits[5], &commits[5]);
    let report = store.restore(&latest, false, true, None).unwrap();
    assert_eq!(
        outcomes(&report),
        [("src/lib.rs".to_string(), "unchanged".to_string())]
    );
}

#[test]
fn a_hostile_projects_git_config_never_runs() {
    let p = project();
    repository(&p);
    let root = &p.root;
    let witness = p.data.parent().unwrap().join("ran");
    let hook = format!("!touch {}", witness.display());
    for (key, value) in [
        ("core.fsmonitor", witness.to_str().unwrap()),
        ("filter.evil.clean", hook.as_str()),
        ("filter.evil.smudge", hook.as_str()),
        ("core.pager", hook.as_str()),
    ] {
        git(root, &["config", key, value]);
    }
    write(
        root,
        ".git/hooks/post-index-change",
        &format!("#!/bin/sh\ntouch {}\n", witness.display()),
    );
    std::fs::set_permissions(
        root.join(".git/hooks/post-index-change"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let store = Store::open(&p.data, root, Settings::default()).unwrap();
    let start = store.take(None).unwrap();
    write(root, "crlf.txt", "changed\r\n");
    let after = store.take(Some(&start.commit)).unwrap();
    store
        .restore(
            &steps(&after.changed, &start.commit, &after.commit),
            false,
            false,
            None,
        )
        .unwrap();
    assert!(!witness.exists(), "something of the project's ran");
    assert_eq!(
        std::fs::read(root.join("crlf.txt")).unwrap(),
        b"one\r\ntwo\r\n"
    );
}

#[test]
fn the_root_folder_is_not_a_project() {
    let p = project();
    assert!(matches!(
        Store::open(&p.data, Path::new("/"), Settings::default()),
        Err(CheckpointError::NotAProject(_))
    ));
}

/// Many changes at once go in as one pack: the same tree `git add` makes, modes and links
/// included, and a restore from it byte for byte.
#[test]
fn a_bulk_checkpoint_records_what_git_add_records() {
    let p = project();
    repository(&p);
    let root = &p.root;
    let mut bulk = Store::open(&p.data, root, Settings::default()).unwrap();
    bulk.bulk_from = 0;
    let first = bulk.take(None).unwrap();
    // The bulk path itself works (a failure would fall back to `git add` unseen).
    bulk.bulk_add(&[b"src/lib.rs".to_vec(), b"no/such/file".to_vec()])
        .unwrap();
    let other = p.data.parent().unwrap().join("other-data");
    let plain = Store::open(&other, root, Settings::default()).unwrap();
    let reference = plain.take(None).unwrap();
    let tree = |s: &Store, c: &str| {
        String::from_utf8(
            s.git
                .run(&["rev-parse", &format!("{c}^{{tree}}")], None)
                .unwrap(),
        )
        .unwrap()
    };
    assert_eq!(tree(&bulk, &first.commit), tree(&plain, &reference.commit));
    // A second batch: edits, a removal, a new executable, a link changed.
    write(root, "src/lib.rs", "changed\n");
    std::fs::remove_file(root.join("src/util.rs")).unwrap();
    write(root, "tool.sh", "#!/bin/sh\n");
    std::fs::set_permissions(root.join("tool.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::remove_file(root.join("link")).unwrap();
    std::os::unix::fs::symlink("elsewhere", root.join("link")).unwrap();
    let after = bulk.take(Some(&first.commit)).unwrap();
    let reference_after = plain.take(Some(&reference.commit)).unwrap();
    assert_eq!(after.changed, reference_after.changed);
    assert_eq!(
        tree(&bulk, &after.commit),
        tree(&plain, &reference_after.commit)
    );
    // The stat data is in: an unchanged tree is one status and no new checkpoint.
    assert_eq!(bulk.take(Some(&after.commit)).unwrap().commit, after.commit);
    bulk.restore(
        &steps(&after.changed, &first.commit, &after.commit),
        false,
        false,
        None,
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("src/util.rs")).unwrap(),
        "fn u() {}\n"
    );
    assert_eq!(
        std::fs::read_link(root.join("link")).unwrap(),
        Path::new("src/lib.rs")
    );
    assert!(!root.join("tool.sh").exists());
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

/// A crafted `.git` file whose `gitdir:` folder holds a named pipe as `commondir` and as
/// `index` (nobody ever writes to them), and one whose `commondir` is a link to
/// `/dev/zero`: the checkpoint is taken, never blocked on a pipe nor reading a device.
#[test]
fn a_crafted_git_files_pipes_and_devices_are_never_read() {
    let mkfifo = |path: &Path| {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    };
    for device in [false, true] {
        let p = project();
        let root = &p.root;
        write(root, "src/lib.rs", "fn a() {}\n");
        write(root, ".git", "gitdir: crafted\n");
        let crafted = root.join("crafted");
        std::fs::create_dir_all(&crafted).unwrap();
        if device {
            std::os::unix::fs::symlink("/dev/zero", crafted.join("commondir")).unwrap();
            std::os::unix::fs::symlink("/dev/zero", crafted.join("index")).unwrap();
        } else {
            mkfifo(&crafted.join("commondir"));
            mkfifo(&crafted.join("index"));
        }
        let repo = super::user_repo::UserRepo::find(root).expect("the .git file is read");
        assert_eq!(
            repo.common_dir, crafted,
            "a commondir that is no file is ignored"
        );
        assert!(
            repo.tracked().is_none(),
            "an index that is no file is not read"
        );
        let store = Store::open(&p.data, root, Settings::default()).unwrap();
        let taken = store.take(None).unwrap();
        assert!(!taken.commit.is_empty());
    }
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
        matches!(&kept.outcome, Outcome::Kept { why } if why.contains("x/mine.txt") && why.contains("--force")),
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
