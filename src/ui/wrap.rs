//! Wrapping styled text to a width, in display columns.
//!
//! In: the spans of one logical line (no newlines), a width, and the prefixes for its first
//! and following screen lines (a list marker and its hanging indent, a quote bar, a code
//! gutter). Out: screen lines that each fit the width. Widths are counted per grapheme with
//! the same tables as ratatui's buffer, so CJK and emoji (two columns) wrap exactly where
//! they will be drawn. [`Mode::Words`] breaks prose between words (and around wide
//! characters, which have no spaces between them), dropping the spaces at the break;
//! [`Mode::Chars`] breaks code anywhere and keeps every space, so nothing is lost or
//! re-indented.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

/// Where lines may break.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
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
            self.spans.push(Span::styled(self.text, self.style));
        }
        Line::from(self.spans)
    }
}

/// Wrap `spans` to `width` columns, appending the screen lines to `out`. `first` prefixes
/// the first line and `rest` the others; an empty input still makes one (prefixed) line.
pub fn wrap_into(
    spans: &[Span<'_>],
    width: usize,
    first: &[Span<'static>],
    rest: &[Span<'static>],
    mode: Mode,
    out: &mut Vec<Line<'static>>,
) {
    let graphemes: Vec<Grapheme<'_>> = spans
        .iter()
        .flat_map(|span| span.styled_graphemes(Style::default()))
        .filter_map(|g| {
            let w = width_of(g.symbol);
            // The buffer drops zero-width graphemes; so do we, or widths would disagree.
            (w > 0).then_some(Grapheme {
                symbol: g.symbol,
                style: g.style,
                width: w,
            })
        })
        .collect();
    let avail = |prefix: &[Span<'static>]| width.saturating_sub(spans_width(prefix)).max(1);

    let mut line = LineBuilder::new(first);
    let mut room = avail(first);
    let mut new_line = |line: &mut LineBuilder, room: &mut usize| {
        let done = std::mem::replace(line, LineBuilder::new(rest));
        out.push(done.finish());
        *room = avail(rest);
    };

    match mode {
        Mode::Chars => {
            for g in &graphemes {
                if line.width + g.width > room && line.width > 0 {
                    new_line(&mut line, &mut room);
                }
                line.push(g);
            }
        }
        Mode::Words => {
            let mut i = 0;
            // Spaces seen since the last word, written only if the next word fits after them.
            let mut pending: Option<(usize, usize, usize)> = None;
            let mut first_line = true;
            while i < graphemes.len() {
                let start = i;
                if graphemes[i].symbol == " " {
                    while i < graphemes.len() && graphemes[i].symbol == " " {
                        i += 1;
                    }
                    let w = i - start;
                    pending = Some((start, i, w));
                    continue;
                }
                // A word: up to the next space, or a single wide grapheme.
                if graphemes[i].width > 1 {
                    i += 1;
                } else {
                    while i < graphemes.len()
                        && graphemes[i].symbol != " "
                        && graphemes[i].width == 1
                    {
                        i += 1;
                    }
                }
                let word_width: usize = graphemes[start..i].iter().map(|g| g.width).sum();
                let space_width = pending.map_or(0, |p| p.2);
                let at_start = line.width == 0;
                if line.width + space_width + word_width <= room {
                    if let Some((s, e, _)) = pending.take() {
                        // Leading spaces survive only on the first line.
                        if !at_start || first_line {
                            graphemes[s..e].iter().for_each(|g| line.push(g));
                        }
                    }
                    graphemes[start..i].iter().for_each(|g| line.push(g));
                    continue;
                }
                pending = None;
                if !at_start {
                    new_line(&mut line, &mut room);
                    first_line = false;
                }
                if word_width <= room {
                    graphemes[start..i].iter().for_each(|g| line.push(g));
                } else {
                    for g in &graphemes[start..i] {
                        if line.width + g.width > room && line.width > 0 {
                            new_line(&mut line, &mut room);
                            first_line = false;
                        }
                        line.push(g);
                    }
                }
            }
        }
    }
    out.push(line.finish());
}

/// Wrap into a new vector (for tests and one-off text).
pub fn wrap(spans: &[Span<'_>], width: usize, mode: Mode) -> Vec<Line<'static>> {
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

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn words_wrap_at_spaces_and_drop_them() {
        let lines = wrap(&[Span::raw("the quick brown fox jumps")], 10, Mode::Words);
        assert_eq!(texts(&lines), ["the quick", "brown fox", "jumps"]);
    }

    #[test]
    fn long_words_are_broken() {
        let lines = wrap(&[Span::raw("ab abcdefghijkl")], 5, Mode::Words);
        assert_eq!(texts(&lines), ["ab", "abcde", "fghij", "kl"]);
    }

    #[test]
    fn cjk_counts_two_columns_and_breaks_between_characters() {
        let lines = wrap(&[Span::raw("漢字の文章です")], 6, Mode::Words);
        assert_eq!(texts(&lines), ["漢字の", "文章で", "す"]);
        for l in &lines {
            assert!(l.width() <= 6);
        }
        // An odd width never splits a wide character.
        let lines = wrap(&[Span::raw("漢字の文章")], 5, Mode::Chars);
        assert_eq!(texts(&lines), ["漢字", "の文", "章"]);
    }

    #[test]
    fn emoji_are_two_columns_and_stay_whole() {
        let family = "👨\u{200d}👩\u{200d}👧";
        let text = format!("ok 👍 {family} done");
        let lines = wrap(&[Span::raw(text.as_str())], 5, Mode::Words);
        assert_eq!(texts(&lines), ["ok 👍", family, "done"]);
        assert!(lines.iter().all(|l| l.width() <= 5));
    }

    #[test]
    fn chars_mode_keeps_spaces_and_indentation() {
        let lines = wrap(&[Span::raw("    let x =   1;")], 8, Mode::Chars);
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
            Mode::Words,
            &mut out,
        );
        assert_eq!(texts(&out), ["- plain bold", "  words here"]);
        assert_eq!(out[0].spans[2].style, bold);
        assert_eq!(out[1].spans[1].style, bold);
    }

    #[test]
    fn empty_input_is_one_line() {
        assert_eq!(texts(&wrap(&[], 10, Mode::Words)), [""]);
    }

    #[test]
    fn truncate_marks_the_cut() {
        assert_eq!(truncate("hello world", 8), "hello w…");
        assert_eq!(truncate("short", 8), "short");
        assert_eq!(truncate("漢字漢字", 5), "漢字…");
    }
}
