//! Showing the user the authorization URL: always printed (by the caller), and opened with
//! `$BROWSER` when it is set (a command line: the URL is its last argument), else the
//! platform's opener (`xdg-open`, `open`). Only an `https://` URL, or `http://` to a
//! loopback host, is opened: the URL comes from the authorization server's metadata,
//! and an opener given a `file:` or custom-scheme URL would run who knows what.

use std::process::{Command, Stdio};

/// Whether `url` may be handed to a browser.
pub fn openable(url: &str) -> bool {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return false;
    };
    match parsed.scheme() {
        "https" => true,
        "http" => super::is_loopback_host(parsed.host_str().unwrap_or("")),
        _ => false,
    }
}

/// Open `url` in a browser, in the background; an error says why it could not be.
pub fn open(url: &str) -> Result<(), String> {
    let mut child = command(url, std::env::var("BROWSER").ok().as_deref())?
        .spawn()
        .map_err(|e| format!("could not start a browser ({e}); open the URL yourself"))?;
    // Reaped in the background: a browser may run for as long as it likes.
    std::thread::spawn(move || child.wait());
    Ok(())
}

/// The platform's opener, when `$BROWSER` is not set.
#[cfg(target_os = "macos")]
const OPENER: &str = "open";
#[cfg(not(target_os = "macos"))]
const OPENER: &str = "xdg-open";

/// The command that opens `url`: `browser` (`$BROWSER`'s value) when it is set, else
/// [`OPENER`].
fn command(url: &str, browser: Option<&str>) -> Result<Command, String> {
    if !openable(url) {
        return Err(format!(
            "the authorization URL is not https (or http to this machine); rein did not open it: {url}"
        ));
    }
    let mut command = match browser {
        Some(browser) if !browser.trim().is_empty() => {
            let words = shlex::split(browser)
                .filter(|w| !w.is_empty())
                .ok_or_else(|| format!("BROWSER ({browser:?}) is not a command line"))?;
            let mut command = Command::new(&words[0]);
            command.args(&words[1..]);
            command
        }
        _ => Command::new(OPENER),
    };
    command
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    Ok(command)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_or_loopback_http_is_opened() {
        assert!(openable("https://auth.example/authorize?x=1"));
        assert!(openable("http://127.0.0.1:8080/authorize"));
        assert!(openable("http://localhost/authorize"));
        assert!(!openable("http://auth.example/authorize"));
        assert!(!openable("file:///etc/passwd"));
        assert!(!openable("javascript:alert(1)"));
        assert!(!openable("not a url"));
    }

    /// The program and the arguments `command` would run.
    fn argv(url: &str, browser: Option<&str>) -> Result<Vec<String>, String> {
        let command = command(url, browser)?;
        Ok(std::iter::once(command.get_program())
            .chain(command.get_args())
            .map(|word| word.to_string_lossy().into_owned())
            .collect())
    }

    #[test]
    fn browser_is_a_command_line_given_the_url_last_and_the_platforms_opener_stands_in() {
        let url = "https://auth.example/authorize?x=1";
        assert_eq!(
            argv(url, Some("firefox --new-window")).unwrap(),
            ["firefox", "--new-window", url]
        );
        assert_eq!(
            argv(url, Some("'my browser' -a")).unwrap(),
            ["my browser", "-a", url]
        );
        let opener = if cfg!(target_os = "macos") {
            "open"
        } else {
            "xdg-open"
        };
        assert_eq!(argv(url, None).unwrap(), [opener, url]);
        assert_eq!(argv(url, Some("  ")).unwrap(), [opener, url]);
        let error = argv(url, Some("firefox 'unclosed")).unwrap_err();
        assert!(error.contains("is not a command line"), "{error}");
    }

    #[test]
    fn a_url_that_may_not_be_opened_is_refused_before_any_browser_starts() {
        for url in ["file:///etc/passwd", "http://auth.example/authorize"] {
            let error = argv(url, Some("firefox")).unwrap_err();
            assert!(error.contains("rein did not open it"), "{error}");
            let error = open(url).unwrap_err();
            assert!(error.contains("rein did not open it"), "{error}");
        }
    }
}
