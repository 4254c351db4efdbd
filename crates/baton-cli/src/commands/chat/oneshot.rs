//! `baton chat -q "…"` and piped prompts: one turn per prompt in one session, without a
//! terminal. The answer streams to stdout; tool activity, notices and a final usage line go
//! to stderr, so `baton chat -q … > answer.txt` keeps only the answer. `--json` prints every
//! event as one JSON line on stdout instead.

use super::ChatArgs;
use super::launch::{Launch, agent_failure};
use super::printer::{Printer, usage_line};
use crate::commands::Failure;
use baton_agent::{AgentEvent, Interrupt, StopReason};
use std::io::IsTerminal;

pub fn run(
    args: &ChatArgs,
    launch: Launch,
    runtime: tokio::runtime::Runtime,
    interrupt: Interrupt,
) -> Result<(), Failure> {
    let query = args.query.clone();
    let mut agent = launch.first_agent(args)?;
    let mut printer = Printer::new(args.json, std::io::stdout().is_terminal());
    let outcome = runtime.block_on(async {
        let watcher = interrupt.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                watcher.raise();
            }
        });
        let mut sink = |event: AgentEvent| printer.show(&event);
        agent.resume_hygiene(&mut sink).await?;
        if let Some(query) = &query {
            return agent.run_turn(query, &interrupt, &mut sink).await.map(Some);
        }
        // One turn per line of standard input, in one session, until a turn does not end
        // with an answer (interrupt, error) or the input ends.
        use tokio::io::AsyncBufReadExt;
        let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
        let mut last = None;
        while let Ok(Some(line)) = lines.next_line().await {
            if line.trim().is_empty() {
                continue;
            }
            let outcome = agent.run_turn(line.trim(), &interrupt, &mut sink).await?;
            let answered = matches!(
                outcome.reason,
                StopReason::FinalAnswer | StopReason::IterationLimit
            );
            last = Some(outcome);
            if !answered {
                break;
            }
        }
        Ok(last)
    });
    let Some(outcome) = outcome.map_err(agent_failure)? else {
        return Err(Failure::BadInput(
            "no prompt: standard input was empty (pass -q \"…\" or pipe one prompt per line)"
                .into(),
        ));
    };
    if !args.json {
        if !printer.ended_with_newline {
            outln!();
        }
        errln!("{}", usage_line(agent.totals(), agent.session_id()));
        for record in agent.economics() {
            errln!("{}", record.render());
        }
    }
    match outcome.reason {
        StopReason::FinalAnswer | StopReason::IterationLimit => Ok(()),
        StopReason::Interrupted => Err(Failure::Interrupted(format!(
            "interrupted; the session is saved: baton chat --resume {} -q \"…\" continues it",
            agent.session_id()
        ))),
        // The error itself was shown as an event; this line says what is left.
        StopReason::Error if !args.json => Err(Failure::Other(format!(
            "the turn failed; the session is saved: baton chat --resume {} -q \"…\" continues it",
            agent.session_id()
        ))),
        StopReason::Error => Err(Failure::Other(
            outcome.error.unwrap_or_else(|| "the turn failed".into()),
        )),
    }
}
