//! Layer 4, compaction: a second model call turns the older part of the history into a
//! handoff note, and the history becomes the system prompt, the note and the last few
//! messages.
//!
//! Everything here is plain text and messages; the agent makes the model calls. The plan:
//! [`tail_start`] picks where the kept tail begins (always at a user or assistant message,
//! so a tool call is never separated from its results), sized to the budget left after the
//! system prompt, tools and note. The part before it is rendered as a plain transcript
//! ([`pieces`]), split into pieces that each fit the summariser's window; each piece is
//! one request ([`request`]) that writes the note, or updates the note of the pieces before
//! it. [`compacted`] builds the new history; [`summary_message`] is how the note appears
//! in it. The note's position is tracked by [`super::history::History`], not by its text.

use std::collections::HashMap;

use crate::conversation::Message;

use super::budget::message_chars;
use super::spill::cut;

/// The handoff prompt as shipped, before `{{words}}` is filled in.
const PROMPT_TEMPLATE: &str = include_str!("../../assets/handoff_prompt.md");

/// The assistant's acknowledgement after the note, when the kept tail does not start with
/// an assistant message: user and assistant messages keep alternating (strict chat
/// templates insist), and the next user message follows naturally.
pub const ACKNOWLEDGEMENT: &str = "Understood. I have the handoff note and continue from it.";

/// One line for the user: "compacted: 109k → 38k tokens (58 messages summarised, 6 kept)".
pub fn summary(before_tokens: u64, after_tokens: u64, summarised: usize, kept: usize) -> String {
    format!(
        "compacted: {} → {} tokens ({summarised} message{} summarised, {kept} kept)",
        super::short_count(before_tokens),
        super::short_count(after_tokens),
        if summarised == 1 { "" } else { "s" },
    )
}

/// The handoff prompt, asking for a note of at most about `words` words.
pub fn prompt(words: usize) -> String {
    PROMPT_TEMPLATE.replace("{{words}}", &words.to_string())
}

/// How many words to ask for when the note may take `tokens` tokens: about three
/// quarters of a word a token, rounded to a friendly figure.
pub fn words_for(tokens: u64) -> usize {
    let words = (tokens as usize).saturating_mul(3) / 4;
    (words / 50 * 50).max(100)
}

/// Where the kept tail begins: the earliest position after `from` holding a user or
/// assistant message such that the messages from there on take at most `budget_chars`
/// characters. `history.len()` when not even the last message fits (nothing is kept).
pub fn tail_start(history: &[Message], from: usize, budget_chars: usize) -> usize {
    let mut best = history.len();
    let mut size = 0usize;
    for i in (from..history.len()).rev() {
        size = size.saturating_add(message_chars(&history[i]));
        if size > budget_chars {
            break;
        }
        if matches!(history[i], Message::User { .. } | Message::Assistant { .. }) {
            best = i;
        }
    }
    best
}

/// `messages` as a plain transcript for the summariser, in pieces of at most about
/// `piece_chars` characters. A message larger than a piece keeps its head and tail.
/// `summary` is the position (in `messages`) of an earlier compaction's note, shown as such.
pub fn pieces(messages: &[Message], summary: Option<usize>, piece_chars: usize) -> Vec<String> {
    let piece_chars = piece_chars.max(1000);
    let mut names: HashMap<&str, &str> = HashMap::new();
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    for (i, message) in messages.iter().enumerate() {
        let block = render(message, Some(i) == summary, &mut names);
        let block = fit(&block, piece_chars);
        if !current.is_empty() && current.len() + block.len() > piece_chars {
            out.push(std::mem::take(&mut current));
        }
        current.push_str(&block);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// One message as transcript text, ending with a blank line.
fn render<'a>(
    message: &'a Message,
    is_summary: bool,
    names: &mut HashMap<&'a str, &'a str>,
) -> String {
    match message {
        _ if is_summary => format!(
            "[handoff note from an earlier compaction]\n{}\n\n",
            text_of(message).trim_end()
        ),
        Message::System { content } => format!("[system]\n{}\n\n", content.trim_end()),
        Message::User { content, .. } => format!("[user]\n{}\n\n", content.trim_end()),
        Message::Assistant {
            content,
            tool_calls,
            ..
        } => {
            let mut s = String::from("[assistant]\n");
            if let Some(text) = content.as_deref().filter(|t| !t.trim().is_empty()) {
                s.push_str(text.trim_end());
                s.push('\n');
            }
            for call in tool_calls {
                names.insert(&call.id, &call.function.name);
                s.push_str(&format!(
                    "-> calls {} {}\n",
                    call.function.name, call.function.arguments
                ));
            }
            s.push('\n');
            s
        }
        Message::Tool {
            tool_call_id,
            content,
            ..
        } => {
            let name = names.get(tool_call_id.as_str()).copied().unwrap_or("tool");
            format!("[{name} result]\n{}\n\n", content.trim_end())
        }
    }
}

fn text_of(message: &Message) -> &str {
    match message {
        Message::System { content } | Message::User { content, .. } => content,
        Message::Tool { content, .. } => content,
        Message::Assistant { content, .. } => content.as_deref().unwrap_or(""),
    }
}

/// `block` cut to about `limit` characters (head and tail, a note between).
fn fit(block: &str, limit: usize) -> String {
    let note_room = 80;
    match cut(block, limit.saturating_sub(note_room)) {
        None => block.to_string(),
        Some((head, tail)) => {
            let left_out = block.len() - head.len() - tail.len();
            format!("{head}\n[… about {left_out} bytes of this message left out …]\n{tail}")
        }
    }
}

/// The summariser's request for piece `index` (from 0) of `count`: the handoff prompt,
/// then the piece, the note so far (from the pieces before), and the user's focus.
pub fn request(
    prompt: &str,
    piece: &str,
    index: usize,
    count: usize,
    note_so_far: Option<&str>,
    focus: Option<&str>,
) -> Vec<Message> {
    let mut text = String::new();
    if let Some(note) = note_so_far {
        text.push_str(
            "The handoff note so far, written from the earlier part of the conversation:\n\n\
             <handoff-note>\n",
        );
        text.push_str(note.trim());
        text.push_str(
            "\n</handoff-note>\n\nThe conversation continues below. Write the whole note \
             again: keep what still matters from the note so far and add what is new.\n\n",
        );
    }
    if count > 1 {
        text.push_str(&format!(
            "The conversation, part {} of {count}:\n\n",
            index + 1
        ));
    } else {
        text.push_str("The conversation:\n\n");
    }
    text.push_str("<transcript>\n");
    text.push_str(piece.trim_end());
    text.push_str("\n</transcript>\n");
    if let Some(focus) = focus.map(str::trim).filter(|f| !f.is_empty()) {
        text.push_str(&format!("\nThe user asked the note to focus on: {focus}\n"));
    }
    text.push_str("\nWrite the handoff note now.");
    vec![Message::system(prompt), Message::user(text)]
}

/// The message that carries the note in the compacted history.
pub fn summary_message(note: &str, kept: usize) -> Message {
    let after = if kept == 0 {
        "Nothing after it was kept."
    } else {
        "The most recent messages follow it unchanged."
    };
    Message::user(format!(
        "This conversation was compacted to fit the context window: the messages before this \
         point were replaced by a handoff note written from them. {after}\n\n\
         <handoff-note>\n{}\n</handoff-note>",
        note.trim()
    ))
}

/// The history after the system prompt once compacted: the note, an acknowledgement when
/// the tail does not start with an assistant message, then `tail`. The note is at 0.
pub fn compacted(note: &str, tail: &[Message]) -> Vec<Message> {
    let mut rest = Vec::with_capacity(tail.len() + 2);
    rest.push(summary_message(note, tail.len()));
    if !matches!(tail.first(), Some(Message::Assistant { .. })) {
        rest.push(Message::assistant(ACKNOWLEDGEMENT.to_string(), Vec::new()));
    }
    rest.extend_from_slice(tail);
    rest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::ToolCall;

    fn turn(i: usize, result: usize) -> Vec<Message> {
        vec![
            Message::user(format!("question {i}")),
            Message::assistant(
                String::new(),
                vec![ToolCall::new(
                    format!("c{i}"),
                    "bash",
                    "{\"command\":\"ls\"}",
                )],
            ),
            Message::tool(format!("c{i}"), "r".repeat(result)),
            Message::assistant(format!("answer {i}"), Vec::new()),
        ]
    }

    fn history(turns: usize, result: usize) -> Vec<Message> {
        let mut h = vec![Message::system("sys")];
        for i in 0..turns {
            h.extend(turn(i, result));
        }
        h
    }

    #[test]
    fn the_tail_never_starts_at_a_tool_result() {
        let h = history(5, 1000);
        for budget in 0..6000 {
            let start = tail_start(&h, 1, budget);
            if start < h.len() {
                assert!(
                    !matches!(h[start], Message::Tool { .. }),
                    "budget {budget}: tail starts at a tool result"
                );
                let size: usize = h[start..].iter().map(message_chars).sum();
                assert!(size <= budget, "budget {budget}: tail of {size}");
            }
        }
        // Everything fits: the tail starts right after the system prompt.
        assert_eq!(tail_start(&h, 1, usize::MAX), 1);
        // Nothing fits.
        assert_eq!(tail_start(&h, 1, 0), h.len());
    }

    #[test]
    fn a_tail_starting_at_a_user_message_gets_an_acknowledgement_first() {
        let h = history(2, 10);
        let rest = compacted("the note", &h[5..]);
        assert!(
            matches!(&rest[0], Message::User { content, .. } if content.contains("<handoff-note>\nthe note\n</handoff-note>"))
        );
        assert_eq!(rest[1], Message::assistant(ACKNOWLEDGEMENT.into(), vec![]));
        assert_eq!(&rest[2..], &h[5..]);
        let rest = compacted("n", &h[6..]);
        assert_eq!(
            &rest[1..],
            &h[6..],
            "an assistant message follows the note directly"
        );
        assert_eq!(compacted("n", &[]).len(), 2);
    }

    #[test]
    fn the_transcript_names_tools_and_the_earlier_note() {
        let mut h = vec![Message::user("old note")];
        h.extend(turn(0, 5));
        let p = pieces(&h, Some(0), 100_000);
        assert_eq!(p.len(), 1);
        let t = &p[0];
        assert!(
            t.starts_with("[handoff note from an earlier compaction]\nold note\n\n"),
            "{t}"
        );
        assert!(
            t.contains("[assistant]\n-> calls bash {\"command\":\"ls\"}\n"),
            "{t}"
        );
        assert!(t.contains("[bash result]\nrrrrr\n"), "{t}");
        assert!(t.contains("[assistant]\nanswer 0\n"), "{t}");
    }

    #[test]
    fn a_long_transcript_is_split_into_pieces_that_fit() {
        let h = history(20, 3000);
        let p = pieces(&h[1..], None, 8000);
        assert!(p.len() > 5, "{} pieces", p.len());
        assert!(p.iter().all(|piece| piece.len() <= 8000));
        // Nothing is lost between pieces.
        let all: String = p.concat();
        for i in 0..20 {
            assert!(all.contains(&format!("question {i}")));
        }
        // A message larger than a piece keeps its head and tail.
        let huge = vec![Message::tool(
            "x",
            format!("HEAD{}TAIL", "m".repeat(50_000)),
        )];
        let p = pieces(&huge, None, 5000);
        assert_eq!(p.len(), 1);
        assert!(p[0].len() <= 5100 && p[0].contains("HEAD") && p[0].contains("TAIL"));
        assert!(p[0].contains("left out"));
    }

    #[test]
    fn the_request_carries_prompt_piece_note_so_far_and_focus() {
        let prompt = prompt(400);
        assert!(prompt.contains("at most about 400 words"));
        for section in [
            "## Goal",
            "## What happened",
            "## Files",
            "## State",
            "## Next",
        ] {
            assert!(prompt.contains(section), "{section}");
        }
        let r = request(
            &prompt,
            "[user]\nhi\n",
            1,
            3,
            Some("note 1"),
            Some("the parser"),
        );
        assert_eq!(r[0], Message::system(prompt.clone()));
        let Message::User { content, .. } = &r[1] else {
            panic!("{:?}", r[1])
        };
        assert!(content.contains("<handoff-note>\nnote 1\n</handoff-note>"));
        assert!(content.contains("part 2 of 3"));
        assert!(content.contains("<transcript>\n[user]\nhi\n</transcript>"));
        assert!(content.contains("focus on: the parser"));
        let Message::User { content, .. } = &request(&prompt, "x", 0, 1, None, Some("  "))[1]
        else {
            unreachable!()
        };
        assert!(!content.contains("handoff-note") && !content.contains("focus"));
    }

    #[test]
    fn words_are_asked_for_in_round_figures() {
        assert_eq!(words_for(4000), 3000);
        assert_eq!(words_for(10), 100);
        assert_eq!(words_for(1234), 900);
    }
}
