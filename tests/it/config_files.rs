//! Config files that are not what they seem, through the real binary (issue 12, minor): a
//! named pipe used to hang rein forever and a link to `/dev/zero` grew it to 23 GB. Each
//! is now a one-line error naming the file, at once; a project's `.mcp.json` (another
//! tool's file) is named and skipped (issue 41). And what a project's file may not lower
//! of the user's safety (issue 41): checkpoints stay on, and the start says so.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Run `rein config` with `REIN_HOME` = `rein_home`, `HOME` = `home`, in `root`; give up
/// (and fail) after 10 s.
fn rein_config(rein_home: &Path, home: &Path, root: &Path) -> (Option<i32>, String) {
    let (code, _, err) = rein_config_out(rein_home, home, root);
    (code, err)
}

/// [`rein_config`] with its standard output too.
fn rein_config_out(rein_home: &Path, home: &Path, root: &Path) -> (Option<i32>, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rein"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("REIN_HOME", rein_home)
        .arg("--cwd")
        .arg(root)
        .arg("config")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The output is small (a screen of settings): the pipes never fill before the exit.
    let deadline = Instant::now() + crate::support::GIVE_UP;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut out = String::new();
            let mut err = String::new();
            std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
            return (status.code(), out, err);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("rein config still running after 10 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

#[test]
fn a_config_file_that_is_a_pipe_a_device_a_folder_or_huge_is_an_error_at_once() {
    type Make = fn(&Path);
    let cases: [(&str, Make, &str); 5] = [
        ("a pipe", mkfifo, "it is a named pipe, not a regular file"),
        (
            "a link to /dev/zero",
            |p| symlink("/dev/zero", p).unwrap(),
            "it is a device, not a regular file",
        ),
        (
            "a folder",
            |p| std::fs::create_dir(p).unwrap(),
            "it is a directory, not a regular file",
        ),
        (
            "2 MB",
            |p| std::fs::write(p, format!("# {}\n", "x".repeat(2 << 20))).unwrap(),
            "it is larger than 1024 KiB",
        ),
        (
            "not UTF-8",
            |p| std::fs::write(p, b"model = \"\xff\"\n").unwrap(),
            "it is not UTF-8 text",
        ),
    ];
    for (what, make, reason) in cases {
        // The user's file, the project's and ~/.agents/env each get the same treatment.
        for place in ["user", "project", "agents-env"] {
            let rein_home = tempfile::tempdir().unwrap();
            let home = tempfile::tempdir().unwrap();
            let root = tempfile::tempdir().unwrap();
            let file = match place {
                "user" => rein_home.path().join("config.toml"),
                "project" => {
                    std::fs::create_dir(root.path().join(".rein")).unwrap();
                    root.path().join(".rein/config.toml")
                }
                _ => {
                    std::fs::create_dir(home.path().join(".agents")).unwrap();
                    home.path().join(".agents/env")
                }
            };
            make(&file);
            let (code, err) = rein_config(rein_home.path(), home.path(), root.path());
            assert_eq!(code, Some(2), "{what} as the {place} file: {err}");
            assert!(
                err.contains(&file.display().to_string()) && err.contains(reason),
                "{what} as the {place} file: {err}"
            );
        }
    }
}

/// A project's `.mcp.json` is Claude Code's file, read like the project's own: a named pipe
/// or a link to `/dev/zero` there is named at start and skipped, never waited on or read
/// whole.
#[test]
fn a_projects_mcp_json_that_is_a_pipe_or_a_device_is_named_and_skipped() {
    type Make = fn(&Path);
    let cases: [(&str, Make, &str); 2] = [
        ("a pipe", mkfifo, "it is a named pipe, not a regular file"),
        (
            "a link to /dev/zero",
            |p| symlink("/dev/zero", p).unwrap(),
            "it is a device, not a regular file",
        ),
    ];
    for (what, make, reason) in cases {
        let rein_home = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        let file = root.path().canonicalize().unwrap().join(".mcp.json");
        make(&file);
        let (code, err) = rein_config(rein_home.path(), home.path(), root.path());
        assert_eq!(code, Some(0), "{what} as .mcp.json: {err}");
        assert!(
            err.contains(&file.display().to_string()) && err.contains(reason),
            "{what} as .mcp.json: {err}"
        );
    }
}

/// A cloned repository's `.rein/config.toml` that turns checkpoints off is ignored and
/// named at start (the user's own file may turn them off); one that raises
/// `agent.max_steps` is obeyed and named.
#[test]
fn a_projects_file_may_not_turn_checkpoints_off_and_raised_limits_are_said() {
    let rein_home = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let file = root
        .path()
        .canonicalize()
        .unwrap()
        .join(".rein/config.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(
        &file,
        "[checkpoints]\nenabled = false\n[agent]\nmax_steps = 100000\n",
    )
    .unwrap();
    let setting = |out: &str, key: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("{key} ")))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|| panic!("no {key} in\n{out}"))
    };
    let (code, out, err) = rein_config_out(rein_home.path(), home.path(), root.path());
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        setting(&out, "checkpoints.enabled"),
        "checkpoints.enabled true (default)"
    );
    let shown = file.display().to_string();
    let said = |needle: &str| {
        err.lines()
            .any(|l| l.contains(&shown) && l.contains(needle))
    };
    assert!(said("checkpoints.enabled = false"), "{err}");
    assert!(said("agent.max_steps to 100000"), "{err}");
    assert!(setting(&out, "agent.max_steps").starts_with("agent.max_steps 100000"));

    // The user's own file may.
    std::fs::write(
        rein_home.path().join("config.toml"),
        "[checkpoints]\nenabled = false\n",
    )
    .unwrap();
    let (code, out, err) = rein_config_out(rein_home.path(), home.path(), root.path());
    assert_eq!(code, Some(0), "{err}");
    assert!(setting(&out, "checkpoints.enabled").starts_with("checkpoints.enabled false"));
    assert!(!err.contains("checkpoints.enabled"), "{err}");
}

/// `rein config` run in `cwd` with `path` as PATH: the status line of the sandbox.
fn sandbox_line(cwd: &Path, home: &Path, path: &std::ffi::OsStr) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rein"))
        .arg("config")
        .current_dir(cwd)
        .env_clear()
        .env("PATH", path)
        .env("HOME", home)
        .env("REIN_HOME", home.join("rein-home"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines()
        .find(|l| l.starts_with("sandbox "))
        .unwrap_or_else(|| {
            panic!(
                "no sandbox line: {text}{}",
                String::from_utf8_lossy(&out.stderr)
            )
        })
        .to_string()
}

/// A `bwrap` in the folder rein starts in is never run, though PATH has `.` and an empty
/// entry first: only PATH's absolute folders are searched, and the status says what was
/// found there (nothing; then a `bwrap` in an absolute folder).
#[test]
fn bwrap_is_looked_up_in_absolute_path_folders_only() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let fake = |dir: &Path, marker: &Path| {
        use std::os::unix::fs::PermissionsExt;
        let script = dir.join("bwrap");
        let marker = shlex::try_quote(&marker.to_string_lossy())
            .unwrap()
            .into_owned();
        std::fs::write(&script, format!("#!/bin/sh\n: > {marker}\nexit 0\n")).unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    let planted = home.path().join("planted-ran");
    let real = home.path().join("absolute-ran");
    fake(project.path(), &planted);
    let nowhere = home.path().join("no-such-folder");
    let path = std::env::join_paths([Path::new("."), Path::new(""), &nowhere]).unwrap();
    let line = sandbox_line(project.path(), home.path(), &path);
    assert!(line.contains("off: bwrap was not found"), "{line}");
    assert!(!planted.exists(), "the project's ./bwrap ran");

    fake(bin.path(), &real);
    let path = std::env::join_paths([Path::new("."), Path::new(""), bin.path()]).unwrap();
    let line = sandbox_line(project.path(), home.path(), &path);
    assert!(line.contains("on (bubblewrap"), "{line}");
    assert!(
        real.exists(),
        "the bwrap in the absolute folder was not probed"
    );
    assert!(!planted.exists(), "the project's ./bwrap ran");
}
