//! Unified diffs of a file change, for the approval prompt of `write_file` and
//! `str_replace`: the user sees exactly what would change before allowing it.
//!
//! A plain longest-common-subsequence over lines, bounded so a huge file cannot stall the
//! agent: past `MAX_CELLS` comparisons the middle is shown as removed and added in full.

use super::str_replace;
use super::ToolContext;

/// Most line comparisons the LCS table may hold (about 16 MB of u32).
const MAX_CELLS: usize = 4_000_000;
/// Lines of context around each change.
const CONTEXT: usize = 3;
/// Longest preview returned, in lines.
const MAX_LINES: usize = 400;
/// Largest file read for a preview: the file as it is now is read as a regular file with
/// this cap (a pipe, a device or a link to `/dev/zero` gives no preview, never a hang).
const MAX_READ_BYTES: u64 = 16 * 1024 * 1024;

/// The file at `path` as it is now, for a preview: empty when there is none, `None` when it
/// is not a regular text file of at most [`MAX_READ_BYTES`].
fn current(path: &std::path::Path) -> Option<String> {
    match crate::host::safe_fs::read_small_text(path, MAX_READ_BYTES) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(String::new()),
        Err(_) => None,
    }
}

/// The diff `write_file` would make (`content` at `path`), from the file as it is now.
pub fn write_file_preview(path: &str, content: &str, ctx: &ToolContext) -> Option<String> {
    let old = current(&ctx.resolve(path))?;
    Some(unified(&shown_path(path, ctx), &old, content))
}

/// `path` as a diff header names it: relative to the project when it is inside, else
/// without its leading `/` (`a/etc/hosts`, never `a//etc/hosts`).
fn shown_path(path: &str, ctx: &ToolContext) -> String {
    let full = ctx.resolve(path);
    match full.strip_prefix(&ctx.root) {
        Ok(inside) if !inside.as_os_str().is_empty() => inside.display().to_string(),
        _ => path.trim_start_matches('/').to_string(),
    }
}

/// The diff `str_replace` would make; `None` when it would fail (the tool says why).
pub fn str_replace_preview(args: &str_replace::Args, ctx: &ToolContext) -> Option<String> {
    let path = ctx.resolve(&args.path);
    let old = current(&path).filter(|old| !old.is_empty())?;
    if args.old.is_empty() || !old.contains(&args.old) {
        return None;
    }
    let new = if args.replace_all {
        old.replace(&args.old, &args.new)
    } else {
        old.replacen(&args.old, &args.new, 1)
    };
    Some(unified(&shown_path(&args.path, ctx), &old, &new))
}

/// A unified diff of `old` → `new` with a `--- a/PATH` / `+++ b/PATH` header.
pub fn unified(path: &str, old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let ops = diff_lines(&a, &b);
    let mut out = vec![format!("--- a/{path}"), format!("+++ b/{path}")];
    if ops.iter().all(|op| matches!(op, Op::Same(..))) {
        out.push("(no change)".to_string());
        return out.join("\n");
    }
    // Group the operations into hunks with CONTEXT lines around each change.
    let changed: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, op)| !matches!(op, Op::Same(..)))
        .map(|(i, _)| i)
        .collect();
    let mut hunks: Vec<(usize, usize)> = Vec::new();
    for &i in &changed {
        let start = i.saturating_sub(CONTEXT);
        let end = (i + CONTEXT + 1).min(ops.len());
        match hunks.last_mut() {
            Some(last) if start <= last.1 => last.1 = end,
            _ => hunks.push((start, end)),
        }
    }
    for (start, end) in hunks {
        let (mut a_line, mut b_line) = (1, 1);
        for op in &ops[..start] {
            match op {
                Op::Same(..) => {
                    a_line += 1;
                    b_line += 1;
                }
                Op::Del(_) => a_line += 1,
                Op::Add(_) => b_line += 1,
            }
        }
        let a_len = ops[start..end]
            .iter()
            .filter(|op| !matches!(op, Op::Add(_)))
            .count();
        let b_len = ops[start..end]
            .iter()
            .filter(|op| !matches!(op, Op::Del(_)))
            .count();
        out.push(format!("@@ -{a_line},{a_len} +{b_line},{b_len} @@"));
        for (k, op) in ops[start..end].iter().enumerate() {
            // Lines past the limit are counted, never formatted: a huge file's diff costs
            // the lines shown.
            if out.len() >= MAX_LINES {
                let more = out.len() - MAX_LINES + (end - start - k);
                out.truncate(MAX_LINES);
                out.push(format!("… ({more} more lines of diff)"));
                return out.join("\n");
            }
            out.push(match op {
                Op::Same(line, _) => format!(" {line}"),
                Op::Del(line) => format!("-{line}"),
                Op::Add(line) => format!("+{line}"),
            });
        }
    }
    out.join("\n")
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Op<'a> {
    Same(&'a str, &'a str),
    Del(&'a str),
    Add(&'a str),
}

/// Line operations turning `a` into `b`.
fn diff_lines<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<Op<'a>> {
    // Common prefix and suffix first: most edits touch a small middle.
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut ops: Vec<Op<'a>> = a[..prefix].iter().map(|l| Op::Same(l, l)).collect();
    if am.len().saturating_mul(bm.len()) > MAX_CELLS {
        ops.extend(am.iter().map(|l| Op::Del(l)));
        ops.extend(bm.iter().map(|l| Op::Add(l)));
    } else {
        ops.extend(lcs_ops(am, bm));
    }
    ops.extend(a[a.len() - suffix..].iter().map(|l| Op::Same(l, l)));
    ops
}

fn lcs_ops<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<Op<'a>> {
    let (n, m) = (a.len(), b.len());
    // table[i][j] = LCS length of a[i..] and b[j..]
    let width = m + 1;
    let mut table = vec![0u32; (n + 1) * width];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            table[i * width + j] = if a[i] == b[j] {
                table[(i + 1) * width + j + 1] + 1
            } else {
                table[(i + 1) * width + j].max(table[i * width + j + 1])
            };
        }
    }
    let mut ops = Vec::with_capacity(n + m);
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if a[i] == b[j] {
            ops.push(Op::Same(a[i], b[j]));
            i += 1;
            j += 1;
        } else if table[(i + 1) * width + j] >= table[i * width + j + 1] {
            ops.push(Op::Del(a[i]));
            i += 1;
        } else {
            ops.push(Op::Add(b[j]));
            j += 1;
        }
    }
    ops.extend(a[i..].iter().map(|l| Op::Del(l)));
    ops.extend(b[j..].iter().map(|l| Op::Add(l)));
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 41: the file a write would replace is read with a cap and never waited on: a
    /// pipe a command made, or a link to `/dev/zero`, gives no preview (the test finishes).
    #[test]
    fn a_pipe_or_a_device_in_place_of_the_file_gives_no_preview() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ctx = crate::tools::test_context(&root, std::time::Duration::from_secs(5));
        let made = std::process::Command::new("mkfifo")
            .arg(root.join("out.txt"))
            .status();
        assert!(made.unwrap().success());
        std::os::unix::fs::symlink("/dev/zero", root.join("zero.txt")).unwrap();
        for path in ["out.txt", "zero.txt"] {
            assert_eq!(write_file_preview(path, "x\n", &ctx), None, "{path}");
            let args = str_replace::Args {
                path: path.to_string(),
                old: "a".to_string(),
                new: "b".to_string(),
                replace_all: false,
            };
            assert_eq!(str_replace_preview(&args, &ctx), None, "{path}");
        }
        assert!(write_file_preview("new.txt", "x\n", &ctx).is_some());
    }

    #[test]
    fn a_one_line_change_has_context_and_line_numbers() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\n";
        assert_eq!(
            unified("x.txt", old, new),
            "--- a/x.txt\n+++ b/x.txt\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h"
        );
    }

    #[test]
    fn the_header_names_the_path_in_the_project_or_without_a_double_slash() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ctx = crate::tools::test_context(&root, std::time::Duration::from_secs(5));
        let inside = root.join("src/a.rs");
        let preview = write_file_preview(&inside.display().to_string(), "x\n", &ctx).unwrap();
        assert!(
            preview.starts_with("--- a/src/a.rs\n+++ b/src/a.rs"),
            "{preview}"
        );
        let preview = write_file_preview("src/b.rs", "x\n", &ctx).unwrap();
        assert!(preview.starts_with("--- a/src/b.rs\n"), "{preview}");
        let outside = tempfile::tempdir().unwrap();
        let elsewhere = outside.path().canonicalize().unwrap().join("c.txt");
        let preview = write_file_preview(&elsewhere.display().to_string(), "x\n", &ctx).unwrap();
        let header = preview.lines().next().unwrap_or_default().to_string();
        assert!(!header.contains("//"), "{header}");
        assert!(header.ends_with("/c.txt"), "{header}");
    }

    #[test]
    fn new_files_and_no_change() {
        assert_eq!(
            unified("n.rs", "", "fn main() {}\n"),
            "--- a/n.rs\n+++ b/n.rs\n@@ -1,0 +1,1 @@\n+fn main() {}"
        );
        assert!(unified("s", "same\n", "same\n").ends_with("(no change)"));
    }

    #[test]
    fn far_apart_changes_make_two_hunks() {
        let old: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 3\n", "line three\n")
            .replace("line 28\n", "line twenty-eight\n");
        let diff = unified("f", &old, &new);
        assert_eq!(diff.matches("\n@@ ").count(), 2, "{diff}");
    }

    #[test]
    fn huge_inputs_stay_bounded() {
        let old: String = (0..5000).map(|i| format!("old {i}\n")).collect();
        let new: String = (0..5000).map(|i| format!("new {i}\n")).collect();
        let diff = unified("big", &old, &new);
        assert!(diff.lines().count() <= MAX_LINES + 1);
        assert!(diff.ends_with("more lines of diff)"));
    }

    #[test]
    fn str_replace_preview_follows_the_tool() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "let x = 1;\nlet y = 2;\n").unwrap();
        let ctx = crate::tools::test_context(dir.path(), std::time::Duration::from_secs(5));
        let args = str_replace::Args {
            path: "a.rs".into(),
            old: "let y = 2;".into(),
            new: "let y = 3;".into(),
            replace_all: false,
        };
        let diff = str_replace_preview(&args, &ctx).unwrap();
        assert!(diff.contains("-let y = 2;\n+let y = 3;"), "{diff}");
        let missing = str_replace::Args {
            old: "nope".into(),
            ..args
        };
        assert_eq!(str_replace_preview(&missing, &ctx), None);
    }
}
