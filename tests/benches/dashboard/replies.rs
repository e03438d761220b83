//! The replies the scripted server streams.

use rein_test_support as support;

use std::time::Duration;

use serde_json::json;
use support::{chunk, usage_chunk, Reply, Step};

use super::{Shape, CHUNK_CHARS, MARKER, PACE_EVERY, PACE_SLEEP, REPLY_CHARS};

/// Markdown with paragraphs, emphasis, lists, code blocks and quotes, exactly `REPLY_CHARS`
/// characters long and ending in its own paragraph with `MARKER`. Each unit is numbered
/// (since 2026-12-04): the same unit over and over is a reply that repeats itself, which
/// rein stops (`agent::repetition`).
pub(super) fn reply_text() -> String {
    let unit = |n: usize| {
        format!(
            "Here is what I found in `src/parse{n:04}.rs`: the tokenizer treats **every** \
whitespace character as a separator, so tabs inside quoted words split them.\n\n\
- the first case is a tab inside quotes\n- the second is a run of spaces\n  1. leading\n  2. trailing\n\n\
```rust\nfn parse(s: &str) -> Vec<&str> {{\n    s.split(' ').filter(|w| !w.is_empty()).collect()\n}}\n```\n\n\
> Note: the old behaviour is documented in the README, see [the guide](https://example.com/guide).\n\n"
        )
    };
    let tail = format!("\n\n{MARKER}");
    let mut text = String::with_capacity(REPLY_CHARS);
    let mut n = 0;
    while text.len() + unit(n).len() + tail.len() <= REPLY_CHARS {
        text.push_str(&unit(n));
        n += 1;
    }
    const FILLER: &[&str] = &["the ", "parser ", "splits ", "words "];
    let mut i = 0;
    while text.len() + tail.len() < REPLY_CHARS {
        let word = FILLER[i % FILLER.len()];
        let room = REPLY_CHARS - tail.len() - text.len();
        text.push_str(&word[..word.len().min(room)]);
        i += 1;
    }
    text.push_str(&tail);
    assert_eq!(text.chars().count(), REPLY_CHARS);
    text
}

/// A reply of `chars` characters in `shape`, ending in `MARKER`.
pub(super) fn sized_reply(chars: usize, shape: Shape) -> String {
    let unit = match shape {
        Shape::Paragraphs => reply_text().replace(MARKER, ""),
        // Numbered, as `reply_text`'s units are.
        Shape::Lines => (0..1000)
            .map(|n| format!("the parser splits words at whitespace {n:04}\n"))
            .collect(),
        Shape::OneLine => (0..1000)
            .map(|n| format!("the parser splits words at whitespace character {n:04} "))
            .collect(),
    };
    let tail = match shape {
        Shape::Paragraphs => format!("\n\n{MARKER}"),
        Shape::Lines => format!("\n{MARKER}"),
        Shape::OneLine => format!(" {MARKER}"),
    };
    let mut text = String::with_capacity(chars);
    while text.len() + tail.len() < chars {
        let room = chars - tail.len() - text.len();
        text.push_str(&unit[..unit.len().min(room)]);
    }
    text.push_str(&tail);
    text
}

/// The reply in `CHUNK_CHARS`-character content deltas, optionally paced.
pub(super) fn long_reply(text: &str, paced: bool) -> (Reply, usize) {
    long_reply_written(text, paced, false)
}

/// [`long_reply`], and with `each` every chunk written on its own (the server's write per
/// chunk, as a server that flushes each token does), unpaced.
pub(super) fn long_reply_written(text: &str, paced: bool, each: bool) -> (Reply, usize) {
    let mut steps = vec![Step::Data(chunk(
        json!({ "role": "assistant", "content": "" }),
        None,
    ))];
    let pieces: Vec<&str> = text
        .as_bytes()
        .chunks(CHUNK_CHARS)
        .map(|b| std::str::from_utf8(b).expect("the reply is ASCII"))
        .collect();
    for (i, piece) in pieces.iter().enumerate() {
        steps.push(Step::Data(chunk(json!({ "content": piece }), None)));
        if each {
            steps.push(Step::Sleep(Duration::ZERO));
        } else if paced && (i + 1) % PACE_EVERY == 0 {
            steps.push(Step::Sleep(PACE_SLEEP));
        }
    }
    steps.push(Step::Data(chunk(json!({}), Some("stop"))));
    steps.push(Step::Data(usage_chunk(100, pieces.len() as u64)));
    steps.push(Step::Done);
    (Reply::sse(steps), pieces.len())
}
