//! A reply whose request failed: what streamed of it stays in the history, with the
//! reason, so the next turn knows where the last one stopped. A reply stopped for growing
//! past what rein keeps of one ([`ClientError::ReplyTooLarge`]) keeps only its start, cut
//! with a mark that says so, in the transcript as in the history and the session file.

use super::Agent;
use crate::agent::client::ClientError;
use crate::agent::events::AgentEvent;
use crate::agent::stream::Assembler;

/// How much of the text (and of the reasoning shown) of a reply that grew too large is
/// kept: its start, enough to see what it was doing.
pub(super) const KEPT_OF_TOO_LARGE: usize = 16 * 1024;

/// What ends the kept start of a reply that grew too large.
pub(super) const TOO_LARGE_MARK: &str = " [… cut: the reply grew past what rein keeps of one]";

impl Agent {
    /// The request of this step failed with `error`: what streamed (in `assembler`) is
    /// kept, the error said.
    pub(super) fn request_failed(&mut self, error: ClientError, assembler: &mut Assembler) {
        let message = error.to_string();
        let mut partial = assembler.take_streamed();
        if matches!(error, ClientError::ReplyTooLarge(_)) {
            let text = cut(&partial);
            let reasoning = cut(assembler.reasoning());
            if text.is_some() || reasoning.is_some() {
                self.emit(AgentEvent::ReplyCut {
                    text: text.clone(),
                    reasoning,
                });
            }
            if let Some(text) = text {
                partial = text;
            }
        }
        self.keep_partial(partial, &format!("the request failed: {message}"));
        self.emit(AgentEvent::Error { message });
    }
}

/// `text` cut to its first [`KEPT_OF_TOO_LARGE`] bytes (at a character's start) and the
/// mark; `None` when it is that short already.
pub(super) fn cut(text: &str) -> Option<String> {
    if text.len() <= KEPT_OF_TOO_LARGE {
        return None;
    }
    let mut keep = KEPT_OF_TOO_LARGE;
    while !text.is_char_boundary(keep) {
        keep -= 1;
    }
    Some(format!("{}{TOO_LARGE_MARK}", &text[..keep]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_text_keeps_its_start_at_a_character() {
        assert_eq!(cut("short"), None);
        let text = "é".repeat(KEPT_OF_TOO_LARGE);
        let kept = cut(&text).unwrap();
        let start = kept.strip_suffix(TOO_LARGE_MARK).unwrap();
        assert_eq!(start.len(), KEPT_OF_TOO_LARGE);
        assert!(start.chars().all(|c| c == 'é'));
    }
}
