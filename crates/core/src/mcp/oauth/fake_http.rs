//! A scripted HTTP server on 127.0.0.1 for the tests of the probe and of discovery: each
//! request's path picks its canned answer (404 for any other path).

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One canned answer.
#[derive(Clone)]
pub struct Answer {
    /// The status line's code and reason, `200 OK`.
    pub status: &'static str,
    /// Header lines, each ending in `\r\n`.
    pub headers: String,
    pub body: Body,
}

#[derive(Clone)]
pub enum Body {
    /// Sent whole, with its `Content-Length`.
    Fixed(Vec<u8>),
    /// Written until the client hangs up (no length: the body ends with the connection).
    Endless,
}

impl Answer {
    pub fn new(status: &'static str, headers: &str, body: impl Into<Vec<u8>>) -> Answer {
        Answer {
            status,
            headers: headers.to_string(),
            body: Body::Fixed(body.into()),
        }
    }
}

/// Serve `routes` (path, answer) until the test ends; the server's base URL
/// (`http://127.0.0.1:PORT`).
pub async fn serve(routes: Vec<(&'static str, Answer)>) -> String {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let routes = routes.clone();
            tokio::spawn(async move {
                let mut seen = Vec::new();
                let mut buf = [0u8; 4096];
                let head_end = loop {
                    if let Some(at) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
                        break at + 4;
                    }
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                };
                let head = String::from_utf8_lossy(&seen[..head_end]).to_string();
                let length = head
                    .lines()
                    .filter_map(|l| l.split_once(':'))
                    .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                    .and_then(|(_, v)| v.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                while seen.len() < head_end + length {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let path = head.split(' ').nth(1).unwrap_or("").to_string();
                let answer = routes
                    .iter()
                    .find(|(p, _)| *p == path)
                    .map(|(_, a)| a.clone())
                    .unwrap_or_else(|| Answer::new("404 Not Found", "", ""));
                let status = answer.status;
                let headers = answer.headers;
                match answer.body {
                    Body::Fixed(body) => {
                        let head = format!(
                            "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
                            body.len()
                        );
                        let _ = stream.write_all(head.as_bytes()).await;
                        let _ = stream.write_all(&body).await;
                    }
                    Body::Endless => {
                        let head =
                            format!("HTTP/1.1 {status}\r\n{headers}Connection: close\r\n\r\n");
                        let _ = stream.write_all(head.as_bytes()).await;
                        let block = vec![b' '; 16 * 1024];
                        while stream.write_all(&block).await.is_ok() {}
                    }
                }
                let _ = stream.shutdown().await;
            });
        }
    });
    format!("http://127.0.0.1:{port}")
}
