//! The Ctrl-R search, drawn in place of the input box: the prompt and the query in the
//! box's title (`reverse-i-search: cargo`, "failing" when nothing holds it), the match
//! below with the query's first occurrence highlighted, from the line that holds it.
//! Nothing matched yet: what to do, dimmed.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

use super::sanitize::sanitize;
use super::theme;
use super::wrap::truncate;
use crate::app::history_search::HistorySearch;

/// The search over `history`, drawn over the input box's area.
pub struct SearchBox<'a> {
    pub search: &'a HistorySearch,
    pub history: &'a [String],
}

impl Widget for SearchBox<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        Clear.render(area, buf);
        let search = self.search;
        let prompt = if search.failed {
            "failing reverse-i-search"
        } else {
            "reverse-i-search"
        };
        let query = sanitize(&search.query).replace('\n', " ");
        let title = Line::from(vec![
            Span::styled(format!(" {prompt}: "), theme::HINT),
            Span::styled(query, theme::TITLE),
            Span::styled("▏ ", theme::HINT),
        ]);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(if search.failed {
                theme::WARNING
            } else {
                theme::HINT
            })
            .title_top(title);
        let inner = block.inner(area);
        block.render(area, buf);
        let inner = super::input::padded(inner);
        if inner.is_empty() {
            return;
        }
        let width = usize::from(inner.width);
        let Some(entry) = search.found.and_then(|i| self.history.get(i)) else {
            let text = if self.history.is_empty() {
                "no earlier inputs yet"
            } else {
                "type to search earlier inputs"
            };
            buf.set_line(
                inner.x,
                inner.y,
                &Line::styled(truncate(text, width), theme::DIM),
                inner.width,
            );
            return;
        };
        let entry = sanitize(entry);
        let lines: Vec<&str> = entry.split('\n').collect();
        let lower = search.query.to_lowercase();
        let hit_line = lines
            .iter()
            .position(|l| !lower.is_empty() && l.to_lowercase().contains(&lower))
            .unwrap_or(0);
        for (row, text) in lines
            .iter()
            .skip(hit_line)
            .take(usize::from(inner.height))
            .enumerate()
        {
            let line = highlighted(text, &search.query, width);
            buf.set_line(inner.x, inner.y + row as u16, &line, inner.width);
        }
    }
}

/// `text` with the first occurrence of `query` (ignoring case) highlighted, cut to
/// `width` columns.
fn highlighted(text: &str, query: &str, width: usize) -> Line<'static> {
    let text = truncate(text, width);
    let found = (!query.is_empty())
        .then(|| find_ignoring_case(&text, query))
        .flatten();
    match found {
        Some((start, end)) => Line::from(vec![
            Span::styled(text[..start].to_string(), theme::TEXT),
            Span::styled(text[start..end].to_string(), theme::SELECTED),
            Span::styled(text[end..].to_string(), theme::TEXT),
        ]),
        None => Line::styled(text, theme::TEXT),
    }
}

/// The byte range of `query`'s first occurrence in `text`, ignoring case (character by
/// character, so the range lies on `text`'s own boundaries).
fn find_ignoring_case(text: &str, query: &str) -> Option<(usize, usize)> {
    let query: Vec<char> = query.chars().flat_map(char::to_lowercase).collect();
    text.char_indices().find_map(|(start, _)| {
        let mut end = start;
        let mut rest = text[start..].char_indices();
        for &want in &query {
            match rest.next() {
                Some((offset, c)) if c.to_lowercase().eq(std::iter::once(want)) => {
                    end = start + offset + c.len_utf8();
                }
                _ => return None,
            }
        }
        Some((start, end))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hit_is_found_on_character_boundaries_ignoring_case() {
        assert_eq!(find_ignoring_case("Run Cargo test", "cargo"), Some((4, 9)));
        assert_eq!(find_ignoring_case("é cargo", "CARGO"), Some((3, 8)));
        assert_eq!(find_ignoring_case("abc", "x"), None);
    }
}
