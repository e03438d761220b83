//! Wrapping styled text to a width, in display columns.
//!
//! In: the spans of one logical line (no newlines), a width, and the prefixes for its first
//! and following screen lines (a list marker and its hanging indent, a quote bar, a code
//! gutter). Out: screen lines that each fit the width. Widths are counted per grapheme with
//! the same tables as ratatui's buffer, so CJK and emoji (two columns) wrap exactly where
//! they will be drawn. [`WrapMode::Words`] breaks prose between words (and around wide
//! characters, which have no spaces between them), dropping the spaces at the break;
//! [`WrapMode::Chars`] breaks code anywhere and keeps every space, so nothing is lost or
//! re-indented.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

/// Where lines may break.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WrapMode {
    /// Prose: between words and around wide characters.
    Words,
    /// Code and tool output: at any grapheme, spaces kept.
    Chars,
}

/// The display width of `s` in columns.
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// The width of a list of spans.
pub fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| width(&s.content)).sum()
}

struct Grapheme<'a> {
    symbol: &'a str,
    style: Style,
    width: usize,
}

/// The graphemes of some spans with their styles and widths, as ratatui's
/// `Span::styled_graphemes` splits them, zero-width ones (and newlines) dropped as the
/// buffer drops them. Printable ASCII, the bulk of any reply, is taken a byte at a time: a
/// printable ASCII byte followed by another ASCII byte (or nothing) is a grapheme of its
/// own, since everything that joins a cluster (combining marks, joiners, spacing marks,
/// prepended characters) is outside ASCII, and CR, the one ASCII byte that joins, is not
/// printable. Any other byte starts a cluster found by Unicode segmentation.
struct Graphemes<'a> {
    spans: std::slice::Iter<'a, Span<'a>>,
    /// What is left of the span being read.
    text: &'a str,
    style: Style,
}

impl<'a> Graphemes<'a> {
    fn new(spans: &'a [Span<'a>]) -> Self {
        Graphemes {
            spans: spans.iter(),
            text: "",
            style: Style::default(),
        }
    }
}

/// One printable ASCII byte.
fn printable_ascii(b: u8) -> bool {
    (0x20..0x7f).contains(&b)
}

impl<'a> Iterator for Graphemes<'a> {
    type Item = Grapheme<'a>;

    fn next(&mut self) -> Option<Grapheme<'a>> {
        use unicode_segmentation::UnicodeSegmentation;
        loop {
            let bytes = self.text.as_bytes();
            let Some(&b) = bytes.first() else {
                let span = self.spans.next()?;
                self.text = span.content.as_ref();
                self.style = Style::default().patch(span.style);
                continue;
            };
            let ascii = printable_ascii(b) && bytes.get(1).is_none_or(u8::is_ascii);
            let len = if ascii {
                1
            } else {
                self.text
                    .graphemes(true)
                    .next()
                    .map_or(self.text.len(), str::len)
            };
            let (symbol, rest) = self.text.split_at(len);
            self.text = rest;
            let width = if ascii { 1 } else { width_of(symbol) };
            // The buffer drops zero-width graphemes; so do we, or widths would disagree.
            if width == 0 || symbol == "\n" {
                continue;
            }
            return Some(Grapheme {
                symbol,
                style: self.style,
                width,
            });
        }
    }
}

/// Builds one screen line, merging neighbouring graphemes of the same style.
struct LineBuilder {
    spans: Vec<Span<'static>>,
    text: String,
    style: Style,
    width: usize,
}

impl LineBuilder {
    fn new(prefix: &[Span<'static>]) -> Self {
        LineBuilder {
            spans: prefix.to_vec(),
            text: String::new(),
            style: Style::default(),
            width: 0,
        }
    }

    fn push(&mut self, g: &Grapheme<'_>) {
        if g.style != self.style && !self.text.is_empty() {
            let text = std::mem::take(&mut self.text);
            self.spans.push(Span::styled(text, self.style));
        }
        self.style = g.style;
        self.text.push_str(g.symbol);
        self.width += g.width;
    }

    fn finish(mut self) -> Line<'static> {
        if !self.text.is_empty() {
            // A line is kept as long as its cell: without the slack of its growth (a
            // reply's lines would otherwise take about a third more).
            self.text.shrink_to_fit();
            self.spans.push(Span::styled(self.text, self.style));
        }
        self.spans.shrink_to_fit();
        Line::from(self.spans)
    }
}

/// `text` in one `style`, wrapped between words at `width` columns onto `out` (a
/// modal's prose line).
pub fn wrap_text(
    text: String,
    style: ratatui::style::Style,
    width: usize,
    out: &mut Vec<Line<'static>>,
) {
    wrap_into(
        &[Span::styled(text, style)],
        width,
        &[],
        &[],
        WrapMode::Words,
        out,
    )
}

/// Wrap `spans` to `width` columns, appending the screen lines to `out`. `first` prefixes
/// the first line and `rest` the others; an empty input still makes one (prefixed) line.
///
/// The graphemes are read one by one, never gathered: what is held at a time is one
/// screen line, the word being read and the spaces before it, each at most a line wide
/// (a longer word is broken as it is read), so wrapping a paragraph of megabytes costs
/// its output, not a record per character.
pub fn wrap_into(
    spans: &[Span<'_>],
    width: usize,
    first: &[Span<'static>],
    rest: &[Span<'static>],
    mode: WrapMode,
    out: &mut Vec<Line<'static>>,
) {
    let mut graphemes = Graphemes::new(spans).peekable();
    let avail = |prefix: &[Span<'static>]| width.saturating_sub(spans_width(prefix)).max(1);

    let mut line = LineBuilder::new(first);
    let mut room = avail(first);
    let mut new_line = |line: &mut LineBuilder, room: &mut usize| {
        let done = std::mem::replace(line, LineBuilder::new(rest));
        out.push(done.finish());
        *room = avail(rest);
    };

    match mode {
        WrapMode::Chars => {
            for g in graphemes {
                if line.width + g.width > room && line.width > 0 {
                    new_line(&mut line, &mut room);
                }
                line.push(&g);
            }
        }
        WrapMode::Words => {
            // The widest a line can be: a word wider than this is broken, whatever the line.
            let widest = avail(first).max(avail(rest));
            // Spaces seen since the last word, written only if the next word fits after
            // them; kept only while they could fit (their width is counted on).
            let mut pending: Vec<Grapheme<'_>> = Vec::new();
            let mut pending_width = 0usize;
            let mut word: Vec<Grapheme<'_>> = Vec::new();
            let mut first_line = true;
            while let Some(g) = graphemes.next() {
                if g.symbol == " " {
                    pending_width += 1;
                    if pending_width <= widest {
                        pending.push(g);
                    } else {
                        pending.clear();
                    }
                    continue;
                }
                // A word: up to the next space, or a single wide grapheme.
                word.clear();
                let mut word_width = g.width;
                let wide = g.width > 1;
                word.push(g);
                let mut broken = false;
                while let Some(next) =
                    graphemes.next_if(|n| !wide && n.symbol != " " && n.width == 1)
                {
                    word_width += next.width;
                    word.push(next);
                    if word_width > widest {
                        broken = true;
                        break;
                    }
                }
                let space_width = pending_width;
                let at_start = line.width == 0;
                if !broken && line.width + space_width + word_width <= room {
                    // Leading spaces survive only on the first line.
                    if !at_start || first_line {
                        pending.iter().for_each(|g| line.push(g));
                    }
                    word.iter().for_each(|g| line.push(g));
                    pending.clear();
                    pending_width = 0;
                    continue;
                }
                pending.clear();
                pending_width = 0;
                if !at_start {
                    new_line(&mut line, &mut room);
                    first_line = false;
                }
                if !broken && word_width <= room {
                    word.iter().for_each(|g| line.push(g));
                    continue;
                }
                // Too wide for any line: broken by character, the rest of it as it comes.
                let mut put = |g: &Grapheme<'_>, line: &mut LineBuilder| {
                    if line.width + g.width > room && line.width > 0 {
                        new_line(line, &mut room);
                        first_line = false;
                    }
                    line.push(g);
                };
                for g in &word {
                    put(g, &mut line);
                }
                if broken {
                    while let Some(g) = graphemes.next_if(|n| n.symbol != " " && n.width == 1) {
                        put(&g, &mut line);
                    }
                }
            }
        }
    }
    out.push(line.finish());
}

/// Wrap into a new vector (for tests and one-off text).
pub fn wrap(spans: &[Span<'_>], width: usize, mode: WrapMode) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    wrap_into(spans, width, &[], &[], mode, &mut out);
    out
}

fn width_of(symbol: &str) -> usize {
    UnicodeWidthStr::width(symbol)
}

/// `text` cut to at most `max` columns, ending in `…` when it was cut.
pub fn truncate(text: &str, max: usize) -> String {
    if width(text) <= max {
        return text.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > max - 1 {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::Stylize;

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    /// The graphemes as `Span::styled_graphemes` gives them (what the fast path replaces).
    fn ratatui_graphemes<'a>(spans: &'a [Span<'a>]) -> Vec<(String, Style, usize)> {
        spans
            .iter()
            .flat_map(|span| span.styled_graphemes(Style::default()))
            .filter_map(|g| {
                let w = width_of(g.symbol);
                (w > 0).then(|| (g.symbol.to_string(), g.style, w))
            })
            .collect()
    }

    #[test]
    fn graphemes_are_ratatuis_on_random_mixed_text() {
        let pieces = [
            "a",
            "Z",
            " ",
            "~",
            "\u{301}",
            "e\u{301}",
            "\r",
            "\n",
            "\r\n",
            "\t",
            "\u{7f}",
            "\u{1b}",
            "漢",
            "🦀",
            "👩\u{200d}💻",
            "\u{200d}",
            "\u{fe0f}",
            "🇫🇷",
            "\u{600}",
            "é",
            "ि",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for round in 0..2000 {
            let spans: Vec<Span<'static>> = (0..1 + next(3))
                .map(|_| {
                    let text: String = (0..next(12)).map(|_| pieces[next(pieces.len())]).collect();
                    let style = match next(3) {
                        0 => Style::default().bold(),
                        _ => Style::default(),
                    };
                    Span::styled(text, style)
                })
                .collect();
            let ours: Vec<(String, Style, usize)> = Graphemes::new(&spans)
                .map(|g| (g.symbol.to_string(), g.style, g.width))
                .collect();
            assert_eq!(ours, ratatui_graphemes(&spans), "round {round}: {spans:?}");
        }
    }

    #[test]
    fn words_wrap_at_spaces_and_drop_them() {
        let lines = wrap(
            &[Span::raw("the quick brown fox jumps")],
            10,
            WrapMode::Words,
        );
        assert_eq!(texts(&lines), ["the quick", "brown fox", "jumps"]);
    }

    #[test]
    fn long_words_are_broken() {
        let lines = wrap(&[Span::raw("ab abcdefghijkl")], 5, WrapMode::Words);
        assert_eq!(texts(&lines), ["ab", "abcde", "fghij", "kl"]);
    }

    #[test]
    fn a_word_wider_than_any_line_is_broken_as_it_is_read() {
        let text = format!("ab {}  cd {}", "x".repeat(23), " ".repeat(40));
        let lines = wrap(&[Span::raw(text.as_str())], 10, WrapMode::Words);
        let ten = "x".repeat(10);
        assert_eq!(texts(&lines), ["ab", ten.as_str(), ten.as_str(), "xxx  cd"]);
        // Spaces wider than a line are never written, even before a word.
        let text = format!("a{}b", " ".repeat(25));
        let lines = wrap(&[Span::raw(text.as_str())], 10, WrapMode::Words);
        assert_eq!(texts(&lines), ["a", "b"]);
    }

    #[test]
    fn cjk_counts_two_columns_and_breaks_between_characters() {
        let lines = wrap(&[Span::raw("漢字の文章です")], 6, WrapMode::Words);
        assert_eq!(texts(&lines), ["漢字の", "文章で", "す"]);
        for l in &lines {
            assert!(l.width() <= 6);
        }
        // An odd width never splits a wide character.
        let lines = wrap(&[Span::raw("漢字の文章")], 5, WrapMode::Chars);
        assert_eq!(texts(&lines), ["漢字", "の文", "章"]);
    }

    #[test]
    fn emoji_are_two_columns_and_stay_whole() {
        let family = "👨\u{200d}👩\u{200d}👧";
        let text = format!("ok 👍 {family} done");
        let lines = wrap(&[Span::raw(text.as_str())], 5, WrapMode::Words);
        assert_eq!(texts(&lines), ["ok 👍", family, "done"]);
        assert!(lines.iter().all(|l| l.width() <= 5));
    }

    #[test]
    fn chars_mode_keeps_spaces_and_indentation() {
        let lines = wrap(&[Span::raw("    let x =   1;")], 8, WrapMode::Chars);
        assert_eq!(texts(&lines), ["    let ", "x =   1;"]);
    }

    #[test]
    fn prefixes_and_styles_survive() {
        let bold = Style::new().add_modifier(ratatui::style::Modifier::BOLD);
        let spans = [Span::raw("plain "), Span::styled("bold words here", bold)];
        let mut out = Vec::new();
        wrap_into(
            &spans,
            12,
            &[Span::raw("- ")],
            &[Span::raw("  ")],
            WrapMode::Words,
            &mut out,
        );
        assert_eq!(texts(&out), ["- plain bold", "  words here"]);
        assert_eq!(out[0].spans[2].style, bold);
        assert_eq!(out[1].spans[1].style, bold);
    }

    #[test]
    fn empty_input_is_one_line() {
        assert_eq!(texts(&wrap(&[], 10, WrapMode::Words)), [""]);
    }

    #[test]
    fn truncate_marks_the_cut() {
        assert_eq!(truncate("hello world", 8), "hello w…");
        assert_eq!(truncate("short", 8), "short");
        assert_eq!(truncate("漢字漢字", 5), "漢字…");
    }
}
