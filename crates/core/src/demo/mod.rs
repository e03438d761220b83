//! `rein --demo`: the whole dashboard without an API key.
//!
//! [`Demo::start`] copies a small example project (`crates/core/assets/demo/project/`, a shell
//! calculator whose `add` subtracts) into a fresh temporary directory and starts a
//! [`ScriptedServer`] on a local port that replays a recorded session
//! (`crates/core/assets/demo/script.json`): the model plans with a todo list, reads the test, runs it
//! (which asks for approval), fixes the bug, runs it again and sums up in Markdown, while
//! the usage it reports fills the gauge of a small context window. The replies come in
//! order whatever rein sends, so the demo is a replay, not a model. The front end points
//! the agent at [`Demo::base_url`] with [`Demo::model`], runs it in [`Demo::project_dir`]
//! and sends [`Demo::first_prompt`]. Dropping the `Demo` stops the server and deletes the
//! project copy.
//!
//! The server and its reply builders live here too (`server`, `reply`): the integration
//! tests and benchmarks use the same scripted model.

pub mod native;
mod project;
pub mod reply;
mod script;
pub mod server;

use std::io;
use std::path::Path;

use project::DemoProject;
use reply::Reply;
use server::ScriptedServer;

/// The model name the demo reports.
pub const MODEL: &str = "rein-demo";
/// The demo's context window, small so the gauge visibly fills.
pub const CONTEXT_WINDOW: u64 = 16_000;
/// The message the front end sends for the user when the dashboard opens.
pub const FIRST_PROMPT: &str = "The calculator test fails. Please fix it.";

/// What the replay answers once the script is over, so a message typed after the demo
/// gets an explanation rather than a server error.
const AFTER_THE_END: &str = "The demo is over: this was a replayed session, and the demo \
model has nothing more to say. To work on your own project, quit and run \
`rein --base-url URL --model NAME` there, with the key in `REIN_API_KEY`.";
/// How many messages after the end get that answer.
const AFTER_THE_END_REPLIES: usize = 20;

/// A running demo: the scripted model and the temporary project it works on.
pub struct Demo {
    server: ScriptedServer,
    project: DemoProject,
    script_len: usize,
}

impl Demo {
    /// Copies the example project and starts the replay at its scripted pace.
    pub async fn start() -> io::Result<Demo> {
        Demo::start_with_pace(1.0).await
    }

    /// Like [`Demo::start`], with every pause multiplied by `pace` (0.0: no pauses, for
    /// tests; 2.0: half speed).
    pub async fn start_with_pace(pace: f64) -> io::Result<Demo> {
        let script = script::parse(script::SCRIPT)?;
        let mut replies = script::build(&script, pace);
        let (prompt, completion) = script
            .last()
            .map(|r| (r.prompt_tokens, r.completion_tokens))
            .unwrap_or_default();
        replies.extend(std::iter::repeat_n(
            Reply::text(AFTER_THE_END).with_usage(prompt + completion, 60),
            AFTER_THE_END_REPLIES,
        ));
        let project = DemoProject::create()?;
        let server = ScriptedServer::start(replies).await?;
        Ok(Demo {
            server,
            project,
            script_len: script.len(),
        })
    }

    /// The chat-completions base URL of the scripted model: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        self.server.base_url()
    }

    /// The model name to send: [`MODEL`].
    pub fn model(&self) -> &'static str {
        MODEL
    }

    /// The temporary copy of the example project: the agent's root.
    pub fn project_dir(&self) -> &Path {
        self.project.dir()
    }

    /// The context window the gauge should use: [`CONTEXT_WINDOW`].
    pub fn context_window(&self) -> u64 {
        CONTEXT_WINDOW
    }

    /// The user message that starts the replay: [`FIRST_PROMPT`].
    pub fn first_prompt(&self) -> &'static str {
        FIRST_PROMPT
    }

    /// The replies of the recorded session (without the answers after its end).
    pub fn script_len(&self) -> usize {
        self.script_len
    }

    /// The scripted server, to look at what rein sent.
    pub fn server(&self) -> &ScriptedServer {
        &self.server
    }
}

impl std::fmt::Debug for Demo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Demo")
            .field("base_url", &self.base_url())
            .field("project_dir", &self.project_dir())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_demo_serves_its_script_and_cleans_up() {
        let demo = Demo::start_with_pace(0.0).await.unwrap();
        assert!(demo.base_url().starts_with("http://127.0.0.1:"));
        assert_eq!(demo.model(), "rein-demo");
        assert_eq!(demo.context_window(), 16_000);
        assert!(!demo.first_prompt().is_empty());
        let dir = demo.project_dir().to_path_buf();
        assert!(dir.join("calc.sh").is_file());
        assert_eq!(
            demo.server().remaining(),
            demo.script_len() + AFTER_THE_END_REPLIES
        );
        drop(demo);
        assert!(!dir.exists());
    }
}
