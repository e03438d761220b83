//! Unit tests for the file tools' path rules: inside and outside the project, git and rein's
//! folders, steering and instruction files, links and git pointers, sensitive reads.

use super::*;
use crate::permissions::Grant;

fn rules(root: &Path, home: &Path) -> PathRules {
    let sensitive: Vec<String> = crate::permissions::DEFAULT_SENSITIVE_READS
        .iter()
        .map(|s| s.to_string())
        .collect();
    PathRules::new(root, &sensitive, Some(home)).unwrap()
}

struct Dirs {
    project: tempfile::TempDir,
    home: tempfile::TempDir,
    outside: tempfile::TempDir,
}

fn dirs() -> Dirs {
    Dirs {
        project: tempfile::tempdir().unwrap(),
        home: tempfile::tempdir().unwrap(),
        outside: tempfile::tempdir().unwrap(),
    }
}

/// rein's data folder is judged by the name as given and by where it leads: a link in
/// the project into it asks, and so does a link inside it that leads out.
#[test]
fn reads_into_reins_data_folder_ask_by_either_name() {
    let d = dirs();
    let root = std::fs::canonicalize(d.project.path()).unwrap();
    let data = std::fs::canonicalize(d.outside.path()).unwrap();
    std::fs::write(data.join("sessions.jsonl"), "{}").unwrap();
    std::os::unix::fs::symlink(data.join("sessions.jsonl"), root.join("log")).unwrap();
    std::fs::write(root.join("notes.txt"), "n").unwrap();
    std::os::unix::fs::symlink(root.join("notes.txt"), data.join("out")).unwrap();
    let r = rules(&root, d.home.path()).with_rein_folders(&data, &[], &[]);
    for path in ["log", data.join("out").to_str().unwrap()] {
        let v = r.read(path);
        assert_eq!(v.action, RuleAction::Ask, "{path}: {}", v.reason);
        assert!(v.reason.contains("rein's data folder"), "{}", v.reason);
    }
    assert_eq!(r.read("notes.txt").action, RuleAction::Allow);
}

/// The folder a sensitive pattern names before its first wildcard, which a read of
/// the folder itself is judged by (`grep -r . ~/.ssh`).
#[test]
fn a_patterns_literal_folder_stops_at_the_separator_before_its_wildcard() {
    let folder = |p: &str| literal_folder(p).map(|f| f.display().to_string());
    assert_eq!(folder("/home/u/.ssh/**").as_deref(), Some("/home/u/.ssh"));
    assert_eq!(
        folder("/home/u/.aws/cred*").as_deref(),
        Some("/home/u/.aws")
    );
    // No wildcard: the whole path.
    assert_eq!(folder("/etc/shadow").as_deref(), Some("/etc/shadow"));
    // Relative, starting with a wildcard, or the root itself: none.
    for pattern in ["a/b/*", "**/.env", "/", "/x*"] {
        assert_eq!(folder(pattern), None, "{pattern}");
    }
}

/// A write that would make a folder a repository git acts on asks: a pointer file, or
/// the last of HEAD, config and objects/; the same names elsewhere are plain files.
#[test]
fn writes_that_would_make_a_git_repository_ask() {
    let d = dirs();
    let root = std::fs::canonicalize(d.project.path()).unwrap();
    std::fs::create_dir_all(root.join("x/objects")).unwrap();
    std::fs::write(root.join("x/HEAD"), "ref: refs/heads/main").unwrap();
    let r = rules(&root, d.home.path());
    for path in ["x/config", "sub/gitdir", "sub/commondir"] {
        let v = r.write(path);
        assert_eq!(v.action, RuleAction::Ask, "{path}: {}", v.reason);
        assert!(v.reason.contains("git would run"), "{}", v.reason);
    }
    for path in ["y/config", "x/notes.txt", "HEADER"] {
        assert_eq!(r.write(path).action, RuleAction::Allow, "{path}");
    }
    // HEAD as the last part asks too.
    std::fs::create_dir_all(root.join("w/objects")).unwrap();
    std::fs::write(root.join("w/config"), "[core]").unwrap();
    assert_eq!(r.write("w/HEAD").action, RuleAction::Ask);
    // One part alone completes nothing, and a folder that has all three is not
    // completed by another file in it.
    std::fs::create_dir_all(root.join("z/objects")).unwrap();
    std::fs::write(root.join("z/config"), "[core]").unwrap();
    std::fs::write(root.join("z/HEAD"), "ref: refs/heads/main").unwrap();
    for path in ["e/HEAD", "f/objects/ab/cd", "z/notes.txt"] {
        assert_eq!(r.write(path).action, RuleAction::Allow, "{path}");
    }
}

/// An instruction file asks wherever it is: later sessions read it as instructions.
#[test]
fn writing_an_instruction_file_asks() {
    let d = dirs();
    let root = std::fs::canonicalize(d.project.path()).unwrap();
    let r = rules(&root, d.home.path());
    for path in ["AGENTS.md", "CLAUDE.md", "sub/dir/agents.md", "./Claude.MD"] {
        let v = r.write(path);
        assert_eq!(v.action, RuleAction::Ask, "{path}: {}", v.reason);
        assert!(v.reason.contains("is an instruction file"), "{}", v.reason);
    }
    for path in ["AGENTS.md.bak", "docs/AGENTS.txt", "MY-AGENTS.md"] {
        assert_eq!(r.write(path).action, RuleAction::Allow, "{path}");
    }
}

/// Every kind of steering file asks wherever it stands and in any case, with the
/// reason its kind gives; names that only look alike are plain files.
#[test]
fn writing_a_steering_file_asks_with_its_reason() {
    let d = dirs();
    let root = std::fs::canonicalize(d.project.path()).unwrap();
    let r = rules(&root, d.home.path());
    for (path, kind) in [
        (".cargo/config.toml", Kind::HostTool),
        ("crates/x/.CARGO/config", Kind::HostTool),
        (".envrc", Kind::HostTool),
        ("web/.npmrc", Kind::HostTool),
        (".pre-commit-config.yaml", Kind::HostTool),
        (".vscode/tasks.json", Kind::HostTool),
        (".mcp.json", Kind::HostTool),
        (".claude/settings.json", Kind::AgentFolder),
        (".claude/hooks/check.sh", Kind::AgentFolder),
        (".claude/skills/review/SKILL.md", Kind::AgentFolder),
        (".claude/commands/review.md", Kind::AgentFolder),
        ("sub/.agents/skills/a/SKILL.md", Kind::AgentFolder),
        (".codex/config.toml", Kind::AgentFolder),
        ("CLAUDE.md", Kind::Instructions),
        ("docs/GEMINI.md", Kind::Instructions),
        (".github/copilot-instructions.md", Kind::Instructions),
    ] {
        let v = r.write(path);
        assert_eq!(v.action, RuleAction::Ask, "{path}: {}", v.reason);
        assert!(v.reason.contains(kind.why()), "{path}: {}", v.reason);
    }
    for path in [
        "src/main.rs",
        "cargo/config.toml",
        ".cargo/config.toml.md",
        ".vscode/extensions.json",
        ".github/workflows/ci.yml",
        "docs/claude.txt",
        "envrc",
    ] {
        assert_eq!(r.write(path).action, RuleAction::Allow, "{path}");
    }
}

/// A link is judged by its name as well as where it leads: writing `.envrc` that
/// leads to `notes.txt` changes what direnv runs.
#[test]
fn a_link_named_like_a_steering_file_asks() {
    let d = dirs();
    let root = std::fs::canonicalize(d.project.path()).unwrap();
    std::fs::write(root.join("notes.txt"), "n").unwrap();
    std::os::unix::fs::symlink(root.join("notes.txt"), root.join(".envrc")).unwrap();
    std::os::unix::fs::symlink(root.join(".claude"), root.join("cfg")).unwrap();
    let r = rules(&root, d.home.path());
    let v = r.write(".envrc");
    assert_eq!(v.action, RuleAction::Ask, "{}", v.reason);
    assert!(v.reason.contains("(through "), "{}", v.reason);
    assert_eq!(v.resolved, root.join("notes.txt"));
    // And the other way round: an innocent name that leads into `.claude/`.
    assert_eq!(r.write("cfg/settings.json").action, RuleAction::Ask);
    assert_eq!(r.write("notes.txt").action, RuleAction::Allow);
}

/// Files known to steer only at start (an import, a hook's script) ask once added,
/// by their own path or through a link, in every clone of the rules.
#[test]
fn files_added_at_start_ask_as_their_kind_says() {
    let d = dirs();
    let root = std::fs::canonicalize(d.project.path()).unwrap();
    std::fs::create_dir_all(root.join("docs")).unwrap();
    std::fs::write(root.join("docs/style.md"), "s").unwrap();
    std::os::unix::fs::symlink(root.join("docs/style.md"), root.join("style")).unwrap();
    let r = rules(&root, d.home.path())
        .with_steering_files(&[PathBuf::from("docs/style.md")], Kind::Instructions);
    let clone = r.clone();
    r.add_steering_files(&[root.join("scripts/check.py")], Kind::HostTool);
    for (rules, path, kind) in [
        (&r, "docs/style.md", Kind::Instructions),
        (&r, "style", Kind::Instructions),
        (&r, "./docs/../docs/style.md", Kind::Instructions),
        (&clone, "scripts/check.py", Kind::HostTool),
    ] {
        let v = rules.write(path);
        assert_eq!(v.action, RuleAction::Ask, "{path}: {}", v.reason);
        assert!(v.reason.contains(kind.why()), "{path}: {}", v.reason);
    }
    for path in ["docs/other.md", "scripts/check.py.bak"] {
        assert_eq!(r.write(path).action, RuleAction::Allow, "{path}");
    }
}

/// "Allow for the session" on a steering file's question allows that file, never
/// another steering file, nor one added later.
#[test]
fn a_session_grant_covers_only_the_steering_file_it_named() {
    use crate::permissions::policy::RulePolicy;
    use crate::permissions::{PermissionPolicy, ToolRequest, Verdict};
    let d = dirs();
    let root = std::fs::canonicalize(d.project.path()).unwrap();
    let sensitive: Vec<String> = crate::permissions::DEFAULT_SENSITIVE_READS
        .iter()
        .map(|s| s.to_string())
        .collect();
    let policy = RulePolicy::new(&root, &[], &sensitive, Some(d.home.path())).unwrap();
    let write = |path: &str| {
        let args = serde_json::json!({"path": path, "content": "x"});
        policy.check(&ToolRequest {
            tool: "write_file",
            args: &args,
            root: &root,
        })
    };
    let Verdict::Ask { grants, .. } = write(".cargo/config.toml") else {
        panic!("a cargo config was not asked about")
    };
    assert_eq!(grants, [Grant::Write(root.join(".cargo/config.toml"))]);
    policy.grant(&grants);
    assert_eq!(write(".cargo/config.toml"), Verdict::Allow);
    assert_eq!(write("./.cargo/../.cargo/config.toml"), Verdict::Allow);
    for path in [
        ".cargo/config",
        ".envrc",
        ".claude/settings.json",
        "AGENTS.md",
    ] {
        assert!(matches!(write(path), Verdict::Ask { .. }), "{path}");
    }
    PermissionPolicy::add_steering_files(&policy, &[root.join("docs/x.md")], Kind::Instructions);
    assert!(matches!(write("docs/x.md"), Verdict::Ask { .. }));
    assert_eq!(write("src/lib.rs"), Verdict::Allow);
}

#[test]
fn writes_inside_allow_outside_ask_git_and_rein_deny() {
    let d = dirs();
    std::fs::create_dir(d.project.path().join(".git")).unwrap();
    let r = rules(d.project.path(), d.home.path());
    assert_eq!(r.write("src/main.rs").action, RuleAction::Allow);
    assert_eq!(r.write("new/dir/file.txt").action, RuleAction::Allow);
    let outside = d.outside.path().join("x").display().to_string();
    assert_eq!(r.write(&outside).action, RuleAction::Ask);
    assert_eq!(r.write("../escape.txt").action, RuleAction::Ask);
    assert_eq!(r.write("src/../../escape.txt").action, RuleAction::Ask);
    assert_eq!(r.write(".git/config").action, RuleAction::Deny);
    assert_eq!(r.write("./.git/hooks/pre-commit").action, RuleAction::Deny);
    assert_eq!(r.write(".rein/config.toml").action, RuleAction::Deny);
    assert_eq!(r.write("src/../.rein/config.toml").action, RuleAction::Deny);
    let abs = d.project.path().join(".rein/x").display().to_string();
    assert_eq!(r.write(&abs).action, RuleAction::Deny);
    // Nested repositories and other repositories are protected too.
    assert_eq!(r.write("vendor/lib/.git/config").action, RuleAction::Deny);
    assert_eq!(
        r.write("sub/.git/hooks/pre-commit").action,
        RuleAction::Deny
    );
    let other_repo = d
        .outside
        .path()
        .join("repo/.git/config")
        .display()
        .to_string();
    assert_eq!(r.write(&other_repo).action, RuleAction::Deny);
    // A name that only starts like a protected one is fine.
    assert_eq!(
        r.write(".github/workflows/ci.yml").action,
        RuleAction::Allow
    );
    assert_eq!(r.write(".reinrc").action, RuleAction::Allow);
}

#[test]
fn symlinks_are_judged_where_they_lead() {
    let d = dirs();
    let p = d.project.path();
    std::os::unix::fs::symlink(d.outside.path(), p.join("out")).unwrap();
    std::fs::create_dir(p.join(".rein")).unwrap();
    std::os::unix::fs::symlink(p.join(".rein"), p.join("settings")).unwrap();
    let r = rules(p, d.home.path());
    assert_eq!(
        r.write("out/file").action,
        RuleAction::Ask,
        "a link out of the project"
    );
    assert_eq!(r.write("settings/config.toml").action, RuleAction::Deny);
    // A link from outside into the project is inside.
    let back = d.outside.path().join("back");
    std::os::unix::fs::symlink(p, &back).unwrap();
    assert_eq!(
        r.write(&back.join("ok.txt").display().to_string()).action,
        RuleAction::Allow
    );
}

#[test]
fn a_git_pointer_file_protects_its_target() {
    let d = dirs();
    let p = d.project.path();
    let gitdir = d.outside.path().join("worktrees/feature");
    std::fs::create_dir_all(&gitdir).unwrap();
    std::fs::write(p.join(".git"), format!("gitdir: {}\n", gitdir.display())).unwrap();
    let r = rules(p, d.home.path());
    let target = gitdir.join("HEAD").display().to_string();
    assert_eq!(r.write(&target).action, RuleAction::Deny);
}

#[test]
fn sensitive_reads_ask_and_others_allow() {
    let d = dirs();
    let p = d.project.path();
    let home = d.home.path();
    let r = rules(p, home);
    assert_eq!(r.read("src/main.rs").action, RuleAction::Allow);
    assert_eq!(r.read("/etc/hostname").action, RuleAction::Allow);
    let key = home.join(".ssh/id_ed25519").display().to_string();
    assert_eq!(r.read(&key).action, RuleAction::Ask);
    let aws = home.join(".aws/credentials").display().to_string();
    assert_eq!(r.read(&aws).action, RuleAction::Ask);
    assert_eq!(r.read(".env").action, RuleAction::Ask);
    assert_eq!(r.read("deploy/.env").action, RuleAction::Ask);
    assert_eq!(r.read(".env.example").action, RuleAction::Allow);
    // Through `..` from the project, and through a link with an innocent name.
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "secret").unwrap();
    std::os::unix::fs::symlink(home.join(".ssh/id_rsa"), p.join("notes.txt")).unwrap();
    assert_eq!(r.read("notes.txt").action, RuleAction::Ask);
    assert!(r.read("notes.txt").reason.contains("~/.ssh/**"));
}

#[test]
fn bad_globs_name_the_pattern() {
    let e = PathRules::new(Path::new("/"), &["a[".to_string()], None).unwrap_err();
    assert_eq!(e.pattern, "a[");
}

#[test]
fn resolve_handles_dots_and_missing_tails() {
    let d = dirs();
    let base = resolve(d.project.path(), Path::new("/"));
    let base = base.unwrap();
    assert_eq!(
        resolve(Path::new("a/./b/../c"), &base),
        Some(base.join("a/c"))
    );
    assert_eq!(
        resolve(Path::new("../../.."), &base).unwrap().parent(),
        None
    );
}
