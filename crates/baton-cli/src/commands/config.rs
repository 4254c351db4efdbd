//! `baton config show` and `baton config path`.

use crate::commands::Failure;
use crate::commands::settings::Settings;
use baton_config::Value;
use clap::{Args, Subcommand};

#[derive(Debug, Args)]
pub struct ConfigArgs {
    #[command(subcommand)]
    pub command: ConfigCommand,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// The effective configuration: every key, its value, and where it came from (default,
    /// file line, environment variable, or flag such as `--set KEY=VALUE`).
    Show {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// The configuration file's path ($BATON_HOME/config.toml, else ~/.baton/config.toml),
    /// whether or not it exists. Works even when the file is invalid.
    Path {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(args: &ConfigArgs, settings: &Settings) -> Result<(), Failure> {
    let config = &settings.config;
    match args.command {
        ConfigCommand::Path { json } => {
            if json {
                outln!(
                    "{:#}",
                    serde_json::json!({
                        "path": config.path.display().to_string(),
                        "exists": config.path.is_file(),
                    })
                );
            } else {
                outln!("{}", config.path.display());
            }
        }
        ConfigCommand::Show { json: true } => outln!("{:#}", config.to_json()),
        ConfigCommand::Show { json: false } => out!("{}", render(settings)),
    }
    Ok(())
}

fn render(settings: &Settings) -> String {
    let config = &settings.config;
    let mut out = format!(
        "# {} ({})\n",
        config.path.display(),
        if config.file_exists {
            "read"
        } else {
            "not found: built-in defaults"
        }
    );
    let entries = config.entries();
    let width = entries
        .iter()
        .map(|(k, ..)| k.rsplit_once('.').map_or(k.len(), |(_, key)| key.len()))
        .max()
        .unwrap_or(0);
    let shown: Vec<(String, String, String)> = entries
        .iter()
        .map(|(key, value, source)| {
            let (section, name) = key.rsplit_once('.').unwrap_or(("", key));
            let value = value
                .as_ref()
                .map_or_else(|| "(unset)".to_string(), Value::to_string);
            (
                section.to_string(),
                format!("{name:<width$} = {value}"),
                source.to_string(),
            )
        })
        .collect();
    let value_width = shown
        .iter()
        .map(|(_, v, _)| v.chars().count())
        .max()
        .unwrap_or(0);
    let mut section = String::new();
    for (s, assignment, source) in shown {
        if s != section {
            out.push_str(&format!("\n[{s}]\n"));
            section = s;
        }
        out.push_str(&format!("{assignment:<value_width$}  # {source}\n"));
    }
    for (model, p) in &config.pricing {
        out.push_str(&format!(
            "\n[pricing.{}]  # file, line {}\n",
            Value::Text(model.clone()),
            p.line
        ));
        for (name, usd) in [
            ("input", p.input),
            ("output", p.output),
            ("cache_read", p.cache_read),
            ("cache_write", p.cache_write),
        ] {
            if let Some(usd) = usd {
                out.push_str(&format!("{name} = {}\n", Value::Float(usd)));
            }
        }
    }
    out
}
