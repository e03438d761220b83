use super::*;

/// A home and a project (inside a repository) under one temporary folder.
struct Places {
    _dir: tempfile::TempDir,
    home: PathBuf,
    repo: PathBuf,
    project: PathBuf,
}

impl Places {
    fn new() -> Places {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let repo = dir.path().join("repo");
        let project = repo.join("app");
        for d in [&home, &repo.join(".git"), &project] {
            std::fs::create_dir_all(d).unwrap();
        }
        Places {
            _dir: dir,
            home,
            repo,
            project,
        }
    }

    fn discover(&self) -> CommandSet {
        CommandSet::discover(Some(&self.home), &self.project, &|n: &str| {
            ["help", "clear", "exit"].contains(&n)
        })
    }
}

/// Write `<base>/.agents/commands/<rel>`; returns its path.
fn write(base: &Path, rel: &str, text: impl AsRef<[u8]>) -> PathBuf {
    let path = base.join(COMMANDS_DIR).join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

/// Write `<base>/.claude/commands/<rel>` (Claude Code's folder); returns its path.
fn write_claude(base: &Path, rel: &str, text: impl AsRef<[u8]>) -> PathBuf {
    let path = base.join(CLAUDE_COMMANDS_DIR).join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

fn names(set: &CommandSet) -> Vec<&str> {
    set.iter().map(|c| c.name.as_str()).collect()
}

#[test]
fn nothing_anywhere_is_no_commands_and_no_notices() {
    let p = Places::new();
    let set = p.discover();
    assert!(set.is_empty());
    assert!(set.notices.is_empty(), "{:?}", set.notices);
    let set = CommandSet::discover(None, &p.project, &|_| false);
    assert!(set.is_empty());
}

#[test]
fn front_matter_gives_description_and_hint_and_the_body_is_the_prompt() {
    let p = Places::new();
    let path = write(
        &p.project,
        "fix-issue.md",
        "---\ndescription: Fix a GitHub issue\nargument-hint: <issue-number>\nmodel: ignored\n---\n\nFix issue #$ARGUMENTS.\n",
    );
    let set = p.discover();
    let cmd = set.get("fix-issue").unwrap();
    assert_eq!(cmd.description, "Fix a GitHub issue");
    assert_eq!(cmd.argument_hint.as_deref(), Some("<issue-number>"));
    assert_eq!(cmd.body, "Fix issue #$ARGUMENTS.");
    assert_eq!(cmd.usage(), "/fix-issue <issue-number>");
    assert_eq!(cmd.path, path);
    assert_eq!(cmd.label, ".agents/commands/fix-issue.md");
    assert_eq!(cmd.source, CommandSource::Project);
    assert!(set.notices.is_empty(), "{:?}", set.notices);
}

#[test]
fn without_front_matter_the_first_line_is_the_description() {
    let p = Places::new();
    write(
        &p.home,
        "review.md",
        "\u{feff}\n# Review   the\tstaged diff\n\nLook for bugs.\n",
    );
    let long = format!("{}\nmore", "word ".repeat(60));
    write(&p.home, "long.md", &long);
    let set = p.discover();
    let review = set.get("review").unwrap();
    assert_eq!(review.description, "Review the staged diff");
    assert_eq!(review.argument_hint, None);
    assert_eq!(review.body, "# Review   the\tstaged diff\n\nLook for bugs.");
    assert_eq!(review.label, "~/.agents/commands/review.md");
    assert_eq!(review.source, CommandSource::User);
    let long = set.get("long").unwrap();
    assert_eq!(long.description.chars().count(), MAX_DESCRIPTION_CHARS);
    assert!(long.description.ends_with('…'));
}

#[test]
fn the_project_wins_over_the_repository_root_and_the_user() {
    let p = Places::new();
    write(&p.home, "review.md", "user review");
    write(&p.home, "mine.md", "user only");
    write(&p.repo, "review.md", "root review");
    write(&p.repo, "deploy.md", "root deploy");
    write(&p.project, "review.md", "project review");
    let set = p.discover();
    assert_eq!(names(&set), ["deploy", "mine", "review"]);
    assert_eq!(set.get("review").unwrap().body, "project review");
    assert_eq!(set.get("deploy").unwrap().body, "root deploy");
    assert_eq!(set.get("mine").unwrap().source, CommandSource::User);
    assert!(set.notices.is_empty(), "a clash is not a problem");
}

/// Claude Code's `.claude/commands` are commands too, with the same front matter (its own
/// keys ignored); beside `.agents/commands` in the same folder the `.agents` one wins, and
/// a closer folder wins over both as usual. The one in force names what it hides.
#[test]
fn claude_code_commands_are_read_and_agents_wins_in_the_same_folder() {
    let p = Places::new();
    let path = write_claude(
        &p.project,
        "commit.md",
        "---\nallowed-tools: Bash(git add:*), Bash(git commit:*)\ndescription: Commit staged work\nargument-hint: [message]\n---\nCommit with message $1.\n",
    );
    write_claude(&p.home, "mine.md", "user claude command");
    write_claude(&p.project, "review.md", "claude review");
    write(&p.project, "review.md", "agents review");
    write(&p.home, "deploy.md", "user agents deploy");
    write_claude(&p.repo, "deploy.md", "root claude deploy");
    write_claude(&p.project, "ns/x.md", "namespaced");
    let set = p.discover();
    assert!(set.notices.is_empty(), "{:?}", set.notices);
    assert_eq!(names(&set), ["commit", "deploy", "mine", "ns:x", "review"]);
    let commit = set.get("commit").unwrap();
    assert_eq!(commit.description, "Commit staged work");
    assert_eq!(commit.argument_hint.as_deref(), Some("[message]"));
    assert_eq!(commit.path, path);
    assert_eq!(commit.label, ".claude/commands/commit.md");
    assert_eq!(commit.source, CommandSource::Project);
    assert!(commit.shadows.is_empty());
    assert_eq!(
        set.expand("/commit wip").unwrap().text,
        "Commit with message wip."
    );
    let mine = set.get("mine").unwrap();
    assert_eq!(
        (mine.source, mine.label.as_str()),
        (CommandSource::User, "~/.claude/commands/mine.md")
    );
    let review = set.get("review").unwrap();
    assert_eq!(review.body, "agents review");
    assert_eq!(review.shadows, [".claude/commands/review.md"]);
    let deploy = set.get("deploy").unwrap();
    assert_eq!(
        deploy.body, "root claude deploy",
        "the repository wins over the user"
    );
    assert_eq!(deploy.shadows, ["~/.agents/commands/deploy.md"]);
    // The project's command that hides the user's own says so when it runs; one that
    // hides only another project file, or the user's own command, says nothing.
    assert_eq!(
        deploy.hides_users(),
        Some(format!(
            "/deploy runs the project's {}, not your own ~/.agents/commands/deploy.md, which \
             it shadows",
            deploy.label
        ))
    );
    assert_eq!(review.hides_users(), None);
    assert_eq!(mine.hides_users(), None);
}

#[test]
fn subfolders_are_namespaces() {
    let p = Places::new();
    write(&p.project, "frontend/test.md", "run the frontend tests");
    write(&p.project, "a/b/deep.md", "two levels");
    write(&p.project, "a/b/c/deeper.md", "too deep: not read");
    let set = p.discover();
    assert_eq!(names(&set), ["a:b:deep", "frontend:test"]);
}

#[test]
fn malformed_files_are_skipped_with_a_notice_naming_them() {
    let p = Places::new();
    write(&p.project, "good.md", "fine");
    write(&p.project, "unclosed.md", "---\ndescription: x\n");
    write(
        &p.project,
        "twice.md",
        "---\ndescription: a\ndescription: b\n---\nbody",
    );
    write(
        &p.project,
        "empty.md",
        "---\ndescription: nothing\n---\n  \n",
    );
    write(&p.project, "blank.md", "");
    write(&p.project, "latin1.md", b"caf\xe9\n");
    write(
        &p.project,
        "huge.md",
        "x".repeat(MAX_COMMAND_BYTES as usize + 1),
    );
    write(&p.project, "notes.txt", "not a command, no notice");
    let set = p.discover();
    assert_eq!(names(&set), ["good"]);
    let want = [
        ("blank.md", "the prompt after the front matter is empty"),
        ("empty.md", "the prompt after the front matter is empty"),
        ("huge.md", "larger than 64 KiB"),
        ("latin1.md", "not UTF-8"),
        ("twice.md", "`description` is given twice"),
        ("unclosed.md", "no closing `---`"),
    ];
    assert_eq!(set.notices.len(), want.len(), "{:#?}", set.notices);
    for ((file, why), notice) in want.iter().zip(&set.notices) {
        assert!(
            notice.starts_with(&format!("command .agents/commands/{file} skipped: ")),
            "{notice}"
        );
        assert!(notice.contains(why), "{notice} should say {why}");
        assert!(!notice.contains('\n'), "one line: {notice}");
    }
}

#[test]
fn names_follow_the_rules() {
    for ok in ["review", "fix-issue", "a_b", "v2", "2fa", "ns:x"] {
        assert!(valid_name(ok), "{ok}");
    }
    for bad in [
        "Review",
        "my cmd",
        "-x",
        "",
        "é",
        "a.b",
        "x!",
        &"a".repeat(65),
    ] {
        assert!(!valid_name(bad), "{bad}");
    }
    let p = Places::new();
    write(&p.project, "Review.md", "x");
    write(&p.project, "my cmd.md", "x");
    write(&p.project, "ok.md", "x");
    let set = p.discover();
    assert_eq!(names(&set), ["ok"]);
    assert_eq!(set.notices.len(), 2, "{:?}", set.notices);
    assert!(set.notices[0].contains("\"Review\""), "{}", set.notices[0]);
    assert!(set.notices[1].contains("\"my cmd\""), "{}", set.notices[1]);
    assert!(set.notices[1].contains("lowercase letters"));
}

#[test]
fn a_built_in_name_keeps_the_built_in() {
    let p = Places::new();
    write(&p.home, "help.md", "my help");
    write(&p.project, "clear.md", "my clear");
    let set = p.discover();
    assert!(set.is_empty());
    assert_eq!(
        set.notices,
        [
            "command ~/.agents/commands/help.md skipped: /help is a built-in command",
            "command .agents/commands/clear.md skipped: /clear is a built-in command",
        ]
    );
}

#[test]
fn links_are_not_followed() {
    let p = Places::new();
    let secret = p.home.join("secret.txt");
    std::fs::write(&secret, "private").unwrap();
    write(&p.project, "real.md", "fine");
    let link = p.project.join(COMMANDS_DIR).join("leak.md");
    std::os::unix::fs::symlink(&secret, &link).unwrap();
    let set = p.discover();
    assert_eq!(names(&set), ["real"]);
    assert_eq!(set.notices.len(), 1);
    assert!(set.notices[0].contains("leak.md"), "{}", set.notices[0]);
    assert!(
        set.notices[0].contains("symbolic link"),
        "{}",
        set.notices[0]
    );
}

#[test]
fn the_home_folder_as_project_is_read_once() {
    let p = Places::new();
    write(&p.home, "review.md", "once");
    let set = CommandSet::discover(Some(&p.home), &p.home, &|_| false);
    assert_eq!(names(&set), ["review"]);
    assert_eq!(set.get("review").unwrap().source, CommandSource::Project);
}

#[test]
fn expand_takes_the_first_word_and_the_rest_as_arguments() {
    let p = Places::new();
    write(&p.project, "fix-issue.md", "Fix issue $1 ($ARGUMENTS).");
    write(&p.project, "review.md", "Review.");
    let set = p.discover();
    let e = set.expand("  /fix-issue 123 high  ").unwrap();
    assert_eq!(e.command.name, "fix-issue");
    assert_eq!(e.args, "123 high");
    assert_eq!(e.text, "Fix issue 123 (123 high).");
    assert_eq!(set.expand("/review").unwrap().text, "Review.");
    assert_eq!(
        set.expand("/review\nmind the tests").unwrap().text,
        "Review.\n\nARGUMENTS: mind the tests"
    );
    assert_eq!(set.expand("/reviewer"), None);
    assert_eq!(set.expand("review"), None);
    assert_eq!(set.expand("please /review"), None);
    assert_eq!(set.expand("/help"), None);
}
