//! Finding sessions on PostgreSQL: the listing (a compression chain shown once, as its tip
//! with the root's start and preview) and resolving an id, title or id prefix, with the
//! SQLite store's rules (`baton_store::lineage`, `baton_store::resolve`).

use crate::lineage::{self, SESSION_COLUMNS, session_from_row};
use crate::store::PgStore;
use baton_store::resolve::{MIN_ID_PREFIX, TitleMatch, choose_prefix, choose_tip};
use baton_store::title::{clean_title, escape_like};
use baton_store::{ListedSession, Result, SessionFilter};

impl PgStore {
    /// [`baton_store::SessionStore::list_sessions`].
    pub(crate) fn listing(&self, filter: &SessionFilter) -> Result<Vec<ListedSession>> {
        let filter = filter.clone();
        self.read(move |client| async move {
            let mut clauses = Vec::new();
            if !filter.include_children {
                clauses.push(baton_store::lineage::ROOTS_AND_BRANCHES_SQL);
            }
            if filter.source.is_some() {
                clauses.push("s.source = $1");
            }
            let where_sql = if clauses.is_empty() {
                String::new()
            } else {
                format!("WHERE {}", clauses.join(" AND "))
            };
            let columns = SESSION_COLUMNS
                .split(", ")
                .map(|c| format!("s.{}", c.trim()))
                .collect::<Vec<_>>()
                .join(", ");
            let sql = format!(
                "SELECT {columns} FROM sessions s {where_sql} \
                 ORDER BY s.started_at DESC, s.id DESC LIMIT {} OFFSET {}",
                filter.limit, filter.offset
            );
            let rows = match &filter.source {
                Some(source) => client.query(sql.as_str(), &[source]).await?,
                None => client.query(sql.as_str(), &[]).await?,
            };
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                let session = session_from_row(&row);
                let (session, root) =
                    lineage::project_tip(&**client, session, filter.include_children).await?;
                let first = root.clone().unwrap_or_else(|| session.id.clone());
                let contents: Vec<String> = client
                    .query(
                        "SELECT content FROM messages WHERE session_id = $1 AND role = 'user' \
                         AND content IS NOT NULL AND btrim(content) <> '' \
                         ORDER BY timestamp, id LIMIT 20",
                        &[&first],
                    )
                    .await?
                    .iter()
                    .map(|r| r.get(0))
                    .collect();
                let newest: Option<f64> = client
                    .query_one(
                        "SELECT MAX(timestamp) FROM messages WHERE session_id = $1",
                        &[&session.id],
                    )
                    .await?
                    .get(0);
                let last_active = [newest, session.ended_at]
                    .into_iter()
                    .flatten()
                    .fold(session.started_at, f64::max);
                out.push(ListedSession {
                    session,
                    lineage_root_id: root,
                    last_active,
                    preview: baton_store::preview::first_user_line_of(&contents),
                });
            }
            Ok(out)
        })
    }

    /// [`baton_store::SessionStore::resolve_session`].
    pub(crate) fn resolve(&self, id_or_title: &str) -> Result<Option<String>> {
        let input = id_or_title.to_string();
        self.read(move |client| async move {
            let exact = client
                .query_opt("SELECT 1 FROM sessions WHERE id = $1", &[&input])
                .await?;
            if exact.is_some() {
                return Ok(Some(input));
            }
            if let Ok(Some(cleaned)) = clean_title(&input) {
                let rows = client
                    .query(
                        "SELECT id, title, started_at FROM sessions \
                         WHERE title = $1 OR lower(title) LIKE lower($2) ESCAPE '\\'",
                        &[&cleaned, &format!("{} #%", escape_like(&cleaned))],
                    )
                    .await?;
                let matches: Vec<TitleMatch> = rows
                    .iter()
                    .filter_map(|r| TitleMatch::of(&cleaned, r.get(0), r.get(1), r.get(2)))
                    .collect();
                if !matches.is_empty() {
                    let mut with_tips = Vec::with_capacity(matches.len());
                    for m in matches {
                        with_tips.push((lineage::compression_tip(&**client, &m.id).await?, m));
                    }
                    return Ok(Some(choose_tip(&input, with_tips)?));
                }
            }
            if input.chars().count() < MIN_ID_PREFIX {
                return Ok(None);
            }
            let ids: Vec<String> = client
                .query(
                    "SELECT id FROM sessions WHERE left(id, $2) = $1 \
                     ORDER BY started_at DESC, id LIMIT 6",
                    &[&input, &(input.chars().count() as i32)],
                )
                .await?
                .iter()
                .map(|r| r.get(0))
                .collect();
            Ok(choose_prefix(&input, ids)?)
        })
    }
}
