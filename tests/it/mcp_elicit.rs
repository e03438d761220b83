//! A server's forms (MCP elicitation) through the real client (rmcp, rein's stdio
//! transport) against `tests/mcp/hostile_server.py` as a real process, and through the
//! real binary in print mode: the form reaches whoever the call was given to ask, the
//! answer reaches the server; a form rein cannot show is declined with a notice; a form
//! the server gives up on is withdrawn from the user; a call that cannot ask declines; a
//! 1,000-field form goes through without a hang. Headless, `--yes` accepts a form whose
//! required fields all have defaults (SEP-1034) and declines any other, saying so.

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rein_core::elicitation::{Form, FormAnswer};
use rein_core::mcp::{McpManager, ServerConfig};
use rein_core::tools::external::{AskUser, FormWait};
use serde_json::{json, Value};
use support::mcp::{hostile_server, settled};
use support::{Reply, ScriptedServer};

fn server() -> ServerConfig {
    let mut server = ServerConfig::stdio(
        "asker",
        "python3",
        &[hostile_server().to_str().unwrap(), "plain"],
    );
    server.startup_timeout = Duration::from_secs(20);
    server.tool_timeout = Duration::from_secs(60);
    server
}

/// A user who answers every form with `answer` (or never, with `None`), and remembers the
/// forms, what rein told them, and how many forms were withdrawn before an answer.
#[derive(Default)]
struct User {
    answer: Option<FormAnswer>,
    forms: Mutex<Vec<Form>>,
    told: Mutex<Vec<String>>,
    withdrawn: Arc<Mutex<usize>>,
}

struct Withdrawn(Arc<Mutex<usize>>, bool);

impl Drop for Withdrawn {
    fn drop(&mut self) {
        if !self.1 {
            *self.0.lock().unwrap() += 1;
        }
    }
}

impl AskUser for User {
    fn ask(&self, form: Form) -> FormWait {
        self.forms.lock().unwrap().push(form);
        let answer = self.answer.clone();
        let guard = Withdrawn(self.withdrawn.clone(), false);
        Box::pin(async move {
            // The whole guard moves in: dropping the wait drops it.
            let mut guard = guard;
            match answer {
                Some(answer) => {
                    guard.1 = true;
                    answer
                }
                None => std::future::pending().await,
            }
        })
    }

    fn tell(&self, message: String) {
        self.told.lock().unwrap().push(message);
    }
}

async fn started() -> (McpManager, tempfile::TempDir) {
    let root = tempfile::tempdir().unwrap();
    let (mcp, mut events) = McpManager::start(vec![server()], root.path());
    settled(&mut events, &mcp).await;
    (mcp, root)
}

/// Call `work` with `args`, `user` answering its forms; the server's text.
async fn call(mcp: &McpManager, args: Value, user: Option<Arc<User>>) -> String {
    let ask = user.map(|u| u as Arc<dyn AskUser>);
    let out = mcp
        .call_asking("mcp__asker__work", args, None, ask, std::future::pending())
        .await
        .expect("the call succeeds");
    out.to_tool_result().text
}

fn answer(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| panic!("not JSON: {text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_answer_reaches_the_server_and_the_form_is_sanitised() {
    let (mcp, _root) = started().await;
    let user = Arc::new(User {
        answer: Some(FormAnswer::Accept(
            json!({"name": "Ada"}).as_object().cloned().unwrap(),
        )),
        ..User::default()
    });
    let schema = json!({"type": "object", "properties": {
        "name": {"type": "string", "title": "Your \u{1b}]52;c;bad\u{7}name"},
        "age": {"type": "integer", "minimum": 0}}, "required": ["name"]});
    let args = json!({"elicit": schema, "elicit_order": ["name", "age"]});
    let text = call(&mcp, args, Some(user.clone())).await;
    assert_eq!(
        answer(&text),
        json!({"action": "accept", "content": {"name": "Ada"}})
    );
    let forms = user.forms.lock().unwrap().clone();
    assert_eq!(forms.len(), 1);
    let form = &forms[0];
    assert_eq!(
        form.server, "asker",
        "who asks is rein's name for the server"
    );
    assert_eq!(form.message, "^[[31mPlease^[[0m fill this in");
    // The server's order, not the alphabet's.
    let names: Vec<&str> = form.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["name", "age"]);
    assert_eq!(form.fields[0].label, "Your ^[]52;c;bad^Gname");
    // Decline and cancel go back as they are.
    for (given, action) in [
        (FormAnswer::Decline, "decline"),
        (FormAnswer::Cancel, "cancel"),
    ] {
        let user = Arc::new(User {
            answer: Some(given),
            ..User::default()
        });
        let text = call(&mcp, json!({"elicit": schema}), Some(user)).await;
        assert_eq!(answer(&text)["action"], action);
    }
    mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_cannot_ask_declines_and_an_unshowable_form_is_declined_with_a_notice() {
    let (mcp, _root) = started().await;
    let schema = json!({"type": "object", "properties": {"x": {"type": "string"}}});
    // No one to ask (a subagent's call, `McpManager::call`): declined.
    let text = call(&mcp, json!({"elicit": schema}), None).await;
    assert_eq!(answer(&text)["action"], "decline");
    // A multiple choice (an array): declined, and the user is told why.
    let user = Arc::new(User {
        answer: Some(FormAnswer::Cancel),
        ..User::default()
    });
    let multi = json!({"type": "object", "properties": {"tags": {"type": "array",
        "items": {"type": "string", "enum": ["a", "b"]}}}});
    let text = call(&mcp, json!({"elicit": multi}), Some(user.clone())).await;
    assert_eq!(answer(&text)["action"], "decline");
    assert!(user.forms.lock().unwrap().is_empty(), "never shown");
    let told = user.told.lock().unwrap().clone();
    assert!(
        told.iter()
            .any(|t| t.contains("multiple choice") && t.contains("declined")),
        "{told:?}"
    );
    // 1,001 fields: declined too, at once.
    let text = call(&mcp, json!({"elicit_fields": 1001}), Some(user.clone())).await;
    assert_eq!(answer(&text)["action"], "decline");
    assert!(user
        .told
        .lock()
        .unwrap()
        .iter()
        .any(|t| t.contains("1001 fields")));
    mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_the_server_gives_up_on_is_withdrawn_when_its_call_ends() {
    let (mcp, _root) = started().await;
    // A user who never answers: the call must still end when the server gives up.
    let user = Arc::new(User::default());
    let schema = json!({"type": "object", "properties": {"x": {"type": "string"}}});
    let text = call(
        &mcp,
        json!({"elicit": schema, "elicit_give_up": 0.5}),
        Some(user.clone()),
    )
    .await;
    assert_eq!(text, "gave up");
    assert_eq!(user.forms.lock().unwrap().len(), 1);
    // The call's end withdrew the form (the wait is dropped as the call ends).
    let deadline = std::time::Instant::now() + support::GIVE_UP;
    while *user.withdrawn.lock().unwrap() == 0 {
        assert!(std::time::Instant::now() < deadline, "the form stayed open");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The server goes on answering.
    let text = call(&mcp, json!({}), None).await;
    assert_eq!(text, "done");
    mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_field_form_with_huge_defaults_goes_through() {
    let (mcp, _root) = started().await;
    let user = Arc::new(User {
        answer: Some(FormAnswer::Cancel),
        ..User::default()
    });
    let text = call(
        &mcp,
        json!({"elicit_fields": 1000, "elicit_defaults": true}),
        Some(user.clone()),
    )
    .await;
    assert_eq!(answer(&text)["action"], "cancel");
    let forms = user.forms.lock().unwrap().clone();
    assert_eq!(forms[0].fields.len(), 1000);
    let defaults = forms[0].defaults().expect("every field has a default");
    assert_eq!(defaults.len(), 1000);
    mcp.shutdown().await;
}

/// `rein -p` with the asking server and a model that calls `work` with `args` once.
async fn print_mode(args: Value, extra: &[&str]) -> (std::process::Output, Vec<Value>) {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("rein-home")).unwrap();
    std::fs::write(
        home.path().join("rein-home/config.toml"),
        format!(
            "[mcp_servers.asker]\ncommand = \"python3\"\nargs = [{:?}, \"plain\"]\n",
            hostile_server().display().to_string()
        ),
    )
    .unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("mcp__asker__work", &args.to_string())]),
        Reply::text("Done."),
    ])
    .await
    .unwrap();
    let out = support::rein_in(home.path(), project.path())
        .args(["-p", "go", "--base-url", &server.base_url(), "--model", "m"])
        .args(extra)
        .output()
        .unwrap();
    (out, server.requests())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn print_mode_with_yes_accepts_a_form_whose_required_fields_have_defaults() {
    let schema = json!({"type": "object", "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
        "note": {"type": "string"}}, "required": ["name"]});
    let (out, requests) = print_mode(
        json!({"elicit": schema}),
        &["--yes", "--output-format", "jsonl"],
    )
    .await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let results = support::last_tool_results(&requests);
    assert_eq!(
        answer(&results[0]),
        json!({"action": "accept", "content": {"name": "John Doe", "age": 30, "status": "active"}})
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let asked = lines
        .iter()
        .find(|l| l["type"] == "form_requested")
        .expect("a form_requested line");
    assert_eq!(asked["form"]["server"], "asker");
    let answered = lines
        .iter()
        .find(|l| l["type"] == "form_answered")
        .expect("a form_answered line");
    assert_eq!(answered["action"], "accept");
    assert_eq!(answered["content"]["age"], 30);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn print_mode_declines_a_form_it_cannot_fill_in_and_says_why() {
    // A required field without a default, and 1,000 of them: declined at once.
    let (out, requests) = print_mode(json!({"elicit_fields": 1000}), &["--yes"]).await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let results = support::last_tool_results(&requests);
    assert_eq!(answer(&results[0]), json!({"action": "decline"}));
    assert!(
        err.contains("the MCP server \"asker\" asked for a form")
            && err.contains("declined: its required fields Field 0, Field 1"),
        "{err}"
    );
    assert!(
        !err.contains('\u{1b}'),
        "the server's escape sequence is shown as text"
    );
}

/// A user who answers after `delay`.
struct Slow {
    delay: Duration,
}

impl AskUser for Slow {
    fn ask(&self, _form: Form) -> FormWait {
        let delay = self.delay;
        Box::pin(async move {
            tokio::time::sleep(delay).await;
            FormAnswer::Accept(json!({"name": "Ada"}).as_object().cloned().unwrap())
        })
    }

    fn tell(&self, _message: String) {}
}

/// The call's clock stops while its form is open: a user who takes longer than the tool
/// timeout to fill the form in still gets the call's result; without a form, the same
/// timeout ends a silent call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_open_longer_than_the_tool_timeout_does_not_time_the_call_out() {
    let root = tempfile::tempdir().unwrap();
    let mut config = server();
    config.tool_timeout = Duration::from_secs(1);
    let (mcp, mut events) = McpManager::start(vec![config], root.path());
    settled(&mut events, &mcp).await;
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    let ask: Arc<dyn AskUser> = Arc::new(Slow {
        delay: Duration::from_millis(2500),
    });
    let out = mcp
        .call_asking(
            "mcp__asker__work",
            json!({"elicit": schema}),
            None,
            Some(ask),
            std::future::pending(),
        )
        .await
        .expect("the call succeeds");
    assert_eq!(
        answer(&out.to_tool_result().text),
        json!({"action": "accept", "content": {"name": "Ada"}})
    );
    // A call that says nothing for longer than the timeout still times out.
    let silent = mcp
        .call_asking(
            "mcp__asker__work",
            json!({"sleep": 3}),
            None,
            None,
            std::future::pending(),
        )
        .await;
    assert!(
        matches!(
            silent,
            Err(rein_core::mcp::McpError::Timeout { secs: 1, .. })
        ),
        "{silent:?}"
    );
    mcp.shutdown().await;
}
