//! The loopback listener the authorization server sends the browser back to.
//!
//! [`Callback::bind`] listens on 127.0.0.1 only, on a port the system picks;
//! [`Callback::redirect_uri`] is `http://127.0.0.1:PORT/callback`. [`Callback::wait`]
//! answers other paths (a browser's `/favicon.ico`) with a 404 and takes the first request
//! for `/callback`, then stops listening: one answer, whatever it says. Its `state` must be
//! the one the authorization URL carried, or the login fails (a page another site sent
//! the browser to). A request head is read with a cap and a deadline, and the whole wait
//! ends after `timeout`.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The largest request head read from the browser.
const MAX_HEAD: usize = 16 * 1024;
/// How long one connection may take to send its request head.
const HEAD_DEADLINE: Duration = Duration::from_secs(10);

/// What the authorization server sent back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackParams {
    pub code: String,
    pub state: String,
    /// RFC 9207's `iss`, when the server sends it.
    pub issuer: Option<String>,
}

/// A listener on 127.0.0.1 for one callback.
pub struct Callback {
    listener: TcpListener,
    port: u16,
}

impl Callback {
    pub async fn bind() -> std::io::Result<Callback> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        Ok(Callback { listener, port })
    }

    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port)
    }

    /// The callback's parameters, once it comes with the expected `state`.
    pub async fn wait(self, state: &str, timeout: Duration) -> Result<CallbackParams, String> {
        let answer = tokio::time::timeout(timeout, async {
            loop {
                let (stream, _) = self
                    .listener
                    .accept()
                    .await
                    .map_err(|e| format!("the callback listener failed: {e}"))?;
                if let Some(result) = one_request(stream, state).await {
                    return result;
                }
            }
        })
        .await;
        answer.unwrap_or_else(|_| {
            Err(format!(
                "no answer from the browser within {} s (the login was not finished)",
                timeout.as_secs()
            ))
        })
    }
}

/// Serve one connection: `None` when it was not the callback (answered 404).
async fn one_request(mut stream: TcpStream, state: &str) -> Option<Result<CallbackParams, String>> {
    let head = tokio::time::timeout(HEAD_DEADLINE, read_head(&mut stream))
        .await
        .ok()
        .flatten()?;
    let target = head
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("GET "))
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or("");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    if path != "/callback" {
        let _ = respond(&mut stream, 404, "Not found.").await;
        return None;
    }
    let get = |key: &str| {
        form_urlencoded_pairs(query)
            .into_iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    };
    let result = if let Some(error) = get("error") {
        let detail = get("error_description")
            .map(|d| format!(": {}", short(&d)))
            .unwrap_or_default();
        Err(format!(
            "the authorization server refused the login ({}{detail})",
            short(&error)
        ))
    } else if get("state").as_deref() != Some(state) {
        Err("the callback did not carry this login's state; it was refused".to_string())
    } else {
        match get("code") {
            Some(code) if !code.is_empty() => Ok(CallbackParams {
                code,
                state: state.to_string(),
                issuer: get("iss"),
            }),
            _ => Err("the callback carried no authorization code".to_string()),
        }
    };
    let page = match &result {
        Ok(_) => "Logged in: you can close this page and go back to rein.",
        Err(_) => "The login failed: rein says why in the terminal.",
    };
    let _ = respond(&mut stream, if result.is_ok() { 200 } else { 400 }, page).await;
    Some(result)
}

async fn read_head(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
        if head.len() > MAX_HEAD {
            return None;
        }
    }
    Some(String::from_utf8_lossy(&head).into_owned())
}

async fn respond(stream: &mut TcpStream, status: u16, text: &str) -> std::io::Result<()> {
    let reason = if status == 200 { "OK" } else { "Error" };
    let page = format!("<!doctype html><title>rein</title><p>{text}</p>\n");
    let answer = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
        page.len()
    );
    stream.write_all(answer.as_bytes()).await?;
    stream.shutdown().await
}

/// A value from the browser, made safe to print: one line, no control characters, at
/// most 200 characters.
fn short(text: &str) -> String {
    let clean: String = crate::text::sanitize::sanitize(text)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(200)
        .collect();
    clean
}

/// `a=1&b=x%20y` as pairs, percent- and `+`-decoded.
fn form_urlencoded_pairs(query: &str) -> Vec<(String, String)> {
    reqwest::Url::parse(&format!("http://127.0.0.1/?{query}"))
        .map(|url| url.query_pairs().into_owned().collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(port: u16, target: &str) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        stream
            .write_all(format!("GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        answer
    }

    #[tokio::test]
    async fn takes_the_callback_with_its_state_and_ignores_other_paths() {
        let callback = Callback::bind().await.unwrap();
        let uri = callback.redirect_uri();
        assert!(uri.starts_with("http://127.0.0.1:") && uri.ends_with("/callback"));
        let port: u16 = uri[17..uri.len() - 9].parse().unwrap();
        let waiting = tokio::spawn(callback.wait("st-1", Duration::from_secs(20)));
        assert!(get(port, "/favicon.ico")
            .await
            .starts_with("HTTP/1.1 404 Error\r\n"));
        let page = get(port, "/callback?code=c%2B1&state=st-1&iss=https%3A%2F%2Fas").await;
        assert!(page.starts_with("HTTP/1.1 200 OK\r\n"), "{page}");
        assert_eq!(
            waiting.await.unwrap(),
            Ok(CallbackParams {
                code: "c+1".into(),
                state: "st-1".into(),
                issuer: Some("https://as".into()),
            })
        );
        // One request only: the listener is gone.
        assert!(TcpStream::connect(("127.0.0.1", port)).await.is_err());
    }

    #[tokio::test]
    async fn a_wrong_state_or_an_error_fails_the_login() {
        for (query, expected) in [
            ("code=c&state=other", "did not carry this login's state"),
            (
                "error=access_denied&error_description=no",
                "refused the login (access_denied: no)",
            ),
            ("state=st", "no authorization code"),
            ("code=&state=st", "no authorization code"),
        ] {
            let callback = Callback::bind().await.unwrap();
            let uri = callback.redirect_uri();
            let port: u16 = uri[17..uri.len() - 9].parse().unwrap();
            let waiting = tokio::spawn(callback.wait("st", Duration::from_secs(20)));
            assert!(get(port, &format!("/callback?{query}"))
                .await
                .starts_with("HTTP/1.1 400 Error\r\n"));
            let error = waiting.await.unwrap().unwrap_err();
            assert!(error.contains(expected), "{query}: {error}");
        }
    }

    /// A request head of exactly `len` bytes for `target`, padded with a header.
    fn head_of(target: &str, len: usize) -> Vec<u8> {
        let start = format!("GET {target} HTTP/1.1\r\nHost: x\r\nX-Pad: ");
        let end = "\r\n\r\n";
        let mut head = start.into_bytes();
        head.resize(len - end.len(), b'a');
        head.extend_from_slice(end.as_bytes());
        head
    }

    /// Send `head` and read the answer; an empty answer when the connection was dropped.
    async fn send(port: u16, head: &[u8]) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let _ = stream.write_all(head).await;
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer).await;
        String::from_utf8_lossy(&answer).into_owned()
    }

    #[tokio::test]
    async fn a_request_head_of_up_to_16_kib_is_read_whole() {
        let callback = Callback::bind().await.unwrap();
        let uri = callback.redirect_uri();
        let port: u16 = uri[17..uri.len() - 9].parse().unwrap();
        let waiting = tokio::spawn(callback.wait("st", Duration::from_secs(20)));
        // The code and the state come after more than one read's worth of the target.
        let target = format!("/callback?pad={}&code=c&state=st", "p".repeat(5000));
        let page = send(port, &head_of(&target, MAX_HEAD)).await;
        assert!(page.starts_with("HTTP/1.1 200 OK\r\n"), "{page}");
        assert_eq!(waiting.await.unwrap().unwrap().code, "c");
    }

    #[tokio::test]
    async fn a_longer_request_head_is_dropped_unanswered_and_the_wait_goes_on() {
        let callback = Callback::bind().await.unwrap();
        let uri = callback.redirect_uri();
        let port: u16 = uri[17..uri.len() - 9].parse().unwrap();
        let waiting = tokio::spawn(callback.wait("st", Duration::from_secs(20)));
        let page = send(port, &head_of("/callback?code=big&state=st", MAX_HEAD + 1)).await;
        assert_eq!(page, "");
        let page = get(port, "/callback?code=c&state=st").await;
        assert!(page.starts_with("HTTP/1.1 200 OK\r\n"), "{page}");
        assert_eq!(waiting.await.unwrap().unwrap().code, "c");
    }

    #[tokio::test]
    async fn gives_up_after_the_timeout() {
        let callback = Callback::bind().await.unwrap();
        let error = callback
            .wait("st", Duration::from_millis(50))
            .await
            .unwrap_err();
        assert!(error.contains("no answer from the browser"), "{error}");
    }
}
