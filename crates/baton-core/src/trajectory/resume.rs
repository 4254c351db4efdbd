//! Picking up an interrupted run where it stopped.
//!
//! The output is the only state: every record is written as one whole line, so the number of
//! complete lines says how many records are done. A line cut short by a crash (a kill, not a
//! Ctrl-C, which never leaves one) is removed first. The input is then skipped record by
//! record until that many output lines are accounted for; with `--on-error skip` a malformed
//! record produced no line, so skipping re-checks each record the same way the run did.

use crate::trajectory::pipeline::OnError;
use crate::trajectory::record::Record;
use crate::trajectory::source::{LineSource, RecordSource};
use std::fs::OpenOptions;
use std::io::{self, BufRead, Read, Seek, SeekFrom};
use std::path::Path;

/// Where to continue in the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResumePoint {
    /// Raw input lines to skip (blank ones included): the pipeline starts at line
    /// `lines_to_skip + 1`.
    pub lines_to_skip: u64,
    /// Non-blank records among them: the metrics file keeps exactly this many rows.
    pub records_done: u64,
    /// Bytes of input skipped (for progress display).
    pub bytes_skipped: u64,
}

/// Removes a trailing partial line from `path` and returns the number of complete lines.
/// A missing file counts as empty. Reads the file in fixed-size chunks.
pub fn trim_to_complete_lines(path: &Path) -> io::Result<u64> {
    let mut file = match OpenOptions::new().read(true).write(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let (lines, end_of_last_line) = scan_lines(&mut file, u64::MAX)?;
    if file.metadata()?.len() != end_of_last_line {
        file.set_len(end_of_last_line)?;
        file.sync_all()?;
    }
    Ok(lines)
}

/// Keeps only the first `keep` complete lines of `path` (and drops a partial one); returns how
/// many lines it now holds, which is less than `keep` when the file was shorter.
pub fn truncate_to_lines(path: &Path, keep: u64) -> io::Result<u64> {
    let mut file = match OpenOptions::new().read(true).write(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let (lines, end) = scan_lines(&mut file, keep)?;
    if file.metadata()?.len() != end {
        file.set_len(end)?;
        file.sync_all()?;
    }
    Ok(lines)
}

/// Counts newline-terminated lines, stopping after `limit`; returns the count and the byte
/// offset just past the last counted newline.
fn scan_lines(file: &mut std::fs::File, limit: u64) -> io::Result<(u64, u64)> {
    file.seek(SeekFrom::Start(0))?;
    let mut buf = vec![0u8; 1 << 16];
    let (mut lines, mut offset, mut end) = (0u64, 0u64, 0u64);
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok((lines, end));
        }
        for pos in memchr::memchr_iter(b'\n', &buf[..n]) {
            if lines == limit {
                return Ok((lines, end));
            }
            lines += 1;
            end = offset + pos as u64 + 1;
        }
        if lines == limit {
            return Ok((lines, end));
        }
        offset += n as u64;
    }
}

/// Reads `input` until `output_lines` output lines are accounted for, under the same rules the
/// pipeline writes by: a blank line writes nothing; a record writes one line unless it is
/// malformed and `on_error` is `skip`. Fails when the input has fewer records than that (the
/// output does not come from this input, or the options changed).
pub fn find_resume_point<R: BufRead>(
    input: R,
    output_lines: u64,
    on_error: OnError,
) -> io::Result<ResumePoint> {
    find_resume_point_in(LineSource::new(input), output_lines, on_error)
}

/// [`find_resume_point`] over any [`RecordSource`]; for a JSON array, `lines_to_skip` counts
/// elements.
pub fn find_resume_point_in<S: RecordSource>(
    mut input: S,
    output_lines: u64,
    on_error: OnError,
) -> io::Result<ResumePoint> {
    let mut point = ResumePoint {
        lines_to_skip: 0,
        records_done: 0,
        bytes_skipped: 0,
    };
    let mut written = 0u64;
    while written < output_lines {
        let Some(item) = input.next_item()? else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the output already holds {output_lines} records but the input only accounts for {written}; it was not produced from this input with these options"
                ),
            ));
        };
        point.lines_to_skip = item.number;
        point.bytes_skipped += item.input_bytes;
        point.records_done += 1;
        let writes = on_error != OnError::Skip || Record::parse(&item.bytes).is_ok();
        written += u64::from(writes);
    }
    Ok(point)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_last_line_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.jsonl");
        std::fs::write(&p, "a\nb\n{\"half").unwrap();
        assert_eq!(trim_to_complete_lines(&p).unwrap(), 2);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a\nb\n");
        assert_eq!(trim_to_complete_lines(&dir.path().join("none")).unwrap(), 0);
    }

    #[test]
    fn truncation_keeps_the_first_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.jsonl");
        std::fs::write(&p, "1\n2\n3\n4").unwrap();
        assert_eq!(truncate_to_lines(&p, 2).unwrap(), 2);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "1\n2\n");
        assert_eq!(truncate_to_lines(&p, 5).unwrap(), 2);
    }

    #[test]
    fn skip_mode_does_not_count_malformed_records_as_written() {
        let good = r#"{"messages":[{"role":"user","content":"x"}]}"#;
        let input = format!("{good}\nnot json\n\n{good}\n{good}\n");
        let p = find_resume_point(input.as_bytes(), 2, OnError::Skip).unwrap();
        assert_eq!((p.lines_to_skip, p.records_done), (4, 3));
        let p = find_resume_point(input.as_bytes(), 2, OnError::Copy).unwrap();
        assert_eq!((p.lines_to_skip, p.records_done), (2, 2));
        assert_eq!(
            p.bytes_skipped as usize,
            good.len() + 1 + "not json\n".len()
        );
        assert!(find_resume_point(input.as_bytes(), 9, OnError::Copy).is_err());
    }
}
