//! The slash commands an editor offers (`available_commands_update`) and what a prompt
//! that starts with one becomes: a custom command's prompt (`.agents/commands`,
//! `.claude/commands`), `/init`, a skill to load, or an MCP server's prompt, which the
//! agent fetches from the server as in the dashboard.

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, UnstructuredCommandInput,
};
use rein_core::custom_commands::CommandSet;
use rein_core::skills::SkillSet;

use crate::app::commands::{init_prompt, parse, SlashCommand};

/// What the editor lists: `/init`, the custom commands (MCP prompts among them once their
/// servers said so), and the skills.
pub fn available(commands: &CommandSet, skills: &SkillSet) -> Vec<AvailableCommand> {
    let hint = |h: Option<&str>| {
        h.filter(|h| !h.is_empty()).map(|h| {
            AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(h.to_string()))
        })
    };
    let mut out = vec![AvailableCommand::new(
        "init",
        "write AGENTS.md for this project: how to build, test and work in it",
    )
    .input(hint(Some("what to stress (optional)")))];
    for command in commands.iter().chain(commands.mcp().iter()) {
        if out.iter().any(|c| c.name == command.name) {
            continue;
        }
        out.push(
            AvailableCommand::new(command.name.clone(), command.description.clone())
                .input(hint(command.argument_hint.as_deref())),
        );
    }
    for skill in skills.iter() {
        if out.iter().any(|c| c.name == skill.name) {
            continue;
        }
        out.push(
            AvailableCommand::new(skill.name.clone(), format!("skill: {}", skill.description))
                .input(hint(Some("what to use it for (optional)"))),
        );
    }
    out
}

/// The message `text` sends: a command expanded, anything else as it is.
pub fn expand(text: &str, commands: &CommandSet, skills: &SkillSet) -> String {
    if let Some(expansion) = commands.expand(text) {
        return expansion.text;
    }
    if let Some(SlashCommand::Init(notes)) = parse(text) {
        return init_prompt(notes.as_deref());
    }
    let Some(rest) = text.strip_prefix('/') else {
        return text.to_string();
    };
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    match skills.get(name) {
        Some(skill) => {
            let args = args.trim();
            let task = if args.is_empty() {
                String::new()
            } else {
                format!(" for this: {args}")
            };
            format!(
                "Load the skill {} with read_skill and follow it{task}",
                skill.name
            )
        }
        // An MCP prompt (`/mcp__server__prompt`) or a word the model should read.
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skills_and_commands() -> (tempfile::TempDir, CommandSet, SkillSet) {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path();
        std::fs::create_dir_all(project.join(".agents/commands")).unwrap();
        std::fs::write(
            project.join(".agents/commands/review.md"),
            "---\ndescription: review the change\nargument-hint: FILE\n---\nReview $ARGUMENTS carefully.\n",
        )
        .unwrap();
        std::fs::create_dir_all(project.join(".agents/skills/pdf")).unwrap();
        std::fs::write(
            project.join(".agents/skills/pdf/SKILL.md"),
            "---\nname: pdf\ndescription: read and fill PDF forms\n---\nUse pdftotext.\n",
        )
        .unwrap();
        let commands = CommandSet::discover(None, project, &|_| false);
        let skills = SkillSet::from_places(&[(
            project.join(".agents/skills"),
            rein_core::skills::SkillSource::Project,
        )]);
        (dir, commands, skills)
    }

    #[test]
    fn the_editor_lists_init_the_custom_commands_and_the_skills() {
        let (_dir, commands, skills) = skills_and_commands();
        let listed = available(&commands, &skills);
        let names: Vec<&str> = listed.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["init", "review", "pdf"]);
        let review = serde_json::to_value(&listed[1]).unwrap();
        assert_eq!(review["description"], "review the change");
        assert_eq!(review["input"]["hint"], "FILE");
    }

    #[test]
    fn a_prompt_that_names_a_command_sends_its_expansion() {
        let (_dir, commands, skills) = skills_and_commands();
        assert_eq!(
            expand("/review src/a.rs", &commands, &skills).trim(),
            "Review src/a.rs carefully."
        );
        assert!(expand("/init", &commands, &skills).contains("AGENTS.md"));
        assert_eq!(
            expand("/pdf the tax form", &commands, &skills),
            "Load the skill pdf with read_skill and follow it for this: the tax form"
        );
        assert_eq!(
            expand("/mcp__docs__summary x", &commands, &skills),
            "/mcp__docs__summary x"
        );
        assert_eq!(expand("plain words", &commands, &skills), "plain words");
    }
}
