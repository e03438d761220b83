//! The rule-based policy the agent runs with: bash rules, path rules, and what the user
//! allowed for the session.
//!
//! In: the config's rules and sensitive-read globs, the project root and home directory.
//! Out: a [`Verdict`] per tool call. Bash commands are judged part by part by
//! [`super::bash::judge`]; an otherwise allowed part whose arguments name a sensitive file
//! (`cat ~/.ssh/id_rsa`) asks as well, unless its program only prints names and metadata
//! (`ls -la ~/.ssh`, `stat`; see [`NAMES_ONLY`]) and nothing else on the line could take
//! those names and open the files (`ls -d ~/.ssh/* | xargs cat` asks); input redirections
//! count either way. The file tools go through [`PathRules`]. "Allow for
//! the session" appends allow rules (bash, MCP tools) or remembers paths (file tools); a
//! deny is never lifted that way. Tools from MCP servers (`mcp__SERVER__TOOL`) are judged
//! by [`ToolRules`] on their name: the last matching rule wins, and with none they ask.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use super::bash::{grants_of, judge, Judgement, Operands};
use super::paths::{PathRuleError, PathRules};
use super::reads::{self, Evaluator};
use super::rules::{
    pattern_prefix, runs_project_code, shown_pattern, BashRule, BashRules, RuleAction, RuleOrigin,
};
use super::shell::Word;
use super::tools::{is_mcp, ToolRuleEntry, ToolRules};
use super::{Grant, PermissionPolicy, ToolRequest, Verdict};

/// Programs that print the names and metadata of the files they are given, never their
/// contents, and read no file of names (`du --files0-from`, `tree --fromfile` and `find`,
/// whose `-exec` runs what it finds, are not among them): a sensitive file or folder as
/// their argument does not make them ask. `file` is not either: it reads the contents.
pub const NAMES_ONLY: [&str; 9] = [
    "ls", "stat", "realpath", "readlink", "basename", "dirname", "test", "[", "[[",
];

/// Filters that read their input as text and never open a file it names: the names a
/// [`NAMES_ONLY`] program prints may reach them without making it ask.
const TEXT_ONLY: [&str; 10] = [
    "head", "tail", "wc", "grep", "cut", "tr", "nl", "uniq", "column", "echo",
];

/// The config could not be turned into rules.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("{}: [[permissions.bash]] pattern `{pattern}` is not a valid glob: {problem}", file.display())]
    BadRule {
        file: PathBuf,
        pattern: String,
        problem: String,
    },
    #[error("{}: [[permissions.tools]] pattern `{pattern}` is not a valid glob: {problem}", file.display())]
    BadToolRule {
        file: PathBuf,
        pattern: String,
        problem: String,
    },
    #[error(transparent)]
    Path(#[from] PathRuleError),
}

/// One `[[permissions.bash]]` rule and the file it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BashRuleEntry {
    pub pattern: String,
    pub action: RuleAction,
    pub file: PathBuf,
    /// The file is the project's `.rein/config.toml`.
    pub project: bool,
}

/// The policy for one project and session.
pub struct RulePolicy {
    bash: RwLock<BashRules>,
    /// `[[permissions.tools]]` and the tools allowed for the session.
    tools: RwLock<ToolRules>,
    paths: PathRules,
    home: Option<PathBuf>,
    /// Paths the user allowed for the session: (is a write, resolved path).
    granted_paths: RwLock<HashSet<(bool, PathBuf)>>,
    /// Writes "always allow in this project" rules; see [`RulePolicy::with_saver`].
    saver: Option<RuleSaver>,
    /// Commands run inside a working sandbox (see [`RulePolicy::with_confinement`]).
    confined: bool,
    /// The sensitive patterns, ready to meet a command's words.
    sensitive: Vec<reads::Sensitive>,
}

impl std::fmt::Debug for RulePolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RulePolicy")
            .field("bash", &self.bash)
            .field("tools", &self.tools)
            .field("paths", &self.paths)
            .field("home", &self.home)
            .field("granted_paths", &self.granted_paths)
            .field("saver", &self.saver.is_some())
            .field("confined", &self.confined)
            .finish()
    }
}

/// Which rule list of the config an allow rule goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleList {
    /// `[[permissions.bash]]`
    Bash,
    /// `[[permissions.tools]]`
    Tools,
}

impl RuleList {
    /// The TOML array of tables: `permissions.bash`.
    pub fn table(self) -> &'static str {
        match self {
            RuleList::Bash => "permissions.bash",
            RuleList::Tools => "permissions.tools",
        }
    }
}

/// Writes an allow rule for each (list, pattern) to the project's config and says which
/// file.
pub type RuleSaver =
    std::sync::Arc<dyn Fn(&[(RuleList, &str)]) -> Result<PathBuf, String> + Send + Sync>;

impl RulePolicy {
    /// The default bash rules, then `rules` (user file first, then project file).
    pub fn new(
        root: &Path,
        rules: &[BashRuleEntry],
        sensitive_reads: &[String],
        home: Option<&Path>,
    ) -> Result<RulePolicy, PolicyError> {
        let mut all = BashRules::defaults();
        all.extend(rules.iter().map(|r| {
            let origin = if r.project {
                RuleOrigin::Project(r.file.clone())
            } else {
                RuleOrigin::Config(r.file.clone())
            };
            BashRule::new(r.pattern.clone(), r.action, origin)
        }));
        let bash = BashRules::new(all).map_err(|e| PolicyError::BadRule {
            file: e
                .origin
                .file()
                .map_or_else(|| PathBuf::from("(built-in rules)"), Path::to_path_buf),
            pattern: e.pattern.clone(),
            problem: e.problem.clone(),
        })?;
        let paths = PathRules::new(root, sensitive_reads, home)?;
        let sensitive = reads::sensitive_patterns(&paths, home);
        Ok(RulePolicy {
            bash: RwLock::new(bash),
            tools: RwLock::new(ToolRules::default()),
            paths,
            home: home.map(Path::to_path_buf),
            granted_paths: RwLock::new(HashSet::new()),
            saver: None,
            confined: true,
            sensitive,
        })
    }

    /// Whether commands run inside a working sandbox. Without one (the sandbox off, or auto
    /// mode's fallback where it cannot run) the default allows that run the project's own
    /// code (`cargo test`, `pytest`: see [`runs_project_code`]) ask; the user's own rules
    /// and what they allowed for the session still allow. A policy is built confined: the
    /// session's start, which knows the sandbox, says otherwise.
    pub fn with_confinement(mut self, confined: bool) -> RulePolicy {
        self.confined = confined;
        self
    }

    /// Judge MCP tools by `rules` (`[[permissions.tools]]`: the user file's, then the
    /// project file's); without them every MCP tool asks.
    pub fn with_tool_rules(self, rules: &[ToolRuleEntry]) -> Result<RulePolicy, PolicyError> {
        let tools = ToolRules::new(rules).map_err(|e| PolicyError::BadToolRule {
            file: e
                .origin
                .file()
                .map_or_else(|| PathBuf::from("(built-in rules)"), Path::to_path_buf),
            pattern: e.pattern,
            problem: e.problem,
        })?;
        Ok(RulePolicy {
            tools: RwLock::new(tools),
            ..self
        })
    }

    /// Keep the file tools out of rein's own folders (see
    /// [`PathRules::with_rein_folders`]): reading in `data_dir` asks except where `shown`
    /// (globs: this rein's spill folders) matches, and nothing is written into `data_dir`
    /// or `config_dirs`. Bash arguments naming such files ask as well.
    pub fn with_rein_folders(
        mut self,
        data_dir: &Path,
        config_dirs: &[PathBuf],
        shown: &[String],
    ) -> RulePolicy {
        self.paths = self.paths.with_rein_folders(data_dir, config_dirs, shown);
        self
    }

    /// Make writing `files` ask, as steering files of `kind` (see
    /// [`PathRules::add_steering_files`]).
    pub fn add_steering_files(&self, files: &[PathBuf], kind: crate::consent::steering::Kind) {
        self.paths.add_steering_files(files, kind);
    }

    /// Let "always allow in this project" write its rules with `saver` (the config layer
    /// owns the file's format; without one, saving is refused).
    pub fn with_saver(mut self, saver: RuleSaver) -> RulePolicy {
        self.saver = Some(saver);
        self
    }

    /// Judge a bash command line: the rules, part by part, then sensitive files named in
    /// the arguments of the parts that were allowed.
    pub fn judge_bash(&self, command: &str) -> Judgement {
        let rules = self.bash.read().unwrap_or_else(|e| e.into_inner());
        let mut judgement = judge(command, &rules);
        // Whether every part that asks by the rules can be granted (an ask without grants
        // has one that cannot): a part asking for a sensitive file adds to the grants only
        // then, or "allow for this session" would leave the command asking.
        let grantable = judgement.action != RuleAction::Ask || !judgement.grants.is_empty();
        // The names a names-only program prints stay names when every other part is one
        // too, or a text filter whose words hold no substitution that could splice them in.
        let names_stay = judgement.parts.iter().all(|p| {
            let program = p.command.split_whitespace().next().unwrap_or_default();
            NAMES_ONLY.contains(&program)
                || (TEXT_ONLY.contains(&program) && !p.command.contains(['$', '`', '(']))
        });
        let mut changed = !self.confined && project_code_asks(&rules, &mut judgement.parts);
        let evaluator = Evaluator::new(&judgement.facts, self.paths.root(), self.home.as_deref());
        let dotglob = judgement.facts.dotglob;
        // A command on the line opens names it cannot see (`xargs cat`, `cat $(...)`): what
        // the line's listing programs print could be any of them.
        let fed = judgement
            .parts
            .iter()
            .any(|p| p.action == RuleAction::Allow && opens_unseen_names(&p.operands, &evaluator));
        for part in judgement.parts.iter_mut() {
            // The user allowed exactly this command; a prefix they allowed does not cover
            // a sensitive file in the words after it.
            let allowed_this_session = rules.matching(&part.command).is_some_and(|r| {
                r.origin == RuleOrigin::Session && pattern_prefix(&r.pattern).is_none()
            });
            if part.action != RuleAction::Allow || allowed_this_session {
                continue;
            }
            let reason = if part.operands == Operands::default() {
                self.named_in_text(&part.command, names_stay)
            } else {
                self.named_in_words(&part.operands, &evaluator, names_stay, dotglob)
                    .or_else(|| self.read_below(&part.operands, &evaluator, fed, dotglob))
            };
            if let Some(reason) = reason {
                part.action = RuleAction::Ask;
                part.reason = format!("`{}` reads a sensitive file: {reason}", part.command);
                part.grant = Some(super::rules::escape_glob(&part.command));
                changed = true;
            }
        }
        if changed {
            if let Some(strictest) = judgement.parts.iter().max_by_key(|p| p.action) {
                if strictest.action > judgement.action {
                    judgement.action = strictest.action;
                    judgement.reason = strictest.reason.clone();
                }
            }
            judgement.grants = if judgement.action == RuleAction::Ask && grantable {
                grants_of(&judgement.parts)
            } else {
                Vec::new()
            };
        }
        judgement
    }

    /// A sensitive file named in a part's normalised text (a part without operands).
    fn named_in_text(&self, command: &str, names_stay: bool) -> Option<String> {
        let words: Vec<&str> = command.split_whitespace().collect();
        let names_only = names_stay && words.first().is_some_and(|p| NAMES_ONLY.contains(p));
        words
            .iter()
            .enumerate()
            .skip(1)
            .filter(|&(i, _)| !names_only || is_input_redirection(words[i - 1]))
            .find_map(|(_, arg)| self.sensitive_argument(arg))
    }

    /// A sensitive file an allowed part's words or input redirections could name, as
    /// [`Evaluator`] reads them: every value the line gives them, every folder it is in,
    /// and their patterns met with the sensitive ones. A program that prints only names
    /// and metadata is judged by its inputs alone, while its names stay names.
    fn named_in_words(
        &self,
        operands: &Operands,
        evaluator: &Evaluator<'_>,
        names_stay: bool,
        dotglob: bool,
    ) -> Option<String> {
        let names_only = names_stay && NAMES_ONLY.contains(&operands.program.as_str());
        let args = operands.args.iter().filter(|_| !names_only);
        for word in args.chain(&operands.inputs) {
            // As written: `--flag=PATH` and git's `REV:PATH` are looked into there.
            if let Some(reason) = word
                .literal
                .as_deref()
                .and_then(|w| self.sensitive_argument(w))
            {
                return Some(reason);
            }
            let paths = evaluator.paths(word);
            for path in paths.literal_paths() {
                if let Some(reason) = self.sensitive_argument(&path) {
                    return Some(reason);
                }
            }
            if let Some(pattern) = paths.sensitive_pattern(&self.sensitive, dotglob) {
                return Some(format!(
                    "`{}` could name a file matching the sensitive pattern `{pattern}`",
                    word.raw
                ));
            }
        }
        None
    }

    /// A sensitive file below a folder the part reads whole (`grep -r`, `rg`, `cp -r`), or,
    /// when a command on the line opens names it cannot see (`fed`), below a folder the
    /// part lists (`find . | xargs cat`).
    fn read_below(
        &self,
        operands: &Operands,
        evaluator: &Evaluator<'_>,
        fed: bool,
        dotglob: bool,
    ) -> Option<String> {
        let (how, lists) = match reads::reads_folders(operands) {
            Some(how) => (how, false),
            None => match reads::lists_folders(operands).filter(|_| fed) {
                Some(how) => (how, true),
                None => return None,
            },
        };
        let (walk, names) = how;
        let mut folders = Vec::new();
        for word in folder_words(operands) {
            folders.extend(evaluator.paths(word).folders());
        }
        if folders.is_empty() {
            let here = Word {
                raw: ".".to_string(),
                literal: Some(".".to_string()),
                glob: false,
            };
            folders = evaluator.paths(&here).folders();
        }
        for (folder, pattern) in folders {
            match reads::sensitive_below(
                &self.paths,
                &folder,
                walk,
                &names,
                pattern.as_ref(),
                dotglob,
            ) {
                reads::Below::Nothing => {}
                reads::Below::Sensitive(file, configured) => {
                    let how = if lists {
                        "lists the names in"
                    } else {
                        "reads all of"
                    };
                    return Some(format!(
                        "it {how} {}, which holds {} (the sensitive pattern `{configured}`){}",
                        folder.display(),
                        file.display(),
                        if lists {
                            ", and a command on the line opens the names it is given"
                        } else {
                            ""
                        }
                    ));
                }
                reads::Below::Unreadable => {
                    return Some(format!(
                        "it reads {} whole, and a folder in it has an ignore file that is not a \
                         regular file (a pipe or a device), which rein does not read to look \
                         for sensitive files",
                        folder.display()
                    ))
                }
                reads::Below::TooMany => {
                    return Some(format!(
                        "it reads {} whole, which holds more than {} entries to look through for sensitive files",
                        folder.display(),
                        reads::MAX_WALK
                    ))
                }
            }
        }
        None
    }

    /// Whether a command argument names a sensitive file or a folder that holds some
    /// (`~`, `$HOME` and `${HOME}` expanded however they are quoted; `--flag=PATH` and
    /// git's `REV:PATH` looked into).
    fn sensitive_argument(&self, arg: &str) -> Option<String> {
        let unquoted: String = arg.chars().filter(|c| !matches!(c, '"' | '\'')).collect();
        let value = unquoted
            .split_once('=')
            .map_or(unquoted.as_str(), |(_, v)| v);
        if let Some((rev, path)) = value.split_once(':') {
            if !rev.contains('/') && !path.is_empty() {
                if let Some(reason) = self.sensitive_argument(path) {
                    return Some(reason);
                }
            }
        }
        let home = self.home.as_deref().map(|h| h.display().to_string());
        let expanded = match &home {
            Some(home) => {
                if let Some(rest) = value.strip_prefix("~/") {
                    format!("{home}/{rest}")
                } else if let Some((_, rest)) = value
                    .strip_prefix('~')
                    .and_then(|v| v.split_once('/'))
                    .filter(|(user, _)| !user.is_empty() && !user.starts_with(['+', '-']))
                {
                    // `~name/...` is another user's home: judged as if it were yours.
                    format!("{home}/{rest}")
                } else {
                    value
                        .replacen("${HOME}", home, 1)
                        .replacen("$HOME", home, 1)
                }
            }
            None => value.to_string(),
        };
        if expanded.is_empty() || expanded.starts_with('-') {
            return None;
        }
        self.paths.is_sensitive(&expanded)
    }

    fn path_verdict(&self, write: bool, path: &str) -> Verdict {
        let v = if write {
            self.paths.write(path)
        } else {
            self.paths.read(path)
        };
        match v.action {
            RuleAction::Allow => Verdict::Allow,
            RuleAction::Deny => Verdict::Deny { reason: v.reason },
            RuleAction::Ask => {
                let granted = self
                    .granted_paths
                    .read()
                    .unwrap_or_else(|e| e.into_inner())
                    .contains(&(write, v.resolved.clone()));
                if granted {
                    return Verdict::Allow;
                }
                let grant = if write {
                    Grant::Write(v.resolved)
                } else {
                    Grant::Read(v.resolved)
                };
                Verdict::Ask {
                    reason: v.reason,
                    grants: vec![grant],
                }
            }
        }
    }
}

impl PermissionPolicy for RulePolicy {
    fn check(&self, request: &ToolRequest<'_>) -> Verdict {
        let text = |key: &str| request.args.get(key).and_then(|v| v.as_str());
        match request.tool {
            "bash" => {
                let j = self.judge_bash(text("command").unwrap_or(""));
                match j.action {
                    RuleAction::Allow => Verdict::Allow,
                    RuleAction::Ask => Verdict::Ask {
                        reason: j.reason,
                        grants: j.grants.into_iter().map(Grant::Bash).collect(),
                    },
                    RuleAction::Deny => Verdict::Deny { reason: j.reason },
                }
            }
            "read_file" => {
                // The agent gives the resolved path; the name the model used counts too
                // (a link called `.env` is still `.env`).
                let v = self.path_verdict(false, text("path").unwrap_or(""));
                match (v, text("path_as_given")) {
                    (Verdict::Allow, Some(given)) => self.path_verdict(false, given),
                    (v, _) => v,
                }
            }
            // A language server's answers about a file: judged as reading it; a name
            // across the project reads nothing the server has not read already.
            "lsp" => match text("path") {
                Some(path) => {
                    let v = self.path_verdict(false, path);
                    match (v, text("path_as_given")) {
                        (Verdict::Allow, Some(given)) => self.path_verdict(false, given),
                        (v, _) => v,
                    }
                }
                None => Verdict::Allow,
            },
            // The plan lives in rein's memory; nothing on disk changes.
            "write_todos" => Verdict::Allow,
            // Skills are files rein found at startup and lists to the model itself.
            "read_skill" => Verdict::Allow,
            // Reading and stopping the agent's own background commands (starting one is
            // `bash`, judged as any command).
            "bash_output" | "bash_kill" => Verdict::Allow,
            "write_file" | "str_replace" => self.path_verdict(true, text("path").unwrap_or("")),
            name if is_mcp(name) => {
                let j = self
                    .tools
                    .read()
                    .unwrap_or_else(|e| e.into_inner())
                    .judge(name);
                match j.action {
                    RuleAction::Allow => Verdict::Allow,
                    RuleAction::Ask => Verdict::Ask {
                        reason: j.reason,
                        grants: vec![Grant::Tool(name.to_string())],
                    },
                    RuleAction::Deny => Verdict::Deny { reason: j.reason },
                }
            }
            other => Verdict::Ask {
                reason: format!("no permission rule covers the tool `{other}`"),
                grants: Vec::new(),
            },
        }
    }

    fn persist(&self, grants: &[Grant]) -> Result<String, String> {
        let rules: Vec<(RuleList, &str)> = grants
            .iter()
            .filter_map(|g| match g {
                Grant::Bash(p) => Some((RuleList::Bash, p.as_str())),
                // The name as a pattern that matches exactly it.
                Grant::Tool(name) => Some((RuleList::Tools, name.as_str())),
                _ => None,
            })
            .collect();
        if rules.is_empty() {
            return Err("only command and tool rules can be saved to the project".to_string());
        }
        let Some(saver) = &self.saver else {
            return Err("rules cannot be saved to the project from here".to_string());
        };
        let escaped: Vec<(RuleList, String)> = rules
            .iter()
            .map(|&(list, p)| match list {
                RuleList::Bash => (list, p.to_string()),
                RuleList::Tools => (list, super::rules::escape_glob(p)),
            })
            .collect();
        let borrowed: Vec<(RuleList, &str)> =
            escaped.iter().map(|(l, p)| (*l, p.as_str())).collect();
        let file = saver(&borrowed)?;
        let shown: Vec<String> = rules
            .iter()
            .map(|(_, p)| format!("`{}`", shown_pattern(p)))
            .collect();
        Ok(format!(
            "allowed {} in this project from now on ({})",
            shown.join(", "),
            file.display()
        ))
    }

    fn add_steering_files(&self, files: &[PathBuf], kind: crate::consent::steering::Kind) {
        RulePolicy::add_steering_files(self, files, kind);
    }

    fn forget_session_grants(&self) {
        self.bash
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .forget_session_rules();
        self.tools
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .forget_session_rules();
        self.granted_paths
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    fn grant(&self, grants: &[Grant]) {
        for grant in grants {
            match grant {
                Grant::Bash(pattern) => {
                    let mut rules = self.bash.write().unwrap_or_else(|e| e.into_inner());
                    // Approval lifts an `ask`, never a `deny` (and the rules' order keeps
                    // a deny for a longer command under a prefix: see `rules::decide`).
                    let text = pattern_prefix(pattern)
                        .map_or_else(|| unescape_glob(pattern), str::to_string);
                    let denied = rules
                        .matching(&text)
                        .is_some_and(|r| r.action == RuleAction::Deny);
                    if denied {
                        continue;
                    }
                    // A pattern that does not compile is simply not remembered.
                    let _ = rules.push(BashRule::new(
                        pattern.clone(),
                        RuleAction::Allow,
                        RuleOrigin::Session,
                    ));
                }
                Grant::Tool(name) => {
                    // A denied name (or one that is not an MCP tool's) is not remembered.
                    if is_mcp(name) {
                        self.tools
                            .write()
                            .unwrap_or_else(|e| e.into_inner())
                            .grant(name);
                    }
                }
                Grant::Write(path) | Grant::Read(path) => {
                    let write = matches!(grant, Grant::Write(_));
                    self.granted_paths
                        .write()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert((write, path.clone()));
                }
            }
        }
    }
}

/// Programs that take names and print them, never opening the files: fed names they cannot
/// see, they read nothing.
const PRINTS_NAMES: [&str; 4] = ["echo", "printf", "true", "false"];

/// Whether an allowed part opens names it cannot see: appended by `xargs`, put where `{}`
/// stands by `find -exec`, or a command's output in its words.
fn opens_unseen_names(operands: &Operands, evaluator: &Evaluator<'_>) -> bool {
    let program = operands.program.as_str();
    if program.is_empty() || NAMES_ONLY.contains(&program) || PRINTS_NAMES.contains(&program) {
        return false;
    }
    operands.fed
        || operands
            .args
            .iter()
            .any(|w| w.literal.is_none() && evaluator.paths(w).from_output)
}

/// The words naming the folders a program reads or lists: its arguments that are not
/// options, less the pattern a search program takes first (unless `-e`/`-f` give it), and
/// for `find` those before its expression.
fn folder_words(operands: &Operands) -> Vec<&Word> {
    let program = operands.program.as_str();
    let args = &operands.args;
    if program == "find" {
        return args
            .iter()
            .take_while(|w| !w.text().starts_with(['-', '(', '!', ')']))
            .collect();
    }
    if program == "git" {
        return Vec::new();
    }
    let texts: Vec<&str> = args.iter().map(Word::text).collect();
    let searches = matches!(
        program,
        "grep" | "egrep" | "fgrep" | "zgrep" | "rgrep" | "rg" | "ripgrep" | "ag" | "ack" | "ugrep"
    );
    let pattern_given = texts.iter().any(|a| {
        matches!(*a, "-e" | "-f" | "--regexp" | "--file" | "--files")
            || a.starts_with("--regexp=")
            || a.starts_with("--file=")
            || (a.starts_with('-') && !a.starts_with("--") && a.ends_with(['e', 'f']))
    });
    let mut positional: Vec<&Word> = Vec::new();
    let mut skip_value = false;
    for word in args {
        let text = word.text();
        if std::mem::take(&mut skip_value) {
            continue;
        }
        if text.starts_with('-') && text != "-" {
            skip_value = VALUED_OPTIONS.contains(&text);
            continue;
        }
        positional.push(word);
    }
    if searches && !pattern_given && !positional.is_empty() {
        positional.remove(0);
    }
    positional
}

/// Options of the search and listing programs whose value is the next word.
const VALUED_OPTIONS: [&str; 23] = [
    "-g",
    "--glob",
    "--iglob",
    "-t",
    "-T",
    "--type",
    "--type-not",
    "-e",
    "-f",
    "--regexp",
    "--file",
    "-m",
    "--max-count",
    "-A",
    "-B",
    "-C",
    "--include",
    "--exclude",
    "--exclude-dir",
    "-d",
    "--max-depth",
    "--pre",
    "--ignore-file",
];

/// Without a sandbox, the parts a default rule allows although they run the project's own
/// code ask instead, saying why; the user's own rules and session grants decide as before.
/// Whether any part changed.
fn project_code_asks(rules: &BashRules, parts: &mut [super::bash::Part]) -> bool {
    let mut changed = false;
    for part in parts.iter_mut().filter(|p| p.action == RuleAction::Allow) {
        let Some(what) = rules.matching(&part.command).and_then(runs_project_code) else {
            continue;
        };
        part.action = RuleAction::Ask;
        part.reason = format!(
            "`{}` runs the project's code ({what}), and commands run without a sandbox",
            part.command
        );
        changed = true;
    }
    changed
}

/// `<`, `<<<`, `3<`, `<&`: the operator of a redirection whose target is read.
fn is_input_redirection(word: &str) -> bool {
    word.trim_start_matches(|c: char| c.is_ascii_digit())
        .starts_with('<')
}

/// The text an [`escape_glob`](super::rules::escape_glob)d pattern matches.
fn unescape_glob(pattern: &str) -> String {
    let mut text = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => text.extend(chars.next()),
            c => text.push(c),
        }
    }
    text
}

#[cfg(test)]
mod tests;
