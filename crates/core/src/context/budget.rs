//! Token accounting: one number for the gauge and for every threshold.
//!
//! The number is the prompt tokens the server reported for the last request, plus an
//! estimate for everything appended to the history since. The estimate divides characters
//! by a characters-per-token figure learnt from the server's own usage reports in this
//! session (it starts at 4): each report pairs the request's size in characters (as
//! [`request_chars`] counts them) with the tokens the server counted, and the figure is
//! their running ratio. When the history is rewritten (stubs, drops, a compaction, a
//! resumed session) the last report no longer describes it, so the whole request is
//! estimated until the next report. A server that never reports usage leaves the figure
//! at 4 and the count marked as estimated.

use crate::conversation::Message;

/// Characters per token before the server has said anything.
pub const DEFAULT_CHARS_PER_TOKEN: f64 = 4.0;

/// Tokens that `chars` characters make at `chars_per_token` (rounded up): the one
/// estimate rein makes, whether at the learnt rate or at the default.
pub fn tokens_at(chars: usize, chars_per_token: f64) -> u64 {
    if chars == 0 {
        return 0;
    }
    (chars as f64 / chars_per_token.max(0.1)).ceil() as u64
}

/// What one message costs in characters beyond its text (role, separators, ids).
const MESSAGE_OVERHEAD: usize = 8;

/// A request's size in characters: its messages (with a small overhead each) and its tool
/// schemas (`tools_chars`, their JSON's length). The measure calibration and estimates
/// share, so they agree.
pub fn message_chars(message: &Message) -> usize {
    message.approx_chars() + MESSAGE_OVERHEAD
}

/// The characters of `messages`, as [`message_chars`] counts them.
pub fn messages_chars<'a>(messages: impl IntoIterator<Item = &'a Message>) -> usize {
    messages.into_iter().map(message_chars).sum()
}

/// A whole request's characters: its messages (reminders ride inside them) and the tool
/// schemas.
pub fn request_chars(history: &[Message], tools_chars: usize) -> usize {
    messages_chars(history) + tools_chars
}

/// The last request the server reported on: its prompt tokens, and how many history
/// messages it held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Report {
    prompt_tokens: u64,
    messages: usize,
}

/// The session's token accounting.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenMeter {
    /// Request characters over reported prompt tokens, summed over the session's reports.
    chars: u64,
    tokens: u64,
    /// The last report, while it still describes the start of the history.
    last: Option<Report>,
}

impl Default for TokenMeter {
    fn default() -> Self {
        TokenMeter::new()
    }
}

impl TokenMeter {
    pub fn new() -> TokenMeter {
        TokenMeter {
            chars: 0,
            tokens: 0,
            last: None,
        }
    }

    /// A meter that already learnt `chars` request characters in `tokens` tokens (a
    /// resumed session's figures), with no report to anchor on yet.
    pub fn with_rate(chars: u64, tokens: u64) -> TokenMeter {
        TokenMeter {
            chars,
            tokens,
            last: None,
        }
    }

    /// What the meter learnt: request characters and the tokens the server counted for
    /// them, summed; `None` before the first report.
    pub fn rate(&self) -> Option<(u64, u64)> {
        (self.tokens > 0).then_some((self.chars, self.tokens))
    }

    /// Characters per token: learnt from this session's reports, 4 before the first.
    pub fn chars_per_token(&self) -> f64 {
        if self.tokens == 0 {
            DEFAULT_CHARS_PER_TOKEN
        } else {
            // A sane range whatever the server says (a tokenizer of whole words, or a
            // server that counts something odd).
            (self.chars as f64 / self.tokens as f64).clamp(0.5, 20.0)
        }
    }

    /// Whether no server report has calibrated the figure yet: every count is a guess.
    pub fn estimated(&self) -> bool {
        self.tokens == 0
    }

    /// Tokens for `chars` characters at the learnt rate (rounded up).
    pub fn tokens_for(&self, chars: usize) -> u64 {
        tokens_at(chars, self.chars_per_token())
    }

    /// Characters that make about `tokens` tokens at the learnt rate (rounded down).
    pub fn chars_for(&self, tokens: u64) -> usize {
        (tokens as f64 * self.chars_per_token()) as usize
    }

    /// The server counted `prompt_tokens` for a request of `request_chars` characters whose
    /// history held `messages` messages.
    pub fn observe(&mut self, request_chars: usize, prompt_tokens: u64, messages: usize) {
        if prompt_tokens == 0 || request_chars == 0 {
            return;
        }
        self.chars = self.chars.saturating_add(request_chars as u64);
        self.tokens = self.tokens.saturating_add(prompt_tokens);
        self.last = Some(Report {
            prompt_tokens,
            messages,
        });
    }

    /// The history was rewritten: the last report no longer describes its start.
    pub fn history_rewritten(&mut self) {
        self.last = None;
    }

    /// Tokens the next request will hold: the last report plus an estimate of the messages
    /// appended since, or an estimate of the whole when there is no usable report.
    /// `tools_chars` is the tool schemas' size.
    pub fn used(&self, history: &[Message], tools_chars: usize) -> u64 {
        match self.last {
            Some(report) if report.messages <= history.len() => report
                .prompt_tokens
                .saturating_add(self.tokens_for(messages_chars(&history[report.messages..]))),
            _ => self.tokens_for(messages_chars(history) + tools_chars),
        }
    }
}

/// Where a request's tokens go, for `/context`: each part estimated at the learnt rate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Breakdown {
    /// The system prompt without the project instructions.
    pub system: u64,
    /// The project instructions (AGENTS.md files) in the system prompt.
    pub instructions: u64,
    pub tools: u64,
    pub user: u64,
    pub assistant: u64,
    pub tool_results: u64,
    /// The compaction's handoff note, when the history has one.
    pub summary: u64,
    /// The reminders riding in user messages and tool results (not counted in those).
    pub reminder: u64,
    /// The reasoning that goes back with assistant messages (not counted in those).
    pub reasoning: u64,
}

impl Breakdown {
    /// The parts of a request: `history` (the system prompt first, `instructions_chars`
    /// of it the project instructions), the message at `summary` (an index into
    /// `history`) counted as the handoff note.
    pub fn of(
        meter: &TokenMeter,
        history: &[Message],
        summary: Option<usize>,
        tools_chars: usize,
        instructions_chars: usize,
    ) -> Breakdown {
        let (mut system, mut user, mut assistant, mut tool_results, mut note) = (0, 0, 0, 0, 0);
        let (mut reminder_chars, mut reasoning_chars) = (0, 0);
        for (i, message) in history.iter().enumerate() {
            let reminder = message.reminder_chars();
            let reasoning = message.reasoning_chars();
            reminder_chars += reminder;
            reasoning_chars += reasoning;
            let chars = message_chars(message) - reminder - reasoning;
            let slot = match message {
                _ if Some(i) == summary => &mut note,
                Message::System { .. } => &mut system,
                Message::User { .. } => &mut user,
                Message::Assistant { .. } => &mut assistant,
                Message::Tool { .. } => &mut tool_results,
            };
            *slot += chars;
        }
        let instructions = instructions_chars.min(system);
        Breakdown {
            system: meter.tokens_for(system - instructions),
            instructions: meter.tokens_for(instructions),
            tools: meter.tokens_for(tools_chars),
            user: meter.tokens_for(user),
            assistant: meter.tokens_for(assistant),
            tool_results: meter.tokens_for(tool_results),
            summary: meter.tokens_for(note),
            reminder: meter.tokens_for(reminder_chars),
            reasoning: meter.tokens_for(reasoning_chars),
        }
    }

    pub fn total(&self) -> u64 {
        self.system
            + self.instructions
            + self.tools
            + self.user
            + self.assistant
            + self.tool_results
            + self.summary
            + self.reminder
            + self.reasoning
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history(n: usize, chars: usize) -> Vec<Message> {
        let mut h = vec![Message::system("s".repeat(chars))];
        h.extend((0..n).map(|i| Message::user(format!("{i:0>width$}", width = chars))));
        h
    }

    #[test]
    fn the_rate_starts_at_four_and_is_learnt_from_reports() {
        let mut meter = TokenMeter::new();
        assert!(meter.estimated());
        assert_eq!(meter.chars_per_token(), 4.0);
        assert_eq!(meter.tokens_for(400), 100);
        meter.observe(3000, 1000, 3);
        assert!(!meter.estimated());
        assert_eq!(meter.chars_per_token(), 3.0);
        meter.observe(9000, 2000, 5);
        // Over both reports: 12 000 characters in 3 000 tokens.
        assert_eq!(meter.chars_per_token(), 4.0);
        assert_eq!(meter.chars_for(10), 40);
    }

    #[test]
    fn used_is_the_last_report_plus_an_estimate_of_what_came_since() {
        let mut meter = TokenMeter::new();
        let h = history(4, 92);
        // Without a report: the whole request at 4 characters a token.
        let whole = meter.used(&h, 400);
        assert_eq!(whole, (5 * 100 + 100 + 300) / 4);
        // The server counted 500 tokens for the first three messages' request.
        meter.observe(1000, 500, 3);
        let per_message = meter.tokens_for(100);
        assert_eq!(meter.used(&h, 400), 500 + 2 * per_message);
        // A rewrite makes the report useless: the whole is estimated at the learnt rate.
        meter.history_rewritten();
        assert_eq!(meter.used(&h, 400), meter.tokens_for(5 * 100 + 100 + 300));
    }

    #[test]
    fn a_report_about_a_longer_history_than_now_is_ignored() {
        let mut meter = TokenMeter::new();
        meter.observe(1000, 250, 10);
        let h = history(2, 92);
        assert_eq!(meter.used(&h, 0), meter.tokens_for(300));
    }

    #[test]
    fn absurd_reports_are_clamped_and_zero_is_ignored() {
        let mut meter = TokenMeter::new();
        meter.observe(1000, 0, 1);
        assert!(meter.estimated());
        meter.observe(1_000_000, 1, 1);
        assert_eq!(meter.chars_per_token(), 20.0);
    }

    #[test]
    fn the_breakdown_sorts_messages_by_role_and_finds_the_note() {
        let meter = TokenMeter::new();
        let h = vec![
            Message::system("s".repeat(392)),
            Message::user("n".repeat(192)),
            {
                let mut u = Message::user("u".repeat(92));
                u.set_reminder("r".repeat(38));
                u
            },
            Message::assistant("a".repeat(92), vec![]),
            Message::tool("c", "t".repeat(76)),
        ];
        let b = Breakdown::of(&meter, &h, Some(1), 80, 160);
        assert_eq!(
            b,
            Breakdown {
                system: 60,
                instructions: 40,
                tools: 20,
                user: 25,
                assistant: 25,
                tool_results: 25,
                summary: 50,
                reminder: 10,
                reasoning: 0,
            }
        );
        assert_eq!(b.total(), 255);
    }
}
