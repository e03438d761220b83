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
    pub fn add_steering_files(&self, files: &[PathBuf], kind: crate::steering::Kind) {
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

    fn add_steering_files(&self, files: &[PathBuf], kind: crate::steering::Kind) {
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
mod tests {
    use super::*;
    use serde_json::json;

    struct Fixture {
        project: tempfile::TempDir,
        home: tempfile::TempDir,
    }

    impl Fixture {
        fn new() -> Self {
            Fixture {
                project: tempfile::tempdir().unwrap(),
                home: tempfile::tempdir().unwrap(),
            }
        }

        fn policy(&self, rules: &[(&str, RuleAction)]) -> RulePolicy {
            let entries: Vec<BashRuleEntry> = rules
                .iter()
                .map(|(pattern, action)| BashRuleEntry {
                    pattern: pattern.to_string(),
                    action: *action,
                    file: self.project.path().join(".rein/config.toml"),
                    project: true,
                })
                .collect();
            let sensitive: Vec<String> = crate::permissions::DEFAULT_SENSITIVE_READS
                .iter()
                .map(|s| s.to_string())
                .collect();
            RulePolicy::new(
                self.project.path(),
                &entries,
                &sensitive,
                Some(self.home.path()),
            )
            .unwrap()
        }

        fn check(&self, policy: &RulePolicy, tool: &str, args: serde_json::Value) -> Verdict {
            policy.check(&ToolRequest {
                tool,
                args: &args,
                root: self.project.path(),
            })
        }
    }

    fn bash(command: &str) -> serde_json::Value {
        json!({ "command": command })
    }

    #[test]
    fn config_rules_come_after_the_defaults_and_win() {
        let f = Fixture::new();
        let p = f.policy(&[
            ("make *", RuleAction::Allow),
            ("cat secret*", RuleAction::Deny),
        ]);
        assert_eq!(f.check(&p, "bash", bash("make build")), Verdict::Allow);
        assert!(
            matches!(f.check(&p, "bash", bash("cat secret.txt")), Verdict::Deny { reason } if reason.contains("cat secret*"))
        );
        assert_eq!(f.check(&p, "bash", bash("cat notes.txt")), Verdict::Allow);
        assert!(matches!(
            f.check(&p, "bash", bash("python3 x.py")),
            Verdict::Ask { .. }
        ));
    }

    #[test]
    fn bad_config_patterns_name_file_and_pattern() {
        let f = Fixture::new();
        let entries = [BashRuleEntry {
            pattern: "ls [".into(),
            action: RuleAction::Allow,
            file: PathBuf::from("/p/.rein/config.toml"),
            project: true,
        }];
        let e = RulePolicy::new(f.project.path(), &entries, &[], None).unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with("/p/.rein/config.toml: [[permissions.bash]] pattern `ls [`"),
            "{text}"
        );
    }

    #[test]
    fn allowed_commands_that_name_sensitive_files_ask() {
        let f = Fixture::new();
        let p = f.policy(&[]);
        for command in [
            "cat ~/.ssh/id_rsa",
            "head -n 3 $HOME/.aws/credentials",
            "grep KEY .env",
            "ls && cat config/.env",
            "diff --from-file=~/.gnupg/x y",
        ] {
            match f.check(&p, "bash", bash(command)) {
                Verdict::Ask { reason, grants } => {
                    assert!(reason.contains("sensitive"), "{command}: {reason}");
                    assert_eq!(grants.len(), 1, "{command}");
                }
                other => panic!("{command}: {other:?}"),
            }
        }
        assert_eq!(
            f.check(&p, "bash", bash("cat .env.example")),
            Verdict::Allow
        );
        // Names and metadata are not contents, unless the names are handed on.
        assert_eq!(f.check(&p, "bash", bash("ls -la ~/.ssh")), Verdict::Allow);
        assert_eq!(
            f.check(&p, "bash", bash("stat .env | head -1")),
            Verdict::Allow
        );
        assert!(matches!(
            f.check(&p, "bash", bash("ls -d ~/.ssh/* | xargs cat")),
            Verdict::Ask { .. }
        ));
        assert_eq!(f.check(&p, "bash", bash("grep -r env src")), Verdict::Allow);
    }

    /// `~user/` is judged as if it were the user's own home; `~+/` is the working folder
    /// (the project), not a home; `~-/` is the previous folder, inherited from rein's
    /// environment, which may be the home; and `REV:PATH` is looked into only where REV
    /// has no `/` (a path that merely holds a colon is one path).
    #[test]
    fn home_forms_and_revision_paths_in_arguments() {
        let f = Fixture::new();
        let p = f.policy(&[]);
        for command in [
            "cat ~bob/.ssh/id_rsa",
            "git show main:~/.ssh/id_rsa",
            "cat ~-/.ssh/id_rsa",
            "cat ~+/.env",
        ] {
            assert!(
                matches!(f.check(&p, "bash", bash(command)), Verdict::Ask { .. }),
                "{command}"
            );
        }
        for command in [
            "cat ~+/.ssh/id_rsa",
            "cat /tmp/a:~/.ssh/id_rsa",
            // A flag is not a file, whatever it spells.
            "cat -/.env",
        ] {
            assert_eq!(
                f.check(&p, "bash", bash(command)),
                Verdict::Allow,
                "{command}"
            );
        }
    }

    #[test]
    fn session_grants_let_the_approved_prefix_through() {
        let f = Fixture::new();
        let p = f.policy(&[]);
        let Verdict::Ask { grants, .. } = f.check(&p, "bash", bash("npm run build && ls")) else {
            panic!("npm asks");
        };
        assert_eq!(
            grants,
            [Grant::Bash(super::super::rules::prefix_pattern(
                "npm run build"
            ))]
        );
        p.grant(&grants);
        for command in ["npm run build && ls", "npm run build -- --prod"] {
            assert_eq!(f.check(&p, "bash", bash(command)), Verdict::Allow);
        }
        assert!(matches!(
            f.check(&p, "bash", bash("npm run deploy")),
            Verdict::Ask { .. }
        ));
        // A grant never lifts a deny, the built-in ones included, also when its pattern is
        // escaped as the prompt escapes it.
        p.grant(&[Grant::Bash("rm -rf build".into())]);
        p.grant(&[Grant::Bash(crate::permissions::rules::escape_glob(
            "rm -rf build/*.o",
        ))]);
        for command in ["npm run build; rm -rf build", "rm -rf build/*.o"] {
            assert!(
                matches!(f.check(&p, "bash", bash(command)), Verdict::Deny { .. }),
                "{command}"
            );
        }
        // Nor is it remembered: the only session rule is the one for `npm run build`.
        let session: Vec<String> = p
            .bash
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .rules()
            .iter()
            .filter(|r| r.origin == RuleOrigin::Session)
            .map(|r| r.pattern.clone())
            .collect();
        assert_eq!(
            session,
            [super::super::rules::prefix_pattern("npm run build")]
        );

        let Verdict::Ask { grants, .. } = f.check(&p, "bash", bash("cat ~/.ssh/config")) else {
            panic!("sensitive read asks");
        };
        p.grant(&grants);
        assert_eq!(
            f.check(&p, "bash", bash("cat ~/.ssh/config")),
            Verdict::Allow
        );
        assert!(matches!(
            f.check(&p, "bash", bash("cat ~/.ssh/id_rsa")),
            Verdict::Ask { .. }
        ));
    }

    #[test]
    fn file_tools_follow_the_path_rules_and_grants() {
        let f = Fixture::new();
        let p = f.policy(&[]);
        let write = |path: &str| json!({"path": path, "content": "x"});
        assert_eq!(f.check(&p, "write_file", write("src/a.rs")), Verdict::Allow);
        assert!(matches!(
            f.check(&p, "str_replace", write(".git/config")),
            Verdict::Deny { .. }
        ));
        assert!(matches!(
            f.check(&p, "write_file", write(".rein/config.toml")),
            Verdict::Deny { .. }
        ));
        let outside = f.home.path().join("notes.txt").display().to_string();
        let Verdict::Ask { grants, .. } = f.check(&p, "write_file", write(&outside)) else {
            panic!("outside asks");
        };
        p.grant(&grants);
        assert_eq!(f.check(&p, "write_file", write(&outside)), Verdict::Allow);
        // The write grant is not a read grant of a sensitive file, nor another path.
        let other = f.home.path().join("other.txt").display().to_string();
        assert!(matches!(
            f.check(&p, "write_file", write(&other)),
            Verdict::Ask { .. }
        ));
        let key = f.home.path().join(".ssh/id_rsa").display().to_string();
        assert!(matches!(
            f.check(&p, "read_file", json!({"path": key})),
            Verdict::Ask { .. }
        ));
        assert_eq!(
            f.check(&p, "read_file", json!({"path": "/etc/hostname"})),
            Verdict::Allow
        );
    }

    #[test]
    fn without_a_saver_project_rules_are_refused() {
        let f = Fixture::new();
        let p = f.policy(&[]);
        assert!(p.persist(&[Grant::Bash("npm run *".into())]).is_err());
    }

    #[test]
    fn a_new_session_forgets_the_old_sessions_grants() {
        let f = Fixture::new();
        let p = f.policy(&[("make *", RuleAction::Allow)]);
        p.grant(&[Grant::Bash("npm test".into())]);
        let outside = f.home.path().join("n.txt");
        p.grant(&[Grant::Write(outside.clone())]);
        assert_eq!(f.check(&p, "bash", bash("npm test")), Verdict::Allow);
        p.forget_session_grants();
        assert!(matches!(
            f.check(&p, "bash", bash("npm test")),
            Verdict::Ask { .. }
        ));
        let write = json!({"path": outside.display().to_string(), "content": "x"});
        assert!(matches!(
            f.check(&p, "write_file", write),
            Verdict::Ask { .. }
        ));
        assert_eq!(
            f.check(&p, "bash", bash("make all")),
            Verdict::Allow,
            "config rules stay"
        );
    }

    #[test]
    fn tools_without_rules_ask() {
        let f = Fixture::new();
        let p = f.policy(&[]);
        assert_eq!(
            f.check(&p, "launch_rockets", json!({})),
            Verdict::Ask {
                reason: "no permission rule covers the tool `launch_rockets`".into(),
                grants: Vec::new(),
            }
        );
        // The MCP tools' rules are for MCP tools: a rule allowing every tool there does
        // not reach a tool rein does not know.
        let user = "/home/u/.config/rein/config.toml";
        let p = tool_policy(&f, &[("*", RuleAction::Allow, user)]);
        assert!(matches!(
            f.check(&p, "launch_rockets", json!({})),
            Verdict::Ask { .. }
        ));
    }

    fn tool_policy(f: &Fixture, rules: &[(&str, RuleAction, &str)]) -> RulePolicy {
        let entries: Vec<ToolRuleEntry> = rules
            .iter()
            .map(|(pattern, action, file)| ToolRuleEntry {
                pattern: pattern.to_string(),
                action: *action,
                file: PathBuf::from(file),
                project: file.ends_with(".rein/config.toml"),
            })
            .collect();
        f.policy(&[]).with_tool_rules(&entries).unwrap()
    }

    #[test]
    fn mcp_tools_follow_their_rules_and_ask_without_one() {
        let f = Fixture::new();
        let user = "/home/me/.config/rein/config.toml";
        let p = tool_policy(
            &f,
            &[
                ("mcp__github__*", RuleAction::Allow, user),
                ("mcp__*__delete_*", RuleAction::Deny, user),
            ],
        );
        let args = json!({"title": "x"});
        assert_eq!(
            f.check(&p, "mcp__github__create_issue", args.clone()),
            Verdict::Allow
        );
        match f.check(&p, "mcp__github__delete_repo", args.clone()) {
            Verdict::Deny { reason } => assert_eq!(
                reason,
                format!("`mcp__github__delete_repo` matches `mcp__*__delete_*` (deny) in {user}")
            ),
            other => panic!("{other:?}"),
        }
        match f.check(&p, "mcp__time__get_current_time", args.clone()) {
            Verdict::Ask { reason, grants } => {
                assert!(reason.contains("no [[permissions.tools]] rule"), "{reason}");
                assert_eq!(grants, [Grant::Tool("mcp__time__get_current_time".into())]);
            }
            other => panic!("{other:?}"),
        }
        // Without any tool rules an MCP tool asks too; other tools are not touched.
        let plain = f.policy(&[]);
        assert!(matches!(
            f.check(&plain, "mcp__github__create_issue", args),
            Verdict::Ask { .. }
        ));
        assert_eq!(f.check(&p, "bash", bash("ls")), Verdict::Allow);
    }

    #[test]
    fn a_tool_grant_allows_that_tool_for_the_session_only() {
        let f = Fixture::new();
        let p = tool_policy(&f, &[("mcp__*__delete_*", RuleAction::Deny, "/u.toml")]);
        let Verdict::Ask { grants, .. } = f.check(&p, "mcp__gh__create_issue", json!({})) else {
            panic!("asks");
        };
        p.grant(&grants);
        assert_eq!(
            f.check(&p, "mcp__gh__create_issue", json!({})),
            Verdict::Allow
        );
        assert!(matches!(
            f.check(&p, "mcp__gh__create_pull", json!({})),
            Verdict::Ask { .. }
        ));
        // A grant never lifts a deny.
        p.grant(&[Grant::Tool("mcp__gh__delete_repo".into())]);
        assert!(matches!(
            f.check(&p, "mcp__gh__delete_repo", json!({})),
            Verdict::Deny { .. }
        ));
        p.forget_session_grants();
        assert!(matches!(
            f.check(&p, "mcp__gh__create_issue", json!({})),
            Verdict::Ask { .. }
        ));
    }

    #[test]
    fn bad_tool_patterns_name_file_and_pattern() {
        let f = Fixture::new();
        let entries = [ToolRuleEntry {
            pattern: "mcp__[".into(),
            action: RuleAction::Deny,
            file: PathBuf::from("/p/.rein/config.toml"),
            project: true,
        }];
        let e = f.policy(&[]).with_tool_rules(&entries).unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with("/p/.rein/config.toml: [[permissions.tools]] pattern `mcp__[`"),
            "{text}"
        );
    }

    #[test]
    fn persisting_writes_bash_and_tool_rules_to_their_lists() {
        let f = Fixture::new();
        let saved = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let into = saved.clone();
        let saver: RuleSaver = std::sync::Arc::new(move |rules: &[(RuleList, &str)]| {
            let mut list = into.lock().unwrap();
            list.extend(rules.iter().map(|(l, p)| (*l, p.to_string())));
            Ok(PathBuf::from("/p/.rein/config.toml"))
        });
        let p = f.policy(&[]).with_saver(saver);
        let said = p
            .persist(&[
                Grant::Tool("mcp__gh__create_issue".into()),
                Grant::Bash("npm test".into()),
                Grant::Write("/x".into()),
            ])
            .unwrap();
        assert_eq!(
            said,
            "allowed `mcp__gh__create_issue`, `npm test` in this project from now on (/p/.rein/config.toml)"
        );
        assert_eq!(
            *saved.lock().unwrap(),
            [
                (RuleList::Tools, "mcp__gh__create_issue".to_string()),
                (RuleList::Bash, "npm test".to_string())
            ]
        );
        assert!(p.persist(&[Grant::Read("/x".into())]).is_err());
    }

    #[test]
    fn rein_own_tools_are_allowed() {
        let f = Fixture::new();
        let p = f.policy(&[]);
        assert_eq!(
            f.check(&p, "write_todos", json!({"todos": []})),
            Verdict::Allow
        );
        assert_eq!(
            f.check(&p, "read_skill", json!({"name": "review"})),
            Verdict::Allow
        );
    }
}
