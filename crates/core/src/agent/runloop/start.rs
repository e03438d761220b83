//! Starting a conversation: the agent as a new or resumed session sets it up, and `/clear`.
//!
//! In: the settings, the client, the command and event channels, and the session to record
//! into (with what a resumed one held: history, summary, calibration, todos, granted rules,
//! approval mode, the external tools it offered, the user's command output not yet told).
//! The system prompts are built here once per conversation, so every request of it sends
//! the same bytes (prompt caching). `/clear` starts over: the instruction files read
//! again, the plan empty, the session's grants forgotten, and a recorded conversation
//! going on in a new session file.

use std::collections::VecDeque;

use tokio::sync::mpsc;

use super::offered_tools::tools_json;
use super::state::{BetweenTurns, ExternalOffered, NestedInstructions, SessionRecord, TurnStops};
use super::Agent;
use crate::agent::client::LlmClient;
use crate::agent::events::{AgentCommand, AgentEvent};
use crate::agent::inbox::{Inbox, OpenApprovals, OpenQuestion};
use crate::agent::mode::SharedMode;
use crate::agent::window::WindowWatch;
use crate::agent::{subagent, system_prompt, AgentConfig, SessionSetup};
use crate::context::budget::TokenMeter;
use crate::context::history::History;
use crate::context::spill::TurnSpill;
use crate::permissions::ApprovalMode;
use crate::session::{SessionMeta, SessionWriter};

impl Agent {
    /// The agent of a new or resumed session (`session`; without one nothing is recorded),
    /// learning its window from `window` when the server is still being asked for it.
    pub(crate) fn new(
        config: AgentConfig,
        client: LlmClient,
        rx: mpsc::UnboundedReceiver<AgentCommand>,
        events: mpsc::UnboundedSender<AgentEvent>,
        session: Option<SessionSetup>,
        window: Option<WindowWatch>,
        background: crate::tools::background::Background,
    ) -> Self {
        let tools_json = tools_json(&config, &[], false);
        let ctx = config.tool_context();
        let (system_prompt, subagent_prompt, instructions_chars) = prompts(&config);
        // Built once: every request of the session sends the same bytes (prompt caching).
        let mut history = History::new(system_prompt.clone());
        let mut meter = TokenMeter::new();
        let (recorder, session_dir, resumed) = match session {
            Some(s) => (Some(s.writer), Some(s.data_dir), s.resumed),
            None => (None, None, None),
        };
        let recorded_model = resumed
            .as_ref()
            .and_then(|r| r.model_name().map(str::to_string));
        // The external tools the resumed session offered: those its history called are
        // still offered (as unavailable) when their servers are gone.
        let known_external = resumed
            .as_ref()
            .map(|r| r.external_tools.clone())
            .unwrap_or_default();
        let no_auto = config
            .sandbox
            .not_working_reason()
            .map(|reason| reason.to_string());
        let mode = SharedMode::new(no_auto.clone());
        let recorded_mode = resumed.as_ref().and_then(|r| r.mode).unwrap_or_default();
        let mut mode_notice = None;
        match (recorded_mode, &no_auto) {
            (ApprovalMode::Auto, Some(reason)) => {
                mode_notice = Some(format!(
                    "the session was in auto mode; it goes on in default mode: {}",
                    crate::permissions::mode::auto_unavailable(reason)
                ));
            }
            (recorded, _) => mode.set_quietly(recorded),
        }
        let user_runs = resumed
            .as_ref()
            .map(|r| r.user_runs.clone())
            .unwrap_or_default();
        // The folders' instruction files the resumed session loaded stay in force; those
        // its history no longer holds (a compaction came after them) go out again.
        let (nested, nested_pending) = match &resumed {
            Some(r) => {
                let record = &r.instructions;
                let unsent: Vec<std::path::PathBuf> = record
                    .loaded
                    .iter()
                    .filter(|p| !record.sent.contains(p))
                    .cloned()
                    .collect();
                (
                    crate::instructions::Nested::resumed(&record.loaded),
                    config.instructions.nested_again(&unsent),
                )
            }
            None => Default::default(),
        };
        let checkpoints = super::Checkpoints::new(
            config.checkpoints.clone(),
            resumed.as_ref().map_or(0, |r| r.checkpoints.last_turn()),
            resumed.as_ref().and_then(|r| r.checkpoints.latest.clone()),
        );
        if let Some(resumed) = resumed {
            // The system prompt is always fresh (this directory, these skills); the rest is
            // the session as it was.
            history = History::restore(system_prompt.clone(), resumed.history, resumed.summary);
            if let Some((chars, tokens)) = resumed.calibration {
                meter = TokenMeter::with_rate(chars, tokens);
            }
            match ctx.todos.lock() {
                Ok(mut list) => *list = resumed.todos,
                Err(poisoned) => *poisoned.into_inner() = resumed.todos,
            }
            config.policy.forget_session_grants();
            config.policy.grant(&resumed.rules);
        }
        let tools_chars = tools_json.to_string().len();
        let window = window.map(|watch| OpenQuestion {
            watch,
            configured: config.context.window,
        });
        let recorded_rate = meter.rate();
        Agent {
            config,
            client,
            tools_json,
            meter,
            tools_chars,
            reminded: None,
            compaction_failed: None,
            ctx,
            subagent_prompt,
            history,
            inbox: Inbox {
                rx,
                queued: VecDeque::new(),
                shutdown: false,
                end_reason: crate::hooks::EndReason::Other,
                open: OpenApprovals::default(),
                forms: Default::default(),
                mode: mode.clone(),
                events: events.clone(),
                window,
                learnt: None,
            },
            mode,
            mode_notice,
            user_runs,
            user_commands: 0,
            events,
            session: SessionRecord {
                recorder,
                dir: session_dir,
                recorder_failed: false,
                recorded_model,
                recorded_rate,
                recorded_mode,
            },
            turns: 0,
            background,
            stops: TurnStops::default(),
            hook_context: Vec::new(),
            spill: TurnSpill::unlimited(),
            between: BetweenTurns::default(),
            nested: NestedInstructions {
                loaded: nested,
                pending: nested_pending,
            },
            instructions_chars,
            external: ExternalOffered {
                offered: known_external.clone(),
                known: known_external,
            },
            checkpoints,
        }
    }

    /// Start over: only the system prompt remains, the plan is empty, and a recorded
    /// conversation continues in a new session file.
    pub(super) fn new_conversation(&mut self) {
        self.config.policy.forget_session_grants();
        self.checkpoints.restart();
        if let (Some(dir), Some(old)) = (self.session.dir.clone(), self.session.recorder.take()) {
            let meta = SessionMeta::new(self.config.root.clone(), self.config.client.model.clone());
            let _ = old.close();
            match SessionWriter::create(&dir, meta) {
                Ok(writer) => {
                    self.emit(AgentEvent::SessionStarted {
                        id: writer.id().to_string(),
                        path: writer.path().to_path_buf(),
                    });
                    self.session.recorder = Some(writer);
                    self.session.recorder_failed = false;
                    self.record_model();
                    // The new file starts in default mode: say the mode if it is another.
                    self.session.recorded_mode = ApprovalMode::Default;
                    self.record_mode();
                }
                Err(e) => self.emit(AgentEvent::Error {
                    message: format!(
                        "a new session file cannot be created ({e}); this conversation will not be resumable"
                    ),
                }),
            }
        }
        // The new conversation reads the instruction files again (they may have changed).
        self.config.instructions = self.config.instructions.reload();
        self.protect_imports(&self.config.instructions.files);
        self.forget_nested();
        let (system_prompt, subagent_prompt, instructions_chars) = prompts(&self.config);
        self.history = History::new(system_prompt);
        self.subagent_prompt = subagent_prompt;
        self.instructions_chars = instructions_chars;
        self.emit(AgentEvent::InstructionsLoaded {
            files: self.config.instructions.labels(),
            notices: self.config.instructions.notices.clone(),
        });
        self.reminded = None;
        self.user_runs.clear();
        self.meter.history_rewritten();
        // The new session file learns the rate again at this turn's end.
        self.session.recorded_rate = None;
        self.compaction_failed = None;
        self.emit_context();
        // A new conversation remembers no file, so none is reported as changed.
        self.between.after_last_turn = None;
        match self.ctx.todos.lock() {
            Ok(mut list) => list.clear(),
            Err(poisoned) => poisoned.into_inner().clear(),
        }
    }
}

/// The main agent's and a subagent's system prompts for `config`, each with the project
/// instructions after it, and how many characters of the main one the instructions take.
/// Built once per conversation: every request of it sends the same bytes (prompt caching).
fn prompts(config: &AgentConfig) -> (String, String, usize) {
    let section = config.instructions.prompt_section();
    let base = system_prompt(&config.root, &config.skills);
    let base_chars = base.len();
    let main = crate::agent::with_instructions(base, &section);
    let instructions_chars = main.len() - base_chars;
    let sub = crate::agent::with_instructions(
        subagent::system_prompt(&config.root, &config.skills),
        &section,
    );
    (main, sub, instructions_chars)
}
