//! Layer 2, stubs for old results: once per user turn's end, every tool result older than
//! the most recent messages is cut to its first `context.stub_chars` characters plus a note.
//!
//! In: the history (the system prompt first, as the agent keeps it) and the settings. Out:
//! the history rewritten in place and a [`Trimmed`] report, or `None` when nothing was long
//! enough to stub. Running it only between turns, never between the requests of one turn,
//! keeps every request of a turn a strict extension of the one before (the provider's
//! prefix cache holds). A result already stubbed is recognised by its exact shape (its
//! first `stub_chars` characters, then the note), so stubbing twice changes nothing.

use super::short_count;
use crate::conversation::Message;

/// What one stubbing pass did: how many results it cut (and their positions in the
/// history), and the history's size in characters (as [`Message::approx_chars`] counts
/// them) before and after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trimmed {
    pub stubbed: usize,
    pub indices: Vec<usize>,
    pub before_chars: usize,
    pub after_chars: usize,
}

/// One line for the user: "3 old tool results stubbed: 29k characters fewer (41k → 12k
/// in the history)". What was saved comes first: in a long history it can be small next
/// to the whole, which the rounded figures then do not show ("6k → 6k").
pub fn summary(stubbed: usize, before_chars: usize, after_chars: usize) -> String {
    let plural = if stubbed == 1 { "" } else { "s" };
    format!(
        "{stubbed} old tool result{plural} stubbed: {} characters fewer ({} → {} in the \
         history)",
        short_count(before_chars.saturating_sub(after_chars) as u64),
        short_count(before_chars as u64),
        short_count(after_chars as u64)
    )
}

/// The note that ends a stub.
fn note(trimmed: usize) -> String {
    format!("\n[… {trimmed} characters trimmed from this old tool result]")
}

/// `content` stubbed to `stub_chars` characters, or `None` when it is short enough or is
/// a stub already.
pub fn stub(content: &str, stub_chars: usize) -> Option<String> {
    let total = content.chars().count();
    if total <= stub_chars {
        return None;
    }
    let split = content
        .char_indices()
        .nth(stub_chars)
        .map_or(content.len(), |(i, _)| i);
    let (head, rest) = content.split_at(split);
    if is_note(rest) {
        return None;
    }
    Some(format!("{head}{}", note(total - stub_chars)))
}

/// Whether `rest` is exactly a stub's note (for any count).
fn is_note(rest: &str) -> bool {
    rest.strip_prefix("\n[… ")
        .and_then(|r| r.strip_suffix(" characters trimmed from this old tool result]"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Stub every tool result of `history` except the last `keep_recent` messages.
pub fn stub_old_results(
    history: &mut [Message],
    stub_chars: usize,
    keep_recent: usize,
) -> Option<Trimmed> {
    let size = |h: &[Message]| h.iter().map(Message::approx_chars).sum::<usize>();
    let before_chars = size(history);
    let old = history.len().saturating_sub(keep_recent);
    let mut indices = Vec::new();
    for (i, message) in history[..old].iter_mut().enumerate() {
        if let Message::Tool {
            content, images, ..
        } = message
        {
            let short = stub(content, stub_chars);
            if short.is_some() || !images.is_empty() {
                if let Some(short) = short {
                    *content = short;
                }
                // Its images go with it (its text still describes them).
                images.clear();
                indices.push(i);
            }
        }
    }
    (!indices.is_empty()).then(|| Trimmed {
        stubbed: indices.len(),
        indices,
        before_chars,
        after_chars: size(history),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_results_are_cut_to_their_head_with_a_note() {
        let s = stub(&"é".repeat(1000), 300).unwrap();
        assert!(s.starts_with(&"é".repeat(300)));
        assert!(s.ends_with("[… 700 characters trimmed from this old tool result]"));
        assert_eq!(stub("short", 300), None);
        assert_eq!(stub(&"x".repeat(300), 300), None);
    }

    #[test]
    fn summary_reads_like_a_notice() {
        assert_eq!(
            summary(3, 41_234, 12_001),
            "3 old tool results stubbed: 29k characters fewer (41k → 12k in the history)"
        );
        assert_eq!(
            summary(1, 950, 400),
            "1 old tool result stubbed: 550 characters fewer (950 → 400 in the history)"
        );
        // A small saving in a long history is still said (the rounded sizes do not show it).
        assert_eq!(
            summary(1, 6_400, 6_100),
            "1 old tool result stubbed: 300 characters fewer (6k → 6k in the history)"
        );
    }

    #[test]
    fn a_stub_is_never_stubbed_again() {
        let s = stub(&"x".repeat(5000), 300).unwrap();
        assert_eq!(stub(&s, 300), None);
    }

    #[test]
    fn only_old_tool_results_are_stubbed() {
        let big = "y".repeat(2000);
        let mut history = vec![
            Message::system("sys"),
            Message::user(big.clone()),
            Message::tool("a", big.clone()),
            Message::tool("b", "small"),
            Message::tool("c", big.clone()),
            Message::tool("d", big.clone()),
        ];
        let trimmed = stub_old_results(&mut history, 300, 1).unwrap();
        assert_eq!(trimmed.stubbed, 2);
        assert_eq!(trimmed.indices, vec![2, 4]);
        assert!(trimmed.after_chars < trimmed.before_chars);
        assert_eq!(
            history[1],
            Message::user(big.clone()),
            "users are not stubbed"
        );
        assert_eq!(history[3], Message::tool("b", "small"));
        assert_eq!(
            history[5],
            Message::tool("d", big.clone()),
            "recent stays whole"
        );
        match &history[2] {
            Message::Tool { content, .. } => assert!(content.len() < 400),
            other => panic!("{other:?}"),
        }
        assert_eq!(stub_old_results(&mut history, 300, 1), None);
    }

    #[test]
    fn an_old_results_images_go_with_it_even_when_its_text_is_short() {
        let mut result = crate::conversation::ToolResult::ok("[image: image/png, 3 B]");
        result.images = vec![crate::conversation::Image {
            mime_type: "image/png".into(),
            data: "AAAA".into(),
        }];
        let mut history = vec![
            Message::system("sys"),
            Message::tool_result("a", result.clone()),
            Message::tool_result("b", result),
        ];
        let trimmed = stub_old_results(&mut history, 300, 1).unwrap();
        assert_eq!(trimmed.indices, vec![1]);
        assert!(trimmed.after_chars + 5_000 < trimmed.before_chars);
        let images = |m: &Message| match m {
            Message::Tool {
                images, content, ..
            } => (images.len(), content.clone()),
            other => panic!("{other:?}"),
        };
        assert_eq!(images(&history[1]), (0, "[image: image/png, 3 B]".into()));
        assert_eq!(images(&history[2]).0, 1, "recent keeps its images");
    }
}
