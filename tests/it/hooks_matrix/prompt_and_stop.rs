//! The UserPromptSubmit, Stop and SubagentStop matrices.

use crate::support;

use support::Reply;

use super::{context, hook, matrix, Expect, Row, BLOCK, MESSAGE, PLAIN, STOP};
const BLOCK_AND_STOP: &str =
    r#"{"decision": "block", "reason": "R-block", "continue": false, "stopReason": "R-stop"}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_prompt_submit_matrix() {
    const E: &str = "UserPromptSubmit";
    let row = |name, hook, expect| Row {
        name,
        hook,
        call: "",
        yes: false,
        expect,
    };
    let sent = Some(1);
    let kept_back = Some(0);
    let rows = vec![
        row(
            "exit 0, no output: the prompt goes",
            hook(0, ""),
            Expect {
                requests: sent,
                ..Default::default()
            },
        ),
        row(
            "exit 0, plain text: context for the model",
            hook(0, PLAIN),
            Expect {
                requests: sent,
                seen: &["(from the user's hooks: R-plain words)"],
                stderr: &["hook UserPromptSubmit: added context for the model"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, additionalContext: context for the model",
            hook(0, &context(E)),
            Expect {
                requests: sent,
                seen: &["(from the user's hooks: R-context)"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, decision block: the prompt is kept back, the user told why",
            hook(0, BLOCK),
            Expect {
                exit: 1,
                requests: kept_back,
                stderr: &["hook UserPromptSubmit: the prompt was not sent: R-block"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, continue false: the prompt is kept back",
            hook(0, STOP),
            Expect {
                exit: 1,
                requests: kept_back,
                stderr: &["the prompt was not sent: R-stop"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, systemMessage: shown to the user only",
            hook(0, MESSAGE),
            Expect {
                requests: sent,
                stderr: &["hook UserPromptSubmit: R-msg"],
                unseen: &["R-msg"],
                ..Default::default()
            },
        ),
        row(
            "exit 2: the prompt is kept back, stderr says why",
            hook(2, "").err("R-exit2"),
            Expect {
                exit: 1,
                requests: kept_back,
                stderr: &["the prompt was not sent: R-exit2"],
                ..Default::default()
            },
        ),
        row(
            "exit 2, no stderr: kept back all the same",
            hook(2, ""),
            Expect {
                exit: 1,
                requests: kept_back,
                stderr: &["the prompt was not sent: blocked by a hook (it gave no reason)"],
                ..Default::default()
            },
        ),
        row(
            "exit 2, additionalContext on stdout: ignored, kept back",
            hook(2, &context(E)).err("R-exit2"),
            Expect {
                exit: 1,
                requests: kept_back,
                stderr: &["the prompt was not sent: R-exit2"],
                ..Default::default()
            },
        ),
        row(
            "exit 1, plain text: not context, an error shown, the prompt goes",
            hook(1, PLAIN).err("R-exit1"),
            Expect {
                requests: sent,
                unseen: &["R-plain", "R-exit1"],
                stderr: &["hook UserPromptSubmit: failed: exit code 1: R-exit1"],
                ..Default::default()
            },
        ),
        row(
            "exit 1, decision block on stdout: ignored, the prompt goes",
            hook(1, BLOCK),
            Expect {
                requests: sent,
                no_stderr: &["not sent"],
                ..Default::default()
            },
        ),
        row(
            "exit 1, additionalContext on stdout: ignored",
            hook(1, &context(E)),
            Expect {
                requests: sent,
                unseen: &["R-context"],
                ..Default::default()
            },
        ),
        row(
            "exit 1, continue false on stdout: ignored, the prompt goes",
            hook(1, STOP),
            Expect {
                requests: sent,
                no_stderr: &["R-stop"],
                ..Default::default()
            },
        ),
    ];
    matrix(E, rows, |_| vec![Reply::text("answer")]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_matrix() {
    // The model would answer three times; how many requests it got says whether a Stop
    // hook kept it going (a hook blocks only when no Stop hook kept this turn going yet).
    const E: &str = "Stop";
    let row = |name, hook, expect| Row {
        name,
        hook,
        call: "",
        yes: false,
        expect,
    };
    let rows = vec![
        row(
            "exit 0, no output: the turn ends",
            hook(0, ""),
            Expect {
                requests: Some(1),
                ..Default::default()
            },
        ),
        row(
            "exit 0, plain text: nothing for anyone",
            hook(0, PLAIN),
            Expect {
                requests: Some(1),
                no_stderr: &["R-plain"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, decision block: the model goes on with the reason",
            hook(0, BLOCK),
            Expect {
                requests: Some(2),
                seen: &["(from a Stop hook: R-block)"],
                stderr: &["hook Stop: kept the turn going: R-block"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, continue false: the turn ends, the reason shown",
            hook(0, STOP),
            Expect {
                requests: Some(1),
                stderr: &["hook Stop: stopped the turn: R-stop"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, decision block and continue false: continue false wins",
            hook(0, BLOCK_AND_STOP),
            Expect {
                requests: Some(1),
                unseen: &["R-block"],
                stderr: &["stopped the turn: R-stop"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, additionalContext: not for Stop, the turn ends",
            hook(0, &context(E)),
            Expect {
                requests: Some(1),
                unseen: &["R-context"],
                no_stderr: &["added context"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, systemMessage: shown, the turn ends",
            hook(0, MESSAGE),
            Expect {
                requests: Some(1),
                stderr: &["hook Stop: R-msg"],
                ..Default::default()
            },
        ),
        row(
            "exit 2: the model goes on with stderr",
            hook(2, "").err("R-exit2"),
            Expect {
                requests: Some(2),
                seen: &["(from a Stop hook: R-exit2)"],
                stderr: &["kept the turn going: R-exit2"],
                ..Default::default()
            },
        ),
        row(
            "exit 2, continue false on stdout: ignored, the model goes on",
            hook(2, STOP).err("R-exit2"),
            Expect {
                requests: Some(2),
                seen: &["(from a Stop hook: R-exit2)"],
                no_stderr: &["R-stop"],
                ..Default::default()
            },
        ),
        row(
            "exit 1: an error shown, the turn ends",
            hook(1, "").err("R-exit1"),
            Expect {
                requests: Some(1),
                stderr: &["hook Stop: failed: exit code 1: R-exit1"],
                ..Default::default()
            },
        ),
        row(
            "exit 1, decision block on stdout: ignored, the turn ends",
            hook(1, BLOCK),
            Expect {
                requests: Some(1),
                unseen: &["R-block"],
                stderr: &["failed: exit code 1"],
                ..Default::default()
            },
        ),
    ];
    let replies = |_: &str| {
        vec![
            Reply::text("first answer"),
            Reply::text("second answer"),
            Reply::text("third answer"),
        ]
    };
    matrix(E, rows, replies).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subagent_stop_matrix() {
    // The main agent calls `task`; the subagent answers "sub first", and "sub second" when
    // a SubagentStop hook kept it going; the main agent's next reply ends the turn. The
    // task's result, what the main model reads, says which answer was the subagent's last.
    const E: &str = "SubagentStop";
    let row = |name, hook, expect| Row {
        name,
        hook,
        call: "",
        yes: false,
        expect,
    };
    let rows = vec![
        row(
            "exit 0, no output: the subagent ends",
            hook(0, ""),
            Expect {
                requests: Some(3),
                result: Some("sub first"),
                ..Default::default()
            },
        ),
        row(
            "exit 0, decision block: the subagent goes on with the reason",
            hook(0, BLOCK),
            Expect {
                requests: Some(4),
                result: Some("sub second"),
                seen: &["(from a SubagentStop hook: R-block)"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, continue false: the subagent ends and so does the turn, the reason shown",
            hook(0, STOP),
            Expect {
                requests: Some(2),
                stderr: &["R-stop", "the turn was stopped by a hook: R-stop"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, decision block and continue false: continue false wins",
            hook(0, BLOCK_AND_STOP),
            Expect {
                requests: Some(2),
                unseen: &["R-block"],
                stderr: &["R-stop", "the turn was stopped by a hook: R-stop"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, additionalContext: not for SubagentStop, the subagent ends",
            hook(0, &context(E)),
            Expect {
                requests: Some(3),
                result: Some("sub first"),
                unseen: &["R-context"],
                no_stderr: &["added context"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, plain text: nothing for anyone, the subagent ends",
            hook(0, PLAIN),
            Expect {
                requests: Some(3),
                result: Some("sub first"),
                unseen: &["R-plain"],
                no_stderr: &["R-plain"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, systemMessage: shown, the subagent ends",
            hook(0, MESSAGE),
            Expect {
                requests: Some(3),
                result: Some("sub first"),
                stderr: &["hook SubagentStop: R-msg"],
                ..Default::default()
            },
        ),
        row(
            "exit 2: the subagent goes on with stderr",
            hook(2, "").err("R-exit2"),
            Expect {
                requests: Some(4),
                result: Some("sub second"),
                seen: &["(from a SubagentStop hook: R-exit2)"],
                ..Default::default()
            },
        ),
        row(
            "exit 2, continue false on stdout: ignored, the subagent goes on",
            hook(2, STOP).err("R-exit2"),
            Expect {
                requests: Some(4),
                result: Some("sub second"),
                no_stderr: &["R-stop"],
                ..Default::default()
            },
        ),
        row(
            "exit 1: an error shown, the subagent ends",
            hook(1, "").err("R-exit1"),
            Expect {
                requests: Some(3),
                result: Some("sub first"),
                stderr: &["hook SubagentStop: failed: exit code 1: R-exit1"],
                ..Default::default()
            },
        ),
        row(
            "exit 1, decision block on stdout: ignored, the subagent ends",
            hook(1, BLOCK),
            Expect {
                requests: Some(3),
                result: Some("sub first"),
                unseen: &["R-block"],
                ..Default::default()
            },
        ),
    ];
    let replies = |_: &str| {
        vec![
            Reply::tool_calls(&[("task", r#"{"description":"look around"}"#)]),
            Reply::text("sub first"),
            Reply::text("sub second"),
            Reply::text("main done"),
        ]
    };
    matrix(E, rows, replies).await;
}
