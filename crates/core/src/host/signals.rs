//! The signals that end rein from outside: SIGTERM (a `kill`, a service manager), SIGHUP
//! (the terminal closed) and SIGQUIT. Both front ends wait for [`termination`] beside their
//! other work and, when it fires, end the turn as Ctrl-C does (the request dropped, every
//! running command's process group killed), restore the terminal and exit, instead of
//! dying with the default action, which would leave commands running without the sandbox
//! and the terminal on the alternate screen. For SIGKILL, which cannot be caught, a
//! command's shell gets a parent-death signal (`tools::bash`).

/// Resolves with the signal's name when one of them arrives; never, where they cannot be
/// watched.
pub async fn termination() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut term), Ok(mut hup), Ok(mut quit)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
            signal(SignalKind::quit()),
        ) else {
            return std::future::pending().await;
        };
        tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = hup.recv() => "SIGHUP",
            _ = quit.recv() => "SIGQUIT",
        }
    }
    #[cfg(not(unix))]
    {
        std::future::pending().await
    }
}

/// The exit code for a process ended by `signal`, as a shell reports it (128 + number).
pub fn exit_code(signal: &str) -> i32 {
    match signal {
        "SIGHUP" => 129,
        "SIGQUIT" => 131,
        _ => 143,
    }
}
