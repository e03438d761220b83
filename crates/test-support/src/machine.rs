//! The machine, for the tests that need it whole. The integration tests share one process
//! and its test threads: a test that loads every core for minutes (a real model on
//! llama.cpp) takes the machine [`whole`], and a test that watches a real terminal against
//! a deadline (tmux) takes a [`share`] of it, so the two never run at the same time, as
//! they never did when each file was a binary of its own. Every other test runs beside
//! either.
//!
//! A share is given whenever no test holds the machine whole, so a test may hold several
//! (one a tmux session) without waiting on itself; the machine is given whole when no
//! share is held. Both wait as long as they must: a test waiting here waits for another
//! test to finish, never for the clock.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

struct State {
    shares: usize,
    whole: bool,
}

static STATE: Mutex<State> = Mutex::new(State {
    shares: 0,
    whole: false,
});
static CHANGED: Condvar = Condvar::new();

/// The machine held whole, until dropped.
pub struct Whole(());

/// A share of the machine, until dropped.
pub struct Share(());

/// The state (a test that failed while holding the lock left it as it was).
fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

fn wait(guard: MutexGuard<'static, State>) -> MutexGuard<'static, State> {
    CHANGED.wait(guard).unwrap_or_else(PoisonError::into_inner)
}

/// The whole machine: no share and no other whole is held while this is.
pub fn whole() -> Whole {
    let mut s = state();
    while s.whole || s.shares > 0 {
        s = wait(s);
    }
    s.whole = true;
    Whole(())
}

/// A share of the machine: nobody holds it whole while this is held.
pub fn share() -> Share {
    let mut s = state();
    while s.whole {
        s = wait(s);
    }
    s.shares += 1;
    Share(())
}

impl Drop for Whole {
    fn drop(&mut self) {
        state().whole = false;
        CHANGED.notify_all();
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        state().shares -= 1;
        CHANGED.notify_all();
    }
}
