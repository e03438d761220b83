//! Skills end to end: discovery from real folders, the system prompt the scripted server
//! receives, `read_skill` calls through the real agent loop, and `/skills` in the dashboard's
//! update step.

use crate::support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rein::app::state::{App, Cell, NoticeKind, SessionInfo};
use rein::app::update::update_at;
use rein::app::{AppEvent, Effect};
use rein_core::agent::{self, AgentConfig, AgentEvent, AgentHandle, TurnOutcome};
use rein_core::permissions::policy::RulePolicy;
use rein_core::skills::{SkillSet, SkillSource};
use serde_json::{json, Value};
use support::agent::{agent_config, test_client, tool_names, tool_results, turn_with, MODEL};
use support::{Reply, ScriptedServer};

const REVIEW: &str = "---\nname: review\ndescription: Review a change before it is committed.\n---\n# Review\n\n1. Read the diff.\n2. Run `scripts/check.sh`.\n";
const RELEASE_USER: &str =
    "---\nname: release\ndescription: Cut a release (user copy).\n---\nuser body\n";
const RELEASE_PROJECT: &str =
    "---\nname: release\ndescription: \"Cut a release: bump, tag, notes.\"\n---\nproject body\n";

/// A home folder, rein's data dir and a project, with skills in all three places (and one
/// broken skill).
struct Setup {
    _dir: tempfile::TempDir,
    home: PathBuf,
    data: PathBuf,
    project: PathBuf,
}

fn write_skill(skills: &Path, folder: &str, text: &str) {
    std::fs::create_dir_all(skills.join(folder)).unwrap();
    std::fs::write(skills.join(folder).join("SKILL.md"), text).unwrap();
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let data = dir.path().join("data");
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    write_skill(&home.join(".agents/skills"), "release", RELEASE_USER);
    write_skill(
        &data.join("skills"),
        "pdf",
        "---\nname: pdf\ndescription: Fill in PDF forms.\n---\nbody\n",
    );
    write_skill(&project.join(".agents/skills"), "review", REVIEW);
    write_skill(&project.join(".agents/skills"), "release", RELEASE_PROJECT);
    write_skill(
        &project.join(".agents/skills"),
        "broken",
        "# no front matter\n",
    );
    Setup {
        _dir: dir,
        home,
        data,
        project,
    }
}

impl Setup {
    fn skills(&self) -> SkillSet {
        SkillSet::discover(Some(&self.home), &self.data, &self.project)
    }
}

fn config(server: &ScriptedServer, root: &Path, skills: SkillSet) -> AgentConfig {
    let mut client = test_client(server.base_url(), "", MODEL);
    client.idle_timeout = Duration::from_secs(10);
    AgentConfig {
        max_steps: 10,
        // The real policy: read_skill must pass without asking.
        policy: Arc::new(RulePolicy::new(root, &[], &[], None).unwrap()),
        skills: Arc::new(skills),
        ..agent_config(client, root)
    }
}

/// Send `text` and collect the events of the turn; an approval request fails the test.
async fn turn(handle: &mut AgentHandle, text: &str) -> Vec<AgentEvent> {
    turn_with(handle, text, |summary| {
        panic!("read_skill asked for approval: {summary}")
    })
    .await
}

fn system_message(request: &Value) -> String {
    let first = &request["messages"][0];
    assert_eq!(first["role"], "system");
    first["content"].as_str().unwrap().to_string()
}

#[test]
fn discovery_reads_three_places_and_the_project_wins() {
    let s = setup();
    let skills = s.skills();
    assert_eq!(skills.names(), ["pdf", "release", "review"]);
    let release = skills.get("release").unwrap();
    assert_eq!(release.source, SkillSource::Project);
    assert_eq!(release.description, "Cut a release: bump, tag, notes.");
    assert_eq!(skills.get("pdf").unwrap().source, SkillSource::Rein);
    let broken = s.project.join(".agents/skills/broken/SKILL.md");
    assert_eq!(
        skills.notices,
        [format!(
            "skill {} skipped: it does not start with a front matter: the first line must be `---`, then `name: ...` and `description: ...` lines, then `---`",
            broken.display()
        )]
    );
}

#[tokio::test]
async fn the_prompt_lists_the_skills_and_read_skill_loads_one() {
    let s = setup();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("read_skill", &json!({"name": "review"}).to_string())]),
        Reply::tool_calls(&[("read_skill", &json!({"name": "deploy"}).to_string())]),
        Reply::text("Reviewed."),
        Reply::text("Again."),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, &s.project, s.skills())).unwrap();
    let events = turn(&mut handle, "Review my change.").await;

    // The unknown name is an error result, and the turn goes on to the model's answer.
    assert!(matches!(
        events.last(),
        Some(AgentEvent::TurnFinished {
            outcome: TurnOutcome::Completed
        })
    ));
    let results = tool_results(&events);
    let review = s.project.join(".agents/skills/review");
    assert_eq!(
        results,
        [
            (
                "read_skill".to_string(),
                format!(
                    "Skill \"review\" from {} (paths in it are relative to {}):\n\n{REVIEW}",
                    review.join("SKILL.md").display(),
                    review.display()
                ),
                false
            ),
            (
                "read_skill".to_string(),
                "Error: read_skill failed - no skill named \"deploy\"; the skills are: pdf, release, review"
                    .to_string(),
                true
            ),
        ]
    );

    // A skill changed on disk mid-session does not change the prompt of this session.
    write_skill(
        &s.data.join("skills"),
        "pdf",
        "---\nname: pdf\ndescription: Changed.\n---\n",
    );
    turn(&mut handle, "And again.").await;
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let prompt = system_message(&requests[0]);
    assert!(
        prompt.ends_with(
            "Skills: written instructions for particular tasks. When the user's task fits one of \
             these skills, call `read_skill` with its name first, before other tools, and follow \
             what it says.\n\
             - pdf: Fill in PDF forms.\n\
             - release: Cut a release: bump, tag, notes.\n\
             - review: Review a change before it is committed.\n"
        ),
        "{prompt}"
    );
    assert!(!prompt.contains("{{"), "{prompt}");
    // The same bytes in every request of the session, whatever changes on disk meanwhile.
    for r in &requests {
        assert_eq!(system_message(r), prompt);
        let tools = tool_names(r);
        assert!(tools.iter().any(|t| t == "read_skill"), "{tools:?}");
    }
    // The tool result reached the model right after its call.
    let messages = requests[1]["messages"].as_array().unwrap();
    assert_eq!(messages[3]["role"], "tool");
    assert!(messages[3]["content"].as_str().unwrap().ends_with(REVIEW));
}

#[tokio::test]
async fn without_skills_the_prompt_has_no_skills_section() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("read_skill", &json!({"name": "review"}).to_string())]),
        Reply::text("No skills here."),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path(), SkillSet::empty())).unwrap();
    let events = turn(&mut handle, "Review my change.").await;
    assert_eq!(
        tool_results(&events),
        [(
            "read_skill".to_string(),
            "Error: read_skill failed - no skill named \"review\"; there are no skills".to_string(),
            true
        )]
    );
    let prompt = system_message(&server.requests()[0]);
    assert!(!prompt.contains("Skills:"), "{prompt}");
    assert!(!prompt.contains("{{skills}}"), "{prompt}");
    assert!(
        prompt.ends_with("how you checked it, with file paths.\n"),
        "{prompt:?}"
    );
}

// ---- /skills in the dashboard -------------------------------------------------------------

fn send(app: &mut App, text: &str) -> Vec<Effect> {
    let now = Instant::now();
    for c in text.chars() {
        let key = KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
        update_at(app, AppEvent::Key(key), now);
    }
    let enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE);
    update_at(app, AppEvent::Key(enter), now)
}

fn only_info_notice(app: &App) -> String {
    match app.transcript.cells.as_slice() {
        [Cell::Notice(n)] if n.kind == NoticeKind::Info => n.text.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn slash_skills_lists_the_skills_and_what_was_skipped() {
    let s = setup();
    let skills = s.skills();
    let info = SessionInfo {
        skills: skills
            .iter()
            .map(|k| (k.name.clone(), k.description.clone()))
            .collect(),
        skill_notices: skills.notices.clone(),
        prices: None,
        ..SessionInfo::default()
    };
    let mut app = App::new(info, 128_000);
    let effects = send(&mut app, "/skills");
    assert!(effects.is_empty(), "never sent to the model: {effects:?}");
    let broken = s.project.join(".agents/skills/broken/SKILL.md");
    assert_eq!(
        only_info_notice(&app),
        format!(
            "Skills (3): the model loads one with read_skill when the task fits\n  \
             pdf: Fill in PDF forms.\n  \
             release: Cut a release: bump, tag, notes.\n  \
             review: Review a change before it is committed.\n\
             Skipped\n  \
             skill {} skipped: it does not start with a front matter: the first line must be `---`, then `name: ...` and `description: ...` lines, then `---`",
            broken.display()
        )
    );
}

#[test]
fn slash_skills_without_skills_says_where_they_go() {
    let mut app = App::new(SessionInfo::default(), 128_000);
    assert!(send(&mut app, "/skills").is_empty());
    let text = only_info_notice(&app);
    assert!(
        text.starts_with("No skills. A skill is a folder with a SKILL.md"),
        "{text}"
    );
    assert!(text.contains("~/.agents/skills/"), "{text}");
    assert!(text.contains(".agents/skills/"), "{text}");
    assert!(!text.contains("Skipped"), "{text}");
    // /help mentions it.
    assert!(send(&mut app, "/help").is_empty());
    let help = match app.transcript.cells.last() {
        Some(Cell::Notice(n)) => n.text.clone(),
        other => panic!("{other:?}"),
    };
    assert!(help.contains("/skills"), "{help}");
}
