//! Bash rules: a glob pattern and an action, matched against one normalised simple command
//! (and [`GlobRules`], the ordered, last-match-wins list the tool rules share).
//!
//! Rules come from four places, in this order: the defaults compiled in from
//! `crates/core/assets/default_rules.toml`, the user's config file, the project's `.rein/config.toml`,
//! and the session (what the user allowed from an approval prompt). Which one decides
//! ([`GlobRules::matching`]):
//!
//! 1. a `deny` from a config file, the user's or the project's, wins over every allow and
//!    ask, wherever it stands (as in Claude Code: a later, narrower allow does not lift it);
//! 2. a default `deny` that the user's own rules did not lift stays (the project's and the
//!    session's allows never lift one);
//! 3. otherwise the last matching rule wins, so the user's rules override the defaults and
//!    a project may add an `ask` over the user's `allow`.
//!
//! Globs are compiled once, with `*` matching anything — spaces and slashes included — and
//! `\` escaping the next character.

use std::fmt;
use std::path::PathBuf;

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

/// What a rule does with a matching command. Ordered by strictness: `Allow < Ask < Deny`, so
/// "the strictest wins" is `max`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum RuleAction {
    Allow,
    Ask,
    Deny,
}

impl RuleAction {
    pub fn as_str(self) -> &'static str {
        match self {
            RuleAction::Allow => "allow",
            RuleAction::Ask => "ask",
            RuleAction::Deny => "deny",
        }
    }
}

impl fmt::Display for RuleAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a rule came from: for reasons and error messages, and for which rule decides
/// (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleOrigin {
    /// rein's built-in rules.
    Default,
    /// The user's own settings: their `config.toml`, or what they allowed for a project
    /// where the project cannot write it (rein's data folder).
    Config(PathBuf),
    /// The project's `.rein/config.toml`: a cloned repository's words, not the user's.
    Project(PathBuf),
    /// What the user allowed for this session.
    Session,
}

impl RuleOrigin {
    /// The file the rule was read from, if any.
    pub fn file(&self) -> Option<&std::path::Path> {
        match self {
            RuleOrigin::Config(path) | RuleOrigin::Project(path) => Some(path),
            RuleOrigin::Default | RuleOrigin::Session => None,
        }
    }
}

/// One rule: what matches `pattern` (a bash command, or a tool name for
/// [`super::tools::ToolRules`]) gets `action`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub pattern: String,
    pub action: RuleAction,
    pub origin: RuleOrigin,
}

/// A bash rule: commands matching `pattern` get `action`.
pub type BashRule = Rule;

impl Rule {
    pub fn new(pattern: impl Into<String>, action: RuleAction, origin: RuleOrigin) -> Rule {
        Rule {
            pattern: pattern.into(),
            action,
            origin,
        }
    }
}

/// Rules in order, the last whose glob matches the whole text winning, all compiled as
/// one set that finds every match in a single pass (built on first use after a change).
/// Each pattern is checked when it is added, but only the set is kept compiled: a compiled
/// glob beside it would double what a rule costs. The bash rules and the tool rules are
/// both one of these.
#[derive(Debug, Clone, Default)]
pub struct GlobRules {
    rules: Vec<Rule>,
    set: std::sync::OnceLock<GlobSet>,
}

impl GlobRules {
    /// Append a rule; it overrides every earlier rule that matches the same text. A
    /// pattern that is not a valid glob is refused with globset's explanation.
    pub fn push(&mut self, rule: Rule) -> Result<(), String> {
        compile(&rule.pattern)?;
        self.rules.push(rule);
        self.set = std::sync::OnceLock::new();
        Ok(())
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The rule that decides for `text`, of those whose glob matches the whole of it: a
    /// config file's `deny`, else a default `deny` the user's rules did not lift, else the
    /// last match (see the module doc).
    pub fn matching(&self, text: &str) -> Option<&Rule> {
        let set = self.set.get_or_init(|| {
            // Every pattern compiled when it was added, so this cannot fail; should it
            // anyway, no rule matches (positions in the set must be the rules' own).
            let globs: Result<Vec<Glob>, String> =
                self.rules.iter().map(|r| compile(&r.pattern)).collect();
            let mut builder = GlobSetBuilder::new();
            for glob in globs.unwrap_or_default() {
                builder.add(glob);
            }
            builder.build().unwrap_or_else(|_| GlobSet::empty())
        });
        let mut positions = set.matches(text);
        positions.sort_unstable();
        let hits: Vec<&Rule> = positions
            .into_iter()
            .filter_map(|i| self.rules.get(i))
            .collect();
        decide(&hits)
    }

    /// Drop every rule the user allowed for the session.
    pub fn forget_session_rules(&mut self) {
        let before = self.rules.len();
        self.rules.retain(|r| r.origin != RuleOrigin::Session);
        if self.rules.len() != before {
            self.set = std::sync::OnceLock::new();
        }
    }
}

/// The deciding rule among `hits`, the matching rules in the order they were added.
fn decide<'a>(hits: &[&'a Rule]) -> Option<&'a Rule> {
    let config_deny = hits.iter().rev().find(|r| {
        r.action == RuleAction::Deny
            && matches!(r.origin, RuleOrigin::Config(_) | RuleOrigin::Project(_))
    });
    if let Some(rule) = config_deny {
        return Some(rule);
    }
    let users = hits
        .iter()
        .rev()
        .find(|r| matches!(r.origin, RuleOrigin::Default | RuleOrigin::Config(_)));
    if let Some(rule) = users.filter(|r| r.action == RuleAction::Deny) {
        return Some(rule);
    }
    hits.last().copied()
}

/// A rule pattern that is not a valid glob.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "bash rule `{pattern}`{}: not a valid pattern: {problem}",
    origin_suffix(origin)
)]
pub struct RuleError {
    pub pattern: String,
    pub origin: RuleOrigin,
    /// globset's explanation, e.g. "unclosed character class; missing ']'".
    pub problem: String,
}

fn origin_suffix(origin: &RuleOrigin) -> String {
    match origin {
        RuleOrigin::Default => " (a default rule)".to_string(),
        RuleOrigin::Config(path) | RuleOrigin::Project(path) => {
            format!(" in {}", path.display())
        }
        RuleOrigin::Session => " (allowed this session)".to_string(),
    }
}

/// The bash rules in force (see [`GlobRules`]).
#[derive(Debug, Clone, Default)]
pub struct BashRules {
    list: GlobRules,
}

/// The default rules, as compiled in.
const DEFAULT_RULES: &str = include_str!("../../assets/default_rules.toml");

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    bash: Vec<RuleEntry>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleEntry {
    pattern: String,
    action: RuleAction,
    /// What of the project's own the command runs, for a default allow that holds only
    /// inside a working sandbox (see [`runs_project_code`]).
    #[serde(default)]
    project_code: Option<String>,
}

impl BashRules {
    /// Compile `rules`; the first pattern that is not a valid glob is an error.
    pub fn new(rules: Vec<BashRule>) -> Result<BashRules, RuleError> {
        let mut compiled = BashRules::default();
        for rule in rules {
            compiled.push(rule)?;
        }
        Ok(compiled)
    }

    /// The default rules from `crates/core/assets/default_rules.toml`. Should that ever fail to parse, a
    /// single catch-all `ask` rule stands in, so nothing is allowed by accident.
    pub fn defaults() -> Vec<BashRule> {
        parse_rules_file(DEFAULT_RULES)
            .unwrap_or_else(|_| vec![BashRule::new("*", RuleAction::Ask, RuleOrigin::Default)])
    }

    /// Append a rule; it overrides every earlier rule that matches the same command.
    pub fn push(&mut self, rule: BashRule) -> Result<(), RuleError> {
        let (pattern, origin) = (rule.pattern.clone(), rule.origin.clone());
        self.list.push(rule).map_err(|problem| RuleError {
            pattern,
            origin,
            problem,
        })
    }

    /// Drop every rule the user allowed for the session (a new or another session starts).
    pub fn forget_session_rules(&mut self) {
        self.list.forget_session_rules();
    }

    pub fn rules(&self) -> &[BashRule] {
        self.list.rules()
    }

    /// The rule that decides for the whole normalised simple command (see
    /// [`GlobRules::matching`]).
    pub fn matching(&self, command: &str) -> Option<&BashRule> {
        self.list.matching(command)
    }
}

/// What of the project's own a default rule's commands run ("its build scripts, macros and
/// tests" for `cargo test *`), when the rule is one of the default allows that hold only
/// inside a working sandbox (`project_code` in `crates/core/assets/default_rules.toml`); `None` for any
/// other rule, and for every rule of the user's, the project's or the session's.
pub fn runs_project_code(rule: &BashRule) -> Option<&'static str> {
    static PROJECT_CODE: std::sync::OnceLock<Vec<(String, String)>> = std::sync::OnceLock::new();
    if rule.origin != RuleOrigin::Default || rule.action != RuleAction::Allow {
        return None;
    }
    let list = PROJECT_CODE.get_or_init(|| {
        toml::from_str::<RulesFile>(DEFAULT_RULES)
            .map(|file| {
                file.bash
                    .into_iter()
                    .filter_map(|e| e.project_code.map(|why| (e.pattern, why)))
                    .collect()
            })
            .unwrap_or_default()
    });
    list.iter()
        .find(|(pattern, _)| *pattern == rule.pattern)
        .map(|(_, why)| why.as_str())
}

fn compile(pattern: &str) -> Result<Glob, String> {
    GlobBuilder::new(pattern)
        .literal_separator(false)
        .backslash_escape(true)
        .build()
        .map_err(|e| e.kind().to_string())
}

fn parse_rules_file(text: &str) -> Result<Vec<BashRule>, toml::de::Error> {
    let file: RulesFile = toml::from_str(text)?;
    Ok(file
        .bash
        .into_iter()
        .map(|entry| BashRule::new(entry.pattern, entry.action, RuleOrigin::Default))
        .collect())
}

/// Escape glob metacharacters so a literal command becomes a pattern that matches exactly it.
pub fn escape_glob(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '*' | '?' | '[' | ']' | '{' | '}') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// The pattern of a prefix rule, what "allow for this session" adds for a command's prefix:
/// `prefix` alone or followed by a space and anything, `{git commit,git commit *}` (shown
/// as `git commit:*`, see [`shown_pattern`]). `prefix` is words of letters, digits and
/// `-_:.+` (`bash::prefix` makes only such), so no character of it is special in a glob.
pub fn prefix_pattern(prefix: &str) -> String {
    let prefix = escape_glob(prefix);
    format!("{{{prefix},{prefix} *}}")
}

/// The prefix a [`prefix_pattern`] covers; `None` for any other pattern.
pub fn pattern_prefix(pattern: &str) -> Option<&str> {
    let inner = pattern.strip_prefix('{')?.strip_suffix(" *}")?;
    let (alone, with_more) = inner.split_once(',')?;
    let plain = !alone.contains(['\\', '*', '?', '[', ']', '{', '}', ',']);
    (plain && !alone.is_empty() && alone == with_more).then_some(alone)
}

/// A rule's pattern as rein shows it: a prefix rule in Claude Code's words (`git
/// commit:*`), any other as it is.
pub fn shown_pattern(pattern: &str) -> std::borrow::Cow<'_, str> {
    match pattern_prefix(pattern) {
        Some(prefix) => format!("{prefix}:*").into(),
        None => pattern.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(list: &[(&str, RuleAction)]) -> BashRules {
        BashRules::new(
            list.iter()
                .map(|(p, a)| BashRule::new(*p, *a, RuleOrigin::Session))
                .collect(),
        )
        .unwrap()
    }

    #[test]
    fn the_default_rules_file_parses_and_starts_with_the_catch_all() {
        let parsed = parse_rules_file(DEFAULT_RULES).unwrap();
        assert_eq!(parsed[0].pattern, "*");
        assert_eq!(parsed[0].action, RuleAction::Ask);
        assert!(parsed.len() > 40);
        assert_eq!(BashRules::defaults().len(), parsed.len());
        BashRules::new(parsed).unwrap();
    }

    #[test]
    fn star_matches_spaces_and_slashes_and_the_last_match_wins() {
        let r = rules(&[
            ("*", RuleAction::Ask),
            ("ls *", RuleAction::Allow),
            ("ls /etc*", RuleAction::Deny),
        ]);
        assert_eq!(
            r.matching("ls -la src/a b").unwrap().action,
            RuleAction::Allow
        );
        assert_eq!(
            r.matching("ls /etc/passwd").unwrap().action,
            RuleAction::Deny
        );
        assert_eq!(r.matching("ls").unwrap().action, RuleAction::Ask);
        assert_eq!(r.matching("echo a\nb").unwrap().pattern, "*");
        assert!(rules(&[("ls *", RuleAction::Allow)])
            .matching("ls")
            .is_none());
    }

    /// A rule saved for good after one allowed for the session (`p` after `s` in the
    /// approval modal): once the session's rules are forgotten (`/clear`, another session),
    /// the saved rule still decides, and the forgotten one no longer does.
    #[test]
    fn forgetting_the_session_rules_keeps_the_rules_added_after_them() {
        let mut r = BashRules::new(vec![BashRule::new(
            "*",
            RuleAction::Ask,
            RuleOrigin::Default,
        )])
        .unwrap();
        r.push(BashRule::new(
            "git push *",
            RuleAction::Allow,
            RuleOrigin::Session,
        ))
        .unwrap();
        r.push(BashRule::new(
            "cargo *",
            RuleAction::Allow,
            RuleOrigin::Config(PathBuf::from("/home/u/.config/rein/config.toml")),
        ))
        .unwrap();
        // The matcher is built here, with all three.
        assert_eq!(
            r.matching("git push origin").unwrap().action,
            RuleAction::Allow
        );
        assert_eq!(r.matching("cargo build").unwrap().action, RuleAction::Allow);
        r.forget_session_rules();
        assert_eq!(r.rules().len(), 2);
        assert_eq!(
            r.matching("git push origin").unwrap().action,
            RuleAction::Ask
        );
        assert_eq!(r.matching("cargo build").unwrap().pattern, "cargo *");
    }

    #[test]
    fn escaped_patterns_match_exactly_their_text() {
        for text in [
            "python3 x.py",
            "grep -r 'a*b' [x] {y,z} \\n ?",
            "echo *",
            "ls ]",
            "",
        ] {
            let r = rules(&[(&escape_glob(text), RuleAction::Allow)]);
            assert!(r.matching(text).is_some(), "{text}");
            assert!(r.matching(&format!("{text} more")).is_none(), "{text}");
            assert!(r.matching(&format!("x{text}")).is_none(), "{text}");
        }
        let r = rules(&[(&escape_glob("echo *"), RuleAction::Allow)]);
        assert!(r.matching("echo hi").is_none());
    }

    /// A prefix rule matches its words alone or followed by arguments, never a longer word
    /// (`git commit-tree` is another command), and reads back as the prefix it covers.
    #[test]
    fn a_prefix_rule_matches_the_prefix_and_what_follows_a_space() {
        let pattern = prefix_pattern("git commit");
        assert_eq!(pattern, "{git commit,git commit *}");
        assert_eq!(pattern_prefix(&pattern), Some("git commit"));
        assert_eq!(shown_pattern(&pattern), "git commit:*");
        let r = rules(&[(&pattern, RuleAction::Allow)]);
        for text in [
            "git commit",
            "git commit -m x",
            "git commit -m 'a b' --amend",
        ] {
            assert!(r.matching(text).is_some(), "{text}");
        }
        for text in [
            "git commit-tree x",
            "git commitx",
            "git",
            "git push",
            "xgit commit",
        ] {
            assert!(r.matching(text).is_none(), "{text}");
        }
        for other in [
            "git commit*",
            "{a,b *}",
            "{a*,a* *}",
            "{,  *}",
            "git commit",
        ] {
            assert_eq!(pattern_prefix(other), None, "{other}");
            assert_eq!(shown_pattern(other), other);
        }
        let dotted = prefix_pattern("python3.12 -m pytest");
        let r = rules(&[(&dotted, RuleAction::Allow)]);
        assert!(r.matching("python3.12 -m pytest -x").is_some());
        assert!(r.matching("python3x12 -m pytest").is_none());
    }

    #[test]
    fn a_bad_pattern_names_itself_and_why() {
        let err = BashRules::new(vec![BashRule::new(
            "ls [",
            RuleAction::Allow,
            RuleOrigin::Config(PathBuf::from("/p/config.toml")),
        )])
        .unwrap_err();
        assert_eq!(err.pattern, "ls [");
        let text = err.to_string();
        assert!(
            text.contains("`ls [`") && text.contains("/p/config.toml"),
            "{text}"
        );
        assert!(text.contains("character class"), "{text}");
    }

    #[test]
    fn a_config_deny_beats_every_allow_and_a_project_never_lifts_a_default_deny() {
        let user = || RuleOrigin::Config(PathBuf::from("/home/u/.config/rein/config.toml"));
        let project = || RuleOrigin::Project(PathBuf::from("/p/.rein/config.toml"));
        let decided = |list: Vec<BashRule>, text: &str| {
            let r = BashRules::new(list).unwrap();
            let rule = r.matching(text).unwrap();
            (rule.action, rule.origin.clone())
        };
        // The user's deny, then the project's broader allow: the deny holds.
        let list = vec![
            BashRule::new("make deploy*", RuleAction::Deny, user()),
            BashRule::new("make *", RuleAction::Allow, project()),
        ];
        assert_eq!(
            decided(list, "make deploy prod"),
            (RuleAction::Deny, user())
        );
        // Within the user's own file too: a later, narrower allow does not lift a deny.
        let list = vec![
            BashRule::new("git push*", RuleAction::Deny, user()),
            BashRule::new("git push origin dev", RuleAction::Allow, user()),
        ];
        assert_eq!(decided(list, "git push origin dev").0, RuleAction::Deny);
        // A default deny: the user's allow lifts it, the project's and the session's do not.
        let default = |p: &str, a| BashRule::new(p, a, RuleOrigin::Default);
        let list = vec![
            default("rm *", RuleAction::Deny),
            BashRule::new("rm -r build", RuleAction::Allow, user()),
        ];
        assert_eq!(decided(list, "rm -r build").0, RuleAction::Allow);
        for origin in [project(), RuleOrigin::Session] {
            let list = vec![
                default("rm *", RuleAction::Deny),
                BashRule::new("rm -r build", RuleAction::Allow, origin),
            ];
            assert_eq!(
                decided(list, "rm -r build"),
                (RuleAction::Deny, RuleOrigin::Default)
            );
        }
        // A project may add an ask over the user's allow; the last match decides between
        // allows and asks.
        let list = vec![
            default("*", RuleAction::Ask),
            BashRule::new("cargo *", RuleAction::Allow, user()),
            BashRule::new("cargo publish*", RuleAction::Ask, project()),
        ];
        assert_eq!(decided(list.clone(), "cargo publish").0, RuleAction::Ask);
        assert_eq!(decided(list, "cargo build").0, RuleAction::Allow);
        let list = vec![
            default("*", RuleAction::Ask),
            BashRule::new("make *", RuleAction::Allow, project()),
        ];
        assert_eq!(decided(list, "make all"), (RuleAction::Allow, project()));
    }

    #[test]
    fn actions_order_by_strictness() {
        assert!(RuleAction::Allow < RuleAction::Ask && RuleAction::Ask < RuleAction::Deny);
        assert_eq!(
            [RuleAction::Ask, RuleAction::Deny, RuleAction::Allow]
                .iter()
                .max(),
            Some(&RuleAction::Deny)
        );
    }

    /// Only the default allows marked `project_code` say what of the project they run; the
    /// same pattern from anywhere else, or as another action, says nothing.
    #[test]
    fn only_default_allows_say_they_run_project_code() {
        let defaults = BashRules::defaults();
        let cargo_test = defaults
            .iter()
            .find(|r| r.pattern == "cargo test *")
            .expect("a default rule for cargo test");
        assert_eq!(
            runs_project_code(cargo_test),
            Some("its build scripts, macros and tests")
        );
        let pytest = defaults.iter().find(|r| r.pattern == "pytest").unwrap();
        assert_eq!(runs_project_code(pytest), Some("its tests and conftest.py"));
        let plain = defaults
            .iter()
            .find(|r| r.action == RuleAction::Allow && r.pattern.starts_with("ls"))
            .expect("a default allow for ls");
        assert_eq!(runs_project_code(plain), None);
        for origin in [
            RuleOrigin::Session,
            RuleOrigin::Config(PathBuf::from("/home/u/.config/rein/config.toml")),
            RuleOrigin::Project(PathBuf::from("/p/.rein/config.toml")),
        ] {
            let rule = BashRule::new("cargo test *", RuleAction::Allow, origin);
            assert_eq!(runs_project_code(&rule), None);
        }
        for action in [RuleAction::Ask, RuleAction::Deny] {
            let rule = BashRule::new("cargo test *", action, RuleOrigin::Default);
            assert_eq!(runs_project_code(&rule), None);
        }
    }
}
