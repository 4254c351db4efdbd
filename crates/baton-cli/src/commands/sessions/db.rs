//! The store a `sessions` command works on: a SQLite file (opened read-only to look, for
//! writing — migrated on `--migrate` — to change) or a PostgreSQL store already connected.
//! Commands written against [`Db`] run on both.

use super::{open_for_write, open_read_only};
use crate::commands::Failure;
use baton_pg::PgStore;
use baton_store::{SessionStore, SqliteStore};
use std::ops::Deref;
use std::path::Path;

#[derive(Clone, Copy)]
pub(crate) enum Db<'a> {
    File(&'a Path),
    Postgres(&'a PgStore),
}

/// An open store of a [`Db`].
pub(crate) enum Opened<'a> {
    Sqlite(Box<SqliteStore>),
    Postgres(&'a PgStore),
}

impl Deref for Opened<'_> {
    type Target = dyn SessionStore;

    fn deref(&self) -> &Self::Target {
        match self {
            Opened::Sqlite(s) => s.as_ref(),
            Opened::Postgres(s) => *s,
        }
    }
}

impl<'a> Db<'a> {
    /// For looking only: a SQLite file is opened read-only (no lock, no migration).
    pub fn read(&self) -> Result<Opened<'a>, Failure> {
        Ok(match self {
            Db::File(path) => Opened::Sqlite(Box::new(open_read_only(path)?)),
            Db::Postgres(store) => Opened::Postgres(store),
        })
    }

    /// For changing: a SQLite file is opened for writing, an older schema refused unless
    /// `migrate` (PostgreSQL migrates when connecting, under its advisory lock).
    pub fn write(&self, migrate: bool) -> Result<Opened<'a>, Failure> {
        Ok(match self {
            Db::File(path) => Opened::Sqlite(Box::new(open_for_write(path, migrate)?)),
            Db::Postgres(store) => Opened::Postgres(store),
        })
    }

    /// The SQLite file, when that is what this is.
    pub fn file(&self) -> Option<&'a Path> {
        match self {
            Db::File(path) => Some(path),
            Db::Postgres(_) => None,
        }
    }
}
