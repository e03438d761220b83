//! Judging a bash command string against the bash rules.
//!
//! A command string and the rules flow in; out comes a [`Judgement`]: allow, ask or deny,
//! the deciding reason, one [`Part`] per command judged, and for an `ask` the session rules
//! that would let exactly this command through. The parser finds every simple command at
//! any depth and each is judged on its own; the strictest part wins.
//!
//! Per simple command: wrappers (`env`, `timeout`, `nice`, `xargs`, `find -exec`, `sh -c`,
//! `eval`, `watch`, `busybox`, ...) are seen through and the command they run is judged
//! instead; git's global options (`git -C dir push`) are set aside. The normalised text —
//! program basename, then the arguments' values — is matched against the rules, last match
//! winning. Then hazards the rules cannot see raise an allow to ask: a program run by path
//! from outside the system directories, a redirection that writes a file, a variable other
//! than a few harmless ones, a flag that writes files or runs a program, an interpreter fed
//! a script on stdin, a call to a function defined in the command, arithmetic on variables.
//! A redirection to `/dev/tcp/...` denies. A non-literal program name asks, and so does
//! anything that does not parse. Words are judged as bash passes them on: braces expanded
//! (`{-exec,}` is `-exec`), and a pathname pattern that could become an option (`*`,
//! `-exe[c]`) read as an argument rein cannot read.
//!
//! The command line is read as bash. A string for `sh -c` (dash on Debian, bash elsewhere)
//! is read both as bash and as a POSIX shell: any bash-only construct in it asks, since dash
//! reads it differently (`[[ x || rm -rf ~ ]]` runs `rm` there).
//!
//! This file holds the verdict types and the walk over a parsed script; `invocation` judges
//! one command; `wrappers` and `env_wrapper` tell what a wrapper runs; `git` sets git's
//! global options aside; `variables`, `flags`, `sed`, `jq`, `runners` and `interpreters`
//! find the hazards.

mod env_wrapper;
mod flags;
mod git;
mod interpreters;
mod invocation;
mod jq;
pub mod prefix;
mod runners;
mod sed;
mod variables;
mod wrappers;

use std::collections::HashSet;

use super::rules::{escape_glob, prefix_pattern, BashRules, RuleAction};
use super::shell::{self, Dialect, Redirect};
use variables::EnvVar;
use wrappers::Reader;

/// One judged command of a command string.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Part {
    /// The normalised text the rules saw (the program's path is kept when it is not in a
    /// system directory).
    pub command: String,
    pub action: RuleAction,
    pub reason: String,
    /// The session rule that would let this part through when it asks: its command's
    /// prefix (`{git commit,git commit *}`, see [`prefix`]) or its exact text; `None` when
    /// no rule can (the ask comes from something that must be seen every time).
    #[serde(skip)]
    pub grant: Option<String>,
    /// What an allowed part reads by name, for the policy's sensitive-file check.
    #[serde(skip)]
    pub operands: Operands,
}

/// The words an allowed command takes, as written: its arguments (after the program, or
/// after what a wrapper runs), the files its input redirections open, and whether names
/// it cannot see become its arguments (`xargs CMD`, `find -exec CMD {}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Operands {
    /// The program's name as judged (its basename), empty for a part that only assigns.
    pub program: String,
    pub args: Vec<shell::Word>,
    pub inputs: Vec<shell::Word>,
    pub fed: bool,
}

/// What the whole command line does that changes what a later word names: values it gives
/// variables (`f=.env`, `for f in .env`, a command's own `f=.env cmd`), folders it changes
/// to (`cd`, `pushd`), and whether a pattern may match names that start with a dot
/// (`GLOBIGNORE` set). Collected over every command string judged, in order, without
/// regard to which runs first: a word is judged with every value it could have.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineFacts {
    /// Each variable's values as written (raw text); `None` where rein cannot read one.
    pub vars: Vec<(String, Option<String>)>,
    /// The folders `cd` and `pushd` change to, as written (`~` for a bare `cd`).
    pub cds: Vec<String>,
    pub dotglob: bool,
}

impl LineFacts {
    fn assign(&mut self, name: &str, value: Option<String>) {
        if name == "GLOBIGNORE" {
            self.dotglob = true;
        }
        if self.vars.len() < 256 {
            self.vars.push((name.to_string(), value));
        }
    }
}

/// The verdict on a whole command string.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Judgement {
    pub action: RuleAction,
    /// The deciding part's reason.
    pub reason: String,
    pub parts: Vec<Part>,
    /// For an `ask`: patterns (each asking part's [`Part::grant`], once each) that, added
    /// as session allow rules, would let this command through next time, and every other
    /// command of the same prefixes. Empty when no rule can: some part's ask comes from
    /// something that must be seen every time (a redirection writing a file, a non-literal
    /// program, a parse failure, ...).
    pub grants: Vec<String>,
    /// What the line does to the names its words make, for the policy's sensitive-file check.
    #[serde(skip)]
    pub facts: LineFacts,
}

/// Judge `command`, as bash runs it, against `rules`.
pub fn judge(command: &str, rules: &BashRules) -> Judgement {
    judge_as(command, rules, Dialect::Bash)
}

/// Judge `command` as the shell of `dialect` runs it. [`Dialect::Posix`] is a `sh` that may be
/// dash or bash: the command is read both ways, and bash-only syntax asks.
pub fn judge_as(command: &str, rules: &BashRules, dialect: Dialect) -> Judgement {
    let mut judge = Judge::new(rules, Vec::new());
    let reader = match dialect {
        Dialect::Bash => Reader::Bash,
        Dialect::Posix => Reader::Posix,
        Dialect::Zsh => Reader::Zsh,
    };
    judge.command_string(command, 0, &Inherited::default(), reader);
    judge.finish()
}

/// How many command strings (`sh -c`, `eval`, ...) one judgement parses at most: a string
/// for `sh` is parsed twice, so nesting must not multiply without bound.
const MAX_STRINGS: usize = 256;

/// What a command string handed to `sh -c`/`eval` inherits from the command that runs it.
#[derive(Default)]
struct Inherited {
    piped: bool,
    redirects: Vec<Redirect>,
    env: Vec<EnvVar>,
}

struct Judge<'r> {
    rules: &'r BashRules,
    found: Vec<Part>,
    /// Functions defined anywhere in the command.
    functions: Vec<String>,
    /// The dialect of the command string being judged (what `eval` inside it reads).
    dialect: Dialect,
    /// Command strings parsed so far.
    strings: usize,
    facts: LineFacts,
}

impl<'r> Judge<'r> {
    fn new(rules: &'r BashRules, functions: Vec<String>) -> Judge<'r> {
        Judge {
            rules,
            found: Vec::new(),
            functions,
            dialect: Dialect::Bash,
            strings: 0,
            facts: LineFacts::default(),
        }
    }

    /// A part; `grantable`: a session rule for its exact text would let it through.
    fn push(&mut self, command: String, action: RuleAction, reason: String, grantable: bool) {
        let grant = grantable.then(|| escape_glob(&command));
        self.push_granted(command, action, reason, grant);
    }

    /// A part that a session rule for its command's prefix would let through, when it has
    /// one, else one for its exact text.
    fn push_prefixed(
        &mut self,
        command: String,
        action: RuleAction,
        reason: String,
        prefix: Option<String>,
    ) {
        let grant = match prefix {
            Some(prefix) => prefix_pattern(&prefix),
            None => escape_glob(&command),
        };
        self.push_granted(command, action, reason, Some(grant));
    }

    fn push_granted(
        &mut self,
        command: String,
        action: RuleAction,
        reason: String,
        grant: Option<String>,
    ) {
        self.found.push(Part {
            command,
            action,
            reason,
            grant,
            operands: Operands::default(),
        });
    }

    /// A command string read by `reader`: a POSIX shell's is judged as bash and as dash.
    fn command_string(&mut self, text: &str, depth: usize, inherited: &Inherited, reader: Reader) {
        self.strings += 1;
        if self.strings > MAX_STRINGS {
            let reason = "too many command strings (`sh -c`, `eval`, ...) to judge".to_string();
            self.push(text.trim().to_string(), RuleAction::Ask, reason, false);
            return;
        }
        match reader {
            Reader::Caller => self.script(text, depth, inherited, self.dialect),
            Reader::Bash => self.script(text, depth, inherited, Dialect::Bash),
            Reader::Zsh => self.script(text, depth, inherited, Dialect::Zsh),
            Reader::Posix => {
                let start = self.found.len();
                self.script(text, depth, inherited, Dialect::Bash);
                let as_bash: HashSet<Part> = self.found[start..].iter().cloned().collect();
                let seen = self.found.len();
                self.script(text, depth, inherited, Dialect::Posix);
                // What both readings found is listed once.
                let as_posix = self.found.split_off(seen);
                self.found
                    .extend(as_posix.into_iter().filter(|f| !as_bash.contains(f)));
            }
        }
    }

    fn script(&mut self, text: &str, depth: usize, inherited: &Inherited, dialect: Dialect) {
        let outer = std::mem::replace(&mut self.dialect, dialect);
        self.script_in_dialect(text, depth, inherited);
        self.dialect = outer;
    }

    fn script_in_dialect(&mut self, text: &str, depth: usize, inherited: &Inherited) {
        let script = match shell::parse_script_as(text, depth, self.dialect) {
            Ok(script) => script,
            Err(e) => {
                let reason = match self.dialect {
                    Dialect::Bash => format!("the command does not parse ({e})"),
                    Dialect::Posix => format!("the command does not parse as sh (dash) ({e})"),
                    Dialect::Zsh => format!("the command does not parse as zsh ({e})"),
                };
                self.push(text.trim().to_string(), RuleAction::Ask, reason, false);
                self.salvage(text, depth, inherited);
                return;
            }
        };
        for reason in script.divergences {
            self.push(text.trim().to_string(), RuleAction::Ask, reason, false);
        }
        self.functions.extend(script.functions);
        for (name, words) in script.loops {
            match words {
                Some(words) => {
                    for word in words {
                        self.facts.assign(&name, Some(word.raw));
                    }
                }
                None => self.facts.assign(&name, None),
            }
        }
        for hazard in script.hazards {
            let reason = format!(
                "`{hazard}` evaluates arithmetic on a variable or command output, whose value could hide a command (`a[$(cmd)]`)"
            );
            self.push(hazard, RuleAction::Ask, reason, false);
        }
        for mut command in script.commands {
            // What bash passes on after brace expansion; a pattern that could become an
            // option is an argument rein cannot read.
            let plain = !command.words.iter().any(|w| w.glob);
            match (!plain)
                .then(|| shell::expand_words(&command.words))
                .transpose()
            {
                Ok(None) => {}
                Ok(Some(words)) => command.words = words,
                Err(why) => {
                    let text = command
                        .words
                        .iter()
                        .map(|w| w.raw.as_str())
                        .collect::<Vec<_>>()
                        .join(" ");
                    self.push(text, RuleAction::Ask, why, false);
                    continue;
                }
            }
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
            let mut sub = Judge::new(self.rules, self.functions.clone());
            sub.strings = self.strings;
            sub.script(line, depth, inherited, self.dialect);
            self.strings = sub.strings;
            self.found.extend(
                sub.found
                    .into_iter()
                    .filter(|f| f.action == RuleAction::Deny),
            );
        }
    }

    fn finish(self) -> Judgement {
        let Some(action) = self.found.iter().map(|f| f.action).max() else {
            return Judgement {
                action: RuleAction::Ask,
                reason: "empty command".to_string(),
                parts: Vec::new(),
                grants: Vec::new(),
                facts: self.facts,
            };
        };
        let reason = self
            .found
            .iter()
            .find(|f| f.action == action)
            .map(|f| f.reason.clone())
            .unwrap_or_default();
        let grants = if action == RuleAction::Ask {
            grants_of(&self.found)
        } else {
            Vec::new()
        };
        Judgement {
            action,
            reason,
            parts: self.found,
            grants,
            facts: self.facts,
        }
    }
}

/// The session rules that would let every asking part through, each once, in the parts'
/// order; none when some asking part has none (a rule for the others would still leave
/// the command asking).
pub fn grants_of(parts: &[Part]) -> Vec<String> {
    let asking = parts.iter().filter(|p| p.action == RuleAction::Ask);
    let mut grants: Vec<String> = Vec::new();
    for part in asking {
        let Some(grant) = &part.grant else {
            return Vec::new();
        };
        if !grants.contains(grant) {
            grants.push(grant.clone());
        }
    }
    grants
}
