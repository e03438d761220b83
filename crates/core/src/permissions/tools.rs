//! Rules on tool names: `[[permissions.tools]]`, for the tools MCP servers provide.
//!
//! A tool from an MCP server reaches the policy as `mcp__SERVER__TOOL`. Its rules are a
//! glob on that name (`mcp__github__*`, `mcp__*__delete_*`) and an action. They combine
//! the way bash rules do ([`GlobRules::matching`]): a `deny` from any file wins over every
//! allow, otherwise the **last** rule whose glob matches the whole name wins. Rules come in
//! this order: the user's config file, the allows the user gave for this project from the
//! approval prompt (kept in rein's data folder, where the project cannot write), the
//! project's `.rein/config.toml`, then what the user allowed for the session. So a later,
//! narrower `ask` overrides an earlier, broader `allow`, and nothing lifts a `deny`. An MCP
//! tool runs outside the sandbox, so a project may ask about or deny tools but never allow
//! one: the project file's tool `allow` rules are left out here (and the config layer says
//! so at start). With no matching rule an MCP tool asks.
//!
//! [`McpCall`] is what an approval request carries about such a call for the front ends:
//! the server and tool names, the arguments, and whether the project declared the server.

use std::path::PathBuf;

use super::rules::{escape_glob, GlobRules, Rule, RuleAction, RuleOrigin};

/// The prefix of every tool name that comes from an MCP server.
pub const MCP_PREFIX: &str = "mcp__";

/// Whether `tool` names a tool from an MCP server (`mcp__SERVER__TOOL`).
pub fn is_mcp(tool: &str) -> bool {
    tool.starts_with(MCP_PREFIX)
}

/// The server and tool of a qualified name: `mcp__github__create_issue` is
/// `("github", "create_issue")`. The server is everything up to the first `__` after the
/// prefix (a sanitised server name may hold single underscores, and so may the tool).
/// `None` when the name is not of that form.
pub fn split_mcp_name(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix(MCP_PREFIX)?;
    let (server, tool) = rest.split_once("__")?;
    (!server.is_empty() && !tool.is_empty()).then_some((server, tool))
}

/// One `[[permissions.tools]]` rule and the file it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolRuleEntry {
    pub pattern: String,
    pub action: RuleAction,
    pub file: PathBuf,
    /// The file is the project's `.rein/config.toml` (whose allows are not obeyed).
    pub project: bool,
}

/// One rule in force: a glob on the tool name, its action and where it came from.
pub type ToolRule = Rule;

/// A tool rule whose pattern is not a valid glob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolRuleError {
    pub pattern: String,
    pub origin: RuleOrigin,
    pub problem: String,
}

/// The tool rules in force (see [`GlobRules`]).
#[derive(Debug, Clone, Default)]
pub struct ToolRules {
    list: GlobRules,
}

/// What the rules make of one tool name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolJudgement {
    pub action: RuleAction,
    /// Which rule decided, or that none did: for the user and the model.
    pub reason: String,
    /// Whether the deciding rule is one the user allowed for this session.
    pub session: bool,
}

impl ToolRules {
    /// The config's rules, in order (user file first, then project file), without the
    /// project's allows: a project may not allow a tool that runs outside the sandbox.
    pub fn new(entries: &[ToolRuleEntry]) -> Result<ToolRules, ToolRuleError> {
        let mut rules = ToolRules::default();
        for entry in entries {
            if entry.project && entry.action == RuleAction::Allow {
                continue;
            }
            rules.push(ToolRule {
                pattern: entry.pattern.clone(),
                action: entry.action,
                origin: if entry.project {
                    RuleOrigin::Project(entry.file.clone())
                } else {
                    RuleOrigin::Config(entry.file.clone())
                },
            })?;
        }
        Ok(rules)
    }

    /// Append a rule; it overrides every earlier rule matching the same name.
    pub fn push(&mut self, rule: ToolRule) -> Result<(), ToolRuleError> {
        let (pattern, origin) = (rule.pattern.clone(), rule.origin.clone());
        self.list.push(rule).map_err(|problem| ToolRuleError {
            pattern,
            origin,
            problem,
        })
    }

    pub fn rules(&self) -> &[ToolRule] {
        self.list.rules()
    }

    /// The last rule whose glob matches the whole name.
    pub fn matching(&self, name: &str) -> Option<&ToolRule> {
        self.list.matching(name)
    }

    /// Judge the MCP tool `name`: the last matching rule, else ask.
    pub fn judge(&self, name: &str) -> ToolJudgement {
        match self.matching(name) {
            Some(rule) => ToolJudgement {
                action: rule.action,
                reason: describe_rule(name, rule),
                session: rule.origin == RuleOrigin::Session,
            },
            None => ToolJudgement {
                action: RuleAction::Ask,
                reason: format!("no [[permissions.tools]] rule matches `{name}`"),
                session: false,
            },
        }
    }

    /// Allow exactly the tool `name` for the rest of the session, unless a rule denies it
    /// (approval lifts an `ask`, never a `deny`). Whether it was granted.
    pub fn grant(&mut self, name: &str) -> bool {
        if self
            .matching(name)
            .is_some_and(|r| r.action == RuleAction::Deny)
        {
            return false;
        }
        self.push(ToolRule {
            pattern: escape_glob(name),
            action: RuleAction::Allow,
            origin: RuleOrigin::Session,
        })
        .is_ok()
    }

    /// Drop the rules the user allowed for the session.
    pub fn forget_session_rules(&mut self) {
        self.list.forget_session_rules();
    }
}

/// "`mcp__github__*` (allow) in /home/me/.config/rein/config.toml".
fn describe_rule(name: &str, rule: &ToolRule) -> String {
    let head = format!("`{name}` matches `{}` ({})", rule.pattern, rule.action);
    match &rule.origin {
        RuleOrigin::Config(path) | RuleOrigin::Project(path) => {
            format!("{head} in {}", path.display())
        }
        RuleOrigin::Session => format!("{head}, allowed this session"),
        RuleOrigin::Default => format!("{head}, a default rule"),
    }
}

/// What an approval request says about a call to an MCP tool, beyond its qualified name.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct McpCall {
    /// The server's name as configured (`[mcp_servers.NAME]`).
    pub server: String,
    /// The tool's name as the server lists it.
    pub tool: String,
    /// The call's arguments (a JSON object), shown as formatted JSON.
    pub args: serde_json::Value,
    /// The project's `.rein/config.toml` declared the server (rather than the user's
    /// config): the modal says it runs outside rein's sandbox.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub project_server: bool,
}

impl McpCall {
    /// For a call to `name` with `args`: `None` unless `name` is an MCP tool. The server
    /// and tool come from the qualified name; the MCP client, which knows the original
    /// (unsanitised) names, may overwrite them.
    pub fn for_call(name: &str, args: &serde_json::Value) -> Option<McpCall> {
        if !is_mcp(name) {
            return None;
        }
        let (server, tool) = split_mcp_name(name).unwrap_or(("?", name));
        Some(McpCall {
            server: server.to_string(),
            tool: tool.to_string(),
            args: args.clone(),
            project_server: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(list: &[(&str, RuleAction, &str)]) -> ToolRules {
        let entries: Vec<ToolRuleEntry> = list
            .iter()
            .map(|(pattern, action, file)| ToolRuleEntry {
                pattern: pattern.to_string(),
                action: *action,
                file: PathBuf::from(file),
                project: *file == PROJECT,
            })
            .collect();
        ToolRules::new(&entries).unwrap()
    }

    const USER: &str = "/home/me/.config/rein/config.toml";
    const PROJECT: &str = "/p/.rein/config.toml";

    #[test]
    fn names_split_into_server_and_tool() {
        assert_eq!(
            split_mcp_name("mcp__github__create_issue"),
            Some(("github", "create_issue"))
        );
        assert_eq!(
            split_mcp_name("mcp__my-server__a__b"),
            Some(("my-server", "a__b"))
        );
        assert_eq!(split_mcp_name("mcp__github"), None);
        assert_eq!(split_mcp_name("mcp____x"), None);
        assert_eq!(split_mcp_name("bash"), None);
        assert!(is_mcp("mcp__time__get_current_time"));
        assert!(!is_mcp("mcp_time"));
        let call = McpCall::for_call("mcp__time__now", &serde_json::json!({"tz": "UTC"}));
        assert_eq!(
            call.map(|c| (c.server, c.tool)),
            Some(("time".to_string(), "now".to_string()))
        );
        assert_eq!(McpCall::for_call("bash", &serde_json::json!({})), None);
    }

    #[test]
    fn no_rule_asks_and_says_so() {
        let r = rules(&[("mcp__github__*", RuleAction::Allow, USER)]);
        let j = r.judge("mcp__time__get_current_time");
        assert_eq!(j.action, RuleAction::Ask);
        assert!(
            j.reason.contains("no [[permissions.tools]] rule"),
            "{}",
            j.reason
        );
        assert_eq!(
            ToolRules::default().judge("mcp__a__b").action,
            RuleAction::Ask
        );
    }

    #[test]
    fn a_deny_wins_else_the_last_matching_rule_and_the_reason_names_it() {
        let r = rules(&[
            ("mcp__github__*", RuleAction::Allow, USER),
            ("mcp__*__delete_*", RuleAction::Deny, USER),
            ("mcp__github__delete_branch", RuleAction::Ask, PROJECT),
            ("mcp__github__create_*", RuleAction::Ask, PROJECT),
        ]);
        let j = r.judge("mcp__github__list_issues");
        assert_eq!(j.action, RuleAction::Allow);
        assert_eq!(
            j.reason,
            format!("`mcp__github__list_issues` matches `mcp__github__*` (allow) in {USER}")
        );
        // The project's later ask overrides the user's broader allow.
        let j = r.judge("mcp__github__create_issue");
        assert_eq!(j.action, RuleAction::Ask);
        assert!(j.reason.ends_with(PROJECT), "{}", j.reason);
        let j = r.judge("mcp__github__delete_repo");
        assert_eq!(j.action, RuleAction::Deny);
        assert!(
            j.reason.contains("`mcp__*__delete_*` (deny)"),
            "{}",
            j.reason
        );
        // The project's ask comes later, but a deny holds whatever comes after it.
        let j = r.judge("mcp__github__delete_branch");
        assert_eq!(j.action, RuleAction::Deny);
        assert!(j.reason.ends_with(USER), "{}", j.reason);
        // The glob matches the whole name, not a part of it.
        assert_eq!(r.judge("xmcp__github__a").action, RuleAction::Ask);
        assert_eq!(
            rules(&[("mcp__time__get_current_time", RuleAction::Allow, USER)])
                .judge("mcp__time__get_current_time_zone")
                .action,
            RuleAction::Ask
        );
    }

    #[test]
    fn a_projects_allow_is_not_obeyed_and_cannot_lift_the_users_deny() {
        // The reproduction: the user denies every delete; the project allows its server.
        let r = rules(&[
            ("mcp__*__delete_*", RuleAction::Deny, USER),
            ("mcp__github__*", RuleAction::Allow, PROJECT),
        ]);
        assert_eq!(r.judge("mcp__github__delete_repo").action, RuleAction::Deny);
        assert_eq!(
            r.judge("mcp__github__list_issues").action,
            RuleAction::Ask,
            "a project's allow is left out: the tool asks as with no rule"
        );
        assert_eq!(r.rules().len(), 1);
        // A project's deny and ask are obeyed.
        let r = rules(&[
            ("mcp__github__*", RuleAction::Allow, USER),
            ("mcp__github__merge_*", RuleAction::Deny, PROJECT),
        ]);
        assert_eq!(r.judge("mcp__github__merge_pr").action, RuleAction::Deny);
        assert_eq!(r.judge("mcp__github__list").action, RuleAction::Allow);
    }

    #[test]
    fn a_grant_allows_exactly_that_name_and_never_lifts_a_deny() {
        let mut r = rules(&[("mcp__*__delete_*", RuleAction::Deny, USER)]);
        assert!(r.grant("mcp__gh__create_[x]*"));
        let j = r.judge("mcp__gh__create_[x]*");
        assert_eq!(j.action, RuleAction::Allow);
        assert!(j.session);
        assert!(j.reason.contains("allowed this session"), "{}", j.reason);
        assert_eq!(r.judge("mcp__gh__create_x").action, RuleAction::Ask);
        assert!(!r.grant("mcp__gh__delete_repo"));
        assert_eq!(r.judge("mcp__gh__delete_repo").action, RuleAction::Deny);
        r.forget_session_rules();
        assert_eq!(r.judge("mcp__gh__create_[x]*").action, RuleAction::Ask);
        assert_eq!(r.rules().len(), 1, "the config's rule stays");
    }

    #[test]
    fn a_bad_pattern_is_an_error_naming_its_origin() {
        let err = ToolRules::new(&[ToolRuleEntry {
            pattern: "mcp__[".into(),
            action: RuleAction::Ask,
            file: PathBuf::from(PROJECT),
            project: true,
        }])
        .unwrap_err();
        assert_eq!(err.pattern, "mcp__[");
        assert_eq!(err.origin, RuleOrigin::Project(PathBuf::from(PROJECT)));
        assert!(err.problem.contains("character class"), "{}", err.problem);
    }
}
