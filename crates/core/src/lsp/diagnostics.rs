//! What an edit did to the diagnostics: the errors it introduced, told the way the model
//! reads them.
//!
//! Pure: in, the diagnostics every file had before the edit and after it; out, the new
//! errors and warnings. An error counts as there before when the same file had one of the
//! same message, source and code before (lines move when text is inserted above, so the
//! line only decides which of several alike ones are new). Errors are listed as
//! `path:line:col: message (source code)`, at most [`SHOWN`] with the total; warnings are
//! only counted.

use std::collections::BTreeMap;

/// The most new errors listed in one report.
pub const SHOWN: usize = 20;

/// How bad a diagnostic is (the protocol's 1–4; a server that gives none means an error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
    Information,
    Hint,
}

impl Severity {
    /// The protocol's number, an error when missing or unknown.
    pub fn from_lsp(n: Option<u64>) -> Severity {
        match n {
            Some(2) => Severity::Warning,
            Some(3) => Severity::Information,
            Some(4) => Severity::Hint,
            _ => Severity::Error,
        }
    }
}

/// One diagnostic as rein keeps it: 1-based line and column (the column in characters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diag {
    pub line: u32,
    pub col: u32,
    pub severity: Severity,
    pub message: String,
    pub source: Option<String>,
    pub code: Option<String>,
}

impl Diag {
    /// What makes two diagnostics the same one, wherever they stand.
    fn key(&self) -> (Severity, &str, Option<&str>, Option<&str>) {
        (
            self.severity,
            self.message.as_str(),
            self.source.as_deref(),
            self.code.as_deref(),
        )
    }

    /// `path:line:col: message (source code)`, the message on one line.
    pub fn line_for(&self, path: &str) -> String {
        let message: String = self
            .message
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let tag = match (&self.source, &self.code) {
            (Some(s), Some(c)) => format!(" ({s} {c})"),
            (Some(s), None) => format!(" ({s})"),
            (None, Some(c)) => format!(" ({c})"),
            (None, None) => String::new(),
        };
        format!("{path}:{}:{}: {message}{tag}", self.line, self.col)
    }
}

/// Of `after`, the diagnostics `before` did not have (see the module doc).
pub fn introduced(before: &[Diag], after: &[Diag]) -> Vec<Diag> {
    let mut groups: BTreeMap<_, (Vec<&Diag>, Vec<&Diag>)> = BTreeMap::new();
    for d in before {
        groups.entry(d.key()).or_default().0.push(d);
    }
    for d in after {
        groups.entry(d.key()).or_default().1.push(d);
    }
    let mut out = Vec::new();
    for (old, new) in groups.values() {
        let mut extra = new.len().saturating_sub(old.len());
        if extra == 0 {
            continue;
        }
        // The ones on a line none of the old ones stood on first, then the last ones.
        let mut picked: Vec<&Diag> = Vec::new();
        for d in new {
            if extra > 0 && !old.iter().any(|o| o.line == d.line) {
                picked.push(d);
                extra -= 1;
            }
        }
        for d in new.iter().rev() {
            if extra == 0 {
                break;
            }
            if !picked.iter().any(|p| std::ptr::eq(*p, *d)) {
                picked.push(d);
                extra -= 1;
            }
        }
        out.extend(picked.into_iter().cloned());
    }
    out.sort_by_key(|d| (d.line, d.col));
    out
}

/// The new diagnostics of each file an edit touched, in the order to tell them: the
/// edited file first, then the others by path.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Introduced {
    pub files: Vec<(String, Vec<Diag>)>,
}

impl Introduced {
    pub fn errors(&self) -> usize {
        self.count(Severity::Error)
    }

    pub fn warnings(&self) -> usize {
        self.count(Severity::Warning)
    }

    fn count(&self, severity: Severity) -> usize {
        self.files
            .iter()
            .flat_map(|(_, d)| d)
            .filter(|d| d.severity == severity)
            .count()
    }

    /// What the model reads after the edit's result (`None`: the edit introduced no error
    /// or warning, and nothing is added). `server` names who said so.
    pub fn report(&self, server: &str) -> Option<String> {
        let errors = self.errors();
        let warnings = self.warnings();
        if errors == 0 && warnings == 0 {
            return None;
        }
        let plural = |n: usize, one: &str| {
            if n == 1 {
                format!("1 {one}")
            } else {
                format!("{n} {one}s")
            }
        };
        let mut out = if errors > 0 {
            format!(
                "{server} reports {} this edit introduced:",
                plural(errors, "error")
            )
        } else {
            format!(
                "{server} reports {} this edit introduced (no errors).",
                plural(warnings, "warning")
            )
        };
        let mut shown = 0;
        for (path, diags) in &self.files {
            for d in diags.iter().filter(|d| d.severity == Severity::Error) {
                if shown == SHOWN {
                    break;
                }
                out.push('\n');
                out.push_str(&d.line_for(path));
                shown += 1;
            }
        }
        if errors > shown {
            let more = errors - shown;
            let s = if more == 1 { "" } else { "s" };
            out.push_str(&format!("\n… and {more} more error{s}"));
        }
        if errors > 0 && warnings > 0 {
            out.push_str(&format!("\nAnd {}.", plural(warnings, "new warning")));
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(line: u32, severity: Severity, message: &str) -> Diag {
        Diag {
            line,
            col: 5,
            severity,
            message: message.into(),
            source: Some("Pyright".into()),
            code: Some("reportUndefinedVariable".into()),
        }
    }

    #[test]
    fn an_error_there_before_is_not_blamed_even_when_its_line_moved() {
        let before = [d(3, Severity::Error, "\"x\" is not defined")];
        // Two lines inserted above: the old error now stands on line 5, and a new one
        // of another name on line 2.
        let after = [
            d(2, Severity::Error, "\"y\" is not defined"),
            d(5, Severity::Error, "\"x\" is not defined"),
        ];
        assert_eq!(
            introduced(&before, &after),
            [d(2, Severity::Error, "\"y\" is not defined")]
        );
        assert!(introduced(&after, &after).is_empty());
        assert!(
            introduced(&after, &before).is_empty(),
            "a fixed error is not news"
        );
    }

    #[test]
    fn of_several_alike_the_one_on_a_new_line_is_new() {
        let before = [d(3, Severity::Error, "same")];
        let after = [d(3, Severity::Error, "same"), d(9, Severity::Error, "same")];
        assert_eq!(introduced(&before, &after), [d(9, Severity::Error, "same")]);
        // Both moved: still one new, the last.
        let after = [
            d(4, Severity::Error, "same"),
            d(10, Severity::Error, "same"),
        ];
        assert_eq!(introduced(&before, &after).len(), 1);
    }

    #[test]
    fn the_report_lists_errors_capped_and_counts_warnings() {
        let none = Introduced::default();
        assert_eq!(none.report("pyright"), None);
        let one = Introduced {
            files: vec![(
                "src/a.py".into(),
                vec![
                    d(3, Severity::Error, "\"y\" is not\n  defined"),
                    d(4, Severity::Warning, "unused"),
                    d(5, Severity::Hint, "hint"),
                ],
            )],
        };
        assert_eq!(
            one.report("pyright").unwrap(),
            "pyright reports 1 error this edit introduced:\n\
             src/a.py:3:5: \"y\" is not defined (Pyright reportUndefinedVariable)\n\
             And 1 new warning."
        );
        let many = Introduced {
            files: vec![
                (
                    "a.py".into(),
                    (1..=15).map(|l| d(l, Severity::Error, "e")).collect(),
                ),
                (
                    "b.py".into(),
                    (1..=10).map(|l| d(l, Severity::Error, "e")).collect(),
                ),
            ],
        };
        let text = many.report("pyright").unwrap();
        assert!(text.starts_with("pyright reports 25 errors"), "{text}");
        assert_eq!(text.lines().count(), 1 + SHOWN + 1, "{text}");
        assert!(text.contains("b.py:5:5"), "{text}");
        assert!(!text.contains("b.py:6:5"), "{text}");
        assert!(text.ends_with("… and 5 more errors"), "{text}");
        let warnings = Introduced {
            files: vec![("a.py".into(), vec![d(1, Severity::Warning, "w")])],
        };
        assert_eq!(
            warnings.report("x").unwrap(),
            "x reports 1 warning this edit introduced (no errors)."
        );
    }
}
