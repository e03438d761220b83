//! The assistant's Markdown, rendered to styled screen lines with pulldown-cmark.
//!
//! In: the reply text and a width. Out: wrapped `Line`s: headings, emphasis, strong,
//! strike-through, lists (nested, numbered, task lists), block quotes, code blocks (their
//! own style, wrapped by character so no space is lost), inline code, links as text plus
//! a dim URL, rules and simple tables. Every piece of text is sanitised on its way in.
//!
//! A streamed reply grows by a few characters at a time, so the text is cut into *chunks*
//! ([`next_cut`]): at a line that starts at column 0 after a blank line, outside code
//! fences; and inside a code fence opened at column 0, at every line after its first, so
//! a long code block also settles line by line (such a chunk is parsed after its fence's
//! opening line, kept in [`CachedRender::open_fence`]); and in a paragraph of plain lines
//! (each at column 0, starting with a letter) once it is [`LONG_PARAGRAPH`] bytes long,
//! at its next line, so a reply without a blank line settles too instead of being parsed
//! whole at every frame (the paragraph goes on from a new screen line there). A document
//! is, by definition, its chunks rendered one by one, joined by a blank line (none inside
//! a fence or a long paragraph). Whether an
//! offset is a cut depends only on the complete lines before it, so the cuts of a prefix
//! are cuts of the whole: the finished chunks render once and stay in
//! [`CachedRender::lines`] (`stable_bytes`, `stable_lines`), and each new version
//! re-renders only the last, growing chunk. Rendering a growing text in steps gives
//! exactly the lines of rendering it once, and a test checks that the chunks give what
//! one pass over the whole text gives.

use std::ops::Range;

use ratatui::text::Line;

use crate::app::state::CachedRender;
use renderer::Renderer;

mod renderer;
#[cfg(test)]
mod tests;

/// The whole of `text` rendered at `width` (no cache).
pub fn render(text: &str, width: u16) -> Vec<Line<'static>> {
    let mut slot = None;
    render_cached(text, width, 0, &mut slot);
    slot.map(|c| c.lines).unwrap_or_default()
}

/// Bring `slot` up to date for `text` (version `version`) at `width`, re-rendering only
/// what changed: nothing when width and version match; only the chunks after
/// `stable_bytes` when the width matches (the text is assumed to have only grown, as a
/// streamed reply does; a shorter text starts over).
pub fn render_cached(text: &str, width: u16, version: u64, slot: &mut Option<Box<CachedRender>>) {
    if let Some(c) = slot {
        if c.width == width && c.version == version && c.lines.len() >= c.stable_lines {
            return;
        }
    }
    let reusable = matches!(slot, Some(c) if c.width == width
        && c.stable_bytes <= text.len()
        && text.is_char_boundary(c.stable_bytes)
        && c.stable_lines <= c.lines.len());
    if !reusable {
        *slot = Some(Box::new(CachedRender {
            width,
            version,
            lines: Vec::new(),
            stable_bytes: 0,
            stable_lines: 0,
            open_fence: None,
            joined: false,
        }));
    }
    let Some(cache) = slot.as_mut() else { return };
    cache.version = version;
    cache.lines.truncate(cache.stable_lines);
    let w = usize::from(width);
    while let Some(cut) = next_cut(text, cache.stable_bytes, cache.open_fence.as_ref()) {
        let range = cache.stable_bytes..cut.at;
        let chunk = Chunk {
            fence: cache.open_fence.as_ref(),
            joined: cache.joined,
        };
        render_chunk(text, range, chunk, w, &mut cache.lines);
        cache.stable_bytes = cut.at;
        cache.open_fence = cut.fence;
        cache.joined = cut.joined;
        cache.stable_lines = cache.lines.len();
    }
    let range = cache.stable_bytes..text.len();
    let chunk = Chunk {
        fence: cache.open_fence.as_ref(),
        joined: cache.joined,
    };
    render_chunk(text, range, chunk, w, &mut cache.lines);
}

/// A paragraph of plain lines longer than this is cut at its next line.
pub const LONG_PARAGRAPH: usize = 16 << 10;

/// Where a chunk starts, and when that is inside a fenced code block, the byte range of
/// the fence's opening line; `joined` when it goes on with the paragraph before it (no
/// blank line between).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    pub at: usize,
    pub fence: Option<Range<usize>>,
    pub joined: bool,
}

struct Fence {
    ch: u8,
    len: usize,
    opener: Range<usize>,
    /// Opened at column 0: a top-level block, whose lines can be cut between.
    top: bool,
    /// Content lines seen so far.
    lines: usize,
}

/// The next chunk start after `from` (itself a chunk start, inside the fence opened by
/// `open` if given). Two kinds: a line that begins with a non-blank character at column 0
/// after a blank line, outside code fences; and, inside a fence opened at column 0, every
/// line after its first content line (a long code block becomes stable line by line).
/// Decided from complete lines only, so a cut never moves as text is appended.
pub fn next_cut(text: &str, from: usize, open: Option<&Range<usize>>) -> Option<Cut> {
    let bytes = text.as_bytes();
    let mut fence: Option<Fence> = open.and_then(|r| {
        let (ch, len) = opens_fence(text.get(r.clone())?)?;
        Some(Fence {
            ch,
            len,
            opener: r.clone(),
            top: true,
            lines: 1,
        })
    });
    let mut prev_blank = false;
    // Every line since `from` is a plain paragraph line (at column 0, a letter first).
    let mut plain = fence.is_none();
    let mut pos = from;
    while pos < bytes.len() {
        if pos > from {
            match &fence {
                None if prev_blank && !matches!(bytes[pos], b' ' | b'\t' | b'\n' | b'\r') => {
                    return Some(Cut {
                        at: pos,
                        fence: None,
                        joined: false,
                    })
                }
                None if plain && pos - from >= LONG_PARAGRAPH && plain_line(&text[pos..]) => {
                    return Some(Cut {
                        at: pos,
                        fence: None,
                        joined: true,
                    })
                }
                Some(f) if f.top && f.lines > 0 => {
                    return Some(Cut {
                        at: pos,
                        fence: Some(f.opener.clone()),
                        joined: false,
                    })
                }
                _ => {}
            }
        }
        plain &= plain_line(&text[pos..]);
        let line_end = pos + bytes[pos..].iter().position(|&b| b == b'\n')?;
        let line = &text[pos..line_end];
        let trimmed = line.trim_start_matches([' ', '\t']);
        match &mut fence {
            Some(f) => {
                if closes_fence(trimmed, f.ch, f.len) {
                    fence = None;
                } else {
                    f.lines += 1;
                }
                prev_blank = false;
            }
            None => {
                fence = opens_fence(trimmed).map(|(ch, len)| Fence {
                    ch,
                    len,
                    opener: pos..line_end,
                    top: trimmed.len() == line.len(),
                    lines: 0,
                });
                prev_blank = line.trim().is_empty();
            }
        }
        pos = line_end + 1;
    }
    None
}

/// Whether the line `rest` starts with can only be paragraph text: a letter at column 0
/// (no list, quote, heading, table, fence, HTML or setext underline starts so).
fn plain_line(rest: &str) -> bool {
    rest.chars().next().is_some_and(char::is_alphabetic)
}

/// A fence opener: three or more backticks or tildes (backtick fences have no backtick
/// in their info string).
fn opens_fence(line: &str) -> Option<(u8, usize)> {
    let ch = *line.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let n = line.bytes().take_while(|&b| b == ch).count();
    if n < 3 || (ch == b'`' && line[n..].contains('`')) {
        return None;
    }
    Some((ch, n))
}

fn closes_fence(line: &str, ch: u8, n: usize) -> bool {
    let count = line.bytes().take_while(|&b| b == ch).count();
    count >= n && line[count..].trim().is_empty()
}

/// What a chunk goes on from: the fence it is inside, or the long paragraph it continues.
#[derive(Clone, Copy)]
struct Chunk<'a> {
    fence: Option<&'a Range<usize>>,
    joined: bool,
}

/// Render the chunk `range` of `text`. A chunk inside a fence is parsed after its
/// fence's opening line and joins the code above it; one that continues a long paragraph
/// starts on the next screen line; any other chunk but the first comes after a blank
/// line, when it shows anything.
fn render_chunk(
    text: &str,
    range: Range<usize>,
    at: Chunk<'_>,
    width: usize,
    out: &mut Vec<Line<'static>>,
) {
    let chunk = &text[range.clone()];
    if let Some(opener) = at.fence {
        let source = format!("{}\n{chunk}", &text[opener.clone()]);
        Renderer::new(width, out).run(&source);
        return;
    }
    let mark = out.len();
    if range.start > 0 && !at.joined {
        out.push(Line::default());
    }
    let body = out.len();
    Renderer::new(width, out).run(chunk);
    if out.len() == body {
        out.truncate(mark);
    }
}
