//! The PermissionRequest matrix.

use super::{
    call_then_done, context, decision, hook, matrix, specific, Expect, Row, BLOCK, ECHO, MESSAGE,
    PLAIN, STOP, TOUCH,
};

/// PermissionRequest's own answer: `hookSpecificOutput.decision` with `behavior` and, for
/// a deny, `message`; `extra` more fields of `decision`.
fn behavior(behavior: &str, extra: &str) -> String {
    specific(
        "PermissionRequest",
        &format!(r#""decision": {{"behavior": "{behavior}"{extra}}}"#),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_request_matrix() {
    // The hook answers the question rein would put to the user: `touch` asks by default,
    // and headless without --yes refuses what is asked.
    const E: &str = "PermissionRequest";
    let row = |name, hook, call, expect| Row {
        name,
        hook,
        call,
        yes: false,
        expect,
    };
    let refused = &["Error: bash was not run: approval was refused"][..];
    let rows = vec![
        row(
            "exit 0, no output: the question goes to the user (refused headless)",
            hook(0, ""),
            TOUCH,
            Expect {
                ran: Some(false),
                result_has: refused,
                stderr: &["refused (needs approval"],
                ..Default::default()
            },
        ),
        row(
            "a call that is not asked about: no PermissionRequest",
            hook(0, &behavior("deny", r#", "message": "R-deny""#)),
            ECHO,
            Expect {
                not_fired: true,
                result: Some("asked"),
                ..Default::default()
            },
        ),
        row(
            "exit 0, decision.behavior allow: runs, no question",
            hook(0, &behavior("allow", "")),
            TOUCH,
            Expect {
                ran: Some(true),
                result: Some("touched"),
                no_stderr: &["refused (needs approval"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, allow + decision.updatedInput: the rewritten call runs",
            hook(
                0,
                &behavior(
                    "allow",
                    r#", "updatedInput": {"command": "touch rewritten.txt && echo rewritten"}"#,
                ),
            ),
            TOUCH,
            Expect {
                ran: Some(false),
                rewritten: Some(true),
                result: Some("rewritten"),
                ..Default::default()
            },
        ),
        row(
            "exit 0, allow + decision.updatedInput: a deny rule still refuses the rewritten call",
            hook(
                0,
                &behavior(
                    "allow",
                    r#", "updatedInput": {"command": "rm -f precious.txt"}"#,
                ),
            ),
            TOUCH,
            Expect {
                ran: Some(false),
                result_has: &["Error: bash was denied by the permission rules"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, additionalContext: not for PermissionRequest, the question goes on",
            hook(0, &context(E)),
            TOUCH,
            Expect {
                ran: Some(false),
                result_has: refused,
                unseen: &["R-context"],
                no_stderr: &["added context"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, plain text: nothing for anyone, the question goes on",
            hook(0, PLAIN),
            TOUCH,
            Expect {
                ran: Some(false),
                result_has: refused,
                unseen: &["R-plain"],
                no_stderr: &["R-plain"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, permissionDecision allow: runs, no question",
            hook(0, &decision(E, "allow")),
            TOUCH,
            Expect {
                ran: Some(true),
                result: Some("touched"),
                ..Default::default()
            },
        ),
        row(
            "exit 0, decision.behavior deny with message: refused with the message",
            hook(0, &behavior("deny", r#", "message": "R-deny""#)),
            TOUCH,
            Expect {
                ran: Some(false),
                result: Some("Error: bash was blocked by a hook: R-deny"),
                no_stderr: &["refused (needs approval"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, permissionDecision deny: refused with its reason",
            hook(0, &decision(E, "deny")),
            TOUCH,
            Expect {
                ran: Some(false),
                result: Some("Error: bash was blocked by a hook: R-deny"),
                ..Default::default()
            },
        ),
        row(
            "exit 0, ask: the question goes to the user",
            hook(0, &decision(E, "ask")),
            TOUCH,
            Expect {
                ran: Some(false),
                result_has: refused,
                stderr: &["refused (needs approval"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, decision block: denied with its reason",
            hook(0, BLOCK),
            TOUCH,
            Expect {
                ran: Some(false),
                result: Some("Error: bash was blocked by a hook: R-block"),
                ..Default::default()
            },
        ),
        row(
            "exit 0, continue false: not run, the turn stops",
            hook(0, STOP),
            TOUCH,
            Expect {
                ran: Some(false),
                requests: Some(1),
                stderr: &["R-stop"],
                no_stderr: &["refused (needs approval"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, systemMessage: shown, the question goes on",
            hook(0, MESSAGE),
            TOUCH,
            Expect {
                ran: Some(false),
                result_has: refused,
                stderr: &["hook PermissionRequest: R-msg"],
                ..Default::default()
            },
        ),
        row(
            "exit 2: denied with stderr, no question",
            hook(2, "").err("R-exit2"),
            TOUCH,
            Expect {
                ran: Some(false),
                result: Some("Error: bash was blocked by a hook: R-exit2"),
                no_stderr: &["refused (needs approval"],
                ..Default::default()
            },
        ),
        row(
            "exit 2, allow on stdout: ignored, denied",
            hook(2, &behavior("allow", "")).err("R-exit2"),
            TOUCH,
            Expect {
                ran: Some(false),
                result: Some("Error: bash was blocked by a hook: R-exit2"),
                ..Default::default()
            },
        ),
        row(
            "exit 1, allow on stdout: ignored, an error shown, the question goes on",
            hook(1, &behavior("allow", "")).err("R-exit1"),
            TOUCH,
            Expect {
                ran: Some(false),
                result_has: refused,
                stderr: &[
                    "hook PermissionRequest: failed: exit code 1: R-exit1",
                    "refused (needs approval",
                ],
                ..Default::default()
            },
        ),
        row(
            "exit 1, deny on stdout: ignored, the question goes on",
            hook(1, &behavior("deny", r#", "message": "R-deny""#)),
            TOUCH,
            Expect {
                ran: Some(false),
                result_has: refused,
                unseen: &["R-deny"],
                ..Default::default()
            },
        ),
    ];
    matrix(E, rows, call_then_done).await;
}
