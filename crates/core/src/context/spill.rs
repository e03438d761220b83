//! Layer 1, cap on arrival: a tool result longer than `context.cap_chars` is cut the
//! moment it returns, before the history or the session file sees it.
//!
//! In: a call's result text. Out: the text itself when it fits; otherwise its head (about
//! 40 %) and its tail (about 60 %: errors and summaries usually come last), cut at line
//! ends where one is near and always on character boundaries, with a note in the gap
//! saying how much was cut and where the whole output is. The whole output goes to a spill
//! file in the turn's folder, `<spill dir>/<pid>-<turn>/<call id>.txt`, which the model can
//! page with `head`, `tail`, `sed -n` or `grep` (the user's alone: 0600 in 0700 folders,
//! see [`crate::host::private_fs`]); the folder is removed when the user's turn
//! ends ([`TurnSpill::remove`]); the folders a crashed process left behind are swept when
//! the next agent starts ([`sweep_stale`]). When the file cannot be written the result is still cut,
//! and the note says the whole output was not kept. Old messages are never rewritten here.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::ContextConfig;

/// The share of the kept characters that comes from the head, in percent.
const HEAD_PERCENT: usize = 40;

/// Where one user turn's spill files go, and how long a result may be.
#[derive(Debug, Clone)]
pub struct TurnSpill {
    cap_chars: usize,
    /// This turn's folder; `None` when results are capped without keeping the whole.
    dir: Option<PathBuf>,
}

impl TurnSpill {
    /// The spill of turn number `turn` of this process.
    pub fn new(config: &ContextConfig, turn: u64) -> TurnSpill {
        TurnSpill {
            cap_chars: config.cap_chars.max(1),
            dir: config
                .spill_dir
                .as_ref()
                .map(|d| d.join(format!("{}-{turn}", std::process::id()))),
        }
    }

    /// A spill that caps nothing (a result of any size passes whole).
    pub fn unlimited() -> TurnSpill {
        TurnSpill {
            cap_chars: usize::MAX,
            dir: None,
        }
    }

    /// This turn's folder, if results are kept.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// `text`, or its head and tail with a note when it is longer than the cap. `name`
    /// names the spill file (a call id; anything but letters, digits, `-` and `_` becomes
    /// `_`).
    pub fn cap(&self, name: &str, text: String) -> String {
        self.cap_reporting(name, text).0
    }

    /// [`cap`](Self::cap), and what it did when it cut.
    pub fn cap_reporting(&self, name: &str, text: String) -> (String, Option<Capped>) {
        self.cap_keeping(name, text, None)
    }

    /// [`cap_reporting`](Self::cap_reporting), the spill file keeping `whole` (when given)
    /// rather than `text`: a command's output exactly as printed, where the model reads it
    /// trimmed and with its exit status.
    pub fn cap_keeping(
        &self,
        name: &str,
        text: String,
        whole: Option<String>,
    ) -> (String, Option<Capped>) {
        self.cap_to(name, text, whole, self.cap_chars, "output")
    }

    /// A user message longer than `limit` characters, cut as a tool result is (head and
    /// tail kept, the whole in this turn's folder), the note calling it a message.
    pub fn cap_message(&self, name: &str, text: String, limit: usize) -> (String, Option<Capped>) {
        self.cap_to(name, text, None, limit.max(1), "message")
    }

    fn cap_to(
        &self,
        name: &str,
        text: String,
        whole: Option<String>,
        limit: usize,
        what: &str,
    ) -> (String, Option<Capped>) {
        let Some((head, tail)) = cut(&text, limit) else {
            return (text, None);
        };
        let total = text.chars().count();
        let cut_chars = total - head.chars().count() - tail.chars().count();
        let written = self.write(name, whole.as_deref().unwrap_or(&text));
        let kept = match &written {
            Ok(path) => format!(
                "[… {cut_chars} of {total} characters cut from the middle of this {what}. The whole {what} is in {}: page it with `head`, `tail`, `sed -n 'A,Bp'` or `grep` (it is removed when this user turn ends).]",
                path.display()
            ),
            Err(why) => format!(
                "[… {cut_chars} of {total} characters cut from the middle of this {what}; the whole {what} could not be kept ({why}).]"
            ),
        };
        let mut out = String::with_capacity(head.len() + kept.len() + tail.len() + 2);
        out.push_str(head);
        if !head.is_empty() && !head.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&kept);
        out.push('\n');
        out.push_str(tail);
        let capped = Capped {
            total_chars: total,
            kept_chars: total - cut_chars,
            spill: written.ok(),
        };
        (out, Some(capped))
    }

    /// Write the whole `text` to a new file in this turn's folder.
    fn write(&self, name: &str, text: &str) -> Result<PathBuf, String> {
        let dir = self
            .dir
            .as_ref()
            .ok_or_else(|| "no spill folder is configured".to_string())?;
        crate::host::private_fs::own_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let stem: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(100)
            .collect();
        let stem = if stem.is_empty() {
            "result".into()
        } else {
            stem
        };
        // Call ids repeat across subagents; never overwrite an earlier spill.
        let mut path = dir.join(format!("{stem}.txt"));
        let mut n = 1;
        let mut file = loop {
            match crate::host::private_fs::create_new(&path) {
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => {
                    n += 1;
                    path = dir.join(format!("{stem}-{n}.txt"));
                }
                other => break other.map_err(|e| format!("{}: {e}", path.display()))?,
            }
        };
        std::io::Write::write_all(&mut file, text.as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(path)
    }

    /// Remove this turn's folder and every spill file in it (nothing when none was made).
    pub fn remove(&self) -> std::io::Result<()> {
        match &self.dir {
            Some(dir) => match std::fs::remove_dir_all(dir) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            },
            None => Ok(()),
        }
    }
}

/// Remove the turn folders of `spill_dir` that no running rein will remove: those of a
/// process that is gone (where `/proc` tells) and untouched for an hour, and any untouched
/// for a day. A crash or a kill skips [`TurnSpill::remove`]; this keeps the folder from
/// growing. The folders of this process are never touched. Returns how many went.
pub fn sweep_stale(spill_dir: &Path, now: SystemTime) -> usize {
    let Ok(entries) = std::fs::read_dir(spill_dir) else {
        return 0;
    };
    let own = std::process::id();
    let can_tell = Path::new("/proc/self").exists();
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.split_once('-'))
            .and_then(|(pid, turn)| turn.parse::<u64>().ok().and(pid.parse::<u32>().ok()))
        else {
            continue;
        };
        if pid == own {
            continue;
        }
        let age = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .unwrap_or_default();
        let gone = can_tell && !Path::new(&format!("/proc/{pid}")).exists();
        let stale = age > STALE_AFTER || (gone && age > GONE_STALE_AFTER);
        if stale && std::fs::remove_dir_all(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// A turn folder untouched this long is stale whoever made it.
const STALE_AFTER: Duration = Duration::from_secs(24 * 3600);
/// A turn folder of a process that is gone is stale once untouched this long.
const GONE_STALE_AFTER: Duration = Duration::from_secs(3600);

/// What capping one result did: its size, what the model keeps of it, and the spill file
/// holding the whole (none when it could not be written).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Capped {
    pub total_chars: usize,
    pub kept_chars: usize,
    pub spill: Option<PathBuf>,
}

/// One line for the user: "output capped: 42k → 10k chars, the whole in /…/call_1.txt".
pub fn summary(name: &str, capped: &Capped) -> String {
    let whole = match &capped.spill {
        Some(path) => format!("; the whole is in {} until your turn ends", path.display()),
        None => String::new(),
    };
    format!(
        "{name} output capped on arrival: {} → {} chars{whole}",
        super::short_count(capped.total_chars as u64),
        super::short_count(capped.kept_chars as u64)
    )
}

/// The head and tail of `text` to keep, about `keep` characters in all, or `None` when the
/// whole text is at most `keep` characters. The head ends after a newline and the tail
/// starts after one when such a line end lies in the outer half of each part; otherwise
/// they are cut mid-line, always on a character boundary.
pub fn cut(text: &str, keep: usize) -> Option<(&str, &str)> {
    let total = text.chars().count();
    if total <= keep {
        return None;
    }
    let head_chars = keep * HEAD_PERCENT / 100;
    let tail_chars = keep - head_chars;
    let mut head = &text[..byte_at(text, head_chars)];
    if let Some(nl) = head.rfind('\n') {
        if nl + 1 >= head.len() / 2 {
            head = &head[..nl + 1];
        }
    }
    let mut tail = &text[byte_at(text, total - tail_chars)..];
    if let Some(nl) = tail.find('\n') {
        if nl < tail.len() / 2 {
            tail = &tail[nl + 1..];
        }
    }
    Some((head, tail))
}

/// The byte offset of character number `n` of `text` (its length when it has fewer).
fn byte_at(text: &str, n: usize) -> usize {
    text.char_indices().nth(n).map_or(text.len(), |(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_turn_folders_of_gone_processes_are_swept() {
        let root = tempfile::tempdir().unwrap();
        let make = |name: &str| {
            let dir = root.path().join(name);
            std::fs::create_dir(&dir).unwrap();
            std::fs::write(dir.join("c.txt"), "x").unwrap();
            dir
        };
        // Pids this large are never handed out (the kernel's maximum is 2^22).
        let gone_fresh = make("999999991-1");
        let gone_old = make("999999992-3");
        let own_ancient = make(&format!("{}-1", std::process::id()));
        let alive_recent = make("1-2");
        let other = make("notes");
        let now = SystemTime::now();
        let later = |hours: u64| now + Duration::from_secs(hours * 3600);
        // Nothing is old yet: only what is gone and over an hour old would go.
        assert_eq!(sweep_stale(root.path(), now), 0);
        // Two hours on: the gone process's folders go (where /proc tells), others stay.
        let expected = if Path::new("/proc/self").exists() {
            2
        } else {
            0
        };
        assert_eq!(sweep_stale(root.path(), later(2)), expected);
        assert_eq!(gone_fresh.exists(), expected == 0);
        assert_eq!(gone_old.exists(), expected == 0);
        assert!(alive_recent.exists() && own_ancient.exists() && other.exists());
        // Exactly an hour untouched is not over an hour; exactly a day is not over a day.
        let mtime = |p: &Path| std::fs::metadata(p).unwrap().modified().unwrap();
        let alive_day = make("1-9");
        let gone_hour = make("999999993-1");
        assert_eq!(
            sweep_stale(root.path(), mtime(&gone_hour) + GONE_STALE_AFTER),
            0
        );
        assert!(gone_hour.exists());
        std::fs::remove_dir_all(&gone_hour).unwrap();
        sweep_stale(root.path(), mtime(&alive_day) + STALE_AFTER);
        assert!(alive_day.exists());
        std::fs::remove_dir_all(&alive_day).unwrap();
        // Two days on: anything that is not this process's and looks like a turn folder.
        sweep_stale(root.path(), later(48));
        assert!(!alive_recent.exists());
        assert!(
            own_ancient.exists(),
            "this process's folders are its own business"
        );
        assert!(other.exists(), "not a turn folder");
        assert_eq!(sweep_stale(root.path().join("missing").as_path(), now), 0);
    }

    #[test]
    fn short_text_is_not_cut() {
        assert_eq!(cut("hello", 5), None);
        assert_eq!(cut("", 0), None);
        assert_eq!(
            TurnSpill::unlimited().cap("c", "x".repeat(50)),
            "x".repeat(50)
        );
    }

    #[test]
    fn keeps_forty_percent_head_and_sixty_percent_tail() {
        let text = "a".repeat(500) + &"b".repeat(500);
        let (head, tail) = cut(&text, 100).unwrap();
        assert_eq!(head, "a".repeat(40));
        assert_eq!(tail, "b".repeat(60));
    }

    #[test]
    fn prefers_line_boundaries() {
        let text: String = (0..200).map(|i| format!("line {i:03}\n")).collect();
        let (head, tail) = cut(&text, 100).unwrap();
        assert!(head.ends_with('\n'), "{head:?}");
        assert!(head.starts_with("line 000\n"));
        assert!(tail.starts_with("line "), "{tail:?}");
        assert!(tail.ends_with("line 199\n"));
        assert!(head.chars().count() <= 40 && head.chars().count() >= 20);
        assert!(tail.chars().count() <= 60 && tail.chars().count() >= 30);
    }

    /// The line ends that count lie in the outer half of each part: exactly at the half
    /// still counts for the head, not for the tail.
    #[test]
    fn line_ends_at_the_half_of_each_part() {
        // Head: 40 characters, a line end at its 20th.
        let text = format!("{}\n{}", "a".repeat(19), "b".repeat(2000));
        let (head, _) = cut(&text, 100).unwrap();
        assert_eq!(head, format!("{}\n", "a".repeat(19)));
        let text = format!("{}\n{}", "a".repeat(18), "b".repeat(2000));
        let (head, _) = cut(&text, 100).unwrap();
        assert_eq!(head.chars().count(), 40, "{head:?}");
        // Tail: 60 characters, a line end at its 31st (index 30 = half): kept whole.
        let text = format!("{}{}\n{}", "x".repeat(2000), "c".repeat(30), "d".repeat(29));
        let (_, tail) = cut(&text, 100).unwrap();
        assert_eq!(tail, format!("{}\n{}", "c".repeat(30), "d".repeat(29)));
        let text = format!("{}{}\n{}", "x".repeat(2000), "c".repeat(29), "d".repeat(30));
        let (_, tail) = cut(&text, 100).unwrap();
        assert_eq!(tail, "d".repeat(30));
    }

    #[test]
    fn the_summary_names_the_sizes_and_the_file() {
        let capped = Capped {
            total_chars: 42_000,
            kept_chars: 10_000,
            spill: Some(PathBuf::from("/s/call_1.txt")),
        };
        assert_eq!(
            summary("bash", &capped),
            format!(
                "bash output capped on arrival: {} → {} chars; the whole is in /s/call_1.txt until your turn ends",
                super::super::short_count(42_000),
                super::super::short_count(10_000)
            )
        );
        let lost = Capped {
            spill: None,
            ..capped
        };
        assert!(
            summary("bash", &lost).ends_with(" chars"),
            "{}",
            summary("bash", &lost)
        );
    }

    #[test]
    fn one_long_line_is_cut_mid_line() {
        let text = format!("{}\n{}", "x".repeat(5), "y".repeat(1000));
        let (head, tail) = cut(&text, 100).unwrap();
        // The only newline is too early to end a 40-character head.
        assert_eq!(head.chars().count(), 40);
        assert_eq!(tail, "y".repeat(60));
    }

    #[test]
    fn multibyte_text_is_cut_on_char_boundaries() {
        let text = "é🦀ß".repeat(300);
        let (head, tail) = cut(&text, 101).unwrap();
        assert_eq!(head.chars().count(), 40);
        assert_eq!(tail.chars().count(), 61);
        assert!(text.starts_with(head) && text.ends_with(tail));
    }

    #[test]
    fn spills_the_whole_output_and_notes_where() {
        let tmp = tempfile::tempdir().unwrap();
        let config = ContextConfig {
            cap_chars: 100,
            spill_dir: Some(tmp.path().to_path_buf()),
            ..ContextConfig::default()
        };
        let spill = TurnSpill::new(&config, 7);
        let text: String = (0..100).map(|i| format!("row {i}\n")).collect();
        let capped = spill.cap("call/1", text.clone());
        let path = spill.dir().unwrap().join("call_1.txt");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        assert!(capped.contains(&path.display().to_string()), "{capped}");
        assert!(capped.starts_with("row 0\n") && capped.ends_with("row 99\n"));
        assert!(capped.contains("sed -n"));
        // The same id again gets its own file.
        spill.cap("call/1", text.clone());
        assert!(spill.dir().unwrap().join("call_1-2.txt").is_file());
        // And a third time (subagents reuse call ids): a third file, the others kept.
        let third: String = (0..100).map(|i| format!("third {i}\n")).collect();
        let capped = spill.cap("call/1", third.clone());
        let path3 = spill.dir().unwrap().join("call_1-3.txt");
        assert_eq!(std::fs::read_to_string(&path3).unwrap(), third);
        assert!(capped.contains(&path3.display().to_string()), "{capped}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        assert_eq!(
            std::fs::read_to_string(spill.dir().unwrap().join("call_1-2.txt")).unwrap(),
            text
        );
        assert_eq!(std::fs::read_dir(spill.dir().unwrap()).unwrap().count(), 3);
        // The user's alone: a 0700 turn folder, 0600 files.
        use std::os::unix::fs::PermissionsExt;
        let bits = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(bits(spill.dir().unwrap()), 0o700);
        assert_eq!(bits(&path), 0o600);
        assert_eq!(bits(&spill.dir().unwrap().join("call_1-2.txt")), 0o600);
        spill.remove().unwrap();
        assert!(!spill.dir().unwrap().exists());
        spill.remove().unwrap();
    }

    /// The note and the report count what was cut and what is kept; a user message is cut
    /// the same way, by its own limit, and called a message.
    #[test]
    fn the_note_and_the_report_count_what_was_cut() {
        let tmp = tempfile::tempdir().unwrap();
        let config = ContextConfig {
            cap_chars: 100,
            spill_dir: Some(tmp.path().to_path_buf()),
            ..ContextConfig::default()
        };
        let spill = TurnSpill::new(&config, 3);
        let text = "a".repeat(500) + &"b".repeat(500);
        let (out, capped) = spill.cap_reporting("c", text.clone());
        let file = spill.dir().unwrap().join("c.txt");
        assert_eq!(
            capped,
            Some(Capped {
                total_chars: 1000,
                kept_chars: 100,
                spill: Some(file.clone()),
            })
        );
        assert_eq!(
            out,
            format!(
                "{}\n[… 900 of 1000 characters cut from the middle of this output. The whole \
                 output is in {}: page it with `head`, `tail`, `sed -n 'A,Bp'` or `grep` (it is \
                 removed when this user turn ends).]\n{}",
                "a".repeat(40),
                file.display(),
                "b".repeat(60)
            )
        );
        // A head that ends a line gets no second line end.
        let lines: String = (0..100).map(|i| format!("{i:09}\n")).collect();
        let (out, _) = spill.cap_reporting("l", lines);
        assert!(
            out.starts_with("000000000\n000000001\n000000002\n000000003\n[… "),
            "{out}"
        );
        // A user message: its own limit, called a message.
        let (out, capped) = spill.cap_message("m", text.clone(), 10);
        let capped = capped.unwrap();
        assert_eq!((capped.total_chars, capped.kept_chars), (1000, 10));
        assert!(
            out.starts_with("aaaa\n[… 990 of 1000 characters cut from the middle of this message. The whole message is in "),
            "{out}"
        );
        assert!(out.ends_with("]\nbbbbbb"), "{out}");
        assert_eq!(
            std::fs::read_to_string(spill.dir().unwrap().join("m.txt")).unwrap(),
            text
        );
        // A limit of 0 keeps one character: no head, so no line end before the note.
        let (out, capped) = spill.cap_message("z", text.clone(), 0);
        assert_eq!(capped.unwrap().kept_chars, 1);
        assert!(out.starts_with("[… 999 of 1000"), "{out}");
        // Within its limit, a message passes whole.
        assert_eq!(
            spill.cap_message("s", "short".into(), 10),
            ("short".to_string(), None)
        );
        spill.remove().unwrap();
    }

    /// A call id becomes a file name: letters, digits, `-` and `_` kept, anything else
    /// `_`, at most 100 characters, `result` when nothing is left.
    #[test]
    fn spill_file_names_come_from_the_call_id() {
        let tmp = tempfile::tempdir().unwrap();
        let config = ContextConfig {
            cap_chars: 10,
            spill_dir: Some(tmp.path().to_path_buf()),
            ..ContextConfig::default()
        };
        let spill = TurnSpill::new(&config, 4);
        let long = "z".repeat(50);
        let dir = spill.dir().unwrap().to_path_buf();
        for (id, file) in [
            ("call-1_x/../y é", "call-1_x____y__.txt".to_string()),
            ("", "result.txt".to_string()),
            (&"k".repeat(150), format!("{}.txt", "k".repeat(100))),
        ] {
            let (_, capped) = spill.cap_reporting(id, long.clone());
            assert_eq!(capped.unwrap().spill, Some(dir.join(&file)), "{id:?}");
        }
    }

    /// A thousand spills of one id: the next is refused (the note says the whole was not
    /// kept) rather than tried without end.
    #[test]
    fn after_a_thousand_spills_of_one_id_the_next_is_not_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let config = ContextConfig {
            cap_chars: 10,
            spill_dir: Some(tmp.path().to_path_buf()),
            ..ContextConfig::default()
        };
        let spill = TurnSpill::new(&config, 5);
        let dir = spill.dir().unwrap().to_path_buf();
        crate::host::private_fs::own_dir(&dir).unwrap();
        std::fs::write(dir.join("c.txt"), "").unwrap();
        for n in 2..=999 {
            std::fs::write(dir.join(format!("c-{n}.txt")), "").unwrap();
        }
        let (_, capped) = spill.cap_reporting("c", "y".repeat(50));
        assert_eq!(capped.unwrap().spill, Some(dir.join("c-1000.txt")));
        let (out, capped) = spill.cap_reporting("c", "y".repeat(50));
        assert_eq!(capped.unwrap().spill, None);
        assert!(out.contains("could not be kept"), "{out}");
        assert!(!dir.join("c-1001.txt").exists());
    }

    #[test]
    fn caps_even_when_the_spill_cannot_be_written() {
        let tmp = tempfile::tempdir().unwrap();
        let blocker = tmp.path().join("file");
        std::fs::write(&blocker, "").unwrap();
        let config = ContextConfig {
            cap_chars: 10,
            spill_dir: Some(blocker),
            ..ContextConfig::default()
        };
        let spill = TurnSpill::new(&config, 1);
        let capped = spill.cap("c", "z".repeat(1000));
        assert!(capped.contains("could not be kept"), "{capped}");
        assert!(capped.len() < 400);
        // Removing a folder that cannot be there is an error, not "nothing to remove".
        assert!(spill.remove().is_err());
    }
}
