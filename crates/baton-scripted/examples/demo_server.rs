//! A scripted model on loopback for trying `baton chat` by hand (and recording the README's
//! screen): it runs a command when asked to check something, then answers in Markdown.
//!
//! `cargo run -p baton-scripted --example demo_server` prints the base URL to pass as
//! `baton chat --base-url URL --model scripted-model`.

#![allow(clippy::print_stdout)]

use baton_scripted::{Api, Reply, Script, ScriptedServer, Usage};
use serde_json::json;
use std::time::Duration;

fn main() -> std::io::Result<()> {
    let server = ScriptedServer::start_background(Script::responder(|request| {
        let usage = Usage {
            prompt: 4_000 + request.text().len() as u64 / 4,
            cached: 3_200,
            cache_write: 0,
            completion: 120,
        };
        let asked = request.last_user_text();
        if request.last_role() == "user" && asked.contains("test") {
            return Reply::tool_call(
                "terminal",
                json!({"command": "echo 'test result: ok. 42 passed'"}),
            )
            .with_usage(usage);
        }
        Reply::text(
            "The tests pass. To run them yourself:\n\n```sh\ncargo test --workspace\n```\n\n\
             **Next:** the `compress` benchmark.",
        )
        .with_usage(usage)
        .with_stream_interval(Duration::from_millis(15))
    }))?;
    server.simulate_prompt_cache(false);
    println!("{}", server.base_url(Api::ChatCompletions));
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}
