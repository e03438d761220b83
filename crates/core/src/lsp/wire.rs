//! The protocol's framing: each message a `Content-Length` header, a blank line and that
//! many bytes of JSON. Reading is bounded: a header section of at most [`MAX_HEADER`]
//! bytes, a body of at most the caller's limit; a server that breaks either is cut off.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};

/// The most bytes of headers one message may have.
pub const MAX_HEADER: usize = 8 * 1024;

/// Why no further message can be read.
#[derive(Debug, PartialEq, Eq)]
pub enum WireError {
    /// The server closed its output.
    Closed,
    /// The server sent what is not the protocol's framing.
    Garbage(String),
    /// A message over the limit.
    TooLong {
        length: usize,
        limit: usize,
    },
    Io(String),
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::Closed => f.write_str("it closed its output"),
            WireError::Garbage(what) => write!(f, "it sent what is not the protocol: {what}"),
            WireError::TooLong { length, limit } => write!(
                f,
                "it sent a message of {length} bytes, over the limit of {limit}"
            ),
            WireError::Io(e) => write!(f, "reading from it failed: {e}"),
        }
    }
}

/// `message` framed for the wire.
pub fn frame(message: &serde_json::Value) -> Vec<u8> {
    let body = message.to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

/// The next message's body, at most `limit` bytes.
pub async fn read<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    limit: usize,
) -> Result<Vec<u8>, WireError> {
    let mut length = None;
    let mut header_bytes = 0;
    loop {
        let mut line = Vec::new();
        let n = (&mut *reader)
            .take((MAX_HEADER - header_bytes + 1) as u64)
            .read_until(b'\n', &mut line)
            .await
            .map_err(|e| WireError::Io(e.to_string()))?;
        if n == 0 {
            return Err(if header_bytes == 0 {
                WireError::Closed
            } else {
                WireError::Garbage("its output ended inside a header".into())
            });
        }
        header_bytes += n;
        if header_bytes > MAX_HEADER || !line.ends_with(b"\n") {
            return Err(WireError::Garbage(format!(
                "a header section over {MAX_HEADER} bytes"
            )));
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if length.is_none() && header_bytes <= 2 {
                // A stray blank line between messages.
                header_bytes = 0;
                continue;
            }
            break;
        }
        let Some((name, value)) = text.split_once(':') else {
            let shown: String = text.chars().take(80).collect();
            return Err(WireError::Garbage(format!("{shown:?}")));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            length = Some(value.trim().parse::<usize>().map_err(|_| {
                WireError::Garbage(format!("a Content-Length of {:?}", value.trim()))
            })?);
        }
    }
    let Some(length) = length else {
        return Err(WireError::Garbage(
            "a message without Content-Length".into(),
        ));
    };
    if length > limit {
        return Err(WireError::TooLong { length, limit });
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await.map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            WireError::Garbage("its output ended inside a message".into())
        } else {
            WireError::Io(e.to_string())
        }
    })?;
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn all(bytes: &[u8], limit: usize) -> (Vec<String>, WireError) {
        let mut reader = tokio::io::BufReader::new(bytes);
        let mut out = Vec::new();
        loop {
            match read(&mut reader, limit).await {
                Ok(body) => out.push(String::from_utf8(body).unwrap()),
                Err(e) => return (out, e),
            }
        }
    }

    #[tokio::test]
    async fn messages_are_read_back_as_framed() {
        let mut bytes = frame(&serde_json::json!({"a": 1}));
        bytes.extend(b"content-length: 2\r\nContent-Type: application/vscode-jsonrpc\r\n\r\n{}");
        bytes.extend(b"\r\n");
        bytes.extend(frame(&serde_json::json!("é")));
        let (got, end) = all(&bytes, 100).await;
        assert_eq!(got, [r#"{"a":1}"#, "{}", "\"é\""]);
        assert_eq!(end, WireError::Closed);
    }

    #[tokio::test]
    async fn a_server_that_breaks_the_framing_is_cut_off() {
        let (_, end) = all(b"hello world\r\n\r\n", 100).await;
        assert!(matches!(end, WireError::Garbage(_)), "{end:?}");
        let (_, end) = all(b"Content-Length: x\r\n\r\n", 100).await;
        assert!(matches!(end, WireError::Garbage(_)), "{end:?}");
        let (_, end) = all(b"Content-Type: a\r\n\r\n{}", 100).await;
        assert!(matches!(end, WireError::Garbage(_)), "{end:?}");
        let (_, end) = all(b"Content-Length: 10\r\n\r\n{}", 100).await;
        assert!(matches!(end, WireError::Garbage(_)), "{end:?}");
        let (_, end) = all(b"Content-Length: 1000\r\n\r\n{}", 100).await;
        assert_eq!(
            end,
            WireError::TooLong {
                length: 1000,
                limit: 100
            }
        );
        let endless = vec![b'a'; MAX_HEADER * 2];
        let (_, end) = all(&endless, 100).await;
        assert!(matches!(end, WireError::Garbage(_)), "{end:?}");
    }
}
