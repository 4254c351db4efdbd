//! `baton sessions stats [--days N] [--source S] [--chart]`.

use super::table::{Column, Table, count, pairs, width};
use super::{chart, json_err, print_json, store_err};
use crate::commands::Failure;
use baton_core::pricing::format_usd;
use baton_store::session::format_utc_minutes;
use baton_store::{SessionStore, StatsQuery, UsageStats};
use clap::Args;

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Sessions started in the last N days.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=36_500))]
    pub days: u32,
    /// Only sessions of this source (cli, api_server, cron, ...).
    #[arg(long)]
    pub source: Option<String>,
    /// Also draw the tokens of each day as a bar chart.
    #[arg(long)]
    pub chart: bool,
}

pub fn run(
    store: &dyn SessionStore,
    json: bool,
    args: &StatsArgs,
    settings: &crate::commands::settings::Settings,
) -> Result<(), Failure> {
    let prices = crate::commands::prices::price_table(settings)?;
    let query = StatsQuery {
        source: args.source.clone(),
        ..StatsQuery::last_days(args.days)
    };
    let stats = store.stats(&query, &prices).map_err(store_err)?;
    if json {
        print_json(&serde_json::to_value(&stats).map_err(json_err)?);
        return Ok(());
    }
    let w = width();
    let scope = args
        .source
        .as_deref()
        .map_or_else(|| "all sources".to_string(), |s| format!("source {s}"));
    outln!("Usage in the last {} days ({scope})", stats.days);
    if stats.overview.sessions == 0 {
        outln!("no sessions started in the last {} days", stats.days);
        return Ok(());
    }
    outln!();
    for line in overview(&stats, w) {
        outln!("  {line}");
    }
    section("By model", models(&stats).render(w.saturating_sub(2)));
    section("By source", sources(&stats).render(w.saturating_sub(2)));
    if !stats.top_tools.is_empty() {
        section("Top tools", tools(&stats).render(w.saturating_sub(2)));
    }
    if args.chart {
        let series: Vec<(String, u64)> = stats
            .by_day
            .iter()
            .map(|d| (d.date.clone(), d.total_tokens))
            .collect();
        section(
            "Tokens per day (UTC)",
            chart::bars(&series, w.saturating_sub(2)),
        );
    }
    Ok(())
}

fn section(title: &str, lines: Vec<String>) {
    outln!();
    outln!("{title}");
    for line in lines {
        outln!("  {line}");
    }
}

fn overview(s: &UsageStats, width: usize) -> Vec<String> {
    let o = &s.overview;
    let cost = cost_cell(o.cost_usd, o.sessions_unknown_cost);
    let avg = o
        .avg_duration_secs
        .map_or_else(|| "-".to_string(), |secs| format!("{:.0} min", secs / 60.0));
    let range = match (o.first_started_at, o.last_started_at) {
        (Some(a), Some(b)) => format!("{} to {}", format_utc_minutes(a), format_utc_minutes(b)),
        _ => "-".to_string(),
    };
    let items = [
        ("sessions", count(o.sessions)),
        ("messages", count(o.messages)),
        ("tool calls", count(o.tool_calls)),
        ("user messages", count(o.user_messages)),
        ("assistant messages", count(o.assistant_messages)),
        ("tool results", count(o.tool_messages)),
        ("input tokens", count(o.input_tokens)),
        ("output tokens", count(o.output_tokens)),
        ("reasoning tokens", count(o.reasoning_tokens)),
        ("cache read tokens", count(o.cache_read_tokens)),
        ("cache write tokens", count(o.cache_write_tokens)),
        ("total tokens", count(o.total_tokens)),
        ("cost", cost),
        ("hours (ended)", format!("{:.1}", o.total_hours)),
        ("avg duration", avg),
    ];
    let mut lines = pairs(&items, width.saturating_sub(2));
    if let Some(reason) = &o.cost_unknown_reason {
        lines.push(format!("cost unknown for {reason}"));
    }
    lines.push(format!("sessions started {range} UTC"));
    lines.push(format!(
        "database size {:.1} MB",
        s.db_size_bytes as f64 / 1_048_576.0
    ));
    lines
}

/// A known cost, "unknown" when none is (never `$0.0000`), or the known part and how many
/// sessions it leaves out.
fn cost_cell(cost: Option<f64>, unknown: u64) -> String {
    match (cost, unknown) {
        (None, _) => "unknown".to_string(),
        (Some(c), 0) => format_usd(c),
        (Some(c), n) => format!("{} (+{} unknown)", format_usd(c), count(n)),
    }
}

fn models(s: &UsageStats) -> Table {
    let mut t = Table::new(
        vec![
            Column::left("model"),
            Column::right("sessions"),
            Column::right("tokens"),
            Column::right("tool calls"),
            Column::right("cost"),
        ],
        0,
    );
    for m in &s.by_model {
        t.push(vec![
            m.model.clone(),
            count(m.sessions),
            count(m.total_tokens),
            count(m.tool_calls),
            cost_cell(m.cost_usd, m.sessions_unknown_cost),
        ]);
    }
    t
}

fn sources(s: &UsageStats) -> Table {
    let mut t = Table::new(
        vec![
            Column::left("source"),
            Column::right("sessions"),
            Column::right("messages"),
            Column::right("tokens"),
            Column::right("cost"),
        ],
        0,
    );
    for x in &s.by_source {
        t.push(vec![
            x.source.clone(),
            count(x.sessions),
            count(x.messages),
            count(x.total_tokens),
            cost_cell(x.cost_usd, x.sessions_unknown_cost),
        ]);
    }
    t
}

fn tools(s: &UsageStats) -> Table {
    let mut t = Table::new(
        vec![
            Column::left("tool"),
            Column::right("uses"),
            Column::right("share"),
        ],
        0,
    );
    for x in &s.top_tools {
        t.push(vec![
            x.tool.clone(),
            count(x.count),
            format!("{:.1}%", x.percent),
        ]);
    }
    t
}
