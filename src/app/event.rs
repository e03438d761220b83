//! What flows into the update step ([`AppEvent`]) and out of it ([`Effect`]).

use std::path::PathBuf;
use std::time::Instant;

use crossterm::event::{KeyEvent, MouseEvent};

use super::model_picker::{ModelList, ServerModels};
use super::picker::SessionList;
use super::rewind::{Preview, RewindTurn, RewindWhat};
use rein_core::agent::{AgentCommand, AgentEvent, ModelSwitch};
use rein_core::custom_commands::CommandSet;
use rein_core::file_index::FileIndex;
use rein_core::session::{EntryAt, LoadedSession};

/// Everything the dashboard reacts to, in one stream.
#[derive(Debug)]
pub enum AppEvent {
    Key(KeyEvent),
    /// Bracketed paste: inserted as text, never sent by itself.
    Paste(String),
    Resize {
        width: u16,
        height: u16,
    },
    Mouse(MouseEvent),
    Agent(AgentEvent),
    /// A timer tick while something is running (status line clocks) or a Ctrl-C waits for
    /// its second press (its hint expires); `now` is when it fired.
    Tick(Instant),
    /// The sessions the loop listed for `/resume`: opens the picker.
    Sessions(SessionList),
    /// The loop switched to a chosen session (the agent runs on it now), or could not: the
    /// reason, and the current session goes on.
    Resumed(Result<Box<LoadedSession>, String>),
    /// The models the loop listed for `/model`: opens the model picker.
    Models(ModelList),
    /// What the server of the model in use listed ([`Effect::ListServerModels`]).
    ServerModels(ServerModels),
    /// The project's files, scanned off the loop for the `@` finder ([`Effect::IndexFiles`]).
    FilesIndexed(Box<FileIndex>),
    /// The loop resolved a model name ([`Effect::SwitchModel`]), its window asked of the
    /// server where the settings leave it open.
    ModelResolved(Box<ModelResolved>),
    /// The custom commands read again ([`Effect::ReloadCommands`]).
    CommandsLoaded(CommandSet),
    /// The inputs of earlier sessions of the project, oldest first, read from the history
    /// file when the dashboard started (`crate::dashboard::input_history`).
    HistoryLoaded(Vec<String>),
    /// An MCP server's state changed, or it has something to say.
    Mcp(rein_core::mcp::McpEvent),
    /// How a login to the MCP server `name` ([`Effect::LoginMcp`]), or a logout, goes.
    McpLogin {
        name: String,
        step: McpLoginStep,
    },
    /// The terminal gained (true) or lost (false) the focus.
    Focus(bool),
    /// The external editor closed ([`Effect::EditInput`]): the new text of the input, or
    /// why it is unchanged (one line).
    Edited(Result<String, String>),
    /// The whole of a stored tool result, read back for its expanded view
    /// ([`Effect::ReadResult`]), or why it could not be read (one line).
    ResultRead {
        id: String,
        at: EntryAt,
        text: Result<String, String>,
    },
    /// This session's turns that have a checkpoint ([`Effect::OpenRewind`]), or why they
    /// could not be read.
    RewindTurns(Result<Vec<RewindTurn>, String>),
    /// The dry run of a rewind ([`Effect::PreviewRewind`]).
    RewindPreview {
        turn: u64,
        what: RewindWhat,
        preview: Preview,
    },
    /// The conversation went back to before `turn`: the dashboard now runs on the new
    /// session (an [`AppEvent::Resumed`] came first); `message` goes back in the input.
    RewindForked {
        turn: u64,
        message: String,
    },
    /// What the session's turns changed, as a unified diff (`/diff`), or why not.
    Diff(Result<String, String>),
    /// The prompt given on the command line (`rein "PROMPT"`): submitted as if typed, once
    /// the question about the project's hooks (if one is open) is answered.
    Prompt(String),
}

/// A step of `/mcp login NAME` or `/mcp logout NAME`, as the loop reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpLoginStep {
    /// The authorization URL to open (rein tries to open it as well).
    Url(String),
    /// A line worth saying (the browser could not be opened, a step failed).
    Note(String),
    /// The login ended: logged in, not needed, or why not.
    Finished(Result<rein_core::mcp::oauth::LoginOutcome, String>),
    /// The logout ended: whether there were tokens to forget, or why not.
    LoggedOut(Result<bool, String>),
}

/// The answer to [`Effect::SwitchModel`].
#[derive(Debug)]
pub struct ModelResolved {
    /// The name as asked for.
    pub name: String,
    /// What the agent needs, or why the name does not work (one line, for the transcript).
    pub result: Result<ResolvedModel, String>,
}

/// A model ready to switch to.
#[derive(Debug)]
pub struct ResolvedModel {
    pub switch: ModelSwitch,
    /// What to know before talking to it (a project file that sends your key elsewhere, a
    /// key that is missing).
    pub warnings: Vec<String>,
}

/// What the update step asks the loop to do.
#[derive(Debug)]
pub enum Effect {
    /// Send a command to the agent (an approval's answer too: [`AgentCommand::Approval`]).
    Agent(AgentCommand),
    /// The conversation is now recorded in this session file (a new conversation began).
    Recording(PathBuf),
    /// A turn began: the session holds a conversation worth resuming.
    Resumable,
    /// The agent now runs on this model, whose window is `window`: the settings `/model`
    /// lists and an agent started later run on it.
    ModelInUse { name: String, window: u64 },
    /// The model's window is known (the server answered, from `url`, or did not in time).
    WindowKnown { window: u64, url: Option<String> },
    /// Ring the terminal bell and post a desktop notification (OSC 9).
    Notify { message: String },
    /// Turn mouse capture on or off.
    MouseCapture(bool),
    /// List the sessions on disk and come back with [`AppEvent::Sessions`].
    OpenPicker,
    /// Load the session file, restart the agent on it, and come back with
    /// [`AppEvent::Resumed`].
    ResumeSession(PathBuf),
    /// List the configured models and come back with [`AppEvent::Models`].
    ListModels,
    /// Ask the server of the model in use for its models, off the loop, and come back with
    /// [`AppEvent::ServerModels`].
    ListServerModels,
    /// Resolve this model name (and ask its server for the window, off the loop) and come
    /// back with [`AppEvent::ModelResolved`].
    SwitchModel(String),
    /// Read the custom commands again (`/clear`) and come back with
    /// [`AppEvent::CommandsLoaded`].
    ReloadCommands,
    /// Open `text` in the user's editor (`$VISUAL`, `$EDITOR`, `vi`) with the dashboard
    /// suspended, and come back with [`AppEvent::Edited`].
    EditInput { text: String },
    /// Scan the project's files (off the loop: a thread) for the `@` finder and come back
    /// with [`AppEvent::FilesIndexed`].
    IndexFiles { root: PathBuf, cap: usize },
    /// Stop the MCP server of this name and start it again (`/mcp restart NAME`).
    RestartMcp(String),
    /// Stop the background command of this id, or every running one for `all`
    /// (`/bashes kill ID`).
    KillBackground(String),
    /// Remember that the user allowed the project's MCP server of this name to run what it
    /// declares, and start it (`/mcp allow NAME`).
    AllowMcp(String),
    /// Log in to the HTTP MCP server of this name with OAuth, off the loop (the browser
    /// may take minutes), and come back with [`AppEvent::McpLogin`] steps (`/mcp login
    /// NAME`).
    LoginMcp(String),
    /// Forget the OAuth tokens of the MCP server of this name and come back with
    /// [`McpLoginStep::LoggedOut`] (`/mcp logout NAME`).
    LogoutMcp(String),
    /// Approve the project's held hooks (pinned to these definitions) and let them run
    /// from the next event on; the transcript says so (or why not).
    AllowHooks(Box<rein_core::hooks::Held>),
    /// Approve the project's hooks as they are now, with the files they run: `/hooks allow`
    /// when nothing was held at start but a changed script holds them now.
    ReapproveHooks,
    /// The user kept the project's hooks held: a session waiting to start goes on.
    HooksAnswered,
    /// Append this input to the history file (`App::input_history`).
    SaveInput(String),
    /// Read the whole result of call `id` from its session entry and come back with
    /// [`AppEvent::ResultRead`].
    ReadResult { id: String, at: EntryAt },
    /// List this session's turns that have a checkpoint and come back with
    /// [`AppEvent::RewindTurns`].
    OpenRewind,
    /// Dry-run taking `turn` back and come back with [`AppEvent::RewindPreview`].
    PreviewRewind { turn: u64, what: RewindWhat },
    /// Take `turn` back: the conversation into a new session the dashboard switches to
    /// ([`AppEvent::RewindForked`]), the files through the agent
    /// ([`rein_core::agent::AgentEvent::Rewound`]).
    Rewind { turn: u64, what: RewindWhat },
    /// Work out the session's changes as a diff and come back with [`AppEvent::Diff`].
    ShowDiff,
    /// Leave the dashboard.
    Quit,
}
