//! What the settings make for the rest of rein: the permission policy ([`Config::policy`]),
//! what the sandbox hides from commands ([`Config::hidden_from_commands`], with
//! [`SECRET_FILES`]), and the warnings a user should read before anything is sent
//! ([`Config::warnings`]: project rules that allow, a held project file, secrets passed to
//! commands).

use std::path::{Path, PathBuf};

use super::{file, BashRuleEntry, Config, Source, ToolRuleEntry};
use crate::permissions::RuleAction;

/// Files and folders under the home directory that hold credentials and that no build or
/// test needs: covered by empty ones inside the sandbox (`sandbox.hide_secrets`). Other
/// tools' tokens are named file by file where their folder also holds what a build reads
/// (`~/.cargo/credentials.toml`, not `~/.cargo`; gcloud's credential files, not its
/// configurations). Browser profiles are not among them: their paths vary by profile.
pub const SECRET_FILES: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".agents/env",
    ".git-credentials",
    ".netrc",
    ".docker/config.json",
    ".kube",
    ".npmrc",
    ".pypirc",
    ".config/gh/hosts.yml",
    // Agents, registries and clouds.
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".config/gcloud/application_default_credentials.json",
    ".config/gcloud/credentials.db",
    ".config/gcloud/access_tokens.db",
    ".config/gcloud/legacy_credentials",
    ".azure/msal_token_cache.json",
    ".azure/msal_token_cache.bin",
    ".azure/accessTokens.json",
    ".terraform.d/credentials.tfrc.json",
    ".gem/credentials",
    ".local/share/gem/credentials",
    ".vault-token",
    ".pgpass",
    ".my.cnf",
    ".config/github-copilot/hosts.json",
    ".config/github-copilot/apps.json",
    ".cache/huggingface/token",
    ".huggingface/token",
    ".config/hub",
    ".config/glab-cli/config.yml",
    ".config/doctl/config.yaml",
    ".fly/config.yml",
    ".s3cfg",
    ".boto",
    ".databrickscfg",
    ".config/rclone/rclone.conf",
    ".composer/auth.json",
    ".config/composer/auth.json",
    ".config/op",
    ".oci",
    ".password-store",
    ".local/share/keyrings",
    // Shell and console histories: tokens pasted on command lines.
    ".bash_history",
    ".zsh_history",
    ".zhistory",
    ".histfile",
    ".local/share/fish/fish_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".node_repl_history",
    ".sqlite_history",
    ".irb_history",
    ".rediscli_history",
    ".lesshst",
];

impl Config {
    /// What the sandbox hides from commands: [`SECRET_FILES`] under `home` and rein's own
    /// config file, unless `sandbox.hide_secrets` is off.
    pub fn hidden_from_commands(&self, home: Option<&Path>) -> Vec<PathBuf> {
        if !self.sandbox_hide_secrets.value {
            return Vec::new();
        }
        let mut out: Vec<PathBuf> = home
            .map(|h| SECRET_FILES.iter().map(|f| h.join(f)).collect())
            .unwrap_or_default();
        out.push(self.user_config_path.clone());
        out
    }

    /// Things about the resolved settings a user should know before rein sends anything:
    /// those of [`model_warnings`](Self::model_warnings), the project's settings that are
    /// held (where requests go) or that lower the user's safety, and the project rules that
    /// allow: obeyed without asking when `confined` (commands run in a working sandbox,
    /// which contains what they allow), ignored otherwise; a project's tool allows are
    /// always ignored (MCP tools run outside the sandbox).
    pub fn warnings(&self, confined: bool) -> Vec<String> {
        let mut warnings = self.model_warnings(&self.target());
        if let Some(held) = &self.held_project_config {
            warnings.push(held.to_string());
        }
        // The tools allowed for projects: a file rein cannot read is said, not dropped.
        warnings.extend(crate::consent::allowed_tools::AllowedTools::load(&self.data_dir).1);
        if let Some(routing) = self.project_routing.as_ref().filter(|r| !r.allowed) {
            warnings.push(routing.held_notice());
        }
        warnings.extend(self.project_safety.iter().cloned());
        warnings.extend(self.mcp_json_problems.iter().cloned());
        for rule in &self.bash_rules {
            if rule.action == RuleAction::Allow && rule.project {
                warnings.push(if confined {
                    format!(
                        "the project file {} allows `{}` without asking (inside the sandbox); remove the rule if you did not write it",
                        rule.file.display(),
                        rule.pattern
                    )
                } else {
                    format!(
                        "the project file {} allows `{}`, which is ignored: commands run without a sandbox, and a project may only allow what the sandbox contains",
                        rule.file.display(),
                        rule.pattern
                    )
                });
            }
        }
        for rule in &self.tool_rules {
            if rule.action == RuleAction::Allow && rule.project {
                warnings.push(format!(
                    "the project file {} allows the tools `{}`, which is ignored: MCP tools run outside the sandbox, so only your own config (or `p` in the approval prompt) can allow them",
                    rule.file.display(),
                    rule.pattern
                ));
            }
        }
        if let (Source::ProjectFile(path), [_, ..]) = (
            &self.env_passthrough.source,
            self.env_passthrough.value.as_slice(),
        ) {
            warnings.push(format!(
                "the project file {} passes {} to commands (tools.env_passthrough), so the model sees their values; remove it if you did not write that file",
                path.display(),
                self.env_passthrough.value.join(", ")
            ));
        }
        warnings
    }

    /// The permission policy these settings make for the project at `root`: the default
    /// rules, then the user's and the project's (the project's allows only when `confined`:
    /// commands run in a working sandbox; without one the default allows that run the
    /// project's code ask too, see `RulePolicy::with_confinement`); the tool-name rules for MCP tools, with the
    /// tools the user allowed for this project from the approval prompt after their own
    /// file's; the sensitive reads (rein's own config file always among them: it may hold
    /// `api_key`); and "always allow in this project" saving a command's rule to the
    /// project's config file and a tool's to rein's data folder ([`AllowedTools`]).
    ///
    /// [`AllowedTools`]: crate::consent::allowed_tools::AllowedTools
    pub fn policy(
        &self,
        root: &Path,
        home: Option<&Path>,
        confined: bool,
    ) -> Result<crate::permissions::policy::RulePolicy, crate::permissions::policy::PolicyError>
    {
        use crate::consent::allowed_tools::AllowedTools;
        use crate::permissions::policy::RuleList;
        let mut sensitive = self.sensitive_reads.value.clone();
        sensitive.push(crate::permissions::rules::escape_glob(
            &self.user_config_path.display().to_string(),
        ));
        let bash: Vec<BashRuleEntry> = self
            .bash_rules
            .iter()
            .filter(|r| confined || !(r.project && r.action == RuleAction::Allow))
            .cloned()
            .collect();
        let (stored, _) = AllowedTools::load(&self.data_dir);
        let mut tools: Vec<ToolRuleEntry> = Vec::with_capacity(self.tool_rules.len());
        let (users, projects): (Vec<_>, Vec<_>) =
            self.tool_rules.iter().cloned().partition(|r| !r.project);
        tools.extend(users);
        tools.extend(
            stored
                .patterns(root)
                .into_iter()
                .map(|pattern| ToolRuleEntry {
                    pattern,
                    action: RuleAction::Allow,
                    file: stored.path().to_path_buf(),
                    project: false,
                }),
        );
        tools.extend(projects);
        let project_file = self.project_config_path.clone();
        let data_dir = self.data_dir.clone();
        let project = root.to_path_buf();
        let saver: crate::permissions::policy::RuleSaver =
            std::sync::Arc::new(move |rules: &[(RuleList, &str)]| {
                let commands: Vec<(RuleList, &str)> = rules
                    .iter()
                    .copied()
                    .filter(|(list, _)| *list == RuleList::Bash)
                    .collect();
                let tools: Vec<&str> = rules
                    .iter()
                    .filter(|(list, _)| *list == RuleList::Tools)
                    .map(|(_, pattern)| *pattern)
                    .collect();
                let mut written = None;
                if !tools.is_empty() {
                    let (mut store, _) = AllowedTools::load(&data_dir);
                    // The error names the file (and, for one rein cannot read, the way out).
                    store.allow(&project, &tools).map_err(|e| e.to_string())?;
                    written = Some(store.path().to_path_buf());
                }
                if !commands.is_empty() {
                    file::save_allow_rules(&project_file, &commands)?;
                    written = Some(project_file.clone());
                }
                Ok(written.unwrap_or_else(|| project_file.clone()))
            });
        // This rein's spill folders (`<spill>/<pid>-<turn>`, see `context::spill`) are the
        // only part of the data folder read without asking.
        let spill = crate::permissions::rules::escape_glob(
            &self.data_dir.join("spill").display().to_string(),
        );
        let pid = std::process::id();
        let shown = [format!("{spill}/{pid}-*"), format!("{spill}/{pid}-*/**")];
        let config_dirs: Vec<PathBuf> = self
            .user_config_path
            .parent()
            .map(Path::to_path_buf)
            .into_iter()
            .collect();
        Ok(
            crate::permissions::policy::RulePolicy::new(root, &bash, &sensitive, home)?
                .with_tool_rules(&tools)?
                .with_rein_folders(&self.data_dir, &config_dirs, &shown)
                .with_saver(saver)
                .with_confinement(confined),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::paths::PathRules;

    /// What the sandbox hides, a read asks about: each secret file, or a file in each
    /// secret folder, matches a default sensitive read.
    #[test]
    fn every_hidden_secret_is_a_sensitive_read() {
        let home = Path::new("/home/u");
        let defaults: Vec<String> = crate::permissions::DEFAULT_SENSITIVE_READS
            .iter()
            .map(|s| s.to_string())
            .collect();
        let rules = PathRules::new(Path::new("/p"), &defaults, Some(home)).unwrap();
        for entry in SECRET_FILES {
            let path = home.join(entry);
            let asks = [path.clone(), path.join("config"), path.join("x/y")]
                .iter()
                .any(|p| rules.is_sensitive(&p.display().to_string()).is_some());
            assert!(asks, "reading {entry} does not ask");
        }
        // Neighbours builds read stay readable.
        for entry in [
            ".cargo/config.toml",
            ".cargo/registry/x",
            ".config/gcloud/configurations/config_default",
            ".azure/config",
            ".gitconfig",
        ] {
            let path = home.join(entry).display().to_string();
            assert_eq!(rules.is_sensitive(&path), None, "{entry}");
        }
    }
}
