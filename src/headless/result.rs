//! What `rein -p` says of a run as a whole, in the shapes of Claude Code's print mode: the
//! `system`/`init` event that opens the `jsonl` stream (the session, the model, the
//! folder, the tools), and the `result` object that ends it, which is also all the `json`
//! format prints.
//!
//! In: every agent event of the run ([`Tally::observe`]) and how the run ended
//! ([`Ending`]). Out: the result object, and the exit code, both from the one ending, so
//! the two never disagree. The usage is Claude Code's: `input_tokens` the prompt tokens
//! not read from or written to the cache, `cache_read_input_tokens` and
//! `cache_creation_input_tokens` those that were, `output_tokens` the completion tokens.

use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;

use rein_core::agent::{AgentConfig, AgentEvent, Prices, TurnOutcome, UsageTotals};
use rein_core::tools::Toolset;

/// How a headless run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// The turn ended this way.
    Turn(TurnOutcome),
    /// A signal stopped the run (`SIGINT` for a second Ctrl-C).
    Signal(&'static str),
    /// The agent could not start, or stopped without ending the turn: why.
    Broken(String),
}

impl Ending {
    /// The process's exit code: 0 completed, 1 failed, 3 stopped at `agent.max_steps`,
    /// 130 interrupted, 128 + the signal's number for the others.
    pub fn exit_code(&self) -> i32 {
        match self {
            Ending::Turn(TurnOutcome::Completed) => 0,
            Ending::Turn(TurnOutcome::Failed) | Ending::Broken(_) => 1,
            Ending::Turn(TurnOutcome::StepLimit) => 3,
            Ending::Turn(TurnOutcome::Interrupted) | Ending::Signal("SIGINT") => 130,
            Ending::Signal(signal) => rein_core::host::signals::exit_code(signal),
        }
    }

    /// Claude Code's `subtype`: `success`, `error_max_turns` or `error_during_execution`.
    fn subtype(&self) -> &'static str {
        match self {
            Ending::Turn(TurnOutcome::Completed) => "success",
            Ending::Turn(TurnOutcome::StepLimit) => "error_max_turns",
            _ => "error_during_execution",
        }
    }

    /// What the ending adds to the run's errors.
    fn error(&self) -> Option<String> {
        match self {
            Ending::Turn(TurnOutcome::Completed | TurnOutcome::Failed) => None,
            Ending::Turn(TurnOutcome::StepLimit) => {
                Some("stopped at agent.max_steps model calls in one turn".to_string())
            }
            Ending::Turn(TurnOutcome::Interrupted) => Some("interrupted".to_string()),
            Ending::Signal(signal) => Some(format!("stopped by {signal}")),
            Ending::Broken(why) => Some(why.clone()),
        }
    }
}

/// The `system`/`init` event: the session (`null` when it is not recorded), the model, the
/// project folder and the names of the tools the model is offered (rein's, then the MCP
/// servers' that are up).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InitEvent {
    /// Always `system`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Always `init`.
    pub subtype: &'static str,
    pub session_id: Option<String>,
    pub model: String,
    pub cwd: PathBuf,
    pub tools: Vec<String>,
}

impl InitEvent {
    /// The event for a run of `config` recorded in session `session_id`.
    pub fn new(config: &AgentConfig, session_id: Option<&str>) -> InitEvent {
        let mut tools: Vec<String> = Toolset::Main
            .specs()
            .iter()
            .map(|s| s.name.to_string())
            .collect();
        if let Some(external) = &config.external_tools {
            tools.extend(external.specs().into_iter().map(|s| s.name));
        }
        InitEvent {
            kind: "system",
            subtype: "init",
            session_id: session_id.map(str::to_string),
            model: config.client.model.clone(),
            cwd: config.root.clone(),
            tools,
        }
    }
}

/// The `result` object (see the module doc for its usage).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunResult {
    /// Always `result`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// `success`, `error_max_turns` or `error_during_execution`.
    pub subtype: &'static str,
    /// The exit code is not 0.
    pub is_error: bool,
    /// The text of the last assistant message.
    pub result: String,
    pub session_id: Option<String>,
    /// The model calls the run made.
    pub num_turns: u64,
    pub duration_ms: u64,
    pub usage: ResultUsage,
    /// `None` (`null`) when the model's prices are not known.
    pub total_cost_usd: Option<f64>,
    pub exit_code: i32,
    /// What went wrong, in words: the agent's errors, then the ending's.
    pub errors: Vec<String>,
}

/// The tokens a run used, in Claude Code's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ResultUsage {
    pub input_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub output_tokens: u64,
    /// Some server sent no usage, and rein estimated.
    pub estimated: bool,
}

/// What a run did, as far as its result says: counted from its events.
#[derive(Debug, Clone)]
pub struct Tally {
    started: Instant,
    session_id: Option<String>,
    /// The text of the last assistant message.
    text: String,
    /// Model requests sent.
    requests: u64,
    errors: Vec<String>,
    /// Token usage summed over the turn's model calls.
    pub usage: UsageTotals,
}

impl Tally {
    /// A run of session `session_id` (when it is recorded) starting now.
    pub fn new(session_id: Option<String>) -> Tally {
        Tally {
            started: Instant::now(),
            session_id,
            text: String::new(),
            requests: 0,
            errors: Vec::new(),
            usage: UsageTotals::default(),
        }
    }

    /// Count one event.
    pub fn observe(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::AssistantMessage { text, .. } => self.text = text.clone(),
            AgentEvent::RequestStarted { .. } => self.requests += 1,
            AgentEvent::Usage(usage) => self.usage.record(*usage),
            AgentEvent::Error { message } | AgentEvent::RecordingStopped { message } => {
                self.errors.push(message.clone())
            }
            AgentEvent::SessionStarted { id, .. } => self.session_id = Some(id.clone()),
            _ => {}
        }
    }

    /// The `result` object for a run that ended so, its cost at `prices` (`null` without).
    pub fn result(&self, ending: &Ending, prices: Option<Prices>) -> RunResult {
        let s = &self.usage.session;
        let cached = s.cached_tokens.unwrap_or(0).min(s.prompt_tokens);
        let written = s
            .cache_write_tokens
            .unwrap_or(0)
            .min(s.prompt_tokens - cached);
        let mut errors = self.errors.clone();
        errors.extend(ending.error());
        let code = ending.exit_code();
        RunResult {
            kind: "result",
            subtype: ending.subtype(),
            is_error: code != 0,
            result: self.text.clone(),
            session_id: self.session_id.clone(),
            num_turns: self.requests,
            duration_ms: u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            usage: ResultUsage {
                input_tokens: s.prompt_tokens - cached - written,
                cache_read_input_tokens: cached,
                cache_creation_input_tokens: written,
                output_tokens: s.completion_tokens,
                estimated: s.estimated,
            },
            total_cost_usd: prices.map(|p| p.cost(s)),
            exit_code: code,
            errors,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rein_core::agent::Usage;
    use serde_json::{json, Value};

    fn json_of(result: RunResult) -> Value {
        serde_json::to_value(result).unwrap()
    }

    #[test]
    fn the_exit_code_and_the_result_come_from_one_ending() {
        let mut tally = Tally::new(Some("s1".into()));
        tally.observe(&AgentEvent::RequestStarted { step: 1 });
        tally.observe(&AgentEvent::Usage(Usage {
            prompt_tokens: 1000,
            completion_tokens: 50,
            total_tokens: 1050,
            cached_tokens: Some(600),
            cache_write_tokens: Some(100),
            estimated: false,
        }));
        tally.observe(&AgentEvent::AssistantMessage {
            text: "All done.".into(),
            refusal: false,
            finish_reason: Some("stop".into()),
        });
        let prices = Prices {
            input: 1.0,
            cached_input: Some(0.1),
            cache_write: Some(2.0),
            output: 4.0,
        };
        let done = json_of(tally.result(&Ending::Turn(TurnOutcome::Completed), Some(prices)));
        assert_eq!(done["subtype"], "success");
        assert_eq!(done["is_error"], false);
        assert_eq!(done["exit_code"], 0);
        assert_eq!(done["result"], "All done.");
        assert_eq!(done["session_id"], "s1");
        assert_eq!(done["num_turns"], 1);
        assert_eq!(
            done["usage"],
            json!({"input_tokens": 300, "cache_read_input_tokens": 600,
                   "cache_creation_input_tokens": 100, "output_tokens": 50,
                   "estimated": false})
        );
        let cost = done["total_cost_usd"].as_f64().unwrap();
        assert!((cost - (300.0 + 60.0 + 200.0 + 200.0) / 1e6).abs() < 1e-12);
        assert_eq!(done["errors"], json!([]));

        for (ending, subtype, code) in [
            (Ending::Turn(TurnOutcome::StepLimit), "error_max_turns", 3),
            (
                Ending::Turn(TurnOutcome::Failed),
                "error_during_execution",
                1,
            ),
            (
                Ending::Turn(TurnOutcome::Interrupted),
                "error_during_execution",
                130,
            ),
            (Ending::Signal("SIGINT"), "error_during_execution", 130),
            (Ending::Signal("SIGTERM"), "error_during_execution", 143),
            (Ending::Broken("gone".into()), "error_during_execution", 1),
        ] {
            let result = json_of(tally.result(&ending, None));
            assert_eq!(ending.exit_code(), code);
            assert_eq!(result["exit_code"], code, "{ending:?}");
            assert_eq!(result["subtype"], subtype, "{ending:?}");
            assert_eq!(result["is_error"], true, "{ending:?}");
            assert_eq!(result["total_cost_usd"], Value::Null);
        }
        tally.observe(&AgentEvent::Error {
            message: "the server said no".into(),
        });
        let failed = json_of(tally.result(&Ending::Turn(TurnOutcome::Failed), None));
        assert_eq!(failed["errors"], json!(["the server said no"]));
        let stopped = json_of(tally.result(&Ending::Signal("SIGTERM"), None));
        assert_eq!(
            stopped["errors"],
            json!(["the server said no", "stopped by SIGTERM"])
        );
    }
}
