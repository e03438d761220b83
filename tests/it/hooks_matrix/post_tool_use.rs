//! The PostToolUse matrix.

use super::{call_then_done, context, hook, matrix, Expect, Row, BLOCK, MESSAGE, PLAIN, STOP};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn post_tool_use_matrix() {
    // The call has run when these hooks fire (ran.txt is there in every row); what they
    // say reaches the model with the result, or stops the turn.
    const E: &str = "PostToolUse";
    let row = |name, hook, expect| Row {
        name,
        hook,
        call: "touch ran.txt && echo post-ran",
        yes: true,
        expect,
    };
    let rows = vec![
        row(
            "exit 0, no output: the result as it is",
            hook(0, ""),
            Expect {
                ran: Some(true),
                result: Some("post-ran"),
                requests: Some(2),
                ..Default::default()
            },
        ),
        row(
            "exit 0, plain text: nothing for the model",
            hook(0, PLAIN),
            Expect {
                ran: Some(true),
                result: Some("post-ran"),
                unseen: &["R-plain"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, decision block: the reason goes to the model",
            hook(0, BLOCK),
            Expect {
                ran: Some(true),
                result: Some("post-ran\n\n(from a PostToolUse hook: R-block)"),
                stderr: &["hook PostToolUse: blocked Bash: R-block"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, additionalContext: goes to the model",
            hook(0, &context(E)),
            Expect {
                ran: Some(true),
                result: Some("post-ran\n\n(from a PostToolUse hook: R-context)"),
                ..Default::default()
            },
        ),
        row(
            "exit 0, continue false: the turn stops after the call",
            hook(0, STOP),
            Expect {
                ran: Some(true),
                requests: Some(1),
                stderr: &["the turn was stopped by a hook: R-stop"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, systemMessage: shown, the result as it is",
            hook(0, MESSAGE),
            Expect {
                ran: Some(true),
                result: Some("post-ran"),
                stderr: &["hook PostToolUse: R-msg"],
                ..Default::default()
            },
        ),
        row(
            "exit 2: stderr goes to the model",
            hook(2, "").err("R-exit2"),
            Expect {
                ran: Some(true),
                result: Some("post-ran\n\n(from a PostToolUse hook: R-exit2)"),
                ..Default::default()
            },
        ),
        row(
            "exit 2, additionalContext on stdout: ignored, stderr goes",
            hook(2, &context(E)).err("R-exit2"),
            Expect {
                ran: Some(true),
                result: Some("post-ran\n\n(from a PostToolUse hook: R-exit2)"),
                unseen: &["R-context"],
                ..Default::default()
            },
        ),
        row(
            "exit 2, continue false on stdout: ignored, the turn goes on",
            hook(2, STOP).err("R-exit2"),
            Expect {
                ran: Some(true),
                requests: Some(2),
                no_stderr: &["R-stop"],
                ..Default::default()
            },
        ),
        row(
            "exit 1: an error shown, the result as it is",
            hook(1, "").err("R-exit1"),
            Expect {
                ran: Some(true),
                result: Some("post-ran"),
                stderr: &["hook PostToolUse: failed: exit code 1: R-exit1"],
                ..Default::default()
            },
        ),
        row(
            "exit 1, decision block on stdout: ignored",
            hook(1, BLOCK),
            Expect {
                ran: Some(true),
                result: Some("post-ran"),
                ..Default::default()
            },
        ),
        row(
            "exit 1, continue false on stdout: ignored, the turn goes on",
            hook(1, STOP),
            Expect {
                ran: Some(true),
                requests: Some(2),
                ..Default::default()
            },
        ),
    ];
    matrix(E, rows, call_then_done).await;
}
