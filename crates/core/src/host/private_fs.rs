//! What rein keeps for the user is the user's alone: every folder rein makes for its own
//! files is 0700 and every such file 0600, wherever it lives. That covers the data folder
//! (session files, their pid files and summaries, the spill files of long tool outputs,
//! the input history, the MCP approvals, the external editor's temporary file) and what
//! rein writes into a project (the `.rein/` folder the sandbox needs, the
//! `.rein/config.toml` that "always allow in this project" writes).
//!
//! The bits are given when the folder or file is made (`mkdir` and `open` with the mode),
//! never by a `chmod` afterwards, so there is no moment in which another user could open
//! it. A file is replaced by writing a new one beside it and renaming it over
//! ([`replace`]), never through a link. Folders that existed already are left as they are
//! (`~/.local/share` is not rein's to change), except the folders rein keeps its own files
//! in: [`own_dir`] and, at start, [`tighten_data_dir`] take the group and other bits off
//! one an older rein left 0755. The process's umask is never changed: the commands and
//! file tools that write the user's project keep the usual bits.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::host::safe_fs::{self, Bits, WriteError};

/// The folders under the data folder that rein keeps its own files in, tightened at start
/// with the data folder itself.
pub const DATA_FOLDERS: &[&str] = &["sessions", "spill", "tmp"];

/// Create `dir` and every missing folder above it, each 0700; those that exist stay as
/// they are.
pub fn create_dir(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// A new folder at `dir`, 0700: an error when something is there already (a name drawn in
/// a shared place, such as the demo's project in `/tmp`).
pub fn create_new_dir(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new().mode(0o700).create(dir)
}

/// A folder rein keeps its own files in: made as [`create_dir`] makes it; one that was
/// there must be a folder of the user's (one of another user's, say in `/tmp`, is
/// refused), and it loses any group and other bits.
pub fn own_dir(dir: &Path) -> io::Result<()> {
    create_dir(dir)?;
    tighten(dir).map(|_| ())
}

/// Take the group and other bits off the existing folder `dir` (a link to one is
/// followed); whether anything changed. An error when it is not a folder or not the
/// user's.
pub fn tighten(dir: &Path) -> io::Result<bool> {
    let meta = fs::metadata(dir)?;
    if !meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} is not a folder", dir.display()),
        ));
    }
    // SAFETY: geteuid takes nothing and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} belongs to another user (uid {}); rein keeps its files only in folders of yours",
                dir.display(),
                meta.uid()
            ),
        ));
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o077 == 0 {
        return Ok(false);
    }
    fs::set_permissions(dir, fs::Permissions::from_mode(mode & 0o700))?;
    Ok(true)
}

/// Make the data folder and its [`DATA_FOLDERS`] that exist the user's alone (nothing is
/// created). Files an older rein left 0644 in them are then out of other users' reach
/// too, and get 0600 when rein next rewrites them. What could not be changed, in words.
pub fn tighten_data_dir(data_dir: &Path) -> Vec<String> {
    let problem =
        |dir: &Path, e: io::Error| format!("cannot make {} yours alone: {e}", dir.display());
    match tighten(data_dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => return vec![problem(data_dir, e)],
        Ok(_) => {}
    }
    DATA_FOLDERS
        .iter()
        .map(|name| data_dir.join(name))
        .filter_map(|dir| match tighten(&dir) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Some(problem(&dir, e)),
            _ => None,
        })
        .collect()
}

/// Options whose `create` makes the file 0600; the caller says how it is opened.
pub fn options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.mode(0o600);
    options
}

/// A new file at `path`, 0600, open for writing: never an existing file, never through a
/// link.
pub fn create_new(path: &Path) -> io::Result<File> {
    options()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// Put `content` in the file at `path`, created or replaced, 0600 from the moment it
/// exists whatever the old file's bits: it goes to a new file in the same folder that is
/// then renamed over the old one (missing folders are made 0700). A link at `path`, or
/// swapped in on the way, is refused, never written through.
pub fn replace(path: &Path, content: &[u8]) -> io::Result<()> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} names no file", path.display()),
        ));
    };
    let base = if parent.is_absolute() {
        PathBuf::from("/")
    } else {
        std::env::current_dir()?
    };
    let parent = safe_fs::resolve(parent, &base).map_err(io::Error::other)?;
    match safe_fs::write_with(&parent.join(name), content, Bits::Private) {
        Ok(_) => Ok(()),
        Err(WriteError::Io(e)) if e.raw_os_error() == Some(libc::ELOOP) => Err(io::Error::new(
            e.kind(),
            "it is a symbolic link, and rein never writes its own files through one",
        )),
        Err(WriteError::Io(e)) => Err(e),
        Err(other) => Err(io::Error::other(other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn bits(path: &Path) -> u32 {
        fs::symlink_metadata(path).unwrap().mode() & 0o777
    }

    #[test]
    fn new_folders_are_0700_and_old_ones_stay_as_they_were() {
        let d = tempfile::tempdir().unwrap();
        let shared = d.path().join("share");
        fs::create_dir(&shared).unwrap();
        fs::set_permissions(&shared, fs::Permissions::from_mode(0o755)).unwrap();
        create_dir(&shared.join("rein/sessions")).unwrap();
        assert_eq!(
            bits(&shared),
            0o755,
            "a folder that was there is not rein's"
        );
        assert_eq!(bits(&shared.join("rein")), 0o700);
        assert_eq!(bits(&shared.join("rein/sessions")), 0o700);
        // A folder of rein's own is tightened; one already private is left alone.
        fs::set_permissions(shared.join("rein"), fs::Permissions::from_mode(0o755)).unwrap();
        own_dir(&shared.join("rein")).unwrap();
        assert_eq!(bits(&shared.join("rein")), 0o700);
        assert!(!tighten(&shared.join("rein")).unwrap());
        // Not a folder: refused.
        fs::write(d.path().join("file"), "").unwrap();
        assert!(own_dir(&d.path().join("file")).is_err());
        // A new folder in a shared place: 0700, and never one that was there.
        create_new_dir(&d.path().join("demo")).unwrap();
        assert_eq!(bits(&d.path().join("demo")), 0o700);
        assert!(create_new_dir(&d.path().join("demo")).is_err());
    }

    #[test]
    fn the_data_folder_of_an_older_rein_is_tightened_and_nothing_is_made() {
        let d = tempfile::tempdir().unwrap();
        let data = d.path().join("rein");
        for dir in [data.clone(), data.join("sessions"), data.join("spill")] {
            fs::create_dir_all(&dir).unwrap();
            fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        }
        fs::create_dir(data.join("skills")).unwrap();
        fs::set_permissions(data.join("skills"), fs::Permissions::from_mode(0o755)).unwrap();
        assert!(tighten_data_dir(&data).is_empty());
        assert_eq!(bits(&data), 0o700);
        assert_eq!(bits(&data.join("sessions")), 0o700);
        assert_eq!(bits(&data.join("spill")), 0o700);
        assert!(!data.join("tmp").exists(), "a missing folder is not made");
        assert_eq!(bits(&data.join("skills")), 0o755, "the user's own folder");
        // A data folder that is a file: said, not a panic.
        let file = d.path().join("not-a-folder");
        fs::write(&file, "").unwrap();
        assert_eq!(tighten_data_dir(&file).len(), 1);
    }

    #[test]
    fn files_are_0600_from_creation_and_links_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        let mut f = create_new(&root.join("a.txt")).unwrap();
        io::Write::write_all(&mut f, b"x").unwrap();
        assert_eq!(bits(&root.join("a.txt")), 0o600);
        assert!(
            create_new(&root.join("a.txt")).is_err(),
            "never an existing file"
        );

        // A replaced file that was 0644 becomes 0600; missing folders are made 0700.
        fs::write(root.join("old.json"), "old").unwrap();
        fs::set_permissions(root.join("old.json"), fs::Permissions::from_mode(0o644)).unwrap();
        replace(&root.join("old.json"), b"new").unwrap();
        assert_eq!(fs::read_to_string(root.join("old.json")).unwrap(), "new");
        assert_eq!(bits(&root.join("old.json")), 0o600);
        replace(&root.join("x/y/z.json"), b"z").unwrap();
        assert_eq!(bits(&root.join("x")), 0o700);
        assert_eq!(bits(&root.join("x/y")), 0o700);
        assert_eq!(bits(&root.join("x/y/z.json")), 0o600);

        // A link in the file's place: refused, its target untouched.
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("t"), "theirs").unwrap();
        symlink(outside.path().join("t"), root.join("l")).unwrap();
        let err = replace(&root.join("l"), b"mine").unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert_eq!(
            fs::read_to_string(outside.path().join("t")).unwrap(),
            "theirs"
        );
        assert!(create_new(&root.join("l")).is_err());
        // A folder on the way that is a link is followed (the data folder may be one).
        symlink(outside.path(), root.join("moved")).unwrap();
        replace(&root.join("moved/sessions.json"), b"ok").unwrap();
        assert_eq!(bits(&outside.path().join("sessions.json")), 0o600);
    }
}
