use super::*;

#[test]
fn the_settings_take_sizes_in_mib() {
    assert_eq!(
        Settings::from_config(false, 3, 7, 5),
        Settings {
            enabled: false,
            max_file_bytes: 3 * 1024 * 1024,
            max_folder_files: 7,
            quota_bytes: 5 * 1024 * 1024,
        }
    );
    assert_eq!(Settings::default().max_file_bytes, 10 << 20);
    assert_eq!(Settings::default().quota_bytes, 2048 << 20);
    // A size past u64 is the most there is, not a wrapped small one.
    assert_eq!(
        Settings::from_config(true, u64::MAX, 1, 1).max_file_bytes,
        u64::MAX
    );
}

/// The record's folder name is the work tree's name (letters, digits, `-`, `_` and `.`
/// kept, anything else `_`) and FNV-1a of its whole path: the same in every rein version,
/// so a newer rein finds the record an older one kept.
#[test]
fn a_work_tree_always_has_the_same_record_folder() {
    let data = Path::new("/data");
    assert_eq!(
        record_dir(data, Path::new("/src/My app-v1.2_ü")),
        Path::new("/data/checkpoints/My_app-v1.2__-f26219596d7629d8")
    );
    assert_eq!(
        record_dir(data, Path::new("/")),
        Path::new("/data/checkpoints/root-af63a24c860189fe")
    );
    let long = format!("/{}", "n".repeat(50));
    let name = record_dir(data, Path::new(&long));
    let name = name.file_name().unwrap().to_str().unwrap();
    assert_eq!(name.split('-').next().unwrap(), "n".repeat(40));
}

/// The user's tracked files decide which folders are untracked (and so capped): a file
/// the user has added since the last checkpoint counts, though the list is kept between
/// checkpoints.
#[test]
fn the_users_tracked_files_are_read_again_once_their_index_changed() {
    let p = project();
    repository(&p);
    let root = &p.root;
    let settings = Settings {
        max_folder_files: 2,
        ..Settings::default()
    };
    let store = Store::open(&p.data, root, settings).unwrap();
    assert!(store.user.is_some());
    let start = store.take(None).unwrap();
    for name in ["a", "b", "c"] {
        write(root, &format!("gen/{name}"), name);
    }
    git(root, &["add", "gen/a"]);
    git(root, &["commit", "-qm", "gen"]);
    let after = store.take(Some(&start.commit)).unwrap();
    assert!(
        after.skipped.is_empty(),
        "gen/ is tracked now: no folder cap: {:?}",
        after.skipped
    );
    assert_eq!(after.changed, ["gen/a", "gen/b", "gen/c"]);
}

/// A loose object in the record whose header claims `header` (zlib with one stored block:
/// git reads it like any other).
fn plant_object(store: &Store, id: &str, header: &str, body: &[u8]) {
    let mut raw = format!("{header}\0").into_bytes();
    raw.extend_from_slice(body);
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in &raw {
        a = (a + u32::from(byte)) % 65521;
        b = (b + a) % 65521;
    }
    let len = u16::try_from(raw.len()).unwrap();
    let mut zlib = vec![0x78, 0x01, 0x01];
    zlib.extend_from_slice(&len.to_le_bytes());
    zlib.extend_from_slice(&(!len).to_le_bytes());
    zlib.extend_from_slice(&raw);
    zlib.extend_from_slice(&((b << 16) | a).to_be_bytes());
    let dir = store.git.git_dir().join("objects").join(&id[..2]);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(&id[2..]), zlib).unwrap();
}

/// A damaged record never makes rein allocate what it says: content read back is a blob
/// at most MAX_BLOB bytes long, and anything else is an error, not a file's content.
#[test]
fn a_damaged_record_gives_errors_not_contents() {
    let p = project();
    write(&p.root, "a.txt", "a\n");
    let store = Store::open(&p.data, &p.root, Settings::default()).unwrap();
    store.take(None).unwrap();
    let sound = "1".repeat(40);
    plant_object(&store, &sound, "blob 3", b"abc");
    assert_eq!(store.git.cat_blobs(&[sound]).unwrap(), [b"abc"]);
    let huge = "2".repeat(40);
    plant_object(&store, &huge, &format!("blob {}", 100u64 << 30), b"abc");
    let err = store.git.cat_blobs(&[huge]).unwrap_err().to_string();
    assert!(err.contains("more than rein restores"), "{err}");
    let tree = "3".repeat(40);
    plant_object(&store, &tree, "tree 0", b"");
    let err = store.git.cat_blobs(&[tree]).unwrap_err().to_string();
    assert!(err.contains("is a tree, not a file's content"), "{err}");
    let err = store
        .git
        .cat_blobs(&["4".repeat(40)])
        .unwrap_err()
        .to_string();
    assert!(err.contains("missing from the record"), "{err}");
}

/// A checkpoint the record no longer holds is said to be pruned; a record git cannot read
/// at all is a git error, not a pruned checkpoint.
#[test]
fn a_missing_checkpoint_is_pruned_and_a_broken_record_is_an_error() {
    let p = project();
    write(&p.root, "a.txt", "a\n");
    let store = Store::open(&p.data, &p.root, Settings::default()).unwrap();
    let taken = store.take(None).unwrap();
    let paths = [RelPath::from("a.txt")];
    let gone = "5".repeat(40);
    assert!(matches!(
        store.diff(&steps(&paths, &gone, &taken.commit)),
        Err(CheckpointError::Pruned(id)) if id == gone
    ));
    let objects = store.git.git_dir().join("objects");
    std::fs::rename(&objects, objects.with_file_name("objects-moved")).unwrap();
    let broken = store.diff(&steps(&paths, &taken.commit, &taken.commit));
    assert!(
        matches!(broken, Err(CheckpointError::Git { .. })),
        "{broken:?}"
    );
}

/// A record git made with SHA-256 ids (64 digits, git's coming default) takes checkpoints
/// by name and as one pack, and takes a turn back.
#[test]
fn a_record_with_sha256_ids_takes_and_restores_checkpoints() {
    let p = project();
    let root = &p.root;
    write(root, "a.txt", "a\n");
    write(root, "gone.txt", "g\n");
    let git_dir = record_dir(&p.data, root).join("git");
    std::fs::create_dir_all(&git_dir).unwrap();
    git(
        &git_dir,
        &["init", "-q", "--bare", "--object-format=sha256", "."],
    );
    let mut store = Store::open(&p.data, root, Settings::default()).unwrap();
    let first = store.take(None).unwrap();
    assert_eq!(first.commit.len(), 64);
    write(root, "a.txt", "changed\n");
    write(root, "new.txt", "new\n");
    let second = store.take(Some(&first.commit)).unwrap();
    assert_eq!(second.changed, ["a.txt", "new.txt"]);
    store.bulk_from = 0;
    std::fs::remove_file(root.join("gone.txt")).unwrap();
    write(root, "packed.txt", "p\n");
    let third = store.take(Some(&second.commit)).unwrap();
    assert_eq!(third.changed, ["gone.txt", "packed.txt"]);
    let all: Vec<RelPath> = ["a.txt", "gone.txt", "new.txt", "packed.txt"]
        .map(RelPath::from)
        .to_vec();
    store
        .restore(
            &steps(&all, &first.commit, &third.commit),
            false,
            false,
            None,
        )
        .unwrap();
    assert_eq!(
        without_git(files(root)),
        BTreeMap::from([
            ("a.txt".to_string(), b"a\n [x0]".to_vec()),
            ("gone.txt".to_string(), b"g\n [x0]".to_vec()),
        ])
    );
}
