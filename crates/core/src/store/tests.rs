use super::*;
use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};

type Record = BTreeMap<String, u32>;

fn store(dir: &Path) -> JsonStore {
    JsonStore::new(dir, "record.json", 4096, "rein's test record")
}

#[test]
fn a_record_goes_round_and_a_missing_file_is_empty() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    let s = store(&data);
    assert_eq!(s.read::<Record>().unwrap(), Record::new());
    let n = s
        .update(|r: &mut Record| {
            r.insert("a".into(), 1);
            r.len()
        })
        .unwrap();
    assert_eq!(n, 1);
    assert_eq!(s.read::<Record>().unwrap(), Record::from([("a".into(), 1)]));
    assert_eq!(fs::metadata(s.path()).unwrap().mode() & 0o777, 0o600);
    assert_eq!(fs::metadata(&data).unwrap().mode() & 0o777, 0o700);
    // An update that changes nothing writes nothing: the same file, not a new one.
    let inode = fs::metadata(s.path()).unwrap().ino();
    s.update(|r: &mut Record| r.get("a").copied()).unwrap();
    assert_eq!(fs::metadata(s.path()).unwrap().ino(), inode);
    s.update(|r: &mut Record| r.insert("b".into(), 2)).unwrap();
    assert_ne!(fs::metadata(s.path()).unwrap().ino(), inode);
}

/// The rule: a file rein cannot read is reported, naming it and the way out, and left
/// byte for byte as it was; nothing is recorded in it until it is moved aside.
#[test]
fn a_damaged_file_is_reported_and_never_written_over() {
    let d = tempfile::tempdir().unwrap();
    let s = store(d.path());
    let damaged = "{\"a\": 1, \"b\": ";
    fs::write(s.path(), damaged).unwrap();
    let err = s.read::<Record>().unwrap_err();
    assert!(matches!(err, StoreError::Damaged { .. }), "{err:?}");
    let said = err.to_string();
    assert!(said.contains(&s.path().display().to_string()), "{said}");
    assert!(said.contains("is not rein's test record"), "{said}");
    assert!(said.contains("mv "), "{said}");
    let refused = s.update(|r: &mut Record| r.insert("c".into(), 3));
    assert_eq!(refused.unwrap_err(), err);
    assert_eq!(fs::read_to_string(s.path()).unwrap(), damaged);
    // JSON of another form is as damaged as no JSON.
    fs::write(s.path(), "[1, 2]").unwrap();
    assert!(matches!(
        s.update(|r: &mut Record| r.insert("c".into(), 3)),
        Err(StoreError::Damaged { .. })
    ));
    assert_eq!(fs::read_to_string(s.path()).unwrap(), "[1, 2]");
    // Moved aside, as the error says: a new record starts.
    fs::rename(s.path(), d.path().join("record.json.bad")).unwrap();
    s.update(|r: &mut Record| r.insert("c".into(), 3)).unwrap();
    assert_eq!(s.read::<Record>().unwrap(), Record::from([("c".into(), 3)]));
}

#[test]
fn a_file_over_the_bound_is_reported_and_kept() {
    let d = tempfile::tempdir().unwrap();
    let s = store(d.path());
    let big: Record = (0..400).map(|i| (format!("key-{i}"), i)).collect();
    let text = serde_json::to_string(&big).unwrap();
    assert!(text.len() > 4096);
    fs::write(s.path(), &text).unwrap();
    let err = s.read::<Record>().unwrap_err();
    assert!(matches!(err, StoreError::Unreadable { .. }), "{err:?}");
    assert!(err.to_string().contains("larger than"), "{err}");
    assert!(s.update(|r: &mut Record| r.clear()).is_err());
    assert_eq!(fs::read_to_string(s.path()).unwrap(), text);
}

#[test]
fn a_pipe_or_a_link_in_the_files_place_is_neither_read_from_nor_written_through() {
    let d = tempfile::tempdir().unwrap();
    let s = store(d.path());
    // A named pipe: reported at once (no read that waits for a writer), left in place.
    let path = std::ffi::CString::new(s.path().as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    let err = s.read::<Record>().unwrap_err();
    assert!(err.to_string().contains("named pipe"), "{err}");
    assert!(s.update(|r: &mut Record| r.insert("a".into(), 1)).is_err());
    assert!(fs::symlink_metadata(s.path())
        .unwrap()
        .file_type()
        .is_fifo());
    fs::remove_file(s.path()).unwrap();
    // A link to a file elsewhere: read, but never written through.
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("theirs.json");
    fs::write(&target, "{}").unwrap();
    std::os::unix::fs::symlink(&target, s.path()).unwrap();
    let err = s
        .update(|r: &mut Record| r.insert("a".into(), 1))
        .unwrap_err();
    assert!(err.to_string().contains("symbolic link"), "{err}");
    assert_eq!(fs::read_to_string(&target).unwrap(), "{}");
}

/// Two writers at once (two reins recording): every update is kept.
#[test]
fn concurrent_updates_all_land() {
    let d = tempfile::tempdir().unwrap();
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let s = store(d.path());
            std::thread::spawn(move || {
                for i in 0..25 {
                    s.update(|r: &mut Record| r.insert(format!("{t}-{i}"), i))
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(store(d.path()).read::<Record>().unwrap().len(), 100);
}
