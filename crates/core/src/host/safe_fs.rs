//! File access that goes where the permission check looked, and nowhere else.
//!
//! [`resolve`] turns a path into the place it really leads: every symbolic link followed,
//! whether its target exists yet or not (a dangling `cfg -> .rein/config.toml` leads into
//! `.rein`), `.` dropped and `..` applied to what was resolved so far, with a budget
//! spent on links only (at most [`MAX_LINKS`], as the kernel allows), so a path of any
//! length resolves or is refused; it never falls back to taking a path literally. The
//! permission rules judge that place, and the file tools then read and write exactly it:
//! [`open_read`] and [`write()`] open every directory on the way with `O_NOFOLLOW` (so a link
//! swapped in after the check makes them fail instead of following it), refuse a final
//! component that became a link, and [`write()`] puts the content in a new file beside the
//! old one and renames it over, so a hard link to a file elsewhere is replaced, never
//! written through. The old file's permission bits are kept. [`crate::host::private_fs`] writes
//! rein's own files the same way, with private bits (`Bits::Private`).

use std::collections::VecDeque;
use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Links one resolution may follow (Linux's own limit is 40).
pub const MAX_LINKS: usize = 40;

/// A path that leads through more than [`MAX_LINKS`] links (a loop, or a hostile chain).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} leads through more than {MAX_LINKS} symbolic links", .0.display())]
pub struct TooManyLinks(pub PathBuf);

/// Where `path` leads (relative paths against `base`, which should be resolved already).
pub fn resolve(path: &Path, base: &Path) -> Result<PathBuf, TooManyLinks> {
    let mut current = if path.is_absolute() {
        PathBuf::from("/")
    } else {
        base.to_path_buf()
    };
    let mut pending: VecDeque<OsString> = VecDeque::new();
    push_front(&mut pending, &mut current, path);
    let mut links = 0;
    while let Some(name) = pending.pop_front() {
        if name == ".." {
            current.pop();
            continue;
        }
        let next = current.join(&name);
        // Only a link has a target to read (anything else fails with EINVAL).
        match std::fs::read_link(&next).ok() {
            Some(target) => {
                links += 1;
                if links > MAX_LINKS {
                    return Err(TooManyLinks(path.to_path_buf()));
                }
                // The target replaces the link: resolved against the link's directory.
                push_front(&mut pending, &mut current, &target);
            }
            // Not a link, not there yet, or not readable: the name as it stands.
            None => current = next,
        }
    }
    Ok(current)
}

/// Put `path`'s components in front of `pending` (an absolute `path` restarts at `/`).
fn push_front(pending: &mut VecDeque<OsString>, current: &mut PathBuf, path: &Path) {
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => {
                *current = PathBuf::from("/");
                parts.clear();
            }
            Component::CurDir => {}
            Component::ParentDir => parts.push(OsString::from("..")),
            Component::Normal(name) => parts.push(name.to_os_string()),
        }
    }
    for part in parts.into_iter().rev() {
        pending.push_front(part);
    }
}

/// Why a safe open or write failed, in words for the model.
pub fn describe(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ELOOP) => "a symbolic link appeared on the way after rein checked the path; \
                              nothing was read or written through it"
            .to_string(),
        _ => e.to_string(),
    }
}

fn c_name(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Open `name` in the directory `dir` as a directory, never through a link.
fn open_dir_at(dir: libc::c_int, name: &CString) -> io::Result<OwnedFd> {
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: a valid directory descriptor and a NUL-terminated name.
    match check(unsafe { libc::openat(dir, name.as_ptr(), flags) }) {
        // SAFETY: `fd` was just opened and is owned by nothing else.
        Ok(fd) => Ok(unsafe { OwnedFd::from_raw_fd(fd) }),
        // Linux says "not a directory" for a link opened with O_DIRECTORY|O_NOFOLLOW:
        // say what it is.
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => match stat_at(dir, name) {
            Ok(Some(st)) if kind(&st) == libc::S_IFLNK => Err(is_link_error()),
            _ => Err(e),
        },
        Err(e) => Err(e),
    }
}

/// The directory `dir` (absolute, resolved), each component opened without following
/// links; missing ones are created (with these permission bits, less the umask) when
/// `create` is given.
fn open_dir(dir: &Path, create: Option<libc::mode_t>) -> io::Result<OwnedFd> {
    let root = CString::new("/").map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC;
    // SAFETY: a NUL-terminated path.
    let fd = check(unsafe { libc::open(root.as_ptr(), flags) })?;
    // SAFETY: just opened, owned by nothing else.
    let mut current = unsafe { OwnedFd::from_raw_fd(fd) };
    for component in dir.components() {
        let name = match component {
            Component::Normal(name) => c_name(name)?,
            Component::RootDir | Component::CurDir => continue,
            // A resolved path has none; refuse rather than guess.
            _ => return Err(io::Error::from(io::ErrorKind::InvalidInput)),
        };
        current = match (open_dir_at(current.as_raw_fd(), &name), create) {
            (Err(e), Some(mode)) if e.kind() == io::ErrorKind::NotFound => {
                // SAFETY: a valid directory descriptor and a NUL-terminated name.
                let made = unsafe { libc::mkdirat(current.as_raw_fd(), name.as_ptr(), mode) };
                if made < 0 {
                    let e = io::Error::last_os_error();
                    if e.kind() != io::ErrorKind::AlreadyExists {
                        return Err(e);
                    }
                }
                open_dir_at(current.as_raw_fd(), &name)?
            }
            (other, _) => other?,
        };
    }
    Ok(current)
}

/// The parent directory and the final name of a resolved path.
fn split(path: &Path) -> io::Result<(&Path, &OsStr)> {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => Ok((parent, name)),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the path names no file",
        )),
    }
}

/// What is at `name` in `dir`, without following a link: the `stat` of it, or `None`.
fn stat_at(dir: libc::c_int, name: &CString) -> io::Result<Option<libc::stat>> {
    // SAFETY: zeroed is a valid `stat`; it is filled by fstatat on success.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid directory descriptor, a NUL-terminated name and a writable struct.
    let ret = unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
    if ret == 0 {
        return Ok(Some(st));
    }
    let e = io::Error::last_os_error();
    if e.kind() == io::ErrorKind::NotFound {
        Ok(None)
    } else {
        Err(e)
    }
}

/// What kind of thing a `stat` describes.
fn kind(st: &libc::stat) -> libc::mode_t {
    st.st_mode & libc::S_IFMT
}

fn is_link_error() -> io::Error {
    io::Error::from_raw_os_error(libc::ELOOP)
}

/// Open the file at `path` (absolute, from [`resolve`]) for reading, never through a link.
pub fn open_read(path: &Path) -> io::Result<File> {
    let (parent, name) = split(path)?;
    let dir = open_dir(parent, None)?;
    let name = c_name(name)?;
    let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK;
    // SAFETY: a valid directory descriptor and a NUL-terminated name.
    let fd = check(unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags) })?;
    // SAFETY: just opened, owned by nothing else.
    let file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    // O_NONBLOCK only kept a FIFO from blocking the open; reads of a regular file ignore it.
    Ok(file)
}

/// The text of the regular file at `path`, read exactly there ([`open_read`]: never
/// through a link, never blocking on a pipe), when it is UTF-8 and at most `max` bytes.
pub fn read_text_exactly(path: &Path, max: u64) -> Option<String> {
    let file = open_read(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > max {
        return None;
    }
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut io::Read::take(&file, max + 1), &mut bytes).ok()?;
    if bytes.len() as u64 > max {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// The text of a small file the user controls (a config file), following links: refused
/// when it is not a regular file (a FIFO would block the read forever, `/dev/zero` would
/// never end) or is longer than `max` bytes, or is not UTF-8. The open does not block on
/// a FIFO.
pub fn read_small_text(path: &Path, max: u64) -> io::Result<String> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    let meta = file.metadata()?;
    let kind = meta.file_type();
    if !kind.is_file() {
        let what = if kind.is_dir() {
            "a directory"
        } else if kind.is_fifo() {
            "a named pipe"
        } else if kind.is_char_device() || kind.is_block_device() {
            "a device"
        } else if kind.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        };
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is {what}, not a regular file"),
        ));
    }
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut io::Read::take(&file, max + 1), &mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("it is larger than {} KiB", max / 1024),
        ));
    }
    String::from_utf8(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "it is not UTF-8 text"))
}

/// Whether `write` replaced a file or created one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    Created,
    Replaced,
}

/// Why [`write()`] would not write.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("it is a directory")]
    Directory,
    #[error("it is not a regular file (a device, socket or pipe)")]
    Special,
    #[error("{}", describe(.0))]
    Io(#[from] io::Error),
}

/// Source of temporary names, unique in the process.
static NEXT_TEMP: AtomicU64 = AtomicU64::new(1);

/// The permission bits [`write_with`] gives what it makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bits {
    /// A project's file: new folders and files get the usual bits (0777 and 0666, less the
    /// umask), a replaced file keeps its own.
    Usual,
    /// One of rein's own files ([`crate::host::private_fs`]): new folders 0700, the file 0600
    /// from the moment it exists, whatever the old one had.
    Private,
}

/// Write `content` to the file at `path` (absolute, from [`resolve`]): missing folders are
/// created, every folder on the way is opened without following links, the content goes
/// to a new file in the same folder, which is then renamed over the old one (so neither a
/// link swapped in since the check nor a hard link is written through); the old file's
/// permission bits are kept.
pub fn write(path: &Path, content: &[u8]) -> Result<Written, WriteError> {
    write_with(path, content, Bits::Usual)
}

/// [`write()`], with the permission bits `bits` says.
pub(crate) fn write_with(path: &Path, content: &[u8], bits: Bits) -> Result<Written, WriteError> {
    let (parent, name) = split(path)?;
    let folder_bits = match bits {
        Bits::Usual => 0o777,
        Bits::Private => 0o700,
    };
    let dir = open_dir(parent, Some(folder_bits))?;
    let target = c_name(name)?;
    let old = stat_at(dir.as_raw_fd(), &target)?;
    let mode = match &old {
        Some(st) if kind(st) == libc::S_IFLNK => return Err(is_link_error().into()),
        Some(st) if kind(st) == libc::S_IFDIR => return Err(WriteError::Directory),
        Some(st) if kind(st) != libc::S_IFREG => return Err(WriteError::Special),
        Some(st) if bits == Bits::Usual => Some(st.st_mode & 0o7777),
        _ => None,
    };
    let new_bits: u16 = match bits {
        Bits::Usual => 0o666,
        Bits::Private => 0o600,
    };
    let temp_name = temp_name(name)?;
    // O_CREAT with O_EXCL fails on any name that exists, a link (dangling or not) included,
    // so no link is followed here (O_NOFOLLOW would add nothing).
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC;
    // SAFETY: a valid directory descriptor and a NUL-terminated name; mode is an int arg.
    let fd = check(unsafe {
        libc::openat(
            dir.as_raw_fd(),
            temp_name.as_ptr(),
            flags,
            libc::c_uint::from(new_bits),
        )
    })?;
    // SAFETY: just opened, owned by nothing else.
    let mut file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    let made = (|| -> io::Result<()> {
        if let Some(mode) = mode {
            // SAFETY: a valid descriptor.
            check(unsafe { libc::fchmod(file.as_raw_fd(), mode) })?;
        }
        file.write_all(content)?;
        file.flush()
    })();
    rename_over(&dir, &temp_name, &target, made, old.is_some())
}

/// The name of a new file beside `name`, unique in the process.
fn temp_name(name: &OsStr) -> io::Result<CString> {
    let n = NEXT_TEMP.fetch_add(1, Ordering::Relaxed);
    let mut t = OsString::from(".");
    t.push(name);
    t.push(format!(".rein-{}-{n}.tmp", std::process::id()));
    c_name(&t)
}

/// Once `made` made the temporary `temp` in `dir`, rename it over `target`; on any failure
/// the temporary is removed. `replaced`: something was at `target` before.
fn rename_over(
    dir: &OwnedFd,
    temp: &CString,
    target: &CString,
    made: io::Result<()>,
    replaced: bool,
) -> Result<Written, WriteError> {
    let result = made.and_then(|()| {
        // SAFETY: valid directory descriptors and NUL-terminated names.
        check(unsafe {
            libc::renameat(
                dir.as_raw_fd(),
                temp.as_ptr(),
                dir.as_raw_fd(),
                target.as_ptr(),
            )
        })
        .map(|_| ())
    });
    if let Err(e) = result {
        // SAFETY: a valid directory descriptor and a NUL-terminated name.
        unsafe { libc::unlinkat(dir.as_raw_fd(), temp.as_ptr(), 0) };
        return Err(e.into());
    }
    Ok(if replaced {
        Written::Replaced
    } else {
        Written::Created
    })
}

/// What [`put`] puts at a path: a file (executable or not) or a symbolic link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PutKind {
    File { executable: bool },
    Link,
}

/// Put `content` at `path` (absolute, resolved) as `what`, whatever non-folder is there
/// now (a file, or a link, which is replaced, never followed): the checkpoint restore's
/// write. Missing folders are made; every folder on the way is opened without following
/// links; the new file or link is made beside the old one and renamed over it. A file gets
/// 0666 or 0777 less the umask, as git gives the files it checks out; for a link, `content`
/// is its target.
pub fn put(path: &Path, content: &[u8], what: PutKind) -> Result<Written, WriteError> {
    let (parent, name) = split(path)?;
    let dir = open_dir(parent, Some(0o777))?;
    let target = c_name(name)?;
    let old = stat_at(dir.as_raw_fd(), &target)?;
    if old.as_ref().is_some_and(|st| kind(st) == libc::S_IFDIR) {
        return Err(WriteError::Directory);
    }
    let temp_name = temp_name(name)?;
    let made = (|| -> io::Result<()> {
        match what {
            PutKind::Link => {
                let link_target = CString::new(content)
                    .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
                // SAFETY: NUL-terminated strings and a valid directory descriptor.
                check(unsafe {
                    libc::symlinkat(link_target.as_ptr(), dir.as_raw_fd(), temp_name.as_ptr())
                })?;
            }
            PutKind::File { executable } => {
                let bits: libc::c_uint = if executable { 0o777 } else { 0o666 };
                let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC;
                // SAFETY: a valid directory descriptor and a NUL-terminated name.
                let fd = check(unsafe {
                    libc::openat(dir.as_raw_fd(), temp_name.as_ptr(), flags, bits)
                })?;
                // SAFETY: just opened, owned by nothing else.
                let mut file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
                file.write_all(content)?;
                file.flush()?;
            }
        }
        Ok(())
    })();
    rename_over(&dir, &temp_name, &target, made, old.is_some())
}

/// Remove the file or link at `path` (absolute, resolved), never following a link on the
/// way: whether something was there. A folder is not removed ([`WriteError::Directory`]).
pub fn remove(path: &Path) -> Result<bool, WriteError> {
    let (parent, name) = split(path)?;
    let dir = match open_dir(parent, None) {
        Ok(dir) => dir,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e.into()),
    };
    let target = c_name(name)?;
    match stat_at(dir.as_raw_fd(), &target)? {
        None => Ok(false),
        Some(st) if kind(&st) == libc::S_IFDIR => Err(WriteError::Directory),
        Some(_) => {
            // SAFETY: a valid directory descriptor and a NUL-terminated name.
            check(unsafe { libc::unlinkat(dir.as_raw_fd(), target.as_ptr(), 0) })?;
            Ok(true)
        }
    }
}

/// Remove the folder at `path` if it is empty (and not a link): whether it was removed.
pub fn remove_empty_dir(path: &Path) -> io::Result<bool> {
    let (parent, name) = split(path)?;
    let dir = open_dir(parent, None)?;
    let target = c_name(name)?;
    // SAFETY: a valid directory descriptor and a NUL-terminated name.
    let ret = unsafe { libc::unlinkat(dir.as_raw_fd(), target.as_ptr(), libc::AT_REMOVEDIR) };
    if ret == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::ENOTEMPTY | libc::EEXIST | libc::ENOENT | libc::ENOTDIR) => Ok(false),
        _ => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No temporary file of a write is left behind in `dir`.
    fn no_temporary_file_in(dir: &Path) {
        let names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        assert!(names.iter().all(|n| !n.contains(".rein-")), "{names:?}");
    }
    use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};

    #[test]
    fn dangling_links_lead_where_they_point() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        symlink(".rein/config.toml", root.join("cfg")).unwrap();
        assert_eq!(
            resolve(Path::new("cfg"), &root).unwrap(),
            root.join(".rein/config.toml")
        );
        // A dangling link to a directory, then more components.
        symlink("/nowhere/yet", root.join("d")).unwrap();
        assert_eq!(
            resolve(Path::new("d/x/../y"), &root).unwrap(),
            PathBuf::from("/nowhere/yet/y")
        );
        // Relative targets resolve against the link's folder, through further links.
        std::fs::create_dir(root.join("sub")).unwrap();
        symlink("../cfg", root.join("sub/again")).unwrap();
        assert_eq!(
            resolve(Path::new("sub/again"), &root).unwrap(),
            root.join(".rein/config.toml")
        );
    }

    #[test]
    fn the_budget_counts_links_only_and_a_loop_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir(root.join("src")).unwrap();
        symlink("/etc", root.join("out")).unwrap();
        let long = format!("{}out/hostname", "src/../".repeat(500));
        assert_eq!(
            resolve(Path::new(&long), &root).unwrap(),
            PathBuf::from("/etc/hostname")
        );
        symlink("b", root.join("a")).unwrap();
        symlink("a", root.join("b")).unwrap();
        assert_eq!(
            resolve(Path::new("a/x"), &root).err(),
            Some(TooManyLinks(PathBuf::from("a/x")))
        );
    }

    #[test]
    fn writes_never_go_through_a_link_and_replace_hard_links() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        let outside = tempfile::tempdir().unwrap();
        // A folder on the way that is a link: refused.
        symlink(outside.path(), root.join("via")).unwrap();
        let err = write(&root.join("via/file"), b"x").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("a symbolic link appeared on the way after rein checked the path"),
            "{err}"
        );
        assert!(!outside.path().join("file").exists());
        // A final name that is a link: refused, the target untouched.
        std::fs::write(outside.path().join("t"), "old").unwrap();
        symlink(outside.path().join("t"), root.join("l")).unwrap();
        assert!(write(&root.join("l"), b"new").is_err());
        assert_eq!(
            std::fs::read_to_string(outside.path().join("t")).unwrap(),
            "old"
        );
        // A hard link: the name gets the new content, the other name keeps the old.
        std::fs::write(root.join("h"), "old").unwrap();
        std::fs::set_permissions(root.join("h"), std::fs::Permissions::from_mode(0o750)).unwrap();
        std::fs::hard_link(root.join("h"), root.join("h2")).unwrap();
        assert_eq!(write(&root.join("h"), b"new").unwrap(), Written::Replaced);
        assert_eq!(std::fs::read_to_string(root.join("h")).unwrap(), "new");
        assert_eq!(std::fs::read_to_string(root.join("h2")).unwrap(), "old");
        let meta = std::fs::metadata(root.join("h")).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o750);
        // Missing folders are made; a directory is refused.
        assert_eq!(
            write(&root.join("a/b/c.txt"), b"c").unwrap(),
            Written::Created
        );
        assert!(matches!(
            write(&root.join("a"), b"x"),
            Err(WriteError::Directory)
        ));
        // No temporary file is left behind.
        no_temporary_file_in(&root);
    }

    /// A link planted where the write's temporary file goes (its name is predictable: the
    /// file's name, rein's pid and a counter) is neither followed nor replaced: the write
    /// fails and the link's target keeps its content.
    #[test]
    fn a_link_planted_at_the_temporary_name_is_not_followed() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("t");
        std::fs::write(&target, "old").unwrap();
        // Other tests' writes take numbers too: cover the next few hundred.
        let next = NEXT_TEMP.load(Ordering::Relaxed);
        for n in next..next + 500 {
            let name = format!(".f.rein-{}-{n}.tmp", std::process::id());
            symlink(&target, root.join(name)).unwrap();
        }
        assert!(write(&root.join("f"), b"new").is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "old");
        assert!(!root.join("f").exists());
    }

    /// A folder that cannot be made: the error is mkdir's own ("Operation not permitted"
    /// in sysfs), not the "not found" of the open that follows it.
    #[test]
    fn a_folder_that_cannot_be_made_gives_mkdirs_error() {
        // sysfs refuses new folders, to root too; without it there is nothing to try.
        if !Path::new("/sys/kernel").is_dir() {
            eprintln!("skipped: no sysfs at /sys");
            return;
        }
        let err = open_dir(Path::new("/sys/kernel/rein-test-no/deeper"), Some(0o700))
            .expect_err("sysfs makes no folder");
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied, "{err}");
        let err = write(Path::new("/sys/kernel/rein-test-no/file"), b"x").unwrap_err();
        assert!(
            err.to_string().contains("not permitted") || err.to_string().contains("denied"),
            "{err}"
        );
    }

    /// A FIFO, a socket or a device at the path: refused at once, without opening it (a
    /// FIFO's open would block with no reader, a device's write would go to the device)
    /// and without renaming a file over it (the FIFO, the socket and the device stay).
    #[test]
    fn writes_over_a_fifo_a_socket_or_a_device_are_refused_and_leave_it_alone() {
        use std::os::unix::fs::FileTypeExt;
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        let fifo = root.join("fifo");
        let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let socket = root.join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let mut special = vec![fifo, socket];
        // A device of our own (a null device made in the temporary folder, where root may
        // make one); elsewhere /dev/null, which no one but root could replace.
        let device = root.join("null");
        let dc = CString::new(device.as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path; makedev of /dev/null's numbers.
        let made = unsafe { libc::mknod(dc.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 3)) };
        if made == 0 {
            special.push(device);
        } else if unsafe { libc::geteuid() } != 0 {
            special.push(PathBuf::from("/dev/null"));
        }
        for path in &special {
            let before = std::fs::symlink_metadata(path).unwrap().file_type();
            let err = write(path, b"x").unwrap_err();
            assert!(
                matches!(err, WriteError::Special),
                "{}: {err}",
                path.display()
            );
            assert!(err.to_string().contains("not a regular file"), "{err}");
            let after = std::fs::symlink_metadata(path).unwrap().file_type();
            assert_eq!(before, after, "{} was replaced", path.display());
            assert!(after.is_fifo() || after.is_socket() || after.is_char_device());
        }
        assert!(special.len() >= 2);
        // A FIFO on the way, where a folder should be: refused at once, never opened (an
        // open without O_DIRECTORY would wait for a writer).
        let err = write(&root.join("fifo/file"), b"x").unwrap_err();
        assert!(
            matches!(&err, WriteError::Io(e) if e.raw_os_error() == Some(libc::ENOTDIR)),
            "{err}"
        );
        assert!(open_read(&root.join("fifo/file")).is_err());
        no_temporary_file_in(&root);
    }

    /// A chain of exactly MAX_LINKS links resolves; one more is refused.
    #[test]
    fn the_budget_is_exactly_max_links() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::write(root.join("end"), "").unwrap();
        symlink("end", root.join("l0")).unwrap();
        for i in 1..=MAX_LINKS {
            symlink(format!("l{}", i - 1), root.join(format!("l{i}"))).unwrap();
        }
        let last = format!("l{}", MAX_LINKS - 1);
        assert_eq!(resolve(Path::new(&last), &root).unwrap(), root.join("end"));
        let over = format!("l{MAX_LINKS}");
        assert_eq!(
            resolve(Path::new(&over), &root),
            Err(TooManyLinks(PathBuf::from(&over)))
        );
    }

    /// A small text file is read whole up to its limit and refused past it; anything that
    /// is not a regular file is refused by what it is, without blocking on a FIFO.
    #[test]
    fn small_text_is_read_whole_or_refused_by_what_it_is() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        let file = root.join("config.toml");
        std::fs::write(&file, "x".repeat(100)).unwrap();
        assert_eq!(read_small_text(&file, 100).unwrap(), "x".repeat(100));
        let err = read_small_text(&file, 99).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().contains("larger than"), "{err}");
        std::fs::write(&file, b"a\xFFb").unwrap();
        assert!(read_small_text(&file, 100)
            .unwrap_err()
            .to_string()
            .contains("not UTF-8"));
        let fifo = root.join("fifo");
        let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let socket = root.join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        for (path, what) in [
            (root.clone(), "a directory"),
            (fifo, "a named pipe"),
            (PathBuf::from("/dev/null"), "a device"),
        ] {
            let err = read_small_text(&path, 100).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{what}");
            assert_eq!(err.to_string(), format!("it is {what}, not a regular file"));
        }
        // A socket cannot even be opened as a file.
        assert!(read_small_text(&socket, 100).is_err());
    }

    #[test]
    fn reads_never_go_through_a_link() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::write(root.join("real"), "text").unwrap();
        symlink(root.join("real"), root.join("link")).unwrap();
        assert!(open_read(&root.join("link")).is_err());
        let mut s = String::new();
        std::io::Read::read_to_string(&mut open_read(&root.join("real")).unwrap(), &mut s).unwrap();
        assert_eq!(s, "text");
    }
}
