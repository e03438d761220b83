//! The headless front end (`rein -p PROMPT`): one user turn, printed as it happens.
//!
//! It drives the agent through the same command and event channels as the dashboard. In
//! `text` format the reply streams to stdout and tool activity goes to stderr; in `json`
//! format stderr says the same and stdout gets only the `result` object at the end; in
//! `jsonl` format stdout gets the `system`/`init` event, every agent event as one JSON
//! object, and the `result` object last ([`result`]). Approval requests are answered
//! at once: approved with `--yes`, refused otherwise (the model is told why). With a
//! `mode` (`--mode`, or `--yes` where the sandbox works, which means auto) the agent is
//! switched to it before the prompt goes in; what auto mode approves is printed as
//! auto-approved.

use std::io::{IsTerminal, Write};

use crate::describe;
use rein_core::agent::{
    self, AgentCommand, AgentConfig, AgentEvent, ApprovalDecision, EventFamily, Prices,
    SubagentEvent, TurnOutcome, UsageTotals,
};
use rein_core::elicitation::FormAnswer;
use rein_core::permissions::ApprovalMode;
use rein_core::text;
use rein_core::text::sanitize::sanitize;
use rein_core::tools::write_todos::TodoStatus;

pub mod result;

use result::{Ending, Tally};

/// How events are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    #[default]
    Text,
    /// The text format's stderr, and one `result` object on stdout at the end.
    Json,
    Jsonl,
}

/// What to run and how to answer approvals.
#[derive(Debug, Clone)]
pub struct HeadlessOptions {
    pub prompt: String,
    pub format: OutputFormat,
    /// Approve every `ask` verdict.
    pub yes: bool,
    /// The model's prices, for the cost in the summary line.
    pub prices: Option<Prices>,
    /// The approval mode to run in (`None`: the session's own, default for a new one).
    pub mode: Option<ApprovalMode>,
    /// What happened before the run that the `jsonl` stream tells right after its `init`
    /// event (the MCP servers' states as they started), one JSON object each.
    pub before: Vec<serde_json::Value>,
}

/// A line on stderr, sanitised whole: whatever parts of it came from the model, a tool or
/// a server cannot reach the terminal as control sequences.
macro_rules! say {
    ($($arg:tt)*) => {
        ::rein_core::text::sanitize::to_stderr(format_args!("{}\n", ::rein_core::text::sanitize::sanitize(&format!($($arg)*))))
    };
}

/// End the session (`reason` other: the run is over, or a signal stopped it) once the
/// result is out: the SessionEnd hooks run, bounded by their timeouts, what they say goes
/// to stderr in every format (stdout's last line stays the result), and a Ctrl-C (or
/// another signal) stops waiting for them.
async fn end(handle: agent::AgentHandle) {
    let _ = std::io::stdout().flush();
    let give_up = async {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = rein_core::host::signals::termination() => {}
        }
    };
    handle
        .end(rein_core::hooks::EndReason::Other, give_up, |event| {
            if let Some(line) = describe::at_end(&event) {
                say!("rein: {}", first_line_cut(&line, 500));
            }
        })
        .await;
}

/// The closing line: calls, tokens, the prompt cache's share and, with prices, the cost;
/// `None` before any model call.
pub fn summary_line(usage: &UsageTotals, prices: Option<Prices>) -> Option<String> {
    if usage.calls == 0 {
        return None;
    }
    let cost = prices.map_or(String::new(), |p| {
        format!(
            ", {}",
            rein_core::agent::usage::dollars(p.cost(&usage.session))
        )
    });
    Some(format!("rein: {}{cost}", usage.tokens_line()))
}

/// The refusal the model reads when an action needs approval and nobody can give it.
/// What the model reads when headless rein refuses a call the loop guard asked about.
const HEADLESS_LOOP: &str = "the same call again after several identical ones in a row; rein is running headless and stops the turn here";
const HEADLESS_REFUSAL: &str = "rein is running headless without --yes, so nobody can approve it; it needs approval in an interactive session";

/// Run one turn to completion; returns the process exit code (0 when the turn completed).
pub async fn run(config: AgentConfig, options: HeadlessOptions) -> i32 {
    run_with_session(config, options, None).await
}

/// [`run`], recording the turn in a session (and continuing the one it was resumed from).
pub async fn run_with_session(
    config: AgentConfig,
    options: HeadlessOptions,
    session: Option<agent::SessionSetup>,
) -> i32 {
    run_learning_window(config, options, session, None).await
}

/// [`run_with_session`] while the server is still being asked for the window (`window`,
/// see [`agent::window`]): the prompt goes in at once, and the agent sends it before the
/// answer when the request is clearly small, after it (or the two seconds) otherwise.
pub async fn run_learning_window(
    config: AgentConfig,
    options: HeadlessOptions,
    session: Option<agent::SessionSetup>,
    window: Option<agent::window::WindowWatch>,
) -> i32 {
    let session_id = session.as_ref().map(|s| s.writer.id().to_string());
    let mut printer = Printer::new(options.format, options.prices, session_id.clone());
    printer.line(&result::InitEvent::new(&config, session_id.as_deref()));
    for line in &options.before {
        printer.line(line);
    }
    let mut handle = match agent::spawn_learning_window(config, session, window) {
        Ok(h) => h,
        Err(e) => {
            say!("rein: {e}");
            return printer.finish(Ending::Broken(e.to_string()));
        }
    };
    if let Some(mode) = options.mode {
        handle.send(AgentCommand::SetMode(mode));
    }
    handle.send(AgentCommand::UserMessage(options.prompt.clone().into()));
    let mut interrupted = false;
    let mut ctrl_c = std::pin::pin!(tokio::signal::ctrl_c());
    let mut terminated = std::pin::pin!(rein_core::host::signals::termination());
    loop {
        let event = tokio::select! {
            event = handle.events.recv() => event,
            signal = &mut terminated => {
                // As Ctrl-C: the turn ends and every running command's group is killed
                // (dropping the agent's runtime drops them) before rein exits.
                handle.send(AgentCommand::Interrupt);
                stop_background(&handle);
                say!("rein: stopped by {signal}");
                let code = printer.finish(Ending::Signal(signal));
                end(handle).await;
                return code;
            }
            _ = &mut ctrl_c => {
                if interrupted {
                    // A second Ctrl-C: stop waiting for the turn to wind down (the
                    // SessionEnd hooks still run; a third Ctrl-C skips them).
                    stop_background(&handle);
                    say!("rein: interrupted");
                    let code = printer.finish(Ending::Signal("SIGINT"));
                    end(handle).await;
                    return code;
                }
                interrupted = true;
                handle.send(AgentCommand::Interrupt);
                ctrl_c.set(tokio::signal::ctrl_c());
                continue;
            }
        };
        let Some(event) = event else {
            say!("rein: the agent stopped unexpectedly");
            return printer.finish(Ending::Broken("the agent stopped unexpectedly".to_string()));
        };
        if let Some(answer) = approval_answer(&event, options.yes) {
            handle.send(answer);
        }
        let form = form_answer(&event, options.yes);
        if let Some((answer, _, _)) = &form {
            handle.send(answer.clone());
        }
        printer.print(&event, options.yes);
        if let Some((_, record, line)) = form {
            printer.form_answered(&record, &line);
        }
        if let AgentEvent::TurnFinished { outcome } = event {
            // Nothing outlives `rein -p`: what still runs in the background is stopped,
            // and named. The exit code is the turn's, whatever the SessionEnd hooks do.
            stop_background(&handle);
            let code = printer.finish(Ending::Turn(outcome));
            end(handle).await;
            return code;
        }
    }
}

/// Stop the background commands still running and say which (on stderr, in every format).
fn stop_background(handle: &agent::AgentHandle) {
    for task in handle.background.kill_all() {
        say!(
            "rein: stopped background command {} at exit (pid {}): {}",
            task.id,
            task.pid,
            first_line_cut(&task.command, 160)
        );
    }
}

/// The answer to an approval request: nobody is there to ask, so `--yes` approves (it
/// is the user's word for every question, an MCP call's included) and otherwise the call
/// is refused with [`HEADLESS_REFUSAL`]. Auto mode never gets here for what it approves;
/// it leaves MCP calls and file tools to this answer. The loop guard's question (the same
/// call once more after several in a row) is refused even with `--yes`, which ends the
/// turn: `--yes` approves actions, not a model going round in circles.
fn approval_answer(event: &AgentEvent, yes: bool) -> Option<AgentCommand> {
    let AgentEvent::ApprovalNeeded { id, repeated, .. } = event else {
        return None;
    };
    let decision = if *repeated > 0 {
        ApprovalDecision::Deny {
            feedback: Some(HEADLESS_LOOP.to_string()),
        }
    } else if yes {
        ApprovalDecision::Approve
    } else {
        ApprovalDecision::Deny {
            feedback: Some(HEADLESS_REFUSAL.to_string()),
        }
    };
    Some(AgentCommand::Approval {
        id: id.clone(),
        decision,
    })
}

/// The answer to a server's form (`AgentEvent::FormRequested`): nobody is there to fill
/// it in, so with `--yes` a form whose required fields all have defaults is accepted with
/// its defaults (SEP-1034), and any other is declined. With the answer: its JSONL record
/// (`form_answered`) and the line that says it.
fn form_answer(event: &AgentEvent, yes: bool) -> Option<(AgentCommand, serde_json::Value, String)> {
    let AgentEvent::FormRequested { id, form } = event else {
        return None;
    };
    let defaults = form.defaults().filter(|_| yes);
    let line = describe::form_answered_headless(form, defaults.as_ref(), yes);
    let mut record = serde_json::json!({
        "type": "form_answered",
        "id": id,
        "server": form.server,
        "action": if defaults.is_some() { "accept" } else { "decline" },
        "message": line,
    });
    if let Some(content) = &defaults {
        record["content"] = serde_json::Value::Object(content.clone());
    }
    let answer = match defaults {
        Some(content) => FormAnswer::Accept(content),
        None => FormAnswer::Decline,
    };
    let command = AgentCommand::FormAnswer {
        id: id.clone(),
        answer,
    };
    Some((command, record, line))
}

/// Prints events in the chosen format.
struct Printer {
    format: OutputFormat,
    /// Whether stdout's last character was a newline (text format).
    at_line_start: bool,
    in_reasoning: bool,
    /// Whether stderr is a terminal (reasoning is dimmed only there).
    styled: bool,
    /// What the run did, for the summary line and the `result` object.
    tally: Tally,
    prices: Option<Prices>,
}

impl Printer {
    fn new(format: OutputFormat, prices: Option<Prices>, session_id: Option<String>) -> Self {
        Printer {
            format,
            at_line_start: true,
            in_reasoning: false,
            styled: std::io::stderr().is_terminal(),
            tally: Tally::new(session_id),
            prices,
        }
    }

    fn print(&mut self, event: &AgentEvent, yes: bool) {
        self.tally.observe(event);
        match self.format {
            OutputFormat::Jsonl => self.line(event),
            OutputFormat::Text | OutputFormat::Json => self.print_text(event, yes),
        }
    }

    /// How print mode answered a server's form: a `form_answered` line in `jsonl`, a line
    /// on stderr otherwise.
    fn form_answered(&self, record: &serde_json::Value, line: &str) {
        match self.format {
            OutputFormat::Jsonl => self.line(record),
            OutputFormat::Text | OutputFormat::Json => say!("rein: {line}"),
        }
    }

    /// One JSON object on its own line of stdout, in the `jsonl` format only.
    fn line(&self, value: &impl serde::Serialize) {
        if self.format == OutputFormat::Jsonl {
            write_json_line(value);
        }
    }

    /// The run ended so: the `result` object (`json`, `jsonl`), and the exit code.
    fn finish(&mut self, ending: Ending) -> i32 {
        if self.format != OutputFormat::Text {
            self.end_reasoning();
            self.newline_stdout();
            write_json_line(&self.tally.result(&ending, self.prices));
        }
        ending.exit_code()
    }

    /// One event as text: routed to its family's printer.
    fn print_text(&mut self, event: &AgentEvent, yes: bool) {
        match event.family() {
            EventFamily::Tool => self.print_tool(event),
            EventFamily::Subagent => {
                if let AgentEvent::Subagent { event, .. } = event {
                    print_subagent(event);
                }
            }
            EventFamily::Approval => print_approval(event, yes),
            // Answered at once; `form_answered` says how.
            EventFamily::Form => {}
            EventFamily::Context => self.print_context(event),
            EventFamily::Notice => self.print_notice(event),
            EventFamily::Reply | EventFamily::Turn => self.print_turn(event),
        }
    }

    /// The reply and reasoning as they stream, the turn's end and its summary line.
    fn print_turn(&mut self, event: &AgentEvent) {
        match event {
            // The json format keeps stdout for its one object.
            AgentEvent::TextDelta { .. } if self.format == OutputFormat::Json => {
                self.end_reasoning()
            }
            AgentEvent::TextDelta { text } => {
                self.end_reasoning();
                let clean = sanitize(text);
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(clean.as_bytes());
                let _ = out.flush();
                if let Some(last) = clean.chars().last() {
                    self.at_line_start = last == '\n';
                }
            }
            AgentEvent::ReasoningDelta { text } => {
                if !self.in_reasoning {
                    self.in_reasoning = true;
                    rein_core::text::sanitize::to_stderr(format_args!(
                        "{}",
                        if self.styled {
                            "\x1b[2mthinking: "
                        } else {
                            "thinking: "
                        }
                    ));
                }
                rein_core::text::sanitize::to_stderr(format_args!("{}", sanitize(text)));
            }
            AgentEvent::AssistantMessage { refusal: true, .. } => {
                self.newline_stdout();
                say!("rein: {}", describe::REFUSAL);
            }
            AgentEvent::Attached { paths } => say!("rein: attached {}", paths.join(", ")),
            AgentEvent::TurnFinished { outcome } => {
                self.end_reasoning();
                self.newline_stdout();
                if *outcome == TurnOutcome::Interrupted {
                    say!("rein: interrupted");
                }
                if let Some(line) = summary_line(&self.tally.usage, self.prices) {
                    say!("{line}");
                }
            }
            _ => {}
        }
    }

    /// A tool call, its result's first line, and the plan it wrote.
    fn print_tool(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::ToolCallStarted { name, args, .. } => {
                self.end_reasoning();
                self.newline_stdout();
                say!(
                    "▸ {} {}",
                    sanitize(name),
                    first_line_cut(&describe::key_argument(args), 160)
                );
            }
            AgentEvent::ToolFinished {
                result,
                outcome,
                duration,
                ..
            } => {
                let mark = if outcome.is_error() { "✗" } else { "✓" };
                say!(
                    "  {mark} {} {}",
                    text::duration(*duration),
                    first_line_cut(text::first_line(result), 160)
                );
            }
            AgentEvent::TodosUpdated { todos } => {
                self.end_reasoning();
                self.newline_stdout();
                say!("▸ todos {}", describe::todo_counts(todos));
                for todo in todos {
                    let mark = match todo.status {
                        TodoStatus::Completed => "[x]",
                        TodoStatus::InProgress => "[>]",
                        TodoStatus::Pending => "[ ]",
                    };
                    say!(
                        "  {mark} {}",
                        first_line_cut(describe::todo_wording(todo), 160)
                    );
                }
            }
            _ => {}
        }
    }

    /// The history trimmed, results capped or dropped, a compaction, a model switch.
    fn print_context(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::ContextTrimmed {
                stubbed,
                before_chars,
                after_chars,
            } => {
                self.newline_stdout();
                say!(
                    "rein: {}",
                    rein_core::context::stubs::summary(*stubbed, *before_chars, *after_chars)
                );
            }
            AgentEvent::ResultCapped { name, capped, .. } => {
                say!(
                    "  rein: {}",
                    rein_core::context::spill::summary(name, capped)
                );
            }
            AgentEvent::ResultsDropped {
                dropped,
                before_tokens,
                after_tokens,
            } => {
                self.newline_stdout();
                say!(
                    "rein: {}",
                    rein_core::context::drop::summary(*dropped, *before_tokens, *after_tokens)
                );
            }
            AgentEvent::CompactionStarted { .. }
            | AgentEvent::Compacted { .. }
            | AgentEvent::CompactionFailed { .. } => self.print_compaction(event),
            AgentEvent::ModelSwitched {
                name,
                window,
                over_budget,
                ..
            } => {
                self.newline_stdout();
                say!(
                    "rein: {}",
                    agent::model_switched_text(name, *window, *over_budget)
                );
            }
            _ => {}
        }
    }

    /// A compaction begins, ends with its summary, or fails.
    fn print_compaction(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::CompactionStarted {
                auto,
                messages,
                pieces,
            } => {
                self.end_reasoning();
                self.newline_stdout();
                say!(
                    "rein: {}",
                    describe::compaction_started(*messages, *pieces, *auto)
                );
            }
            AgentEvent::Compacted {
                before_tokens,
                after_tokens,
                summarised,
                kept,
                ..
            } => say!(
                "rein: {}",
                rein_core::context::compact::summary(
                    *before_tokens,
                    *after_tokens,
                    *summarised,
                    *kept
                )
            ),
            AgentEvent::CompactionFailed { message } => {
                self.newline_stdout();
                say!("rein: {}", first_line_cut(message, 500));
            }
            _ => {}
        }
    }

    /// Retries, notices and errors.
    fn print_notice(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::Retrying {
                attempt,
                max_attempts,
                delay,
                reason,
            } => {
                self.newline_stdout();
                let line = describe::retry(*attempt, *max_attempts, *delay, reason);
                say!("rein: {}", first_line_cut(&line, 360));
            }
            AgentEvent::Notice { message } => {
                self.newline_stdout();
                say!("rein: {}", first_line_cut(message, 300));
            }
            AgentEvent::InstructionsAdded { files, notices } => {
                self.newline_stdout();
                if !files.is_empty() {
                    say!("rein: {}", describe::instructions_added(files));
                }
                for line in notices {
                    say!("rein: warning: {}", first_line_cut(line, 300));
                }
            }
            AgentEvent::ModeChanged { mode } => {
                self.newline_stdout();
                say!("rein: {}", mode.describe());
            }
            AgentEvent::Hook { event, message, .. } => {
                self.end_reasoning();
                self.newline_stdout();
                say!("  hook {event}: {}", first_line_cut(message, 500));
            }
            AgentEvent::Error { message } | AgentEvent::RecordingStopped { message } => {
                self.end_reasoning();
                self.newline_stdout();
                say!("rein: error: {}", first_line_cut(message, 500));
            }
            _ => {}
        }
    }

    fn end_reasoning(&mut self) {
        if self.in_reasoning {
            self.in_reasoning = false;
            rein_core::text::sanitize::to_stderr(format_args!(
                "{}",
                if self.styled { "\x1b[0m\n" } else { "\n" }
            ));
        }
    }

    fn newline_stdout(&mut self) {
        if !self.at_line_start {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out);
            let _ = out.flush();
            self.at_line_start = true;
        }
    }
}

/// `value` as one line of stdout (sanitised as every JSON line rein prints).
fn write_json_line(value: &impl serde::Serialize) {
    if let Ok(line) = serde_json::to_string(value) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", rein_core::text::sanitize::json_line(&line));
        let _ = out.flush();
    }
}

/// How an approval request was answered: by `--yes`, or refused.
fn print_approval(event: &AgentEvent, yes: bool) {
    if let AgentEvent::AutoApproved {
        summary,
        reason,
        subagent,
        ..
    } = event
    {
        let from = if subagent.is_some() {
            " (from a subagent)"
        } else {
            ""
        };
        let summary = first_line_cut(summary, 160);
        say!("  auto-approved (auto mode){from}: {summary} ({reason})");
        return;
    }
    let AgentEvent::ApprovalNeeded {
        summary,
        reason,
        subagent,
        repeated,
        period,
        ..
    } = event
    else {
        return;
    };
    if *repeated > 0 {
        let found = rein_core::agent::Loop {
            times: *repeated,
            period: *period,
        };
        say!(
            "  refused: {}: {}",
            found.already(),
            first_line_cut(summary, 160)
        );
        return;
    }
    let from = if subagent.is_some() {
        " (from a subagent)"
    } else {
        ""
    };
    let summary = first_line_cut(summary, 160);
    if yes {
        say!("  approved by --yes{from}: {summary} ({reason})");
    } else {
        say!(
            "  refused (needs approval; run with --yes or use the dashboard){from}: {summary} ({reason})"
        );
    }
}

/// A subagent's progress: queued, its calls, its failures and what it spent.
fn print_subagent(event: &SubagentEvent) {
    match event {
        SubagentEvent::Queued => say!("  ↳ {}", describe::SUBAGENT_QUEUED),
        SubagentEvent::ToolCallStarted { name, args, .. } => say!(
            "  ↳ {} {}",
            sanitize(name),
            first_line_cut(&describe::key_argument(args), 160)
        ),
        SubagentEvent::ToolFinished {
            outcome, result, ..
        } if outcome.is_error() => {
            say!("    ✗ {}", first_line_cut(result, 160))
        }
        SubagentEvent::Finished {
            steps,
            usage,
            stopped_early,
        } => say!(
            "  ↳ subagent: {}",
            describe::subagent_spent(*steps, usage, *stopped_early)
        ),
        SubagentEvent::RequestStarted { .. }
        | SubagentEvent::ToolFinished { .. }
        | SubagentEvent::Usage(_) => {}
    }
}

/// The first line, sanitised and cut to `max` characters; … when anything was left out.
fn first_line_cut(said: &str, max: usize) -> String {
    let first = text::first_line(said);
    let mut line = text::clip(first, max);
    if first.chars().count() <= max && said.lines().nth(1).is_some() {
        line.push('…');
    }
    sanitize(&line).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An MCP call the rules ask about, through the mode and the headless answer: `--mode
    /// auto` does not approve it, so it is refused; `--yes` approves it.
    #[test]
    fn an_mcp_ask_is_refused_headless_unless_yes_approves_it() {
        use rein_core::permissions::mode::{decide, ModeDecision};
        use rein_core::permissions::policy::RulePolicy;
        use rein_core::permissions::{ApprovalMode, PermissionPolicy, ToolRequest};
        let root = tempfile::tempdir().unwrap();
        let policy = RulePolicy::new(root.path(), &[], &[], None).unwrap();
        let name = "mcp__github__create_issue";
        let args = serde_json::json!({"title": "x"});
        let verdict = policy.check(&ToolRequest {
            tool: name,
            args: &args,
            root: root.path(),
        });
        for mode in [ApprovalMode::Auto, ApprovalMode::Default] {
            let ModeDecision::Ask { reason, grants } = decide(mode, name, verdict.clone(), true)
            else {
                panic!("{mode} must put an MCP call to the user");
            };
            let event = AgentEvent::ApprovalNeeded {
                id: "c1".into(),
                name: name.into(),
                summary: name.into(),
                reason,
                grants,
                preview: None,
                subagent: None,
                repeated: 0,
                period: 0,
                mcp: rein_core::permissions::tools::McpCall::for_call(name, &args),
            };
            assert_eq!(
                approval_answer(&event, false),
                Some(AgentCommand::Approval {
                    id: "c1".into(),
                    decision: ApprovalDecision::Deny {
                        feedback: Some(HEADLESS_REFUSAL.to_string())
                    }
                })
            );
            assert_eq!(
                approval_answer(&event, true),
                Some(AgentCommand::Approval {
                    id: "c1".into(),
                    decision: ApprovalDecision::Approve
                })
            );
        }
        assert_eq!(
            decide(ApprovalMode::Plan, name, verdict, true),
            ModeDecision::PlanRefused
        );
        assert_eq!(
            approval_answer(&AgentEvent::RequestStarted { step: 1 }, true),
            None
        );
    }

    #[test]
    fn sanitize_neutralises_escapes() {
        assert_eq!(sanitize("a\x1b[2Jb\r\n\tc\x07"), "a^[[2Jb^M\n\tc^G");
        assert_eq!(sanitize("\u{9b}31m"), "\\u{9b}31m");
    }

    #[test]
    fn the_summary_line_says_what_the_cache_took_and_what_it_cost() {
        let mut t = UsageTotals::default();
        assert_eq!(summary_line(&t, None), None);
        let u = |cached| rein_core::agent::Usage {
            prompt_tokens: 1000,
            completion_tokens: 50,
            total_tokens: 1050,
            cached_tokens: cached,
            estimated: false,
            cache_write_tokens: None,
        };
        t.record(u(None));
        assert_eq!(
            summary_line(&t, None).unwrap(),
            "rein: 1 model call, 1000 prompt + 50 completion tokens"
        );
        t.record(u(Some(900)));
        let prices = Prices {
            input: 1.0,
            cached_input: Some(0.1),
            cache_write: None,
            output: 4.0,
        };
        assert_eq!(
            summary_line(&t, Some(prices)).unwrap(),
            "rein: 2 model calls, 2000 prompt (900 cached, 45%) + 100 completion tokens, $0.0016"
        );
    }
}
