//! Plain-text tables and number formatting shared by the `sessions` subcommands, sized to the
//! terminal width.

use baton_core::truncate::group_digits;

/// Terminal width from `COLUMNS` (set by most shells), else 100. Narrower than 40 is taken as
/// a mistake and ignored.
pub fn width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse().ok())
        .filter(|w: &usize| *w >= 40)
        .unwrap_or(100)
}

/// `text` on one line, cut to `max` characters with an ellipsis.
pub fn fit(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

/// A count with digit grouping; negative (damaged) counters show as 0.
pub fn count(n: impl TryInto<usize>) -> String {
    group_digits(n.try_into().unwrap_or(0))
}

/// A column of a [`Table`].
pub struct Column {
    pub header: &'static str,
    pub right: bool,
}

impl Column {
    pub fn left(header: &'static str) -> Self {
        Column {
            header,
            right: false,
        }
    }

    pub fn right(header: &'static str) -> Self {
        Column {
            header,
            right: true,
        }
    }
}

/// A table whose `flex` column shrinks (its cells cut with an ellipsis) so every line fits the
/// width; the other columns keep their natural width.
pub struct Table {
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<String>>,
    pub flex: usize,
}

const GAP: &str = "  ";
const MIN_FLEX: usize = 6;

impl Table {
    pub fn new(columns: Vec<Column>, flex: usize) -> Self {
        Table {
            columns,
            rows: Vec::new(),
            flex,
        }
    }

    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    /// The header and rows, each at most `width` characters when the fixed columns allow it.
    pub fn render(&self, width: usize) -> Vec<String> {
        let mut widths: Vec<usize> = self
            .columns
            .iter()
            .map(|c| c.header.chars().count())
            .collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let fixed: usize = widths
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != self.flex)
            .map(|(_, w)| w)
            .sum::<usize>()
            + GAP.len() * self.columns.len().saturating_sub(1);
        if let Some(w) = widths.get_mut(self.flex) {
            *w = (*w).min(width.saturating_sub(fixed).max(MIN_FLEX));
        }
        let header: Vec<String> = self.columns.iter().map(|c| c.header.to_string()).collect();
        std::iter::once(&header)
            .chain(&self.rows)
            .map(|row| self.line(row, &widths))
            .collect()
    }

    fn line(&self, row: &[String], widths: &[usize]) -> String {
        let last = self.columns.len().saturating_sub(1);
        let cells: Vec<String> = self
            .columns
            .iter()
            .zip(widths)
            .enumerate()
            .map(|(i, (col, &w))| {
                let text = row.get(i).map(String::as_str).unwrap_or("");
                let text = fit(text, w);
                if col.right {
                    format!("{text:>w$}")
                } else if i == last {
                    text
                } else {
                    format!("{text:<w$}")
                }
            })
            .collect();
        cells.join(GAP).trim_end().to_string()
    }
}

/// Label/value pairs laid out in as many columns as fit the width.
pub fn pairs(items: &[(&str, String)], width: usize) -> Vec<String> {
    let label_w = items
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0);
    let value_w = items
        .iter()
        .map(|(_, v)| v.chars().count())
        .max()
        .unwrap_or(0);
    let cell = label_w + 1 + value_w;
    let per_line = ((width + 4) / (cell + 4)).max(1);
    items
        .chunks(per_line)
        .map(|chunk| {
            chunk
                .iter()
                .map(|(l, v)| format!("{l:<label_w$} {v:>value_w$}"))
                .collect::<Vec<_>>()
                .join("    ")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flex_column_shrinks_to_fit_the_width() {
        let mut t = Table::new(vec![Column::left("name"), Column::right("tokens")], 0);
        t.push(vec!["a-very-long-model-name-indeed".into(), "1,234".into()]);
        let lines = t.render(20);
        assert!(lines.iter().all(|l| l.chars().count() <= 20), "{lines:?}");
        assert!(
            lines[1].contains('…') && lines[1].ends_with("1,234"),
            "{lines:?}"
        );
        let wide = t.render(100);
        assert!(wide[1].starts_with("a-very-long-model-name-indeed"));
    }

    #[test]
    fn pairs_wrap_to_the_width() {
        let items = [
            ("a", "1".to_string()),
            ("bb", "22".to_string()),
            ("c", "3".into()),
        ];
        assert_eq!(pairs(&items, 14).len(), 2);
        assert_eq!(pairs(&items, 200).len(), 1);
        assert_eq!(pairs(&items, 1).len(), 3);
    }

    #[test]
    fn money_and_counts() {
        assert_eq!(count(-3i64), "0");
        assert_eq!(count(1234i64), "1,234");
    }
}
