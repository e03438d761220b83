//! Fuzzy matching of a query against a [`FileIndex`], fzf-like: nucleo's scoring (helix's
//! matcher, fzf's algorithm) with bonuses for contiguous runs and for matches at the start
//! of a component or after `_`, `-`, `.`; smart case (a query with a capital letter is
//! case-sensitive). On top of that, a query that matches within the file's own name ranks
//! above one that only matches across its folders, and ties go to the shorter path,
//! then to the index's order (shallow first).
//!
//! A [`PathMatcher`] remembers the last query's matches: when the next query extends it
//! (the user typed one more character), only those are matched again, since a path that
//! did not match `stat` cannot match `state`. A different query, or another index,
//! starts from all entries.

use std::sync::Arc;

use nucleo_matcher::pattern::{Atom, AtomKind, CaseMatching, Normalization};
use nucleo_matcher::{Config, Matcher, Utf32Str};

use super::FileIndex;

/// Added to a match within the file's name: above any score a match across its folders
/// can get (nucleo's scores are `u16`).
const NAME_BONUS: u32 = 1 << 16;

/// One matching entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// Index into [`FileIndex::entries`].
    pub entry: usize,
    pub score: u32,
    /// The matched characters (char positions in the path), for highlighting.
    pub positions: Vec<u32>,
}

/// The best hits of one query, and how many entries matched in all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Matches {
    pub hits: Vec<Hit>,
    pub total: usize,
}

/// A matcher with the last query's matches kept for refining.
pub struct PathMatcher {
    matcher: Matcher,
    /// The last query, the index it ran on, and every entry it matched.
    last: Option<(String, Arc<FileIndex>, Vec<u32>)>,
    buf: Vec<char>,
}

impl std::fmt::Debug for PathMatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PathMatcher")
            .field("last", &self.last.as_ref().map(|(q, _, m)| (q, m.len())))
            .finish()
    }
}

impl Default for PathMatcher {
    fn default() -> Self {
        PathMatcher {
            matcher: Matcher::new(Config::DEFAULT.match_paths()),
            last: None,
            buf: Vec::new(),
        }
    }
}

impl PathMatcher {
    /// The `limit` best entries of `index` for `query`. An empty query lists the index's
    /// first entries (the shallowest).
    pub fn query(&mut self, index: &Arc<FileIndex>, query: &str, limit: usize) -> Matches {
        if query.is_empty() {
            self.last = None;
            let hits = (0..index.entries.len().min(limit))
                .map(|entry| Hit {
                    entry,
                    score: 0,
                    positions: Vec::new(),
                })
                .collect();
            return Matches {
                hits,
                total: index.entries.len(),
            };
        }
        let atom = Atom::new(
            query,
            CaseMatching::Smart,
            Normalization::Smart,
            AtomKind::Fuzzy,
            false,
        );
        // Refine the last query's matches when this one extends it on the same index.
        let candidates: Option<Vec<u32>> = match self.last.take() {
            Some((last, last_index, matched))
                if Arc::ptr_eq(&last_index, index) && query.starts_with(last.as_str()) =>
            {
                Some(matched)
            }
            _ => None,
        };
        let quick = Prefilter::new(query);
        let mut scored: Vec<(u32, u32)> = Vec::new();
        let mut score_one = |i: u32, matcher: &mut Matcher, buf: &mut Vec<char>| {
            let Some(entry) = index.entries.get(i as usize) else {
                return;
            };
            if !quick.may_match(&entry.path) {
                return;
            }
            if let Some(score) = score(&atom, &entry.path, entry.name_start(), matcher, buf) {
                scored.push((i, score));
            }
        };
        match candidates {
            Some(list) => {
                for i in list {
                    score_one(i, &mut self.matcher, &mut self.buf);
                }
            }
            None => {
                for i in 0..index.entries.len() as u32 {
                    score_one(i, &mut self.matcher, &mut self.buf);
                }
            }
        }
        let total = scored.len();
        let matched: Vec<u32> = scored.iter().map(|&(i, _)| i).collect();
        let order = |a: &(u32, u32), b: &(u32, u32)| {
            let len = |i: u32| index.entries[i as usize].path.len();
            b.1.cmp(&a.1)
                .then(len(a.0).cmp(&len(b.0)))
                .then(a.0.cmp(&b.0))
        };
        if scored.len() > limit && limit > 0 {
            scored.select_nth_unstable_by(limit - 1, order);
            scored.truncate(limit);
        }
        scored.sort_unstable_by(order);
        scored.truncate(limit);
        let hits = scored
            .into_iter()
            .map(|(i, score)| {
                let mut positions = Vec::new();
                let path = &index.entries[i as usize].path;
                atom.indices(
                    Utf32Str::new(path, &mut self.buf),
                    &mut self.matcher,
                    &mut positions,
                );
                positions.sort_unstable();
                positions.dedup();
                Hit {
                    entry: i as usize,
                    score,
                    positions,
                }
            })
            .collect();
        self.last = Some((query.to_string(), Arc::clone(index), matched));
        Matches { hits, total }
    }
}

/// The score of `path` for `atom`: [`NAME_BONUS`] and the name's own score when the name
/// alone matches, else the match over the whole path. (A name that matches is a part of
/// the path that matches: the whole path's score would add little and cost a second
/// match.)
fn score(
    atom: &Atom,
    path: &str,
    name_start: usize,
    matcher: &mut Matcher,
    buf: &mut Vec<char>,
) -> Option<u32> {
    let name = path.get(name_start..).unwrap_or(path);
    let name = name.strip_suffix('/').unwrap_or(name);
    if let Some(s) = atom.score(Utf32Str::new(name, buf), matcher) {
        return Some(NAME_BONUS + u32::from(s));
    }
    atom.score(Utf32Str::new(path, buf), matcher).map(u32::from)
}

/// A quick test that rules out most paths before the real matcher runs: the query's
/// characters in order somewhere in the path (ASCII queries only; case-blind unless the
/// query has a capital letter, as smart case is).
struct Prefilter {
    needle: Option<Vec<u8>>,
    fold: bool,
}

impl Prefilter {
    fn new(query: &str) -> Prefilter {
        let fold = !query.bytes().any(|b| b.is_ascii_uppercase());
        Prefilter {
            needle: query.is_ascii().then(|| query.as_bytes().to_vec()),
            fold,
        }
    }

    /// False only when `path` cannot match.
    fn may_match(&self, path: &str) -> bool {
        let Some(needle) = &self.needle else {
            return true;
        };
        let mut want = needle.iter();
        let mut next = want.next();
        for &b in path.as_bytes() {
            let Some(&n) = next else {
                return true;
            };
            let b = if self.fold { b.to_ascii_lowercase() } else { b };
            if b == n {
                next = want.next();
            }
        }
        next.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(paths: &[&str]) -> Arc<FileIndex> {
        Arc::new(FileIndex::of_paths("", paths))
    }

    fn ranked(m: &mut PathMatcher, index: &Arc<FileIndex>, query: &str) -> Vec<String> {
        m.query(index, query, 10)
            .hits
            .iter()
            .map(|h| index.entries[h.entry].path.clone())
            .collect()
    }

    #[test]
    fn a_match_in_the_name_ranks_above_one_across_folders() {
        let idx = index(&["src/app/state.rs", "state/app/src.rs", "sta/te.rs"]);
        let mut m = PathMatcher::default();
        let got = ranked(&mut m, &idx, "state");
        assert_eq!(got[0], "src/app/state.rs");
        assert!(got.contains(&"sta/te.rs".to_string()));
    }

    #[test]
    fn contiguous_and_boundary_matches_win_and_shorter_paths_break_ties() {
        let idx = index(&[
            "docs/model_picker_notes.md",
            "src/app/model_picker.rs",
            "src/ui/model_picker.rs",
            "src/app/mode_lpicker.rs",
        ]);
        let mut m = PathMatcher::default();
        let got = ranked(&mut m, &idx, "modelpicker");
        assert_eq!(got.len(), 4);
        // Same name, same score: the shorter path first.
        assert_eq!(got[0], "src/ui/model_picker.rs");
        assert_eq!(got[1], "src/app/model_picker.rs");
        // `m`, `_`, `p` at word starts beat the same letters scattered.
        let got = ranked(&mut m, &idx, "m_p");
        assert_eq!(
            got.last().map(String::as_str),
            Some("src/app/mode_lpicker.rs")
        );
    }

    #[test]
    fn case_is_smart() {
        let idx = index(&["README.md", "src/readme.rs"]);
        let mut m = PathMatcher::default();
        assert_eq!(ranked(&mut m, &idx, "readme").len(), 2);
        assert_eq!(ranked(&mut m, &idx, "READ"), ["README.md"]);
    }

    #[test]
    fn refining_gives_what_a_fresh_match_gives() {
        let paths: Vec<String> = (0..500)
            .map(|i| format!("dir{}/sub{}/file_{i}.rs", i % 7, i % 13))
            .collect();
        let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
        let idx = index(&refs);
        let mut typing = PathMatcher::default();
        let mut query = String::new();
        for c in "d3s5f_1".chars() {
            query.push(c);
            let refined = typing.query(&idx, &query, 20);
            let fresh = PathMatcher::default().query(&idx, &query, 20);
            assert_eq!(refined, fresh, "{query}");
        }
        // Backspace: a shorter query starts over.
        query.pop();
        let back = typing.query(&idx, &query, 20);
        assert_eq!(back, PathMatcher::default().query(&idx, &query, 20));
    }

    #[test]
    fn an_empty_query_lists_the_first_entries_and_the_limit_holds() {
        let idx = index(&["a", "b", "c/", "c/d"]);
        let mut m = PathMatcher::default();
        let all = m.query(&idx, "", 3);
        assert_eq!(all.total, 4);
        assert_eq!(
            all.hits.iter().map(|h| h.entry).collect::<Vec<_>>(),
            [0, 1, 2]
        );
        let none = m.query(&idx, "zzz", 3);
        assert_eq!(none.total, 0);
        assert!(none.hits.is_empty());
    }

    #[test]
    fn positions_mark_the_matched_characters() {
        let idx = index(&["src/main.rs"]);
        let mut m = PathMatcher::default();
        let hit = &m.query(&idx, "main", 5).hits[0];
        assert_eq!(hit.positions, [4, 5, 6, 7]);
    }
}
