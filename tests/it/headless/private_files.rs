//! What rein keeps for the user is theirs alone, and an older data folder is made private.

use crate::support;

use std::path::Path;

use serde_json::json;
use support::{rein_command, stderr};
use support::{Reply, ScriptedServer};

use super::*;

/// Every folder under `dir` (itself included) and every file in them, with their
/// permission bits.
fn modes_under(dir: &Path) -> Vec<(std::path::PathBuf, bool, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(path) = pending.pop() {
        let meta = std::fs::symlink_metadata(&path).unwrap();
        out.push((
            path.clone(),
            meta.is_dir(),
            meta.permissions().mode() & 0o777,
        ));
        if meta.is_dir() {
            for entry in std::fs::read_dir(&path).unwrap() {
                pending.push(entry.unwrap().path());
            }
        }
    }
    out
}

#[tokio::test]
async fn everything_rein_keeps_for_the_user_is_theirs_alone() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let data = home.path().join("rein-home");
    // A project server for `rein mcp allow` (it never runs here).
    std::fs::create_dir(project.path().join(".rein")).unwrap();
    std::fs::write(
        project.path().join(".rein/config.toml"),
        "[mcp_servers.tool]\ncommand = \"true\"\n",
    )
    .unwrap();
    // A long output is spilled; the next command reads the spill folder's and file's bits
    // while they exist (the folder goes when the turn ends).
    let look = format!(
        "stat -c '%a %F %n' {0}/spill {0}/spill/* {0}/spill/*/*",
        data.display()
    );
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", &json!({"command": "seq 1 40000"}).to_string())]),
        Reply::tool_calls(&[("bash", &json!({ "command": look }).to_string())]),
        Reply::text("ok"),
    ])
    .await
    .unwrap();
    let out = output_of(
        rein_command(home.path())
            .args(print_args("spill", &server.base_url(), "m", project.path()))
            .arg("--yes"),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    let spilled = last_stored(&requests[1])["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(spilled.contains("The whole output is in"), "{spilled}");
    let seen = last_stored(&requests[2])["content"]
        .as_str()
        .unwrap()
        .to_string();
    let lines: Vec<&str> = seen.lines().collect();
    assert_eq!(
        lines.len(),
        3,
        "the spill folder, the turn's folder, the file: {seen}"
    );
    for line in &lines {
        let expected = if line.contains("directory") {
            "700 "
        } else {
            "600 "
        };
        assert!(line.starts_with(expected), "{line}");
    }
    assert!(lines.iter().any(|l| l.contains("regular file")), "{seen}");

    let allow = output_of(
        rein_command(home.path())
            .args(["mcp", "allow", "tool", "--cwd"])
            .arg(project.path()),
    )
    .await;
    assert_eq!(allow.status.code(), Some(0), "{}", stderr(&allow));

    let found = modes_under(&data);
    let names: Vec<String> = found
        .iter()
        .map(|(p, _, _)| p.strip_prefix(&data).unwrap().display().to_string())
        .collect();
    assert!(names.iter().any(|n| n.ends_with(".jsonl")), "{names:?}");
    assert!(
        names.iter().any(|n| n == "trusted-mcp-servers.json"),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n == "spill"), "{names:?}");
    // The checkpoint record too (git's objects are read-only: 0400).
    assert!(
        names.iter().any(|n| n.starts_with("checkpoints/")),
        "{names:?}"
    );
    for (path, is_dir, mode) in &found {
        let record_object = path.components().any(|c| c.as_os_str() == "objects");
        let want = match (*is_dir, record_object && *mode == 0o400) {
            (true, _) => 0o700,
            (false, true) => 0o400,
            (false, false) => 0o600,
        };
        assert_eq!(*mode, want, "{} is {mode:o}", path.display());
    }
}

#[tokio::test]
async fn an_older_reins_data_folder_is_made_private_at_start() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let data = home.path().join("rein-home");
    let mine = home.path().join("rein-home/skills");
    for dir in ["", "sessions", "spill", "tmp", "skills"] {
        let dir = data.join(dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let out = output_of(
        rein_command(home.path())
            .args(["config", "--cwd"])
            .arg(project.path())
            .env("REIN_MODEL", "m")
            .env("REIN_BASE_URL", "http://127.0.0.1:9/v1"),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bits = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    for dir in ["", "sessions", "spill", "tmp"] {
        assert_eq!(bits(&data.join(dir)), 0o700, "{dir:?}");
    }
    // A folder of the user's own in it (their skills) is theirs to set.
    assert_eq!(bits(&mine), 0o755);
}
