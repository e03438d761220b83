//! What a checkpoint records and what it leaves out: any means of editing, nested
//! repositories, heavy and big files, the quota, a hostile project's git config, crafted
//! `.git` files.

use super::*;

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
    // A commit holds the time to the second: a new commit of the same tree a second
    // later would have another id.
    std::thread::sleep(std::time::Duration::from_millis(1100));
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
    // A repository that appears later is left out too; with nothing else new, the tree is
    // the last one and so is the checkpoint. (A second on, a new commit of the same tree
    // would have another id: commit times are in seconds.)
    std::thread::sleep(std::time::Duration::from_millis(1100));
    std::fs::create_dir_all(root.join("later")).unwrap();
    git(&root.join("later"), &["init", "-q"]);
    write(root, "later/file.txt", "later\n");
    let later = store.take(Some(&after.commit)).unwrap();
    assert_eq!(later.skipped.len(), 1, "{:?}", later.skipped);
    assert_eq!(later.skipped[0].path, "later/");
    assert_eq!(later.commit, after.commit);
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
    assert!(store.user.is_none());
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
    // A tracked file that grows over the cap leaves the record; one that grows to the cap
    // stays.
    write(root, "src/util.rs", &"y".repeat(2000));
    write(root, "src/lib.rs", &"y".repeat(1000));
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
    assert!(after.changed.contains(&RelPath::from("src/lib.rs")));
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

/// The diff between two checkpoints: each changed path from the one version to the
/// other (made or removed from or to `/dev/null`), a path the same in both left out.
#[test]
fn a_diff_between_checkpoints_shows_each_changed_path_and_leaves_the_same_out() {
    let p = project();
    repository(&p);
    let root = &p.root;
    let store = Store::open(&p.data, root, Settings::default()).unwrap();
    let start = store.take(None).unwrap();
    write(root, "src/lib.rs", "fn a() { changed }\n");
    std::fs::remove_file(root.join("src/util.rs")).unwrap();
    write(root, "new.txt", "one\ntwo\n");
    let after = store.take(Some(&start.commit)).unwrap();
    let paths = ["src/lib.rs", "run.sh", "src/util.rs", "new.txt"].map(RelPath::from);
    let diffs = store
        .diff(&steps(&paths, &start.commit, &after.commit))
        .unwrap();
    let shown: Vec<(String, &str, usize, usize)> = diffs
        .iter()
        .map(|d| (d.path.to_string(), d.text.as_str(), d.added, d.removed))
        .collect();
    assert_eq!(
        shown,
        [
            (
                "src/lib.rs".to_string(),
                "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1 @@\n-fn a() {}\n+fn a() { changed }\n",
                1,
                1
            ),
            (
                "src/util.rs".to_string(),
                "--- a/src/util.rs\n+++ /dev/null\n@@ -1 +0,0 @@\n-fn u() {}\n",
                0,
                1
            ),
            (
                "new.txt".to_string(),
                "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n",
                2,
                0
            ),
        ]
    );
    // Backwards, the same changes undone.
    let back = store
        .diff(&steps(&paths[..1], &after.commit, &start.commit))
        .unwrap();
    assert_eq!((back[0].added, back[0].removed), (1, 1));
    assert!(back[0].text.ends_with("-fn a() { changed }\n+fn a() {}\n"));
}

/// A checkpoint about to record more than MANY_FILES new or changed files says so first,
/// with how many (tests lower the number).
#[test]
fn a_checkpoint_of_many_files_is_said_before_it_records_them() {
    let p = project();
    let root = &p.root;
    for i in 0..3 {
        write(root, &format!("f{i}"), "x");
    }
    let mut store = Store::open(&p.data, root, Settings::default()).unwrap();
    store.many_from = 3;
    let mut told = Vec::new();
    let first = store.take_noting(None, &mut |n| told.push(n)).unwrap();
    assert!(told.is_empty(), "{told:?}");
    for i in 0..4 {
        write(root, &format!("g{i}"), "y");
    }
    store
        .take_noting(Some(&first.commit), &mut |n| told.push(n))
        .unwrap();
    assert_eq!(told, [4]);
}

/// Outside a repository the folder cap counts each top-level folder's new files; files at
/// the top are no folder's and are recorded however many they are.
#[test]
fn outside_a_repository_the_folder_cap_is_per_top_level_folder() {
    let p = project();
    let root = &p.root;
    for i in 0..3 {
        write(root, &format!("top{i}.txt"), "t");
        write(root, &format!("data/deep/f{i}"), "d");
        write(root, &format!("few/f{}", i % 2), "f");
    }
    let settings = Settings {
        max_folder_files: 2,
        ..Settings::default()
    };
    let store = Store::open(&p.data, root, settings).unwrap();
    let taken = store.take(None).unwrap();
    let skipped: Vec<String> = taken.skipped.iter().map(|s| s.to_string()).collect();
    assert_eq!(skipped, ["data/ (3 new files, over the folder cap)"]);
    let recorded = store.git.run(&["ls-files", "-z"], None).unwrap();
    let mut recorded: Vec<&[u8]> = recorded
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .collect();
    recorded.sort();
    assert_eq!(
        recorded,
        [
            &b"few/f0"[..],
            b"few/f1",
            b"top0.txt",
            b"top1.txt",
            b"top2.txt"
        ]
    );
}
