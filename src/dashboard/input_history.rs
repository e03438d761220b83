//! What the user typed, kept across sessions like a shell's history: Up and Ctrl-R in the
//! dashboard reach the inputs of earlier sessions of the same project.
//!
//! One file, `<data dir>/history.jsonl`, a JSON object a line: `{"project": "/path",
//! "text": "..."}`, appended as each input is sent (`ui.input_history = false` turns it
//! off). Reading keeps the newest [`MAX_ENTRIES`] of one project and passes over lines it
//! cannot read, so a torn last line (a crash mid-write) or a hand edit loses only that
//! line. The file is the user's own (0600); past [`MAX_FILE_BYTES`] the older half is
//! dropped on the next write. A file grown far larger (by hand, or by an older rein) is read
//! from its end and cut on the next write the same way. Nothing here panics on what the
//! file holds.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The inputs of one project read back at the most.
pub const MAX_ENTRIES: usize = 1000;
/// Past this size the file is cut to its newer half.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// An input longer than this is not kept (a pasted log is no history).
pub const MAX_ENTRY_BYTES: usize = 64 * 1024;

/// The history file in rein's data folder.
pub fn path(data_dir: &Path) -> PathBuf {
    data_dir.join("history.jsonl")
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Line<'a> {
    #[serde(borrow)]
    project: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    text: std::borrow::Cow<'a, str>,
}

/// The newest [`MAX_ENTRIES`] inputs typed in `project`, oldest first, without a repeat
/// in a row. A missing or unreadable file is no history.
pub fn load(file: &Path, project: &Path) -> Vec<String> {
    let Ok(text) = read_tail(file, MAX_FILE_BYTES * 2) else {
        return Vec::new();
    };
    let project = project.to_string_lossy();
    // Only lines that hold the project's name as JSON writes it are parsed.
    let needle = serde_json::to_string(project.as_ref()).unwrap_or_default();
    let mut out: Vec<String> = Vec::new();
    for line in text.lines().filter(|l| l.contains(&needle)) {
        let Ok(entry) = serde_json::from_str::<Line<'_>>(line) else {
            continue;
        };
        if entry.project == project && out.last().map(String::as_str) != Some(&entry.text) {
            out.push(entry.text.into_owned());
        }
    }
    let extra = out.len().saturating_sub(MAX_ENTRIES);
    out.drain(..extra);
    out
}

/// Add `text`, typed in `project`, to the end of the file (created 0600). An empty or
/// overlong input is not kept.
pub fn append(file: &Path, project: &Path, text: &str) -> io::Result<()> {
    if text.trim().is_empty() || text.len() > MAX_ENTRY_BYTES {
        return Ok(());
    }
    let line = Line {
        project: project.to_string_lossy(),
        text: text.into(),
    };
    let mut json = serde_json::to_string(&line).map_err(io::Error::other)?;
    json.push('\n');
    if let Some(dir) = file.parent() {
        rein_core::host::private_fs::own_dir(dir)?;
    }
    // `O_NOFOLLOW`: never written through a link put in its place.
    let mut f = rein_core::host::private_fs::options()
        .create(true)
        .append(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(file)?;
    // A line torn by a crash would swallow this one: start on a fresh line.
    if !ends_with_newline(file)? {
        json.insert(0, '\n');
    }
    // One write of the whole line: appends of two rein processes do not interleave.
    f.write_all(json.as_bytes())?;
    if f.metadata()?.len() > MAX_FILE_BYTES {
        drop(f);
        shrink(file)?;
    }
    Ok(())
}

/// Whether the file is empty or ends a line.
fn ends_with_newline(file: &Path) -> io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = fs::File::open(file)?;
    if f.metadata()?.len() == 0 {
        return Ok(true);
    }
    f.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    f.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

/// The file's last `max` bytes from the first whole line in them (all of it when it is
/// smaller), never through a link; bytes that are not UTF-8 read as U+FFFD.
fn read_tail(file: &Path, max: u64) -> io::Result<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(file)?;
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let start = meta.len().saturating_sub(max);
    f.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    f.take(max).read_to_end(&mut bytes)?;
    if start > 0 {
        // Cut in the middle of a line: it starts after the first line end.
        let first = bytes
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| i + 1);
        bytes.drain(..first);
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Keep the newer half of the file's lines (written aside, then renamed over it, 0600);
/// a file grown far past the limit keeps the newer half of its last part.
fn shrink(file: &Path) -> io::Result<()> {
    let text = read_tail(file, MAX_FILE_BYTES * 2)?;
    let lines: Vec<&str> = text.lines().collect();
    let keep = &lines[lines.len() / 2..];
    let mut out = String::with_capacity(text.len() / 2 + 1);
    for line in keep {
        out.push_str(line);
        out.push('\n');
    }
    rein_core::host::private_fs::replace(file, out.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_come_back_per_project_oldest_first_and_bad_lines_are_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        let file = path(&dir.path().join("data"));
        let (a, b) = (Path::new("/work/a"), Path::new("/work/b"));
        assert_eq!(load(&file, a), Vec::<String>::new(), "no file, no history");
        append(&file, a, "first").unwrap();
        append(&file, b, "elsewhere").unwrap();
        append(&file, a, "second\nwith a line break").unwrap();
        append(&file, a, "second\nwith a line break").unwrap();
        append(&file, a, "   ").unwrap();
        append(&file, a, &"x".repeat(MAX_ENTRY_BYTES + 1)).unwrap();
        // A torn line (a crash mid-write) and a hand edit.
        let mut f = fs::OpenOptions::new().append(true).open(&file).unwrap();
        f.write_all(b"not json\n{\"project\": \"/work/a\", \"te")
            .unwrap();
        append(&file, a, "third").unwrap();
        assert_eq!(
            load(&file, a),
            ["first", "second\nwith a line break", "third"]
        );
        assert_eq!(load(&file, b), ["elsewhere"]);
        // The user's alone: the file 0600, the data folder it made 0700.
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(&dir.path().join("data")), 0o700);
    }

    #[test]
    fn only_the_newest_entries_are_read_and_a_big_file_keeps_its_newer_half() {
        let dir = tempfile::tempdir().unwrap();
        let file = path(dir.path());
        let p = Path::new("/p");
        let mut text = String::new();
        for i in 0..(MAX_ENTRIES + 5) {
            text.push_str(&format!("{{\"project\":\"/p\",\"text\":\"n{i}\"}}\n"));
        }
        fs::write(&file, &text).unwrap();
        let got = load(&file, p);
        assert_eq!(got.len(), MAX_ENTRIES);
        assert_eq!(got[0], "n5");
        // Past the size cap, the next write drops the older half.
        let big = "y".repeat(60 * 1024);
        for _ in 0..80 {
            append(&file, p, &big).unwrap();
        }
        let size = fs::metadata(&file).unwrap().len();
        assert!(size <= MAX_FILE_BYTES, "{size}");
        assert!(size > MAX_FILE_BYTES / 3, "{size}");
        assert_eq!(load(&file, p).last().map(String::len), Some(big.len()));
        // The shrunk file replaced the 0644 one a hand wrote: it is 0600 now.
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_in_place_of_the_file_is_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        fs::write(&target, "").unwrap();
        let file = path(dir.path());
        std::os::unix::fs::symlink(&target, &file).unwrap();
        assert!(append(&file, Path::new("/p"), "secret").is_err());
        assert_eq!(fs::read_to_string(&target).unwrap(), "");
    }

    /// Issue 25: a history far over the limit is still read (its newest part) and cut to
    /// size on the next write.
    #[test]
    fn a_history_far_over_the_limit_is_read_from_its_end_and_cut() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("history.jsonl");
        let project = Path::new("/p");
        let line = |text: &str| format!("{{\"project\":\"/p\",\"text\":\"{text}\"}}\n");
        let mut big = String::new();
        let filler = line(&"x".repeat(1000));
        while big.len() < 3 * MAX_FILE_BYTES as usize {
            big.push_str(&filler);
        }
        big.push_str(&line("the newest"));
        std::fs::write(&file, &big).unwrap();
        let loaded = load(&file, project);
        assert_eq!(loaded.last().map(String::as_str), Some("the newest"));
        append(&file, project, "one more").unwrap();
        let size = std::fs::metadata(&file).unwrap().len();
        assert!(size <= MAX_FILE_BYTES + 4096, "{size}");
        let loaded = load(&file, project);
        assert_eq!(
            loaded[loaded.len() - 2..],
            ["the newest".to_string(), "one more".to_string()]
        );
    }
}
