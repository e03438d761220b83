//! `read_file`: show a text file to the model as numbered lines, one page at a time.
//!
//! A path (relative to the project root or absolute), an optional 1-based first line and an
//! optional line count flow in; out comes `cat -n` style text: the line number right-aligned
//! in six columns, a tab, the line. The file is streamed in chunks, so a huge log costs a
//! page of memory, not the whole file: lines before the page are only counted, overlong
//! lines are cut, and the page stops early at about 256 KiB. A footer says which lines were
//! shown and the `offset` to read on with. Directories, missing files, binary files (a NUL
//! byte in the first 8 KiB) and files that are not UTF-8 are refused with a sentence that
//! says what to do instead. The small text helpers at the bottom are shared with
//! `str_replace` and `write_file`.

use std::path::Path;

use serde_json::json;
use tokio::io::AsyncReadExt;

use super::{ToolContext, ToolSpec};

pub const NAME: &str = "read_file";

/// Lines shown when the model gives no `limit`.
const DEFAULT_LIMIT: i64 = 2000;
/// Characters of one line shown before it is cut.
const MAX_LINE_CHARS: usize = 2000;
/// Bytes of one line kept while streaming: enough for `MAX_LINE_CHARS` + 1 chars of any width.
const LINE_KEEP_BYTES: usize = (MAX_LINE_CHARS + 1) * 4;
/// About how much text one call returns.
const MAX_OUTPUT_BYTES: usize = 256 * 1024;
/// How much of the start of a file is searched for a NUL byte to call it binary.
pub(super) const BINARY_SNIFF_BYTES: usize = 8 * 1024;
const CHUNK_BYTES: usize = 64 * 1024;

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: include_str!("../../assets/tools/read_file.md"),
        parameters: json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "File to read, relative to the project root or absolute."
                },
                "offset": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "1-based number of the first line to show (default 1)."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Maximum number of lines to show (default 2000)."
                }
            },
            "required": ["path"],
            "additionalProperties": false
        }),
    }
}

#[derive(Debug, serde::Deserialize)]
pub struct Args {
    pub path: String,
    pub offset: Option<i64>,
    pub limit: Option<i64>,
}

pub async fn run(args: Args, ctx: &ToolContext) -> Result<String, String> {
    if args.path.trim().is_empty() {
        return Err("`path` is empty; give the file to read".to_string());
    }
    let offset = args.offset.unwrap_or(1);
    if offset < 1 {
        return Err(format!(
            "offset {offset} is not a line number; lines are numbered from 1, so use offset=1 or more"
        ));
    }
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    if limit < 1 {
        return Err(format!(
            "limit {limit} would show nothing; use a limit of 1 or more (default {DEFAULT_LIMIT})"
        ));
    }
    let (offset, limit) = (offset as u64, limit as u64);

    let resolved = ctx.locate(&args.path);
    let shown_path = display_path(ctx, &resolved);
    // Exactly where the rules looked, never through a link (see `safe_fs`).
    let (file, meta) = open_exactly(&resolved, &shown_path).await?;
    if meta.is_dir() {
        return Err(format!(
            "{shown_path} is a directory, not a file; list it with `bash ls {shown_path}` instead"
        ));
    }
    if !meta.is_file() {
        return Err(not_regular_message(&shown_path));
    }
    let mut page = Page::new(offset, limit);
    // The editor's text (its unsaved buffer), once the disk said the path is a file
    // reached without a link.
    if let Some(editor) = &ctx.editor {
        let text = editor
            .read(&resolved)
            .await
            .map_err(|e| format!("could not read {shown_path} in the editor: {e}"))?;
        if text.is_empty() {
            return Ok("(empty file)".to_string());
        }
        if let Some(lsp) = &ctx.lsp {
            lsp.read(&resolved, Some(text.clone()));
        }
        page.feed(text.as_bytes());
        page.finish();
        return page.render(&shown_path);
    }
    let mut file = tokio::fs::File::from_std(file);

    let mut utf8 = Utf8Stream::default();
    let mut chunk = vec![0u8; CHUNK_BYTES];
    let mut total_bytes: u64 = 0;
    loop {
        // Fill the first chunk up to the sniff size so the binary check sees all of it.
        let n = if total_bytes == 0 {
            read_at_least(&mut file, &mut chunk, BINARY_SNIFF_BYTES).await
        } else {
            file.read(&mut chunk).await
        }
        .map_err(|e| format!("could not read {shown_path}: {e}"))?;
        if n == 0 {
            break;
        }
        let data = &chunk[..n];
        if total_bytes == 0 && looks_binary(data) {
            return Err(binary_message(&shown_path, meta.len(), "read_file shows"));
        }
        total_bytes += n as u64;
        if !utf8.feed(data) {
            return Err(not_utf8_message(&shown_path));
        }
        page.feed(data);
    }
    if !utf8.finish() {
        return Err(not_utf8_message(&shown_path));
    }
    page.finish();

    if total_bytes == 0 {
        return Ok("(empty file)".to_string());
    }
    if let Some(lsp) = &ctx.lsp {
        lsp.read(&resolved, None);
    }
    page.render(&shown_path)
}

/// The lines of one call: which to show, what was shown, and where the text was cut short.
struct Page {
    offset: u64,
    limit: u64,
    /// Lines finished so far (the number of the last complete line).
    lines: u64,
    /// The current line's first bytes (at most `LINE_KEEP_BYTES`) and its full length.
    current: Vec<u8>,
    current_len: usize,
    out: String,
    shown: u64,
    /// The line at which the size cap stopped the page, if it did.
    stopped_at: Option<u64>,
}

impl Page {
    fn new(offset: u64, limit: u64) -> Self {
        Page {
            offset,
            limit,
            lines: 0,
            current: Vec::new(),
            current_len: 0,
            out: String::new(),
            shown: 0,
            stopped_at: None,
        }
    }

    fn feed(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            match data.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    self.extend_line(&data[..i]);
                    self.finish_line();
                    data = &data[i + 1..];
                }
                None => {
                    self.extend_line(data);
                    data = &[];
                }
            }
        }
    }

    fn finish(&mut self) {
        // A last line without a newline still counts.
        if self.current_len > 0 {
            self.finish_line();
        }
    }

    fn extend_line(&mut self, bytes: &[u8]) {
        self.current_len += bytes.len();
        if self.wants_next_line() {
            let room = LINE_KEEP_BYTES.saturating_sub(self.current.len());
            self.current
                .extend_from_slice(&bytes[..bytes.len().min(room)]);
        }
    }

    /// Whether the line being read will be shown (so its bytes are worth keeping).
    fn wants_next_line(&self) -> bool {
        let number = self.lines + 1;
        number >= self.offset && self.shown < self.limit && self.stopped_at.is_none()
    }

    fn finish_line(&mut self) {
        if self.wants_next_line() {
            let number = self.lines + 1;
            let line = format_line(number, &self.current);
            if self.out.len() + line.len() > MAX_OUTPUT_BYTES && self.shown > 0 {
                self.stopped_at = Some(number);
            } else {
                self.out.push_str(&line);
                self.shown += 1;
            }
        }
        self.lines += 1;
        self.current.clear();
        self.current_len = 0;
    }

    fn render(self, shown_path: &str) -> Result<String, String> {
        let total = self.lines;
        if self.shown == 0 {
            return Err(format!(
                "offset {} is past the end of {shown_path}, which has {}; use an offset from 1 to {total}",
                self.offset,
                crate::text::plural(total, "line"),
            ));
        }
        let first = self.offset;
        let last = first + self.shown - 1;
        let mut text = self.out;
        if self.stopped_at.is_some() {
            text.push_str(&format!(
                "(output capped at about {} KiB: showing lines {first}-{last} of {total}; call read_file with offset={} to read on)",
                MAX_OUTPUT_BYTES / 1024,
                last + 1
            ));
        } else if last < total {
            text.push_str(&format!(
                "(showing lines {first}-{last} of {total}; call read_file with offset={} to read on)",
                last + 1
            ));
        } else if first > 1 {
            text.push_str(&format!(
                "(showing lines {first}-{last} of {total}; this is the end of the file)"
            ));
        } else {
            // The whole file: no footer, and no dangling newline.
            text.truncate(text.trim_end_matches('\n').len());
        }
        Ok(text)
    }
}

/// One `cat -n` style line with its newline; `kept` may be the cut-off start of a long line.
fn format_line(number: u64, kept: &[u8]) -> String {
    // The kept bytes may end inside a character when the line was cut; show the valid part.
    let text = match std::str::from_utf8(kept) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&kept[..e.valid_up_to()]).unwrap_or_default(),
    };
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((cut, _)) => format!("{number:>6}\t{}… [line truncated]\n", &text[..cut]),
        None => {
            let text = text.strip_suffix('\r').unwrap_or(text);
            format!("{number:>6}\t{text}\n")
        }
    }
}

/// Checks UTF-8 across chunk boundaries: an incomplete character at the end of one chunk is
/// carried into the next.
#[derive(Default)]
struct Utf8Stream {
    carry: Vec<u8>,
}

impl Utf8Stream {
    /// Feed the next chunk; false once the bytes cannot be UTF-8.
    fn feed(&mut self, data: &[u8]) -> bool {
        let joined;
        let bytes = if self.carry.is_empty() {
            data
        } else {
            let mut buf = std::mem::take(&mut self.carry);
            buf.extend_from_slice(data);
            joined = buf;
            &joined[..]
        };
        match std::str::from_utf8(bytes) {
            Ok(_) => true,
            // An incomplete character at the very end may be finished by the next chunk.
            Err(e) if e.error_len().is_none() => {
                self.carry = bytes[e.valid_up_to()..].to_vec();
                true
            }
            Err(_) => false,
        }
    }

    /// False when the input ended inside a character.
    fn finish(&self) -> bool {
        self.carry.is_empty()
    }
}

/// Read until `buf` holds at least `want` bytes or the file ends.
async fn read_at_least(
    file: &mut tokio::fs::File,
    buf: &mut [u8],
    want: usize,
) -> std::io::Result<usize> {
    let want = want.min(buf.len());
    let mut filled = 0;
    while filled < want {
        let n = file.read(&mut buf[filled..]).await?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    Ok(filled)
}

/// How a path is named back to the model: relative to the project root when inside it.
pub(super) fn display_path(ctx: &ToolContext, resolved: &Path) -> String {
    match resolved.strip_prefix(&ctx.root) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => resolved.display().to_string(),
    }
}

/// Whether the start of a file (a NUL byte in its first 8 KiB) marks it as binary.
pub(super) fn looks_binary(start: &[u8]) -> bool {
    start[..start.len().min(BINARY_SNIFF_BYTES)].contains(&0)
}

/// `tool_verb` says what the refusing tool does, e.g. "read_file shows".
pub(super) fn binary_message(shown_path: &str, len: u64, tool_verb: &str) -> String {
    format!(
        "{shown_path} is a binary file ({}); {tool_verb} text only",
        crate::text::plural(len, "byte")
    )
}

/// For FIFOs, sockets and devices, which could block a read or write forever.
pub(super) fn not_regular_message(shown_path: &str) -> String {
    format!(
        "{shown_path} is not a regular file (it is a pipe, socket or device); use `bash` for it"
    )
}

pub(super) fn not_utf8_message(shown_path: &str) -> String {
    format!(
        "{shown_path} is not UTF-8 text (it may use another encoding such as Latin-1); \
         only UTF-8 text can be shown or edited, so inspect it with `bash` (e.g. `file` or `iconv`)"
    )
}

/// A sentence for a failed open or stat, with the common cases spelled out.
pub(super) fn io_error_message(shown_path: &str, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => {
            format!("{shown_path} does not exist; check the path (e.g. with `bash ls`)")
        }
        std::io::ErrorKind::PermissionDenied => {
            format!("{shown_path} cannot be read: permission denied")
        }
        _ => format!("could not open {shown_path}: {e}"),
    }
}

/// Open `resolved` for reading with [`crate::host::safe_fs::open_read`] (off the async threads),
/// with its metadata; errors in the model's words.
pub(super) async fn open_exactly(
    resolved: &Path,
    shown_path: &str,
) -> Result<(std::fs::File, std::fs::Metadata), String> {
    let path = resolved.to_path_buf();
    let opened = tokio::task::spawn_blocking(move || {
        let file = crate::host::safe_fs::open_read(&path)?;
        let meta = file.metadata()?;
        Ok::<_, std::io::Error>((file, meta))
    })
    .await
    .map_err(|e| format!("could not open {shown_path}: {e}"))?;
    opened.map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) => format!(
            "could not open {shown_path}: {}",
            crate::host::safe_fs::describe(&e)
        ),
        _ => io_error_message(shown_path, &e),
    })
}

/// Read a whole file as UTF-8 text for editing, refusing directories, special files, binary
/// and non-UTF-8; `tool_verb` (e.g. "str_replace edits") goes into the binary-file refusal.
pub(super) async fn read_text(
    shown_path: &str,
    resolved: &Path,
    tool_verb: &str,
    editor: Option<&dyn super::editor::EditorFiles>,
) -> Result<String, String> {
    let (file, meta) = open_exactly(resolved, shown_path).await?;
    if meta.is_dir() {
        return Err(format!("{shown_path} is a directory, not a file"));
    }
    if !meta.is_file() {
        return Err(not_regular_message(shown_path));
    }
    if let Some(editor) = editor {
        return editor
            .read(resolved)
            .await
            .map_err(|e| format!("could not read {shown_path} in the editor: {e}"));
    }
    let mut bytes = Vec::new();
    tokio::io::AsyncReadExt::read_to_end(&mut tokio::fs::File::from_std(file), &mut bytes)
        .await
        .map_err(|e| io_error_message(shown_path, &e))?;
    if looks_binary(&bytes) {
        return Err(binary_message(shown_path, bytes.len() as u64, tool_verb));
    }
    String::from_utf8(bytes).map_err(|_| not_utf8_message(shown_path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_context;
    use std::time::Duration;

    fn ctx(dir: &tempfile::TempDir) -> ToolContext {
        test_context(dir.path(), Duration::from_secs(5))
    }

    fn args(path: &str, offset: Option<i64>, limit: Option<i64>) -> Args {
        Args {
            path: path.to_string(),
            offset,
            limit,
        }
    }

    fn numbered(range: std::ops::RangeInclusive<u64>) -> String {
        range.map(|i| format!("line {i}\n")).collect::<String>()
    }

    #[tokio::test]
    async fn shows_numbered_lines_like_cat_n() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "first\n\tsecond\nthird").unwrap();
        let out = run(args("a.txt", None, None), &ctx(&dir)).await.unwrap();
        assert_eq!(out, "     1\tfirst\n     2\t\tsecond\n     3\tthird");
    }

    #[tokio::test]
    async fn pages_with_offset_and_limit_and_says_how_to_read_on() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("big.txt"), numbered(1..=5123)).unwrap();
        let c = ctx(&dir);

        let out = run(args("big.txt", None, None), &c).await.unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2001);
        assert_eq!(lines[0], "     1\tline 1");
        assert_eq!(lines[1999], "  2000\tline 2000");
        assert_eq!(
            lines[2000],
            "(showing lines 1-2000 of 5123; call read_file with offset=2001 to read on)"
        );

        let out = run(args("big.txt", Some(5120), Some(2)), &c).await.unwrap();
        assert_eq!(
            out,
            "  5120\tline 5120\n  5121\tline 5121\n(showing lines 5120-5121 of 5123; call read_file with offset=5122 to read on)"
        );

        let out = run(args("big.txt", Some(5122), None), &c).await.unwrap();
        assert_eq!(
            out,
            "  5122\tline 5122\n  5123\tline 5123\n(showing lines 5122-5123 of 5123; this is the end of the file)"
        );
    }

    #[tokio::test]
    async fn offset_past_the_end_names_the_line_count() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), numbered(1..=7)).unwrap();
        let err = run(args("a.txt", Some(8), None), &ctx(&dir))
            .await
            .unwrap_err();
        assert!(
            err.contains("offset 8 is past the end of a.txt, which has 7 lines"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn rejects_offset_zero_negative_and_limit_zero() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "x\n").unwrap();
        let c = ctx(&dir);
        for offset in [0, -3] {
            let err = run(args("a.txt", Some(offset), None), &c)
                .await
                .unwrap_err();
            assert!(err.contains("numbered from 1"), "{err}");
        }
        let err = run(args("a.txt", None, Some(0)), &c).await.unwrap_err();
        assert!(err.contains("limit 0"), "{err}");
    }

    #[tokio::test]
    async fn empty_file_says_so() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("e.txt"), "").unwrap();
        let out = run(args("e.txt", None, None), &ctx(&dir)).await.unwrap();
        assert_eq!(out, "(empty file)");
    }

    #[tokio::test]
    async fn crlf_lines_are_shown_without_the_carriage_return() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("w.txt"), "one\r\ntwo\r\n").unwrap();
        let out = run(args("w.txt", None, None), &ctx(&dir)).await.unwrap();
        assert_eq!(out, "     1\tone\n     2\ttwo");
    }

    #[tokio::test]
    async fn refuses_binary_files_with_their_size() {
        let dir = tempfile::tempdir().unwrap();
        let mut bytes = b"ELF".to_vec();
        bytes.extend_from_slice(&[0, 1, 2, 3]);
        bytes.extend(std::iter::repeat_n(b'x', 93));
        std::fs::write(dir.path().join("prog"), &bytes).unwrap();
        let err = run(args("prog", None, None), &ctx(&dir)).await.unwrap_err();
        assert_eq!(
            err,
            "prog is a binary file (100 bytes); read_file shows text only"
        );
    }

    #[tokio::test]
    async fn refuses_text_that_is_not_utf8() {
        let dir = tempfile::tempdir().unwrap();
        // Latin-1 "café" on the second line.
        std::fs::write(dir.path().join("l1.txt"), b"hello\ncaf\xe9\n").unwrap();
        let err = run(args("l1.txt", None, None), &ctx(&dir))
            .await
            .unwrap_err();
        assert!(err.starts_with("l1.txt is not UTF-8 text"), "{err}");
    }

    #[tokio::test]
    async fn multibyte_characters_across_chunk_boundaries_are_fine() {
        let dir = tempfile::tempdir().unwrap();
        // 3-byte characters, so some land across the 64 KiB chunk boundaries.
        let line = "€".repeat(100);
        let text: String = (0..1000).map(|_| format!("{line}\n")).collect();
        std::fs::write(dir.path().join("euro.txt"), &text).unwrap();
        let out = run(args("euro.txt", Some(999), None), &ctx(&dir))
            .await
            .unwrap();
        assert!(
            out.starts_with(&format!("   999\t{line}\n  1000\t{line}")),
            "{out}"
        );
    }

    #[tokio::test]
    async fn cuts_overlong_lines() {
        let dir = tempfile::tempdir().unwrap();
        let long = "é".repeat(5000);
        std::fs::write(dir.path().join("min.js"), format!("{long}\nshort\n")).unwrap();
        let out = run(args("min.js", None, None), &ctx(&dir)).await.unwrap();
        let expected = format!(
            "     1\t{}… [line truncated]\n     2\tshort",
            "é".repeat(MAX_LINE_CHARS)
        );
        assert_eq!(out, expected);
    }

    #[tokio::test]
    async fn caps_the_page_at_about_256_kib() {
        let dir = tempfile::tempdir().unwrap();
        let line = "y".repeat(1000);
        let text: String = (0..1000).map(|_| format!("{line}\n")).collect();
        std::fs::write(dir.path().join("wide.txt"), &text).unwrap();
        let out = run(args("wide.txt", None, None), &ctx(&dir)).await.unwrap();
        assert!(out.len() <= MAX_OUTPUT_BYTES + 200, "{}", out.len());
        let footer = out.lines().last().unwrap();
        // 1008 bytes per line: 260 lines fit in 256 KiB.
        assert_eq!(
            footer,
            "(output capped at about 256 KiB: showing lines 1-260 of 1000; call read_file with offset=261 to read on)"
        );
    }

    #[tokio::test]
    async fn directory_and_missing_file_say_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        let c = ctx(&dir);
        let err = run(args("src", None, None), &c).await.unwrap_err();
        assert!(
            err.contains("src is a directory") && err.contains("bash ls"),
            "{err}"
        );
        let err = run(args("src/nope.rs", None, None), &c).await.unwrap_err();
        assert!(err.starts_with("src/nope.rs does not exist"), "{err}");
    }

    #[tokio::test]
    async fn refuses_a_fifo_instead_of_blocking_on_it() {
        let dir = tempfile::tempdir().unwrap();
        let status = std::process::Command::new("mkfifo")
            .arg(dir.path().join("pipe"))
            .status()
            .unwrap();
        assert!(status.success());
        let c = ctx(&dir);
        // A guard against a hang (opening a FIFO nobody writes blocks for ever), not a claim
        // about speed.
        let err = tokio::time::timeout(Duration::from_secs(120), run(args("pipe", None, None), &c))
            .await
            .expect("read_file blocked on a FIFO")
            .unwrap_err();
        assert!(err.starts_with("pipe is not a regular file"), "{err}");
    }

    #[tokio::test]
    async fn absolute_paths_inside_the_root_are_named_relative() {
        let dir = tempfile::tempdir().unwrap();
        let abs = dir.path().join("gone.txt");
        let err = run(args(abs.to_str().unwrap(), None, None), &ctx(&dir))
            .await
            .unwrap_err();
        assert!(err.starts_with("gone.txt does not exist"), "{err}");
    }
}
