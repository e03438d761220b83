//! The dashboard's update step through its public API: scripted agent events and key
//! presses in, state and effects out (the harness is `support::app`; the approval modal's
//! tests are in `approval_modal.rs`).

use crate::support;

use std::time::Duration;

use rein::app::state::Cell;
use rein::app::Effect;
use rein_core::agent::{AgentCommand, AgentEvent, ToolOutcome, TurnOutcome};
use support::app::Script;

mod commands;
mod context;
mod input;
mod keys;
mod mcp;
mod slash_list;
mod transcript;

// ---- helpers ----------------------------------------------------------------------------

/// The steps these tests take on the shared script.
trait Steps {
    fn turn(&mut self, text: &str);
    fn tool(&mut self, id: &str, name: &str, args: serde_json::Value);
    fn finish_tool(&mut self, id: &str, name: &str, result: &str, outcome: ToolOutcome);
    fn end_turn(&mut self, outcome: TurnOutcome);
    fn cells(&self) -> &[Cell];
    fn tool_cell(&self, id: &str) -> &rein::app::state::Versioned<rein::app::state::ToolCell>;
}

impl Steps for Script {
    fn turn(&mut self, text: &str) {
        self.agent(AgentEvent::TurnStarted { text: text.into() });
        self.agent(AgentEvent::RequestStarted { step: 1 });
    }

    fn tool(&mut self, id: &str, name: &str, args: serde_json::Value) {
        self.agent(AgentEvent::ToolCallStarted {
            id: id.into(),
            name: name.into(),
            args,
        });
    }

    fn finish_tool(&mut self, id: &str, name: &str, result: &str, outcome: ToolOutcome) {
        self.agent(AgentEvent::ToolFinished {
            id: id.into(),
            name: name.into(),
            result: result.into(),
            is_error: outcome.is_error(),
            outcome,
            duration: Duration::from_millis(120),
            stored: None,
        });
    }

    fn end_turn(&mut self, outcome: TurnOutcome) {
        self.agent(AgentEvent::TurnFinished { outcome });
    }

    fn cells(&self) -> &[Cell] {
        &self.app.transcript.cells
    }

    fn tool_cell(&self, id: &str) -> &rein::app::state::Versioned<rein::app::state::ToolCell> {
        self.cells()
            .iter()
            .find_map(|c| match c {
                Cell::Tool(t) if t.id == id => Some(t),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no tool cell {id}"))
    }
}

fn is_quit(effects: &[Effect]) -> bool {
    matches!(effects, [Effect::Quit])
}

fn is_interrupt(effects: &[Effect]) -> bool {
    matches!(effects, [Effect::Agent(AgentCommand::Interrupt)])
}
