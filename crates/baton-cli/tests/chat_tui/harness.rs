//! `baton chat` in a real pseudo-terminal: the binary runs on the slave side, a thread reads
//! the master into a `vt100` screen (answering the cursor-position queries a terminal answers),
//! and tests type keys and read the screen, the status line and the raw bytes.

use baton_scripted::{Api, ScriptedServer};
use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a test waits for text to appear.
const PATIENCE: Duration = Duration::from_secs(20);

pub const ROWS: u16 = 24;
pub const COLS: u16 = 100;

pub struct Tui {
    screen: Arc<Mutex<vt100::Parser>>,
    raw: Arc<Mutex<Vec<u8>>>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    master: Box<dyn MasterPty + Send>,
    child: Box<dyn Child + Send + Sync>,
}

/// `baton chat` against `server`, home and database in `home`, plus `extra` arguments.
pub fn chat_command(server: &ScriptedServer, home: &Path, extra: &[&str]) -> CommandBuilder {
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_baton"));
    cmd.args([
        "chat",
        "--model",
        "scripted-model",
        "--base-url",
        &server.base_url(Api::ChatCompletions),
        "--summarizer",
        "extractive",
    ]);
    cmd.args(extra);
    cmd.env("BATON_HOME", home);
    cmd.env("OPENAI_API_KEY", "sk-tui-test-key");
    cmd.env("TERM", "xterm-256color");
    cmd.env_remove("NO_COLOR");
    cmd.cwd(home);
    cmd
}

impl Tui {
    pub fn start(server: &ScriptedServer, home: &Path, extra: &[&str]) -> Tui {
        Tui::spawn(chat_command(server, home, extra), ROWS, COLS)
    }

    pub fn spawn(cmd: CommandBuilder, rows: u16, cols: u16) -> Tui {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pseudo-terminal");
        let child = pair.slave.spawn_command(cmd).expect("start baton chat");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let writer = Arc::new(Mutex::new(pair.master.take_writer().expect("pty writer")));
        let screen = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 1000)));
        let raw = Arc::new(Mutex::new(Vec::new()));
        {
            let (screen, raw, writer) = (screen.clone(), raw.clone(), writer.clone());
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                loop {
                    let n = match reader.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    let chunk = &buf[..n];
                    let mut parser = screen.lock().unwrap();
                    parser.process(chunk);
                    raw.lock().unwrap().extend_from_slice(chunk);
                    // A real terminal answers "where is the cursor?" (rustyline asks before
                    // each prompt).
                    if chunk.windows(4).any(|w| w == b"\x1b[6n") {
                        let (row, col) = parser.screen().cursor_position();
                        let answer = format!("\x1b[{};{}R", row + 1, col + 1);
                        let _ = writer.lock().unwrap().write_all(answer.as_bytes());
                    }
                }
            });
        }
        Tui {
            screen,
            raw,
            writer,
            master: pair.master,
            child,
        }
    }

    /// Sends keys as a terminal would: `\r` is Enter, `\x03` Ctrl-C, `\x04` Ctrl-D.
    pub fn keys(&self, keys: &str) {
        let mut w = self.writer.lock().unwrap();
        w.write_all(keys.as_bytes()).unwrap();
        w.flush().unwrap();
    }

    /// Types a line and presses Enter.
    pub fn submit(&self, line: &str) {
        self.keys(line);
        // Let the line editor take the text before Enter, as a typist would.
        std::thread::sleep(Duration::from_millis(30));
        self.keys("\r");
    }

    /// The visible screen.
    pub fn screen(&self) -> String {
        self.screen.lock().unwrap().screen().contents()
    }

    /// Everything the program wrote, visible now or scrolled off (the scrollback included).
    pub fn transcript(&self) -> String {
        String::from_utf8_lossy(&self.raw.lock().unwrap()).into_owned()
    }

    /// The bottom row.
    pub fn status_line(&self) -> String {
        let parser = self.screen.lock().unwrap();
        let (rows, cols) = parser.screen().size();
        parser
            .screen()
            .contents_between(rows - 1, 0, rows - 1, cols)
            .trim_end()
            .to_string()
    }

    /// Waits until the screen shows `needle`; panics with the screen when it does not.
    pub fn wait_for(&self, needle: &str) -> String {
        self.wait_until(needle, |s| s.contains(needle))
    }

    /// Waits until `needle` was written, on screen now or scrolled off.
    pub fn wait_for_output(&self, needle: &str) {
        self.wait_until(needle, |_| self.transcript().contains(needle));
    }

    /// Waits until the status line contains `needle`.
    pub fn wait_for_status(&self, needle: &str) -> String {
        let started = Instant::now();
        loop {
            let status = self.status_line();
            if status.contains(needle) {
                return status;
            }
            if started.elapsed() > PATIENCE {
                panic!(
                    "the status line never showed {needle:?}; it is {status:?}; screen:\n{}",
                    self.screen()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn wait_until(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let started = Instant::now();
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            if started.elapsed() > PATIENCE {
                panic!("timed out waiting for {what:?}; screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for the prompt to be ready for typing (`n` prompts shown in all).
    pub fn wait_for_prompt(&self, n: usize) {
        self.wait_until(&format!("prompt #{n}"), |_| {
            self.transcript().matches("› ").count() >= n
        });
        // The editor enters raw mode right after drawing the prompt.
        std::thread::sleep(Duration::from_millis(50));
    }

    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.screen
            .lock()
            .unwrap()
            .screen_mut()
            .set_size(rows, cols);
        self.master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
    }

    pub fn pid(&self) -> u32 {
        self.child.process_id().unwrap()
    }

    /// Waits for the program to exit; returns its exit code.
    pub fn wait_exit(&mut self) -> u32 {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Let the reader drain what was written last.
                std::thread::sleep(Duration::from_millis(100));
                return status.exit_code();
            }
            if started.elapsed() > PATIENCE {
                let _ = self.child.kill();
                panic!("baton chat did not exit; screen:\n{}", self.screen());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}
