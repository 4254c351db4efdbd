//! `baton compress --session ID`: compact a stored session into a continuation.
//!
//! This is what the agent loop does when its context fills: the newest session of the chain
//! is compacted with the same engine and settings as a file would be, the session ends with
//! reason `compression`, and a child session holding the compacted conversation continues the
//! chain (its title numbered: "Refactor auth #2"). The original messages stay stored.

use crate::commands::Failure;
use crate::commands::compress::{
    CompressArgs, ReportFormat, disabled, fallback_reason, json_report, text_report,
};
use crate::commands::compress_settings;
use crate::commands::io::{refuse_database_output, write_output};
use crate::commands::sessions::{db_path, open_for_write, resolve, store_err};
use crate::commands::settings::Settings;
use baton_core::compress::Outcome;
use baton_core::engine::{CompressRequest, EngineRegistry};
use baton_store::SessionStore;

pub fn run(args: &CompressArgs, settings: &Settings, session: &str) -> Result<(), Failure> {
    let runtime = crate::commands::runtime()?;
    let resolved = compress_settings::resolve(args, settings, &runtime)?;
    let path = db_path(args.db.as_deref())?;
    if !path.exists() {
        return Err(Failure::BadInput(format!(
            "no session database at {} (pass --db PATH)",
            path.display()
        )));
    }
    if let Some(out) = &args.output {
        refuse_database_output(out, &path)?;
    }
    let store = open_for_write(&path, args.migrate)?;
    let named = resolve(&store, session)?;
    // Only the newest session of a chain is live; compressing an older one would fork it.
    let tip = store.compression_tip(&named).map_err(store_err)?;
    if tip != named {
        errln!("note: {named} was already compressed; compressing its newest continuation {tip}");
    }
    let messages = store.messages(&tip).map_err(store_err)?;
    crate::commands::compress::refuse_orphans(&format!("session {tip}"), &messages)?;
    if let (Some(by), false) = (&resolved.disabled_by, args.force) {
        if args.report_format() == ReportFormat::Json {
            let mut report = json_report(&disabled(&messages, 0, by), messages.len());
            if let Some(obj) = report.as_object_mut() {
                obj.insert("settings".into(), compress_settings::json(&resolved));
                obj.insert("session".into(), tip.clone().into());
                obj.insert("continuation".into(), serde_json::Value::Null);
            }
            errln!("{report}");
        } else {
            errln!(
                "session {tip} unchanged: compression is disabled (compression.enabled = false, from {by}); --force compresses anyway"
            );
        }
        return Ok(());
    }
    let mut engine = EngineRegistry::with_builtin()
        .create(&resolved.engine, &resolved.compressor)
        .map_err(|e| Failure::BadInput(e.to_string()))?;
    let before = messages.len();
    // Handed over: the result's messages are moved out of the stored ones, not copied.
    let result = runtime.block_on(engine.compress(CompressRequest {
        messages: messages.into(),
        current_tokens: None,
        focus_topic: args.focus.as_deref(),
        force: args.force,
    }));
    let child = match &result.outcome {
        Outcome::NoOp { .. } | Outcome::Blocked { .. } => None,
        Outcome::Unavailable { reason } => {
            return Err(Failure::Other(format!(
                "session {tip} not compressed, the summarizer is unavailable: {reason}"
            )));
        }
        Outcome::Compressed | Outcome::PrunedOnly => Some(
            store
                .start_continuation(&tip, &result.messages)
                .map_err(store_err)?,
        ),
    };
    if let Some(out) = &args.output {
        let text: String = result
            .messages
            .iter()
            .map(|m| format!("{}\n", m.to_value()))
            .collect();
        write_output(Some(out), &text)?;
    }
    match args.report_format() {
        ReportFormat::Json => {
            let mut report = json_report(&result, before);
            if let Some(obj) = report.as_object_mut() {
                obj.insert("settings".into(), compress_settings::json(&resolved));
                obj.insert("session".into(), tip.clone().into());
                obj.insert("continuation".into(), child.clone().into());
            }
            errln!("{report}");
        }
        ReportFormat::Text => {
            if let Some(reason) = fallback_reason(&result) {
                errln!("{reason}");
            }
            for line in compress_settings::text_lines(&resolved) {
                errln!("{line}");
            }
            errln!("{}", text_report(&result, before));
            match &child {
                Some(c) => errln!("session {tip} ended (compression); continues as {c}"),
                None => errln!("session {tip} unchanged"),
            }
        }
    }
    Ok(())
}
