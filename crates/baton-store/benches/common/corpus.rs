//! The benchmark corpus and queries every store benchmark uses (`baton-store`'s `store`,
//! `baton-pg`'s `pg_store`), so both backends are measured on the same data and questions.

#![allow(dead_code, clippy::expect_used)]

use baton_core::Message;
use baton_core::formats::load_file;
use std::path::{Path, PathBuf};

pub const ENGLISH: &[&str] = &[
    "cargo test",
    "permission denied",
    "migration",
    "\"tool call\"",
    "refactor*",
    "README",
];
pub const CJK_LONG: &[&str] = &[
    "確認しました",
    "数据库",
    "設定ファイル",
    "股票价格",
    "电子邮件",
];
pub const CJK_SHORT: &[&str] = &["用户", "配置", "確認", "天气", "实现", "文件"];

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The conversations of the corpus, each a list of messages.
pub fn corpus() -> Vec<Vec<Message>> {
    let shared = repo_root().join("../shared/data/normalized");
    let (dir, label) = if shared.is_dir() {
        (shared, "../shared/data/normalized")
    } else {
        (repo_root().join("data/samples"), "data/samples")
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    let mut convs = Vec::new();
    for f in files {
        let Some(ext) = f.extension().and_then(|e| e.to_str()) else {
            continue;
        };
        if ext != "jsonl" && ext != "json" {
            continue;
        }
        if let Ok(doc) = load_file(&f, None) {
            convs.extend(
                doc.conversations
                    .into_iter()
                    .map(|c| c.messages)
                    .filter(|m| !m.is_empty()),
            );
        }
    }
    let total: usize = convs.iter().map(Vec::len).sum();
    eprintln!(
        "corpus: {label}: {} conversations, {total} messages",
        convs.len()
    );
    convs
}
