//! `client.window_timeout_secs`: how long the question about the model's window may take.
//! Told apart by what the server answers, never by the clock: the scripted server holds
//! its `/props` answer longer than one limit and well within the other.

use std::time::Duration;

use super::*;
use crate::demo::server::ScriptedServer;

#[test]
fn the_setting_is_read_and_defaults_to_two_seconds() {
    let f = Fixture::new();
    let c = f.load().unwrap();
    assert_eq!(c.window_timeout_secs.value, 2);
    assert_eq!(c.window_timeout_secs.source, Source::Default);
    assert_eq!(c.window_timeout(), discover::TIMEOUT);
    f.write_user("[client]\nwindow_timeout_secs = 30\n");
    let c = f.load().unwrap();
    assert_eq!(c.window_timeout(), Duration::from_secs(30));
    for bad in ["0", "301", "86400"] {
        f.write_user(&format!("[client]\nwindow_timeout_secs = {bad}\n"));
        let message = f.error();
        assert!(message.contains("window_timeout_secs"), "{message}");
    }
    // A project's file is held to the same bound.
    f.write_user("");
    f.write_project("[client]\nwindow_timeout_secs = 86400\n");
    let message = f.error();
    assert!(message.contains("window_timeout_secs"), "{message}");
}

/// The window `rein config` shows: the server's when it answers within the limit, the
/// configured one when the limit runs out first.
#[test]
fn the_question_waits_as_long_as_the_setting_says() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(ScriptedServer::start(Vec::new())).unwrap();
    // Answered after 3 s: past the default 2 s, well within 60 s.
    server.answer_props(32_768, Duration::from_secs(3));
    let f = Fixture::new();
    let base = format!("base_url = \"{}\"\nmodel = \"m\"\n", server.base_url());
    f.write_user(&base);
    let mut c = f.load().unwrap();
    crate::start::discover_window(&mut c);
    assert_eq!(
        c.context_window.value, DEFAULT_CONTEXT_WINDOW,
        "the default gave up"
    );
    f.write_user(&format!("{base}[client]\nwindow_timeout_secs = 60\n"));
    let mut c = f.load().unwrap();
    crate::start::discover_window(&mut c);
    assert_eq!(c.context_window.value, 32_768, "the longer limit waited");
    assert_eq!(server.probes(), 2);
}
