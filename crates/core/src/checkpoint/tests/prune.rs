//! Keeping the record under its quota and packed.

use super::*;

/// The record's packs, as files.
fn packs(store: &Store) -> usize {
    std::fs::read_dir(store.git.git_dir().join("objects/pack"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension() == Some("pack".as_ref()))
        .count()
}

/// The record's loose objects.
fn loose(store: &Store) -> u64 {
    let out = store.git.run(&["count-objects", "-v"], None).unwrap();
    let text = String::from_utf8(out).unwrap();
    let count = text.lines().find_map(|l| l.strip_prefix("count: "));
    count.unwrap().parse().unwrap()
}

/// The record's size, which the quota is held to, is everything git keeps in it: loose
/// objects, packs and what is left over in its object folders.
#[test]
fn the_records_size_counts_its_leftover_files_too() {
    let p = project();
    repository(&p);
    let store = Store::open(&p.data, &p.root, Settings::default()).unwrap();
    store.take(None).unwrap();
    let small = store.maintain().unwrap().bytes;
    assert!(small > 0 && small < 1 << 20, "{small}");
    let junk = store.git.git_dir().join("objects/pack/junk");
    std::fs::write(&junk, vec![7u8; 2 << 20]).unwrap();
    let big = store.maintain().unwrap().bytes;
    assert!(big >= small + (2 << 20), "{small} then {big}");
    assert!(big < small + (3 << 20), "{small} then {big}");
}

/// Under its quota, with few loose objects and packs, the record is left as it is; with
/// many packs (each large batch makes one), they are packed into one.
#[test]
fn a_record_under_its_quota_is_packed_only_once_it_has_many_packs() {
    let p = project();
    repository(&p);
    let store = Store::open(&p.data, &p.root, Settings::default()).unwrap();
    store.take(None).unwrap();
    write(&p.root, "src/lib.rs", "fn a() { changed }\n");
    store.take(None).unwrap();
    let before = loose(&store);
    assert!(before > 0);
    assert_eq!(store.maintain().unwrap().pruned, 0);
    assert_eq!((loose(&store), packs(&store)), (before, 0));
    // 50 packs of one blob each, from one fast-import (`checkpoint` starts a new pack; a
    // pack of fewer objects than the unpack limit would be made loose objects).
    let mut stream = String::new();
    for i in 0..50 {
        stream.push_str(&format!("blob\ndata 8\nblob {i:03}\ncheckpoint\n\n"));
    }
    store
        .git
        .run(
            &["-c", "fastimport.unpackLimit=0", "fast-import", "--quiet"],
            Some(stream.as_bytes()),
        )
        .unwrap();
    assert_eq!(packs(&store), 50);
    assert_eq!(store.maintain().unwrap().pruned, 0);
    assert_eq!((loose(&store), packs(&store)), (0, 1));
}

/// Over the quota, each round drops the older half of what is left until only the latest
/// checkpoint stays: twenty old ones all go.
#[test]
fn an_impossible_quota_prunes_every_checkpoint_but_the_latest() {
    let p = project();
    repository(&p);
    let settings = Settings {
        quota_bytes: 1,
        ..Settings::default()
    };
    let store = Store::open(&p.data, &p.root, settings).unwrap();
    let mut latest = String::new();
    for i in 0..21 {
        write(&p.root, "src/lib.rs", &format!("version {i}\n"));
        latest = store.take(None).unwrap().commit;
    }
    assert_eq!(store.maintain().unwrap().pruned, 20);
    let refs = store
        .git
        .run(
            &["for-each-ref", "--format=%(objectname)", "refs/rein/"],
            None,
        )
        .unwrap();
    assert_eq!(String::from_utf8(refs).unwrap().trim(), latest);
}
