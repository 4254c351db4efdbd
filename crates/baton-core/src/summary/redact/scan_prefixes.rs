//! The first bytes of every literal the redaction rules need (`candidates.rs`): the patterns
//! of the scan's automaton. They are listed here, not derived from the rules when a process
//! starts, so that the build script can turn them into the automaton's tables
//! (`build.rs`, `dfa_table.rs`): building the automaton was 0.2 ms of every process that
//! redacted anything (issue #17). `scan_prefixes_are_those_of_the_rules` fails, printing the
//! list to paste here, when a rule's literals change.

/// In the order of the automaton's pattern numbers; lowercase (the scan ignores ASCII case).
pub(crate) const SCAN_PREFIXES: [&str; 88] = [
    "----", "eyj", "sk-", "sk_", "rk_", "whse", "aiza", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
    "gith", "glpa", "glrt", "glpt", "gldt", "glcb", "glft", "gloa", "glso", "glag", "gr13", "npm_",
    "xox", "hf_", "gsk_", "akia", "asia", "abia", "acca", "xapp", ":aa", "age-", "sg.", "key-",
    "-us", "pypi", "ruby", "dckr", "hvs.", "hvb.", ".atl", "hrku", "doo_", "dop_", "dor_", "shpa",
    "shpc", "shpp", "shps", "r8_", "pplx", "gocs", "nrak", "nrii", "nrjs", "sntr", "atat", "lin_",
    "secr", "ntn_", "sq0a", "sq0c", "acce", ":apa", "dapi", "pmak", "pul-", "dp.p", "q~", "mysq",
    "mari", "sshp", "curl", "acco", "shar", "hook", "/api", "://", "pass", "pin", "auth", "bear",
    "pwd", "toke", "cred", "key",
];
