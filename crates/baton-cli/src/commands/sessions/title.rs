//! `baton sessions title ID_OR_TITLE NEW_TITLE`: set, change or clear a session's title.

use super::db::Db;
use super::{print_json, resolve, store_err};
use crate::commands::Failure;
use clap::Args;
use serde_json::json;

#[derive(Debug, Args)]
pub struct TitleArgs {
    /// A session id, its current title, or a unique id prefix.
    pub id: String,
    /// The new title (at most 100 characters; unique: a title another session or chain uses,
    /// plain or numbered, is refused). An empty string clears the title.
    pub title: String,
    /// Allow migrating a database of an older schema (e.g. the reference design's) first.
    #[arg(long)]
    pub migrate: bool,
}

pub(crate) fn run(db: Db<'_>, json: bool, args: &TitleArgs) -> Result<(), Failure> {
    // Too long is refused before the database is even opened for writing.
    baton_store::clean_title(&args.title).map_err(store_err)?;
    let store = db.write(args.migrate)?;
    let id = resolve(&*store, &args.id)?;
    let titled = store.retitle_chain(&id, &args.title).map_err(store_err)?;
    if json {
        let rows: Vec<_> = titled
            .iter()
            .map(|(id, title)| json!({ "id": id, "title": title }))
            .collect();
        print_json(&json!({ "titled": rows }));
        return Ok(());
    }
    for (id, title) in &titled {
        match title {
            Some(t) => outln!("{id}  {t}"),
            None => outln!("{id}  (title cleared)"),
        }
    }
    Ok(())
}
