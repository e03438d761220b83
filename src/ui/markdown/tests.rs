//! Tests of the Markdown renderer and of streaming it chunk by chunk.
use ratatui::style::Modifier;
use ratatui::text::Line;

use super::renderer::Renderer;
use super::*;
use crate::ui::theme;

fn texts(lines: &[Line<'_>]) -> Vec<String> {
    lines
        .iter()
        .map(|l| {
            l.spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect()
}

#[test]
fn headings_paragraphs_and_emphasis() {
    let lines = render("# Title\n\nSome *soft* and **strong** text.\n", 40);
    assert_eq!(
        texts(&lines),
        ["  Title", "", "  Some soft and strong text."]
    );
    let strong = lines[2]
        .spans
        .iter()
        .find(|s| s.content == "strong")
        .unwrap();
    assert!(strong.style.add_modifier.contains(Modifier::BOLD));
    assert_eq!(
        lines[0].spans[1].style,
        theme::HEADING.add_modifier(Modifier::UNDERLINED)
    );
}

#[test]
fn nested_and_numbered_lists() {
    let md = "- one\n- two\n  - inner\n  - more\n- three\n\n3. third\n4. fourth\n";
    let lines = render(md, 40);
    assert_eq!(
        texts(&lines),
        [
            "  • one",
            "  • two",
            "    ◦ inner",
            "    ◦ more",
            "  • three",
            "",
            "  3. third",
            "  4. fourth"
        ]
    );
}

#[test]
fn list_items_wrap_under_their_text() {
    let lines = render("- a list item that is long enough to wrap\n", 20);
    assert_eq!(
        texts(&lines),
        ["  • a list item that", "    is long enough", "    to wrap"]
    );
}

#[test]
fn code_blocks_keep_indentation_and_style() {
    let md = "Run:\n\n```rust\nfn main() {\n\tprintln!(\"hi\");\n}\n```\n\nDone.";
    let lines = render(md, 40);
    assert_eq!(
        texts(&lines),
        [
            "  Run:",
            "",
            "    fn main() {",
            "        println!(\"hi\");",
            "    }",
            "",
            "  Done."
        ]
    );
    assert_eq!(lines[2].spans.last().unwrap().style, theme::CODE_BLOCK);
}

#[test]
fn long_code_lines_wrap_by_character() {
    let lines = render("```\nlet value =     compute(1, 2);\n```\n", 20);
    assert_eq!(texts(&lines), ["    let value =", "    compute(1, 2);"]);
}

#[test]
fn quotes_links_inline_code_and_rules() {
    let md = "> quoted *text*\n\nSee [docs](https://x.io) and `cargo test`.\n\n---\n";
    let lines = render(md, 30);
    assert_eq!(
        texts(&lines),
        [
            "  │ quoted text",
            "",
            "  See docs (https://x.io) and",
            "  cargo test.",
            "",
            "  ────────────────────────────"
        ]
    );
    let url = lines[2]
        .spans
        .iter()
        .find(|s| s.content.contains("https"))
        .unwrap();
    assert_eq!(url.style, theme::LINK_URL);
    let code = lines[3]
        .spans
        .iter()
        .find(|s| s.content == "cargo test")
        .unwrap();
    assert_eq!(code.style, theme::INLINE_CODE);
}

#[test]
fn tables_align_columns() {
    let md = "| name | n |\n|---|--:|\n| a | 1 |\n| long name | 22 |\n";
    assert_eq!(
        texts(&render(md, 40)),
        [
            "  name      │  n",
            "  ──────────┼───",
            "  a         │  1",
            "  long name │ 22"
        ]
    );
}

#[test]
fn escapes_in_markdown_are_shown() {
    let lines = render("bad \x1b]0;title\x07 text", 40);
    assert_eq!(texts(&lines), ["  bad ^[]0;title^G text"]);
}

fn cuts(text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut from = 0;
    let mut fence = None;
    while let Some(cut) = next_cut(text, from, fence.as_ref()) {
        let line = text[cut.at..].lines().next().unwrap_or("").to_string();
        out.push((line, cut.fence.is_some()));
        from = cut.at;
        fence = cut.fence;
    }
    out
}

#[test]
fn cuts_follow_blocks_and_code_lines() {
    let text = "a\n\nb\n\n```\nx\n\ny\n```\n\n  indented\n\n- c\n  ```\n  z\n  w\n  ```\n\nd";
    let got = cuts(text);
    let want = [
        ("b", false),
        ("```", false),
        // Inside a fence at column 0: every line after the first.
        ("", true),
        ("y", true),
        ("```", true),
        // The indented paragraph belongs to the chunk above; the fence in the list
        // item is not cut.
        ("- c", false),
        ("d", false),
    ];
    let want: Vec<(String, bool)> = want.iter().map(|(l, f)| (l.to_string(), *f)).collect();
    assert_eq!(got, want);
}

#[test]
fn a_long_code_block_streams_line_by_line() {
    let mut text = String::from("Intro.\n\n```rust\n");
    let mut slot = None;
    for i in 0..200 {
        text.push_str(&format!("let x{i} = {i};\n"));
        render_cached(&text, 40, i as u64 + 1, &mut slot);
    }
    let c = slot.as_ref().unwrap();
    // Only the last line is outside the stable part.
    assert_eq!(&text[c.stable_bytes..], "let x199 = 199;\n");
    assert!(c.open_fence.is_some());
    text.push_str("```\n\nDone.\n");
    render_cached(&text, 40, 999, &mut slot);
    let lines = slot.unwrap().lines;
    assert_eq!(lines, render(&text, 40));
    assert_eq!(
        texts(&lines[lines.len() - 3..]),
        ["    let x199 = 199;", "", "  Done."]
    );
}

/// Chunking is how documents are defined here; check it gives what one pass over the
/// whole text gives, for a document with every kind of block.
#[test]
fn chunks_render_like_one_pass() {
    let more = [
        SAMPLE,
        "Text right before\n```\n\ncode after a blank\n\n\n```\nText right after\n",
        "## Heading\nparagraph\n\n> quote\n>\n> > nested\n\n<div>\nhtml\n</div>\n\nend",
        "```\nunclosed\n\nfence",
        "1. one\n2. two\n\n   more of two\n\n3. three\n",
    ];
    for doc in more {
        for width in [24usize, 80] {
            let mut one_pass = Vec::new();
            Renderer::new(width, &mut one_pass).run(doc);
            assert_eq!(
                render(doc, width as u16),
                one_pass,
                "width {width}: {doc:?}"
            );
        }
    }
}

const SAMPLE: &str = "# Plan\n\nI will **fix** the bug in `parse()`, then run the tests.\n\n\
    1. Read the code\n2. Change it\n   - carefully\n3. Test\n\n\
    ```rust\nfn parse(s: &str) -> u32 {\n\n    s.len() as u32\n}\n```\n\n\
    > a quote that goes on\n> and on\n\n- [x] done\n- [ ] todo\n\n\
    | a | b |\n|---|---|\n| 1 | 2 |\n\n---\n\nThat's all; see <https://example.com> and \
    [the guide](https://example.com/guide \"t\"). 漢字も😀。\n";

#[test]
fn streaming_in_steps_matches_rendering_once() {
    for width in [20u16, 44, 80] {
        let whole = render(SAMPLE, width);
        for step in [1usize, 3, 7, 64] {
            let mut slot = None;
            let mut end = 0;
            let mut version = 0;
            while end < SAMPLE.len() {
                end = (end + step).min(SAMPLE.len());
                while !SAMPLE.is_char_boundary(end) {
                    end += 1;
                }
                version += 1;
                render_cached(&SAMPLE[..end], width, version, &mut slot);
                let once = render(&SAMPLE[..end], width);
                assert_eq!(
                    slot.as_ref().unwrap().lines,
                    once,
                    "prefix {end} step {step}"
                );
            }
            assert_eq!(slot.unwrap().lines, whole, "width {width} step {step}");
        }
    }
}

#[test]
fn streaming_keeps_complete_chunks() {
    let mut slot = None;
    let text = "para one\n\npara two\n\npara thr";
    render_cached(text, 40, 1, &mut slot);
    let c = slot.as_ref().unwrap();
    assert_eq!(&text[c.stable_bytes..], "para thr");
    assert_eq!(c.stable_lines, 3);
    // A new version re-renders from the stable point only.
    let longer = format!("{text}ee\n");
    render_cached(&longer, 40, 2, &mut slot);
    assert_eq!(
        texts(&slot.as_ref().unwrap().lines[3..]),
        ["", "  para three"]
    );
    // A new width starts over.
    render_cached(&longer, 10, 3, &mut slot);
    assert_eq!(slot.unwrap().lines, render(&longer, 10));
}

/// A reply without a blank line settles too: a paragraph of plain lines is cut at a line
/// once it is long, the rest going on from the next screen line with no blank between;
/// anything that is not plain paragraph text (a list's lazy lines) is never cut so.
#[test]
fn a_long_paragraph_is_cut_at_a_line_and_goes_on_below() {
    let line = "the parser splits words at every whitespace\n";
    let text = line.repeat(2 * LONG_PARAGRAPH / line.len());
    let mut from = 0;
    let mut starts = Vec::new();
    while let Some(cut) = next_cut(&text, from, None) {
        assert!(cut.joined && cut.fence.is_none(), "{cut:?}");
        assert!(cut.at - from >= LONG_PARAGRAPH);
        assert!(text[..cut.at].ends_with('\n'));
        starts.push(cut.at);
        from = cut.at;
    }
    assert_eq!(starts.len(), 1, "{starts:?}");
    let lines = render(&text, 80);
    assert!(lines
        .iter()
        .all(|l| !texts(std::slice::from_ref(l))[0].trim().is_empty()));
    // Streamed in steps, it settles and renders as it does at once.
    let mut slot = None;
    for (version, end) in (0..=text.len())
        .step_by(997)
        .chain([text.len()])
        .enumerate()
    {
        render_cached(&text[..end], 80, version as u64 + 1, &mut slot);
    }
    let c = slot.unwrap();
    assert_eq!(c.lines, lines);
    assert_eq!(c.stable_bytes, starts[0]);
    // A list's lazy continuation lines are not paragraph text of their own.
    let list = format!("- item\n{}", line.repeat(2 * LONG_PARAGRAPH / line.len()));
    assert_eq!(next_cut(&list, 0, None), None);
}
