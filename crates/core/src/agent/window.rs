//! The model's context window while its server is still being asked for it.
//!
//! A window the user configured (`context_window`, `REIN_CONTEXT_WINDOW`, a provider's
//! model entry) is known at start and nothing is asked. Otherwise the front end asks the
//! server (`config::discover`, two seconds at most) in a task of its own while the agent
//! and the screen start, and hands the agent the receiving end of a
//! [`tokio::sync::watch`] channel at spawn ([`super::spawn_learning_window`]): it holds
//! [`WindowProbe::Asking`], then [`WindowProbe::Answered`]. A watch rather than a command:
//! the answer is a state with one writer that anyone may read at any time (the agent
//! before each request, an agent started later on `/resume`), never queued behind user
//! messages, and a sender that goes away without a word reads as "no answer".
//!
//! Until the answer comes the agent runs on the configured (or default) window but
//! decides nothing that depends on it: before a request it checks that the request is
//! [clearly small](clearly_small). One that is goes at once; any other waits for the
//! answer (or [`ANSWER_WAIT`], or the end of the channel), and only then is it fitted (the
//! user's message cut, old results stubbed or dropped, the history compacted). Subagents
//! (which budget their own history on the window they are given) and `/compact` wait too.
//! The answer is reported as [`super::AgentEvent::WindowLearnt`] the moment it arrives
//! (the inbox watches the channel whatever the agent is waiting for) and takes effect
//! before the agent's next count or decision. A `/model` switch brings its own window:
//! the answer about the first model no longer matters and is not waited for.
//!
//! **Clearly small.** A request that cannot overflow any window a server plausibly runs
//! a chat model with for rein, however its tokenizer counts:
//! - the smallest such window is [`SMALLEST_WINDOW`], 4 096 tokens, the usual default
//!   context of local servers (llama.cpp's server for a long time, Ollama's and LM
//!   Studio's in recent versions). Below it rein's own system prompt and tool schemas
//!   (about 2 000 tokens) leave no room to work whatever the agent does (Ollama's older
//!   2 048 default cuts the prompt itself), so waiting would not help;
//! - [`REPLY_ROOM`] (512) of it is left for the chat template's own tokens and the first
//!   tokens of the reply, so the request may hold at most 3 584 tokens;
//! - the system prompt and the tool schemas (English prose and JSON, about 4 bytes a token
//!   with the common tokenizers) are counted at 3 bytes a token;
//! - everything after the system prompt (the user's words, their attachments and
//!   reminder, a resumed history), which may be any language, code or noise, is counted at
//!   one token per byte, plus the per-message overhead: byte-level BPE and SentencePiece's
//!   byte fallback never spend more than one token on a byte.
//!
//! With rein's own prompt and tools (about 8 000 bytes, 2 700 tokens counted so) a first
//! message of up to about 900 bytes, reminder included, goes at once. A longer one, a
//! resumed conversation, or a project whose AGENTS.md, skills or MCP tools fill the prompt
//! waits for the answer, which costs nothing when the server answers at once (a local
//! one does) and at most the two seconds when it does not.

use std::time::Duration;

use serde::Serialize;
use tokio::sync::watch;

/// The smallest context window a server plausibly runs a chat model with for rein.
pub const SMALLEST_WINDOW: u64 = 4_096;

/// Tokens of [`SMALLEST_WINDOW`] a clearly small request leaves for the chat template
/// and the reply's first tokens.
pub const REPLY_ROOM: u64 = 512;

/// Bytes a token at least, counted for the system prompt and the tool schemas.
const FIXED_BYTES_PER_TOKEN: usize = 3;

/// The longest the agent waits for the answer. The question itself gives up after
/// `config::discover::TIMEOUT` (2 s) and then answers "nothing"; this only bounds a
/// question whose task never answers at all.
pub const ANSWER_WAIT: Duration = Duration::from_secs(3);

/// Where the question about the window stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WindowProbe {
    /// The server has been asked; no answer yet.
    Asking,
    /// The question is over.
    Answered(Answer),
}

/// What the server said about the window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Answer {
    /// The window in tokens, and the URL that reported it.
    Reported { tokens: u64, url: String },
    /// Nothing usable in time (down, slow, another kind of server): the configured (or
    /// default) window stands.
    Silent,
}

/// The agent's end of the question.
pub type WindowWatch = watch::Receiver<WindowProbe>;

/// The asking task's end: it sends one [`WindowProbe::Answered`].
pub type WindowAnswer = watch::Sender<WindowProbe>;

/// A new question, still unanswered.
pub fn channel() -> (WindowAnswer, WindowWatch) {
    watch::channel(WindowProbe::Asking)
}

/// Tokens a request may hold at most, counted as [`clearly_small`] counts: what
/// [`SMALLEST_WINDOW`] leaves after [`REPLY_ROOM`].
pub const CLEARLY_SMALL_TOKENS: u64 = SMALLEST_WINDOW - REPLY_ROOM;

/// The request's tokens, counted so that no tokenizer makes more of it: `fixed_bytes`
/// (the system prompt and the tool schemas) at 3 bytes a token, `rest_bytes` (every
/// message after the system prompt, their overhead included) at one token a byte.
pub fn pessimistic_tokens(fixed_bytes: usize, rest_bytes: usize) -> u64 {
    let fixed = fixed_bytes.div_ceil(FIXED_BYTES_PER_TOKEN) as u64;
    fixed.saturating_add(rest_bytes as u64)
}

/// Whether a request may go before the window is known: it fits any plausible window
/// (see the module's doc).
pub fn clearly_small(fixed_bytes: usize, rest_bytes: usize) -> bool {
    pessimistic_tokens(fixed_bytes, rest_bytes) <= CLEARLY_SMALL_TOKENS
}

/// The answer once the question is over: [`Answer::Silent`] when the asking side went
/// away without one.
pub(crate) async fn answer(rx: &mut WindowWatch) -> Answer {
    match rx
        .wait_for(|probe| matches!(probe, WindowProbe::Answered(_)))
        .await
    {
        Ok(probe) => match &*probe {
            WindowProbe::Answered(answer) => answer.clone(),
            WindowProbe::Asking => Answer::Silent,
        },
        Err(_) => Answer::Silent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rein_s_own_prompt_with_a_short_message_is_clearly_small() {
        // About what rein's system prompt and tools take (see the module doc).
        let fixed = 8_000;
        assert!(clearly_small(fixed, 200));
        assert!(clearly_small(fixed, 900));
        assert!(!clearly_small(fixed, 1_000));
        assert!(!clearly_small(fixed, 50_000));
        // A prompt that fills the smallest window alone never goes unasked.
        assert!(!clearly_small(12_000, 0));
    }

    #[test]
    fn the_bound_fits_the_smallest_window_with_room_to_reply() {
        assert_eq!(CLEARLY_SMALL_TOKENS, 3_584);
        assert_eq!(pessimistic_tokens(3, 1), 2);
        assert_eq!(pessimistic_tokens(4, 0), 2);
        assert_eq!(pessimistic_tokens(0, usize::MAX), usize::MAX as u64);
    }

    #[tokio::test]
    async fn an_answer_arrives_and_a_vanished_asker_means_silence() {
        let (tx, mut watch) = channel();
        tx.send_replace(WindowProbe::Answered(Answer::Reported {
            tokens: 8192,
            url: "http://x/props".into(),
        }));
        assert_eq!(
            answer(&mut watch).await,
            Answer::Reported {
                tokens: 8192,
                url: "http://x/props".into()
            }
        );
        let (tx, mut watch) = channel();
        drop(tx);
        assert_eq!(answer(&mut watch).await, Answer::Silent);
    }
}
