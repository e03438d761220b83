//! The bubblewrap sandbox, for real: commands go through the `bash` tool exactly as the agent
//! runs them, and every effect is checked on the host.
//!
//! Most tests need bwrap to work here. This file has its own small harness (`harness = false`
//! in Cargo.toml) so that where bwrap is missing or cannot create namespaces, those tests are
//! reported as `ignored` with the reason, never as passed; under CI (`CI` set, as `.ci/run`
//! runs it with bubblewrap installed) a missing or broken bwrap fails the run instead.
//! The output follows libtest's format, closing line included.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test's unwrap is an assertion

use std::future::Future;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::OnceLock;
use std::time::Duration;
use std::time::Instant;

use rein_core::sandbox::{Sandbox, SandboxMode, SandboxSettings, SandboxState};
use rein_core::skills::SkillSet;
use rein_core::tools::bash::{run, Args};
use rein_core::tools::ToolContext;

/// The detected sandbox for `root` (the harness runs these tests only where it works).
fn sandboxed(root: &Path, settings: SandboxSettings, readable: Vec<PathBuf>) -> Sandbox {
    let settings = SandboxSettings {
        mode: SandboxMode::Auto,
        ..settings
    };
    let sandbox = Sandbox::detect(settings, root, readable);
    if let SandboxState::On { .. } = sandbox.state() {
        return sandbox;
    }
    // The harness checked before running this test that the sandbox works here.
    panic!("the sandbox is {}", sandbox.describe());
}

fn context(sandbox: Sandbox, timeout: Duration) -> ToolContext {
    ToolContext {
        root: sandbox.root().to_path_buf(),
        bash_timeout: timeout,
        secrets: Vec::new(),
        sandbox: Arc::new(sandbox),
        todos: Default::default(),
        skills: Arc::new(SkillSet::empty()),
    }
}

/// Run `command` through the real `bash` tool.
async fn sh(ctx: &ToolContext, command: &str) -> Result<String, String> {
    run(
        Args {
            command: command.to_string(),
            run_in_background: None,
        },
        ctx,
    )
    .await
    .map(|ran| ran.text)
}

/// A directory on the host that is neither in the project nor under `/tmp` (which the
/// sandbox replaces), so commands see it, read-only.
fn outside_dir() -> tempfile::TempDir {
    // The target dir may itself lie under /tmp (a checkout there); /var/tmp never does.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let base = if target.starts_with("/tmp") && Path::new("/var/tmp").is_dir() {
        Path::new("/var/tmp")
    } else {
        target
    };
    tempfile::Builder::new()
        .prefix("rein-sandbox-test")
        .tempdir_in(base)
        .unwrap()
}

fn in_host_tmp() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("rein-sandbox-test")
        .tempdir_in("/tmp")
        .unwrap()
}

fn q(path: &Path) -> String {
    shlex::try_quote(&path.to_string_lossy())
        .unwrap()
        .into_owned()
}

async fn writes_land_in_the_project_and_nowhere_else() {
    let project = tempfile::tempdir().unwrap();
    let outside = outside_dir();
    let sandbox = sandboxed(project.path(), SandboxSettings::default(), vec![]);
    let ctx = context(sandbox, Duration::from_secs(10));

    let out = sh(
        &ctx,
        &format!(
            "test -d {o} && echo visible; touch {o}/x && echo wrote",
            o = q(outside.path())
        ),
    )
    .await
    .unwrap();
    assert!(out.starts_with("visible\n"), "{out}");
    assert!(out.contains("Read-only file system"), "{out}");
    assert!(!out.contains("wrote"), "{out}");
    assert!(!outside.path().join("x").exists());

    let out = sh(
        &ctx,
        "echo hello > inside.txt && mkdir -p sub && touch sub/y && pwd -P",
    )
    .await
    .unwrap();
    assert_eq!(
        out,
        project.path().canonicalize().unwrap().display().to_string()
    );
    assert_eq!(
        std::fs::read_to_string(project.path().join("inside.txt")).unwrap(),
        "hello\n"
    );
    assert!(project.path().join("sub/y").exists());
}

/// A background command runs in the same sandbox as any other: it writes the project,
/// not outside it, and has no network.
async fn background_commands_run_in_the_sandbox() {
    let project = tempfile::tempdir().unwrap();
    let outside = outside_dir();
    let sandbox = sandboxed(project.path(), SandboxSettings::default(), vec![]);
    let ctx = context(sandbox, Duration::from_secs(10));
    let background = rein_core::tools::background::Background::new(None, 4);
    let started = background
        .start(
            &format!(
                "touch {o}/x 2>&1; echo inside > in.txt; echo done",
                o = q(outside.path())
            ),
            &ctx,
        )
        .await
        .unwrap();
    let mut out = started.text;
    for _ in 0..500 {
        out.push_str(&background.output("bash-1").unwrap().text);
        if out.contains("exited with code") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(out.contains("Read-only file system"), "{out}");
    assert!(out.contains("done\n[bash-1 exited with code 0]"), "{out}");
    assert!(!outside.path().join("x").exists());
    assert_eq!(
        std::fs::read_to_string(project.path().join("in.txt")).unwrap(),
        "inside\n"
    );
}

/// Plan mode's sandbox: an allowed command that writes into the project (or an extra
/// writable path) fails, reading still works, and the private /tmp stays writable.
async fn plan_mode_keeps_the_project_read_only() {
    let project = tempfile::tempdir().unwrap();
    let extra = outside_dir();
    std::fs::write(project.path().join("Makefile"), "all:\n").unwrap();
    let settings = SandboxSettings {
        writable: vec![extra.path().to_path_buf()],
        ..SandboxSettings::default()
    };
    let sandbox = sandboxed(project.path(), settings, vec![]);
    let plan = context(sandbox.read_only(), Duration::from_secs(10));
    let out = sh(
        &plan,
        &format!(
            "cat Makefile; echo x > built.txt && echo wrote; touch {e}/y && echo extra; \
             echo t > /tmp/t && echo tmp-ok",
            e = q(extra.path())
        ),
    )
    .await
    .unwrap();
    assert!(out.starts_with("all:\n"), "{out}");
    assert!(out.contains("Read-only file system"), "{out}");
    assert!(!out.contains("wrote") && !out.contains("extra"), "{out}");
    assert!(out.ends_with("tmp-ok"), "{out}");
    assert!(!project.path().join("built.txt").exists());
    assert!(!extra.path().join("y").exists());
    // The same sandbox outside plan mode writes as before.
    let normal = context(sandbox, Duration::from_secs(10));
    sh(&normal, "echo x > built.txt").await.unwrap();
    assert!(project.path().join("built.txt").exists());
}

async fn output_exit_codes_and_the_environment_pass_through() {
    let project = tempfile::tempdir().unwrap();
    let sandbox = sandboxed(project.path(), SandboxSettings::default(), vec![]);
    let mut ctx = context(sandbox, Duration::from_secs(10));
    assert_eq!(
        sh(&ctx, "echo out; echo err >&2; exit 3").await.unwrap(),
        "out\nerr\nexit code 3"
    );
    // Scrubbing still applies: a variable whose value is a secret does not get in.
    let Some(home) = std::env::var("HOME").ok().filter(|h| !h.is_empty()) else {
        return;
    };
    assert_eq!(sh(&ctx, "echo \"${HOME-unset}\"").await.unwrap(), home);
    ctx.secrets = vec![home];
    assert_eq!(sh(&ctx, "echo \"${HOME-unset}\"").await.unwrap(), "unset");
}

async fn git_is_read_only() {
    let project = tempfile::tempdir().unwrap();
    let git = project.path().join(".git");
    std::fs::create_dir_all(git.join("hooks")).unwrap();
    std::fs::write(git.join("config"), "[core]\n").unwrap();
    let sandbox = sandboxed(project.path(), SandboxSettings::default(), vec![]);
    let ctx = context(sandbox, Duration::from_secs(10));
    let out = sh(
        &ctx,
        "echo '[core] fsmonitor = evil' >> .git/config; touch .git/hooks/pre-commit; \
         mv .git .git-old; rm -rf .git; echo still-runs > ok",
    )
    .await
    .unwrap();
    assert!(out.contains("Read-only file system"), "{out}");
    assert_eq!(
        std::fs::read_to_string(git.join("config")).unwrap(),
        "[core]\n"
    );
    assert!(!git.join("hooks/pre-commit").exists());
    assert!(!project.path().join(".git-old").exists());
    assert!(project.path().join("ok").exists());
}

async fn nested_repositories_are_read_only_too() {
    let project = tempfile::tempdir().unwrap();
    let nested = project.path().join("vendor/lib/.git");
    std::fs::create_dir_all(nested.join("hooks")).unwrap();
    std::fs::write(nested.join("config"), "[core]\n").unwrap();
    let sandbox = sandboxed(project.path(), SandboxSettings::default(), vec![]);
    let ctx = context(sandbox, Duration::from_secs(10));
    let out = sh(
        &ctx,
        "echo '[core] fsmonitor = evil' >> vendor/lib/.git/config; \
         touch vendor/lib/.git/hooks/post-checkout; echo fine > vendor/lib/ok",
    )
    .await
    .unwrap();
    assert!(out.contains("Read-only file system"), "{out}");
    assert_eq!(
        std::fs::read_to_string(nested.join("config")).unwrap(),
        "[core]\n"
    );
    assert!(!nested.join("hooks/post-checkout").exists());
    assert!(project.path().join("vendor/lib/ok").exists());
}

async fn secrets_are_hidden_from_commands() {
    let project = tempfile::tempdir().unwrap();
    let home = outside_dir();
    std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
    std::fs::write(home.path().join(".ssh/id_rsa"), "PRIVATE KEY").unwrap();
    std::fs::write(home.path().join(".netrc"), "machine x password hunter2").unwrap();
    std::fs::write(home.path().join("notes.txt"), "plain").unwrap();
    let hidden = vec![
        home.path().join(".ssh"),
        home.path().join(".netrc"),
        home.path().join(".missing"),
    ];
    let settings = SandboxSettings {
        hidden,
        ..SandboxSettings::default()
    };
    let sandbox = sandboxed(project.path(), settings, vec![]);
    let ctx = context(sandbox, Duration::from_secs(10));
    let h = q(home.path());
    let out = sh(
        &ctx,
        &format!("cat {h}/.ssh/id_rsa; ls -A {h}/.ssh; cat {h}/.netrc; cat {h}/notes.txt"),
    )
    .await
    .unwrap();
    assert!(
        !out.contains("PRIVATE KEY") && !out.contains("hunter2"),
        "{out}"
    );
    assert!(out.contains("plain"), "{out}");
    // The files themselves are untouched on the host.
    assert_eq!(
        std::fs::read_to_string(home.path().join(".ssh/id_rsa")).unwrap(),
        "PRIVATE KEY"
    );
}

async fn a_gitdir_pointer_and_its_target_are_read_only() {
    let project = tempfile::tempdir().unwrap();
    let outside = outside_dir();
    let gitdir = outside.path().join("gitdir");
    std::fs::create_dir(&gitdir).unwrap();
    std::fs::create_dir(outside.path().join("other")).unwrap();
    let pointer = format!("gitdir: {}\n", gitdir.display());
    std::fs::write(project.path().join(".git"), &pointer).unwrap();
    // The target lies inside a writable path: only the protection keeps it read-only.
    let settings = SandboxSettings {
        writable: vec![outside.path().to_path_buf()],
        ..SandboxSettings::default()
    };
    let sandbox = sandboxed(project.path(), settings, vec![]);
    let ctx = context(sandbox, Duration::from_secs(10));
    let o = q(outside.path());
    let out = sh(
        &ctx,
        &format!(
            "touch {o}/other/ok && echo other-ok; touch {o}/gitdir/HEAD && echo gitdir-written; \
             echo 'gitdir: /elsewhere' > .git && echo pointer-written"
        ),
    )
    .await
    .unwrap();
    assert!(out.starts_with("other-ok\n"), "{out}");
    assert!(!out.contains("written"), "{out}");
    assert!(outside.path().join("other/ok").exists());
    assert!(!gitdir.join("HEAD").exists());
    assert_eq!(
        std::fs::read_to_string(project.path().join(".git")).unwrap(),
        pointer
    );

    // A relative pointer to a git directory inside the (writable) project.
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".realgit")).unwrap();
    std::fs::write(project.path().join(".git"), "gitdir: .realgit\n").unwrap();
    let sandbox = sandboxed(project.path(), SandboxSettings::default(), vec![]);
    let ctx = context(sandbox, Duration::from_secs(10));
    let out = sh(
        &ctx,
        "touch .realgit/HEAD && echo written; touch x && echo x-ok",
    )
    .await
    .unwrap();
    assert!(!out.contains("written"), "{out}");
    assert!(out.ends_with("x-ok"), "{out}");
    assert!(!project.path().join(".realgit/HEAD").exists());
}

/// The project's steering files (host tools' configs, agent folders, instruction files),
/// at the root and below it, and the files added as steering at start, cannot be written,
/// removed or renamed by a command; the files beside them can. One created at the root
/// after the first command (a write the user approved) is protected from the next on.
async fn steering_files_are_read_only() {
    let project = tempfile::tempdir().unwrap();
    let p = project.path();
    let files = [
        ".cargo/config.toml",
        ".envrc",
        ".claude/settings.json",
        ".claude/hooks/x.sh",
        "CLAUDE.md",
        "sub/deeper/AGENTS.md",
        "web/.npmrc",
        ".husky/pre-commit",
        "flake.nix",
        "docs/style.md",
    ];
    for f in files.iter().chain(&["notes.txt", "docs/other.md"]) {
        let path = p.join(f);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "original\n").unwrap();
    }
    let sandbox = sandboxed(p, SandboxSettings::default(), vec![]);
    // What an instruction file imports, known at start.
    sandbox.add_steering_files(&[PathBuf::from("docs/style.md")]);
    let ctx = context(sandbox, Duration::from_secs(10));
    let mut script = String::new();
    for f in files {
        script.push_str(&format!(
            "echo evil >> {f} && echo wrote-{f}; echo evil > {f}.new && mv {f}.new {f} && \
             echo replaced-{f}; mv {f} {f}.old && echo renamed-{f}; rm -f {f} && \
             test ! -e {f} && echo removed-{f}; "
        ));
    }
    script.push_str(
        "touch .claude/new && echo created-in-claude; echo evil > .cargo/config && \
         echo created-cargo-config; rm -rf .claude && echo removed-claude; \
         mv .claude .claude-old && echo renamed-claude; echo fine >> notes.txt; \
         echo fine >> docs/other.md; echo done",
    );
    let out = sh(&ctx, &script).await.unwrap();
    assert!(out.ends_with("done"), "{out}");
    for word in ["wrote-", "replaced-", "renamed-", "removed-", "created-"] {
        assert!(!out.contains(word), "{word}: {out}");
    }
    for f in files {
        assert_eq!(
            std::fs::read_to_string(p.join(f)).unwrap(),
            "original\n",
            "{f}"
        );
        assert!(!p.join(format!("{f}.old")).exists(), "{f}");
    }
    assert!(!p.join(".claude/new").exists());
    assert!(!p.join(".cargo/config").exists());
    assert_eq!(
        std::fs::read_to_string(p.join("notes.txt")).unwrap(),
        "original\nfine\n"
    );
    assert_eq!(
        std::fs::read_to_string(p.join("docs/other.md")).unwrap(),
        "original\nfine\n"
    );

    // An `.mcp.json` written on the host after the first command (the user approved it).
    std::fs::write(p.join(".mcp.json"), "{}").unwrap();
    let out = sh(&ctx, "echo evil > .mcp.json && echo wrote; echo done")
        .await
        .unwrap();
    assert!(!out.contains("wrote"), "{out}");
    assert_eq!(std::fs::read_to_string(p.join(".mcp.json")).unwrap(), "{}");
}

/// Steering files and `.env` files that are links out of the project (into the kernel's
/// own filesystems, or to a system file) do not break the sandbox: commands still run,
/// and a link to a file inside the project protects that file.
async fn steering_and_env_links_out_of_the_project_do_not_break_commands() {
    let project = tempfile::tempdir().unwrap();
    let p = project.path();
    std::os::unix::fs::symlink("/proc/self/status", p.join(".envrc")).unwrap();
    std::os::unix::fs::symlink("/proc/self/environ", p.join(".env")).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", p.join("CLAUDE.md")).unwrap();
    std::fs::write(p.join("real-agents.md"), "original\n").unwrap();
    std::os::unix::fs::symlink("real-agents.md", p.join("AGENTS.md")).unwrap();
    let sandbox = sandboxed(p, SandboxSettings::default(), vec![]);
    let ctx = context(sandbox, Duration::from_secs(10));
    let out = sh(
        &ctx,
        "echo evil >> real-agents.md && echo wrote; echo evil > other && echo ran",
    )
    .await
    .unwrap();
    assert!(out.ends_with("ran"), "{out}");
    assert!(!out.contains("wrote"), "{out}");
    assert_eq!(
        std::fs::read_to_string(p.join("real-agents.md")).unwrap(),
        "original\n"
    );
}

/// The project's `.env` files are empty inside (at any depth, whatever the glob), its
/// templates and a virtual environment named `.env` are not, and the files on the host
/// are untouched. With `hide_project_secrets` off they show.
async fn project_secrets_are_hidden_from_commands() {
    let project = tempfile::tempdir().unwrap();
    let p = project.path();
    std::fs::create_dir_all(p.join("api")).unwrap();
    std::fs::create_dir_all(p.join("py/.env/bin")).unwrap();
    std::fs::write(p.join(".env"), "ROOT_SECRET=1\n").unwrap();
    std::fs::write(p.join(".env.local"), "LOCAL_SECRET=1\n").unwrap();
    std::fs::write(p.join("api/.env.production"), "PROD_SECRET=1\n").unwrap();
    std::fs::write(p.join(".env.example"), "TEMPLATE=\n").unwrap();
    std::fs::write(p.join("py/.env/bin/activate"), "VENV\n").unwrap();
    let sandbox = sandboxed(p, SandboxSettings::default(), vec![]);
    let ctx = context(sandbox, Duration::from_secs(10));
    let out = sh(
        &ctx,
        "cat .env* api/.env*; cat .[e]nv; f=.env; cat \"$f\"; \
         find . -name '.env*' -type f -print0 | xargs -0 cat; cat py/.env/bin/activate; \
         echo leaked > .env; echo done",
    )
    .await
    .unwrap();
    assert!(out.ends_with("done"), "{out}");
    for secret in ["ROOT_SECRET", "LOCAL_SECRET", "PROD_SECRET", "leaked"] {
        assert!(!out.contains(secret), "{secret}: {out}");
    }
    assert!(out.contains("TEMPLATE="), "{out}");
    assert!(out.contains("VENV"), "{out}");
    assert_eq!(
        std::fs::read_to_string(p.join(".env")).unwrap(),
        "ROOT_SECRET=1\n"
    );

    let settings = SandboxSettings {
        hide_project_secrets: false,
        ..SandboxSettings::default()
    };
    let ctx = context(sandboxed(p, settings, vec![]), Duration::from_secs(10));
    let out = sh(&ctx, "cat .env").await.unwrap();
    assert!(out.contains("ROOT_SECRET"), "{out}");
}

async fn rein_config_cannot_be_written_even_when_rein_did_not_exist() {
    let project = tempfile::tempdir().unwrap();
    let rein = project.path().join(".rein");
    assert!(!rein.exists());
    let sandbox = sandboxed(project.path(), SandboxSettings::default(), vec![]);
    let ctx = context(sandbox, Duration::from_secs(10));
    let out = sh(
        &ctx,
        "mkdir -p .rein; echo 'allow = [\"bash:*\"]' > .rein/config.toml; \
         mv .rein .rein-old && mkdir .rein && echo x > .rein/config.toml; \
         rm -rf .rein; test -e .rein/config.toml && echo written || echo refused",
    )
    .await
    .unwrap();
    assert!(out.ends_with("refused"), "{out}");
    assert!(rein.is_dir());
    assert!(!rein.join("config.toml").exists());
    assert!(!project.path().join(".rein-old").exists());
}

/// Try to connect from the sandbox to a listener on the host's 127.0.0.1. Returns the
/// command's output and whether the listener saw a connection.
async fn connect_to_host(network: bool) -> Option<(String, bool)> {
    let project = tempfile::tempdir().unwrap();
    let settings = SandboxSettings {
        network,
        ..SandboxSettings::default()
    };
    let sandbox = sandboxed(project.path(), settings, vec![]);
    let ctx = context(sandbox, Duration::from_secs(10));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let out = sh(
        &ctx,
        &format!(
            "bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}' 2>/dev/null \
             && echo connected || echo refused"
        ),
    )
    .await
    .unwrap();
    let seen = listener.accept().is_ok();
    Some((out, seen))
}

async fn the_network_is_off_unless_allowed() {
    let Some((out, seen)) = connect_to_host(false).await else {
        return;
    };
    assert_eq!(out, "refused");
    assert!(!seen, "the listener saw a connection from the sandbox");

    let Some((out, seen)) = connect_to_host(true).await else {
        return;
    };
    assert_eq!(out, "connected");
    assert!(seen, "with network = true the listener saw nothing");
}

async fn tmp_is_private_and_readable_paths_show_through() {
    let project = tempfile::tempdir().unwrap();
    let host_file = tempfile::Builder::new()
        .prefix("rein-sandbox-host")
        .tempfile_in("/tmp")
        .unwrap();
    let data = in_host_tmp();
    std::fs::write(data.path().join("spill.txt"), "spilled output\n").unwrap();
    let sandbox = sandboxed(
        project.path(),
        SandboxSettings::default(),
        vec![
            data.path().to_path_buf(),
            PathBuf::from("/tmp/rein-no-such-dir"),
        ],
    );
    let ctx = context(sandbox, Duration::from_secs(10));
    let name = format!("rein-sandbox-own-{}", std::process::id());
    let d = q(data.path());
    let out = sh(
        &ctx,
        &format!(
            "echo x > /tmp/{name} && cat /tmp/{name}; \
             test -e {h} && echo host-tmp-visible || echo host-tmp-hidden; \
             cat {d}/spill.txt; touch {d}/new && echo data-written",
            h = q(host_file.path()),
        ),
    )
    .await
    .unwrap();
    assert!(
        out.starts_with("x\nhost-tmp-hidden\nspilled output\n"),
        "{out}"
    );
    assert!(!out.contains("data-written"), "{out}");
    assert!(!Path::new("/tmp").join(&name).exists());
    assert!(!data.path().join("new").exists());
}

/// rein's data folder (every project's sessions, history and approvals) is empty inside,
/// but for this rein's own spill folders, which a command may read (the model is told to
/// read a long output there); nothing of it is writable. Outside `/tmp`, so the private
/// `/tmp` is not what hides it.
async fn reins_data_folder_is_hidden_but_its_own_spill_folders() {
    let project = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let spill = data.path().join("spill");
    let own = spill.join(format!("{}-2", std::process::id()));
    let other = spill.join(format!("{}-2", std::process::id() + 1));
    for dir in [data.path().join("sessions"), own.clone(), other.clone()] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(
        data.path().join("sessions/a.jsonl"),
        "{\"content\": \"GITHUB_TOKEN=ghp_secret\"}\n",
    )
    .unwrap();
    std::fs::write(own.join("call_1.txt"), "my own spilled output\n").unwrap();
    std::fs::write(other.join("call_1.txt"), "another rein's output TOKEN\n").unwrap();
    let sandbox = sandboxed(project.path(), SandboxSettings::default(), Vec::new())
        .with_private_data(data.path(), &spill);
    let ctx = context(sandbox, Duration::from_secs(10));
    let d = q(data.path());
    let out = sh(
        &ctx,
        &format!(
            "grep -r TOKEN {d} || echo no-token-found;              cat {own}/call_1.txt;              ls {d}/sessions 2>/dev/null | wc -l;              touch {own}/new 2>/dev/null && echo spill-written;              touch {d}/new 2>/dev/null; echo done",
            own = q(&own),
        ),
    )
    .await
    .unwrap();
    assert!(
        out.starts_with("no-token-found\nmy own spilled output\n0\n"),
        "{out}"
    );
    assert!(!out.contains("spill-written"), "{out}");
    assert!(!own.join("new").exists() && !data.path().join("new").exists());
}

async fn extra_writable_paths_are_writable() {
    let project = tempfile::tempdir().unwrap();
    let cache = outside_dir();
    let tmp_cache = in_host_tmp();
    let settings = SandboxSettings {
        writable: vec![cache.path().to_path_buf(), tmp_cache.path().to_path_buf()],
        ..SandboxSettings::default()
    };
    let sandbox = sandboxed(project.path(), settings, vec![]);
    let ctx = context(sandbox, Duration::from_secs(10));
    let out = sh(
        &ctx,
        &format!(
            "touch {}/a && touch {}/b && echo ok",
            q(cache.path()),
            q(tmp_cache.path())
        ),
    )
    .await
    .unwrap();
    assert_eq!(out, "ok");
    assert!(cache.path().join("a").exists());
    assert!(tmp_cache.path().join("b").exists());
}

async fn no_controlling_terminal_inside() {
    let project = tempfile::tempdir().unwrap();
    let sandbox = sandboxed(project.path(), SandboxSettings::default(), vec![]);
    let ctx = context(sandbox, Duration::from_secs(10));
    let out = sh(
        &ctx,
        "sh -c 'exec 3</dev/tty' 2>/dev/null && echo opened || echo no-tty",
    )
    .await
    .unwrap();
    assert_eq!(out, "no-tty");
}

/// Host pids of processes whose command line is exactly `argv`.
fn host_pids(argv: &[&str]) -> Vec<i32> {
    let want: Vec<u8> = argv
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == want))
        .collect()
}

/// Whether a process is running (a zombie waiting to be reaped counts as dead).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next());
        !matches!(state, None | Some('Z') | Some('X'))
    })
}

async fn the_timeout_kills_everything_in_the_sandbox() {
    let project = tempfile::tempdir().unwrap();
    let sandbox = sandboxed(project.path(), SandboxSettings::default(), vec![]);
    let ctx = context(sandbox, Duration::from_secs(1));
    // Durations unique to this run, so the sleeps can be found in the host's /proc (pids
    // inside the sandbox are those of its own PID namespace). One escapes the process group
    // with setsid; the PID namespace still takes it down.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let durations: Vec<String> = (1..=3)
        .map(|i| format!("{}.{nanos:09}", 1000 * i + std::process::id() % 1000))
        .collect();
    let command = format!(
        "echo $$ > pid; sleep {} & setsid sleep {} & echo started; sleep {}",
        durations[0], durations[1], durations[2]
    );
    let watch = async {
        let mut found = Vec::new();
        for _ in 0..90 {
            tokio::time::sleep(Duration::from_millis(10)).await;
            found = durations
                .iter()
                .flat_map(|d| host_pids(&["sleep", d]))
                .collect();
            if found.len() == 3 {
                break;
            }
        }
        found
    };
    // Left alone the command runs for over 1000 s: ending with the timeout's error and
    // every sleep gone is the timeout's work.
    let (result, pids) = tokio::join!(sh(&ctx, &command), watch);
    let err = result.unwrap_err();
    assert!(err.starts_with("command timed out after 1 s"), "{err}");
    assert!(
        err.ends_with("Output before the timeout:\nstarted"),
        "{err}"
    );
    assert_eq!(
        pids.len(),
        3,
        "the sleeps were not all seen running: {pids:?}"
    );
    let sandbox_pid = std::fs::read_to_string(project.path().join("pid")).unwrap();
    assert!(!sandbox_pid.trim().is_empty());
    for pid in pids {
        let mut dead = false;
        for _ in 0..200 {
            if !alive(pid) {
                dead = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(dead, "sleep {pid} survived the timeout");
    }
}

async fn required_without_bwrap_refuses_and_runs_nothing() {
    let project = tempfile::tempdir().unwrap();
    let settings = SandboxSettings {
        mode: SandboxMode::Required,
        ..SandboxSettings::default()
    };
    let sandbox = Sandbox::detect_with(settings.clone(), project.path(), vec![], None);
    assert_eq!(
        sandbox.state(),
        &SandboxState::Unavailable {
            reason: "bwrap was not found; install bubblewrap (Debian/Ubuntu: apt install \
                     bubblewrap)"
                .to_string()
        }
    );
    assert!(sandbox.warning().is_some());
    let ctx = context(sandbox, Duration::from_secs(10));
    let err = sh(&ctx, "touch ran").await.unwrap_err();
    assert_eq!(
        err,
        "the sandbox is required (sandbox.mode = \"required\") but cannot run: bwrap was not \
         found; install bubblewrap (Debian/Ubuntu: apt install bubblewrap)"
    );
    assert!(!project.path().join("ran").exists());

    // A bwrap that cannot create its namespaces is as good as none.
    let broken = Sandbox::detect_with(
        settings,
        project.path(),
        vec![],
        Some(PathBuf::from("/bin/false")),
    );
    let SandboxState::Unavailable { reason } = broken.state() else {
        panic!("{:?}", broken.state());
    };
    assert!(
        reason.starts_with("bwrap cannot create namespaces here: "),
        "{reason}"
    );
    let ctx = context(broken, Duration::from_secs(10));
    assert!(sh(&ctx, "touch ran").await.is_err());
    assert!(!project.path().join("ran").exists());
}

async fn auto_without_bwrap_runs_unsandboxed_with_a_warning() {
    let project = tempfile::tempdir().unwrap();
    let outside = outside_dir();
    let sandbox = Sandbox::detect_with(SandboxSettings::default(), project.path(), vec![], None);
    assert!(matches!(
        sandbox.state(),
        SandboxState::Off {
            by_choice: false,
            ..
        }
    ));
    let warning = sandbox.warning().unwrap();
    assert!(
        warning.starts_with("commands run without a sandbox: bwrap was not found"),
        "{warning}"
    );
    let ctx = context(sandbox, Duration::from_secs(10));
    let out = sh(
        &ctx,
        &format!("touch {}/x && echo wrote", q(outside.path())),
    )
    .await
    .unwrap();
    assert_eq!(out, "wrote");
    assert!(outside.path().join("x").exists());
    assert!(!project.path().join(".rein").exists());
}

async fn host_service_sockets_under_run_user_are_hidden() {
    let run_user = Path::new("/run/user");
    let project = tempfile::tempdir().unwrap();
    let sandbox = sandboxed(project.path(), SandboxSettings::default(), Vec::new());
    let ctx = context(sandbox, Duration::from_secs(10));
    let dir = tempfile::Builder::new()
        .prefix("rein-sandbox-test")
        .tempdir_in(run_user)
        .unwrap();
    let socket = dir.path().join("service.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    listener.set_nonblocking(true).unwrap();
    // The socket is there on the host; `test -S` inside must not find it.
    let out = sh(
        &ctx,
        &format!("test -S {} && echo VISIBLE || echo hidden", q(&socket)),
    )
    .await
    .unwrap();
    assert_eq!(out, "hidden");
    assert!(listener.accept().is_err(), "nothing connected");
}

// ---- the harness ----

type TestFn = fn() -> Pin<Box<dyn Future<Output = ()>>>;

/// A test: its name, what it needs (a reason to skip it, or `None`), and its body.
struct Case {
    name: &'static str,
    requires: fn() -> Option<String>,
    run: TestFn,
}

macro_rules! test {
    ($name:ident, $requires:expr) => {
        Case {
            name: stringify!($name),
            requires: $requires,
            run: || Box::pin($name()),
        }
    };
}

/// Nothing beyond the machine itself.
fn nothing() -> Option<String> {
    None
}

/// A working bubblewrap.
fn bwrap() -> Option<String> {
    static UNAVAILABLE: OnceLock<Option<String>> = OnceLock::new();
    UNAVAILABLE.get_or_init(sandbox_unavailable).clone()
}

/// A working bubblewrap and a `/run/user` to hide (created when missing, as root can).
fn bwrap_and_run_user() -> Option<String> {
    let run_user = Path::new("/run/user");
    if !run_user.is_dir() && std::fs::create_dir_all(run_user).is_err() {
        return Some("/run/user does not exist here and cannot be created".to_string());
    }
    bwrap()
}

const CASES: &[Case] = &[
    test!(writes_land_in_the_project_and_nowhere_else, bwrap),
    test!(background_commands_run_in_the_sandbox, bwrap),
    test!(plan_mode_keeps_the_project_read_only, bwrap),
    test!(output_exit_codes_and_the_environment_pass_through, bwrap),
    test!(git_is_read_only, bwrap),
    test!(nested_repositories_are_read_only_too, bwrap),
    test!(secrets_are_hidden_from_commands, bwrap),
    test!(a_gitdir_pointer_and_its_target_are_read_only, bwrap),
    test!(
        rein_config_cannot_be_written_even_when_rein_did_not_exist,
        bwrap
    ),
    test!(steering_files_are_read_only, bwrap),
    test!(project_secrets_are_hidden_from_commands, bwrap),
    test!(
        steering_and_env_links_out_of_the_project_do_not_break_commands,
        bwrap
    ),
    test!(the_network_is_off_unless_allowed, bwrap),
    test!(tmp_is_private_and_readable_paths_show_through, bwrap),
    test!(reins_data_folder_is_hidden_but_its_own_spill_folders, bwrap),
    test!(extra_writable_paths_are_writable, bwrap),
    test!(no_controlling_terminal_inside, bwrap),
    test!(the_timeout_kills_everything_in_the_sandbox, bwrap),
    test!(required_without_bwrap_refuses_and_runs_nothing, nothing),
    test!(auto_without_bwrap_runs_unsandboxed_with_a_warning, nothing),
    test!(
        host_service_sockets_under_run_user_are_hidden,
        bwrap_and_run_user
    ),
];

/// Why bwrap-backed tests cannot run here, or `None` when the sandbox works.
fn sandbox_unavailable() -> Option<String> {
    let probe = tempfile::tempdir().ok()?;
    let sandbox = Sandbox::detect(SandboxSettings::default(), probe.path(), Vec::new());
    match sandbox.state() {
        SandboxState::On { .. } => None,
        _ => Some(format!("the sandbox is {}", sandbox.describe())),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        for case in CASES {
            println!("{}: test", case.name);
        }
        return ExitCode::SUCCESS;
    }
    let exact = args.iter().any(|a| a == "--exact");
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let selected = |name: &str| {
        filters.is_empty()
            || filters.iter().any(|f| {
                if exact {
                    name == f.as_str()
                } else {
                    name.contains(f.as_str())
                }
            })
    };
    if let (Some(reason), Some(_)) = (bwrap(), std::env::var_os("CI")) {
        println!("error: bubblewrap must work under CI (.ci/run installs it), but {reason}");
        return ExitCode::from(101);
    }
    let start = Instant::now();
    let (mut passed, mut failed, mut ignored, mut filtered) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    println!(
        "\nrunning {} tests",
        CASES.iter().filter(|c| selected(c.name)).count()
    );
    for case in CASES {
        if !selected(case.name) {
            filtered += 1;
            continue;
        }
        if let Some(reason) = (case.requires)() {
            println!("test {} ... ignored, {reason}", case.name);
            ignored += 1;
            continue;
        }
        let outcome = std::panic::catch_unwind(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a tokio runtime");
            runtime.block_on((case.run)());
        });
        match outcome {
            Ok(()) => {
                println!("test {} ... ok", case.name);
                passed += 1;
            }
            Err(_) => {
                println!("test {} ... FAILED", case.name);
                failures.push(case.name);
                failed += 1;
            }
        }
    }
    if !failures.is_empty() {
        println!("\nfailures:");
        for name in &failures {
            println!("    {name}");
        }
    }
    println!(
        "\ntest result: {}. {passed} passed; {failed} failed; {ignored} ignored; 0 measured; {filtered} filtered out; finished in {:.2}s\n",
        if failed == 0 { "ok" } else { "FAILED" },
        start.elapsed().as_secs_f64()
    );
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(101)
    }
}
