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

use std::borrow::Cow;

use super::rules::{escape_glob, Action, BashRule, BashRules, RuleOrigin};
use super::shell::{self, Redirect, RedirectOp, SimpleCommand, Word};

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

/// Shells whose `-c STRING` is parsed as a command of its own.
const SHELLS: [&str; 5] = ["sh", "bash", "zsh", "dash", "ksh"];

/// Shells of every syntax, as interpreters.
const SHELL_FAMILY: [&str; 11] = [
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "csh", "tcsh", "fish",
];

/// Other programs that run a script fed on stdin (version suffixes stripped: `python3.12`).
const INTERPRETERS: [&str; 19] = [
    "python",
    "pypy",
    "perl",
    "ruby",
    "irb",
    "node",
    "nodejs",
    "deno",
    "bun",
    "php",
    "lua",
    "luajit",
    "tclsh",
    "wish",
    "osascript",
    "pwsh",
    "powershell",
    "R",
    "Rscript",
];

/// Wrappers inside wrappers beyond this ask.
const MAX_WRAPPERS: usize = 32;

/// Stands for the arguments `xargs` appends, when checking whether they would be denied.
const MORE_ARGS: &str = "ARG";

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

/// A command to judge: the whole simple command, or what a wrapper runs.
struct Invocation<'c> {
    words: Cow<'c, [Word]>,
    /// Variables set for it (leading assignments, `env NAME=value`).
    env: Vec<String>,
    command: &'c SimpleCommand,
    /// Run by `xargs`, which appends arguments.
    more_args: bool,
}

/// What a wrapper runs.
enum Unwrap {
    /// Not a wrapper, or one with nothing to run: the command is judged itself.
    Itself,
    Inner {
        at: usize,
        env: Vec<String>,
        more_args: bool,
        /// The text `xargs -I` replaces with its input, inside any argument.
        placeholder: Option<String>,
    },
    /// A command string (`sh -c`, `eval`, `watch`, `env -S`).
    Script(String),
    /// Runs nothing that matters (`command -v`, `xargs` without a command).
    Neutral(String),
    /// Something rein cannot see past.
    Opaque(String),
    /// `find -exec ...`: these word ranges (where `{}` stands for a file name), and then
    /// `find` itself.
    Execs(Vec<(usize, usize)>),
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

    fn simple(&mut self, command: &SimpleCommand, inherited_env: &[String]) {
        let mut env = inherited_env.to_vec();
        env.extend(command.assignments.iter().map(|(name, _)| name.clone()));
        if command.words.is_empty() {
            let text = command
                .assignments
                .iter()
                .map(|(name, value)| format!("{name}={}", value.raw))
                .chain(command.redirects.iter().map(render_redirect))
                .collect::<Vec<_>>()
                .join(" ");
            let hazard = sensitive_env(&text, &env).or_else(|| {
                written_file(&command.redirects)
                    .map(|(_, file)| format!("`{text}` writes to a file (`{file}`)"))
            });
            match hazard {
                Some(reason) => self.push(text, Action::Ask, reason, false),
                None => {
                    let reason = format!("`{text}` only sets variables or opens files to read");
                    self.push(text, Action::Allow, reason, false);
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
            self.push(join_words(&inv.words), Action::Ask, reason, false);
            return;
        };
        if nest > MAX_WRAPPERS {
            let reason = "too many wrapper commands inside each other".to_string();
            self.push(join_words(&inv.words), Action::Ask, reason, false);
            return;
        }
        let (program, by_path) = resolve_program(written);
        if !by_path {
            if self.functions.iter().any(|f| f == written) {
                let text = normalised(program, inv);
                let reason = format!(
                    "`{text}` calls the shell function `{written}` defined in this command"
                );
                self.push(text, Action::Ask, reason, false);
                return;
            }
            if NEUTRAL.contains(&program) {
                self.neutral(inv, program, None);
                return;
            }
            match unwrap(program, &inv.words, inv.more_args) {
                Unwrap::Itself => {}
                Unwrap::Inner {
                    at,
                    env,
                    more_args,
                    placeholder,
                } => {
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
                Unwrap::Script(mut text) => {
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
                    self.script(&text, inv.command.context.depth + 1, &inherited);
                    if appended {
                        let text = normalised(program, inv);
                        let reason =
                            format!("`{text}` also runs the arguments xargs appends as a command");
                        self.push(text, Action::Ask, reason, false);
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
                    self.push(text, Action::Ask, reason, false);
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
        self.ruled(inv, written, program, by_path);
    }

    /// A builtin that cannot act by itself: allowed unless its redirections or variables
    /// say otherwise.
    fn neutral(&mut self, inv: &Invocation<'_>, program: &str, why: Option<String>) {
        let text = normalised(program, inv);
        let hazard = self
            .hazard_of_setup(&text, inv)
            .or_else(|| test_hazard(program, &inv.words, &text));
        match hazard {
            Some(reason) => self.push(text, Action::Ask, reason, false),
            None => {
                let reason = format!(
                    "`{text}` {}",
                    why.unwrap_or_else(|| "cannot act by itself".to_string())
                );
                self.push(text, Action::Allow, reason, false);
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
        if inv.more_args && action != Action::Deny {
            let more = format!("{base_text} {MORE_ARGS}");
            if let Some(rule) = self
                .rules
                .matching(&more)
                .filter(|r| r.action == Action::Deny)
            {
                action = Action::Deny;
                reason = format!(
                    "`{base_text}` with the arguments xargs appends matches deny rule `{}`",
                    rule.pattern
                );
            }
        }
        if by_path && action != Action::Deny {
            let (path_action, path_reason) = self.rule(&text);
            if path_action == Action::Ask && action == Action::Allow {
                reason = format!("`{text}` runs a program by path, outside the system directories");
            } else {
                reason = path_reason;
            }
            action = path_action;
        }
        if action == Action::Deny {
            self.push(text, action, reason, false);
            return;
        }
        let hazard = self
            .hazard_of_setup(&text, inv)
            .or_else(|| flag_hazard(program, inv.words.get(1..).unwrap_or_default(), &text))
            .or_else(|| stdin_script(program, inv, &text));
        match hazard {
            Some(why) => self.push(text, Action::Ask, why, false),
            None => self.push(text, action, reason, true),
        }
    }

    fn rule(&self, text: &str) -> (Action, String) {
        match self.rules.matching(text) {
            Some(rule) => (rule.action, describe_rule(text, rule)),
            None => (Action::Ask, format!("`{text}` matches no rule")),
        }
    }

    /// Variables that change what runs, and redirections that write files.
    fn hazard_of_setup(&self, text: &str, inv: &Invocation<'_>) -> Option<String> {
        sensitive_env(text, &inv.env).or_else(|| {
            written_file(&inv.command.redirects).map(|(redirect, file)| {
                format!(
                    "`{text} {}` writes to a file (`{file}`)",
                    render_redirect(redirect)
                )
            })
        })
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

fn describe_rule(text: &str, rule: &BashRule) -> String {
    let action = rule.action;
    let pattern = &rule.pattern;
    match &rule.origin {
        RuleOrigin::Default if pattern == "*" => {
            format!("`{text}` matches the default rule `*` ({action})")
        }
        RuleOrigin::Default => format!("`{text}` matches {action} rule `{pattern}`"),
        RuleOrigin::Config(path) => format!(
            "`{text}` matches {action} rule `{pattern}` from {}",
            path.display()
        ),
        RuleOrigin::Session => {
            format!("`{text}` matches {action} rule `{pattern}` (a session rule)")
        }
    }
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
    let inputs = inv.command.redirects.iter().filter(|r| {
        r.fd.is_none()
            && matches!(
                r.op,
                RedirectOp::Read
                    | RedirectOp::Heredoc
                    | RedirectOp::HeredocTabs
                    | RedirectOp::HereString
            )
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

fn sensitive_env(text: &str, env: &[String]) -> Option<String> {
    env.iter()
        .find(|name| changes_what_runs(name))
        .map(|name| format!("`{text}` runs with `{name}` set, which changes what runs"))
}

/// Variables through which a command can be made to run another program or load code.
fn changes_what_runs(name: &str) -> bool {
    const EXACT: [&str; 41] = [
        "PATH",
        "BASH_ENV",
        "ENV",
        "IFS",
        "PS4",
        "PROMPT_COMMAND",
        "SHELLOPTS",
        "BASHOPTS",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_EXEC_PATH",
        "GIT_EXTERNAL_DIFF",
        "GIT_ASKPASS",
        "SSH_ASKPASS",
        "GIT_PROXY_COMMAND",
        "GIT_DIR",
        "GIT_PAGER",
        "PAGER",
        "EDITOR",
        "VISUAL",
        "HOME",
        "XDG_CONFIG_HOME",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONSTARTUP",
        "PYTEST_ADDOPTS",
        "PYTEST_PLUGINS",
        "PERL5LIB",
        "PERL5OPT",
        "PERLLIB",
        "RUBYOPT",
        "RUBYLIB",
        "NODE_OPTIONS",
        "NODE_PATH",
        "RUSTC",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTDOC",
        "RUSTFLAGS",
        "RUSTDOCFLAGS",
        "RIPGREP_CONFIG_PATH",
    ];
    EXACT.contains(&name)
        || ["LD_", "DYLD_", "GIT_CONFIG", "BASH_FUNC_"]
            .iter()
            .any(|prefix| name.starts_with(prefix))
        || (name.starts_with("CARGO_")
            && [
                "HOME",
                "RUNNER",
                "RUSTC",
                "RUSTDOC",
                "LINKER",
                "WRAPPER",
                "RUSTFLAGS",
            ]
            .iter()
            .any(|part| name.contains(part)))
}

/// `[[ $x -eq 1 ]]` and `-v 'a[$i]'` evaluate their operands as arithmetic.
fn test_hazard(program: &str, words: &[Word], text: &str) -> Option<String> {
    if !matches!(program, "[[" | "test" | "[") {
        return None;
    }
    for (i, word) in words.iter().enumerate() {
        match word.literal.as_deref() {
            Some("-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge") if program == "[[" => {
                let operands = [
                    i.checked_sub(1).and_then(|j| words.get(j)),
                    words.get(i + 1),
                ];
                if let Some(operand) = operands
                    .into_iter()
                    .flatten()
                    .find(|o| !shell::is_plain_arithmetic(&o.raw))
                {
                    return Some(format!(
                        "`{text}` compares `{}` as arithmetic, which runs any command hidden in its value",
                        operand.raw
                    ));
                }
            }
            Some("-v") => {
                let name = words.get(i + 1).map(Word::text).unwrap_or_default();
                if let Some((_, subscript)) = name.split_once('[') {
                    if !shell::is_plain_arithmetic(subscript.trim_end_matches(']')) {
                        return Some(format!(
                            "`{text}` evaluates the subscript of `{name}`, which can run commands"
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// Flags through which an otherwise read-only program writes files or runs programs.
fn flag_hazard(program: &str, args: &[Word], text: &str) -> Option<String> {
    if !matches!(
        program,
        "find" | "sort" | "tree" | "uniq" | "git" | "rg" | "file"
    ) {
        return None;
    }
    let git_reader = matches!(
        args.first().and_then(|w| w.literal.as_deref()),
        Some("diff" | "log" | "show" | "status")
    );
    let unreadable = args.iter().find(|w| w.literal.is_none());
    if let Some(word) = unreadable.filter(|_| program != "git" || git_reader) {
        return Some(format!(
            "`{text}` has an argument rein cannot read (`{}`), which could be an option that writes files or runs programs",
            word.raw
        ));
    }
    let args: Vec<&str> = args.iter().map(Word::text).collect();
    let why = match program {
        "find" => args
            .iter()
            .find(|a| {
                matches!(
                    **a,
                    "-delete" | "-fprint" | "-fprint0" | "-fprintf" | "-fls"
                )
            })
            .map(|a| format!("deletes or writes files (`{a}`)")),
        "sort" => sort_hazard(&args),
        "tree" => args
            .iter()
            .find(|a| a.starts_with("-o"))
            .map(|a| format!("writes its output to a file (`{a}`)")),
        "uniq" => uniq_output(&args).map(|file| format!("writes its output to a file (`{file}`)")),
        "git" => git_hazard(&args),
        "rg" => args
            .iter()
            .find(|a| {
                let name = a.split('=').next().unwrap_or_default();
                matches!(name, "--pre" | "--hostname-bin")
            })
            .map(|a| format!("runs a program (`{a}`)")),
        _ => args
            .iter()
            .find(|a| {
                **a == "--compile"
                    || (a.starts_with('-') && !a.starts_with("--") && a.contains('C'))
            })
            .map(|a| format!("writes a compiled magic file (`{a}`)")),
    };
    why.map(|why| format!("`{text}` {why}"))
}

/// A long option's name, when `arg` is one: `--output=x` -> `output`.
fn long_name(arg: &str) -> Option<&str> {
    let long = arg.strip_prefix("--")?;
    Some(long.split('=').next().unwrap_or_default())
}

/// Whether `name` is `full` or an abbreviation of it at least `min` characters long (GNU
/// and git accept unambiguous abbreviations of long options).
fn abbreviates(name: &str, full: &str, min: usize) -> bool {
    name.len() >= min && full.starts_with(name)
}

fn sort_hazard(args: &[&str]) -> Option<String> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if *arg == "--" {
            return None;
        }
        if let Some(name) = long_name(arg) {
            if abbreviates(name, "output", 1) {
                return Some(format!("writes its output to a file (`{arg}`)"));
            }
            if abbreviates(name, "compress-program", 2) {
                return Some(format!("runs a program (`{arg}`)"));
            }
        } else if arg.len() > 1 && arg.starts_with('-') {
            let cluster: Vec<char> = arg.chars().skip(1).collect();
            for (k, c) in cluster.iter().enumerate() {
                if *c == 'o' {
                    return Some(format!("writes its output to a file (`{arg}`)"));
                }
                if matches!(c, 'k' | 't' | 'S' | 'T') {
                    if k + 1 == cluster.len() {
                        i += 1;
                    }
                    break;
                }
            }
        }
        i += 1;
    }
    None
}

/// `uniq [OPTION]... [INPUT [OUTPUT]]`: the OUTPUT operand, if given.
fn uniq_output<'a>(args: &[&'a str]) -> Option<&'a str> {
    let mut operands = Vec::new();
    let mut options = true;
    let mut i = 0;
    while let Some(&arg) = args.get(i) {
        if options && arg == "--" {
            options = false;
        } else if options && arg.starts_with("--") {
            let valued = ["skip-fields", "skip-chars", "check-chars"];
            let name = long_name(arg).unwrap_or_default();
            if !arg.contains('=') && valued.iter().any(|v| abbreviates(name, v, 2)) {
                i += 1;
            }
        } else if options && arg.len() > 1 && arg.starts_with('-') {
            let cluster: Vec<char> = arg.chars().skip(1).collect();
            if let Some(k) = cluster.iter().position(|c| matches!(c, 'f' | 's' | 'w')) {
                if k + 1 == cluster.len() {
                    i += 1;
                }
            }
        } else {
            operands.push(arg);
        }
        i += 1;
    }
    operands.get(1).copied()
}

fn git_hazard(args: &[&str]) -> Option<String> {
    if let Some(sub @ ("difftool" | "mergetool")) = args.first().copied() {
        return Some(format!("runs an external tool (`{sub}`)"));
    }
    for arg in args {
        if let Some(name) = long_name(arg) {
            if abbreviates(name, "output", 3) {
                return Some(format!("writes its output to a file (`{arg}`)"));
            }
            if abbreviates(name, "ext-diff", 3) {
                return Some(format!("runs an external diff program (`{arg}`)"));
            }
        }
    }
    None
}

/// An interpreter reading its script from stdin, which a pipe or redirection fills.
fn stdin_script(program: &str, inv: &Invocation<'_>, text: &str) -> Option<String> {
    let family = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
    if !INTERPRETERS.contains(&family) && !SHELL_FAMILY.contains(&family) {
        return None;
    }
    let fed =
        inv.command.context.piped_input || inv.command.redirects.iter().any(Redirect::feeds_stdin);
    let args = inv.words.get(1..).unwrap_or_default();
    (fed && reads_script_from_stdin(family, args))
        .then(|| format!("`{text}` is an interpreter fed a script on stdin"))
}

/// No script or code argument (or `-`, `/dev/stdin`, `sh -s`): the script comes on stdin.
fn reads_script_from_stdin(family: &str, args: &[Word]) -> bool {
    let shell = SHELL_FAMILY.contains(&family);
    let valued: &[&str] = if shell {
        &["-o", "+o", "-O", "+O", "--rcfile", "--init-file"]
    } else if matches!(family, "python" | "pypy") {
        &["-W", "-X", "--check-hash-based-pycs"]
    } else {
        &[]
    };
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let arg = word.text();
        if matches!(arg, "-" | "/dev/stdin") {
            return true;
        }
        if arg == "--" {
            return args
                .get(i + 1)
                .is_none_or(|w| matches!(w.text(), "-" | "/dev/stdin"));
        }
        if valued.contains(&arg) {
            i += 2;
            continue;
        }
        if shell && arg.starts_with('-') && !arg.starts_with("--") && arg.contains('s') {
            return true;
        }
        if !arg.starts_with('-') {
            return false;
        }
        i += 1;
    }
    true
}

/// How a wrapper's options look.
struct Options {
    flags: &'static str,
    valued: &'static str,
    /// Short options whose value, if any, is attached (`xargs -i{}`).
    attached: &'static str,
    long_flags: &'static [&'static str],
    long_valued: &'static [&'static str],
}

const NO_OPTIONS: Options = Options {
    flags: "",
    valued: "",
    attached: "",
    long_flags: &[],
    long_valued: &[],
};

/// Skip a wrapper's options from `words[1]`; returns where its operands start and the
/// options seen. An option rein does not know is an error: it might take a value.
fn skip_options<'w>(
    program: &str,
    words: &'w [Word],
    options: &Options,
) -> Result<(usize, Vec<&'w str>), String> {
    let mut seen = Vec::new();
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let Some(arg) = word.literal_program() else {
            return Err(format!(
                "the argument `{}` of `{program}` is not a literal word",
                word.raw
            ));
        };
        if arg == "--" {
            return Ok((i + 1, seen));
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, has_value) = match long.split_once('=') {
                Some((name, _)) => (name, true),
                None => (long, false),
            };
            if options.long_valued.contains(&name) {
                if !has_value {
                    i += 1;
                }
            } else if !options.long_flags.contains(&name) {
                return Err(format!(
                    "rein does not know the option `{arg}` of `{program}`"
                ));
            }
        } else if arg.len() > 1 && arg.starts_with('-') {
            let cluster: Vec<char> = arg.chars().skip(1).collect();
            for (k, c) in cluster.iter().enumerate() {
                if options.flags.contains(*c) {
                    continue;
                }
                if options.attached.contains(*c) {
                    break;
                }
                if options.valued.contains(*c) {
                    if k + 1 == cluster.len() {
                        i += 1;
                    }
                    break;
                }
                return Err(format!(
                    "rein does not know the option `-{c}` of `{program}`"
                ));
            }
        } else {
            return Ok((i, seen));
        }
        seen.push(arg);
        i += 1;
    }
    Ok((i, seen))
}

/// What the wrapper `program` runs. `more_args`: another `xargs` appends arguments, so a
/// wrapper without a command of its own would run them.
fn unwrap(program: &str, words: &[Word], more_args: bool) -> Unwrap {
    let inner = |at: usize| {
        if at < words.len() {
            Unwrap::Inner {
                at,
                env: Vec::new(),
                more_args: false,
                placeholder: None,
            }
        } else {
            Unwrap::Itself
        }
    };
    let options = match program {
        "env" => return env_inner(words),
        "find" => return find_execs(words),
        "eval" => {
            return match words.get(1..) {
                Some(args) if !args.is_empty() => script_of(program, args),
                _ => Unwrap::Itself,
            }
        }
        p if SHELLS.contains(&p) => return shell_script(program, words),
        "command" => Options {
            flags: "pvV",
            ..NO_OPTIONS
        },
        "builtin" | "nohup" => NO_OPTIONS,
        "exec" => Options {
            flags: "cl",
            valued: "a",
            ..NO_OPTIONS
        },
        "nice" => Options {
            flags: "0123456789",
            valued: "n",
            long_valued: &["adjustment"],
            ..NO_OPTIONS
        },
        "time" => Options {
            flags: "pvaq",
            valued: "fo",
            long_flags: &["portability", "verbose", "append", "quiet"],
            long_valued: &["format", "output"],
            ..NO_OPTIONS
        },
        "timeout" => Options {
            flags: "fpv",
            valued: "ks",
            long_flags: &["foreground", "preserve-status", "verbose"],
            long_valued: &["kill-after", "signal"],
            ..NO_OPTIONS
        },
        "stdbuf" => Options {
            valued: "ioe",
            long_valued: &["input", "output", "error"],
            ..NO_OPTIONS
        },
        "ionice" => Options {
            flags: "tpPu",
            valued: "cn",
            long_flags: &["ignore", "pid", "pgid", "uid"],
            long_valued: &["class", "classdata"],
            ..NO_OPTIONS
        },
        "setsid" => Options {
            flags: "cfw",
            long_flags: &["ctty", "fork", "wait"],
            ..NO_OPTIONS
        },
        "xargs" => Options {
            flags: "0rtpxo",
            valued: "adEILnPs",
            attached: "eil",
            long_flags: &[
                "null",
                "no-run-if-empty",
                "verbose",
                "interactive",
                "exit",
                "open-tty",
                "show-limits",
                "replace",
                "eof",
                "max-lines",
            ],
            long_valued: &[
                "arg-file",
                "delimiter",
                "max-args",
                "max-procs",
                "max-chars",
                "process-slot-var",
            ],
        },
        "watch" => Options {
            flags: "bcdegtwpx",
            valued: "n",
            long_flags: &[
                "beep",
                "color",
                "no-color",
                "differences",
                "errexit",
                "chgexit",
                "no-title",
                "no-wrap",
                "precise",
                "exec",
            ],
            long_valued: &["interval"],
            ..NO_OPTIONS
        },
        _ => return Unwrap::Itself,
    };
    let (at, seen) = match skip_options(program, words, &options) {
        Ok(found) => found,
        Err(why) => return Unwrap::Opaque(why),
    };
    let short_has = |c: char| seen.iter().any(|a| !a.starts_with("--") && a.contains(c));
    match program {
        "command" if short_has('v') || short_has('V') => {
            Unwrap::Neutral("only looks a command up".to_string())
        }
        "time" if short_has('o') || seen.iter().any(|a| a.starts_with("--output")) => {
            Unwrap::Opaque("writes its report to a file".to_string())
        }
        "timeout" => inner(at + 1),
        "ionice"
            if short_has('p')
                || short_has('P')
                || short_has('u')
                || seen
                    .iter()
                    .any(|a| matches!(*a, "--pid" | "--pgid" | "--uid")) =>
        {
            Unwrap::Itself
        }
        "xargs" if at >= words.len() && more_args => Unwrap::Itself,
        "xargs" if at >= words.len() => Unwrap::Neutral("runs `echo` on its input".to_string()),
        "xargs" => Unwrap::Inner {
            at,
            env: Vec::new(),
            more_args: true,
            placeholder: xargs_placeholder(words.get(1..at).unwrap_or_default()),
        },
        "watch" if short_has('x') || seen.contains(&"--exec") => inner(at),
        "watch" => match words.get(at..) {
            Some(args) if !args.is_empty() => script_of(program, args),
            _ => Unwrap::Itself,
        },
        _ => inner(at),
    }
}

/// The replace string of `xargs -I R`, `-iR`, `-i` or `--replace[=R]` among its options.
fn xargs_placeholder(options: &[Word]) -> Option<String> {
    for (i, word) in options.iter().enumerate() {
        let arg = word.text();
        if let Some(long) = arg.strip_prefix("--replace") {
            return Some(long.strip_prefix('=').unwrap_or("{}").to_string());
        }
        if arg.starts_with("--") || !arg.starts_with('-') {
            continue;
        }
        for (k, c) in arg.char_indices().skip(1) {
            let rest = &arg[k + c.len_utf8()..];
            match c {
                'I' if rest.is_empty() => {
                    return Some(options.get(i + 1).map(Word::text).unwrap_or("").to_string())
                }
                'I' => return Some(rest.to_string()),
                'i' if rest.is_empty() => return Some("{}".to_string()),
                'i' => return Some(rest.to_string()),
                'a' | 'd' | 'E' | 'L' | 'n' | 'P' | 's' | 'e' | 'l' => break,
                _ => {}
            }
        }
    }
    None
}

/// Literal arguments joined by spaces, as `eval` and `watch` do, to parse as a command.
fn script_of(program: &str, args: &[Word]) -> Unwrap {
    let mut parts = Vec::with_capacity(args.len());
    for arg in args {
        match arg.literal_program() {
            Some(text) => parts.push(text),
            None => {
                return Unwrap::Opaque(format!(
                    "`{program}` runs `{}`, which is not a literal word",
                    arg.raw
                ))
            }
        }
    }
    Unwrap::Script(parts.join(" "))
}

/// `sh -c STRING`: the string; a script file or stdin: the shell is judged itself.
fn shell_script(program: &str, words: &[Word]) -> Unwrap {
    let mut command_string = false;
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let Some(arg) = word.literal_program() else {
            return Unwrap::Opaque(format!(
                "the argument `{}` of `{program}` is not a literal word",
                word.raw
            ));
        };
        if arg == "--" || arg == "-" {
            i += 1;
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            if long.starts_with("rcfile") || long.starts_with("init-file") {
                return Unwrap::Opaque("reads its startup commands from a file".to_string());
            }
            i += 1;
            continue;
        }
        if arg.len() > 1 && (arg.starts_with('-') || arg.starts_with('+')) {
            let mut values = 0;
            for c in arg.chars().skip(1) {
                match c {
                    'c' if arg.starts_with('-') => command_string = true,
                    'o' | 'O' => values += 1,
                    _ => {}
                }
            }
            i += 1 + values;
            continue;
        }
        break;
    }
    if !command_string {
        return Unwrap::Itself;
    }
    match words.get(i) {
        Some(word) => match word.literal_program() {
            Some(text) => Unwrap::Script(text.to_string()),
            None => Unwrap::Opaque(format!(
                "runs the command string `{}`, which is not a literal word",
                word.raw
            )),
        },
        None => Unwrap::Itself,
    }
}

/// `env [OPTION]... [NAME=VALUE]... [COMMAND [ARG]...]`.
fn env_inner(words: &[Word]) -> Unwrap {
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let Some(arg) = word.literal_program() else {
            break;
        };
        if arg == "--" {
            i += 1;
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            match name {
                "ignore-environment"
                | "null"
                | "debug"
                | "list-signal-handling"
                | "ignore-signal"
                | "default-signal"
                | "block-signal" => {}
                "unset" | "chdir" if value.is_none() => i += 1,
                "unset" | "chdir" => {}
                "split-string" => {
                    return match value {
                        Some(value) => split_string(value, words.get(i + 1..)),
                        None => split_word(words.get(i + 1), words.get(i + 2..)),
                    }
                }
                _ => {
                    return Unwrap::Opaque(format!(
                        "rein does not know the option `{arg}` of `env`"
                    ))
                }
            }
            i += 1;
            continue;
        }
        if arg.len() > 1 && arg.starts_with('-') {
            let cluster: Vec<char> = arg.chars().skip(1).collect();
            for (k, c) in cluster.iter().enumerate() {
                match c {
                    'i' | '0' | 'v' => {}
                    'u' | 'C' => {
                        if k + 1 == cluster.len() {
                            i += 1;
                        }
                        break;
                    }
                    'S' => {
                        let rest: String =
                            cluster.get(k + 1..).unwrap_or_default().iter().collect();
                        return if rest.is_empty() {
                            split_word(words.get(i + 1), words.get(i + 2..))
                        } else {
                            split_string(&rest, words.get(i + 1..))
                        };
                    }
                    _ => {
                        return Unwrap::Opaque(format!(
                            "rein does not know the option `-{c}` of `env`"
                        ))
                    }
                }
            }
            i += 1;
            continue;
        }
        if arg == "-" {
            i += 1;
            continue;
        }
        break;
    }
    let mut env = Vec::new();
    while let Some(word) = words.get(i) {
        match word.text().split_once('=') {
            Some((name, _)) if !name.is_empty() => {
                env.push(name.to_string());
                i += 1;
            }
            _ => break,
        }
    }
    if i < words.len() {
        Unwrap::Inner {
            at: i,
            env,
            more_args: false,
            placeholder: None,
        }
    } else {
        Unwrap::Itself
    }
}

fn split_word(string: Option<&Word>, rest: Option<&[Word]>) -> Unwrap {
    match string {
        Some(word) => match word.literal_program() {
            Some(text) => split_string(text, rest),
            None => Unwrap::Opaque(format!(
                "`env -S` splits `{}`, which is not a literal word",
                word.raw
            )),
        },
        None => Unwrap::Itself,
    }
}

/// `env -S STRING ARGS...`: the string split like a command line, then the arguments.
fn split_string(string: &str, rest: Option<&[Word]>) -> Unwrap {
    let rest = rest.unwrap_or_default();
    let mut args = Vec::with_capacity(rest.len());
    for word in rest {
        match word.literal_program() {
            Some(text) => args.push(text),
            None => {
                return Unwrap::Opaque(format!(
                    "the argument `{}` of `env` is not a literal word",
                    word.raw
                ))
            }
        }
    }
    match shlex::try_join(args) {
        Ok(joined) if joined.is_empty() => Unwrap::Script(string.to_string()),
        Ok(joined) => Unwrap::Script(format!("{string} {joined}")),
        Err(_) => Unwrap::Opaque("cannot quote the arguments of `env -S`".to_string()),
    }
}

/// The commands `find` runs with `-exec`, `-execdir`, `-ok` and `-okdir`.
fn find_execs(words: &[Word]) -> Unwrap {
    let mut ranges = Vec::new();
    let mut i = 1;
    while i < words.len() {
        let action = words[i].literal.as_deref();
        if !matches!(action, Some("-exec" | "-execdir" | "-ok" | "-okdir")) {
            i += 1;
            continue;
        }
        let from = i + 1;
        let mut end = from;
        while let Some(word) = words.get(end) {
            let text = word.literal.as_deref();
            let after_braces = end > from && words[end - 1].literal.as_deref() == Some("{}");
            if text == Some(";") || (text == Some("+") && after_braces) {
                break;
            }
            end += 1;
        }
        if end > from {
            ranges.push((from, end));
        }
        i = end + 1;
    }
    if ranges.is_empty() {
        Unwrap::Itself
    } else {
        Unwrap::Execs(ranges)
    }
}
