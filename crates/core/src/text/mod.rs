//! Short words for things, on the ground floor: text on one line or cut to a length, a
//! count with its noun, a token count, a duration, a path with `~` for home.
//!
//! Every module may word a thing with these (a hook's error cut to a length, a form's
//! message on one line, how long a background command has run), and they import nothing
//! of rein, so using them ties no module to another. What an agent event says is
//! the front ends' (`rein::describe`), built on these. Nothing here sanitises: callers pass what they
//! print through [`crate::text::sanitize`].

pub mod sanitize;
pub mod stamp;

use std::path::Path;
use std::time::Duration;

/// `text` trimmed, its line breaks shown as ↵, so it stays on one line.
pub fn one_line(text: &str) -> String {
    text.trim()
        .replace("\r\n", "\n")
        .replace(['\n', '\r'], " ↵ ")
}

/// The first line of `text` (a tool's result, a server's message), without its `\r`.
pub fn first_line(text: &str) -> &str {
    let line = text.lines().next().unwrap_or("");
    line.strip_suffix('\r').unwrap_or(line)
}

/// The first line of `text` that is not blank, trimmed (a commit message's subject).
pub fn first_text_line(text: &str) -> &str {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

/// `text` cut to `max` characters, with … when something was cut.
pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max).collect();
    cut.push('…');
    cut
}

/// "3 items", "1 item" (any count: `usize`, `u64`, …).
pub fn plural<N: Copy + std::fmt::Display + TryInto<u64>>(n: N, what: &str) -> String {
    let one = n.try_into().is_ok_and(|n| n == 1);
    format!("{n} {what}{}", if one { "" } else { "s" })
}

/// A token count, short: "950", "53.7k", "128k", "1.2M".
pub fn tokens(n: u64) -> String {
    if n < 1000 {
        n.to_string()
    } else if n < 1_000_000 {
        if n.is_multiple_of(1000) || n >= 100_000 {
            format!("{}k", (n as f64 / 1000.0).round())
        } else {
            format!("{:.1}k", n as f64 / 1000.0)
        }
    } else {
        format!("{:.1}M", n as f64 / 1e6)
    }
}

/// How long something took or will take: "0.4s", "12.0s", "2m 05s".
pub fn duration(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs < 60.0 {
        format!("{secs:.1}s")
    } else {
        let s = d.as_secs();
        format!("{}m {:02}s", s / 60, s % 60)
    }
}

/// `path` with the home directory shown as `~`.
pub fn shorten_home(path: &Path, home: Option<&Path>) -> String {
    if let Some(home) = home {
        if home.parent().is_some() {
            if let Ok(rest) = path.strip_prefix(home) {
                return if rest.as_os_str().is_empty() {
                    "~".to_string()
                } else {
                    format!("~/{}", rest.display())
                };
            }
        }
    }
    path.display().to_string()
}

/// `text` with its `%XX` escapes decoded (a URI's path), `None` when the bytes are not
/// UTF-8 once decoded. A `%` not followed by two hex digits stays as it is.
pub fn percent_decoded(text: &str) -> Option<String> {
    let raw = text.as_bytes();
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            raw[i],
            raw.get(i + 1).and_then(|&b| hex(b)),
            raw.get(i + 2).and_then(|&b| hex(b)),
        ) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_becomes_tilde() {
        let home = Path::new("/home/ann");
        assert_eq!(
            shorten_home(Path::new("/home/ann/src/x"), Some(home)),
            "~/src/x"
        );
        assert_eq!(shorten_home(Path::new("/home/ann"), Some(home)), "~");
        assert_eq!(shorten_home(Path::new("/srv/x"), Some(home)), "/srv/x");
        assert_eq!(
            shorten_home(Path::new("/srv/x"), Some(Path::new("/"))),
            "/srv/x"
        );
    }

    #[test]
    fn lines_are_cut_with_an_ellipsis() {
        assert_eq!(first_line("one\r\ntwo"), "one");
        assert_eq!(first_line(""), "");
        assert_eq!(clip("abcdef", 3), "abc…");
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(one_line("  a\r\nb\rc\n"), "a ↵ b ↵ c");
    }

    #[test]
    fn counts_and_durations_are_short() {
        assert_eq!(plural(1, "item"), "1 item");
        assert_eq!(plural(3, "item"), "3 items");
        assert_eq!(duration(Duration::from_millis(400)), "0.4s");
        assert_eq!(duration(Duration::from_secs(125)), "2m 05s");
    }

    #[test]
    fn tokens_are_short() {
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(53_700), "53.7k");
        assert_eq!(tokens(128_000), "128k");
        assert_eq!(tokens(1_200_000), "1.2M");
    }
}
