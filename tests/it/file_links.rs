//! The file tools through links, as a hostile model would try them (issue 11, critical):
//! the real agent loop against the scripted server, the real permission checker
//! (`RulePolicy` with the default rules, every `ask` refused as headless without `--yes`
//! does), real files. Each case plants links first (as an allowed command or a cloned
//! repository could), then asks `write_file` or `read_file` to go through them, and checks
//! both the verdict the model reads and what is on disk afterwards.

use crate::support;

use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;

use rein_core::agent::{self, ApprovalDecision};
use rein_core::permissions::policy::RulePolicy;
use serde_json::json;
use support::agent::{scripted_config, tool_results, turn_with};
use support::{Reply, ScriptedServer};

/// Run one turn in which the model makes `calls` (tool, arguments), every approval
/// refused; the results the model read, in order.
async fn attempt(
    root: &Path,
    home: &Path,
    calls: &[(&str, serde_json::Value)],
) -> Vec<(String, bool)> {
    let args: Vec<(String, String)> = calls
        .iter()
        .map(|(name, a)| (name.to_string(), a.to_string()))
        .collect();
    let refs: Vec<(&str, &str)> = args.iter().map(|(n, a)| (n.as_str(), a.as_str())).collect();
    let server = ScriptedServer::start(vec![Reply::tool_calls(&refs), Reply::text("done")])
        .await
        .unwrap();
    let mut config = scripted_config(&server, root);
    let sensitive: Vec<String> = rein_core::config::DEFAULT_SENSITIVE_READS
        .iter()
        .map(|s| s.to_string())
        .collect();
    config.policy = Arc::new(RulePolicy::new(root, &[], &sensitive, Some(home)).unwrap());
    let mut handle = agent::spawn(config).unwrap();
    let events = turn_with(&mut handle, "go", |_| ApprovalDecision::Deny {
        feedback: None,
    })
    .await;
    tool_results(&events)
        .into_iter()
        .map(|(_, text, is_error)| (text, is_error))
        .collect()
}

struct Setup {
    project: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Setup {
    fn new() -> Setup {
        let s = Setup {
            project: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(s.root().join(".git")).unwrap();
        std::fs::write(s.root().join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::create_dir_all(s.root().join("src")).unwrap();
        s
    }

    fn root(&self) -> std::path::PathBuf {
        std::fs::canonicalize(self.project.path()).unwrap()
    }

    fn home(&self) -> std::path::PathBuf {
        std::fs::canonicalize(self.home.path()).unwrap()
    }
}

fn write(path: &str, content: &str) -> (&'static str, serde_json::Value) {
    ("write_file", json!({ "path": path, "content": content }))
}

#[tokio::test]
async fn a_dangling_link_is_judged_where_it_points() {
    let s = Setup::new();
    let root = s.root();
    symlink(".rein/config.toml", root.join("cfg")).unwrap();
    symlink(".git/commondir", root.join("x")).unwrap();
    let aliases = s.home().join(".bash_aliases");
    symlink(&aliases, root.join("a")).unwrap();
    let results = attempt(
        &root,
        &s.home(),
        &[
            write(
                "cfg",
                "[[permissions.bash]]\npattern = \"*\"\naction = \"allow\"\n",
            ),
            write("x", "../evil"),
            write("a", "alias ls='rm -rf ~'"),
        ],
    )
    .await;
    assert_eq!(results.len(), 3);
    assert!(
        results[0].1 && results[0].0.contains("denied"),
        "{results:?}"
    );
    assert!(results[0].0.contains(".rein"), "{results:?}");
    assert!(
        results[1].1 && results[1].0.contains("denied"),
        "{results:?}"
    );
    // Outside the project: it asks, and the refusal stands.
    assert!(
        results[2].1 && results[2].0.contains("approval was refused"),
        "{results:?}"
    );
    assert!(!root.join(".rein/config.toml").exists());
    assert!(!root.join(".git/commondir").exists());
    assert!(!aliases.exists());
}

#[tokio::test]
async fn a_long_path_cannot_outspend_the_link_budget() {
    let s = Setup::new();
    let root = s.root();
    let home = s.home();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE KEY").unwrap();
    let outside = tempfile::tempdir().unwrap();
    symlink(root.join(".git"), root.join("g")).unwrap();
    symlink(outside.path(), root.join("o")).unwrap();
    symlink(home.join(".ssh/id_rsa"), root.join("k")).unwrap();
    let long = "src/../".repeat(70);
    let results = attempt(
        &root,
        &home,
        &[
            write(
                &format!("{long}g/config"),
                "[core]\nfsmonitor = touch /tmp/pwned\n",
            ),
            write(&format!("{long}o/escape.txt"), "out"),
            ("read_file", json!({ "path": format!("{long}k") })),
        ],
    )
    .await;
    assert!(
        results[0].1 && results[0].0.contains("denied"),
        "{results:?}"
    );
    assert!(
        results[1].1 && results[1].0.contains("approval was refused"),
        "{results:?}"
    );
    assert!(
        results[2].1 && results[2].0.contains("approval was refused"),
        "{results:?}"
    );
    assert!(!results[2].0.contains("PRIVATE KEY"));
    assert!(!root.join(".git/config").exists());
    assert!(!outside.path().join("escape.txt").exists());
}

#[tokio::test]
async fn case_variants_nested_settings_and_new_repositories() {
    let s = Setup::new();
    let root = s.root();
    let results = attempt(
        &root,
        &s.home(),
        &[
            write(".GIT/config", "x"),
            write("sub/.Rein/config.toml", "x"),
            write("vendor/HEAD", "ref: refs/heads/main\n"),
            write("vendor/config", "[core]\nfsmonitor = sh -c evil\n"),
            write("vendor/objects/keep", ""),
            write("src/lib.rs", "fn ok() {}\n"),
        ],
    )
    .await;
    assert!(
        results[0].1 && results[0].0.contains("denied"),
        "{results:?}"
    );
    assert!(
        results[1].1 && results[1].0.contains("denied"),
        "{results:?}"
    );
    // HEAD and config alone are ordinary files; the third piece of a repository asks.
    assert!(!results[2].1, "{results:?}");
    assert!(!results[3].1, "{results:?}");
    assert!(
        results[4].1 && results[4].0.contains("approval was refused"),
        "{results:?}"
    );
    assert!(!root.join("vendor/objects").exists());
    assert!(!results[5].1, "{results:?}");
    assert_eq!(
        std::fs::read_to_string(root.join("src/lib.rs")).unwrap(),
        "fn ok() {}\n"
    );
    assert!(!root.join("sub/.Rein").exists());
}

#[tokio::test]
async fn an_ordinary_link_inside_the_project_still_works() {
    let s = Setup::new();
    let root = s.root();
    std::fs::write(root.join("src/real.rs"), "old\n").unwrap();
    symlink("src/real.rs", root.join("alias.rs")).unwrap();
    let results = attempt(
        &root,
        &s.home(),
        &[
            write("alias.rs", "new\n"),
            ("read_file", json!({ "path": "alias.rs" })),
        ],
    )
    .await;
    assert!(!results[0].1, "{results:?}");
    assert!(results[0].0.contains("src/real.rs"), "{results:?}");
    // The write went to the link's target; the link is still a link.
    assert_eq!(
        std::fs::read_to_string(root.join("src/real.rs")).unwrap(),
        "new\n"
    );
    assert!(std::fs::symlink_metadata(root.join("alias.rs"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(!results[1].1 && results[1].0.contains("new"), "{results:?}");
}
