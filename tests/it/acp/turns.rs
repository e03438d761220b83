//! Turns through `rein acp`: a tool call announced, asked about and run or refused as
//! the editor answers; an edit as a diff; the todo list as a plan; a cancel that stops a
//! running command; the modes.

use crate::support;

use serde_json::{json, Value};
use support::{Reply, ScriptedServer};

use super::{choose, command, user_config, Client};

/// The statuses the updates gave the call `id`, in order (pending first, as announced).
fn statuses(client: &Client, id: &str) -> Vec<String> {
    client
        .seen
        .iter()
        .filter(|m| m["method"] == "session/update")
        .map(|m| &m["params"]["update"])
        .filter(|u| u["toolCallId"] == id)
        .filter_map(|u| match u["sessionUpdate"].as_str() {
            Some("tool_call") => Some(u["status"].as_str().unwrap_or("pending").to_string()),
            _ => u["status"].as_str().map(str::to_string),
        })
        .collect()
}

/// The processes running `sleep 613.25`.
fn sleepers() -> Vec<u32> {
    running(b"sleep\x00613.25\x00")
}

/// The processes whose command line is `cmdline`.
fn running(cmdline: &[u8]) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == cmdline))
        .collect()
}

/// Whether `pid` runs (a zombie does not).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z'))
    })
}

fn prompt(session: &str, text: &str) -> Value {
    json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_is_asked_about_and_the_editors_answer_decides_both_ways() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    user_config(
        home.path(),
        "[[permissions.bash]]\npattern = \"touch *\"\naction = \"ask\"\n",
    );
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", r#"{"command": "touch yes.txt"}"#)]),
        Reply::text("Made it."),
        Reply::tool_calls(&[("bash", r#"{"command": "touch no.txt"}"#)]),
        Reply::text("Left it."),
    ])
    .await
    .unwrap();
    let mut client = Client::start(command(home.path(), &server));
    client.initialize().await;
    let session = client.new_session(project.path()).await;

    let mut asked = Vec::new();
    let id = client
        .send("session/prompt", prompt(&session, "make it"))
        .await;
    let done = client
        .response(id, &mut |request| {
            assert_eq!(request["method"], "session/request_permission");
            asked.push(request.clone());
            choose(request, "allow_once")
        })
        .await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    assert!(project.path().join("yes.txt").exists());
    let [question] = asked.as_slice() else {
        panic!("one question: {asked:?}")
    };
    assert_eq!(question["params"]["sessionId"], session.as_str());
    let kinds: Vec<&str> = question["params"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["kind"].as_str())
        .collect();
    assert_eq!(
        kinds,
        ["allow_once", "allow_always", "reject_once", "reject_always"]
    );
    let call = question["params"]["toolCall"]["toolCallId"]
        .as_str()
        .unwrap()
        .to_string();
    let announced = client.updates("tool_call");
    assert_eq!(announced[0]["toolCallId"], call.as_str());
    assert_eq!(announced[0]["kind"], "execute");
    assert_eq!(announced[0]["title"], "touch yes.txt");
    assert_eq!(
        statuses(&client, &call),
        ["pending", "in_progress", "completed"]
    );
    assert!(client.reply_text().contains("Made it."));

    // Refused: nothing runs, the call fails, the model is told, the turn goes on.
    let id = client
        .send("session/prompt", prompt(&session, "again"))
        .await;
    let done = client
        .response(id, &mut |request| choose(request, "reject_once"))
        .await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    assert!(!project.path().join("no.txt").exists());
    let refused = client.updates("tool_call").last().unwrap()["toolCallId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(statuses(&client, &refused), ["pending", "failed"]);
    let requests = server.requests();
    let told = support::last_tool_results(&requests);
    assert!(
        told.iter().any(|r| r.contains("rejected")),
        "the model hears of the refusal: {told:?}"
    );
    assert!(client.close().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_comes_as_a_diff_and_the_todo_list_as_a_plan() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("a.txt"), "old\n").unwrap();
    let todos = json!({"todos": [
        {"content": "Edit a.txt", "status": "completed"},
        {"content": "Run the tests", "status": "in_progress", "active_form": "Running the tests"},
        {"content": "Tell the user", "status": "pending"},
    ]});
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("write_file", r#"{"path": "a.txt", "content": "new\n"}"#)]),
        Reply::tool_calls(&[("write_todos", &todos.to_string())]),
        Reply::text("Done."),
    ])
    .await
    .unwrap();
    let mut client = Client::start(command(home.path(), &server));
    client.initialize().await;
    let session = client.new_session(project.path()).await;
    let id = client
        .send("session/prompt", prompt(&session, "edit"))
        .await;
    let done = client
        .response(id, &mut |request| choose(request, "allow_once"))
        .await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    assert_eq!(
        std::fs::read_to_string(project.path().join("a.txt")).unwrap(),
        "new\n"
    );
    let edit = &client.updates("tool_call")[0];
    assert_eq!(edit["kind"], "edit");
    // The diff comes with the question (the file waits for the answer) or, written
    // without one, from the agent's own before and after.
    let diffs: Vec<Value> = client
        .updates("tool_call_update")
        .into_iter()
        .filter(|u| u["toolCallId"] == edit["toolCallId"] && u["content"][0]["type"] == "diff")
        .collect();
    let diff = &diffs.last().expect("a diff")["content"][0];
    let path = project.path().join("a.txt");
    assert_eq!(diff["path"], path.to_str().unwrap());
    assert_eq!(diff["oldText"], "old\n");
    assert_eq!(diff["newText"], "new\n");
    assert_eq!(edit["locations"][0]["path"], path.to_str().unwrap());
    let plans = client.updates("plan");
    let entries = plans.last().expect("a plan")["entries"].clone();
    assert_eq!(entries.as_array().unwrap().len(), 3);
    assert_eq!(entries[0]["status"], "completed");
    assert_eq!(entries[1]["content"], "Running the tests");
    assert_eq!(entries[1]["status"], "in_progress");
    assert_eq!(entries[2]["status"], "pending");
    assert!(client.close().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_stops_the_running_command_and_the_prompt_answers_cancelled() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    user_config(
        home.path(),
        "[[permissions.bash]]\npattern = \"sleep *\"\naction = \"allow\"\n",
    );
    // A duration no other test uses: the process is found by its command line.
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", r#"{"command": "sleep 613.25"}"#)]),
        Reply::text("Stopped, as asked."),
        Reply::text("Still here."),
    ])
    .await
    .unwrap();
    let mut client = Client::start(command(home.path(), &server));
    client.initialize().await;
    let session = client.new_session(project.path()).await;
    let id = client
        .send("session/prompt", prompt(&session, "wait"))
        .await;
    // Once the command runs, the editor cancels.
    client.until_running().await;
    let mut pids = Vec::new();
    for _ in 0..12_000 {
        pids = sleepers();
        if !pids.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(!pids.is_empty(), "the command runs");
    client
        .notify("session/cancel", json!({"sessionId": session}))
        .await;
    let done = client
        .response(id, &mut |r| panic!("unexpected request {r}"))
        .await;
    assert_eq!(done["result"]["stopReason"], "cancelled", "{done}");
    // The command's process is gone (a zombie counts as gone).
    let mut waited = 0;
    while pids.iter().any(|&p| alive(p)) && waited < 12_000 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        waited += 1;
    }
    assert!(
        !pids.iter().any(|&p| alive(p)),
        "the command outlived the cancel"
    );
    // The session goes on.
    let done = client
        .call("session/prompt", prompt(&session, "hello?"))
        .await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    assert!(client.close().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_modes_are_offered_and_a_switch_is_told_and_obeyed() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("write_file", r#"{"path": "plan.txt", "content": "x"}"#)]),
        Reply::text("I would write plan.txt."),
    ])
    .await
    .unwrap();
    let mut client = Client::start(command(home.path(), &server));
    client.initialize().await;
    let r = client
        .call(
            "session/new",
            json!({"cwd": project.path(), "mcpServers": []}),
        )
        .await;
    let session = r["result"]["sessionId"].as_str().unwrap().to_string();
    let modes = &r["result"]["modes"];
    assert_eq!(modes["currentModeId"], "default");
    let ids: Vec<&str> = modes["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert!(ids.contains(&"default") && ids.contains(&"plan"), "{ids:?}");
    let r = client
        .call(
            "session/set_mode",
            json!({"sessionId": session, "modeId": "plan"}),
        )
        .await;
    assert!(r.get("result").is_some(), "{r}");
    let r = client
        .call(
            "session/set_mode",
            json!({"sessionId": session, "modeId": "yolo"}),
        )
        .await;
    assert!(r.get("error").is_some(), "{r}");
    let id = client
        .send("session/prompt", prompt(&session, "plan it"))
        .await;
    // Plan mode asks nothing about the write (it refuses it); the plan it ends with is put
    // to the user, who keeps planning.
    let mut reviews = Vec::new();
    let done = client
        .response(id, &mut |r| {
            reviews.push(r.clone());
            choose(r, "reject_once")
        })
        .await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let [review] = reviews.as_slice() else {
        panic!("one review: {reviews:?}")
    };
    assert_eq!(review["params"]["toolCall"]["title"], "Ready to code?");
    assert!(!project.path().join("plan.txt").exists(), "plan mode wrote");
    let told = client.updates("current_mode_update");
    assert_eq!(told.last().expect("told")["currentModeId"], "plan");
    assert_eq!(
        server.requests().len(),
        2,
        "kept planning: no further request"
    );
    assert!(client.close().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_that_goes_away_ends_rein_and_what_it_started() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    user_config(
        home.path(),
        "[[permissions.bash]]\npattern = \"sleep *\"\naction = \"allow\"\n",
    );
    let server = ScriptedServer::start(vec![Reply::tool_calls(&[(
        "bash",
        r#"{"command": "sleep 614.75"}"#,
    )])])
    .await
    .unwrap();
    let mut client = Client::start(command(home.path(), &server));
    client.initialize().await;
    let session = client.new_session(project.path()).await;
    client
        .send("session/prompt", prompt(&session, "wait"))
        .await;
    client.until_running().await;
    let mut pids = Vec::new();
    for _ in 0..12_000 {
        pids = running(b"sleep\x00614.75\x00");
        if !pids.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(!pids.is_empty(), "the command runs");
    // The editor closes the pipe mid-turn: rein exits, and the command with it.
    assert!(client.close().await.success());
    let mut waited = 0;
    while pids.iter().any(|&p| alive(p)) && waited < 12_000 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        waited += 1;
    }
    assert!(!pids.iter().any(|&p| alive(p)), "the command outlived rein");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_sent_while_a_turn_runs_is_queued_and_answered_in_turn() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    user_config(
        home.path(),
        "[[permissions.bash]]\npattern = \"sleep *\"\naction = \"allow\"\n",
    );
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", r#"{"command": "sleep 0.5"}"#)]),
        Reply::text("Both done."),
        Reply::text("Spare."),
    ])
    .await
    .unwrap();
    let mut client = Client::start(command(home.path(), &server));
    client.initialize().await;
    let session = client.new_session(project.path()).await;
    let first = client
        .send("session/prompt", prompt(&session, "first"))
        .await;
    client.until_running().await;
    let second = client
        .send("session/prompt", prompt(&session, "second"))
        .await;
    let mut answers = Vec::new();
    while answers.len() < 2 {
        let message = client.next_message().await.expect("rein answers");
        if message.get("method").is_none() {
            answers.push(message);
        }
    }
    // Each prompt gets its answer; the second rode on the running turn (or started the
    // next one), and the model saw both.
    let ids: Vec<&Value> = answers.iter().map(|a| &a["id"]).collect();
    assert!(
        ids.contains(&&json!(first)) && ids.contains(&&json!(second)),
        "{answers:?}"
    );
    for answer in &answers {
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    }
    let sent = server
        .requests()
        .iter()
        .map(|r| r["messages"].to_string())
        .collect::<String>();
    assert!(sent.contains("first") && sent.contains("second"), "{sent}");
    assert!(client.close().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_slash_commands_are_offered_and_a_custom_command_is_expanded() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".agents/commands")).unwrap();
    std::fs::write(
        project.path().join(".agents/commands/review.md"),
        "---\ndescription: review a file\nargument-hint: FILE\n---\nReview $ARGUMENTS with care.\n",
    )
    .unwrap();
    let server = ScriptedServer::start(vec![Reply::text("Reviewed.")])
        .await
        .unwrap();
    let mut client = Client::start(command(home.path(), &server));
    client.initialize().await;
    let session = client.new_session(project.path()).await;
    let done = client
        .call("session/prompt", prompt(&session, "/review src/a.rs"))
        .await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let offered = client.updates("available_commands_update");
    let names: Vec<&str> = offered[0]["availableCommands"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert!(
        names.contains(&"review") && names.contains(&"init"),
        "{names:?}"
    );
    let sent = server.requests()[0]["messages"].to_string();
    assert!(sent.contains("Review src/a.rs with care."), "{sent}");
    assert!(client.close().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_editors_files_the_model_reads_the_buffer_and_edits_land_in_it() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let root = project.path().canonicalize().unwrap();
    std::fs::write(root.join("a.txt"), "saved text\n").unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("read_file", r#"{"path": "a.txt"}"#)]),
        Reply::tool_calls(&[(
            "str_replace",
            r#"{"path": "a.txt", "old": "unsaved", "new": "edited"}"#,
        )]),
        Reply::text("Done."),
    ])
    .await
    .unwrap();
    let mut client = Client::start(command(home.path(), &server));
    client
        .call(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {
                "fs": {"readTextFile": true, "writeTextFile": true}}}),
        )
        .await;
    let session = client.new_session(&root).await;
    let id = client
        .send("session/prompt", prompt(&session, "edit"))
        .await;
    let mut written = Vec::new();
    let done = client
        .response(id, &mut |request| match request["method"].as_str() {
            Some("fs/read_text_file") => {
                assert_eq!(request["params"]["sessionId"], session.as_str());
                json!({"content": "unsaved buffer text\n"})
            }
            Some("fs/write_text_file") => {
                written.push(request["params"].clone());
                json!({})
            }
            _ => choose(request, "allow_once"),
        })
        .await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    // The model read the buffer, not the disk.
    let results = support::last_tool_results(&server.requests());
    let all = server
        .requests()
        .iter()
        .map(|r| r["messages"].to_string())
        .collect::<String>();
    assert!(all.contains("unsaved buffer text"), "{results:?}");
    // The edit went to the editor, made on the buffer's text; the disk is as it was.
    let [write] = written.as_slice() else {
        panic!("one write through the editor: {written:?}")
    };
    assert_eq!(write["path"], root.join("a.txt").to_str().unwrap());
    assert_eq!(write["content"], "edited buffer text\n");
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "saved text\n"
    );
    assert!(client.close().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_withdraws_the_open_question_and_nothing_runs() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    user_config(
        home.path(),
        "[[permissions.bash]]\npattern = \"touch *\"\naction = \"ask\"\n",
    );
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", r#"{"command": "touch never.txt"}"#)]),
        Reply::text("Spare."),
    ])
    .await
    .unwrap();
    let mut client = Client::start(command(home.path(), &server));
    client.initialize().await;
    let session = client.new_session(project.path()).await;
    let id = client
        .send("session/prompt", prompt(&session, "touch it"))
        .await;
    let question = loop {
        let message = client.next_message().await.expect("rein is running");
        if message["method"] == "session/request_permission" {
            break message;
        }
    };
    client
        .notify("session/cancel", json!({"sessionId": session}))
        .await;
    // rein withdraws its question; the editor then answers it cancelled, as ACP asks.
    loop {
        let message = client.next_message().await.expect("rein withdraws");
        if message["method"] == "$/cancel_request" {
            assert_eq!(message["params"]["requestId"], question["id"], "{message}");
            break;
        }
    }
    let line = json!({"jsonrpc": "2.0", "id": question["id"], "result": {"outcome": {"outcome": "cancelled"}}});
    client.write(&line.to_string()).await;
    let done = client
        .response(id, &mut |r| panic!("unexpected request {r}"))
        .await;
    assert_eq!(done["result"]["stopReason"], "cancelled", "{done}");
    assert!(!project.path().join("never.txt").exists());
    assert!(client.close().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commands_output_shows_while_it_runs() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(
            "bash",
            r#"{"command": "echo first; while [ ! -e go ]; do sleep 0.05; done; echo second"}"#,
        )]),
        Reply::text("Both lines."),
    ])
    .await
    .unwrap();
    let mut client = Client::start(command(home.path(), &server));
    client.initialize().await;
    let session = client.new_session(project.path()).await;
    let id = client
        .send("session/prompt", prompt(&session, "run it"))
        .await;
    // The command cannot end before `go` exists, which is made only once "first" showed.
    let mut shown_live = false;
    let done = loop {
        let message = client.next_message().await.expect("rein answers");
        if message["method"] == "session/request_permission" {
            let answer = choose(&message, "allow_once");
            let line = json!({"jsonrpc": "2.0", "id": message["id"], "result": answer});
            client.write(&line.to_string()).await;
            continue;
        }
        let update = &message["params"]["update"];
        let text = update["content"][0]["content"]["text"]
            .as_str()
            .unwrap_or("");
        if update["sessionUpdate"] == "tool_call_update"
            && update["status"].is_null()
            && text.contains("first")
        {
            assert!(!text.contains("second"), "{text}");
            shown_live = true;
            std::fs::write(project.path().join("go"), "").unwrap();
        }
        if message["id"] == id {
            break message;
        }
    };
    assert!(shown_live, "the output showed while the command ran");
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    assert!(client.close().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_plan_switches_the_mode_and_the_model_goes_ahead_in_the_same_prompt() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text("1. Write plan.txt\n2. Check it"),
        Reply::tool_calls(&[("write_file", r#"{"path": "plan.txt", "content": "x"}"#)]),
        Reply::text("Implemented."),
    ])
    .await
    .unwrap();
    let mut client = Client::start(command(home.path(), &server));
    client.initialize().await;
    let session = client.new_session(project.path()).await;
    client
        .call(
            "session/set_mode",
            json!({"sessionId": session, "modeId": "plan"}),
        )
        .await;
    let id = client
        .send("session/prompt", prompt(&session, "plan it"))
        .await;
    let mut asked = Vec::new();
    // Yes to the plan, asking about each action (default mode); yes to the write.
    let done = client
        .response(id, &mut |r| {
            asked.push(r["params"]["toolCall"]["title"].clone());
            choose(r, "allow_once")
        })
        .await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    assert_eq!(asked[0], "Ready to code?", "{asked:?}");
    let review = client
        .updates("tool_call")
        .into_iter()
        .find(|c| c["kind"] == "switch_mode")
        .expect("the plan shown");
    assert_eq!(
        review["content"][0]["content"]["text"],
        "1. Write plan.txt\n2. Check it"
    );
    assert_eq!(
        client.updates("current_mode_update").last().expect("told")["currentModeId"],
        "default"
    );
    assert!(
        project.path().join("plan.txt").exists(),
        "the plan was carried out"
    );
    let sent = server.requests()[1]["messages"].to_string();
    assert!(sent.contains("The plan is approved"), "{sent}");
    assert!(client.reply_text().contains("Implemented."));
    assert!(client.close().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagents_calls_show_as_calls_of_their_own() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("notes.txt"), "heron\n").unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(
            "task",
            r#"{"description": "find the bird", "prompt": "Which bird is in notes.txt?"}"#,
        )]),
        Reply::tool_calls(&[("read_file", r#"{"path": "notes.txt"}"#)]),
        Reply::text("A heron."),
        Reply::text("The subagent found a heron."),
    ])
    .await
    .unwrap();
    let mut client = Client::start(command(home.path(), &server));
    client.initialize().await;
    let session = client.new_session(project.path()).await;
    let id = client
        .send("session/prompt", prompt(&session, "find it"))
        .await;
    let done = client.response(id, &mut |r| choose(r, "allow_once")).await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let calls = client.updates("tool_call");
    let titles: Vec<&str> = calls.iter().filter_map(|c| c["title"].as_str()).collect();
    assert!(titles.contains(&"Subagent: find the bird"), "{titles:?}");
    let read = calls
        .iter()
        .find(|c| c["title"] == "subagent: Read notes.txt")
        .unwrap_or_else(|| panic!("{titles:?}"));
    let read_id = read["toolCallId"].as_str().unwrap();
    assert!(
        read_id.ends_with("/call_1") || read_id.contains('/'),
        "{read_id}"
    );
    assert_eq!(
        statuses(&client, read_id).last().map(String::as_str),
        Some("completed")
    );
    assert!(client.close().await.success());
}
