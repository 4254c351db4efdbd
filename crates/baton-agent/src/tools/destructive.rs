//! Commands that destroy data or history. They run only after the host's [`Approver`] says
//! yes (or the configuration allows them): the model proposes, the user decides.
//!
//! Matching is done on a normalized command line (whitespace collapsed, quotes removed,
//! `sudo`/`env`/absolute program paths stripped), so `sudo /bin/rm  -r -f /x` is caught like
//! `rm -rf /x`. It is a guard against accidents, not a sandbox.
//!
//! [`Approver`]: crate::approval::Approver

use regex::Regex;
use std::sync::LazyLock;

/// Named patterns; the name is what the approver and the model are told.
const PATTERNS: &[(&str, &str)] = &[
    // `rm -rf` is decided by `is_forced_recursive_rm` (flags may be split or long).
    ("dd of=", r"^dd\b.*\bof="),
    ("mkfs", r"^mkfs(?:\.[a-z0-9]+)?\b"),
    (
        "git push --force",
        r"^git\s+(?:-\S+\s+)*push\b.*(?:\s--force\b|\s--force-with-lease\b|\s-f\b|\s\+\S)",
    ),
    ("git reset --hard", r"^git\s+(?:-\S+\s+)*reset\b.*--hard\b"),
    (
        "git clean -f",
        r"^git\s+(?:-\S+\s+)*clean\b.*(?:\s-[a-zA-Z]*f|\s--force\b)",
    ),
    (
        "git checkout -- .",
        r"^git\s+(?:-\S+\s+)*(?:checkout|restore)\s+(?:--\s+)?\.(?:\s|$)",
    ),
    ("git branch -D", r"^git\s+(?:-\S+\s+)*branch\b.*\s-D\b"),
    ("shred", r"^shred\b"),
    (
        "chmod/chown -R on /",
        r"^ch(?:mod|own)\s+(?:-\S+\s+)*-[a-zA-Z]*R[a-zA-Z]*\s+\S+\s+/(?:\s|$)",
    ),
    (
        "write to a block device",
        r">\s*/dev/(?:sd|nvme|hd|vd|xvd|mmcblk|disk)",
    ),
    ("fork bomb", r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:"),
    ("drop database", r"(?i)\bdrop\s+(?:database|schema|table)\b"),
    ("find -delete", r"^find\b.*\s-delete\b"),
];

static COMPILED: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    PATTERNS
        .iter()
        .filter_map(|(name, pattern)| Regex::new(pattern).ok().map(|r| (*name, r)))
        .collect()
});

/// Configured exceptions: patterns (by name, e.g. `git push --force`) that skip confirmation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DestructivePolicy {
    pub allowed: Vec<String>,
}

impl DestructivePolicy {
    /// The name of the first pattern `command` matches and the policy does not allow.
    pub fn needs_confirmation(&self, command: &str) -> Option<&'static str> {
        let segments = segments(command);
        if segments.iter().any(|s| is_forced_recursive_rm(s))
            && !self.allowed.iter().any(|a| a == "rm -rf")
        {
            return Some("rm -rf");
        }
        COMPILED
            .iter()
            .find(|(name, regex)| {
                segments.iter().any(|s| regex.is_match(s))
                    && !self.allowed.iter().any(|a| a == name)
            })
            .map(|(name, _)| *name)
    }
}

/// Every known pattern's name (for configuration errors and help).
pub fn pattern_names() -> Vec<&'static str> {
    std::iter::once("rm -rf")
        .chain(PATTERNS.iter().map(|(n, _)| *n))
        .collect()
}

/// `rm` with both recursive (`-r`, `-R`, `--recursive`) and force (`-f`, `--force`), in any
/// arrangement of its flags (`-rf`, `-r -f`, `-Rf`, `-fr`, `--recursive --force`).
fn is_forced_recursive_rm(segment: &str) -> bool {
    let mut words = segment.split(' ');
    if words.next() != Some("rm") {
        return false;
    }
    let (mut recursive, mut force) = (false, false);
    for word in words {
        if word == "--" {
            break;
        }
        if let Some(long) = word.strip_prefix("--") {
            recursive |= long == "recursive";
            force |= long == "force";
        } else if let Some(short) = word.strip_prefix('-') {
            recursive |= short.contains(['r', 'R']);
            force |= short.contains('f');
        }
    }
    recursive && force
}

/// The command's simple commands (split at `;`, `&&`, `||`, `|`, `&`, newlines), each with
/// quotes and backslashes removed, whitespace collapsed, and `sudo`/`env`/`nohup`… prefixes and
/// the program's directory dropped — so patterns anchored at `^` see the program first, and
/// `echo "rm -rf"` is an echo. The whole line is kept as a last segment for patterns that may
/// appear anywhere (a redirect to a device, SQL in a quoted argument).
fn segments(command: &str) -> Vec<String> {
    let unquoted: String = command
        .chars()
        .filter(|c| !matches!(c, '\'' | '"' | '\\'))
        .collect();
    let mut out: Vec<String> = unquoted
        .split(['\n', ';', '|', '&'])
        .map(|segment| {
            let mut words = segment.split_whitespace().peekable();
            while let Some(w) = words.peek() {
                if matches!(
                    *w,
                    "sudo" | "env" | "command" | "exec" | "nohup" | "time" | "xargs"
                ) {
                    words.next();
                } else {
                    break;
                }
            }
            let mut parts: Vec<&str> = words.collect();
            if let Some(program) = parts.first_mut() {
                *program = program.rsplit('/').next().unwrap_or(program);
            }
            parts.join(" ")
        })
        .filter(|s| !s.is_empty())
        .collect();
    out.push(unquoted.split_whitespace().collect::<Vec<_>>().join(" "));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(command: &str) -> Option<&'static str> {
        DestructivePolicy::default().needs_confirmation(command)
    }

    #[test]
    fn destructive_commands_are_caught_in_their_usual_spellings() {
        for (command, name) in [
            ("rm -rf /tmp/x", "rm -rf"),
            ("rm -fr build", "rm -rf"),
            ("sudo /bin/rm -r -f /", "rm -rf"),
            ("rm --recursive --force dir", "rm -rf"),
            ("rm -Rf 'my dir'", "rm -rf"),
            ("cd x && rm -rf .", "rm -rf"),
            ("dd if=/dev/zero of=/dev/sda bs=1M", "dd of="),
            ("mkfs.ext4 /dev/sdb1", "mkfs"),
            ("git push --force origin main", "git push --force"),
            ("git push -f", "git push --force"),
            ("git push origin +main", "git push --force"),
            ("git push --force-with-lease", "git push --force"),
            ("git reset --hard HEAD~3", "git reset --hard"),
            ("git clean -fdx", "git clean -f"),
            ("git checkout -- .", "git checkout -- ."),
            ("git branch -D feature", "git branch -D"),
            ("shred -u secrets.txt", "shred"),
            ("chmod -R 777 /", "chmod/chown -R on /"),
            ("echo x > /dev/sda", "write to a block device"),
            (":(){ :|:& };:", "fork bomb"),
            ("psql -c 'DROP DATABASE prod'", "drop database"),
            ("find . -name '*.o' -delete", "find -delete"),
        ] {
            assert_eq!(hit(command), Some(name), "{command}");
        }
    }

    #[test]
    fn ordinary_commands_are_not_flagged() {
        for command in [
            "rm build/output.o",
            "rm -r build",
            "grep -rf patterns.txt src",
            "git push origin main",
            "git reset HEAD~1",
            "git checkout -b feature",
            "cargo test --release",
            "ls -la /",
            "chmod +x script.sh",
            "echo 'rm -rf is dangerous' | wc -c",
            "find . -name '*.rs'",
        ] {
            assert_eq!(hit(command), None, "{command}");
        }
    }

    #[test]
    fn allowed_patterns_skip_confirmation() {
        let policy = DestructivePolicy {
            allowed: vec!["git push --force".into()],
        };
        assert_eq!(policy.needs_confirmation("git push -f"), None);
        assert_eq!(policy.needs_confirmation("rm -rf x"), Some("rm -rf"));
    }
}
