//! Benchmarks of the dashboard's rendering: `cargo bench --bench ui`.
//!
//! 1. Frame time at 120×40 with 20 and with 20 000 transcript cells, caches warm: drawing
//!    must cost the same, since only the cells on screen are laid out.
//! 2. Streaming: a 100 000-token reply (4 characters a token, Markdown with paragraphs,
//!    lists and code blocks) is appended to an assistant cell chunk by chunk, as the
//!    update step does, while a frame is drawn every 16 ms of simulated time at a given
//!    token rate. The CPU time of the thread (appends and frames) is reported in total
//!    and per frame.
//!
//! 3. Scrolling (issue 16): with 20 and 20 000 cells, the update step's cost of one
//!    PgDn, PgUp and Ctrl-Home press (the key through `app::update`, then a frame, as the
//!    dashboard does), scrolled up from the bottom and at the top (after Ctrl-Home), and
//!    the first frame after the first Ctrl-Home with cold caches (a resumed session).
//!
//! 4. The transcript pager (issue 28, Alt-O): with 20 and 20 000 cells, opening it (the key
//!    and the first frame, cold caches: every output and diff expanded), then PgUp from the
//!    end, Home and PgDn from the top, each a key and a frame. `-- pager` runs only these.
//!
//! Frames go through ratatui's `Terminal::draw` on a `TestBackend`, so the figures include
//! the buffer diff. Each figure is printed as a Markdown table row.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test's unwrap is an assertion

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use ratatui::backend::{CrosstermBackend, TestBackend};
use ratatui::Terminal;
use rein::app::event::AppEvent;
use rein::app::state::{Activity, App, Cell, SessionInfo, ToolStatus};
use rein::app::update::update;
use rein::ui::render;

const WIDTH: u16 = 120;
const HEIGHT: u16 = 40;
const TOKENS: usize = 100_000;
const FRAME: Duration = Duration::from_millis(16);

/// CPU time used by this thread.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill in.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn info() -> SessionInfo {
    SessionInfo {
        model: "bench-model".into(),
        project: PathBuf::from("/projects/bench"),
        branch: Some("main".into()),
        sandbox: "on (bubblewrap)".into(),
        sandbox_ok: true,
        setup: None,
        skills: Vec::new(),
        skill_notices: Vec::new(),
        prices: None,
    }
}

const REPLY: &str = "Here is what I found in `src/parse.rs`: the tokenizer treats **every** \
whitespace character as a separator, so tabs inside quoted words split them.\n\n\
- the first case is a tab inside quotes\n- the second is a run of spaces\n  1. leading\n  2. trailing\n\n\
```rust\nfn parse(s: &str) -> Vec<&str> {\n    s.split(' ').filter(|w| !w.is_empty()).collect()\n}\n```\n\n\
> Note: the old behaviour is documented in the README, see [the guide](https://example.com/guide).\n";

/// A transcript of `n` cells: user, reply, tool call with a result, in turn.
fn transcript(n: usize) -> Vec<Cell> {
    let started = Instant::now();
    (0..n)
        .map(|i| match i % 3 {
            0 => Cell::user(format!("Question {i}: why does the parser split tabs inside words?")),
            1 => Cell::assistant(REPLY, true),
            _ => {
                let mut c = Cell::tool(format!("c{i}"), "bash", "cargo test parse", started);
                if let Cell::Tool(t) = &mut c {
                    t.status = ToolStatus::Done { approved: true };
                    t.duration = Some(Duration::from_millis(2400));
                    t.result = Some("running 12 tests\ntest a ... ok\ntest b ... ok\ntest c ... FAILED\ntest d ... ok\n".into());
                }
                c
            }
        })
        .collect()
}

/// Mean µs per frame with `cells` cells: the render alone (into the terminal's buffer),
/// and a whole `Terminal::draw` (buffer reset, render, diff, TestBackend write).
fn bench_frames(cells: usize) -> (f64, f64) {
    let mut app = App::new(info(), 128_000);
    app.transcript.cells = transcript(cells);
    let mut terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).unwrap();
    let now = Instant::now();
    // Warm the caches of what is on screen.
    terminal.draw(|f| render(&app, f, now)).unwrap();
    let frames = 2_000;
    let start = Instant::now();
    for _ in 0..frames {
        let mut frame = terminal.get_frame();
        render(black_box(&app), &mut frame, now);
    }
    let render_only = start.elapsed().as_secs_f64() * 1e6 / frames as f64;
    let start = Instant::now();
    for _ in 0..frames {
        terminal.draw(|f| render(black_box(&app), f, now)).unwrap();
    }
    let draw = start.elapsed().as_secs_f64() * 1e6 / frames as f64;
    (render_only, draw)
}

/// A `Terminal::draw` that draws nothing: the TestBackend's own cost per frame.
fn bench_empty_draw() -> f64 {
    let mut terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).unwrap();
    let frames = 2_000;
    let start = Instant::now();
    for _ in 0..frames {
        terminal.draw(|_| {}).unwrap();
    }
    start.elapsed().as_secs_f64() * 1e6 / frames as f64
}

/// The streamed reply: Markdown blocks in turn, about `tokens * 4` characters.
fn long_reply(tokens: usize) -> String {
    let blocks = [
        "The parser now keeps tabs inside quoted words. I checked every caller of `parse` and \
         none relied on the old behaviour, except the **legacy** import path, which I left alone.\n\n",
        "- first, the tokenizer\n- then the quoting rules\n  - single quotes\n  - double quotes\n- last, the tests\n\n",
        "```rust\nfn tokenize(input: &str) -> Vec<Token> {\n    let mut out = Vec::new();\n    for (i, c) in input.char_indices() {\n        out.push(Token::new(i, c));\n    }\n    out\n}\n```\n\n",
        "> The old code is kept behind a flag for one release; see [the notes](https://example.com/notes).\n\n",
        "## Next steps\n\n1. run the full suite\n2. update the changelog\n3. open the pull request\n\n",
    ];
    let mut text = String::new();
    let mut i = 0;
    while text.len() < tokens * 4 {
        text.push_str(blocks[i % blocks.len()]);
        i += 1;
    }
    text.truncate(tokens * 4);
    text
}

/// A reply that is a single fenced code block of about `tokens * 4` characters.
fn long_code_block(tokens: usize) -> String {
    let mut text = String::from("Here is the whole file:\n\n```rust\n");
    let mut i = 0;
    while text.len() < tokens * 4 {
        text.push_str(&format!(
            "    let value_{i} = compute({i}, \"{i}\").unwrap_or_default();\n"
        ));
        if i % 10 == 9 {
            text.push('\n');
        }
        i += 1;
    }
    text.truncate(tokens * 4);
    text
}

struct StreamRun {
    cpu: Duration,
    frames: usize,
    worst_frame: Duration,
}

/// A writer that only counts what it is given: the bytes a terminal would get.
#[derive(Default)]
struct Counting(std::rc::Rc<std::cell::Cell<u64>>);

impl std::io::Write for Counting {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.set(self.0.get() + buf.len() as u64);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// [`bench_stream`] as the dashboard draws: `rein::ui::screen` on crossterm's backend,
/// writing the escape sequences a real terminal gets (into a counter), buffered as the
/// dashboard's.
fn bench_stream_crossterm(text: &str, tokens_per_sec: f64) -> (StreamRun, u64) {
    bench_stream_crossterm_at(text, tokens_per_sec, FRAME)
}

/// [`bench_stream_crossterm`] with a frame every `frame`.
fn bench_stream_crossterm_at(text: &str, tokens_per_sec: f64, frame: Duration) -> (StreamRun, u64) {
    let counter = Counting::default();
    let count = counter.0.clone();
    let backend = CrosstermBackend::new(std::io::BufWriter::new(counter));
    let viewport = ratatui::TerminalOptions {
        viewport: ratatui::Viewport::Fixed(ratatui::layout::Rect::new(0, 0, WIDTH, HEIGHT)),
    };
    let mut terminal = Terminal::with_options(backend, viewport).unwrap();
    // Drawn as the dashboard draws (rein::ui::screen).
    let mut screen = rein::ui::screen::Screen::new();
    let run = stream_with(text, tokens_per_sec, frame, |app, now| {
        screen.draw(&mut terminal, app, now).unwrap();
    });
    (run, count.get())
}

/// Stream `text` into an assistant cell at `tokens_per_sec` (4-character chunks), drawing
/// a frame every 16 ms of simulated time.
fn bench_stream(text: &str, tokens_per_sec: f64) -> StreamRun {
    let mut terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).unwrap();
    stream_into(&mut terminal, text, tokens_per_sec, FRAME)
}

fn stream_into<B: ratatui::backend::Backend>(
    terminal: &mut Terminal<B>,
    text: &str,
    tokens_per_sec: f64,
    frame: Duration,
) -> StreamRun {
    stream_with(text, tokens_per_sec, frame, |app, now| {
        terminal.draw(|f| render(app, f, now)).unwrap();
    })
}

/// Stream `text` as [`stream_into`] does, drawing each frame with `draw`.
fn stream_with(
    text: &str,
    tokens_per_sec: f64,
    frame: Duration,
    mut draw: impl FnMut(&App, Instant),
) -> StreamRun {
    let mut app = App::new(info(), 128_000);
    // The terminal's size as its resize events report it (`Screen::draw` follows it).
    app.size = (WIDTH, HEIGHT);
    app.transcript.cells = transcript(20);
    app.transcript
        .cells
        .push(Cell::user("Explain the fix in detail."));
    app.transcript.cells.push(Cell::assistant("", false));
    let start = Instant::now();
    app.activity = Activity::Streaming { since: start };
    draw(&app, start);

    let per_frame = tokens_per_sec * frame.as_secs_f64();
    let chunks: Vec<&str> = text
        .as_bytes()
        .chunks(4)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    let mut next_frame = per_frame;
    let mut frames = 0usize;
    let mut worst = Duration::ZERO;
    let cpu0 = thread_cpu();
    for (i, chunk) in chunks.iter().enumerate() {
        // What the update step does with a delta.
        if let Some(Cell::Assistant(a)) = app.transcript.cells.last_mut() {
            a.text.push_str(chunk);
        }
        app.gauge.added_chars += chunk.len() as u64;
        let last = i + 1 == chunks.len();
        if (i + 1) as f64 >= next_frame || last {
            next_frame += per_frame;
            if last {
                if let Some(Cell::Assistant(a)) = app.transcript.cells.last_mut() {
                    a.finished = true;
                }
            }
            let now = start + frame * frames as u32;
            let t = thread_cpu();
            draw(&app, now);
            worst = worst.max(thread_cpu() - t);
            frames += 1;
        }
    }
    let cpu = thread_cpu() - cpu0;
    // The incremental render must agree with rendering the whole reply at once.
    if let Some(Cell::Assistant(a)) = app.transcript.cells.last() {
        let cached = a.cache.0.borrow();
        let cached = cached.as_ref().unwrap();
        let once = rein::ui::markdown::render(&a.text, cached.width);
        assert_eq!(cached.lines, once);
    }
    StreamRun {
        cpu,
        frames,
        worst_frame: worst,
    }
}

fn key(code: crossterm::event::KeyCode, modifiers: crossterm::event::KeyModifiers) -> AppEvent {
    AppEvent::Key(crossterm::event::KeyEvent::new(code, modifiers))
}

/// Per press of `event` (mean µs over `presses`, a frame drawn after each, as the
/// dashboard does): the update step alone, and the frame after it.
fn presses(
    app: &mut App,
    terminal: &mut Terminal<TestBackend>,
    event: &dyn Fn() -> AppEvent,
    presses: usize,
) -> (f64, f64) {
    let now = Instant::now();
    let (mut update_t, mut frame_t) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..presses {
        let t = thread_cpu();
        black_box(update(app, event()));
        let u = thread_cpu();
        terminal.draw(|f| render(app, f, now)).unwrap();
        frame_t += thread_cpu() - u;
        update_t += u - t;
    }
    let us = |d: Duration| d.as_secs_f64() * 1e6 / presses as f64;
    (us(update_t), us(frame_t))
}

/// The scrolling figures with `cells` cells: rows of (what, update µs, frame µs).
fn bench_scroll(cells: usize) -> Vec<(String, f64, f64)> {
    use crossterm::event::{KeyCode, KeyModifiers};
    let none = KeyModifiers::NONE;
    let mut app = App::new(info(), 128_000);
    app.size = (WIDTH, HEIGHT);
    app.transcript.cells = transcript(cells);
    let mut terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).unwrap();
    let now = Instant::now();
    // The first Ctrl-Home on cold caches, as right after a resume.
    let t = thread_cpu();
    update(&mut app, key(KeyCode::Home, KeyModifiers::CONTROL));
    terminal.draw(|f| render(&app, f, now)).unwrap();
    let first_top = (thread_cpu() - t).as_secs_f64() * 1e6;
    let mut rows = vec![(
        "first Ctrl-Home, cold caches (key + frame)".to_string(),
        first_top,
        0.0,
    )];
    // At the top: PgDn and PgUp alternate around it.
    let (u, f) = presses(&mut app, &mut terminal, &|| key(KeyCode::PageDown, none), 1);
    rows.push(("PgDn at the top".into(), u, f));
    let (u, f) = presses(&mut app, &mut terminal, &|| key(KeyCode::PageUp, none), 1);
    rows.push(("PgUp at the top".into(), u, f));
    let (u, f) = presses(
        &mut app,
        &mut terminal,
        &|| key(KeyCode::Home, KeyModifiers::CONTROL),
        20,
    );
    rows.push(("Ctrl-Home, caches warm".into(), u, f));
    // From the bottom: a few pages up, then down.
    update(&mut app, key(KeyCode::End, KeyModifiers::CONTROL));
    terminal.draw(|f| render(&app, f, now)).unwrap();
    let (u, f) = presses(&mut app, &mut terminal, &|| key(KeyCode::PageUp, none), 10);
    rows.push(("PgUp from the bottom".into(), u, f));
    let (u, f) = presses(&mut app, &mut terminal, &|| key(KeyCode::PageDown, none), 5);
    rows.push(("PgDn while scrolled up".into(), u, f));
    let (u, f) = presses(
        &mut app,
        &mut terminal,
        &|| key(KeyCode::Char('x'), none),
        20,
    );
    rows.push(("typing a character while scrolled up".into(), u, f));
    rows
}

/// The pager's figures with `cells` cells: rows of (what, update µs, frame µs).
fn bench_pager(cells: usize) -> Vec<(String, f64, f64)> {
    use crossterm::event::{KeyCode, KeyModifiers};
    let none = KeyModifiers::NONE;
    let mut app = App::new(info(), 128_000);
    app.size = (WIDTH, HEIGHT);
    app.transcript.cells = transcript(cells);
    let mut terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).unwrap();
    let now = Instant::now();
    terminal.draw(|f| render(&app, f, now)).unwrap();
    let (u, f) = presses(
        &mut app,
        &mut terminal,
        &|| key(KeyCode::Char('o'), KeyModifiers::ALT),
        1,
    );
    assert!(app.pager.is_some(), "Alt-O opens the pager");
    let mut rows = vec![("open it (Alt-O), cold caches".to_string(), u, f)];
    let (u, f) = presses(&mut app, &mut terminal, &|| key(KeyCode::PageUp, none), 20);
    rows.push(("PgUp from the end".into(), u, f));
    let (u, f) = presses(&mut app, &mut terminal, &|| key(KeyCode::Home, none), 1);
    rows.push(("Home (to the top)".into(), u, f));
    let (u, f) = presses(
        &mut app,
        &mut terminal,
        &|| key(KeyCode::PageDown, none),
        20,
    );
    rows.push(("PgDn from the top".into(), u, f));
    rows
}

fn print_pager() {
    let small = bench_pager(20);
    let huge = bench_pager(20_000);
    println!("| transcript pager at {WIDTH}×{HEIGHT}: update step + frame, µs | 20 cells | 20 000 cells |");
    println!("|---|---|---|");
    for ((what, u20, f20), (_, u2, f2)) in small.iter().zip(&huge) {
        println!("| {what} | {u20:.0} + {f20:.0} | {u2:.0} + {f2:.0} |");
    }
}

/// The dashboard bench's paced stream, in process: 5 000 four-character chunks a second,
/// a frame every 33 ms (the dashboard's stream cadence), on crossterm's backend.
fn bench_paced_crossterm(text: &str) -> (StreamRun, u64) {
    bench_stream_crossterm_at(text, 5_000.0, Duration::from_millis(33))
}

fn main() {
    // `cargo bench` passes `--bench`; `-- paced` runs only the paced stream on crossterm's
    // backend (for a profiler); any other argument is ignored.
    if std::env::args().any(|a| a == "paced") {
        let text = long_reply(TOKENS / 4);
        let (run, written) = bench_paced_crossterm(&text);
        println!(
            "| paced stream ({} chars, 5 000 chunks/s, a frame per 33 ms) on crossterm's backend: {} frames | {:.3} s CPU in all, {:.1} µs per frame (worst {:.2} ms), {:.1} kB written a frame |",
            text.len(),
            run.frames,
            run.cpu.as_secs_f64(),
            run.cpu.as_secs_f64() * 1e6 / run.frames as f64,
            run.worst_frame.as_secs_f64() * 1e3,
            written as f64 / 1e3 / run.frames as f64,
        );
        return;
    }
    if std::env::args().any(|a| a == "pager") {
        print_pager();
        return;
    }
    let scroll_small = bench_scroll(20);
    let scroll_huge = bench_scroll(20_000);
    let (small, small_draw) = bench_frames(20);
    let (huge, huge_draw) = bench_frames(20_000);
    let empty = bench_empty_draw();
    let text = long_reply(TOKENS);
    println!("| benchmark | result |");
    println!("|---|---|");
    for (n, render_us, draw_us) in [("20", small, small_draw), ("20 000", huge, huge_draw)] {
        println!(
            "| frame at {WIDTH}×{HEIGHT}, {n} cells, caches warm (mean of 2000) | render {render_us:.1} µs; whole draw on TestBackend {draw_us:.1} µs |"
        );
    }
    println!("| empty `Terminal::draw` on TestBackend at {WIDTH}×{HEIGHT} (the backend's own cost) | {empty:.1} µs |");
    for ((what, u20, f20), (_, u2, f2)) in scroll_small.iter().zip(&scroll_huge) {
        if what.starts_with("first") {
            println!(
                "| {what} | 20 cells {:.2} ms; 20 000 cells {:.2} ms |",
                u20 / 1e3,
                u2 / 1e3
            );
        } else {
            println!("| {what}: update step + frame, µs | 20 cells {u20:.0} + {f20:.0}; 20 000 cells {u2:.0} + {f2:.0} |");
        }
    }
    let code = long_code_block(TOKENS);
    for (what, text, rate) in [
        ("Markdown reply", &text, 10_000.0),
        ("Markdown reply", &text, 1_000.0),
        ("reply that is one code block", &code, 1_000.0),
    ] {
        let run = bench_stream(text, rate);
        println!(
            "| stream a {TOKENS}-token {what} ({} chars) in 4-char chunks at {rate:.0} tokens/s, a frame per 16 ms: {} frames | {:.3} s CPU in all, {:.1} µs per frame (worst {:.2} ms) |",
            text.len(),
            run.frames,
            run.cpu.as_secs_f64(),
            run.cpu.as_secs_f64() * 1e6 / run.frames as f64,
            run.worst_frame.as_secs_f64() * 1e3,
        );
    }
    for (what, text, rate) in [
        ("Markdown reply", &text, 10_000.0),
        ("Markdown reply", &text, 1_000.0),
    ] {
        let (run, written) = bench_stream_crossterm(text, rate);
        println!(
            "| the same {what} at {rate:.0} tokens/s on crossterm's backend (the escape sequences a terminal gets): {} frames | {:.3} s CPU in all, {:.1} µs per frame (worst {:.2} ms), {:.1} kB written a frame |",
            run.frames,
            run.cpu.as_secs_f64(),
            run.cpu.as_secs_f64() * 1e6 / run.frames as f64,
            run.worst_frame.as_secs_f64() * 1e3,
            written as f64 / 1e3 / run.frames as f64,
        );
    }
    println!();
    print_pager();
}
