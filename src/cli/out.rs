//! What the subcommands print. A closed pipe (`rein policy check ls | true`,
//! `rein sessions | head -1`) is not an error: printing stops quietly and the command
//! finishes its work and exits with its own code, as `git` and ripgrep do; the standard
//! `println!` would panic with a backtrace (exit 101). Another failure to write (a full
//! disk) is said once on stderr and fails the command. What goes to stderr never stops
//! anything: if it cannot be written, it is dropped.

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// Stdout is gone (its reader closed it, or it failed): nothing more is written to it.
static CLOSED: AtomicBool = AtomicBool::new(false);
/// Stdout failed for a reason other than a closed pipe: 1, and the command fails.
static FAILED: AtomicU8 = AtomicU8::new(0);

/// A line to stdout, through [`write`].
macro_rules! outln {
    () => {
        $crate::cli::out::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::cli::out::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// Text to stdout, through [`write`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::out::write(format_args!($($arg)*))
    };
}

/// A line to stderr; dropped if stderr cannot take it.
macro_rules! errln {
    ($($arg:tt)*) => {
        rein_core::text::sanitize::to_stderr(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {errln, out, outln};

/// `args` to stdout, unless it is closed. A closed pipe closes it quietly; another error
/// is said on stderr and fails the command ([`failed`]).
pub(crate) fn write(args: fmt::Arguments) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        CLOSED.store(true, Ordering::Relaxed);
        if e.kind() != io::ErrorKind::BrokenPipe {
            FAILED.store(1, Ordering::Relaxed);
            rein_core::text::sanitize::to_stderr(format_args!(
                "rein: cannot write the output: {e}\n"
            ));
        }
    }
}

/// True when stdout failed for a reason other than a closed pipe: the command's output
/// is incomplete, so it fails.
pub(crate) fn failed() -> bool {
    FAILED.load(Ordering::Relaxed) != 0
}
