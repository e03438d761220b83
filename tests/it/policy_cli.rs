//! `rein policy check` through the real binary: the same policy code path the agent uses,
//! with the user's and the project's rules.

use std::path::Path;
use std::process::Output;

fn policy_check(home: &Path, project: &Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(["policy", "check"])
        .args(args)
        .arg("--cwd")
        .arg(project)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("REIN_HOME", home.join("rein-home"))
        .output()
        .unwrap()
}

fn line(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(text.lines().count(), 1, "one line: {text}");
    text.trim_end().to_string()
}

#[test]
fn prints_the_verdict_word_then_the_reason() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let check = |cmd: &str| line(&policy_check(home.path(), project.path(), &[cmd]));
    assert_eq!(
        check("ls -la; rm -rf /"),
        "deny `rm -rf /` matches deny rule `rm *`"
    );
    assert!(check("grep \"a; rm -rf /\" x").starts_with("allow "));
    assert!(check("python3 script.py")
        .starts_with("ask `python3 script.py` matches the default rule `*`"));
    assert!(check("ls > listing.txt").starts_with("ask "));
    assert!(check("echo 'unterminated").starts_with("ask "));
    assert!(check("timeout 5 sudo ls").starts_with("deny "));
}

#[test]
fn json_has_verdict_reason_and_parts() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let out = policy_check(
        home.path(),
        project.path(),
        &["--json", "cargo test && curl x"],
    );
    let v: serde_json::Value = serde_json::from_str(&line(&out)).unwrap();
    assert_eq!(v["action"], "deny");
    assert_eq!(v["parts"][0]["command"], "cargo test");
    assert_eq!(v["parts"][0]["action"], "allow");
    assert_eq!(v["parts"][1]["command"], "curl x");
    assert_eq!(v["parts"][1]["action"], "deny");
}

#[test]
fn user_and_project_rules_are_appended_and_win() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("rein-home")).unwrap();
    std::fs::write(
        home.path().join("rein-home/config.toml"),
        "[[permissions.bash]]\npattern = \"make *\"\naction = \"allow\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(project.path().join(".rein")).unwrap();
    std::fs::write(
        project.path().join(".rein/config.toml"),
        "[[permissions.bash]]\npattern = \"make deploy*\"\naction = \"deny\"\n",
    )
    .unwrap();
    let check = |cmd: &str| line(&policy_check(home.path(), project.path(), &[cmd]));
    assert!(check("make build").starts_with("allow `make build` matches allow rule `make *`"));
    assert!(check("make deploy prod")
        .starts_with("deny `make deploy prod` matches deny rule `make deploy*`"));
}

#[test]
fn a_bad_rule_is_a_one_line_error() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".rein")).unwrap();
    std::fs::write(
        project.path().join(".rein/config.toml"),
        "[[permissions.bash]]\npattern = \"ls [\"\naction = \"deny\"\n",
    )
    .unwrap();
    let out = policy_check(home.path(), project.path(), &["ls"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(".rein/config.toml") && err.contains("`ls [`"),
        "{err}"
    );
}

/// Issue 11: the sensitive reads the checker missed, the read-only commands it asked
/// about, and rules that matched by prefix, through the real binary.
#[test]
fn sensitive_reads_read_only_commands_and_prefix_rules() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let check = |cmd: &str| line(&policy_check(home.path(), project.path(), &[cmd]));
    let verdict = |cmd: &str| check(cmd).split(' ').next().unwrap_or_default().to_string();
    let mut wrong = Vec::new();
    for cmd in [
        "cat \"$HOME\"/.ssh/id_rsa",
        "cat \"${HOME}\"/.ssh/id_rsa",
        "cat $HOME'/.ssh/id_rsa'",
        "cat 0< ~/.ssh/id_rsa",
        "cat 3< .env <&3",
        "grep -r . ~/.ssh",
        "find ~/.ssh -exec cat {} +",
        "rg . ~/.aws",
        "git show HEAD:.env",
        "cat ~/.agents/env",
        "cat .env.local",
        "cat ~/.git-credentials",
        "cat ~/.netrc",
        "cat ~/.docker/config.json",
        "cat ~/.kube/config",
        "cat ~/.npmrc",
        "cat ~/.pypirc",
        "cat ~/.config/gh/hosts.yml",
        "cat ~root/.ssh/id_rsa",
        "cat rein-home/config.toml",
        "git difftool--helper",
        "sed -n '1w /tmp/x' f",
    ] {
        // rein's own config file: named by its path under REIN_HOME.
        let cmd = cmd.replace(
            "rein-home/",
            &format!("{}/rein-home/", home.path().display()),
        );
        if verdict(&cmd) != "ask" {
            wrong.push(format!("{cmd}: {}", check(&cmd)));
        }
    }
    for cmd in [
        "git branch --show-current",
        "git rev-parse --show-toplevel",
        "git rev-parse --abbrev-ref HEAD",
        "git branch",
        "git branch -a",
        "git remote -v",
        "git log --oneline",
        "sed -n '1,20p' src/main.rs",
        "pytest --cov-report=term-missing",
        "pytest -p no:cacheprovider",
        "cat .env.example",
        "ls ~",
        "git show HEAD:src/main.rs",
    ] {
        if verdict(cmd) != "allow" {
            wrong.push(format!("{cmd}: {}", check(cmd)));
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

/// Issue 41, item 6: with the sandbox off, the default allows that run the project's code
/// ask and say why; the user's own rule for them still allows.
#[test]
fn project_code_asks_without_a_sandbox_unless_the_user_allows_it() {
    let project = tempfile::tempdir().unwrap();
    let with_config = |text: &str| {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join("rein-home")).unwrap();
        std::fs::write(home.path().join("rein-home/config.toml"), text).unwrap();
        home
    };
    let off = with_config("[sandbox]\nmode = \"off\"\n");
    let check = |home: &Path, cmd: &str| line(&policy_check(home, project.path(), &[cmd]));
    for command in [
        "cargo test",
        "cargo build --release",
        "pytest -q",
        "python3 -m pytest",
    ] {
        let said = check(off.path(), command);
        assert!(
            said.starts_with(&format!("ask `{command}` runs the project's code"))
                && said.ends_with("and commands run without a sandbox"),
            "{said}"
        );
    }
    assert!(check(off.path(), "git status").starts_with("allow "));
    let own = with_config(
        "[sandbox]\nmode = \"off\"\n\n[[permissions.bash]]\npattern = \"cargo test*\"\naction = \"allow\"\n",
    );
    assert!(check(own.path(), "cargo test --all").starts_with("allow "));
    assert!(check(own.path(), "cargo build").starts_with("ask "));
}

/// `args` of the real binary with stdout going to `stdout` (the project as its folder).
fn run_to(home: &Path, project: &Path, args: &[&str], stdout: std::process::Stdio) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(args)
        .current_dir(project)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("REIN_HOME", home.join("rein-home"))
        .env("REIN_BASE_URL", "http://127.0.0.1:9/v1")
        .stdout(stdout)
        .output()
        .unwrap()
}

#[test]
fn a_closed_output_pipe_ends_quietly_and_a_full_disk_fails() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let (h, p) = (home.path(), project.path());
    for args in [
        &["policy", "check", "ls"][..],
        &["policy", "check", "--json", "ls"],
        &["config"],
        &["models"],
        &["sessions"],
        &["hooks"],
    ] {
        // The reader is gone before rein writes a byte: as `rein policy check ls | true`.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = run_to(h, p, args, writer.into());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "{args:?}: {stderr}"
        );
    }
    // Output that cannot be written for another reason fails the command, said once.
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = run_to(h, p, &["policy", "check", "ls"], full.into());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.matches("rein: cannot write the output:").count(),
        1,
        "{stderr}"
    );
}
