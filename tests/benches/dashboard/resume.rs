//! Resuming a session of many turns.

use std::path::Path;
use std::time::{Duration, Instant};

use super::measure::{cpu_time_ns, median, mib, ms, rein_pid, status_kb};
use super::{Dirs, Session, TmuxServer, MODEL, STARTUP_POLL};

/// A session file of `messages` messages (a question, a reply with a `bash` call, its
/// result of `result_lines` lines, a Markdown answer, in turn) for the project of `dirs`,
/// in its data folder, with the `stubbed` entries each turn's end writes; its size in
/// bytes.
fn write_session(dirs: &Dirs, messages: usize, result_lines: usize) -> u64 {
    use rein_core::conversation::{Message, ToolCall};
    use rein_core::session::{Entry, SessionMeta, SessionWriter};
    let data = dirs.home.path().join("rein-home");
    let meta = SessionMeta::new(dirs.project.path(), MODEL);
    let mut writer = SessionWriter::create(&data, meta).expect("a session file");
    let result: String = (0..result_lines)
        .map(|i| format!("test parse::case_{i} ... ok\n"))
        .collect();
    let mut stubbed = 0;
    for i in 0..messages {
        let message = match i % 4 {
            0 => Message::user(format!("Question {i}: why does the parser split tabs inside words?")),
            1 => Message::assistant(
                "Let me run the tests.".into(),
                vec![ToolCall::new(format!("c{i}"), "bash", r#"{"command":"cargo test parse"}"#)],
            ),
            2 => Message::tool(format!("c{}", i - 1), result.clone()),
            _ => Message::assistant(
                format!("Answer {i}: the tokenizer treats **every** whitespace character as a separator.\n\n- a tab inside quotes\n- a run of spaces\n\n```rust\nfn parse(s: &str) -> Vec<&str> {{ s.split(' ').collect() }}\n```"),
                Vec::new(),
            ),
        };
        writer.append(&Entry::message(message)).expect("an entry");
        // A turn's end, as rein writes it: results older than the last `keep_recent`
        // messages are stubbed, and the file says which (the history keeps only their
        // heads; the message lines keep them whole).
        if i % 4 == 3 {
            let old = (i + 1).saturating_sub(rein_core::context::DEFAULT_KEEP_RECENT);
            let indices: Vec<usize> = (stubbed..old).filter(|j| j % 4 == 2).collect();
            stubbed = old.max(stubbed);
            if !indices.is_empty() {
                let entry = Entry::Stubbed {
                    stub_chars: rein_core::context::DEFAULT_STUB_CHARS,
                    indices,
                };
                writer.append(&entry).expect("an entry");
            }
        }
    }
    let path = writer.path().to_path_buf();
    writer.close().expect("the session closes");
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// rein resumed (`--continue`) on a session of `messages` messages: the time to its first
/// frame, its RSS then, and the CPU time of each kind of key press (median), measured from
/// the key until the screen changed. Rows of (what, figure).
pub(super) fn resumed(
    tmux: &TmuxServer,
    binary: &Path,
    base_url: &str,
    messages: usize,
    result_lines: usize,
) -> Vec<(String, String)> {
    let dirs = Dirs::new();
    let bytes = write_session(&dirs, messages, result_lines);
    let messages = format!("{messages}-message ({:.0} MB)", bytes as f64 / 1e6);
    let mut command = dirs.rein_command(binary, base_url);
    command.push("--continue".into());
    let start = Instant::now();
    let session = Session::start(tmux, &format!("resumed-{bytes}"), &command);
    let seen = session.wait_for(MODEL, STARTUP_POLL);
    let pid = rein_pid(&session);
    let mut rows = vec![(
        format!("resumed {messages} session: first frame, RSS"),
        format!(
            "{:.0} ms, {}",
            ms(seen - start),
            mib(status_kb(pid, "VmRSS"))
        ),
    )];
    std::thread::sleep(Duration::from_millis(500));
    let press = |keys: &[&str], times: usize| -> f64 {
        let mut cpus = Vec::new();
        for _ in 0..times {
            let before = session.screen();
            let cpu0 = cpu_time_ns(pid).unwrap_or_default();
            let mut args = vec!["send-keys", "-t", session.name.as_str()];
            args.extend_from_slice(keys);
            assert!(
                session.server.output(&args).status.success(),
                "tmux send-keys"
            );
            let deadline = Instant::now() + Duration::from_secs(5);
            while session.screen() == before && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(2));
            }
            // Let the frame finish.
            std::thread::sleep(Duration::from_millis(40));
            cpus.push(ms(cpu_time_ns(pid).unwrap_or_default() - cpu0));
        }
        median(cpus)
    };
    let page_up = press(&["PageUp"], 9);
    let page_down = press(&["PageDown"], 5);
    let home = press(&["C-Home"], 1);
    let down_top = press(&["PageDown"], 5);
    let up_top = press(&["PageUp"], 3);
    let _ = press(&["C-End"], 1);
    let typing = press(&["-l", "a"], 9);
    rows.push((
        format!("resumed {messages}: CPU per key press (median), ms"),
        format!(
            "PgUp {page_up:.2}, PgDn {page_down:.2}, first Ctrl-Home {home:.2}, PgDn at the top {down_top:.2}, PgUp at the top {up_top:.2}, typing {typing:.2}"
        ),
    ));
    rows.push((
        format!("resumed {messages}: RSS after the keys"),
        mib(status_kb(pid, "VmRSS")),
    ));
    rows
}
