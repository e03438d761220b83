//! The context gauge and compaction on screen: the count the gauge starts from and adds to,
//! the window asked about, compaction asked for, running, folded and failed, dropped
//! results, and the context layer.

use crate::support;

use std::time::Duration;

use crossterm::event::KeyCode;
use rein::app::state::{Activity, Cell, NoticeKind};
use rein::app::Effect;
use rein_core::agent::{AgentCommand, AgentEvent, ContextStats, ToolOutcome, Usage};
use rein_core::context::budget::Breakdown;
use support::app::app;
use support::app::Script;

use super::Steps;

// ---- gauge ------------------------------------------------------------------------------

/// The agent's count, as it sends it after a reply or a rewrite of the history.
fn stats(tokens: u64, chars_per_token: f64, estimated: bool) -> ContextStats {
    ContextStats {
        tokens,
        window: 100_000,
        compact_at: 0.8,
        estimated,
        chars_per_token,
        messages: 12,
        breakdown: Breakdown {
            system: 2_000,
            instructions: 0,
            tools: 3_000,
            user: 500,
            assistant: 1_500,
            tool_results: tokens.saturating_sub(7_000),
            summary: 0,
            reminder: 0,
            reasoning: 0,
        },
    }
}

#[test]
fn the_gauge_starts_from_the_agents_count_and_adds_at_the_learnt_rate() {
    let mut s = Script::with(app());
    s.turn("12345678"); // 8 characters
    assert_eq!(s.app.gauge.added_chars, 8);
    s.agent(AgentEvent::ReasoningDelta {
        text: "never sent back".into(),
    });
    s.agent(AgentEvent::TextDelta {
        text: "héllo".into(),
    });
    assert_eq!(
        s.app.gauge.added_chars, 13,
        "characters, not bytes; no reasoning"
    );
    assert_eq!(s.app.gauge.used(), 4, "four characters a token until told");

    // The count after the reply replaces the estimate; the window and threshold come with it.
    s.agent(AgentEvent::Context(stats(20_000, 2.5, false)));
    assert_eq!(s.app.gauge.reported, 20_000);
    assert_eq!(s.app.gauge.added_chars, 0);
    assert_eq!(s.app.gauge.limit, 100_000);
    assert_eq!(s.app.gauge.compact_at, 0.8);
    assert!(!s.app.gauge.estimated);
    assert_eq!(s.app.context.map(|c| c.messages), Some(12));

    // What streams in afterwards counts at 2.5 characters a token, not 4.
    s.tool("t", "bash", serde_json::json!({ "command": "ls" }));
    s.finish_tool("t", "bash", &"x".repeat(400), ToolOutcome::Ok);
    assert_eq!(s.app.gauge.added_chars, 400);
    assert_eq!(s.app.gauge.used(), 20_160);

    // Usage no longer moves the gauge: the agent's count is the one number.
    s.agent(AgentEvent::Usage(Usage {
        prompt_tokens: 90_000,
        completion_tokens: 10,
        total_tokens: 90_010,
        cached_tokens: None,
        cache_write_tokens: None,
        estimated: false,
    }));
    assert_eq!(s.app.gauge.used(), 20_160);

    s.agent(AgentEvent::Context(stats(21_000, 2.5, false)));
    assert_eq!(s.app.gauge.used(), 21_000);
}

#[test]
fn the_gauge_says_the_window_is_asked_until_the_answer_comes() {
    let mut s = Script::with(app());
    // The dashboard starts while the server is asked (`dashboard_start`).
    s.app.gauge.asking = true;
    assert_eq!(
        rein::ui::gauge::label(&s.app.gauge),
        "window: asking the server…"
    );
    // The agent's counts meanwhile are in the configured window: still asking.
    s.agent(AgentEvent::Context(stats(2_000, 4.0, true)));
    assert!(s.app.gauge.asking);
    assert_eq!(
        rein::ui::gauge::label(&s.app.gauge),
        "window: asking the server…"
    );
    s.agent(AgentEvent::WindowLearnt {
        window: 8_192,
        url: Some("http://127.0.0.1:8080/props".into()),
    });
    assert!(!s.app.gauge.asking);
    assert_eq!(s.app.gauge.limit, 8_192);
    assert_eq!(rein::ui::gauge::label(&s.app.gauge), "~24% · 2k/8.2k");
}

#[test]
fn a_server_silent_about_its_window_leaves_the_configured_one_on_the_gauge() {
    let mut s = Script::with(app());
    s.app.gauge.asking = true;
    s.agent(AgentEvent::WindowLearnt {
        window: 128_000,
        url: None,
    });
    assert_eq!(rein::ui::gauge::label(&s.app.gauge), "0% · 0/128k");
    // A switch brings its own window and ends the asking too.
    let mut s = Script::with(app());
    s.app.gauge.asking = true;
    s.agent(AgentEvent::ModelSwitched {
        name: "ollama/qwen3".into(),
        model: "qwen3".into(),
        base_url: "http://127.0.0.1:11434/v1".into(),
        window: 32_000,
        over_budget: None,
        prices: None,
    });
    assert!(!s.app.gauge.asking);
    assert_eq!(s.app.gauge.limit, 32_000);
}

#[test]
fn the_gauge_drops_at_once_after_a_compaction() {
    let mut s = Script::with(app());
    s.agent(AgentEvent::Context(stats(85_000, 3.0, false)));
    s.turn("go on");
    s.agent(AgentEvent::CompactionStarted {
        auto: true,
        messages: 58,
        pieces: 1,
    });
    s.agent(compacted(85_000, 30_000));
    s.agent(AgentEvent::Context(stats(30_000, 3.0, false)));
    assert_eq!(s.app.gauge.used(), 30_000);
}

// ---- context and compaction -------------------------------------------------------------

fn compacted(before_tokens: u64, after_tokens: u64) -> AgentEvent {
    AgentEvent::Compacted {
        auto: false,
        before_tokens,
        after_tokens,
        summarised: 58,
        kept: 6,
        pieces: 1,
        note: "## Goal\nFix the tab handling.\n## Done\nparse_line splits on spaces.".into(),
        usage: Usage::default(),
    }
}

fn compact_commands(effects: &[Effect]) -> Vec<Option<String>> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Agent(AgentCommand::Compact { focus }) => Some(focus.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn compact_sends_the_command_with_and_without_a_focus() {
    let mut s = Script::with(app());
    assert_eq!(compact_commands(&s.send("/compact")), vec![None]);
    assert_eq!(
        compact_commands(&s.send("/compact   keep the parser plan  ")),
        vec![Some("keep the parser plan".to_string())]
    );
    assert_eq!(compact_commands(&s.send("/COMPACT  ")), vec![None]);
    assert!(s.notices().is_empty(), "idle: it runs now, nothing to say");
    assert_eq!(
        s.app.activity,
        Activity::Idle,
        "the agent says when it starts"
    );
}

#[test]
fn compact_during_a_turn_says_it_is_queued() {
    let mut s = Script::with(app());
    s.turn("a long job");
    let effects = s.send("/compact");
    assert_eq!(
        compact_commands(&effects),
        vec![None],
        "the agent queues it"
    );
    assert_eq!(
        s.notices(),
        vec![(
            NoticeKind::Info,
            "compaction queued: it runs when this turn ends".to_string()
        )]
    );
    assert!(s.app.composer.queued.is_empty(), "not a message");
}

#[test]
fn a_compaction_shows_while_it_runs_then_as_a_folded_cell() {
    let mut s = Script::with(app());
    s.send("/compact");
    s.advance(Duration::from_secs(1));
    s.agent(AgentEvent::CompactionStarted {
        auto: false,
        messages: 58,
        pieces: 1,
    });
    assert!(
        matches!(s.app.activity, Activity::Compacting { messages: 58, in_turn: false, since } if since == s.now),
        "{:?}",
        s.app.activity
    );
    assert!(s.app.busy(), "Esc interrupts it; messages wait for it");
    s.agent(compacted(109_000, 38_000));
    assert_eq!(s.app.activity, Activity::Idle, "nothing was running before");
    let cell = match s.cells() {
        [Cell::Compaction(c)] => c,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        cell.summary,
        "compacted: 109k → 38k tokens (58 messages summarised, 6 kept)"
    );
    assert!(cell.note.contains("Fix the tab handling."));
    assert!(!cell.expanded, "folded by default");
    // Ctrl-O unfolds the last thing with something folded: here the note.
    s.ctrl('o');
    assert!(matches!(s.cells(), [Cell::Compaction(c)] if c.expanded));
    s.ctrl('o');
    assert!(matches!(s.cells(), [Cell::Compaction(c)] if !c.expanded));
}

#[test]
fn an_automatic_compaction_mid_turn_goes_back_to_thinking() {
    let mut s = Script::with(app());
    s.turn("go on");
    s.tool("t", "bash", serde_json::json!({ "command": "ls" }));
    s.finish_tool("t", "bash", "a\nb", ToolOutcome::Ok);
    s.agent(AgentEvent::CompactionStarted {
        auto: true,
        messages: 30,
        pieces: 2,
    });
    assert!(matches!(
        s.app.activity,
        Activity::Compacting { in_turn: true, .. }
    ));
    s.advance(Duration::from_secs(5));
    s.agent(compacted(90_000, 30_000));
    assert_eq!(s.app.activity, Activity::Thinking { since: s.now });
    // The newest folded thing is the note now.
    s.ctrl('o');
    assert!(!s.tool_cell("t").expanded);
}

#[test]
fn a_failed_compaction_is_an_error_and_the_activity_goes_back() {
    let mut s = Script::with(app());
    s.send("/compact");
    s.agent(AgentEvent::CompactionStarted {
        auto: false,
        messages: 10,
        pieces: 1,
    });
    s.agent(AgentEvent::CompactionFailed {
        message: "compaction failed: HTTP 500; the conversation is unchanged".into(),
    });
    assert_eq!(
        s.notices(),
        vec![(
            NoticeKind::Error,
            "compaction failed: HTTP 500; the conversation is unchanged".to_string()
        )]
    );
    assert_eq!(s.app.activity, Activity::Idle);

    s.turn("x");
    s.agent(AgentEvent::CompactionStarted {
        auto: true,
        messages: 10,
        pieces: 1,
    });
    s.agent(AgentEvent::CompactionFailed {
        message: "compaction interrupted; the conversation is unchanged".into(),
    });
    assert!(matches!(s.app.activity, Activity::Thinking { .. }));
}

#[test]
fn dropped_results_are_a_notice() {
    let mut s = Script::with(app());
    s.agent(AgentEvent::ResultsDropped {
        dropped: 3,
        before_tokens: 110_000,
        after_tokens: 70_000,
    });
    assert_eq!(
        s.notices(),
        vec![(
            NoticeKind::Info,
            "3 old tool results dropped to fit the context window, 110k → 70k tokens".to_string()
        )]
    );
}

#[test]
fn context_opens_a_layer_that_follows_the_count_and_closes_with_esc_or_q() {
    let mut s = Script::with(app());
    assert!(s.send("/context").is_empty());
    assert!(s.app.context_open);
    // Keys go to the layer: typing does not reach the input.
    s.plain(KeyCode::Char('x'));
    assert_eq!(s.input_lines(), [""]);
    s.agent(AgentEvent::Context(stats(40_000, 3.5, false)));
    assert_eq!(s.app.context.map(|c| c.tokens), Some(40_000));
    assert!(s.app.context_open, "a new count keeps it open");
    s.plain(KeyCode::Char('q'));
    assert!(!s.app.context_open);
    s.send("/context");
    assert!(
        s.plain(KeyCode::Esc).is_empty(),
        "Esc closes, interrupts nothing"
    );
    assert!(!s.app.context_open);
    s.type_text("q");
    assert_eq!(s.input_lines(), ["q"], "closed: keys edit the input again");
}
