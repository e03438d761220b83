//! What commands cannot see: secrets, a gitdir pointer's target, steering files (and links
//! out of the project), the project's secrets, rein's data folder, host service sockets.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rein_core::sandbox::SandboxSettings;

use super::{context, outside_dir, q, sandboxed, sh};

pub(super) async fn secrets_are_hidden_from_commands() {
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

pub(super) async fn a_gitdir_pointer_and_its_target_are_read_only() {
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
pub(super) async fn steering_files_are_read_only() {
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
pub(super) async fn steering_and_env_links_out_of_the_project_do_not_break_commands() {
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
pub(super) async fn project_secrets_are_hidden_from_commands() {
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

/// rein's data folder (every project's sessions, history and approvals) is empty inside,
/// but for this rein's own spill folders, which a command may read (the model is told to
/// read a long output there); nothing of it is writable. Outside `/tmp`, so the private
/// `/tmp` is not what hides it.
pub(super) async fn reins_data_folder_is_hidden_but_its_own_spill_folders() {
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

pub(super) async fn host_service_sockets_under_run_user_are_hidden() {
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
