//! `read_skill`: load one of the skills the system prompt lists.
//!
//! A skill name flows in; out comes the skill's whole `SKILL.md`, read fresh from disk (an
//! edit made during the session shows), under a line saying where the file is, since a
//! skill often names scripts or references next to it. A name that is not a skill is an
//! error listing the real names; a file that has gone or grown too big since startup is an
//! error saying so.

use std::io::ErrorKind;

use serde::Deserialize;
use serde_json::json;

use super::{printable, ToolContext, ToolSpec};
use crate::skills::MAX_SKILL_BYTES;

pub const NAME: &str = "read_skill";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: include_str!("../../assets/tools/read_skill.md"),
        parameters: json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The skill's name, as the system prompt lists it."}
            },
            "required": ["name"],
            "additionalProperties": false
        }),
    }
}

#[derive(Debug, Deserialize)]
pub struct Args {
    pub name: String,
}

pub async fn run(args: Args, ctx: &ToolContext) -> Result<String, String> {
    let Some(skill) = ctx.skills.get(&args.name) else {
        let names = ctx.skills.names();
        let known = if names.is_empty() {
            "there are no skills".to_string()
        } else {
            format!("the skills are: {}", names.join(", "))
        };
        return Err(format!(
            "no skill named \"{}\"; {known}",
            printable(&args.name)
        ));
    };
    let path = &skill.path;
    let gone = |e: std::io::Error| match e.kind() {
        ErrorKind::NotFound => format!(
            "the file of skill \"{}\" ({}) no longer exists",
            skill.name,
            path.display()
        ),
        _ => format!("cannot read {}: {e}", path.display()),
    };
    // A regular file with a cap, whatever replaced the one found at start (a pipe, a link
    // to a device): read without waiting, never more than a skill may be.
    let text = crate::host::safe_fs::read_small_text(path, MAX_SKILL_BYTES).map_err(|e| match e
        .kind()
    {
        ErrorKind::NotFound => gone(e),
        _ => format!(
            "cannot read {}: {e} (a SKILL.md is a UTF-8 file of at most {} KiB)",
            path.display(),
            MAX_SKILL_BYTES / 1024
        ),
    })?;
    let folder = path.parent().unwrap_or(path);
    Ok(format!(
        "Skill \"{}\" from {} (paths in it are relative to {}):\n\n{text}",
        skill.name,
        path.display(),
        folder.display()
    ))
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::skills::SkillSet;
    use crate::tools::{all_specs, prepare, test_context};

    const REVIEW: &str = "---\nname: review\ndescription: Review a change.\n---\n# Review\n\n1. Read the diff.\n2. Run `scripts/check.sh`.\n";

    /// A project with two skills, and a tool context that knows them.
    fn project() -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        let skills = dir.path().join(".agents/skills");
        for (folder, text) in [
            ("review", REVIEW),
            ("pdf", "---\nname: pdf\ndescription: PDFs.\n---\nbody\n"),
        ] {
            std::fs::create_dir_all(skills.join(folder)).unwrap();
            std::fs::write(skills.join(folder).join("SKILL.md"), text).unwrap();
        }
        let set = SkillSet::discover(None, &dir.path().join("data"), dir.path());
        assert_eq!(set.names(), ["pdf", "review"]);
        let ctx = ToolContext {
            skills: Arc::new(set),
            ..test_context(dir.path(), Duration::from_secs(5))
        };
        (dir, ctx)
    }

    fn args(name: &str) -> Args {
        Args {
            name: name.to_string(),
        }
    }

    fn skill_dir(dir: &Path, folder: &str) -> std::path::PathBuf {
        dir.join(".agents/skills").join(folder)
    }

    #[tokio::test]
    async fn returns_the_whole_file_under_where_it_lives() {
        let (dir, ctx) = project();
        let out = run(args("review"), &ctx).await.unwrap();
        let folder = skill_dir(dir.path(), "review");
        assert_eq!(
            out,
            format!(
                "Skill \"review\" from {} (paths in it are relative to {}):\n\n{REVIEW}",
                folder.join("SKILL.md").display(),
                folder.display()
            )
        );
    }

    #[tokio::test]
    async fn the_file_is_read_fresh() {
        let (dir, ctx) = project();
        let path = skill_dir(dir.path(), "pdf").join("SKILL.md");
        std::fs::write(&path, "---\nname: pdf\ndescription: PDFs.\n---\nedited\n").unwrap();
        let out = run(args("pdf"), &ctx).await.unwrap();
        assert!(out.ends_with("---\nedited\n"), "{out}");
        std::fs::remove_file(&path).unwrap();
        let err = run(args("pdf"), &ctx).await.unwrap_err();
        assert_eq!(
            err,
            format!(
                "the file of skill \"pdf\" ({}) no longer exists",
                path.display()
            )
        );
    }

    /// Issue 41: a skill file replaced since start by a pipe or a link to a device is
    /// refused at once, never waited on or read whole (the test finishes).
    #[tokio::test]
    async fn a_pipe_or_a_device_in_place_of_the_skill_is_refused() {
        let (dir, ctx) = project();
        let path = skill_dir(dir.path(), "pdf").join("SKILL.md");
        std::fs::remove_file(&path).unwrap();
        let made = std::process::Command::new("mkfifo").arg(&path).status();
        assert!(made.unwrap().success());
        let err = run(args("pdf"), &ctx).await.unwrap_err();
        assert!(err.contains("not a regular file"), "{err}");
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        let err = run(args("pdf"), &ctx).await.unwrap_err();
        assert!(err.contains("not a regular file"), "{err}");
    }

    #[tokio::test]
    async fn an_unknown_name_lists_the_real_ones() {
        let (_dir, ctx) = project();
        let err = run(args("Review"), &ctx).await.unwrap_err();
        assert_eq!(
            err,
            "no skill named \"Review\"; the skills are: pdf, review"
        );
        let err = run(args("a\u{1b}[2J"), &ctx).await.unwrap_err();
        assert!(err.starts_with("no skill named \"a\\u{1b}[2J\""), "{err}");
    }

    #[tokio::test]
    async fn with_no_skills_the_error_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = test_context(dir.path(), Duration::from_secs(5));
        let err = run(args("review"), &ctx).await.unwrap_err();
        assert_eq!(err, "no skill named \"review\"; there are no skills");
    }

    #[tokio::test]
    async fn through_the_dispatcher() {
        let (_dir, ctx) = project();
        let call = prepare(&all_specs(), NAME, r#"{"name": "pdf"}"#).unwrap();
        assert_eq!(call.summary(), "read_skill: pdf");
        assert!(call.execute(&ctx).await.text.ends_with("---\nbody\n"));
        let call = prepare(&all_specs(), NAME, r#"{"name": "nope"}"#).unwrap();
        let failed = call.execute(&ctx).await;
        assert!(failed.outcome.is_error());
        assert_eq!(
            failed.text,
            "Error: read_skill failed - no skill named \"nope\"; the skills are: pdf, review"
        );
        let err = prepare(&all_specs(), NAME, "{}").unwrap_err();
        assert_eq!(
            err,
            "Error: wrong arguments for read_skill (missing required field \"name\")"
        );
    }
}
