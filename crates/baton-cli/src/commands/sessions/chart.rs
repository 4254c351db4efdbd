//! A terminal bar chart of a daily series: one line per day, a horizontal bar drawn with
//! eighth-block characters so small differences stay visible, scaled to the terminal width.

use crate::commands::sessions::table::count;

/// Partial blocks, one to seven eighths of a cell.
const EIGHTHS: [char; 7] = ['▏', '▎', '▍', '▌', '▋', '▊', '▉'];
const FULL: char = '█';
/// Bars never get narrower than this, whatever the width says.
const MIN_BAR: usize = 10;

/// `label │bar value` lines. Every label is shown, including zero days (an empty bar), so
/// gaps in activity are visible. The largest value fills the bar area.
pub fn bars(series: &[(String, u64)], width: usize) -> Vec<String> {
    let label_w = series
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0);
    let values: Vec<String> = series.iter().map(|(_, v)| count(*v)).collect();
    let value_w = values.iter().map(|v| v.chars().count()).max().unwrap_or(1);
    // label, " │", bar, " ", value
    let bar_w = width.saturating_sub(label_w + 2 + 1 + value_w).max(MIN_BAR);
    let max = series.iter().map(|(_, v)| *v).max().unwrap_or(0);
    series
        .iter()
        .zip(values)
        .map(|((label, v), shown)| {
            let bar = bar(*v, max, bar_w);
            format!("{label:<label_w$} │{bar:<bar_w$} {shown:>value_w$}")
        })
        .collect()
}

/// A bar of `value / max` of `cells` cells, in eighths; a non-zero value is at least one
/// eighth so it never looks like a zero.
fn bar(value: u64, max: u64, cells: usize) -> String {
    if value == 0 || max == 0 {
        return String::new();
    }
    let eighths_total = (cells as u128) * 8;
    let eighths = ((value as u128 * eighths_total) / max as u128).max(1);
    let full = (eighths / 8) as usize;
    let rest = (eighths % 8) as usize;
    let mut s: String = std::iter::repeat_n(FULL, full).collect();
    if rest > 0 {
        s.push(EIGHTHS[rest - 1]);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(values: &[u64]) -> Vec<(String, u64)> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("2026-05-{:02}", i + 1), *v))
            .collect()
    }

    #[test]
    fn the_largest_value_fills_the_width_and_zero_days_are_empty() {
        let lines = bars(&series(&[0, 1000, 500, 1]), 40);
        assert_eq!(lines.len(), 4);
        assert!(lines.iter().all(|l| l.chars().count() == 40), "{lines:#?}");
        let blocks = |l: &str| l.chars().filter(|c| *c == FULL).count();
        let bar_w = 40 - 10 - 2 - 1 - 5;
        assert_eq!(blocks(&lines[1]), bar_w);
        assert_eq!(blocks(&lines[2]), bar_w / 2);
        assert!(lines[0].starts_with("2026-05-01 │ ") && lines[0].ends_with(" 0"));
        assert!(!lines[0].contains(FULL) && !lines[0].contains('▏'));
        // Tiny but non-zero values still show.
        assert!(lines[3].contains('▏'), "{}", lines[3]);
    }

    #[test]
    fn fractions_use_eighth_blocks() {
        assert_eq!(bar(3, 16, 2), "▍"); // 3/16 of 16 eighths = 3 eighths
        assert_eq!(bar(9, 16, 2), "█▏");
        assert_eq!(bar(16, 16, 2), "██");
        assert_eq!(bar(0, 0, 5), "");
    }

    #[test]
    fn narrow_terminals_keep_a_minimum_bar() {
        let lines = bars(&series(&[5, 10]), 5);
        assert_eq!(lines[1].chars().filter(|c| *c == FULL).count(), MIN_BAR);
    }
}
