//! The conversation the model sees: the system prompt, then the stored messages, and which
//! of them (if any) is a compaction's handoff note.
//!
//! The note is an ordinary `user` message on the wire; which message it is lives here, in
//! the structure, so nothing ever has to search message text for a marker. A message that
//! is rewritten in place (a stub, a drop) keeps its position; a compaction replaces the
//! whole history and says where its note is.

use crate::conversation::Message;

#[derive(Debug, Clone, PartialEq)]
pub struct History {
    /// The system prompt first.
    messages: Vec<Message>,
    /// The position of the handoff note in `messages`.
    summary: Option<usize>,
}

impl History {
    /// A history holding only `system_prompt`.
    pub fn new(system_prompt: String) -> History {
        History {
            messages: vec![Message::system(system_prompt)],
            summary: None,
        }
    }

    /// The system prompt, then `stored` (a session's history, which leaves the prompt out)
    /// with its note at `summary` (an index into `stored`), if that is in range.
    pub fn restore(system_prompt: String, stored: Vec<Message>, summary: Option<usize>) -> History {
        let summary = summary.filter(|&i| i < stored.len()).map(|i| i + 1);
        let mut messages = Vec::with_capacity(stored.len() + 1);
        messages.push(Message::system(system_prompt));
        messages.extend(stored);
        History { messages, summary }
    }

    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// For rewriting results in place (stubs, drops): positions stay, so the note stays.
    pub fn messages_mut(&mut self) -> &mut [Message] {
        &mut self.messages
    }

    pub fn len(&self) -> usize {
        self.messages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    pub fn push(&mut self, message: Message) {
        self.messages.push(message);
    }

    /// The newest message, to attach a reminder to (never the system prompt).
    pub fn last_mut(&mut self) -> Option<&mut Message> {
        if self.messages.len() > 1 {
            self.messages.last_mut()
        } else {
            None
        }
    }

    /// The handoff note's position (0 is the system prompt).
    pub fn summary(&self) -> Option<usize> {
        self.summary
    }

    /// The stored part: everything after the system prompt.
    pub fn stored(&self) -> &[Message] {
        self.messages.get(1..).unwrap_or_default()
    }

    /// Keep the system prompt; the rest becomes `rest`, with the note at `summary` (an
    /// index into `rest`).
    pub fn replace(&mut self, rest: Vec<Message>, summary: Option<usize>) {
        self.messages.truncate(1);
        self.summary = summary.filter(|&i| i < rest.len()).map(|i| i + 1);
        self.messages.extend(rest);
    }

    /// Only the system prompt remains.
    pub fn clear(&mut self) {
        self.replace(Vec::new(), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_is_tracked_by_position_across_prompt_and_storage() {
        let mut h = History::restore(
            "sys".into(),
            vec![Message::user("note"), Message::user("hi")],
            Some(0),
        );
        assert_eq!(h.summary(), Some(1));
        assert_eq!(h.stored().len(), 2);
        h.replace(vec![Message::user("a"), Message::user("b")], Some(1));
        assert_eq!(h.summary(), Some(2));
        assert_eq!(h.messages()[0], Message::system("sys"));
        h.replace(vec![Message::user("a")], Some(5));
        assert_eq!(h.summary(), None, "an index out of range is no note");
        h.clear();
        assert_eq!(h.len(), 1);
        assert_eq!(h.stored(), &[] as &[Message]);
    }
}
