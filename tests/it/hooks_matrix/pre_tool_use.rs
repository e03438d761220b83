//! The PreToolUse matrix.

use super::{
    call_then_done, context, decision, hook, matrix, specific, Expect, Row, BLOCK, ECHO, MESSAGE,
    PLAIN, STOP, TOUCH,
};

/// `updatedInput` (a command that touches rewritten.txt) with a `permissionDecision`.
fn rewrite(event: &str, decision: &str) -> String {
    specific(
        event,
        &format!(
            r#""permissionDecision": "{decision}", "permissionDecisionReason": "R-{decision}", "updatedInput": {{"command": "touch rewritten.txt && echo rewritten"}}"#
        ),
    )
}
/// The start of what the model reads for a call a hook refused.
const BLOCKED: &str = "Error: bash was blocked by a hook: ";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pre_tool_use_matrix() {
    const E: &str = "PreToolUse";
    let row = |name, hook, call, yes, expect| Row {
        name,
        hook,
        call,
        yes,
        expect,
    };
    let rows = vec![
        row(
            "exit 0, no output: the call runs",
            hook(0, ""),
            TOUCH,
            true,
            Expect {
                ran: Some(true),
                result: Some("touched"),
                requests: Some(2),
                ..Default::default()
            },
        ),
        row(
            "exit 0, plain text: nothing for anyone",
            hook(0, PLAIN),
            TOUCH,
            true,
            Expect {
                ran: Some(true),
                result: Some("touched"),
                unseen: &["R-plain"],
                no_stderr: &["R-plain"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, decision block: refused with its reason",
            hook(0, BLOCK),
            TOUCH,
            true,
            Expect {
                ran: Some(false),
                result: Some("Error: bash was blocked by a hook: R-block"),
                requests: Some(2),
                stderr: &["hook PreToolUse: blocked Bash: R-block"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, continue false: not run, the turn stops",
            hook(0, STOP),
            TOUCH,
            true,
            Expect {
                ran: Some(false),
                requests: Some(1),
                stderr: &[
                    "stopped the turn: R-stop",
                    "the turn was stopped by a hook: R-stop",
                ],
                ..Default::default()
            },
        ),
        row(
            "exit 0, systemMessage: shown, the call runs",
            hook(0, MESSAGE),
            TOUCH,
            true,
            Expect {
                ran: Some(true),
                result: Some("touched"),
                stderr: &["hook PreToolUse: R-msg"],
                unseen: &["R-msg"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, deny: refused with its reason",
            hook(0, &decision(E, "deny")),
            TOUCH,
            true,
            Expect {
                ran: Some(false),
                result: Some("Error: bash was blocked by a hook: R-deny"),
                stderr: &["denied Bash: R-deny"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, allow: runs without the question (no --yes)",
            hook(0, &decision(E, "allow")),
            TOUCH,
            false,
            Expect {
                ran: Some(true),
                result: Some("touched"),
                stderr: &["a PreToolUse hook allowed it: R-allow"],
                no_stderr: &["refused (needs approval"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, allow: never over a deny rule",
            hook(0, &decision(E, "allow")),
            "rm -f precious.txt",
            true,
            Expect {
                result_has: &["Error: bash was denied by the permission rules"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, ask: put to the user, refused headless (no --yes)",
            hook(0, &decision(E, "ask")),
            ECHO,
            false,
            Expect {
                result_has: &["Error: bash was not run: approval was refused"],
                stderr: &["refused (needs approval", "a PreToolUse hook asks: R-ask"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, ask: approved by --yes",
            hook(0, &decision(E, "ask")),
            ECHO,
            true,
            Expect {
                result: Some("asked"),
                stderr: &["approved by --yes", "a PreToolUse hook asks: R-ask"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, additionalContext: rides with the result",
            hook(0, &context(E)),
            TOUCH,
            true,
            Expect {
                ran: Some(true),
                result: Some("touched\n\n(from a PreToolUse hook: R-context)"),
                ..Default::default()
            },
        ),
        row(
            "exit 0, allow + updatedInput: the rewritten call runs",
            hook(0, &rewrite(E, "allow")),
            TOUCH,
            false,
            Expect {
                ran: Some(false),
                rewritten: Some(true),
                result: Some("rewritten"),
                ..Default::default()
            },
        ),
        row(
            "exit 0, ask + updatedInput: the rewritten call is asked and runs (--yes)",
            hook(0, &rewrite(E, "ask")),
            TOUCH,
            true,
            Expect {
                ran: Some(false),
                rewritten: Some(true),
                result: Some("rewritten"),
                stderr: &["approved by --yes"],
                ..Default::default()
            },
        ),
        row(
            "exit 2: refused with stderr",
            hook(2, "").err("R-exit2"),
            TOUCH,
            true,
            Expect {
                ran: Some(false),
                result: Some("Error: bash was blocked by a hook: R-exit2"),
                requests: Some(2),
                stderr: &["blocked Bash: R-exit2"],
                ..Default::default()
            },
        ),
        row(
            "exit 2, no stderr: refused all the same",
            hook(2, ""),
            TOUCH,
            true,
            Expect {
                ran: Some(false),
                result: Some(
                    "Error: bash was blocked by a hook: blocked by a hook (it gave no reason)",
                ),
                ..Default::default()
            },
        ),
        row(
            "exit 2, allow + updatedInput on stdout: ignored, refused",
            hook(2, &rewrite(E, "allow")).err("R-exit2"),
            TOUCH,
            true,
            Expect {
                ran: Some(false),
                rewritten: Some(false),
                result: Some("Error: bash was blocked by a hook: R-exit2"),
                ..Default::default()
            },
        ),
        row(
            "exit 2, continue false on stdout: ignored, the turn goes on",
            hook(2, STOP).err("R-exit2"),
            TOUCH,
            true,
            Expect {
                ran: Some(false),
                requests: Some(2),
                result_has: &[BLOCKED],
                no_stderr: &["R-stop"],
                ..Default::default()
            },
        ),
        row(
            "exit 1: an error shown, the call runs",
            hook(1, "").err("R-exit1"),
            TOUCH,
            true,
            Expect {
                ran: Some(true),
                result: Some("touched"),
                stderr: &["hook PreToolUse: failed: exit code 1: R-exit1"],
                unseen: &["R-exit1"],
                ..Default::default()
            },
        ),
        row(
            "exit 1, deny on stdout: ignored, the call runs",
            hook(1, &decision(E, "deny")),
            TOUCH,
            true,
            Expect {
                ran: Some(true),
                result: Some("touched"),
                stderr: &["failed: exit code 1"],
                ..Default::default()
            },
        ),
        row(
            "exit 1, decision block on stdout: ignored, the call runs",
            hook(1, BLOCK),
            TOUCH,
            true,
            Expect {
                ran: Some(true),
                result: Some("touched"),
                ..Default::default()
            },
        ),
        row(
            "exit 1, allow on stdout: ignored, the question stays (no --yes)",
            hook(1, &decision(E, "allow")),
            TOUCH,
            false,
            Expect {
                ran: Some(false),
                result_has: &["approval was refused"],
                ..Default::default()
            },
        ),
        row(
            "exit 1, updatedInput on stdout: ignored, the original runs",
            hook(1, &rewrite(E, "allow")),
            TOUCH,
            true,
            Expect {
                ran: Some(true),
                rewritten: Some(false),
                result: Some("touched"),
                ..Default::default()
            },
        ),
        row(
            "exit 1, continue false on stdout: ignored, the turn goes on",
            hook(1, STOP),
            TOUCH,
            true,
            Expect {
                ran: Some(true),
                requests: Some(2),
                no_stderr: &["R-stop"],
                ..Default::default()
            },
        ),
        row(
            "exit 1, additionalContext on stdout: ignored",
            hook(1, &context(E)),
            TOUCH,
            true,
            Expect {
                ran: Some(true),
                result: Some("touched"),
                unseen: &["R-context"],
                ..Default::default()
            },
        ),
    ];
    matrix(E, rows, call_then_done).await;
}
