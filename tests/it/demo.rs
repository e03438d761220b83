//! `rein --demo` end to end: the built-in replay drives the real agent, with the default
//! permission rules and real tools, in the demo's temporary project.

use crate::support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rein::headless::{self, HeadlessOptions, OutputFormat};
use rein_core::agent::{
    self, AgentCommand, AgentConfig, AgentEvent, ApprovalDecision, TurnOutcome,
};
use rein_core::demo::Demo;
use rein_core::permissions::policy::RulePolicy;
use rein_core::tools::write_todos::TodoStatus;
use support::agent::{agent_config, test_client, tool_results, turn_with};

/// The agent as `rein --demo` runs it: the demo's model and project, the default rules.
fn config(demo: &Demo) -> AgentConfig {
    let root = demo.project_dir();
    let mut client = test_client(demo.base_url(), "", demo.model());
    client.idle_timeout = Duration::from_secs(10);
    AgentConfig {
        policy: Arc::new(RulePolicy::new(root, &[], &[], None).unwrap()),
        ..agent_config(client, root)
    }
}

/// Runs `sh test_calc.sh` in `dir`: (passed, output).
fn run_tests(dir: &Path) -> (bool, String) {
    let out = std::process::Command::new("sh")
        .arg("test_calc.sh")
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Sends the demo's first prompt and collects the turn's events, approving every ask.
async fn play(demo: &Demo) -> (Vec<AgentEvent>, Vec<String>) {
    let mut handle = agent::spawn(config(demo)).unwrap();
    let mut asked = Vec::new();
    let events = turn_with(&mut handle, demo.first_prompt(), |summary| {
        asked.push(summary.to_string());
        ApprovalDecision::Approve
    })
    .await;
    (events, asked)
}

#[tokio::test]
async fn the_demo_fixes_the_bug_asking_before_each_test_run() {
    let demo = Demo::start_with_pace(0.0).await.unwrap();
    let (passed, before) = run_tests(demo.project_dir());
    assert!(!passed, "the example project starts broken: {before}");

    let (events, asked) = play(&demo).await;

    assert!(
        matches!(
            events.last(),
            Some(AgentEvent::TurnFinished {
                outcome: TurnOutcome::Completed
            })
        ),
        "{events:#?}"
    );
    assert_eq!(demo.server().served(), demo.script_len());

    // The default rules ask before running a script, once per run; nothing else asks.
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(
        asked.iter().all(|s| s.contains("sh test_calc.sh")),
        "{asked:?}"
    );

    // Every tool call worked; the first test run failed, the second passed.
    let results = tool_results(&events);
    let names: Vec<&str> = results.iter().map(|r| r.0.as_str()).collect();
    for tool in ["write_todos", "read_file", "bash", "str_replace"] {
        assert!(names.contains(&tool), "{tool} never ran: {names:?}");
    }
    assert!(
        results.iter().all(|r| !r.2 || r.0 == "bash"),
        "{results:#?}"
    );
    let runs: Vec<&str> = results
        .iter()
        .filter(|r| r.0 == "bash")
        .map(|r| r.1.as_str())
        .collect();
    assert_eq!(runs.len(), 2);
    assert!(runs[0].contains("FAIL add 2 3"), "{}", runs[0]);
    assert!(runs[1].contains("PASS add 2 3"), "{}", runs[1]);

    // The todo list was planned, updated and finished.
    let lists: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TodosUpdated { todos } => Some(todos.clone()),
            _ => None,
        })
        .collect();
    assert!(lists.len() >= 3, "{lists:?}");
    assert_eq!(lists[0].len(), 3);
    let last = lists.last().unwrap();
    assert!(last.iter().all(|t| t.status == TodoStatus::Completed));

    // Usage grew toward the demo's window: the gauge fills.
    let totals: Vec<u64> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Usage(u) => Some(u.total_tokens),
            _ => None,
        })
        .collect();
    assert_eq!(totals.len(), demo.script_len());
    assert!(totals.windows(2).all(|w| w[0] < w[1]), "{totals:?}");
    let filled = *totals.last().unwrap() as f64 / demo.context_window() as f64;
    assert!(filled > 0.7 && filled < 0.85, "{filled}");

    // The streamed text ends with the Markdown summary.
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(text.contains("## Fixed"), "{text}");
    assert!(text.contains("```sh"), "{text}");

    // The fix is real: the project's own test passes now.
    let (passed, after) = run_tests(demo.project_dir());
    assert!(passed, "{after}");
}

#[tokio::test]
async fn headless_yes_runs_the_demo_to_a_passing_test() {
    let demo = Demo::start_with_pace(0.0).await.unwrap();
    let options = HeadlessOptions {
        prompt: demo.first_prompt().to_string(),
        format: OutputFormat::Jsonl,
        yes: true,
        prices: None,
        mode: None,
        before: Vec::new(),
    };
    let code = tokio::time::timeout(support::GIVE_UP, headless::run(config(&demo), options))
        .await
        .expect("the demo finished");
    assert_eq!(code, 0);
    assert!(run_tests(demo.project_dir()).0);
}

#[tokio::test]
async fn messages_after_the_replay_get_an_explanation_and_the_project_goes_away() {
    let demo = Demo::start_with_pace(0.0).await.unwrap();
    let dir = demo.project_dir().to_path_buf();
    play(&demo).await;

    let mut handle = agent::spawn(config(&demo)).unwrap();
    assert!(handle.send(AgentCommand::UserMessage("And now?".into())));
    let mut text = String::new();
    loop {
        let event = tokio::time::timeout(support::GIVE_UP, handle.events.recv())
            .await
            .unwrap()
            .unwrap();
        match event {
            AgentEvent::TextDelta { text: t } => text.push_str(&t),
            AgentEvent::TurnFinished { outcome } => {
                assert_eq!(outcome, TurnOutcome::Completed);
                break;
            }
            _ => {}
        }
    }
    assert!(text.contains("The demo is over"), "{text}");

    drop(handle);
    drop(demo);
    assert!(!dir.exists());
}
