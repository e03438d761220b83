//! The words of a server's error: an `error` value sent inside a stream (its message, with
//! the upstream's words OpenRouter adds), or the body of a failed HTTP response as one line
//! (JSON in the shapes servers use, a proxy's HTML page, or plain text), its control
//! characters turned to spaces and a long text cut at a sentence.

/// The human-readable message of an `error` value: `{"message": ...}`, a string, or the JSON.
pub fn error_message(err: &serde_json::Value) -> String {
    match err {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Object(o) => {
            let msg = o
                .get("message")
                .and_then(|m| m.as_str())
                .map(str::to_string)
                .unwrap_or_else(|| err.to_string());
            // OpenRouter puts the upstream's words in metadata.raw.
            match o
                .get("metadata")
                .and_then(|m| m.get("raw"))
                .and_then(|r| r.as_str())
            {
                Some(raw) if !raw.is_empty() && !msg.contains(raw) => {
                    format!("{msg} ({})", body_error_message(raw))
                }
                _ => msg,
            }
        }
        other => other.to_string(),
    }
}

/// The message in an error response body, as one line: `{"error": ...}`, `{"message":
/// ...}`, `{"detail": ...}`, a JSON array wrapping one of those (Gemini), the title of an
/// HTML page (a proxy's error page), or the text itself.
pub fn body_error_message(body: &str) -> String {
    let trimmed = body.trim();
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(trimmed) {
        let v = match &v {
            serde_json::Value::Array(items) if !items.is_empty() => &items[0],
            _ => &v,
        };
        for key in ["error", "message", "detail"] {
            if let Some(e) = v.get(key) {
                return snippet(&error_message(e));
            }
        }
        return snippet(&v.to_string());
    }
    if trimmed.is_empty() {
        return "(empty response body)".to_string();
    }
    if looks_like_html(trimmed) {
        return html_summary(trimmed);
    }
    snippet(trimmed)
}

fn looks_like_html(text: &str) -> bool {
    let head: String = text
        .chars()
        .take(200)
        .collect::<String>()
        .to_ascii_lowercase();
    head.starts_with("<!doctype html") || head.starts_with("<html") || head.contains("<head")
}

/// An HTML page in one line: its `<title>`, else its first `<h1>`, else its text without
/// tags.
fn html_summary(html: &str) -> String {
    let lower = html.to_ascii_lowercase();
    for tag in ["title", "h1"] {
        let open = format!("<{tag}");
        let close = format!("</{tag}>");
        if let Some(start) = lower.find(&open) {
            if let Some(gt) = lower[start..].find('>') {
                let from = start + gt + 1;
                if let Some(len) = lower[from..].find(&close) {
                    let text = strip_tags(&html[from..from + len]);
                    if !text.is_empty() {
                        return snippet(&text);
                    }
                }
            }
        }
    }
    let text = strip_tags(html);
    if text.is_empty() {
        "(an HTML page without text)".to_string()
    } else {
        snippet(&text)
    }
}

/// Text with its tags removed and its whitespace collapsed.
fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One line of at most about `MAX` characters: control characters become spaces, runs of
/// whitespace one space, and a longer text ends at the last sentence (or, without one,
/// the last word) that fits, followed by "…".
pub(super) fn snippet(s: &str) -> String {
    const MAX: usize = 600;
    let one_line = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if one_line.chars().count() <= MAX {
        return one_line;
    }
    let cut: String = one_line.chars().take(MAX).collect();
    let end = cut
        .rfind(". ")
        .map(|i| i + 1)
        .filter(|&i| i > MAX / 3)
        .or_else(|| cut.rfind(' ').filter(|&i| i > MAX / 3))
        .unwrap_or(cut.len());
    format!("{} …", cut[..end].trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_become_one_clear_line() {
        assert_eq!(
            body_error_message(
                r#"[{"error":{"code":400,"message":"Function call is missing a thought_signature.","status":"INVALID_ARGUMENT"}}]"#
            ),
            "Function call is missing a thought_signature."
        );
        let html = "<html>\n<head><title>503 Service Temporarily Unavailable</title></head>\n<body>\n<center><h1>503 Service Temporarily Unavailable</h1></center>\n</body>\n</html>\n";
        assert_eq!(
            body_error_message(html),
            "503 Service Temporarily Unavailable"
        );
        assert_eq!(
            body_error_message(
                "<!DOCTYPE html><html><body><p>Bad <b>gateway</b></p></body></html>"
            ),
            "Bad gateway"
        );
        // A page without a head, or a fragment with one: its heading.
        assert_eq!(
            body_error_message("<html><body><h1>Gateway Timeout</h1></body></html>"),
            "Gateway Timeout"
        );
        assert_eq!(
            body_error_message("<head><title>Blocked</title></head><p>by policy</p>"),
            "Blocked"
        );
        // A `>` outside a tag is text.
        assert_eq!(
            body_error_message("<html><body><p>queue > 100 requests</p></body></html>"),
            "queue > 100 requests"
        );
        let raw = r#"{"error":{"message":"Provider returned error","metadata":{"raw":"{\"error\":{\"message\":\"reasoning_content is missing\"}}"}}}"#;
        assert_eq!(
            body_error_message(raw),
            "Provider returned error (reasoning_content is missing)"
        );
        let long = format!("{} And the rest.", "A sentence that goes on. ".repeat(40));
        let line = body_error_message(&long);
        assert!(line.ends_with("on. …"), "{line}");
        assert!(line.chars().count() <= 610);
    }

    #[test]
    fn body_error_messages() {
        assert_eq!(
            body_error_message(r#"{"error":{"message":"Incorrect API key provided"}}"#),
            "Incorrect API key provided"
        );
        assert_eq!(body_error_message(r#"{"detail":"Not Found"}"#), "Not Found");
        assert_eq!(body_error_message("Bad Gateway\n"), "Bad Gateway");
        assert_eq!(body_error_message(r#"{"error":"plain"}"#), "plain");
        // Plain text with angle brackets is not a page: nothing is taken for a tag.
        assert_eq!(
            body_error_message("expected <string>, got a number"),
            "expected <string>, got a number"
        );
        // An empty JSON array is the JSON itself, not a reach for its first item.
        assert_eq!(body_error_message("[]"), "[]");
    }

    /// A long text ends at its last sentence past a third of the limit, else at its last
    /// word past a third, else at the limit itself.
    #[test]
    fn a_long_text_is_cut_at_a_sentence_a_word_or_the_limit() {
        let cut = |text: String| {
            let line = snippet(&text);
            assert!(line.chars().count() <= 602, "{line}");
            line
        };
        // A sentence ends at 404, past a third: the cut is there.
        let late_sentence = cut(format!(
            "{}end. {}",
            "word ".repeat(80),
            "more ".repeat(100)
        ));
        assert!(late_sentence.ends_with("word end. …"), "{late_sentence}");
        // A sentence ends early (at 6), words go on: the last word that fits.
        let early_sentence = cut(format!("Short. {}", "word ".repeat(200)));
        assert!(early_sentence.ends_with("word …"), "{early_sentence}");
        assert!(early_sentence.chars().count() > 590, "{early_sentence}");
        // A sentence ending exactly at a third (its `.` at 199) is not past it.
        let at_third = cut(format!("{}. {}", "a".repeat(199), "word ".repeat(200)));
        assert!(at_third.ends_with("word …"), "{at_third}");
        // No sentence, a space at 400: the cut is at that word.
        let late_space = cut(format!("{} {}", "x".repeat(400), "y".repeat(900)));
        assert_eq!(late_space, format!("{} …", "x".repeat(400)));
        // No sentence, the only space early (at 100) or exactly at a third (200): the
        // limit itself.
        for at in [100, 200] {
            let line = cut(format!("{} {}", "x".repeat(at), "y".repeat(900)));
            assert!(line.ends_with("yyy …"), "{line}");
            assert_eq!(line.chars().count(), 602, "{line}");
        }
    }

    #[test]
    fn the_upstreams_words_are_added_only_when_they_say_something_new() {
        let error = |raw: &str| serde_json::json!({"message": "Provider returned error: rate limited", "metadata": {"raw": raw}});
        assert_eq!(
            error_message(&error("upstream busy")),
            "Provider returned error: rate limited (upstream busy)"
        );
        // Empty, or already in the message: nothing added.
        assert_eq!(
            error_message(&error("")),
            "Provider returned error: rate limited"
        );
        assert_eq!(
            error_message(&error("rate limited")),
            "Provider returned error: rate limited"
        );
    }
}
