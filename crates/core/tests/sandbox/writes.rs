//! What commands may write: the project and nothing else, background commands, plan mode, git
//! and nested repositories read-only, rein's config, extra writable paths; output and exit
//! codes pass through.

use std::time::Duration;

use rein_core::sandbox::SandboxSettings;

use super::{context, in_host_tmp, outside_dir, q, sandboxed, sh};

pub(super) async fn writes_land_in_the_project_and_nowhere_else() {
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
pub(super) async fn background_commands_run_in_the_sandbox() {
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
pub(super) async fn plan_mode_keeps_the_project_read_only() {
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

pub(super) async fn output_exit_codes_and_the_environment_pass_through() {
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

pub(super) async fn git_is_read_only() {
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

pub(super) async fn nested_repositories_are_read_only_too() {
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

pub(super) async fn rein_config_cannot_be_written_even_when_rein_did_not_exist() {
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

pub(super) async fn extra_writable_paths_are_writable() {
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
