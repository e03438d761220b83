//! Judging one simple command, or one command a wrapper runs.
//!
//! An [`Invocation`] (its words, the variables set for it, the simple command it belongs
//! to) flows in; parts flow out into the [`Judge`]. A redirection to `/dev/tcp/...` or
//! `/dev/udp/...` denies: bash opens a network connection there. A non-literal program
//! name asks; a function defined in the command asks; a builtin that cannot act by itself
//! is allowed unless its setup says otherwise; a wrapper is seen through (`setsid` asks as
//! well: its command leaves the process group; `xargs` is a part of its own, so that the
//! file of `-a FILE` is seen and the policy knows names on its input become arguments).
//! git's global options are set aside. What remains is matched against the rules by its
//! normalised text (a default rule that allows `git tag`, `git branch` or `git reflog`
//! whole means their listing forms only), and an allow is raised to ask by what the rules
//! cannot see: a program run by path, a written file or an input rein cannot name, a
//! variable other than a few harmless ones, a flag that writes or runs (or, under `xargs`,
//! arguments it appends to a program that has such flags), an interpreter fed on stdin.

use std::borrow::Cow;

use super::flags::{flag_hazard, test_hazard};
use super::git::{git_globals, git_write_form};
use super::interpreters::stdin_script;
use super::prefix::grant_prefix;
use super::variables::{env_on_allowed, sensitive_env, EnvVar};
use super::wrappers::{unwrap, Unwrap};
use super::{Inherited, Judge, Operands};
use crate::permissions::rules::{BashRule, RuleAction, RuleOrigin};
use crate::permissions::shell::{Redirect, RedirectOp, SimpleCommand, Word};

/// Where a program may live and still ride on its basename's rule.
const SYSTEM_DIRS: [&str; 7] = [
    "/bin",
    "/usr/bin",
    "/usr/local/bin",
    "/sbin",
    "/usr/sbin",
    "/usr/local/sbin",
    "/opt/homebrew/bin",
];

/// Builtins that cannot act by themselves: only their substitutions and redirections count.
const NEUTRAL: [&str; 10] = [
    "true", "false", ":", "test", "[", "[[", "((", "cd", "pushd", "popd",
];

/// Wrappers inside wrappers beyond this ask.
const MAX_WRAPPERS: usize = 32;

/// Stands for the arguments `xargs` appends, when checking whether they would be denied.
const MORE_ARGS: &str = "ARG";

/// A command to judge: the whole simple command, or what a wrapper runs.
pub(super) struct Invocation<'c> {
    pub(super) words: Cow<'c, [Word]>,
    /// Variables set for it (leading assignments, `env NAME=value`).
    env: Vec<EnvVar>,
    pub(super) command: &'c SimpleCommand,
    /// Run by `xargs`, which appends arguments.
    more_args: bool,
}

impl Judge<'_> {
    pub(super) fn simple(&mut self, command: &SimpleCommand, inherited_env: &[EnvVar]) {
        for (name, value) in &command.assignments {
            self.facts.assign(name, Some(value.raw.clone()));
        }
        let mut env = inherited_env.to_vec();
        env.extend(
            command
                .assignments
                .iter()
                .map(|(name, value)| EnvVar::new(name, value.literal.as_deref())),
        );
        if let Some(redirect) = command.redirects.iter().find(|r| opens_network(r)) {
            let text = render_redirect(redirect);
            let reason = format!("`{text}` opens a network connection");
            self.push(text, RuleAction::Deny, reason, false);
        }
        if command.words.is_empty() {
            let text = command
                .assignments
                .iter()
                .map(|(name, value)| format!("{name}={}", value.raw))
                .chain(command.redirects.iter().map(render_redirect))
                .collect::<Vec<_>>()
                .join(" ");
            let hazard = sensitive_env(&text, &env)
                .or_else(|| {
                    written_file(&command.redirects)
                        .map(|(_, file)| format!("`{text}` writes to a file (`{file}`)"))
                })
                .or_else(|| unnamed_input(&text, &command.redirects));
            match hazard {
                Some(reason) => self.push(text, RuleAction::Ask, reason, false),
                None => {
                    let reason = format!("`{text}` only sets variables or opens files to read");
                    self.push(text, RuleAction::Allow, reason, false);
                    self.attach(Operands {
                        inputs: inputs(&command.redirects),
                        ..Operands::default()
                    });
                }
            }
            return;
        }
        let invocation = Invocation {
            words: Cow::Borrowed(&command.words),
            env,
            command,
            more_args: false,
        };
        self.invocation(&invocation, 0);
    }

    fn invocation(&mut self, inv: &Invocation<'_>, nest: usize) {
        let Some(first) = inv.words.first() else {
            return;
        };
        let Some(written) = first.literal_program() else {
            let reason = format!("the program name `{}` is not a literal word", first.raw);
            self.push(join_words(&inv.words), RuleAction::Ask, reason, false);
            return;
        };
        if nest > MAX_WRAPPERS {
            let reason = "too many wrapper commands inside each other".to_string();
            self.push(join_words(&inv.words), RuleAction::Ask, reason, false);
            return;
        }
        let (program, by_path) = resolve_program(written);
        if !by_path {
            if self.functions.iter().any(|f| f == written) {
                let text = normalised(program, inv);
                let reason = format!(
                    "`{text}` calls the shell function `{written}` defined in this command"
                );
                self.push(text, RuleAction::Ask, reason, false);
                return;
            }
            if NEUTRAL.contains(&program) {
                self.neutral(inv, program, None);
                return;
            }
            if program == "setsid" {
                let text = normalised(program, inv);
                let reason = format!(
                    "`{text}` leaves the process group, so its command can outlive an interrupt"
                );
                self.push(text, RuleAction::Ask, reason, false);
            }
            match unwrap(program, &inv.words, inv.more_args) {
                Unwrap::Itself => {}
                Unwrap::Inner {
                    at,
                    env,
                    more_args,
                    placeholder,
                    arg_file,
                } => {
                    if more_args || arg_file.is_some() {
                        // `xargs` is a part of its own: a sensitive file it reads asks, and
                        // the policy sees that names on its input become arguments.
                        let text = join_words(inv.words.get(..at).unwrap_or_default());
                        let reason = match arg_file {
                            Some(file) => format!(
                                "`{text}` reads the arguments of the command it runs from `{file}`"
                            ),
                            None => format!(
                                "`{text}` runs its command with arguments read from its input"
                            ),
                        };
                        self.push(text, RuleAction::Allow, reason, true);
                        let args = inv.words.get(1..at).unwrap_or_default();
                        self.attach(operands(program, args, inv));
                    }
                    let words = inv.words.get(at..).unwrap_or_default();
                    let inner = Invocation {
                        words: substituted(words, placeholder.as_deref()),
                        env: [inv.env.clone(), env].concat(),
                        command: inv.command,
                        more_args: inv.more_args || more_args,
                    };
                    self.invocation(&inner, nest + 1);
                    return;
                }
                Unwrap::Script(mut text, reader) => {
                    let inherited = Inherited {
                        piped: inv.command.context.piped_input,
                        redirects: inv.command.redirects.clone(),
                        env: inv.env.clone(),
                    };
                    // `xargs eval ...` joins what xargs appends into the command string.
                    let appended = inv.more_args && matches!(program, "eval" | "watch");
                    if appended {
                        text = format!("{text} {MORE_ARGS}");
                    }
                    let depth = inv.command.context.depth + 1;
                    self.command_string(&text, depth, &inherited, reader);
                    if appended {
                        let text = normalised(program, inv);
                        let reason =
                            format!("`{text}` also runs the arguments xargs appends as a command");
                        self.push(text, RuleAction::Ask, reason, false);
                    }
                    return;
                }
                Unwrap::Neutral(why) => {
                    self.neutral(inv, program, Some(why));
                    return;
                }
                Unwrap::Opaque(why) => {
                    let text = normalised(program, inv);
                    let reason = format!("`{text}`: {why}");
                    self.push(text, RuleAction::Ask, reason, false);
                    return;
                }
                Unwrap::Execs(ranges) => {
                    for (from, to) in ranges {
                        let words = inv.words.get(from..to).unwrap_or_default();
                        let inner = Invocation {
                            words: substituted(words, Some("{}")),
                            env: inv.env.clone(),
                            command: inv.command,
                            more_args: false,
                        };
                        self.invocation(&inner, nest + 1);
                    }
                }
            }
        }
        if program == "git" {
            match git_globals(&inv.words) {
                Ok(globals) if globals.at > 1 => {
                    if let Some(why) = globals.concern {
                        let text = normalised(program, inv);
                        let reason = format!("`{text}` {why}");
                        self.push(text, RuleAction::Ask, reason, false);
                    }
                    let words = std::iter::once(first.clone())
                        .chain(inv.words.iter().skip(globals.at).cloned())
                        .collect();
                    let inner = Invocation {
                        words: Cow::Owned(words),
                        env: inv.env.clone(),
                        command: inv.command,
                        more_args: inv.more_args,
                    };
                    self.invocation(&inner, nest + 1);
                    return;
                }
                Ok(_) => {}
                Err(why) => {
                    let text = normalised(program, inv);
                    let reason = format!("`{text}`: {why}");
                    self.push(text, RuleAction::Ask, reason, false);
                    return;
                }
            }
        }
        self.ruled(inv, written, program, by_path);
    }

    /// A builtin that cannot act by itself: allowed unless its redirections or variables
    /// say otherwise.
    fn neutral(&mut self, inv: &Invocation<'_>, program: &str, why: Option<String>) {
        let text = normalised(program, inv);
        if matches!(program, "cd" | "pushd") {
            let target = inv
                .words
                .iter()
                .skip(1)
                .find(|w| !w.text().starts_with('-') || w.text() == "-")
                .map_or_else(|| "~".to_string(), |w| w.raw.clone());
            if self.facts.cds.len() < 16 {
                self.facts.cds.push(target);
            }
        }
        let hazard = sensitive_env(&text, &inv.env)
            .or_else(|| self.hazard_of_setup(&text, inv))
            .or_else(|| test_hazard(program, &inv.words, &text));
        match hazard {
            Some(reason) => self.push(text, RuleAction::Ask, reason, false),
            None => {
                let reason = format!(
                    "`{text}` {}",
                    why.unwrap_or_else(|| "cannot act by itself".to_string())
                );
                self.push(text, RuleAction::Allow, reason, false);
                let args = inv.words.get(1..).unwrap_or_default();
                self.attach(operands(program, args, inv));
            }
        }
    }

    /// Judge a command by the rules, then by the hazards the rules cannot see.
    fn ruled(&mut self, inv: &Invocation<'_>, written: &str, program: &str, by_path: bool) {
        let base_text = normalised(program, inv);
        let text = if by_path {
            normalised(written, inv)
        } else {
            base_text.clone()
        };
        let (mut action, mut reason) = self.rule(&base_text);
        if action == RuleAction::Allow && program == "git" {
            // A default rule allows a listing subcommand whole; what is not a listing asks,
            // as a command no rule allows would (a rule of the user's own is obeyed).
            let by_default = self
                .rules
                .matching(&base_text)
                .is_some_and(|rule| rule.origin == RuleOrigin::Default);
            let args: Vec<&str> = inv.words.iter().skip(1).map(Word::text).collect();
            if let Some(why) = by_default.then(|| git_write_form(&args)).flatten() {
                action = RuleAction::Ask;
                reason = format!(
                    "`{base_text}` {why}; the default rules allow only its read-only forms"
                );
            }
        }
        if inv.more_args && action != RuleAction::Deny {
            let more = format!("{base_text} {MORE_ARGS}");
            if let Some(rule) = self
                .rules
                .matching(&more)
                .filter(|r| r.action == RuleAction::Deny)
            {
                action = RuleAction::Deny;
                reason = format!(
                    "`{base_text}` with the arguments xargs appends matches deny rule `{}`",
                    rule.pattern
                );
            }
        }
        if by_path && action != RuleAction::Deny {
            let (path_action, path_reason) = self.rule(&text);
            if path_action == RuleAction::Ask && action == RuleAction::Allow {
                reason = format!("`{text}` runs a program by path, outside the system directories");
            } else {
                reason = path_reason;
            }
            action = path_action;
        }
        if action == RuleAction::Deny {
            self.push(text, action, reason, false);
            return;
        }
        // Only a few variables ride on what the rules allow; on an ask, those that change
        // what runs still keep a session grant from covering the command.
        let env_hazard = if action == RuleAction::Allow {
            env_on_allowed(&text, &inv.env)
        } else {
            sensitive_env(&text, &inv.env)
        };
        let args = inv.words.get(1..).unwrap_or_default();
        let hazard = env_hazard
            .or_else(|| self.hazard_of_setup(&text, inv))
            .or_else(|| flag_hazard(program, args, &text))
            .or_else(|| appended_hazard(program, args, &text, inv.more_args))
            .or_else(|| stdin_script(program, inv, &text));
        match hazard {
            Some(why) => self.push(text, RuleAction::Ask, why, false),
            None => {
                // A program run by path rides on no rule of its basename's: only its exact
                // text may be allowed.
                let prefix = (!by_path).then(|| grant_prefix(program, args)).flatten();
                self.push_prefixed(text, action, reason, prefix);
                self.attach(operands(program, args, inv));
            }
        }
    }

    fn rule(&self, text: &str) -> (RuleAction, String) {
        match self.rules.matching(text) {
            Some(rule) => (rule.action, describe_rule(text, rule)),
            None => (RuleAction::Ask, format!("`{text}` matches no rule")),
        }
    }

    /// Redirections that write files, or read from a file rein cannot name.
    fn hazard_of_setup(&self, text: &str, inv: &Invocation<'_>) -> Option<String> {
        written_file(&inv.command.redirects)
            .map(|(redirect, file)| {
                format!(
                    "`{text} {}` writes to a file (`{file}`)",
                    render_redirect(redirect)
                )
            })
            .or_else(|| unnamed_input(text, &inv.command.redirects))
    }
}

impl Judge<'_> {
    /// What the part just pushed reads by name.
    fn attach(&mut self, operands: Operands) {
        if let Some(part) = self.found.last_mut() {
            part.operands = operands;
        }
    }
}

/// The operands of `program` run with `args` as `inv`: fed when `xargs` appends names or
/// `find -exec` puts one where `{}` stands.
fn operands(program: &str, args: &[Word], inv: &Invocation<'_>) -> Operands {
    let placeholder = args
        .iter()
        .any(|w| w.literal.is_none() && w.raw.contains("{}"));
    Operands {
        program: program.to_string(),
        args: args.to_vec(),
        inputs: inputs(&inv.command.redirects),
        fed: inv.more_args || placeholder,
    }
}

/// The files the input redirections open to read (not descriptors or here-documents), and
/// here-strings, whose text a program such as `xargs` may take as names.
fn inputs(redirects: &[Redirect]) -> Vec<Word> {
    redirects
        .iter()
        .filter(|r| match r.op {
            RedirectOp::Read | RedirectOp::ReadWrite | RedirectOp::HereString => true,
            RedirectOp::DupIn => r.target.literal.as_deref().is_some_and(|t| {
                !t.is_empty()
                    && t != "-"
                    && !t.trim_end_matches('-').chars().all(|c| c.is_ascii_digit())
            }),
            _ => false,
        })
        .map(|r| r.target.clone())
        .collect()
}

fn describe_rule(text: &str, rule: &BashRule) -> String {
    let action = rule.action;
    let pattern = &rule.pattern;
    match &rule.origin {
        RuleOrigin::Default if pattern == "*" => {
            format!("`{text}` matches the default rule `*` ({action})")
        }
        RuleOrigin::Default => format!("`{text}` matches {action} rule `{pattern}`"),
        RuleOrigin::Config(path) | RuleOrigin::Project(path) => format!(
            "`{text}` matches {action} rule `{pattern}` from {}",
            path.display()
        ),
        RuleOrigin::Session => {
            format!("`{text}` matches {action} rule `{pattern}` (a session rule)")
        }
    }
}

/// What `xargs` appends could be any argument: a program whose flags can write files or run
/// programs asks, as it does for an argument rein cannot read (`xargs find .` given
/// `-delete`, `xargs rg x` given `--pre=./x`).
fn appended_hazard(program: &str, args: &[Word], text: &str, more_args: bool) -> Option<String> {
    if !more_args {
        return None;
    }
    let appended = Word {
        raw: MORE_ARGS.to_string(),
        literal: None,
        glob: false,
    };
    let with_appended = [args, std::slice::from_ref(&appended)].concat();
    flag_hazard(program, &with_appended, text).map(|_| {
        format!(
            "`{text}` also takes the arguments xargs appends, which could be an option that writes files or runs programs"
        )
    })
}

/// The program's basename, and whether it is run by a path outside the system directories.
fn resolve_program(written: &str) -> (&str, bool) {
    match written.rsplit_once('/') {
        None => (written, false),
        Some((dir, base)) => (base, !SYSTEM_DIRS.contains(&dir)),
    }
}

/// `program arg... [< input]`: the arguments' values (raw text where not literal), then the
/// redirections that feed stdin (`cat <<'EOF'` is `cat` with an input), single spaces.
fn normalised(program: &str, inv: &Invocation<'_>) -> String {
    // Every input, whatever descriptor it is opened on (`cat 3< .env <&3` reads `.env`).
    let inputs = inv.command.redirects.iter().filter(|r| {
        matches!(r.op, RedirectOp::Read)
            || (r.fd.is_none()
                && matches!(
                    r.op,
                    RedirectOp::Heredoc | RedirectOp::HeredocTabs | RedirectOp::HereString
                ))
    });
    std::iter::once(program.to_string())
        .chain(inv.words.iter().skip(1).map(|w| w.text().to_string()))
        .chain(inputs.map(render_redirect))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The words, with every word holding `placeholder` made non-literal: a wrapper puts its
/// input there (`xargs -I{} sh -c 'echo {}'` runs whatever the input says).
fn substituted<'w>(words: &'w [Word], placeholder: Option<&str>) -> Cow<'w, [Word]> {
    let Some(placeholder) = placeholder else {
        return Cow::Borrowed(words);
    };
    if !words.iter().any(|w| w.raw.contains(placeholder)) {
        return Cow::Borrowed(words);
    }
    Cow::Owned(
        words
            .iter()
            .map(|w| Word {
                literal: w.literal.clone().filter(|_| !w.raw.contains(placeholder)),
                ..w.clone()
            })
            .collect(),
    )
}

fn join_words(words: &[Word]) -> String {
    words.iter().map(Word::text).collect::<Vec<_>>().join(" ")
}

fn render_redirect(redirect: &Redirect) -> String {
    format!(
        "{}{} {}",
        redirect.fd.as_deref().unwrap_or(""),
        redirect.op.as_str(),
        redirect.target.raw
    )
}

/// A redirection bash turns into a network connection: `/dev/tcp/HOST/PORT`,
/// `/dev/udp/HOST/PORT` (whatever the quoting, and even with expansions in the host).
fn opens_network(redirect: &Redirect) -> bool {
    if matches!(
        redirect.op,
        RedirectOp::Heredoc | RedirectOp::HeredocTabs | RedirectOp::HereString
    ) {
        return false;
    }
    let target = match &redirect.target.literal {
        Some(value) => value.clone(),
        None => redirect.target.raw.replace(['"', '\'', '\\'], ""),
    };
    target.starts_with("/dev/tcp/") || target.starts_with("/dev/udp/")
}

/// An input redirection whose file is not a literal word: it could be `/dev/tcp/...`.
/// (`<&WORD` takes only a descriptor in bash, but one the word names is asked about too:
/// rein does not count on every shell refusing a file there.)
fn unnamed_input(text: &str, redirects: &[Redirect]) -> Option<String> {
    let redirect = redirects.iter().find(|r| {
        matches!(r.op, RedirectOp::Read | RedirectOp::DupIn)
            && r.target.literal.is_none()
            && !r.target.raw.starts_with("<(")
    })?;
    Some(format!(
        "`{text} {}` reads from a file rein cannot name, which could be a network connection (`/dev/tcp/...`)",
        render_redirect(redirect)
    ))
}

/// The first redirection that writes a real file (not /dev/null and friends).
fn written_file(redirects: &[Redirect]) -> Option<(&Redirect, &str)> {
    redirects.iter().find_map(|r| {
        let file = r.written_file()?;
        let harmless = matches!(
            file.literal_program(),
            Some("/dev/null" | "/dev/stdout" | "/dev/stderr")
        );
        (!harmless).then(|| (r, file.text()))
    })
}
