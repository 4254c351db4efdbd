//! Session rows and the values used to create and list them.

use crate::rng;
use serde::{Deserialize, Serialize};
use std::time::{SystemTime, UNIX_EPOCH};

/// One row of `sessions`, the fields this crate reads and writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub id: String,
    pub source: String,
    pub user_id: Option<String>,
    pub model: Option<String>,
    pub system_prompt: Option<String>,
    pub parent_session_id: Option<String>,
    /// Unix seconds.
    pub started_at: f64,
    pub ended_at: Option<f64>,
    pub end_reason: Option<String>,
    pub message_count: i64,
    pub tool_call_count: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_read_tokens: i64,
    pub cache_write_tokens: i64,
    pub reasoning_tokens: i64,
    pub estimated_cost_usd: Option<f64>,
    pub title: Option<String>,
    pub api_call_count: i64,
}

/// What `create_session` needs. `id: None` generates one in the reference format.
#[derive(Debug, Clone, Default)]
pub struct NewSession {
    pub id: Option<String>,
    /// Platform tag: `cli`, `tui`, `api_server`, `cron`, `subagent`, ...
    pub source: String,
    pub model: Option<String>,
    pub system_prompt: Option<String>,
    pub parent_session_id: Option<String>,
    /// Start time (Unix seconds); `None` = now. Imports keep the original session's time.
    pub started_at: Option<f64>,
}

impl NewSession {
    pub fn new(source: impl Into<String>) -> Self {
        NewSession {
            source: source.into(),
            ..NewSession::default()
        }
    }
}

/// Why a session ended. Free-form in the database; these are the reasons with meaning here.
pub mod end_reason {
    /// Ended because the context was compressed into a child session.
    pub const COMPRESSION: &str = "compression";
    /// Ended by a branch; the child is a new line of work.
    pub const BRANCHED: &str = "branched";
    pub const NEW_SESSION: &str = "new_session";
    pub const CLI_CLOSE: &str = "cli_close";
    /// A finished transcript imported from another tool (`baton sessions import`).
    pub const IMPORTED: &str = "imported";
}

/// Which sessions `list_sessions` returns.
#[derive(Debug, Clone)]
pub struct SessionFilter {
    pub source: Option<String>,
    pub limit: usize,
    pub offset: usize,
    /// Also list compression children and subagents, and do not project chains onto their tip.
    pub include_children: bool,
}

impl Default for SessionFilter {
    fn default() -> Self {
        SessionFilter {
            source: None,
            limit: 20,
            offset: 0,
            include_children: false,
        }
    }
}

/// A row of a listing. For a compression chain, `session` shows the chain's tip (id, title,
/// counts, end) with the root's `started_at`, and `lineage_root_id` names the root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListedSession {
    #[serde(flatten)]
    pub session: Session,
    pub lineage_root_id: Option<String>,
    /// When anything last happened in the session (or chain): its newest message, its end, or
    /// its start, whichever is latest (Unix seconds).
    #[serde(default)]
    pub last_active: f64,
    /// The first user message of the session (or chain), on one line, cut to
    /// [`PREVIEW_CHARS`] characters with `...` when longer; empty when there is none.
    #[serde(default)]
    pub preview: String,
}

/// Characters of a listing's preview (the reference design's 60).
pub const PREVIEW_CHARS: usize = 60;

/// Current time as Unix seconds.
pub fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// A new session id: `YYYYmmdd_HHMMSS_xxxxxx` (six hex digits), as the reference makes them.
/// The timestamp is UTC (the reference uses local time; the format is the same).
pub fn new_session_id() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!(
        "{}_{:06x}",
        format_utc_compact(secs),
        rng::next_u64() & 0xff_ffff
    )
}

/// `YYYYmmdd_HHMMSS` for Unix seconds, UTC.
pub(crate) fn format_utc_compact(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}{m:02}{d:02}_{:02}{:02}{:02}",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// `YYYY-MM-DD HH:MM` (UTC) for Unix seconds, for people reading a listing.
pub fn format_utc_minutes(secs: f64) -> String {
    let secs = if secs.is_finite() && secs > 0.0 {
        secs as u64
    } else {
        0
    };
    let c = format_utc_compact(secs);
    format!(
        "{}-{}-{} {}:{}",
        &c[0..4],
        &c[4..6],
        &c[6..8],
        &c[9..11],
        &c[11..13]
    )
}

/// Unix seconds of an RFC 3339 timestamp (`2026-02-10T21:11:56.906Z`, `…+09:00`), as agent
/// transcripts write them; `None` for anything else.
pub fn parse_rfc3339(text: &str) -> Option<f64> {
    let b = text.trim().as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = std::str::from_utf8(b.get(r)?).ok()?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut rest = &b[19..];
    let mut fraction = 0.0;
    if let Some((b'.', tail)) = rest.split_first() {
        let digits = tail.iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        let text = std::str::from_utf8(&tail[..digits]).ok()?;
        fraction = format!("0.{text}").parse().ok()?;
        rest = &tail[digits..];
    }
    let offset = match rest {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let hh = num_of(&[*h1, *h2])?;
            let mm = num_of(&[*m1, *m2])?;
            let secs = hh * 3600 + mm * 60;
            if *sign == b'+' { secs } else { -secs }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month as u32, day as u32);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset;
    Some(secs as f64 + fraction)
}

fn num_of(digits: &[u8]) -> Option<i64> {
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// (year, month, day) to days since 1970-01-01, proleptic Gregorian (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(format_utc_compact(0), "19700101_000000");
        // 2026-05-15 14:30:00 UTC
        assert_eq!(format_utc_compact(1_778_855_400), "20260515_143000");
        // leap day 2024-02-29 23:59:59 UTC
        assert_eq!(format_utc_compact(1_709_251_199), "20240229_235959");
        assert_eq!(format_utc_minutes(1_778_855_400.9), "2026-05-15 14:30");
        assert_eq!(format_utc_minutes(-5.0), "1970-01-01 00:00");
    }

    #[test]
    fn rfc3339_timestamps_parse_to_unix_seconds() {
        assert_eq!(parse_rfc3339("2026-05-15T14:30:00Z"), Some(1_778_855_400.0));
        assert_eq!(parse_rfc3339("2024-02-29T23:59:59Z"), Some(1_709_251_199.0));
        assert_eq!(
            parse_rfc3339("2026-05-15T23:30:00+09:00"),
            Some(1_778_855_400.0)
        );
        assert_eq!(
            parse_rfc3339("2026-05-15T09:30:00-05:00"),
            Some(1_778_855_400.0)
        );
        let t = parse_rfc3339("2026-02-10T21:11:56.906Z").unwrap_or_default();
        assert!((t - 1_770_757_916.906).abs() < 1e-6, "{t}");
        for bad in [
            "",
            "2026-05-15",
            "2026-13-01T00:00:00Z",
            "2026-05-15T14:30:00",
            "yesterday",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
        // The inverse of the formatter over a range of days.
        for day in (0i64..40_000).step_by(37) {
            let secs = day * 86_400 + 3_723;
            let c = format_utc_compact(secs as u64);
            let text = format!(
                "{}-{}-{}T{}:{}:{}Z",
                &c[0..4],
                &c[4..6],
                &c[6..8],
                &c[9..11],
                &c[11..13],
                &c[13..15]
            );
            assert_eq!(parse_rfc3339(&text), Some(secs as f64), "{text}");
        }
    }

    #[test]
    fn session_ids_have_the_reference_shape() {
        let id = new_session_id();
        let parts: Vec<&str> = id.split('_').collect();
        assert_eq!(parts.len(), 3, "{id}");
        assert_eq!(parts[0].len(), 8);
        assert_eq!(parts[1].len(), 6);
        assert_eq!(parts[2].len(), 6);
        assert!(parts[2].chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(new_session_id(), new_session_id());
    }
}
