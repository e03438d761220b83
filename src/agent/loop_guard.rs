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
mod tests {
    use super::*;

    fn call(name: &str, args: &str) -> ToolCall {
        ToolCall::new("c", name, args)
    }

    /// Feed calls with their answers; the verdict each got.
    fn feed(calls: &[(&str, &str, Answer)]) -> Vec<Verdict> {
        let mut guard = SameCalls::default();
        calls
            .iter()
            .map(|(name, args, answer)| {
                let (verdict, ticket) = guard.next(&call(name, args));
                guard.answered(ticket, *answer);
                verdict
            })
            .collect()
    }

    fn ran(text: &str) -> Answer {
        Answer::ran(text, None)
    }

    const INVALID: Answer = Answer::Rejected(Rejected::Invalid);

    fn ask(times: u32, period: u32) -> Verdict {
        Verdict::Ask(Loop { times, period })
    }

    #[test]
    fn the_same_call_with_the_same_result_a_fourth_time_is_asked_about() {
        let verdicts = feed(&[
            (
                "bash",
                r#"{"command":"cat a.txt","timeout":5}"#,
                ran("hello"),
            ),
            (
                "bash",
                r#"{ "timeout": 5, "command": "cat a.txt" }"#,
                ran("hello"),
            ),
            (
                "bash",
                "{\"command\":\n\"cat a.txt\",\"timeout\":5}",
                ran("hello"),
            ),
            (
                "bash",
                r#"{"command":"cat a.txt","timeout":5}"#,
                ran("hello"),
            ),
            (
                "bash",
                r#"{"command":"cat a.txt","timeout":5}"#,
                ran("hello"),
            ),
        ]);
        assert_eq!(
            verdicts,
            [Verdict::Go, Verdict::Go, Verdict::Go, ask(3, 1), ask(4, 1)]
        );
    }

    #[test]
    fn a_result_that_changes_is_watching_not_looping() {
        let calls: Vec<(String, Answer)> = (0..10)
            .map(|i| {
                (
                    r#"{"command":"wc -l log"}"#.to_string(),
                    ran(&format!("{i}")),
                )
            })
            .collect();
        let calls: Vec<_> = calls
            .iter()
            .map(|(a, r)| ("bash", a.as_str(), *r))
            .collect();
        assert!(feed(&calls).iter().all(|v| *v == Verdict::Go));
    }

    fn stop(times: u32, within: u32, how: Rejected) -> Verdict {
        Verdict::Stop(Rejections {
            times,
            within,
            how,
            same: true,
        })
    }

    /// A different broken call each time (its JSON cut somewhere else, a new invented
    /// tool): the results say so from the fourth, and the ninth is not judged; a call that
    /// ran, or one refused, in between starts the count again.
    #[test]
    fn invalid_calls_in_a_row_each_its_own_end_the_turn() {
        let mut guard = SameCalls::default();
        let mut verdicts = Vec::new();
        let mut notes = Vec::new();
        let junk = ["{\"path\": ", "{\"command\"", "[1, 2", "{\"x\": tru", "nul"];
        for i in 0..=INVALID_RUN_LIMIT as usize {
            let name = ["read_file", "bash", "grep", "ls", "edit"][i % 5];
            let name = format!("{name}{}", "x".repeat(i));
            let (verdict, ticket) = guard.next(&call(&name, junk[i % junk.len()]));
            verdicts.push(verdict);
            notes.push(guard.answered(ticket, INVALID));
        }
        let stop_at = INVALID_RUN_LIMIT as usize;
        assert!(
            verdicts[..stop_at].iter().all(|v| *v == Verdict::Go),
            "{verdicts:?}"
        );
        assert_eq!(
            verdicts[stop_at],
            Verdict::Stop(Rejections {
                times: INVALID_RUN_LIMIT + 1,
                within: INVALID_RUN_LIMIT + 1,
                how: Rejected::Invalid,
                same: false,
            })
        );
        let noted: Vec<_> = notes.iter().map(|n| n.map(|r| r.times)).collect();
        assert!(noted[..5].iter().all(Option::is_none), "{noted:?}");
        assert_eq!(noted[5], Some(INVALID_RUN_NOTE));
        let last = notes[stop_at - 1].unwrap().note();
        assert!(
            last.contains("you sent 10 invalid calls in a row") && last.contains("one more ends"),
            "{last}"
        );
        let stopped = Stopped::Rejected(match verdicts[stop_at] {
            Verdict::Stop(r) => r,
            _ => unreachable!(),
        });
        assert_eq!(
            stopped.notice(),
            "the turn was stopped: the model sent 11 invalid calls in a row; send a message to go on"
        );

        // A call that ran, or was refused, between them: never ten in a row.
        for between in [ran("fine"), Answer::Rejected(Rejected::Refused)] {
            let mut guard = SameCalls::default();
            for i in 0..20 {
                let (verdict, ticket) = guard.next(&call(&format!("t{}", "y".repeat(i)), "{"));
                assert_eq!(verdict, Verdict::Go, "call {i}");
                let answer = if i % 6 == 5 { between } else { INVALID };
                guard.answered(ticket, answer);
            }
        }
    }

    #[test]
    fn the_same_invalid_call_is_counted_and_the_fourth_stops() {
        let mut guard = SameCalls::default();
        let mut notes = Vec::new();
        let mut verdicts = Vec::new();
        for i in 0..4 {
            // A counter in broken JSON, spaced differently each time.
            let args = format!("{{\"command\": \"ls\",{} \"n\": {i}", " ".repeat(i));
            let (verdict, ticket) = guard.next(&call("bash", &args));
            verdicts.push(verdict);
            notes.push(guard.answered(ticket, INVALID));
        }
        let invalid = Rejected::Invalid;
        assert_eq!(
            verdicts,
            [Verdict::Go, Verdict::Go, Verdict::Go, stop(4, 4, invalid)]
        );
        let times: Vec<_> = notes.iter().map(|n| n.map(|r| r.times)).collect();
        assert_eq!(times, [None, Some(2), Some(3), Some(4)]);
        let note = notes[2].unwrap().note();
        assert!(note.contains("you sent this same invalid call 3 times in a row"));
        assert!(
            note.contains("sending it once more ends the turn"),
            "{note}"
        );
        // An unknown tool is the same whatever the numbers in its name and arguments.
        let unknown: Vec<_> = (0..4)
            .map(|i| format!(r#"{{"at": "2025-01-0{i}T1{i}:00:0{i}Z"}}"#))
            .collect();
        let names: Vec<_> = (0..4).map(|i| format!("tool_{i}")).collect();
        let calls: Vec<_> = (0..4)
            .map(|i| (names[i].as_str(), unknown[i].as_str(), INVALID))
            .collect();
        assert_eq!(feed(&calls)[3], stop(4, 4, invalid));
    }

    #[test]
    fn a_rejected_call_counts_whatever_comes_in_between() {
        // The same refused call between commands whose output changes.
        let refused = Answer::Rejected(Rejected::Refused);
        let outputs: Vec<String> = (0..8).map(|i| format!("line {i}")).collect();
        let mut calls = Vec::new();
        for output in &outputs {
            calls.push(("bash", r#"{"command":"rm -rf build"}"#, refused));
            calls.push(("bash", r#"{"command":"date"}"#, ran(output)));
        }
        let verdicts = feed(&calls);
        assert_eq!(verdicts[..6], [Verdict::Go; 6]);
        assert_eq!(verdicts[6], stop(4, 7, Rejected::Refused));
        let note = Rejections {
            times: 2,
            within: 3,
            how: Rejected::Refused,
            same: true,
        }
        .note();
        assert!(note.contains("you sent this same refused call 2 times in 3 calls"));
        assert!(note.contains("after 3 the turn ends"), "{note}");
        // Refused twice, then it ran (the user switched modes): counted anew.
        let write = r#"{"path":"a","content":"b"}"#;
        let verdicts = feed(&[
            ("write_file", write, refused),
            ("write_file", write, refused),
            ("write_file", write, ran("Created a")),
            ("write_file", write, refused),
            ("write_file", write, refused),
            ("write_file", write, refused),
            ("write_file", write, refused),
        ]);
        assert_eq!(verdicts[..6], [Verdict::Go; 6]);
        assert_eq!(verdicts[6], stop(4, 4, Rejected::Refused));
    }

    #[test]
    fn two_or_three_calls_going_round_are_a_loop() {
        let a = ("bash", r#"{"command":"cat a"}"#, ran("a"));
        let b = ("read_file", r#"{"path":"b"}"#, ran("b"));
        let c = ("grep", r#"{"pattern":"x"}"#, ran("none"));
        let verdicts = feed(&[a, b, a, b, a, b, a, b]);
        assert_eq!(verdicts[..6], [Verdict::Go; 6]);
        assert_eq!(verdicts[6..], [ask(3, 2), ask(3, 2)]);
        let verdicts = feed(&[a, b, c, a, b, c, a, b, c, a]);
        assert_eq!(verdicts[..9], [Verdict::Go; 9]);
        assert_eq!(verdicts[9], ask(3, 3));
        // Two invalid calls going round stop.
        let x = ("bash", "{broken", INVALID);
        let y = ("nope", "{}", INVALID);
        let verdicts = feed(&[x, y, x, y, x, y, x]);
        assert_eq!(verdicts[..6], [Verdict::Go; 6]);
        assert_eq!(verdicts[6], stop(4, 7, Rejected::Invalid));
    }

    #[test]
    fn numbers_that_change_count_only_when_the_result_says_the_same() {
        // A counter in a comment, the same file printed: a loop.
        let args: Vec<_> = (0..4)
            .map(|i| format!(r#"{{"command":"cat a.txt # try {i}"}}"#))
            .collect();
        let calls: Vec<_> = args
            .iter()
            .map(|a| ("bash", a.as_str(), ran("hi")))
            .collect();
        assert_eq!(feed(&calls)[3], ask(3, 1));
        // Deleting lines one by one prints nothing: not a loop.
        let args: Vec<_> = (0..8)
            .map(|i| format!(r#"{{"command":"sed -i '{}d' f # {i}"}}"#, 10 + i))
            .collect();
        let calls: Vec<_> = args
            .iter()
            .map(|a| ("bash", a.as_str(), ran("(no output)")))
            .collect();
        assert!(feed(&calls).iter().all(|v| *v == Verdict::Go));
        // Different files with the same text: `f1` is not `f2`.
        let args: Vec<_> = (0..8)
            .map(|i| format!(r#"{{"path":"f{i}.txt"}}"#))
            .collect();
        let calls: Vec<_> = args
            .iter()
            .map(|a| ("read_file", a.as_str(), ran("same")))
            .collect();
        assert!(feed(&calls).iter().all(|v| *v == Verdict::Go));
        // Successive lines edited: the same message, but the file differs each time.
        let mut guard = SameCalls::default();
        for i in 0..8 {
            let args = format!(r#"{{"path":"t.rs","old":"x[{i}] = 0","new":"x[{i}] = 1"}}"#);
            let (verdict, ticket) = guard.next(&call("str_replace", &args));
            assert_eq!(verdict, Verdict::Go);
            let after = format!("{}", i);
            guard.answered(
                ticket,
                Answer::ran("Replaced 1 occurrence in t.rs", Some(&after)),
            );
        }
    }

    #[test]
    fn a_call_still_running_or_forgotten_counts_for_nothing() {
        let mut guard = SameCalls::default();
        let same = call("bash", r#"{"command":"ls"}"#);
        for _ in 0..6 {
            // Never answered (tasks of one reply run at once).
            assert_eq!(guard.next(&same).0, Verdict::Go);
        }
        // Answering an old ticket after many calls is harmless.
        let (_, old) = guard.next(&same);
        for _ in 0..(KEPT * 2) {
            let (_, t) = guard.next(&call("read_file", r#"{"path":"x"}"#));
            guard.answered(t, ran("x"));
        }
        assert_eq!(guard.answered(old, INVALID), None);
        guard.reset();
        assert_eq!(guard.next(&same).0, Verdict::Go);
    }

    #[test]
    fn loosen_masks_counters_not_names() {
        assert_eq!(loosen("try 12 at 1712345678", false), "try # at #");
        assert_eq!(loosen("f1.txt file_22 v3", false), "f1.txt file_22 v3");
        assert_eq!(loosen("f1.txt file_22 v3", true), "f#.txt file_# v#");
        assert_eq!(loosen("a  \n\t b", false), "a b");
        assert_eq!(loosen("2025-01-02T10:00:01Z", false), "#-#-#T10:#:#Z");
    }

    #[test]
    fn what_the_stops_say() {
        let one = Loop {
            times: 3,
            period: 1,
        };
        assert_eq!(
            Stopped::Refused(one).notice(),
            "the turn was stopped: the model made the same call 4 times in a row and the next \
             was refused; send a message to go on"
        );
        let rejected = |times, within| Rejections {
            times,
            within,
            same: true,
            how: Rejected::Invalid,
        };
        assert_eq!(
            Stopped::Rejected(rejected(4, 4)).notice(),
            "the turn was stopped: the model sent the same invalid call 4 times in a row; \
             send a message to go on"
        );
        assert_eq!(
            Stopped::Rejected(rejected(4, 7)).not_run(),
            "Error: not run - you sent the same invalid call 4 times in 7 calls; the turn is \
             stopped here."
        );
        let two = Loop {
            times: 3,
            period: 2,
        };
        assert!(Stopped::Refused(two)
            .notice()
            .contains("went round the same 2 calls 3 times in a row and the next was refused"));
        assert_eq!(
            two.already(),
            "the model went round the same 2 calls 3 times in a row already"
        );
    }
}
