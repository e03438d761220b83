//! One chunk of Markdown to screen lines: pulldown-cmark's events walked with a stack of
//! containers (quotes, lists, items), inline text gathered into styled spans and wrapped
//! under the right prefixes (margin, quote bars, list markers and their hanging indents).
//! Blocks are separated by one blank line, except at the start of a container; code
//! and HTML blocks are wrapped by character with their indentation kept.

use pulldown_cmark::{Alignment, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::ui::sanitize::sanitize;
use crate::ui::theme;
use crate::ui::wrap::{spans_width, width, wrap_into, WrapMode};

/// The indent of every line of a reply, so it lines up with the text after the user's
/// and the tools' marks.
const MARGIN: &str = "  ";
/// The extra indent of code blocks.
const CODE_INDENT: &str = "  ";

fn options() -> Options {
    Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES | Options::ENABLE_TASKLISTS
}

enum Container {
    Quote,
    List {
        next: Option<u64>,
        depth: usize,
        items: usize,
    },
    Item {
        marker: String,
        used: bool,
        /// Not the first item of its list.
        later: bool,
    },
}

#[derive(Default)]
struct Table {
    alignments: Vec<Alignment>,
    rows: Vec<Vec<Vec<Span<'static>>>>,
    row: Vec<Vec<Span<'static>>>,
    cell: Vec<Span<'static>>,
    header: bool,
}

pub(super) struct Renderer<'o> {
    width: usize,
    out: &'o mut Vec<Line<'static>>,
    containers: Vec<Container>,
    inline: Vec<Span<'static>>,
    styles: Vec<Style>,
    /// Each open link: its URL and where its text starts in `inline`.
    links: Vec<(String, usize)>,
    /// The text of the code or HTML block being read, and its style.
    verbatim: Option<(String, Style)>,
    table: Option<Table>,
    /// Whether a block was written in this chunk (the next one gets a blank line first).
    emitted: bool,
    /// A container just opened: its first block needs no blank line before it.
    fresh: bool,
}

impl<'o> Renderer<'o> {
    pub(super) fn new(width: usize, out: &'o mut Vec<Line<'static>>) -> Self {
        Renderer {
            width,
            out,
            containers: Vec::new(),
            inline: Vec::new(),
            styles: Vec::new(),
            links: Vec::new(),
            verbatim: None,
            table: None,
            emitted: false,
            fresh: false,
        }
    }

    pub(super) fn run(mut self, text: &str) {
        for event in Parser::new_ext(text, options()) {
            self.event(event);
        }
        self.flush();
    }

    fn style(&self) -> Style {
        self.styles.iter().fold(theme::TEXT, |acc, s| acc.patch(*s))
    }

    fn push_text(&mut self, text: &str, style: Style) {
        let span = Span::styled(sanitize(text).into_owned(), style);
        match &mut self.table {
            Some(t) => t.cell.push(span),
            None => self.inline.push(span),
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => match &mut self.verbatim {
                Some((buf, _)) => buf.push_str(&t),
                None => self.push_text(&t, self.style()),
            },
            Event::Code(t) => self.push_text(&t, self.style().patch(theme::INLINE_CODE)),
            Event::Html(t) => match &mut self.verbatim {
                Some((buf, _)) => buf.push_str(&t),
                None => self.push_text(&t, theme::DIM),
            },
            Event::InlineHtml(t) | Event::InlineMath(t) | Event::DisplayMath(t) => {
                self.push_text(&t, self.style().patch(theme::DIM))
            }
            Event::FootnoteReference(label) => {
                self.push_text(&format!("[^{label}]"), self.style().patch(theme::DIM))
            }
            Event::SoftBreak => self.push_text(" ", self.style()),
            Event::HardBreak => self.flush(),
            Event::Rule => {
                self.start_block();
                let (first, _) = self.prefixes();
                let n = self.width.saturating_sub(spans_width(&first)).max(1);
                let mut spans = first;
                spans.push(Span::styled("─".repeat(n), theme::RULE));
                self.out.push(Line::from(spans));
                self.mark_used();
                self.emitted = true;
            }
            Event::TaskListMarker(done) => {
                let mark = if done { "☑ " } else { "☐ " };
                self.push_text(mark, theme::LIST_MARKER);
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => {
                // Paragraphs in items mean a loose list: its items are apart.
                if self.fresh
                    && matches!(
                        self.containers.last(),
                        Some(Container::Item { later: true, .. })
                    )
                {
                    self.fresh = false;
                }
                self.start_block()
            }
            Tag::Heading { level, .. } => {
                self.start_block();
                let style = match level {
                    HeadingLevel::H1 => theme::HEADING.add_modifier(Modifier::UNDERLINED),
                    HeadingLevel::H2 => theme::HEADING,
                    _ => theme::HEADING.add_modifier(Modifier::ITALIC),
                };
                self.styles.push(style);
            }
            Tag::BlockQuote(_) => {
                self.start_block();
                self.containers.push(Container::Quote);
                self.fresh = true;
            }
            Tag::CodeBlock(_) => {
                self.start_block();
                self.verbatim = Some((String::new(), theme::CODE_BLOCK));
            }
            Tag::HtmlBlock => {
                self.start_block();
                self.verbatim = Some((String::new(), theme::DIM));
            }
            Tag::List(start) => {
                let depth = self
                    .containers
                    .iter()
                    .filter(|c| matches!(c, Container::List { .. }))
                    .count();
                if self.in_item() {
                    self.flush();
                } else {
                    self.start_block();
                }
                self.containers.push(Container::List {
                    next: start,
                    depth,
                    items: 0,
                });
            }
            Tag::Item => {
                self.flush();
                let marker = match self.containers.last_mut() {
                    Some(Container::List { next: Some(n), .. }) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    Some(Container::List { depth, .. }) => match *depth % 3 {
                        0 => "• ",
                        1 => "◦ ",
                        _ => "▪ ",
                    }
                    .to_string(),
                    _ => "• ".to_string(),
                };
                let later = matches!(self.containers.last(), Some(Container::List { items, .. }) if *items > 0);
                if let Some(Container::List { items, .. }) = self.containers.last_mut() {
                    *items += 1;
                }
                self.containers.push(Container::Item {
                    marker,
                    used: false,
                    later,
                });
                self.fresh = true;
            }
            Tag::Emphasis => self.styles.push(theme::EMPHASIS),
            Tag::Strong => self.styles.push(theme::STRONG),
            Tag::Strikethrough => self.styles.push(theme::STRIKE),
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                self.styles.push(theme::LINK_TEXT);
                self.links.push((dest_url.to_string(), self.inline.len()));
            }
            Tag::Table(alignments) => {
                self.start_block();
                self.table = Some(Table {
                    alignments,
                    ..Table::default()
                });
            }
            Tag::TableHead => {
                if let Some(t) = &mut self.table {
                    t.header = true;
                }
            }
            Tag::TableRow | Tag::TableCell => {}
            Tag::FootnoteDefinition(label) => {
                self.start_block();
                self.push_text(&format!("[^{label}]: "), theme::DIM);
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::FootnoteDefinition => {
                self.flush();
                self.emitted = true;
            }
            TagEnd::Heading(_) => {
                self.flush();
                self.styles.pop();
                self.emitted = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.containers.pop();
                self.fresh = false;
                self.emitted = true;
            }
            TagEnd::CodeBlock | TagEnd::HtmlBlock => {
                if let Some((text, style)) = self.verbatim.take() {
                    self.write_verbatim(&text, style, tag == TagEnd::CodeBlock);
                }
                self.emitted = true;
            }
            TagEnd::List(_) => {
                self.flush();
                self.containers.pop();
                self.emitted = true;
            }
            TagEnd::Item => {
                self.flush();
                if let Some(Container::Item { used: false, .. }) = self.containers.last() {
                    let (first, _) = self.prefixes();
                    self.out.push(Line::from(first));
                }
                self.containers.pop();
                self.fresh = false;
                self.emitted = true;
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link | TagEnd::Image => {
                self.styles.pop();
                if let Some((url, start)) = self.links.pop() {
                    let shown: String = self
                        .inline
                        .get(start..)
                        .unwrap_or_default()
                        .iter()
                        .map(|s| s.content.as_ref())
                        .collect();
                    let plain = url.strip_prefix("mailto:").unwrap_or(&url);
                    if !url.is_empty() && shown != plain && self.table.is_none() {
                        self.push_text(&format!(" ({url})"), theme::LINK_URL);
                    }
                }
            }
            TagEnd::TableCell => {
                if let Some(t) = &mut self.table {
                    let cell = std::mem::take(&mut t.cell);
                    t.row.push(cell);
                }
            }
            TagEnd::TableHead | TagEnd::TableRow => {
                if let Some(t) = &mut self.table {
                    let row = std::mem::take(&mut t.row);
                    t.rows.push(row);
                }
            }
            TagEnd::Table => {
                if let Some(t) = self.table.take() {
                    self.write_table(t);
                }
                self.emitted = true;
            }
            _ => {}
        }
    }

    fn in_item(&self) -> bool {
        self.containers
            .iter()
            .any(|c| matches!(c, Container::Item { .. }))
    }

    /// Before a block: write any text still pending, then a blank line unless this is
    /// the first block of the chunk or of a container.
    fn start_block(&mut self) {
        self.flush();
        if self.emitted && !self.fresh {
            let (_, rest) = self.prefixes();
            let quotes: Vec<Span<'static>> = rest
                .into_iter()
                .filter(|s| s.content.trim() != "")
                .collect();
            let mut spans = vec![Span::raw(MARGIN)];
            spans.extend(quotes);
            if spans.len() == 1 {
                spans.clear();
            }
            self.out.push(Line::from(spans));
        }
        self.fresh = false;
    }

    /// The prefixes of a block's first and following lines: the margin, quote bars, list
    /// markers (on an item's first line) and their hanging indents.
    fn prefixes(&self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let mut first = vec![Span::raw(MARGIN)];
        let mut rest = vec![Span::raw(MARGIN)];
        for c in &self.containers {
            match c {
                Container::Quote => {
                    first.push(Span::styled("│ ", theme::QUOTE));
                    rest.push(Span::styled("│ ", theme::QUOTE));
                }
                Container::Item { marker, used, .. } => {
                    let pad = " ".repeat(width(marker));
                    if *used {
                        first.push(Span::raw(pad.clone()));
                    } else {
                        first.push(Span::styled(marker.clone(), theme::LIST_MARKER));
                    }
                    rest.push(Span::raw(pad));
                }
                Container::List { .. } => {}
            }
        }
        (first, rest)
    }

    fn mark_used(&mut self) {
        for c in &mut self.containers {
            if let Container::Item { used, .. } = c {
                *used = true;
            }
        }
    }

    /// Wrap the pending inline text into lines.
    fn flush(&mut self) {
        if self.inline.is_empty() {
            return;
        }
        let spans = std::mem::take(&mut self.inline);
        let (first, rest) = self.prefixes();
        let style = if self
            .containers
            .iter()
            .any(|c| matches!(c, Container::Quote))
        {
            theme::QUOTE
        } else {
            Style::default()
        };
        let spans: Vec<Span<'static>> = if style == Style::default() {
            spans
        } else {
            spans
                .into_iter()
                .map(|s| {
                    let st = style.patch(s.style);
                    s.style(st)
                })
                .collect()
        };
        wrap_into(&spans, self.width, &first, &rest, WrapMode::Words, self.out);
        self.mark_used();
        self.emitted = true;
    }

    /// A code or HTML block: each source line wrapped by character, indentation kept.
    fn write_verbatim(&mut self, text: &str, style: Style, code: bool) {
        let (mut first, mut rest) = self.prefixes();
        if code {
            first.push(Span::styled(CODE_INDENT, theme::CODE_GUTTER));
            rest.push(Span::styled(CODE_INDENT, theme::CODE_GUTTER));
        }
        // No content is no line; "\n" is one empty line.
        if text.is_empty() {
            return;
        }
        let text = text.strip_suffix('\n').unwrap_or(text);
        for line in text.split('\n') {
            let line = line.strip_suffix('\r').unwrap_or(line);
            let clean = sanitize(line);
            let span = [Span::styled(clean.as_ref(), style)];
            wrap_into(&span, self.width, &first, &rest, WrapMode::Chars, self.out);
            first.clone_from(&rest);
            self.mark_used();
        }
    }

    /// A table: columns padded to their widest cell when it fits, else one wrapped line
    /// per row.
    fn write_table(&mut self, t: Table) {
        let (first, rest) = self.prefixes();
        let cols = t.rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut widths = vec![0usize; cols];
        for row in &t.rows {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(spans_width(cell));
            }
        }
        let total = widths.iter().sum::<usize>() + 3 * cols.saturating_sub(1);
        let fits = spans_width(&rest) + total <= self.width;
        let sep = || Span::styled(" │ ", theme::DIM);
        for (r, row) in t.rows.iter().enumerate() {
            let header = t.header && r == 0;
            let mut spans: Vec<Span<'static>> = Vec::new();
            for (i, cell) in row.iter().enumerate() {
                if i > 0 {
                    spans.push(sep());
                }
                let cell_spans = cell.iter().map(|s| {
                    if header {
                        s.clone().style(theme::STRONG.patch(s.style))
                    } else {
                        s.clone()
                    }
                });
                let pad = widths[i].saturating_sub(spans_width(cell));
                let (left, right) = match (fits, t.alignments.get(i)) {
                    (false, _) => (0, 0),
                    (true, Some(Alignment::Right)) => (pad, 0),
                    (true, Some(Alignment::Center)) => (pad / 2, pad - pad / 2),
                    (true, _) => (0, if i + 1 == row.len() { 0 } else { pad }),
                };
                if left > 0 {
                    spans.push(Span::raw(" ".repeat(left)));
                }
                spans.extend(cell_spans);
                if right > 0 {
                    spans.push(Span::raw(" ".repeat(right)));
                }
            }
            let p = if r == 0 { &first } else { &rest };
            wrap_into(&spans, self.width, p, &rest, WrapMode::Words, self.out);
            if header && fits {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                let mut line = rest.clone();
                line.push(Span::styled(rule.join("─┼─"), theme::DIM));
                self.out.push(Line::from(line));
            }
        }
        self.mark_used();
    }
}
