//! The bash permission checker through its public API, with the default rules: the rules
//! themselves (parsing, precedence, reasons) in `rules`, what the checker sees through
//! (operators, quotes, wrappers, substitutions, redirections, limits) in `seen_through`, the
//! grants an ask offers in `grants`, the red-team findings as regressions in `redteam`, the
//! read-only forms of everyday programs and the forms of them that still ask in
//! `read_only`, the share of everyday commands that ask in `everyday`, each option of the
//! programs rein sees through taking exactly its words in `options`, the property
//! that no composition hides a denied command in `compositions`, and the prefixes "allow
//! for this session" offers in `prefixes`.

use crate::support;

use rein_core::permissions::bash::{judge, Judgement};
use rein_core::permissions::policy::RulePolicy;
use rein_core::permissions::rules::{BashRule, BashRules, RuleAction, RuleOrigin};
use rein_core::permissions::DEFAULT_SENSITIVE_READS;

use RuleAction::Allow;

mod compositions;
mod everyday;
mod expansions;
mod grants;
mod options;
mod prefixes;
mod read_only;
mod redteam;
mod round4;
mod rules;
mod seen_through;

fn defaults() -> BashRules {
    BashRules::new(BashRules::defaults()).expect("the default rules compile")
}

/// The policy the agent runs with: the default rules, the default sensitive reads, and a
/// project and a home folder of its own; its bash verdicts include the sensitive-file check.
struct Policy {
    policy: RulePolicy,
    _project: tempfile::TempDir,
    _home: tempfile::TempDir,
}

impl Policy {
    fn new() -> Policy {
        Policy::confined(true)
    }

    /// The policy where commands run without a working sandbox.
    fn unconfined() -> Policy {
        Policy::confined(false)
    }

    fn confined(confined: bool) -> Policy {
        let project = tempfile::tempdir().expect("a project folder");
        let home = tempfile::tempdir().expect("a home folder");
        let sensitive: Vec<String> = DEFAULT_SENSITIVE_READS
            .iter()
            .map(|s| s.to_string())
            .collect();
        let policy = RulePolicy::new(project.path(), &[], &sensitive, Some(home.path()))
            .expect("the default policy builds")
            .with_confinement(confined);
        Policy {
            policy,
            _project: project,
            _home: home,
        }
    }

    /// The project folder.
    fn root(&self) -> &std::path::Path {
        self._project.path()
    }

    /// Write `files` (paths under the project, or under the home with `~/`).
    fn with_files(self, files: &[&str]) -> Policy {
        for file in files {
            let path = match file.strip_prefix("~/") {
                Some(rest) => self._home.path().join(rest),
                None => self._project.path().join(file),
            };
            std::fs::create_dir_all(path.parent().expect("a folder")).expect("folders");
            std::fs::write(&path, "x").expect("a file");
        }
        self
    }

    fn check(&self, cases: &[(&str, RuleAction)]) {
        let mut failures = Vec::new();
        for (command, expected) in cases {
            let judgement = self.policy.judge_bash(command);
            if judgement.action != *expected {
                failures.push(format!(
                    "{command:?}: expected {expected}, got {} ({})",
                    judgement.action, judgement.reason
                ));
            }
        }
        assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    }
}

fn check(rules: &BashRules, cases: &[(&str, RuleAction)]) {
    let mut failures = Vec::new();
    for (command, expected) in cases {
        let judgement = judge(command, rules);
        if judgement.action != *expected {
            failures.push(format!(
                "{command:?}: expected {expected}, got {} ({})",
                judgement.action, judgement.reason
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

fn with_grants(mut rules: BashRules, judgement: &Judgement) -> BashRules {
    for grant in &judgement.grants {
        rules
            .push(BashRule::new(grant.clone(), Allow, RuleOrigin::Session))
            .unwrap();
    }
    rules
}
