//! Context engineering end to end (issue 6, layers 1 and 2): the real agent loop against the
//! scripted server, reading the request bodies it sent. A long tool result arrives capped
//! with a spill file the model can read during the turn; the spill is gone when the turn
//! ends; old results are stubbed once per turn end, never between the requests of a turn.
//! Every request ends with a reminder (time, branch, plan) that is never stored.

use crate::support;

use std::path::Path;

use rein_core::agent::{self, AgentConfig, AgentEvent};
use rein_core::context::ContextConfig;
use serde_json::{json, Value};
use support::agent::{
    content, reminder, scripted_config, spawn_recorded, stored_messages, tool_contents, turn,
};
use support::{Reply, ScriptedServer};

fn config(server: &ScriptedServer, root: &Path, spill: &Path) -> AgentConfig {
    AgentConfig {
        context: ContextConfig {
            keep_recent: 3,
            spill_dir: Some(spill.to_path_buf()),
            ..ContextConfig::default()
        },
        ..scripted_config(server, root)
    }
}

fn bash(command: &str) -> Reply {
    Reply::tool_calls(&[("bash", &json!({ "command": command }).to_string())])
}

#[tokio::test]
async fn long_results_are_capped_spilled_for_the_turn_and_stubbed_at_its_end() {
    let project = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let s = spill.path().display();
    // 5000 lines of 10 characters: 50 000 in all, first r00000001, last r00005000.
    let server = ScriptedServer::start(vec![
        bash("seq -f 'r%08g' 1 5000"),
        bash(&format!(
            "cat {s}/*/*.txt | wc -c; cat {s}/*/*.txt | wc -l; ls -d {s}/*; head -c 1000 /dev/zero | tr '\\0' q"
        )),
        Reply::text("Looked at it."),
        Reply::text("Still here."),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, project.path(), spill.path())).unwrap();
    let first = turn(&mut handle, "Print a lot.").await;

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    // Within the turn every request extends the one before, unchanged.
    for pair in requests.windows(2) {
        let (before, after) = (stored_messages(&pair[0]), stored_messages(&pair[1]));
        assert!(after.len() > before.len());
        assert_eq!(&after[..before.len()], &before[..]);
    }

    // The big result arrived capped: head and tail kept, the note says where the rest is.
    let capped = &tool_contents(&stored_messages(&requests[1]))[0];
    assert!(capped.chars().count() < 10_600, "{}", capped.len());
    assert!(
        capped.starts_with("r00000001\nr00000002\n"),
        "{capped:.200}"
    );
    assert!(capped.trim_end().ends_with("r00004999\nr00005000"));
    let turn_dir = spill.path().join(format!("{}-1", std::process::id()));
    assert!(capped.contains(&turn_dir.display().to_string()), "{capped}");
    assert!(capped.contains("characters cut") && capped.contains("sed -n"));
    // And the user heard about it: one event for the one capped result.
    let reports: Vec<_> = first
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ResultCapped { name, capped, .. } => Some((
                name.clone(),
                capped.total_chars,
                capped.kept_chars,
                capped.spill.clone(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let (name, total, kept, path) = &reports[0];
    assert_eq!((name.as_str(), *total), ("bash", 49_999));
    assert!(*kept <= 10_000 && *kept > 9_000, "{kept}");
    assert!(
        path.as_ref().is_some_and(|p| p.starts_with(&turn_dir)),
        "{path:?}"
    );

    // During the turn the model read the whole output back from the spill file.
    let read_back = &tool_contents(&stored_messages(&requests[2]))[1];
    // The spill file holds exactly what the command printed, its last newline too (the
    // model's view drops it: 49 999 characters reached the cap).
    assert!(read_back.starts_with("50000\n5000\n"), "{read_back:.300}");
    assert!(read_back.contains(&turn_dir.display().to_string()));
    assert!(read_back.contains(&"q".repeat(1000)));

    // The turn is over: its spill folder is gone, the old result was stubbed (once).
    assert!(!turn_dir.exists(), "spill folder left behind");
    let trimmed: Vec<_> = first
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ContextTrimmed {
                stubbed,
                before_chars,
                after_chars,
            } => Some((*stubbed, *before_chars, *after_chars)),
            _ => None,
        })
        .collect();
    assert_eq!(trimmed.len(), 1, "{trimmed:?}");
    assert_eq!(trimmed[0].0, 1);
    assert!(trimmed[0].2 + 9_000 < trimmed[0].1, "{trimmed:?}");
    let finished = first
        .iter()
        .position(|e| matches!(e, AgentEvent::TurnFinished { .. }))
        .unwrap();
    let trimmed_at = first
        .iter()
        .position(|e| matches!(e, AgentEvent::ContextTrimmed { .. }))
        .unwrap();
    assert!(trimmed_at < finished);

    // The next turn's request carries the old result stubbed, the recent one whole.
    turn(&mut handle, "And now?").await;
    let requests = server.requests();
    let results = tool_contents(&stored_messages(&requests[3]));
    assert!(results[0].starts_with("r00000001\n"));
    assert!(
        results[0].ends_with("characters trimmed from this old tool result]"),
        "{}",
        results[0]
    );
    assert!(results[0].chars().count() < 400, "{}", results[0]);
    assert_eq!(results[1], *read_back, "a recent result was stubbed");
    // Everything else of the history is as it was.
    let (before, after) = (stored_messages(&requests[2]), stored_messages(&requests[3]));
    assert_eq!(after[0], before[0]);
    assert_eq!(after[1], before[1]);
}

#[tokio::test]
async fn stubbing_is_recorded_so_a_resumed_session_continues_from_it() {
    let project = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        bash("seq 1 200"),
        Reply::text("counted"),
        bash("echo recent"),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let (mut handle, path) =
        spawn_recorded(config(&server, project.path(), spill.path()), data.path());
    turn(&mut handle, "count").await;
    let events = turn(&mut handle, "and now").await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::ContextTrimmed { .. })),
        "the 200-line result is old after the second turn: {events:?}"
    );
    let loaded = rein_core::session::load(&path).unwrap();
    let old = loaded
        .history
        .iter()
        .find_map(|m| match m {
            rein_core::agent::Message::Tool { content, .. } if content.starts_with("1\n2\n") => {
                Some(content.clone())
            }
            _ => None,
        })
        .expect("the seq result");
    assert!(old.len() < 400, "stubbed on disk: {old}");
    assert!(old.contains("characters trimmed from this old tool result"));
    // The transcript the user saw keeps everything.
    assert!(loaded.transcript.iter().any(|m| matches!(
        m,
        rein_core::agent::Message::Tool { content, .. } if content.ends_with("200")
    )));
}

#[tokio::test]
async fn the_reminder_rides_in_the_turns_message_and_in_a_result_when_the_plan_changes() {
    let project = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".git")).unwrap();
    std::fs::write(
        project.path().join(".git/HEAD"),
        "ref: refs/heads/feature/reminders\n",
    )
    .unwrap();
    let plan = json!({ "todos": [
        { "content": "look around", "status": "in_progress" },
        { "content": "report back", "status": "pending" },
    ]});
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("write_todos", &plan.to_string())]),
        bash("echo hi > mine.txt"),
        Reply::text("done"),
        Reply::text("again"),
    ])
    .await
    .unwrap();
    let (mut handle, path) =
        spawn_recorded(config(&server, project.path(), spill.path()), data.path());
    std::fs::write(project.path().join("theirs.txt"), "one").unwrap();
    turn(&mut handle, "plan it").await;
    // Between the turns someone else edits a file and adds one.
    std::fs::write(project.path().join("theirs.txt"), "one and two").unwrap();
    std::fs::write(project.path().join("new.txt"), "fresh").unwrap();
    turn(&mut handle, "and again").await;

    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let raw = |r: &Value| r["messages"].as_array().unwrap().clone();
    for (i, request) in requests.iter().enumerate() {
        // `reminder` checks the order and that no reminder is a message of its own.
        let text = reminder(request);
        assert!(text.contains("; git branch feature/reminders"), "{text}");
        assert!(text.contains("time ") && text.contains(" UTC;"), "{text}");
        // Before the plan exists nothing is said about it; after, the list and statuses.
        if i == 0 {
            assert!(!text.contains("todo list"), "{text}");
        } else {
            assert!(text.contains("\n[~] look around (in progress)\n"), "{text}");
            assert!(text.contains("\n[ ] report back (pending)"), "{text}");
        }
        // Only the second turn hears of files changed, and only of the others' changes.
        let changed = "changed by someone else";
        if i < 3 {
            assert!(!text.contains(changed), "{text}");
        } else {
            assert!(text.contains(changed) && text.contains("read them again"));
            assert!(text.contains("\nmodified: theirs.txt"), "{text}");
            assert!(text.contains("\nadded: new.txt"), "{text}");
            assert!(!text.contains("mine.txt"), "the agent's own write: {text}");
        }
    }
    let messages: Vec<Vec<Value>> = requests.iter().map(raw).collect();
    // Turn 1: the user's message carries the first reminder; the plan changed, so the
    // write_todos result carries the next; the bash result, with nothing new, none.
    assert!(content(&messages[0][1]).starts_with("plan it\n\n(rein context"));
    let last = |m: &Vec<Value>| content(m.last().unwrap()).to_string();
    assert!(
        last(&messages[1]).contains("\n\n(rein context"),
        "{}",
        last(&messages[1])
    );
    assert!(!last(&messages[2]).contains("(rein context"));
    // Within the turn, each request extends the one before byte for byte; the next turn's
    // request starts with the whole of the last one's.
    for pair in messages.windows(2) {
        assert!(pair[1].len() > pair[0].len());
        assert_eq!(&pair[1][..pair[0].len()], &pair[0][..]);
    }
    // The session file keeps each reminder apart from the text it rides with, and the
    // loaded history is sent as the same bytes.
    let raw_file = std::fs::read_to_string(&path).unwrap();
    assert!(raw_file.contains("\"type\":\"reminder\""), "{raw_file}");
    assert!(
        raw_file.contains("\"content\":\"plan it\",\"reminder\":"),
        "{raw_file}"
    );
    let loaded = rein_core::session::load(&path).unwrap();
    assert_eq!(loaded.todos.len(), 2);
    let wire = rein_core::conversation::wire::WireMessages {
        history: &loaded.history,
        options: rein_core::conversation::wire::WireOptions {
            model: support::agent::MODEL,
            cache_control: false,
            images: false,
        },
    };
    let sent = raw(&requests[3]);
    assert_eq!(
        serde_json::to_value(wire).unwrap(),
        json!(sent[1..sent.len()]
            .iter()
            .cloned()
            .chain([json!({"role":"assistant","content":"again"})])
            .collect::<Vec<_>>())
    );
    // The transcript shows the user's words alone.
    assert!(loaded.transcript.iter().any(
        |m| matches!(m, rein_core::agent::Message::User { content, .. } if content == "plan it")
    ));
}
