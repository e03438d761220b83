//! One edit, checked: the server told the new text, the wait for its word (bounded), and
//! what the edit introduced ([`super::diagnostics::introduced`]); a word that comes late
//! is kept for the next tool result ([`Lsp::late`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;

use super::diagnostics::{introduced, Diag, Introduced};
use super::server::{self, Server};
use super::{open, Late, Lsp, Running, MAX_LATE, QUIET, WARM_QUIET};

impl Lsp {
    /// The edit's report from `running` (see [`Lsp::edited`]).
    pub(super) async fn check(
        &self,
        running: &Arc<Running>,
        path: &Path,
        before: Option<&str>,
        after: &str,
    ) -> Option<String> {
        let server = &running.server;
        let mut docs = running.docs.lock().await;
        let version = match docs.get(path).copied() {
            Some(v) => v,
            None => {
                // Seen first now: opened as it was, so what was there before is known.
                let first = before.unwrap_or("");
                open(server, path, first, 1);
                running.told(path, first);
                docs.insert(path.to_path_buf(), 1);
                1
            }
        };
        // A server started just now first checks the project (its own wait).
        self.warm_up(running).await;
        let deadline = Instant::now() + self.inner.settings.wait;
        // What the server says of the file as it was, and of every other file.
        // (When it does not come in time, the wait after the change ends at once too.)
        self.settle(server, path, version, deadline).await;
        let (before_all, seq) = snapshot(server);
        let next = version + 1;
        docs.insert(path.to_path_buf(), next);
        server.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": server::uri(path), "version": next},
                   "contentChanges": [{"text": after}]}),
        );
        server.notify(
            "textDocument/didSave",
            json!({"textDocument": {"uri": server::uri(path)}, "text": after}),
        );
        running.told(path, after);
        drop(docs);
        // Servers push their diagnostics: rein does not offer to pull them (a server that
        // would only answer pulls reports nothing, and the result says so).
        let came = server
            .wait_until(deadline, |s| {
                s.published
                    .get(path)
                    .is_some_and(|p| p.seq > seq && p.version.is_none_or(|v| v >= next))
            })
            .await;
        if came {
            self.quiet(server, deadline).await;
        }
        let name = &server.spec.name;
        if let Some(why) = server.dead() {
            self.tell(format!("{name} stopped: {why}{}", said(server)));
            return Some(format!("({name} stopped before it reported on this edit)"));
        }
        if !came {
            self.wait_late(Late {
                running: running.clone(),
                path: path.to_path_buf(),
                by_command: false,
                version: next,
                seq,
                before: before_all,
            });
            return Some(format!(
                "({name} had not reported on this edit within {:.1} s; what it finds comes with a later result)",
                self.inner.settings.wait.as_secs_f64()
            ));
        }
        self.found(server, path, &before_all, seq).report(name)
    }

    /// Keep `waiting` for [`Lsp::late`]: the newest wait for a file supersedes an older
    /// one, and at most [`MAX_LATE`] are kept.
    pub(super) fn wait_late(&self, waiting: Late) {
        let mut late = self
            .inner
            .late
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        late.retain(|w| w.path != waiting.path);
        if late.len() < MAX_LATE {
            late.push(waiting);
        }
    }

    /// What the edit of `path` introduced: `path`'s diagnostics as published now and those
    /// of the files published since `seq`, against `before`.
    fn found(
        &self,
        server: &Server,
        path: &Path,
        before: &HashMap<PathBuf, Vec<Diag>>,
        seq: u64,
    ) -> Introduced {
        let state = server.state();
        let mut found = Introduced::default();
        let old = |p: &Path| before.get(p).map_or(&[][..], Vec::as_slice);
        let edited_now = state
            .published
            .get(path)
            .map(|p| p.diags.clone())
            .unwrap_or_default();
        let mine = introduced(old(path), &edited_now);
        if !mine.is_empty() {
            found.files.push((self.shown(path), mine));
        }
        let mut others: Vec<(&PathBuf, &server::Published)> = state
            .published
            .iter()
            .filter(|(p, d)| d.seq > seq && p.as_path() != path)
            .collect();
        others.sort_by(|a, b| a.0.cmp(b.0));
        for (p, published) in others {
            let new = introduced(old(p), &published.diags);
            if !new.is_empty() {
                found.files.push((self.shown(p), new));
            }
        }
        found
    }

    /// What the edits the servers had not reported on in time introduced, now that their
    /// word came: for the next tool result (`None`: nothing to tell).
    pub fn late(&self) -> Option<String> {
        let mut late = self
            .inner
            .late
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if late.is_empty() {
            return None;
        }
        let mut out = Vec::new();
        late.retain(|waiting| {
            let server = &waiting.running.server;
            if server.dead().is_some() {
                return false;
            }
            let came = server
                .state()
                .published
                .get(&waiting.path)
                .is_some_and(|p| {
                    p.seq > waiting.seq && p.version.is_none_or(|v| v >= waiting.version)
                });
            if !came {
                return true;
            }
            let found = self.found(server, &waiting.path, &waiting.before, waiting.seq);
            if let Some(report) = found.report(&server.spec.name) {
                let what = if waiting.by_command {
                    "After a command changed"
                } else {
                    "Late, about the earlier edit of"
                };
                out.push(format!("({what} {}:) {report}", self.shown(&waiting.path)));
            }
            false
        });
        (!out.is_empty()).then(|| out.join("\n\n"))
    }

    /// Wait (until `deadline`) for the server's word on `path` at `version` and for its
    /// work in progress to end.
    async fn settle(&self, server: &Server, path: &Path, version: i64, deadline: Instant) {
        // Said already, and nothing has come for a while: settled (no wait).
        {
            let s = server.state();
            let said = s
                .published
                .get(path)
                .is_some_and(|p| p.version.is_none_or(|v| v >= version));
            let still = s.last_at.is_none_or(|at| at.elapsed() >= QUIET);
            if said && still && s.progress.is_empty() {
                return;
            }
        }
        let came = server
            .wait_until(deadline, |s| {
                s.published
                    .get(path)
                    .is_some_and(|p| p.version.is_none_or(|v| v >= version))
            })
            .await;
        if came {
            self.quiet(server, deadline).await;
        }
    }

    /// Wait until nothing more came for [`QUIET`] and no work is in progress, or
    /// `deadline`.
    async fn quiet(&self, server: &Server, deadline: Instant) {
        self.quiet_for(server, QUIET, deadline).await;
    }

    /// [`Lsp::quiet`] with `quiet` as the time without news (what passed since the last
    /// news counts).
    async fn quiet_for(&self, server: &Server, quiet: Duration, deadline: Instant) {
        loop {
            let (seq, busy, since) = {
                let s = server.state();
                let since = s.last_at.map_or(quiet, |at| at.elapsed());
                (s.seq, !s.progress.is_empty(), since)
            };
            if !busy && since >= quiet {
                return;
            }
            let until = (Instant::now()
                + quiet.saturating_sub(since).max(Duration::from_millis(100)))
            .min(deadline);
            server
                .wait_until(until, |s| s.seq != seq || s.progress.is_empty() == busy)
                .await;
            if Instant::now() >= deadline {
                return;
            }
        }
    }

    /// A server's first check of the project, waited for once (at most the start
    /// timeout, apart from an edit's own wait): until its first report and then
    /// [`WARM_QUIET`] without another. Its word on the files as they were is then known
    /// before an edit changes them, so nothing found in that first check is blamed on it.
    async fn warm_up(&self, running: &Running) {
        running
            .warm
            .get_or_init(|| async {
                let server = &running.server;
                let deadline = Instant::now() + self.inner.settings.start_timeout;
                server.wait_until(deadline, |s| s.seq > 0).await;
                self.quiet_for(server, WARM_QUIET, deadline).await;
            })
            .await;
    }
}

/// The last line the server wrote on its standard error, as ` (it said: …)`, or nothing.
fn said(server: &Server) -> String {
    let state = server.state();
    match state.stderr.trim().lines().last() {
        Some(line) if !line.trim().is_empty() => {
            let line: String = line.trim().chars().take(200).collect();
            format!(" (it said: {line})")
        }
        _ => String::new(),
    }
}

/// Every file's diagnostics as `server` last published them, and its publish count.
pub(super) fn snapshot(server: &Server) -> (HashMap<PathBuf, Vec<Diag>>, u64) {
    let state = server.state();
    let all = state
        .published
        .iter()
        .map(|(p, d)| (p.clone(), d.diags.clone()))
        .collect();
    (all, state.seq)
}
