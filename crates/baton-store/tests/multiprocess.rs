//! Reliability tests with real processes, not threads: several processes writing and searching
//! one database file, a writer killed with SIGKILL in the middle of its transactions, and
//! corrupt or foreign files handed to `open`.
//!
//! The child processes are this test binary run again (`std::env::current_exe()`) with only the
//! ignored [`child_worker`] test selected; the role and its parameters travel in `BATON_MP_*`
//! environment variables. Run on its own, `child_worker` has no role and does nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use baton_core::Message;
use baton_store::{SearchQuery, SessionFilter, SessionStore, SqliteStore, StoreError, search};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const ENV_ROLE: &str = "BATON_MP_ROLE";
const ENV_DB: &str = "BATON_MP_DB";
const ENV_WRITER: &str = "BATON_MP_WRITER";
const ENV_STOP: &str = "BATON_MP_STOP";
const ENV_READY: &str = "BATON_MP_READY";

/// No child may outlive this: a parent that stops waiting fails its test and kills the child.
const CHILD_DEADLINE: Duration = Duration::from_secs(60);

const SESSION: &str = "shared";
const WRITERS: usize = 2;
const MESSAGES_PER_WRITER: usize = 300;

/// Messages per `append_messages` call of the writer that gets killed.
const KILL_BATCH: usize = 200;

// ---------------------------------------------------------------------------------------------
// Child side
// ---------------------------------------------------------------------------------------------

#[test]
#[ignore = "child-process entry point for multiprocess tests"]
fn child_worker() {
    let Ok(role) = std::env::var(ENV_ROLE) else {
        return; // Run by hand without a role: nothing to do.
    };
    let db = PathBuf::from(std::env::var(ENV_DB).expect("BATON_MP_DB"));
    match role.as_str() {
        "writer" => {
            let w: usize = std::env::var(ENV_WRITER).unwrap().parse().unwrap();
            child_writer(&db, w);
        }
        "searcher" => child_searcher(&db, Path::new(&std::env::var(ENV_STOP).unwrap())),
        "batch_writer" => child_batch_writer(&db, Path::new(&std::env::var(ENV_READY).unwrap())),
        "one_batch_then_sleep" => {
            child_one_batch_then_sleep(&db, Path::new(&std::env::var(ENV_READY).unwrap()));
        }
        other => panic!("unknown child role {other:?}"),
    }
}

/// The text of writer `w`'s `i`-th message: an English marker unique to it, and CJK text so
/// the CJK index gets rows too.
fn writer_text(w: usize, i: usize) -> String {
    format!("w{w} m{i} marker{w}x{i} 用户配置 第{i}条消息")
}

/// Appends this writer's messages in batches of 1..=7, any error failing the child.
fn child_writer(db: &Path, w: usize) {
    let store = SqliteStore::open(db).unwrap_or_else(|e| panic!("writer {w}: open: {e}"));
    let mut i = 0;
    let mut k = 0;
    while i < MESSAGES_PER_WRITER {
        let size = ((w * 3 + k * 5) % 7 + 1).min(MESSAGES_PER_WRITER - i);
        let batch: Vec<Message> = (i..i + size)
            .map(|j| Message::user(writer_text(w, j)))
            .collect();
        store
            .append_messages(SESSION, &batch)
            .unwrap_or_else(|e| panic!("writer {w}: append of messages {i}..{}: {e}", i + size));
        i += size;
        k += 1;
    }
}

/// Searches (English and CJK) and lists sessions until `stop` appears, any error failing the
/// child. Gives up (failing) after [`CHILD_DEADLINE`].
fn child_searcher(db: &Path, stop: &Path) {
    let store = SqliteStore::open(db).unwrap_or_else(|e| panic!("searcher: open: {e}"));
    let queries = [
        "marker0x17",
        "marker1x250",
        "用户",
        "配置",
        "用户配置",
        "w1 AND 消息",
        "m42",
    ];
    let start = Instant::now();
    let mut rounds = 0u64;
    loop {
        // Checked before the round, so one full round runs after the writers finished.
        let last = stop.exists();
        for q in queries {
            let hits = store
                .read(|c| Ok(search(c, &SearchQuery::new(q))?))
                .unwrap_or_else(|e| panic!("searcher: round {rounds}: query {q:?}: {e}"));
            for h in &hits {
                assert_eq!(h.session_id, SESSION, "query {q:?}: hit {h:?}");
            }
        }
        let listed = store
            .list_sessions(&SessionFilter::default())
            .unwrap_or_else(|e| panic!("searcher: round {rounds}: list_sessions: {e}"));
        assert_eq!(listed.len(), 1, "searcher: listing {listed:?}");
        rounds += 1;
        if last {
            break;
        }
        assert!(
            start.elapsed() < CHILD_DEADLINE,
            "searcher: no stop signal after {CHILD_DEADLINE:?}"
        );
    }
    println!("searcher: {rounds} rounds");
}

/// A message of a few KB: English words and a CJK phrase, so every index does work.
fn big_text(batch: usize, i: usize) -> String {
    let mut s = format!("batch{batch} msg{i} 数据库写入测试 ");
    while s.len() < 3000 {
        s.push_str("the quick brown fox jumps over the lazy dog while the writer is killed ");
    }
    s
}

/// Appends batches of [`KILL_BATCH`] large messages forever (until killed; gives up after
/// [`CHILD_DEADLINE`]). Creates `ready` once the first batch is committed.
fn child_batch_writer(db: &Path, ready: &Path) {
    let store = SqliteStore::open(db).unwrap_or_else(|e| panic!("batch writer: open: {e}"));
    let start = Instant::now();
    let mut batch = 0;
    while start.elapsed() < CHILD_DEADLINE {
        let msgs: Vec<Message> = (0..KILL_BATCH)
            .map(|i| Message::user(big_text(batch, i)))
            .collect();
        store
            .append_messages(SESSION, &msgs)
            .unwrap_or_else(|e| panic!("batch writer: batch {batch}: {e}"));
        if batch == 0 {
            std::fs::write(ready, b"").unwrap();
        }
        batch += 1;
    }
}

/// Commits one small batch (it stays in the WAL: far below the auto-checkpoint threshold),
/// creates `ready`, and sleeps until killed.
fn child_one_batch_then_sleep(db: &Path, ready: &Path) {
    let store = SqliteStore::open(db).unwrap_or_else(|e| panic!("wal writer: open: {e}"));
    let msgs: Vec<Message> = (0..50)
        .map(|i| Message::user(format!("walmsg{i} 预写日志")))
        .collect();
    store.append_messages(SESSION, &msgs).unwrap();
    std::fs::write(ready, b"").unwrap();
    std::thread::sleep(CHILD_DEADLINE);
}

// ---------------------------------------------------------------------------------------------
// Parent side
// ---------------------------------------------------------------------------------------------

/// A running child. Dropping it (e.g. when an assertion fails) kills and reaps the process.
struct ChildGuard {
    name: String,
    child: Child,
    log: PathBuf,
}

impl ChildGuard {
    fn spawn(name: &str, dir: &Path, envs: &[(&str, String)]) -> ChildGuard {
        let log = dir.join(format!("{name}.log"));
        let out = std::fs::File::create(&log).unwrap();
        let err = out.try_clone().unwrap();
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args([
            "--exact",
            "child_worker",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let child = cmd.spawn().unwrap();
        ChildGuard {
            name: name.to_string(),
            child,
            log,
        }
    }

    fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits for a clean exit; panics (with the child's output) on failure or after `deadline`.
    fn wait_success(&mut self, deadline: Instant) {
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(
                    status.success(),
                    "child {} failed ({status}):\n{}",
                    self.name,
                    self.output()
                );
                return;
            }
            assert!(
                Instant::now() < deadline,
                "child {} still running at the deadline:\n{}",
                self.name,
                self.output()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Fails if the child already exited (it was meant to keep running).
    fn assert_running(&mut self) {
        if let Some(status) = self.child.try_wait().unwrap() {
            panic!(
                "child {} exited early ({status}):\n{}",
                self.name,
                self.output()
            );
        }
    }

    /// SIGKILL, then reap.
    fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Waits for `path` to exist while `child` keeps running, within [`CHILD_DEADLINE`].
fn wait_for_file(path: &Path, child: &mut ChildGuard) {
    let deadline = Instant::now() + CHILD_DEADLINE;
    while !path.exists() {
        child.assert_running();
        assert!(
            Instant::now() < deadline,
            "{} never appeared:\n{}",
            path.display(),
            child.output()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn env(role: &str, db: &Path) -> Vec<(&'static str, String)> {
    vec![
        (ENV_ROLE, role.to_string()),
        (ENV_DB, db.display().to_string()),
    ]
}

fn raw_count(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// `PRAGMA integrity_check` and the FTS5 integrity checks of both full-text indexes, plus
/// the counters. Every message these tests write contains CJK text, so the CJK index must have
/// exactly one row per message.
///
/// The `rank` value 1 matters: for `messages_fts`, which keeps its own copy of the text, a
/// plain `'integrity-check'` only checks the index's own structure
/// and passes even when the index has no entry for a `messages` row (measured with the bundled
/// SQLite 3.54); with `rank = 1` it also compares the index with the content table.
/// `messages_fts_cjk` holds only the CJK side of each message, not the text of `messages`, so
/// `integrity-check` checks its structure and the rowid comparison below covers its content.
fn assert_consistent(path: &Path) {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE).unwrap();
    let check: Vec<String> = conn
        .prepare("PRAGMA integrity_check")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(check, ["ok"], "integrity_check of {}", path.display());
    for table in ["messages_fts", "messages_fts_cjk"] {
        conn.execute(
            &format!("INSERT INTO {table}({table}, rank) VALUES('integrity-check', 1)"),
            [],
        )
        .unwrap_or_else(|e| panic!("FTS integrity-check of {table}: {e}"));
    }
    let cjk_mismatch = raw_count(
        &conn,
        "SELECT (SELECT COUNT(*) FROM (SELECT rowid FROM messages_fts_cjk EXCEPT \
         SELECT id FROM messages)) + (SELECT COUNT(*) FROM (SELECT id FROM messages EXCEPT \
         SELECT rowid FROM messages_fts_cjk))",
    );
    assert_eq!(cjk_mismatch, 0, "messages_fts_cjk rows != messages rows");
    // The session's counter agrees with the rows, for every session.
    let mismatched = raw_count(
        &conn,
        "SELECT COUNT(*) FROM sessions s WHERE COALESCE(s.message_count, 0) != \
         (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id)",
    );
    assert_eq!(mismatched, 0, "sessions.message_count != row count");
}

fn new_db_with_session() -> (tempfile::TempDir, PathBuf) {
    let (dir, path) = common::temp_db();
    let store = SqliteStore::open(&path).unwrap();
    common::session(&store, SESSION);
    (dir, path)
}

fn search_texts(store: &SqliteStore, query: &str) -> Vec<String> {
    let hits = store
        .read(|c| Ok(search(c, &SearchQuery::new(query))?))
        .unwrap();
    let conn = Connection::open(store.path()).unwrap();
    hits.iter()
        .map(|h| {
            conn.query_row(
                "SELECT content FROM messages WHERE id = ?1",
                [h.message_id],
                |r| r.get(0),
            )
            .unwrap()
        })
        .collect()
}

#[test]
fn two_writer_processes_and_a_searcher_lose_and_duplicate_nothing() {
    let (dir, path) = new_db_with_session();
    let stop = dir.path().join("stop");

    let mut searcher = ChildGuard::spawn("searcher", dir.path(), &{
        let mut e = env("searcher", &path);
        e.push((ENV_STOP, stop.display().to_string()));
        e
    });
    let mut writers: Vec<ChildGuard> = (0..WRITERS)
        .map(|w| {
            let mut e = env("writer", &path);
            e.push((ENV_WRITER, w.to_string()));
            ChildGuard::spawn(&format!("writer{w}"), dir.path(), &e)
        })
        .collect();
    let deadline = Instant::now() + CHILD_DEADLINE;
    for w in &mut writers {
        w.wait_success(deadline);
    }
    std::fs::write(&stop, b"").unwrap();
    searcher.wait_success(deadline);
    let rounds = searcher.output();
    let rounds = rounds
        .lines()
        .find_map(|l| l.split_once("searcher: ").map(|(_, r)| r))
        .unwrap_or("?");
    println!("searcher: {rounds} while the writers ran");

    let store = SqliteStore::open(&path).unwrap();
    let msgs = store.messages(SESSION).unwrap();
    assert_eq!(msgs.len(), WRITERS * MESSAGES_PER_WRITER);
    for w in 0..WRITERS {
        let mine: Vec<String> = msgs
            .iter()
            .map(Message::text)
            .filter(|t| t.starts_with(&format!("w{w} ")))
            .collect();
        let expected: Vec<String> = (0..MESSAGES_PER_WRITER)
            .map(|i| writer_text(w, i))
            .collect();
        assert_eq!(mine, expected, "writer {w}: lost, duplicated or reordered");
    }
    let session = store.get_session(SESSION).unwrap().unwrap();
    assert_eq!(
        session.message_count as usize,
        WRITERS * MESSAGES_PER_WRITER
    );
    assert_consistent(&path);

    for w in 0..WRITERS {
        for i in [0, 1, 150, MESSAGES_PER_WRITER - 1] {
            let found = search_texts(&store, &format!("marker{w}x{i}"));
            assert_eq!(found, [writer_text(w, i)], "search for marker{w}x{i}");
        }
    }
    // Every message has the CJK text: the 2-character index finds them all (up to the limit).
    let hits = store
        .read(|c| {
            Ok(search(
                c,
                &SearchQuery {
                    limit: 1000,
                    ..SearchQuery::new("配置")
                },
            )?)
        })
        .unwrap();
    assert_eq!(hits.len(), WRITERS * MESSAGES_PER_WRITER);
}

/// Counts rows in a copy of the main database file alone, without its WAL. When the writer was
/// killed during a checkpoint the main file alone is inconsistent (pages copied from the WAL
/// into it only make sense together with the rest of the WAL), and this fails: the WAL is part
/// of the database, not a leftover.
fn count_without_wal(path: &Path, scratch: &Path) -> rusqlite::Result<i64> {
    let copy = scratch.join("main-only.db");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", copy.display()));
    }
    std::fs::copy(path, &copy).unwrap();
    let conn = Connection::open_with_flags(&copy, OpenFlags::SQLITE_OPEN_READ_WRITE)?;
    conn.query_row("SELECT COUNT(*) FROM messages", [], |r| r.get(0))
}

fn wal_path(path: &Path) -> PathBuf {
    PathBuf::from(format!("{}-wal", path.display()))
}

#[test]
fn sigkill_mid_write_leaves_a_consistent_database() {
    let (dir, path) = new_db_with_session();
    let scratch = tempfile::tempdir().unwrap();
    let mut expected_min = 0;
    // Delays after the first commit; the kill lands wherever the writer is by then.
    for (round, delay_ms) in [0u64, 60, 130, 270, 400].into_iter().enumerate() {
        let ready = dir.path().join(format!("ready{round}"));
        let mut e = env("batch_writer", &path);
        e.push((ENV_READY, ready.display().to_string()));
        let mut child = ChildGuard::spawn(&format!("batch_writer{round}"), dir.path(), &e);
        wait_for_file(&ready, &mut child);
        std::thread::sleep(Duration::from_millis(delay_ms));
        child.assert_running();
        child.kill();

        // What the killed writer left: a WAL, which opening must replay, not discard.
        let wal = wal_path(&path);
        assert!(wal.exists(), "round {round}: no WAL after the kill");
        let main_only = count_without_wal(&path, scratch.path());

        let store = SqliteStore::open(&path).unwrap();
        let rows = store.messages(SESSION).unwrap().len();
        let session = store.get_session(SESSION).unwrap().unwrap();
        assert_eq!(session.message_count as usize, rows, "round {round}");
        assert_eq!(rows % KILL_BATCH, 0, "round {round}: a partial batch");
        assert!(
            rows >= expected_min + KILL_BATCH,
            "round {round}: {rows} rows, but this round committed at least one batch on top \
             of the {expected_min} before"
        );
        let main_only = match main_only {
            Ok(n) => {
                assert!(
                    rows as i64 >= n,
                    "round {round}: {rows} rows, main file alone {n}"
                );
                format!("{n} of them in the main file")
            }
            Err(e) => format!("the main file alone unreadable ({e}): killed mid-checkpoint"),
        };
        println!(
            "round {round}: killed after +{delay_ms} ms with {rows} rows committed, {main_only}"
        );
        assert_consistent(&path);

        // Still a working store.
        store
            .append_messages(
                SESSION,
                &[Message::user(format!("after kill {round} 恢复"))],
            )
            .unwrap();
        assert_eq!(
            search_texts(&store, &format!("\"after kill {round}\"")),
            [format!("after kill {round} 恢复")]
        );
        // Remove the probe so the count stays a multiple of the batch for the next round.
        store
            .write(|tx| {
                tx.execute(
                    "DELETE FROM messages WHERE content = ?1",
                    [format!("after kill {round} 恢复")],
                )?;
                tx.execute(
                    "UPDATE sessions SET message_count = message_count - 1 WHERE id = ?1",
                    [SESSION],
                )?;
                Ok(())
            })
            .unwrap();
        expected_min = rows;
        drop(store);
    }
}

#[test]
fn wal_left_by_a_killed_writer_is_replayed_not_deleted() {
    let (dir, path) = new_db_with_session();
    let scratch = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let mut e = env("one_batch_then_sleep", &path);
    e.push((ENV_READY, ready.display().to_string()));
    let mut child = ChildGuard::spawn("wal_writer", dir.path(), &e);
    wait_for_file(&ready, &mut child);
    child.kill();

    let wal = wal_path(&path);
    assert!(
        std::fs::metadata(&wal).unwrap().len() > 0,
        "the killed writer left no WAL"
    );
    // The committed batch lives only in the WAL...
    assert_eq!(count_without_wal(&path, scratch.path()), Ok(0));
    // ...and opening the store replays it.
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.messages(SESSION).unwrap().len(), 50);
    assert_eq!(search_texts(&store, "walmsg7"), ["walmsg7 预写日志"]);
    drop(store);
    assert_consistent(&path);
    let store = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(store.messages(SESSION).unwrap().len(), 50);
}

/// Deterministic pseudo-random bytes (xorshift), so a failure can be reproduced.
fn garbage(len: usize, mut seed: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 24) as u8
        })
        .collect()
}

/// Both kinds of open fail with a message naming the file, and leave its bytes as they were.
fn assert_refused_untouched(path: &Path, what: &str) -> Vec<String> {
    let before = std::fs::read(path).unwrap();
    let mut messages = Vec::new();
    for read_only in [false, true] {
        let result = if read_only {
            SqliteStore::open_read_only(path)
        } else {
            SqliteStore::open(path)
        };
        let err = match result {
            Ok(_) => panic!("{what}: opened (read_only={read_only})"),
            Err(e) => e,
        };
        let msg = err.to_string();
        assert!(
            msg.contains(&path.display().to_string()),
            "{what} (read_only={read_only}): error does not name the file: {msg}"
        );
        assert_eq!(
            std::fs::read(path).unwrap(),
            before,
            "{what}: file changed by open (read_only={read_only})"
        );
        messages.push(msg);
    }
    messages
}

#[test]
fn corrupt_or_foreign_files_are_reported_and_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();

    // (a) A text file.
    let text = dir.path().join("notes.db");
    std::fs::write(&text, "my notes\nnot a database at all\n".repeat(50)).unwrap();
    for msg in assert_refused_untouched(&text, "text file") {
        assert!(msg.contains("not an SQLite database"), "{msg}");
    }

    // (b) Random bytes.
    let random = dir.path().join("random.db");
    std::fs::write(&random, garbage(64 * 1024, 0x9E37_79B9_7F4A_7C15)).unwrap();
    for msg in assert_refused_untouched(&random, "random bytes") {
        assert!(msg.contains("not an SQLite database"), "{msg}");
    }

    // (c) Our own database, everything after the 100-byte header overwritten.
    let corrupt = dir.path().join("corrupt.db");
    {
        let store = SqliteStore::open(&corrupt).unwrap();
        common::session(&store, "s");
        let msgs: Vec<Message> = (0..200)
            .map(|i| Message::user(format!("message {i} 用户配置")))
            .collect();
        store.append_messages("s", &msgs).unwrap();
    }
    assert!(
        !wal_path(&corrupt).exists(),
        "WAL not checkpointed on close"
    );
    let mut bytes = std::fs::read(&corrupt).unwrap();
    assert_eq!(&bytes[..16], b"SQLite format 3\0");
    let len = bytes.len();
    bytes[100..].copy_from_slice(&garbage(len - 100, 42));
    std::fs::write(&corrupt, &bytes).unwrap();
    for msg in assert_refused_untouched(&corrupt, "corrupted database") {
        assert!(msg.contains("corrupt"), "{msg}");
        assert!(msg.contains("untouched"), "{msg}");
        assert!(msg.contains(".recover"), "{msg}");
    }
    let err = SqliteStore::open(&corrupt).err().unwrap();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");

    // (d) Only the second half of the pages overwritten: the schema pages are intact, so
    // opening may succeed and the damage shows on the first read of a damaged page. That read
    // must fail with an error naming the file (not panic), and neither the open nor the failed
    // read may write to the file.
    let half = dir.path().join("half.db");
    {
        let store = SqliteStore::open(&half).unwrap();
        common::session(&store, "s");
        let msgs: Vec<Message> = (0..200)
            .map(|i| Message::user(format!("message {i} 用户配置")))
            .collect();
        store.append_messages("s", &msgs).unwrap();
    }
    let mut bytes = std::fs::read(&half).unwrap();
    let len = bytes.len();
    bytes[len / 2..].copy_from_slice(&garbage(len - len / 2, 7));
    std::fs::write(&half, &bytes).unwrap();
    match SqliteStore::open(&half) {
        Err(e) => assert!(matches!(e, StoreError::Corrupt { .. }), "{e:?}"),
        Ok(store) => {
            let err = store
                .messages("s")
                .expect_err("damaged pages read without an error");
            assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
            assert!(
                err.to_string().contains(&half.display().to_string()),
                "the error names the file: {err}"
            );
        }
    }
    assert_eq!(
        std::fs::read(&half).unwrap(),
        bytes,
        "half-damaged file changed"
    );
}
