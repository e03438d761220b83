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
    if !openable(url) {
        return Err(format!(
            "the authorization URL is not https (or http to this machine); rein did not open it: {url}"
        ));
    }
    let mut command = match std::env::var("BROWSER") {
        Ok(browser) if !browser.trim().is_empty() => {
            let words = shlex::split(&browser)
                .filter(|w| !w.is_empty())
                .ok_or_else(|| format!("BROWSER ({browser:?}) is not a command line"))?;
            let mut command = Command::new(&words[0]);
            command.args(&words[1..]);
            command
        }
        _ if cfg!(target_os = "macos") => Command::new("open"),
        _ => Command::new("xdg-open"),
    };
    command
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = command
        .spawn()
        .map_err(|e| format!("could not start a browser ({e}); open the URL yourself"))?;
    // Reaped in the background: a browser may run for as long as it likes.
    std::thread::spawn(move || child.wait());
    Ok(())
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
}
