//! The first bytes of every literal the redaction rules need (`candidates.rs`): the patterns
//! of the scan's automaton. They are listed here, not derived from the rules when a process
//! starts, so that the build script can turn them into the automaton's tables
//! (`build.rs`, `dfa_table.rs`): building the automaton was 0.2 ms of every process that
//! redacted anything (issue #17). `scan_prefixes_are_those_of_the_rules` fails, printing the
//! list to paste here, when a rule's literals change.

/// In the order of the automaton's pattern numbers; lowercase (the scan ignores ASCII case).
pub(crate) const SCAN_PREFIXES: [&str; 80] = [
    "---", "eyj", "sk-", "sk_", "rk_", "whs", "aiz", "ghp", "gho", "ghu", "ghs", "ghr", "git",
    "glp", "glr", "gld", "glc", "glf", "glo", "gls", "gla", "gr1", "npm", "xox", "hf_", "gsk",
    "aki", "asi", "abi", "acc", "xap", ":aa", "age", "sg.", "key", "-us", "pyp", "rub", "dck",
    "hvs", "hvb", ".at", "hrk", "doo", "dop", "dor", "shp", "r8_", "ppl", "goc", "nra", "nri",
    "nrj", "snt", "ata", "lin", "sec", "ntn", "sq0", ":ap", "dap", "pma", "pul", "dp.", "q~",
    "mys", "mar", "ssh", "cur", "sha", "hoo", "/ap", "://", "pas", "pin", "aut", "bea", "pwd",
    "tok", "cre",
];
