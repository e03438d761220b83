//! Without bubblewrap: `required` refuses and runs nothing, `auto` runs unsandboxed with a
//! warning.

use std::path::PathBuf;
use std::time::Duration;

use rein_core::sandbox::{Sandbox, SandboxMode, SandboxSettings, SandboxState};

use super::{context, outside_dir, q, sh};

pub(super) async fn required_without_bwrap_refuses_and_runs_nothing() {
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

pub(super) async fn auto_without_bwrap_runs_unsandboxed_with_a_warning() {
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
