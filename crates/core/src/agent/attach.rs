//! The files a user message mentions (`@path`), attached to it for the model.
//!
//! In: the message's text, the project root, the permission policy and the limits
//! (`context.attach_max_bytes` per file, `context.attach_total_bytes` together). Out: one
//! [`Attachment`] per mentioned regular file inside the project, in the order mentioned,
//! each once, and a notice for each mention that was not attached for a reason the user
//! should hear. A mention that names nothing (a missing path, a folder, `@someone`) is
//! just text. A file is read exactly where the permission check looked and never through
//! a link ([`crate::host::safe_fs`]); one that resolves outside the project is not attached,
//! nor one the rules do not let `read_file` read without asking (`.env` and the other
//! sensitive files). A file longer than the limit is cut at a line break where one is
//! near, and the block says so and how to read the rest; a binary or non-UTF-8 file is
//! named, its bytes left out.
//!
//! A mention `@server:uri` whose `server` is a configured MCP server names one of its
//! resources: the agent reads it through the server (`runloop.rs`) within the same
//! limits and attaches it in a `<resource>` block. A `file://` resource is judged as the
//! path it names ([`resource_refused`]): one the rules do not let `read_file` read
//! without asking is not asked for.

use std::io::Read;
use std::path::Path;

use crate::conversation::mention::mentions;
use crate::conversation::Attachment;
use crate::permissions::readable::{self, NotReadable};
use crate::permissions::PermissionPolicy;

/// How much the attachments of one message may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttachLimits {
    pub per_file: usize,
    pub total: usize,
}

/// What attaching the mentions of one message gave.
#[derive(Debug, Default)]
pub struct Attached {
    pub files: Vec<Attachment>,
    /// One line per mention left out, naming the file and why.
    pub notices: Vec<String>,
}

/// How much of a file's start is searched for a NUL byte to call it binary.
const SNIFF_BYTES: usize = 8 * 1024;
/// Less than this left of the total, a further file is not attached at all (a few bytes
/// of it would tell the model nothing).
const MIN_PART: usize = 256;

/// Attach the files `text` mentions (see the module doc).
pub fn attach(
    text: &str,
    root: &Path,
    policy: &dyn PermissionPolicy,
    limits: AttachLimits,
) -> Attached {
    let mut out = Attached::default();
    let mut left = limits.total;
    let root_resolved =
        crate::host::safe_fs::resolve(root, Path::new("/")).unwrap_or_else(|_| root.to_path_buf());
    for (_, path) in mentions(text) {
        if out.files.iter().any(|a| a.path == path) {
            continue;
        }
        // The one rule for a file a text names (`permissions::readable`).
        let (resolved, size) = match readable::check(
            Path::new(path),
            &root_resolved,
            Some(&root_resolved),
            policy,
            root,
        ) {
            Ok(file) => (file.resolved, file.size),
            // Not a file: the mention is only text.
            Err(NotReadable::Nothing { .. } | NotReadable::NotAFile) => continue,
            Err(NotReadable::TooManyLinks) => {
                out.notices.push(format!(
                    "@{path} was not attached: it leads through too many links"
                ));
                continue;
            }
            Err(NotReadable::Outside) => {
                out.notices.push(format!(
                    "@{path} was not attached: it leads outside the project"
                ));
                continue;
            }
            Err(NotReadable::Asks(reason)) => {
                out.notices.push(format!(
                    "@{path} was not attached: {reason}; the model can still ask to read it"
                ));
                continue;
            }
        };
        if left < MIN_PART.min(limits.per_file).max(1) {
            out.notices.push(format!(
                "@{path} was not attached: the message's attachments already take \
                 context.attach_total_bytes ({} bytes)",
                limits.total
            ));
            continue;
        }
        match read_block(path, &resolved, size, limits.per_file.min(left)) {
            Ok((block, used)) => {
                left = left.saturating_sub(used);
                out.files.push(Attachment {
                    path: path.to_string(),
                    text: block,
                });
            }
            Err(e) => out.notices.push(format!(
                "@{path} was not attached: {}",
                crate::host::safe_fs::describe(&e)
            )),
        }
    }
    out
}

/// The block the model reads for `path`, and the content bytes it holds.
fn read_block(
    path: &str,
    resolved: &Path,
    size: u64,
    max: usize,
) -> std::io::Result<(String, usize)> {
    let file = crate::host::safe_fs::open_read(resolved)?;
    let mut bytes = Vec::new();
    file.take(max as u64 + 1).read_to_end(&mut bytes)?;
    let open = format!("<file path=\"{}\" attached_by=\"user\">", escape(path));
    let close = "</file>";
    let sniff = &bytes[..bytes.len().min(SNIFF_BYTES)];
    if sniff.contains(&0) {
        let note = format!(
            "(a binary file of {size} bytes: its content is not attached; inspect it with bash)"
        );
        return Ok((format!("{open}\n{note}\n{close}"), 0));
    }
    let cut = bytes.len() > max;
    bytes.truncate(max);
    let text = match std::str::from_utf8(&bytes) {
        Ok(text) => text,
        // Cut inside a character: up to it.
        Err(e) if cut && e.error_len().is_none() => {
            std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => {
            let note = format!(
                "(a file of {size} bytes that is not UTF-8 text: its content is not attached)"
            );
            return Ok((format!("{open}\n{note}\n{close}"), 0));
        }
    };
    let mut text = text;
    if cut {
        // End at a line break when one is in the last quarter.
        if let Some(i) = text.rfind('\n').filter(|&i| i >= text.len() * 3 / 4) {
            text = &text[..=i];
        }
    }
    let mut block = format!("{open}\n{text}");
    if !block.ends_with('\n') {
        block.push('\n');
    }
    if cut {
        let lines = text.lines().count();
        block.push_str(&format!(
            "[cut: the first {} of {size} bytes ({lines} lines) are attached; read the rest \
             with read_file from line {}]\n",
            text.len(),
            lines + 1
        ));
    }
    block.push_str(close);
    Ok((block, text.len()))
}

/// The server and URI of a mention that may name a server's resource (`server:uri`, the
/// server's name `[A-Za-z0-9_-]`, the URI not empty).
pub fn resource_mention(path: &str) -> Option<(&str, &str)> {
    let (server, uri) = path.split_once(':')?;
    let named = !server.is_empty()
        && server
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    (named && !uri.is_empty()).then_some((server, uri))
}

/// Why the resource `uri` is not asked for: a `file://` URI whose path the rules do not
/// let `read_file` read without asking (`.env`, `~/.ssh/…`), as an `@path` would be
/// judged; `None` for any other URI, and for a path they let read.
pub fn resource_refused(uri: &str, root: &Path, policy: &dyn PermissionPolicy) -> Option<String> {
    let scheme = uri.get(..7)?;
    if !scheme.eq_ignore_ascii_case("file://") {
        return None;
    }
    let Some(path) = reqwest::Url::parse(uri)
        .ok()
        .and_then(|url| url.to_file_path().ok())
    else {
        return Some("its file:// URI names no path rein can judge".into());
    };
    // Links followed as the file tools follow them; a path that does not exist here is
    // judged as written.
    let resolved =
        crate::host::safe_fs::resolve(&path, Path::new("/")).unwrap_or_else(|_| path.clone());
    let args = serde_json::json!({
        "path": resolved.display().to_string(),
        "path_as_given": path.display().to_string(),
    });
    let request = crate::permissions::ToolRequest {
        tool: "read_file",
        args: &args,
        root,
    };
    match policy.check(&request) {
        crate::permissions::Verdict::Allow => None,
        crate::permissions::Verdict::Ask { reason, .. }
        | crate::permissions::Verdict::Deny { reason } => Some(format!(
            "it names {} ({reason}); the model can still ask to read it",
            path.display()
        )),
    }
}

/// The block the model reads for a server's resource: its text (at most the limit the
/// read was given), and where it was cut.
pub fn resource_block(server: &str, uri: &str, text: &str, cut: bool) -> String {
    let mut block = format!(
        "<resource server=\"{}\" uri=\"{}\" attached_by=\"user\">\n{text}",
        escape(server),
        escape(uri)
    );
    if !block.ends_with('\n') {
        block.push('\n');
    }
    if cut {
        block.push_str(&format!(
            "[cut: only the first {} bytes are attached (context.attach_max_bytes)]\n",
            text.len()
        ));
    }
    block.push_str("</resource>");
    block
}

/// The least room left of the total for which one more attachment is made.
pub fn min_part(limits: AttachLimits) -> usize {
    MIN_PART.min(limits.per_file).max(1)
}

/// A path inside the block's quotes.
fn escape(path: &str) -> String {
    path.replace('&', "&amp;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::policy::RulePolicy;
    use crate::permissions::AllowAll;

    const LIMITS: AttachLimits = AttachLimits {
        per_file: 1000,
        total: 1500,
    };

    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").unwrap();
        dir
    }

    #[test]
    fn a_mentioned_file_is_attached_once_with_its_path_and_content() {
        let dir = project();
        let got = attach(
            "explain @src/main.rs, then @src/main.rs again; @nobody @src",
            dir.path(),
            &AllowAll,
            LIMITS,
        );
        assert!(got.notices.is_empty(), "{:?}", got.notices);
        assert_eq!(got.files.len(), 1);
        assert_eq!(got.files[0].path, "src/main.rs");
        assert_eq!(
            got.files[0].text,
            "<file path=\"src/main.rs\" attached_by=\"user\">\nfn main() {}\n</file>"
        );
    }

    #[test]
    fn a_long_file_is_cut_at_a_line_and_says_how_to_read_on() {
        let dir = project();
        let long: String = (1..=200).map(|i| format!("line {i:03}\n")).collect();
        std::fs::write(dir.path().join("long.txt"), &long).unwrap();
        let got = attach("@long.txt", dir.path(), &AllowAll, LIMITS);
        let text = &got.files[0].text;
        // 1000 bytes hold 111 lines of 9 bytes; the block ends at the last whole one.
        assert!(text.contains("line 111\n[cut: the first 999 of 1800 bytes (111 lines)"));
        assert!(text.contains("read_file from line 112"));
        assert!(!text.contains("line 112\n"), "{text}");
        // The total limit: a second long file gets what is left, a third none.
        std::fs::write(dir.path().join("b.txt"), &long).unwrap();
        std::fs::write(dir.path().join("c.txt"), &long).unwrap();
        let got = attach("@long.txt @b.txt @c.txt", dir.path(), &AllowAll, LIMITS);
        assert_eq!(got.files.len(), 2);
        assert!(got.files[1].text.contains("the first 495 of 1800"));
        assert_eq!(got.notices.len(), 1);
        assert!(got.notices[0].contains("@c.txt was not attached"));
    }

    #[test]
    fn binary_and_non_utf8_files_are_named_not_attached() {
        let dir = project();
        std::fs::write(dir.path().join("logo.png"), b"\x89PNG\0\0\0data").unwrap();
        std::fs::write(dir.path().join("latin1.txt"), b"caf\xe9 ol\xe9").unwrap();
        let got = attach("@logo.png @latin1.txt", dir.path(), &AllowAll, LIMITS);
        assert!(got.files[0].text.contains("a binary file of 11 bytes"));
        assert!(!got.files[0].text.contains("PNG"));
        assert!(got.files[1].text.contains("not UTF-8 text"));
    }

    #[test]
    fn resource_mentions_and_file_uris_are_judged_as_their_paths() {
        assert_eq!(
            resource_mention("docs:mem://notes"),
            Some(("docs", "mem://notes"))
        );
        assert_eq!(resource_mention("src/main.rs"), None);
        assert_eq!(resource_mention("a b:x"), None);
        assert_eq!(resource_mention("docs:"), None);
        let dir = project();
        let sensitive: Vec<String> = crate::permissions::DEFAULT_SENSITIVE_READS
            .iter()
            .map(|s| s.to_string())
            .collect();
        let policy = RulePolicy::new(dir.path(), &[], &sensitive, None).unwrap();
        let env = format!("file://{}/.env", dir.path().display());
        let why = resource_refused(&env, dir.path(), &policy).unwrap();
        assert!(why.contains(".env"), "{why}");
        let main = format!("file://{}/src/main.rs", dir.path().display());
        assert_eq!(resource_refused(&main, dir.path(), &policy), None);
        assert_eq!(resource_refused("mem://x", dir.path(), &policy), None);
        let block = resource_block("docs", "mem://\"x\"", "text", true);
        assert_eq!(
            block,
            "<resource server=\"docs\" uri=\"mem://&quot;x&quot;\" attached_by=\"user\">\ntext\n\
             [cut: only the first 4 bytes are attached (context.attach_max_bytes)]\n</resource>"
        );
    }

    #[test]
    fn sensitive_files_and_links_out_of_the_project_are_not_attached() {
        let dir = project();
        std::fs::write(dir.path().join(".env"), "TOKEN=secret\n").unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("notes.txt"), "private\n").unwrap();
        std::os::unix::fs::symlink(outside.path().join("notes.txt"), dir.path().join("n.txt"))
            .unwrap();
        let sensitive: Vec<String> = crate::permissions::DEFAULT_SENSITIVE_READS
            .iter()
            .map(|s| s.to_string())
            .collect();
        let policy = RulePolicy::new(dir.path(), &[], &sensitive, None).unwrap();
        let got = attach("@.env and @n.txt", dir.path(), &policy, LIMITS);
        assert!(got.files.is_empty(), "{:?}", got.files);
        assert_eq!(got.notices.len(), 2, "{:?}", got.notices);
        assert!(got.notices[0].starts_with("@.env was not attached: "));
        assert!(got.notices[0].contains("sensitive"));
        assert!(got.notices[1].contains("outside the project"));
    }
}
