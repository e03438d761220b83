//! Unit tests of the loop guard: which repeated calls it counts (same result, rejected,
//! going round, numbers masked), when it asks or stops, and what a stop says.

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
