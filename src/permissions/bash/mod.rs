//! Judging a bash command string against the bash rules.
//!
//! A command string and the rules flow in; out comes a [`Judgement`]: allow, ask or deny,
//! the deciding reason, one [`Part`] per command judged, and for an `ask` the session rules
//! that would let exactly this command through. The parser finds every simple command at
//! any depth and each is judged on its own; the strictest part wins.
//!
//! Per simple command: wrappers (`env`, `timeout`, `nice`, `xargs`, `find -exec`, `sh -c`,
//! `eval`, `watch`, ...) are seen through and the command they run is judged instead. The
//! normalised text — program basename, then the arguments' values — is matched against the
//! rules, last match winning. Then hazards the rules cannot see raise an allow to ask: a
//! program run by path from outside the system directories, a redirection that writes a
//! file, a variable that changes what runs, a flag that writes files or runs a program, an
//! interpreter fed a script on stdin, a call to a function defined in the command, arithmetic
//! on variables. A non-literal program name asks, and so does anything that does not parse.
//!
//! This file holds the verdict types and the walk over a parsed script; `invocation` judges
//! one command; `wrappers` and `env_wrapper` tell what a wrapper runs; `variables`, `flags`
//! and `interpreters` find the hazards.

mod env_wrapper;
mod flags;
mod interpreters;
mod invocation;
mod variables;
mod wrappers;

use super::rules::{escape_glob, Action, BashRules};
use super::shell::{self, Redirect};

/// One judged command of a command string.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Part {
    /// The normalised text the rules saw (the program's path is kept when it is not in a
    /// system directory).
    pub command: String,
    pub action: Action,
    pub reason: String,
}

/// The verdict on a whole command string.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Judgement {
    pub action: Action,
    /// The deciding part's reason.
    pub reason: String,
    pub parts: Vec<Part>,
    /// For an `ask`: patterns (escape_glob of each asking part's normalised text) that,
    /// added as session allow rules, would let exactly this command through next time.
    /// Empty when no rule can: the ask comes from something that must be seen every time
    /// (a redirection writing a file, a non-literal program, a parse failure, ...).
    pub grants: Vec<String>,
}

/// Judge `command` against `rules`.
pub fn judge(command: &str, rules: &BashRules) -> Judgement {
    let mut judge = Judge {
        rules,
        found: Vec::new(),
        functions: Vec::new(),
    };
    judge.script(command, 0, &Inherited::default());
    judge.finish()
}

/// A part with whether a session rule for its text would let it through.
struct Found {
    part: Part,
    grantable: bool,
}

/// What a command string handed to `sh -c`/`eval` inherits from the command that runs it.
#[derive(Default)]
struct Inherited {
    piped: bool,
    redirects: Vec<Redirect>,
    env: Vec<String>,
}

struct Judge<'r> {
    rules: &'r BashRules,
    found: Vec<Found>,
    /// Functions defined anywhere in the command.
    functions: Vec<String>,
}

impl Judge<'_> {
    fn push(&mut self, command: String, action: Action, reason: String, grantable: bool) {
        self.found.push(Found {
            part: Part {
                command,
                action,
                reason,
            },
            grantable,
        });
    }

    fn script(&mut self, text: &str, depth: usize, inherited: &Inherited) {
        let script = match shell::parse_script(text, depth) {
            Ok(script) => script,
            Err(e) => {
                let reason = format!("the command does not parse ({e})");
                self.push(text.trim().to_string(), Action::Ask, reason, false);
                self.salvage(text, depth, inherited);
                return;
            }
        };
        self.functions.extend(script.functions);
        for hazard in script.hazards {
            let reason = format!(
                "`{hazard}` evaluates arithmetic on a variable or command output, whose value could hide a command (`a[$(cmd)]`)"
            );
            self.push(hazard, Action::Ask, reason, false);
        }
        for mut command in script.commands {
            command.context.piped_input |= inherited.piped;
            command
                .redirects
                .extend(inherited.redirects.iter().cloned());
            self.simple(&command, &inherited.env);
        }
    }

    /// When the whole string does not parse, a line that does can still deny.
    fn salvage(&mut self, text: &str, depth: usize, inherited: &Inherited) {
        let lines: Vec<&str> = text.lines().collect();
        if lines.len() < 2 {
            return;
        }
        for line in lines {
            let mut sub = Judge {
                rules: self.rules,
                found: Vec::new(),
                functions: self.functions.clone(),
            };
            sub.script(line, depth, inherited);
            self.found.extend(
                sub.found
                    .into_iter()
                    .filter(|f| f.part.action == Action::Deny),
            );
        }
    }

    fn finish(self) -> Judgement {
        let Some(action) = self.found.iter().map(|f| f.part.action).max() else {
            return Judgement {
                action: Action::Ask,
                reason: "empty command".to_string(),
                parts: Vec::new(),
                grants: Vec::new(),
            };
        };
        let reason = self
            .found
            .iter()
            .find(|f| f.part.action == action)
            .map(|f| f.part.reason.clone())
            .unwrap_or_default();
        let mut grants = Vec::new();
        if action == Action::Ask {
            let asking: Vec<&Found> = self
                .found
                .iter()
                .filter(|f| f.part.action == Action::Ask)
                .collect();
            if asking.iter().all(|f| f.grantable) {
                for found in asking {
                    let grant = escape_glob(&found.part.command);
                    if !grants.contains(&grant) {
                        grants.push(grant);
                    }
                }
            }
        }
        Judgement {
            action,
            reason,
            parts: self.found.into_iter().map(|f| f.part).collect(),
            grants,
        }
    }
}
