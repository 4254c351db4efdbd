//! What the status line says: model, context used of the window (with a bar), the last
//! call's cache hit rate, the session's cost, the lineage's compactions, and what the agent
//! is doing now. Fitted to the terminal width by dropping the least useful parts first.

use baton_core::pricing::format_usd;
use std::time::Instant;

/// Cells of the context bar.
const BAR_CELLS: usize = 10;

#[derive(Debug, Clone, PartialEq)]
pub enum Activity {
    Idle,
    Thinking,
    Answering,
    RunningTool(String),
    Compacting,
}

#[derive(Debug, Clone)]
pub struct StatusLine {
    pub model: String,
    /// Tokens in context now: the provider's count after a call, the estimate before one.
    pub context_tokens: u64,
    pub context_estimated: bool,
    pub window: u64,
    /// Share of the last call's prompt read from the cache, when there was a call.
    pub cache_hit: Option<f64>,
    pub cost_usd: f64,
    /// Calls whose model has no price (the cost is then a lower bound).
    pub unpriced_calls: u32,
    pub compactions: u32,
    pub activity: Activity,
    pub since: Instant,
    pub color: bool,
}

impl StatusLine {
    pub fn new(model: &str, window: u64, color: bool) -> Self {
        StatusLine {
            model: model.to_string(),
            context_tokens: 0,
            context_estimated: true,
            window,
            cache_hit: None,
            cost_usd: 0.0,
            unpriced_calls: 0,
            compactions: 0,
            activity: Activity::Idle,
            since: Instant::now(),
            color,
        }
    }

    pub fn set_activity(&mut self, activity: Activity) {
        if activity != self.activity {
            self.activity = activity;
            self.since = Instant::now();
        }
    }

    /// Percent of the window in use, capped at 100.
    pub fn percent(&self) -> u64 {
        if self.window == 0 {
            return 0;
        }
        (self.context_tokens.saturating_mul(100) / self.window).min(100)
    }

    /// The line for a terminal `cols` wide: parts are dropped from the least useful end until
    /// it fits, then the rest is cut.
    pub fn render(&self, cols: usize) -> String {
        let mut parts = vec![
            self.model.clone(),
            self.context_part(),
            self.cache_part(),
            self.cost_part(),
            self.compactions_part(),
        ];
        let activity = self.activity_part();
        let fits = |parts: &[String], activity: &str| {
            let line = join(parts, activity);
            line.chars().count() < cols
        };
        // Drop order: compactions, cache, cost, activity detail, context bar.
        for drop in [4usize, 2, 3] {
            if fits(&parts, &activity) {
                break;
            }
            parts[drop].clear();
        }
        let mut line = join(&parts, &activity);
        if line.chars().count() >= cols {
            line = line.chars().take(cols.saturating_sub(1)).collect();
        }
        if !self.color {
            return line;
        }
        let pad = cols.saturating_sub(line.chars().count());
        format!("\x1b[7m{line}{}\x1b[0m", " ".repeat(pad))
    }

    fn context_part(&self) -> String {
        let filled = (self.percent() as usize * BAR_CELLS)
            .div_ceil(100)
            .min(BAR_CELLS);
        let bar: String = "█".repeat(filled) + &"░".repeat(BAR_CELLS - filled);
        format!(
            "ctx {}{}/{} {bar} {}%",
            if self.context_estimated { "~" } else { "" },
            compact_count(self.context_tokens),
            compact_count(self.window),
            self.percent()
        )
    }

    fn cache_part(&self) -> String {
        match self.cache_hit {
            Some(rate) => format!("cache {:.0}%", rate * 100.0),
            None => "cache –".into(),
        }
    }

    /// The cost; `+` when some calls could not be priced, `no price` when none could.
    fn cost_part(&self) -> String {
        if self.unpriced_calls > 0 && self.cost_usd == 0.0 {
            return "no price".into();
        }
        let plus = if self.unpriced_calls > 0 { "+" } else { "" };
        format!("{}{plus}", format_usd(self.cost_usd))
    }

    fn compactions_part(&self) -> String {
        match self.compactions {
            1 => "1 compaction".into(),
            n => format!("{n} compactions"),
        }
    }

    fn activity_part(&self) -> String {
        let seconds = self.since.elapsed().as_secs();
        let elapsed = if seconds >= 2 {
            format!(" {seconds}s")
        } else {
            String::new()
        };
        match &self.activity {
            Activity::Idle => String::new(),
            Activity::Thinking => format!("thinking…{elapsed}"),
            Activity::Answering => format!("answering…{elapsed}"),
            Activity::RunningTool(what) => format!("running {what}{elapsed}"),
            Activity::Compacting => format!("compacting…{elapsed}"),
        }
    }
}

fn join(parts: &[String], activity: &str) -> String {
    let mut shown: Vec<&str> = parts
        .iter()
        .map(String::as_str)
        .filter(|p| !p.is_empty())
        .collect();
    if !activity.is_empty() {
        shown.push(activity);
    }
    format!(" {}", shown.join(" │ "))
}

/// 950, 12.3k, 200k, 1.2M.
pub fn compact_count(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=99_999 => trim_zero(format!("{:.1}k", n as f64 / 1_000.0)),
        100_000..=999_999 => format!("{}k", n / 1_000),
        _ => trim_zero(format!("{:.1}M", n as f64 / 1_000_000.0)),
    }
}

fn trim_zero(s: String) -> String {
    s.replace(".0k", "k").replace(".0M", "M")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn status() -> StatusLine {
        let mut s = StatusLine::new("gpt-5-mini", 200_000, false);
        s.context_tokens = 84_000;
        s.context_estimated = false;
        s.cache_hit = Some(0.873);
        s.cost_usd = 0.0123;
        s.compactions = 2;
        s
    }

    #[test]
    fn a_wide_line_shows_every_part() {
        let line = status().render(120);
        assert_eq!(
            line,
            " gpt-5-mini │ ctx 84k/200k █████░░░░░ 42% │ cache 87% │ $0.0123 │ 2 compactions"
        );
    }

    #[test]
    fn a_narrow_line_drops_compactions_then_cache_and_never_overflows() {
        let s = status();
        let line = s.render(60);
        assert!(!line.contains("compactions"), "{line}");
        assert!(line.contains("42%"), "{line}");
        for cols in [10, 20, 40, 60, 80] {
            assert!(s.render(cols).chars().count() < cols, "{cols}");
        }
    }

    #[test]
    fn the_estimate_before_any_call_is_marked_and_activity_is_shown() {
        let mut s = StatusLine::new("m", 8_000, false);
        s.context_tokens = 1_500;
        s.set_activity(Activity::RunningTool("terminal".into()));
        let line = s.render(120);
        assert!(line.contains("ctx ~1.5k/8k"), "{line}");
        assert!(line.contains("cache –"), "{line}");
        assert!(line.contains("running terminal"), "{line}");
    }

    #[test]
    fn color_pads_to_the_full_width_in_reverse_video() {
        let mut s = status();
        s.color = true;
        let line = s.render(100);
        assert!(line.starts_with("\x1b[7m") && line.ends_with("\x1b[0m"));
        let visible = line
            .trim_start_matches("\x1b[7m")
            .trim_end_matches("\x1b[0m");
        assert_eq!(visible.chars().count(), 100);
    }
}
