//! Standard input and output as the connection's lines, each on a thread of its own.
//!
//! The SDK's own `Stdio` hands every line to a blocking thread and waits for it to come
//! back, a round trip per message; a streamed reply is hundreds of messages. Here a
//! writer thread takes whatever lines are waiting and writes them at once (one write for
//! a burst), and a reader thread hands in each line it reads, bounded: a line over
//! [`MAX_LINE`] is dropped whole and replaced by one the SDK answers with a parse error.

use std::io::{BufRead, Read, Write};

use agent_client_protocol::Lines;
use futures::{Sink, Stream};

/// The longest line read from the client (a prompt with embedded files fits easily).
pub const MAX_LINE: usize = 64 * 1024 * 1024;

/// What a line over [`MAX_LINE`] becomes: not JSON, so the client gets a parse error.
const TOO_LONG: &str = "(a line over rein's limit was dropped)";

/// Read lines from `input` into `tx` until it ends, each up to `max` bytes.
pub fn read_lines(
    mut input: impl BufRead,
    max: usize,
    tx: &futures::channel::mpsc::UnboundedSender<std::io::Result<String>>,
) {
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = input
            .by_ref()
            .take(max as u64 + 1)
            .read_until(b'\n', &mut line);
        match read {
            Ok(0) => return,
            Ok(_) if line.last() != Some(&b'\n') && line.len() > max => {
                // Over the limit: skip to its end, and say so.
                let mut rest = Vec::new();
                loop {
                    rest.clear();
                    match input.by_ref().take(max as u64).read_until(b'\n', &mut rest) {
                        Ok(0) => return,
                        Ok(_) if rest.last() == Some(&b'\n') => break,
                        Ok(_) => continue,
                        Err(_) => return,
                    }
                }
                if tx.unbounded_send(Ok(TOO_LONG.to_string())).is_err() {
                    return;
                }
            }
            Ok(_) => {
                while matches!(line.last(), Some(b'\n' | b'\r')) {
                    line.pop();
                }
                let text = String::from_utf8_lossy(&line).into_owned();
                if tx.unbounded_send(Ok(text)).is_err() {
                    return;
                }
            }
            Err(e) => {
                let _ = tx.unbounded_send(Err(e));
                return;
            }
        }
    }
}

/// Write the lines `rx` brings to `output`, every line waiting at once, until the channel
/// or the output closes.
pub fn write_lines(rx: &std::sync::mpsc::Receiver<String>, mut output: impl Write) {
    let mut batch = String::new();
    while let Ok(first) = rx.recv() {
        batch.clear();
        batch.push_str(&first);
        batch.push('\n');
        while let Ok(more) = rx.try_recv() {
            batch.push_str(&more);
            batch.push('\n');
        }
        if output
            .write_all(batch.as_bytes())
            .and_then(|()| output.flush())
            .is_err()
        {
            return;
        }
    }
}

/// The process's standard input and output as the connection's lines.
pub fn stdio() -> Lines<
    impl Sink<String, Error = std::io::Error> + Send + 'static,
    impl Stream<Item = std::io::Result<String>> + Send + 'static,
> {
    let (in_tx, in_rx) = futures::channel::mpsc::unbounded();
    std::thread::spawn(move || read_lines(std::io::stdin().lock(), MAX_LINE, &in_tx));
    let (out_tx, out_rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || write_lines(&out_rx, std::io::stdout().lock()));
    let sink = futures::sink::unfold(out_tx, async |tx, line: String| {
        tx.send(line)
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdout closed"))?;
        Ok::<_, std::io::Error>(tx)
    });
    Lines::new(Box::pin(sink), in_rx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    #[test]
    fn lines_are_read_whole_and_a_long_one_is_dropped() {
        let input = b"{\"a\":1}\r\n".to_vec();
        let mut input = input;
        input.extend(vec![b'x'; 100]);
        input.extend(b"\n{\"b\":2}\nlast without end");
        let (tx, rx) = futures::channel::mpsc::unbounded();
        read_lines(&input[..], 50, &tx);
        drop(tx);
        let lines: Vec<String> = futures::executor::block_on(rx.map(|l| l.unwrap()).collect());
        assert_eq!(
            lines,
            ["{\"a\":1}", TOO_LONG, "{\"b\":2}", "last without end"]
        );
    }

    #[test]
    fn waiting_lines_go_out_in_one_write() {
        #[derive(Default)]
        struct Writes(Vec<Vec<u8>>);
        impl Write for Writes {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.push(b.to_vec());
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let (tx, rx) = std::sync::mpsc::channel();
        for line in ["one", "two", "three"] {
            tx.send(line.to_string()).unwrap();
        }
        drop(tx);
        let mut out = Writes::default();
        write_lines(&rx, &mut out);
        assert_eq!(out.0, [b"one\ntwo\nthree\n".to_vec()]);
    }
}
