//! What bash makes of a word before the program sees it: brace expansion done as bash
//! does it, and pathname patterns that could turn into an option marked unreadable.
//!
//! Brace expansion is deterministic, so it is done (bounded): `src/{main,lib}.rs` becomes
//! the two words `src/main.rs src/lib.rs`, `{-exec,}` becomes `-exec` (an empty result is
//! dropped, as bash drops it), `{1..3}` and `{a..c}` count, braces nest, and quoted braces,
//! commas and dots are plain text. A word that expands to more than [`MAX_WORDS`] words is
//! refused. Pathname expansion depends on the files there when the command runs, so it is
//! not guessed at: a pattern that could produce a word starting with `-` (it starts with an
//! unquoted `*`, `?` or `[`, or with `-` itself) loses its literal value, so every check
//! that looks at options treats it as an argument it cannot read; a pattern that starts
//! with a plain character (`src/*.rs`, `*.rs` excepted) keeps it.
//!
//! Words with expansions (`$x`, `$(...)`) are already unreadable and pass through as they
//! are, and so do words written with `$'...'` (their escapes are not re-read here), which
//! lose their literal value when they hold a pattern.

use super::Word;

/// Most words one command's words may expand to.
pub const MAX_WORDS: usize = 256;

/// A character of a word, and whether quoting made it plain text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ch {
    c: char,
    quoted: bool,
}

/// `words` as bash would pass them on after brace expansion; an error when they expand
/// to more than [`MAX_WORDS`].
pub fn expand_words(words: &[Word]) -> Result<Vec<Word>, String> {
    let mut out = Vec::with_capacity(words.len());
    for word in words {
        if !word.glob {
            out.push(word.clone());
            continue;
        }
        let chars = match (&word.literal, unquote(&word.raw)) {
            (Some(_), Some(chars)) => chars,
            // Expansions, or `$'...'`: as it was, and unreadable if it holds a pattern.
            _ => {
                let mut w = word.clone();
                w.literal = None;
                out.push(w);
                continue;
            }
        };
        let mut budget = MAX_WORDS.saturating_sub(out.len());
        let expanded = brace(&chars, &mut budget)
            .ok_or_else(|| format!("`{}` expands to more than {MAX_WORDS} words", word.raw))?;
        for chars in expanded {
            if chars.is_empty() {
                continue;
            }
            out.push(word_of(&chars));
        }
        if out.len() > MAX_WORDS {
            return Err(format!("the words expand to more than {MAX_WORDS}"));
        }
    }
    Ok(out)
}

/// A word from expanded characters: its literal value, whether it still holds a pathname
/// pattern, and no literal value when that pattern could make an option.
fn word_of(chars: &[Ch]) -> Word {
    let literal: String = chars.iter().map(|c| c.c).collect();
    let raw: String = chars
        .iter()
        .map(|c| {
            if c.quoted && "*?[]{},\\'\" \t".contains(c.c) {
                format!("\\{}", c.c)
            } else {
                c.c.to_string()
            }
        })
        .collect();
    let pattern = has_pattern(chars);
    let could_be_option = pattern
        && chars
            .first()
            .is_some_and(|f| f.c == '-' || (!f.quoted && matches!(f.c, '*' | '?' | '[')));
    Word {
        raw,
        literal: (!could_be_option).then_some(literal),
        glob: pattern,
    }
}

/// Whether unquoted `*`, `?` or a `[...]` bracket expression remains.
fn has_pattern(chars: &[Ch]) -> bool {
    let mut open = false;
    for c in chars.iter().filter(|c| !c.quoted) {
        match c.c {
            '*' | '?' => return true,
            '[' => open = true,
            ']' if open => return true,
            _ => {}
        }
    }
    false
}

/// The characters of a literal word's raw text with quoting removed and remembered:
/// backslash escapes, single and double quotes. `None` for text this reader does not
/// handle (`$'...'`, `$"..."`).
fn unquote(raw: &str) -> Option<Vec<Ch>> {
    let mut out = Vec::new();
    let mut it = raw.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\\' => out.push(Ch {
                c: it.next()?,
                quoted: true,
            }),
            '\'' => loop {
                match it.next()? {
                    '\'' => break,
                    c => out.push(Ch { c, quoted: true }),
                }
            },
            '"' => loop {
                match it.next()? {
                    '"' => break,
                    '\\' => {
                        let next = it.next()?;
                        if !matches!(next, '$' | '`' | '"' | '\\' | '\n') {
                            out.push(Ch {
                                c: '\\',
                                quoted: true,
                            });
                        }
                        out.push(Ch {
                            c: next,
                            quoted: true,
                        });
                    }
                    c => out.push(Ch { c, quoted: true }),
                }
            },
            '$' if matches!(it.peek(), Some('\'' | '"')) => return None,
            c => out.push(Ch { c, quoted: false }),
        }
    }
    Some(out)
}

/// Brace expansion of one word, left to right as bash does it; `None` once more than
/// `budget` results would come out.
fn brace(chars: &[Ch], budget: &mut usize) -> Option<Vec<Vec<Ch>>> {
    let Some((open, close, parts)) = first_brace(chars) else {
        return take(budget, 1).then(|| vec![chars.to_vec()]);
    };
    let prefix = &chars[..open];
    let suffix = &chars[close + 1..];
    let mut out = Vec::new();
    for part in parts {
        let mut word = prefix.to_vec();
        word.extend(part);
        word.extend_from_slice(suffix);
        // The rest of the word (and what the part brought) expands in turn.
        out.extend(brace(&word, budget)?);
    }
    Some(out)
}

fn take(budget: &mut usize, n: usize) -> bool {
    match budget.checked_sub(n) {
        Some(left) => {
            *budget = left;
            true
        }
        None => false,
    }
}

/// The first brace expression that expands: its `{` and `}` positions and its parts (a
/// comma list, or a sequence `{a..b[..step]}`).
fn first_brace(chars: &[Ch]) -> Option<(usize, usize, Vec<Vec<Ch>>)> {
    for open in 0..chars.len() {
        if chars[open]
            != (Ch {
                c: '{',
                quoted: false,
            })
        {
            continue;
        }
        // The matching `}` and the top-level commas.
        let mut depth = 0;
        let mut commas = Vec::new();
        let mut close = None;
        for (i, ch) in chars.iter().enumerate().skip(open + 1) {
            if ch.quoted {
                continue;
            }
            match ch.c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    close = Some(i);
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => commas.push(i),
                _ => {}
            }
        }
        let Some(close) = close else { continue };
        if !commas.is_empty() {
            let mut parts = Vec::new();
            let mut from = open + 1;
            for &comma in commas.iter().chain(std::iter::once(&close)) {
                parts.push(chars[from..comma].to_vec());
                from = comma + 1;
            }
            return Some((open, close, parts));
        }
        if let Some(parts) = sequence(&chars[open + 1..close]) {
            return Some((open, close, parts));
        }
    }
    None
}

/// `a..b` or `a..b..step` of integers or single letters, unquoted; at most MAX_WORDS.
fn sequence(inner: &[Ch]) -> Option<Vec<Vec<Ch>>> {
    if inner.iter().any(|c| c.quoted) {
        return None;
    }
    let text: String = inner.iter().map(|c| c.c).collect();
    let pieces: Vec<&str> = text.split("..").collect();
    let (from, to, step) = match pieces.as_slice() {
        [a, b] => (*a, *b, None),
        [a, b, s] => (*a, *b, Some(*s)),
        _ => return None,
    };
    let step: i64 = match step {
        Some(s) => s.parse::<i64>().ok()?.checked_abs()?.max(1),
        None => 1,
    };
    let plain = |chars: Vec<char>| -> Vec<Ch> {
        chars.into_iter().map(|c| Ch { c, quoted: false }).collect()
    };
    if let (Ok(a), Ok(b)) = (from.parse::<i64>(), to.parse::<i64>()) {
        // Zero-padded when either end is written with a leading zero.
        let pad = [from, to]
            .iter()
            // (`0` alone pads to its own width, which changes nothing.)
            .filter(|s| s.trim_start_matches('-').starts_with('0'))
            .map(|s| s.len())
            .max()
            .unwrap_or(0);
        let count = (a - b).unsigned_abs() / step.unsigned_abs() + 1;
        if count > MAX_WORDS as u64 {
            return Some(vec![Vec::new(); MAX_WORDS + 1]);
        }
        let dir = if b >= a { step } else { -step };
        return Some(
            (0..count as i64)
                .map(|i| plain(format!("{:0pad$}", a + i * dir).chars().collect()))
                .collect(),
        );
    }
    let (mut a, mut b) = (from.chars(), to.chars());
    match (a.next(), a.next(), b.next(), b.next()) {
        (Some(x), None, Some(y), None) if x.is_ascii_alphabetic() && y.is_ascii_alphabetic() => {
            let (x, y) = (x as i64, y as i64);
            let dir = if y >= x { step } else { -step };
            let count = (x - y).unsigned_abs() / step.unsigned_abs() + 1;
            Some(
                (0..count as i64)
                    .filter_map(|i| char::from_u32((x + i * dir) as u32))
                    .map(|c| plain(vec![c]))
                    .collect(),
            )
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::*;

    fn expanded(command: &str) -> Vec<(String, bool)> {
        let words = &parse(command).unwrap()[0].words;
        expand_words(words)
            .unwrap()
            .into_iter()
            .map(|w| (w.text().to_string(), w.literal.is_some()))
            .collect()
    }

    fn texts(command: &str) -> Vec<String> {
        expanded(command).into_iter().map(|(t, _)| t).collect()
    }

    #[test]
    fn braces_expand_as_bash_does() {
        assert_eq!(
            texts("wc -l src/{main,lib}.rs"),
            ["wc", "-l", "src/main.rs", "src/lib.rs"]
        );
        assert_eq!(
            texts("find . {-exec,} rm {} \\;"),
            ["find", ".", "-exec", "rm", "{}", ";"]
        );
        assert_eq!(texts("echo a{b,c{d,e}}f"), ["echo", "abf", "acdf", "acef"]);
        assert_eq!(texts("echo x{1..3}"), ["echo", "x1", "x2", "x3"]);
        assert_eq!(texts("echo {05..07}"), ["echo", "05", "06", "07"]);
        assert_eq!(texts("echo {c..a}"), ["echo", "c", "b", "a"]);
        assert_eq!(texts("echo {1..10..4}"), ["echo", "1", "5", "9"]);
        // Quoted braces, commas and single items are plain text.
        assert_eq!(
            texts("echo '{a,b}' \"x{1,2}\" {a} {a,b"),
            ["echo", "{a,b}", "x{1,2}", "{a}", "{a,b"]
        );
        assert_eq!(texts("echo {a\\,b}"), ["echo", "{a,b}"]);
        // The program name too.
        assert_eq!(texts("{rm,echo} -rf x"), ["rm", "echo", "-rf", "x"]);
    }

    #[test]
    fn patterns_that_could_make_an_option_are_unreadable() {
        let w = expanded("find . -exe[c] x * *.rs src/*.rs '*' ls*");
        assert_eq!(w[2], ("-exe[c]".to_string(), false));
        assert_eq!(w[4], ("*".to_string(), false));
        assert_eq!(w[5], ("*.rs".to_string(), false));
        assert_eq!(w[6], ("src/*.rs".to_string(), true));
        assert_eq!(w[7], ("*".to_string(), true), "quoted: a plain star");
        assert_eq!(w[8], ("ls*".to_string(), true));
        assert_eq!(
            expanded("ls *.{rs,toml}"),
            [
                ("ls".to_string(), true),
                ("*.rs".to_string(), false),
                ("*.toml".to_string(), false)
            ]
        );
    }

    /// Expanded words keep a pattern only where an unquoted `*`, `?` or closed bracket
    /// remains; quoting inside double quotes keeps a backslash that escapes nothing; `$`
    /// alone is a character, `$'...'` is not read.
    #[test]
    fn expanded_words_keep_their_patterns_and_quoting() {
        let glob = |command: &str| -> Vec<bool> {
            let words = &parse(command).unwrap()[0].words;
            expand_words(words)
                .unwrap()
                .iter()
                .map(|w| w.glob)
                .collect()
        };
        assert_eq!(glob("echo {a,b}]"), [false, false, false]);
        assert_eq!(glob("echo {a,b}x"), [false, false, false]);
        assert_eq!(glob("echo {a,b}[x]"), [false, true, true]);
        assert_eq!(glob("echo {a,b}'*'"), [false, false, false]);
        assert_eq!(texts(r#"echo "a\b"{x,y}"#), ["echo", r"a\bx", r"a\by"]);
        assert_eq!(texts(r#"echo "a\$"{x,y}"#), ["echo", "a$x", "a$y"]);
        assert_eq!(
            expanded("echo {a,b}$"),
            [
                ("echo".to_string(), true),
                ("a$".to_string(), true),
                ("b$".to_string(), true)
            ]
        );
        let unread = expanded("echo {a,b}$'x'");
        assert_eq!(unread.len(), 2);
        assert!(!unread[1].1, "{unread:?}");
    }

    /// At most [`MAX_WORDS`] words in all, counting the plain ones before a pattern.
    #[test]
    fn the_word_bound_is_exact() {
        let words = &parse("echo {1..255}").unwrap()[0].words;
        assert_eq!(expand_words(words).map(|w| w.len()), Ok(MAX_WORDS));
        let words = &parse("echo {1..256}").unwrap()[0].words;
        assert!(expand_words(words).is_err());
        let many = format!("echo {} *.rs", "x ".repeat(MAX_WORDS + 10));
        let words = &parse(&many).unwrap()[0].words;
        assert!(expand_words(words).is_err());
    }

    /// Sequences down as well as up, with a step, of letters only when both ends are one
    /// letter; a whole command of one sequence may reach the bound exactly.
    #[test]
    fn sequences_in_every_direction() {
        assert_eq!(texts("echo {3..1}"), ["echo", "3", "2", "1"]);
        assert_eq!(texts("echo {1..7..3}"), ["echo", "1", "4", "7"]);
        assert_eq!(texts("echo {a..e..2}"), ["echo", "a", "c", "e"]);
        assert_eq!(texts("echo {c..a}"), ["echo", "c", "b", "a"]);
        assert_eq!(texts("echo {a..3}"), ["echo", "{a..3}"]);
        assert_eq!(texts("echo {ab..c}"), ["echo", "{ab..c}"]);
        assert_eq!(texts("echo {0..2}"), ["echo", "0", "1", "2"]);
        let words = &parse("{1..256}").unwrap()[0].words;
        assert_eq!(expand_words(words).map(|w| w.len()), Ok(MAX_WORDS));
        let words = &parse("{1..257}").unwrap()[0].words;
        assert!(expand_words(words).is_err());
        // Refused before it is made, however long.
        let words = &parse("echo {1..9000000000000000}").unwrap()[0].words;
        assert!(expand_words(words).is_err());
    }

    #[test]
    fn expansion_is_bounded() {
        let words = &parse("echo {1..9}{1..9}{1..9}{1..9}").unwrap()[0].words;
        assert!(expand_words(words).is_err());
        let words = &parse("echo {1..100000}").unwrap()[0].words;
        assert!(expand_words(words).is_err());
    }
}
