//! Approval modes: how much the agent may do without asking, on top of the rules.
//!
//! In: the mode the user chose ([`ApprovalMode`]: Shift+Tab in the dashboard, `--mode`
//! headless), the tool, the policy's [`Verdict`] for the call and whether the sandbox
//! works. Out: a [`ModeDecision`]: run, ask the user, deny, refuse because of plan mode, or
//! run approved by auto mode. The rules are judged first and a `deny` stays a `deny` in
//! every mode.
//!
//! - **plan**: nothing that writes runs. `write_file` and `str_replace` are refused
//!   whatever the rules say, and so is every other call the rules would ask about, except
//!   a `read_file` (reading writes nothing: that question still goes to the user). Allowed
//!   commands run, with the project read-only inside the sandbox (the agent's part).
//! - **default**: the rules' verdict as it is.
//! - **auto**: inside a working sandbox, a `bash` command the rules would ask about runs
//!   without asking, marked as auto-approved. The file tools run in rein's own process,
//!   outside the sandbox, so their questions (a write outside the project, a sensitive
//!   read) still go to the user, and so do calls to tools from MCP servers
//!   (`mcp__SERVER__TOOL`): those servers are the user's own programs, running outside
//!   the sandbox with the user's rights. Without a working sandbox auto mode is not
//!   offered; if it is set anyway, nothing is approved automatically.
//!
//! Plan mode refuses an MCP call the rules ask about like any other ask, and runs one the
//! rules allow (rein cannot know whether a server's tool writes; an allow rule is the
//! user's word that it may run).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::{Grant, Verdict};

/// How much the agent may do without asking. Serialised as its lower-case name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalMode {
    /// Read and explore only; the model answers with a plan.
    Plan,
    /// The rules as they are: `ask` asks.
    #[default]
    Default,
    /// Sandboxed commands the rules would ask about run without asking.
    Auto,
}

/// Why auto mode is not offered, when the sandbox does not work; `reason` is the
/// sandbox's own (`bwrap was not found; ...`).
pub fn auto_unavailable(reason: &str) -> String {
    format!("auto mode needs the sandbox: {reason}")
}

impl ApprovalMode {
    pub const ALL: [ApprovalMode; 3] = [
        ApprovalMode::Default,
        ApprovalMode::Auto,
        ApprovalMode::Plan,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ApprovalMode::Plan => "plan",
            ApprovalMode::Default => "default",
            ApprovalMode::Auto => "auto",
        }
    }

    /// The mode Shift+Tab goes to: default → auto → plan → default, as Claude Code
    /// cycles (normal, auto-accept, plan). Auto is skipped when the sandbox does not work.
    pub fn next(self, sandbox_works: bool) -> ApprovalMode {
        match self {
            ApprovalMode::Default if sandbox_works => ApprovalMode::Auto,
            ApprovalMode::Default | ApprovalMode::Auto => ApprovalMode::Plan,
            ApprovalMode::Plan => ApprovalMode::Default,
        }
    }

    /// One line for the user about what the mode does.
    pub fn describe(self) -> &'static str {
        match self {
            ApprovalMode::Plan => {
                "plan mode: the agent reads and explores but nothing that writes runs; it \
                 answers with a plan"
            }
            ApprovalMode::Default => "default mode: actions the rules ask about are put to you",
            ApprovalMode::Auto => {
                "auto mode: sandboxed commands the rules ask about run without asking (deny \
                 rules still deny)"
            }
        }
    }

    /// What the reminder tells the model about the mode; `None` in default mode.
    pub fn reminder(self) -> Option<&'static str> {
        match self {
            ApprovalMode::Plan => Some(
                "approval mode: plan. Nothing that writes runs (file edits and commands that \
                 need approval are refused); read, explore with allowed commands, and answer \
                 with a plan",
            ),
            ApprovalMode::Default => None,
            ApprovalMode::Auto => Some(
                "approval mode: auto. Sandboxed commands that would need approval run without \
                 asking; deny rules still deny",
            ),
        }
    }
}

impl fmt::Display for ApprovalMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A mode name that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown mode \"{0}\" (plan, default or auto)")]
pub struct UnknownMode(pub String);

impl FromStr for ApprovalMode {
    type Err = UnknownMode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ApprovalMode::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownMode(s.trim().to_string()))
    }
}

/// What happens to one call in a mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModeDecision {
    /// Run it (the rules allow it).
    Run,
    /// Put it to the user.
    Ask { reason: String, grants: Vec<Grant> },
    /// A rule denies it.
    Deny { reason: String },
    /// Plan mode refuses it: it writes, or would need approval.
    PlanRefused,
    /// Auto mode approved what the rules would ask about (`reason`: which rule).
    AutoApproved { reason: String },
}

/// The tools that write files.
const WRITING_TOOLS: &[&str] = &["write_file", "str_replace"];

/// What `mode` makes of the policy's `verdict` for a call to `tool`.
pub fn decide(
    mode: ApprovalMode,
    tool: &str,
    verdict: Verdict,
    sandbox_works: bool,
) -> ModeDecision {
    let writes = WRITING_TOOLS.contains(&tool);
    match (mode, verdict) {
        (_, Verdict::Deny { reason }) => ModeDecision::Deny { reason },
        (ApprovalMode::Plan, _) if writes => ModeDecision::PlanRefused,
        (ApprovalMode::Plan, Verdict::Ask { .. }) if tool != "read_file" => {
            ModeDecision::PlanRefused
        }
        (ApprovalMode::Auto, Verdict::Ask { reason, .. }) if tool == "bash" && sandbox_works => {
            ModeDecision::AutoApproved { reason }
        }
        (_, Verdict::Allow) => ModeDecision::Run,
        (_, Verdict::Ask { reason, grants }) => ModeDecision::Ask { reason, grants },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ApprovalMode::*;

    fn ask() -> Verdict {
        Verdict::Ask {
            reason: "no rule".into(),
            grants: vec![Grant::Bash("make *".into())],
        }
    }

    fn deny() -> Verdict {
        Verdict::Deny {
            reason: "rm".into(),
        }
    }

    #[test]
    fn plan_refuses_writes_and_asks_but_runs_what_is_allowed() {
        assert_eq!(
            decide(Plan, "write_file", Verdict::Allow, true),
            ModeDecision::PlanRefused
        );
        assert_eq!(
            decide(Plan, "str_replace", ask(), false),
            ModeDecision::PlanRefused
        );
        assert_eq!(decide(Plan, "bash", ask(), true), ModeDecision::PlanRefused);
        assert_eq!(
            decide(Plan, "bash", Verdict::Allow, false),
            ModeDecision::Run
        );
        assert_eq!(
            decide(Plan, "read_file", Verdict::Allow, false),
            ModeDecision::Run
        );
        for tool in ["write_todos", "read_skill"] {
            assert_eq!(decide(Plan, tool, Verdict::Allow, true), ModeDecision::Run);
        }
        // Reading writes nothing: a sensitive read is still put to the user.
        assert!(matches!(
            decide(Plan, "read_file", ask(), true),
            ModeDecision::Ask { .. }
        ));
    }

    #[test]
    fn deny_stays_deny_in_every_mode() {
        for mode in ApprovalMode::ALL {
            for tool in ["bash", "write_file", "read_file"] {
                assert_eq!(
                    decide(mode, tool, deny(), true),
                    ModeDecision::Deny {
                        reason: "rm".into()
                    },
                    "{mode} {tool}"
                );
            }
        }
    }

    #[test]
    fn auto_approves_asked_commands_only_inside_a_working_sandbox() {
        assert_eq!(
            decide(Auto, "bash", ask(), true),
            ModeDecision::AutoApproved {
                reason: "no rule".into()
            }
        );
        assert_eq!(
            decide(Auto, "bash", ask(), false),
            ModeDecision::Ask {
                reason: "no rule".into(),
                grants: vec![Grant::Bash("make *".into())]
            }
        );
        // The file tools run outside the sandbox: their questions stay questions.
        for tool in ["write_file", "str_replace", "read_file"] {
            assert!(
                matches!(decide(Auto, tool, ask(), true), ModeDecision::Ask { .. }),
                "{tool}"
            );
        }
        assert_eq!(
            decide(Auto, "bash", Verdict::Allow, true),
            ModeDecision::Run
        );
    }

    fn mcp_ask() -> Verdict {
        Verdict::Ask {
            reason: "no [[permissions.tools]] rule".into(),
            grants: vec![Grant::Tool("mcp__github__create_issue".into())],
        }
    }

    #[test]
    fn auto_mode_never_approves_an_mcp_tool() {
        for sandbox in [true, false] {
            assert_eq!(
                decide(Auto, "mcp__github__create_issue", mcp_ask(), sandbox),
                ModeDecision::Ask {
                    reason: "no [[permissions.tools]] rule".into(),
                    grants: vec![Grant::Tool("mcp__github__create_issue".into())]
                }
            );
        }
        // One the rules allow runs, one they deny stays denied.
        assert_eq!(
            decide(Auto, "mcp__github__create_issue", Verdict::Allow, true),
            ModeDecision::Run
        );
        assert!(matches!(
            decide(Auto, "mcp__github__delete_repo", deny(), true),
            ModeDecision::Deny { .. }
        ));
    }

    #[test]
    fn plan_mode_refuses_asked_mcp_calls_and_runs_allowed_ones() {
        assert_eq!(
            decide(Plan, "mcp__github__create_issue", mcp_ask(), true),
            ModeDecision::PlanRefused
        );
        assert_eq!(
            decide(Plan, "mcp__time__get_current_time", Verdict::Allow, true),
            ModeDecision::Run
        );
        assert!(matches!(
            decide(Default, "mcp__github__create_issue", mcp_ask(), true),
            ModeDecision::Ask { .. }
        ));
    }

    #[test]
    fn default_is_the_verdict_as_it_is() {
        assert_eq!(
            decide(Default, "bash", Verdict::Allow, true),
            ModeDecision::Run
        );
        assert!(matches!(
            decide(Default, "bash", ask(), true),
            ModeDecision::Ask { .. }
        ));
        assert!(matches!(
            decide(Default, "write_file", ask(), true),
            ModeDecision::Ask { .. }
        ));
        assert_eq!(
            decide(Default, "write_file", Verdict::Allow, true),
            ModeDecision::Run
        );
    }

    #[test]
    fn shift_tab_cycles_and_skips_auto_without_a_sandbox() {
        assert_eq!(Default.next(true), Auto);
        assert_eq!(Auto.next(true), Plan);
        assert_eq!(Plan.next(true), Default);
        assert_eq!(Default.next(false), Plan);
        assert_eq!(Plan.next(false), Default);
        assert_eq!(Auto.next(false), Plan);
    }

    #[test]
    fn names_round_trip() {
        for mode in ApprovalMode::ALL {
            assert_eq!(mode.name().parse::<ApprovalMode>(), Ok(mode));
            assert_eq!(
                serde_json::to_string(&mode).unwrap(),
                format!("\"{}\"", mode.name())
            );
        }
        assert_eq!(" PLAN ".parse::<ApprovalMode>(), Ok(Plan));
        assert!("yolo".parse::<ApprovalMode>().is_err());
    }

    /// The line shown when the mode changes (`/mode`, Shift+Tab, headless) names the mode
    /// and says what it lets run.
    #[test]
    fn each_mode_says_what_it_does() {
        for mode in ApprovalMode::ALL {
            let line = mode.describe();
            assert!(
                line.starts_with(&format!("{} mode: ", mode.name())),
                "{line}"
            );
        }
        assert!(Plan.describe().contains("nothing that writes runs"));
        assert!(Default.describe().contains("put to you"));
        assert!(Auto.describe().contains("deny rules still deny"));
        // What the model is told: nothing in default mode, the mode's rule otherwise.
        assert_eq!(Default.reminder(), None);
        for mode in [Plan, Auto] {
            let line = mode.reminder().unwrap_or_default();
            assert!(
                line.starts_with(&format!("approval mode: {}. ", mode.name())),
                "{line}"
            );
        }
    }
}
