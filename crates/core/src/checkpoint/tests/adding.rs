//! How a checkpoint's changes go into the record (by name up to `bulk_from` of them, as
//! one pack past that, the whole project when adding by name fails) and what it takes of
//! files that change while it is being taken. The `many` notice comes between the status
//! and the adding, so the tests change files there.

use super::*;

/// A project with two files, its first checkpoint taken, then `a.txt` edited and `y.txt`
/// made: the next checkpoint's status sees two changes.
fn two_changes(p: &Project, bulk_from: usize) -> (Store, String) {
    let root = &p.root;
    write(root, "a.txt", "a\n");
    write(root, "b.txt", "b\n");
    let mut store = Store::open(&p.data, root, Settings::default()).unwrap();
    store.bulk_from = bulk_from;
    store.many_from = 0;
    let first = store.take(None).unwrap();
    write(root, "a.txt", "a changed\n");
    write(root, "y.txt", "y\n");
    (store, first.commit)
}

fn changed(taken: &Taken) -> Vec<String> {
    taken.changed.iter().map(ToString::to_string).collect()
}

/// Up to `bulk_from` changes are added by name: a file made after the status saw the
/// project waits for the next checkpoint.
#[test]
fn a_file_made_after_the_status_waits_for_the_next_checkpoint() {
    for bulk_from in [2, take::ADD_BY_NAME] {
        let p = project();
        let (store, first) = two_changes(&p, bulk_from);
        let root = p.root.clone();
        let taken = store
            .take_noting(Some(&first), &mut |n| {
                assert_eq!(n, 2);
                write(&root, "x.txt", "made meanwhile\n");
            })
            .unwrap();
        assert_eq!(changed(&taken), ["a.txt", "y.txt"], "bulk_from {bulk_from}");
        let next = store.take(Some(&taken.commit)).unwrap();
        assert_eq!(changed(&next), ["x.txt"], "bulk_from {bulk_from}");
    }
}

/// Adding by name fails on a new file gone since the status: the whole project is added
/// instead, as it is by then (the file made meanwhile included, the gone one not).
#[test]
fn a_new_file_gone_before_it_is_added_by_name_makes_the_whole_project_added() {
    for bulk_from in [2, take::ADD_BY_NAME] {
        let p = project();
        let (store, first) = two_changes(&p, bulk_from);
        let root = p.root.clone();
        let taken = store
            .take_noting(Some(&first), &mut |_| {
                std::fs::remove_file(root.join("y.txt")).unwrap();
                write(&root, "x.txt", "made meanwhile\n");
            })
            .unwrap();
        assert_eq!(changed(&taken), ["a.txt", "x.txt"], "bulk_from {bulk_from}");
    }
}

/// Past `bulk_from` changes go in as one pack of the paths the status listed: one gone by
/// then is left out like a removed one, and a file made meanwhile waits.
#[test]
fn a_pack_of_changes_records_the_listed_paths_only() {
    let p = project();
    let (store, first) = two_changes(&p, 1);
    let root = p.root.clone();
    let taken = store
        .take_noting(Some(&first), &mut |_| {
            std::fs::remove_file(root.join("y.txt")).unwrap();
            write(&root, "x.txt", "made meanwhile\n");
        })
        .unwrap();
    assert_eq!(changed(&taken), ["a.txt"]);
    let next = store.take(Some(&taken.commit)).unwrap();
    assert_eq!(changed(&next), ["x.txt"]);
}
