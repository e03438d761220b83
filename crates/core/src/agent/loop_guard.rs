//! The loop guard: a model that does not read its results makes the same call again and
//! again, whatever rein answers.
//!
//! In: every call the model sends, in order ([`SameCalls::next`]), then how rein answered
//! it ([`SameCalls::answered`]): it ran (with a fingerprint of its result), or rein
//! rejected it without running it ([`Rejected`]: invalid as sent, or refused). Out: a
//! [`Verdict`] for each new call, before it is judged.
//!
//! A call rein rejected (broken JSON, a tool it does not have, a field of the wrong type, a
//! rule's deny, plan mode, a hook's block, a refusal) will be rejected again: the guard
//! counts how many of the last [`KEPT`] calls were that same call, rejected, whatever came
//! in between, its arguments compared without their numbers (a counter, a timestamp). From
//! the second, its result says so ([`Rejections::note`]); after [`SAME_CALL_LIMIT`] the
//! next one gets [`Verdict::Stop`]: it is not judged, and the turn ends (asking to approve
//! a call that cannot run makes no sense). So does a call after [`INVALID_RUN_LIMIT`]
//! invalid calls in a row, each its own (a model that cannot form a valid call at all).
//!
//! A call that ran is looping when the same call came [`SAME_CALL_LIMIT`] times in a row,
//! or the same few calls (up to [`MAX_PERIOD`]) went round [`SAME_CALL_LIMIT`] times
//! (A B A B A B); the next one gets [`Verdict::Ask`]: the user decides, whatever the
//! approval mode. Two calls that ran are the same when their tool and arguments are the
//! same, parsed (spacing and key order do not count; arguments that are not JSON are
//! compared without their whitespace), and their results are byte for byte the same (a
//! call whose result changes, `bash_output` of a running build, `git status` during it, is
//! watching something, not going round in circles). Arguments that differ only in their
//! numbers (a counter, a timestamp: a run of digits that does not follow a letter, so not
//! the `1` of `f1.txt`) still make the same call when the result says something: a
//! command that printed nothing (`sed -i '12d' f`, then `'11d'`) shows nothing of what it
//! changed, and an edit's answer includes the file it left, so editing successive lines is
//! never the same call. The memory is one user turn's (the user spoke in between).

use std::collections::VecDeque;
use std::hash::{Hash, Hasher};

use crate::conversation::{ToolCall, ToolOutcome};

/// Times in a row the same call (or the same few) may come; the next one is the guard's.
pub(crate) const SAME_CALL_LIMIT: u32 = 3;
/// The most calls a cycle may hold (A B C D A B C D …).
pub(crate) const MAX_PERIOD: usize = 4;
/// Calls remembered: enough for the longest cycle's repeats.
pub(crate) const KEPT: usize = SAME_CALL_LIMIT as usize * MAX_PERIOD + MAX_PERIOD;
/// Invalid calls in a row, whatever each was, after which the next is not judged: a model
/// that sends a different broken call each time (JSON cut short here, then there; a new
/// invented tool name each time) is as lost as one that sends the same.
pub(crate) const INVALID_RUN_LIMIT: u32 = 10;
/// Invalid calls in a row from which their results say the turn will end.
const INVALID_RUN_NOTE: u32 = INVALID_RUN_LIMIT / 2 + 1;

/// How rein rejected a call it did not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rejected {
    /// It could not run as sent: broken JSON, a tool this agent does not have, a wrong or
    /// missing field, a path it may not use.
    Invalid,
    /// It was refused: a permission rule, plan mode, a hook, the user (or headless rein,
    /// where nobody can approve).
    Refused,
}

impl Rejected {
    /// How a call that never ran with `outcome` was rejected.
    pub(crate) fn of(outcome: ToolOutcome) -> Rejected {
        match outcome {
            ToolOutcome::Error => Rejected::Invalid,
            _ => Rejected::Refused,
        }
    }

    fn word(self) -> &'static str {
        match self {
            Rejected::Invalid => "invalid",
            Rejected::Refused => "refused",
        }
    }
}

/// A loop of calls that ran: the same `period` calls (1: one call) went round `times`
/// times in a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loop {
    pub times: u32,
    pub period: u32,
}

impl Loop {
    /// "the model made this same call 3 times in a row already" (or went round the same
    /// few calls): why the guard asks, and headless rein's line when it refuses.
    pub fn already(&self) -> String {
        match self.period {
            0 | 1 => format!(
                "the model made this same call {} times in a row already",
                self.times
            ),
            period => format!(
                "the model went round the same {period} calls {} times in a row already",
                self.times
            ),
        }
    }
}

/// The same call rein rejected, sent `times` times in the last `within` calls (this one
/// included); or, not `same`, `times` invalid calls in a row, each its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rejections {
    pub times: u32,
    pub within: u32,
    pub how: Rejected,
    pub same: bool,
}

impl Rejections {
    /// "sent this same invalid call 3 times in a row" (or "in 5 calls").
    fn sent(&self) -> String {
        if !self.same {
            return format!("sent {} invalid calls in a row", self.times);
        }
        let when = if self.within == self.times {
            "in a row".to_string()
        } else {
            format!("in {} calls", self.within)
        };
        format!(
            "sent this same {} call {} times {when}",
            self.how.word(),
            self.times
        )
    }

    /// The note a rejected call's result ends with, for the model: how many times it sent
    /// it, and that the turn ends if it goes on.
    pub(crate) fn note(&self) -> String {
        if !self.same {
            let next = if self.times + 1 >= INVALID_RUN_LIMIT {
                "one more ends the turn".to_string()
            } else {
                format!("after {INVALID_RUN_LIMIT} in a row the turn ends")
            };
            return format!(
                "\n\n(Note: you {}; none of them could run. Check the tool's schema \
                 and send valid JSON arguments: {next}.)",
                self.sent()
            );
        }
        let next = if self.times >= SAME_CALL_LIMIT {
            "sending it once more ends the turn".to_string()
        } else {
            format!("after {SAME_CALL_LIMIT} the turn ends")
        };
        format!(
            "\n\n(Note: you {}; it will not run as sent. Do something else: {next}.)",
            self.sent()
        )
    }
}

/// Why the guard ended a turn (or a subagent's task).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stopped {
    /// The user (or headless rein) refused the call the guard put to them.
    Refused(Loop),
    /// The call is one rein rejected [`SAME_CALL_LIMIT`] times already: not judged.
    Rejected(Rejections),
    /// A `task` that repeats one with the same answer: not run.
    Task(Loop),
}

impl Stopped {
    /// What happened, counting the call that ended it: "the model made the same call 4
    /// times in a row and the next was refused".
    pub(crate) fn what(&self, who: &str) -> String {
        match self {
            Stopped::Rejected(rejections) => {
                format!(
                    "{who} {}",
                    rejections.sent().replacen("this same", "the same", 1)
                )
            }
            Stopped::Refused(lp) if lp.period <= 1 => format!(
                "{who} made the same call {} times in a row and the next was refused",
                lp.times + 1
            ),
            Stopped::Task(lp) if lp.period <= 1 => format!(
                "{who} asked for the same task {} times in a row (the same answer each time)",
                lp.times + 1
            ),
            Stopped::Refused(lp) => format!(
                "{who} went round the same {} calls {} times in a row and the next was refused",
                lp.period, lp.times
            ),
            Stopped::Task(lp) => format!(
                "{who} went round the same {} calls {} times in a row and asked for the same \
                 task again",
                lp.period, lp.times
            ),
        }
    }

    /// The main agent's notice when the turn ends.
    pub(crate) fn notice(&self) -> String {
        format!(
            "the turn was stopped: {}; send a message to go on",
            self.what("the model")
        )
    }

    /// The result of the call that was not run.
    pub(crate) fn not_run(&self) -> String {
        format!(
            "Error: not run - {}; the turn is stopped here.",
            self.what("you")
        )
    }
}

/// What the guard says of a new call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Judge and run it as any call.
    Go,
    /// It goes on with a loop of calls that ran: put it to the user whatever the mode.
    Ask(Loop),
    /// It is a call rein rejected [`SAME_CALL_LIMIT`] times already: do not judge it; the
    /// turn ends.
    Stop(Rejections),
}

/// How rein answered a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    /// It ran: a hash of its result (and, for an edit, of the file it left), and whether
    /// the result says anything (a command that printed nothing does not).
    Ran { result: u64, says: bool },
    /// It never ran.
    Rejected(Rejected),
}

impl Answer {
    /// The answer to a call that ran with the result `text`; `after` is what it left
    /// behind when rein knows (an edited file's text).
    pub(crate) fn ran(text: &str, after: Option<&str>) -> Answer {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut hasher);
        after.hash(&mut hasher);
        let bare = text.trim();
        Answer::Ran {
            result: hasher.finish(),
            says: !(bare.is_empty() || bare == "(no output)"),
        }
    }
}

/// A call's keys: how alike two calls must be to be the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Keys {
    /// Its tool and arguments, parsed.
    exact: u64,
    /// The same with every run of digits that does not follow a letter one mark, and
    /// whitespace runs one space.
    alike: u64,
    /// The same with every run of digits one mark (a rejected call's: `tool_1`, `tool_2`
    /// are as unknown as each other).
    loose: u64,
}

/// One call remembered.
#[derive(Debug, Clone, Copy)]
struct Record {
    keys: Keys,
    /// How it was answered (none yet while it runs).
    answer: Option<Answer>,
}

impl Record {
    /// Whether `later` is the same call as this one, answers included.
    fn same(&self, later: &Record) -> bool {
        let (a, b) = (self.keys, later.keys);
        match (self.answer, later.answer) {
            (Some(Answer::Ran { result: x, says }), Some(Answer::Ran { result: y, .. })) => {
                x == y && (a.exact == b.exact || (a.alike == b.alike && says))
            }
            (Some(Answer::Rejected(x)), Some(Answer::Rejected(y))) => x == y && a.loose == b.loose,
            _ => false,
        }
    }

    /// Whether a new call with `keys` (its answer not known yet) may repeat this one.
    fn may_repeat(&self, keys: Keys) -> bool {
        match self.answer {
            Some(Answer::Ran { says, .. }) => {
                self.keys.exact == keys.exact || (says && self.keys.alike == keys.alike)
            }
            Some(Answer::Rejected(_)) => self.keys.loose == keys.loose,
            None => false,
        }
    }

    /// How it was rejected, if rein rejected it.
    fn rejected(&self) -> Option<Rejected> {
        match self.answer {
            Some(Answer::Rejected(how)) => Some(how),
            _ => None,
        }
    }
}

/// Which call [`SameCalls::answered`] is told about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ticket(u64);

/// One agent's memory of the calls of this turn, for the loop guard.
#[derive(Debug, Default)]
pub(crate) struct SameCalls {
    /// The last [`KEPT`] calls, oldest first.
    records: VecDeque<Record>,
    /// Calls forgotten from the front.
    dropped: u64,
    /// Calls answered invalid in a row, the last answered last.
    invalid_run: u32,
}

impl SameCalls {
    /// Take in `call` (before it is judged): what to do with it, and its ticket.
    pub(crate) fn next(&mut self, call: &ToolCall) -> (Verdict, Ticket) {
        let keys = keys(&call.function.name, &call.function.arguments);
        let verdict = self.verdict(keys);
        if self.records.len() == KEPT {
            self.records.pop_front();
            self.dropped += 1;
        }
        self.records.push_back(Record { keys, answer: None });
        let ticket = Ticket(self.dropped + self.records.len() as u64 - 1);
        (verdict, ticket)
    }

    /// How rein answered the call of `ticket`. For a call rein rejected and the model sent
    /// before: how many times (its result should say so).
    pub(crate) fn answered(&mut self, ticket: Ticket, answer: Answer) -> Option<Rejections> {
        let at = usize::try_from(ticket.0.checked_sub(self.dropped)?).ok()?;
        let record = self.records.get_mut(at)?;
        record.answer = Some(answer);
        let keys = record.keys;
        self.invalid_run = match answer {
            Answer::Rejected(Rejected::Invalid) => self.invalid_run.saturating_add(1),
            _ => 0,
        };
        self.records.get(at)?.rejected()?;
        let same = self.rejections(keys, at + 1).filter(|r| r.times >= 2);
        same.or_else(|| {
            (self.invalid_run >= INVALID_RUN_NOTE).then_some(Rejections {
                times: self.invalid_run,
                within: self.invalid_run,
                how: Rejected::Invalid,
                same: false,
            })
        })
    }

    /// Forget (a new user turn: the user spoke in between).
    pub(crate) fn reset(&mut self) {
        *self = SameCalls::default();
    }

    /// The calls among the first `end` remembered that rein rejected and that a call with
    /// `keys` repeats (since the last such call that ran): how many, since which, and how
    /// the last was rejected.
    fn rejections(&self, keys: Keys, end: usize) -> Option<Rejections> {
        let mut times = 0;
        let mut first = end;
        let mut how = None;
        for (i, record) in self.records.iter().enumerate().take(end) {
            if record.keys.loose != keys.loose {
                continue;
            }
            match record.rejected() {
                Some(rejected) => {
                    times += 1;
                    first = first.min(i);
                    how = Some(rejected);
                }
                // It ran since (the user switched modes, say): the count starts again.
                None if record.answer.is_some() => {
                    times = 0;
                    first = end;
                    how = None;
                }
                None => {}
            }
        }
        Some(Rejections {
            times,
            within: (end - first) as u32,
            how: how?,
            same: true,
        })
    }

    /// What to do with a new call with these keys.
    fn verdict(&self, keys: Keys) -> Verdict {
        let n = self.records.len();
        // A call rein rejected, sent again and again.
        if let Some(before) = self.rejections(keys, n) {
            if before.times >= SAME_CALL_LIMIT {
                return Verdict::Stop(Rejections {
                    times: before.times + 1,
                    within: before.within + 1,
                    ..before
                });
            }
        }
        // Invalid calls in a row, each its own.
        if self.invalid_run >= INVALID_RUN_LIMIT {
            return Verdict::Stop(Rejections {
                times: self.invalid_run + 1,
                within: self.invalid_run + 1,
                how: Rejected::Invalid,
                same: false,
            });
        }
        for period in 1..=MAX_PERIOD.min(n) {
            let repeated = &self.records[n - period];
            // A rejected one is counted above.
            if repeated.rejected().is_some() || !repeated.may_repeat(keys) {
                continue;
            }
            let run = self.run(n, period);
            if run + period < SAME_CALL_LIMIT as usize * period {
                continue;
            }
            return Verdict::Ask(Loop {
                times: ((run + period) / period) as u32,
                period: period as u32,
            });
        }
        Verdict::Go
    }

    /// How many calls just before `end` repeat the call `period` before them.
    fn run(&self, end: usize, period: usize) -> usize {
        (period..end)
            .rev()
            .take_while(|&j| self.records[j - period].same(&self.records[j]))
            .count()
    }
}

/// A call's keys: its tool and arguments parsed (spacing and key order do not count), the
/// same loosened ([`loosen`]), and the same with every number masked.
fn keys(name: &str, arguments: &str) -> Keys {
    let canonical = match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(value) => {
            let mut out = String::from("j");
            canonical_json(&value, &mut out);
            out
        }
        // Not JSON: the text without its whitespace.
        Err(_) => {
            let mut out = String::from("t");
            out.extend(arguments.chars().filter(|c| !c.is_whitespace()));
            out
        }
    };
    let hash = |parts: &[&str]| {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        parts.hash(&mut hasher);
        hasher.finish()
    };
    Keys {
        exact: hash(&[name, &canonical]),
        alike: hash(&[&loosen(name, false), &loosen(&canonical, false)]),
        loose: hash(&[&loosen(name, true), &loosen(&canonical, true)]),
    }
}

/// `value` written with its object keys sorted, at any depth.
fn canonical_json(value: &serde_json::Value, out: &mut String) {
    match value {
        serde_json::Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::Value::String(key.clone()).to_string());
                out.push(':');
                if let Some(v) = map.get(key) {
                    canonical_json(v, out);
                }
            }
            out.push('}');
        }
        serde_json::Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical_json(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// `text` with every run of ASCII digits that does not follow a letter or `_` (or, with
/// `all`, every run) one `#` (a counter, a timestamp, a JSON number; not the `1` of
/// `f1.txt`), and every run of whitespace one space.
fn loosen(text: &str, all: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut before: Option<char> = None;
    // Inside a run of digits: whether it is masked.
    let mut masking = false;
    for c in text.chars() {
        let after_digit = before.is_some_and(|b| b.is_ascii_digit());
        if c.is_ascii_digit() {
            if !after_digit {
                masking = all || !before.is_some_and(|b| b.is_ascii_alphabetic() || b == '_');
                out.push(if masking { '#' } else { c });
            } else if !masking {
                out.push(c);
            }
        } else if c.is_whitespace() {
            if !before.is_some_and(char::is_whitespace) {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
        before = Some(c);
    }
    out
}

#[cfg(test)]
mod tests;
