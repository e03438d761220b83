//! Layer 3, drop: when the estimate is still over budget after stubbing, old tool results
//! are replaced, oldest first, by a one-line note until it fits.
//!
//! In: the history (the system prompt first), how many recent messages to leave alone, and
//! a test of whether the history fits. Out: the history rewritten in place and a
//! [`Dropped`] report with the positions replaced (for the session file), or `None` when
//! nothing could be dropped. A result already dropped is recognised by its exact text, so
//! dropping twice changes nothing.

use crate::conversation::Message;

/// The note that stands in for a dropped result.
pub const NOTE: &str = "[dropped to fit the context window: this old tool result is gone; \
                        run the tool again if you need it]";

/// One line for the user: "4 old tool results dropped to fit the context window, 96k → 61k
/// tokens".
pub fn summary(dropped: usize, before_tokens: u64, after_tokens: u64) -> String {
    let plural = if dropped == 1 { "" } else { "s" };
    format!(
        "{dropped} old tool result{plural} dropped to fit the context window, {} → {} tokens",
        super::short_count(before_tokens),
        super::short_count(after_tokens)
    )
}

/// What one drop pass did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    /// Positions in the history (system prompt at 0) of the results replaced, in order.
    pub indices: Vec<usize>,
}

/// Replace tool results of `history`, oldest first and never within the last
/// `keep_recent` messages, by [`NOTE`] until `fits(history)` holds.
pub fn drop_old_results(
    history: &mut [Message],
    keep_recent: usize,
    mut fits: impl FnMut(&[Message]) -> bool,
) -> Option<Dropped> {
    let old = history.len().saturating_sub(keep_recent);
    let mut indices = Vec::new();
    for i in 0..old {
        if fits(history) {
            break;
        }
        if drop_at(history, i) {
            indices.push(i);
        }
    }
    (!indices.is_empty()).then_some(Dropped { indices })
}

/// Replace the tool result at `i` by the note; false when it is not a tool result, is
/// dropped already, or is no longer than the note.
pub fn drop_at(history: &mut [Message], i: usize) -> bool {
    match history.get_mut(i) {
        // A result no longer than the note would only grow.
        Some(Message::Tool { content, .. }) if content.len() > NOTE.len() => {
            *content = NOTE.to_string();
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(h: &[Message]) -> usize {
        h.iter().map(Message::approx_chars).sum()
    }

    #[test]
    fn oldest_results_go_first_and_only_until_it_fits() {
        let big = "x".repeat(1000);
        let mut h = vec![
            Message::system("s"),
            Message::user("u"),
            Message::tool("a", big.clone()),
            Message::tool("b", big.clone()),
            Message::tool("c", big.clone()),
            Message::tool("d", big.clone()),
        ];
        let dropped = drop_old_results(&mut h, 1, |h| size(h) < 2500).unwrap();
        assert_eq!(dropped.indices, vec![2, 3]);
        assert_eq!(h[2], Message::tool("a", NOTE));
        assert_eq!(h[4], Message::tool("c", big.clone()), "it fits: c stays");
        // Nothing fits: everything old goes, the recent message never.
        let dropped = drop_old_results(&mut h, 1, |_| false).unwrap();
        assert_eq!(dropped.indices, vec![4]);
        assert_eq!(h[5], Message::tool("d", big));
        assert_eq!(drop_old_results(&mut h, 1, |_| false), None);
    }

    #[test]
    fn a_fitting_history_is_left_alone() {
        let mut h = vec![Message::system("s"), Message::tool("a", "x".repeat(10))];
        assert_eq!(drop_old_results(&mut h, 0, |_| true), None);
        assert_eq!(
            drop_old_results(&mut h, 0, |_| false),
            None,
            "a result shorter than the note stays"
        );
        assert!(!drop_at(&mut h, 0), "only tool results are dropped");
        assert!(!drop_at(&mut h, 7), "out of range is no drop");
    }
}
