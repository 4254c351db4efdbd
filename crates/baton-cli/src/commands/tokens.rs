//! `baton tokens FILE`: message count and tokens per role, estimated and exact.

use crate::commands::Failure;
use crate::commands::io::read_input;
use baton_core::formats::{Document, FormatName};
use baton_core::token_report::{Tally, TokenReport};
use baton_core::tokens::Encoding;
use baton_core::truncate::group_digits;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct TokensArgs {
    /// Conversation file (JSON, JSONL, records, Anthropic or ShareGPT; detected from the
    /// content). `-` reads standard input.
    pub file: PathBuf,

    /// Exact tokenizer to count with: o200k, cl100k, or rough (estimate only).
    #[arg(long, short, default_value = "o200k", value_parser = parse_encoding)]
    pub encoding: Encoding,

    /// Force the input format instead of detecting it: openai, json, object, jsonl, records,
    /// anthropic, sharegpt, or an agent-CLI transcript: claude-code, codex, gemini-cli.
    #[arg(long, short, value_parser = parse_format)]
    pub format: Option<FormatName>,

    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

fn parse_encoding(s: &str) -> Result<Encoding, String> {
    Encoding::parse(s).map_err(|e| e.to_string())
}

fn parse_format(s: &str) -> Result<FormatName, String> {
    FormatName::parse(s).map_err(|e| e.to_string())
}

pub fn run(args: &TokensArgs) -> Result<(), Failure> {
    let (_, doc) = read_input(Some(&args.file), args.format)?;
    let report = TokenReport::build(&doc.conversations, args.encoding.counter());
    let out = if args.json {
        render_json(args, &doc, &report)
    } else {
        render_table(args, &doc, &report)
    };
    out!("{out}");
    Ok(())
}

fn render_table(args: &TokensArgs, doc: &Document, report: &TokenReport) -> String {
    let exact_heading = if args.encoding == Encoding::Rough {
        "exact"
    } else {
        report.encoding
    };
    let mut out = format!(
        "{}: {}, {} conversation{}, {} messages\n\n",
        args.file.display(),
        doc.format_name(),
        group_digits(report.conversations),
        if report.conversations == 1 { "" } else { "s" },
        group_digits(doc.message_count()),
    );
    out += &format!(
        "{:<14}{:>10}{:>14}{:>16}\n",
        "role", "messages", "estimated", exact_heading
    );
    for (role, tally) in &report.roles {
        out += &row(role.as_str(), tally, args.encoding);
    }
    if report.tools.messages > 0 {
        out += &row("tool schemas", &report.tools, args.encoding);
    }
    out += &row("total", &report.total, args.encoding);
    out
}

fn row(label: &str, t: &Tally, encoding: Encoding) -> String {
    let exact = if encoding == Encoding::Rough {
        "-".to_string()
    } else {
        group_digits(t.exact)
    };
    format!(
        "{:<14}{:>10}{:>14}{:>16}\n",
        label,
        group_digits(t.messages),
        group_digits(t.estimated),
        exact
    )
}

fn render_json(args: &TokensArgs, doc: &Document, report: &TokenReport) -> String {
    let roles: serde_json::Map<String, serde_json::Value> = report
        .roles
        .iter()
        .map(|(r, t)| (r.as_str().to_string(), tally_json(t)))
        .collect();
    let value = serde_json::json!({
        "file": args.file.display().to_string(),
        "format": doc.format_name(),
        "encoding": report.encoding,
        "conversations": report.conversations,
        "roles": roles,
        "tools": tally_json(&report.tools),
        "total": tally_json(&report.total),
    });
    format!("{value:#}\n")
}

fn tally_json(t: &Tally) -> serde_json::Value {
    serde_json::json!({"messages": t.messages, "estimated": t.estimated, "exact": t.exact})
}
