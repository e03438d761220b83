//! Odd files: names that are not UTF-8 or hold odd characters, and every kind of file
//! replaced by another.

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::json;
use support::agent::calls;
use support::{Reply, ScriptedServer};

use super::{args, bash, json_of, rein, repository, text, turn, write};

/// Every entry under `dir` (less `.git` and `.rein`) by its name's bytes: a file's content, a link's
/// target after `-> `, a folder as `/`.
fn entries(dir: &Path) -> BTreeMap<Vec<u8>, Vec<u8>> {
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
            // The user's repository, and the folder rein keeps in a project.
            if rel == b".git" || rel == b".rein" {
                continue;
            }
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

/// What differs between two listings, readable.
fn differ(a: &BTreeMap<Vec<u8>, Vec<u8>>, b: &BTreeMap<Vec<u8>, Vec<u8>>) -> Vec<String> {
    let keys: std::collections::BTreeSet<&Vec<u8>> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| {
            format!(
                "{}: {:?} / {:?}",
                k.escape_ascii(),
                a.get(k).map(|v| v.escape_ascii().to_string()),
                b.get(k).map(|v| v.escape_ascii().to_string())
            )
        })
        .collect()
}

/// Names that are not UTF-8 or hold a newline, a tab, quotes, a backslash or a leading
/// dash are recorded like any other: a turn that makes, changes and removes them is
/// taken back exactly, and the list and the rewind name them quoted and escaped.
#[tokio::test]
async fn names_that_are_not_utf8_or_hold_odd_characters_are_rewound_and_named() {
    use std::os::unix::ffi::OsStrExt;
    let home = tempfile::tempdir().unwrap();
    let (_dir, root) = repository();
    let at = |name: &[u8]| root.join(std::ffi::OsStr::from_bytes(name));
    std::fs::write(at(b"caf\xe9.txt"), "old latin-1 name\n").unwrap();
    std::fs::write(at(b"gone\xff.txt"), "to be removed\n").unwrap();
    std::fs::write(at(b"line\nbreak"), "old\n").unwrap();
    let server = ScriptedServer::start(vec![
        calls(&[bash(
            "printf 'changed\\n' > $'caf\\xe9.txt' && unlink $'gone\\xff.txt' \
             && printf 'new\\n' > $'line\\nbreak' && printf made > $'tab\\there' \
             && printf made > 'say \"hi\"' && printf made > -dash && printf made > 'back\\slash' \
             && mkdir $'dir\\xfe' && printf made > $'dir\\xfe/inner'",
        )]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let before = entries(&root);
    let out = turn(home.path(), &server, &root, "rename things", &[]).await;
    let requests = server.requests();
    assert!(
        !text(&out.stderr).contains("leave out"),
        "nothing is left out: {}",
        text(&out.stderr)
    );
    let after = entries(&root);
    assert_ne!(before, after, "{:?}", requests.last());

    let list = rein(home.path(), &args(&["rewind", "--list"], &root)).await;
    let shown = text(&list.stdout);
    for name in [
        r#""caf\xe9.txt""#,
        r#""gone\xff.txt""#,
        r#""line\nbreak""#,
        r#""tab\there""#,
        r#""say \"hi\"""#,
        r#""back\\slash""#,
        r#""dir\xfe/inner""#,
        "-dash",
    ] {
        assert!(shown.contains(name), "{name} in {shown}");
    }
    let json = json_of(&rein(home.path(), &args(&["rewind", "--list", "--json"], &root)).await);
    let files = &json["turns"][0]["files"];
    assert!(
        files
            .as_array()
            .unwrap()
            .contains(&json!({"bytes": "636166e92e747874"})),
        "{files}"
    );

    let out = rein(
        home.path(),
        &args(&["rewind", "--to", "1", "--code"], &root),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(said.contains(r#"restored  "caf\xe9.txt""#), "{said}");
    assert!(said.contains(r#"removed  "tab\there""#), "{said}");
    let now = entries(&root);
    assert!(now == before, "{said}{:?}", differ(&now, &before));
    let out = rein(home.path(), &args(&["rewind", "--undo"], &root)).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let now = entries(&root);
    assert!(now == after, "{:?}", differ(&now, &after));
}

/// A turn that puts a folder where a file was, a file where a folder was, a link where
/// either was or either where a link was is taken back: what the turn made is removed and
/// the old kind comes back. A file of the user's in the turn's folder is kept, and named,
/// unless forced; forced, it goes, and the undo brings it back.
#[tokio::test]
async fn every_kind_replaced_by_another_is_rewound_and_what_the_user_added_is_kept() {
    let home = tempfile::tempdir().unwrap();
    let (_dir, root) = repository();
    write(&root, "file-to-folder", "a file\n");
    write(&root, "file-to-link", "a file\n");
    write(&root, "folder-to-file/inner.txt", "inner\n");
    write(&root, "folder-to-file/deep/more.txt", "more\n");
    write(&root, "folder-to-link/inner.txt", "inner\n");
    std::os::unix::fs::symlink("README.md", root.join("link-to-file")).unwrap();
    std::os::unix::fs::symlink("src", root.join("link-to-folder")).unwrap();
    let server = ScriptedServer::start(vec![
        calls(&[bash(
            "unlink file-to-folder && mkdir -p file-to-folder/deep && echo made > file-to-folder/deep/x \
             && unlink folder-to-file/inner.txt && unlink folder-to-file/deep/more.txt \
             && rmdir folder-to-file/deep folder-to-file && echo made > folder-to-file \
             && unlink file-to-link && ln -s README.md file-to-link \
             && unlink link-to-file && echo made > link-to-file \
             && unlink folder-to-link/inner.txt && rmdir folder-to-link && ln -s src folder-to-link \
             && unlink link-to-folder && mkdir link-to-folder && echo made > link-to-folder/y",
        )]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let before = entries(&root);
    turn(home.path(), &server, &root, "swap kinds", &[]).await;
    let after = entries(&root);
    assert_ne!(before, after, "{:?}", server.requests().last());
    // The user adds a file of their own in a folder the turn made.
    write(&root, "file-to-folder/mine.txt", "the user's\n");

    let out = rein(
        home.path(),
        &args(&["rewind", "--to", "1", "--code"], &root),
    )
    .await;
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said} {}", text(&out.stderr));
    assert!(
        said.contains("kept  file-to-folder  (a folder is there now")
            && said.contains("file-to-folder/mine.txt")
            && said.contains("--force"),
        "{said}"
    );
    let mut expected = before.clone();
    expected.remove(b"file-to-folder".as_slice());
    expected.insert(b"file-to-folder".to_vec(), b"/".to_vec());
    expected.insert(
        b"file-to-folder/mine.txt".to_vec(),
        b"the user's\n".to_vec(),
    );
    let now = entries(&root);
    assert!(now == expected, "{said}{:?}", differ(&now, &expected));

    let out = rein(
        home.path(),
        &args(&["rewind", "--to", "1", "--code", "--force"], &root),
    )
    .await;
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said} {}", text(&out.stderr));
    assert!(said.contains("removed  file-to-folder/mine.txt"), "{said}");
    let now = entries(&root);
    assert!(now == before, "{said}{:?}", differ(&now, &before));
    let out = rein(home.path(), &args(&["rewind", "--undo"], &root)).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read(root.join("file-to-folder/mine.txt")).unwrap(),
        b"the user's\n"
    );
}
