#!/usr/bin/env bash
# Installs what the tests need beyond the Rust toolchain, on a bare Debian machine. Called by
# .ci/run; safe to run again (only what is missing is installed).
#  - sqlite3: the Debian stable SQLite shell (3.40), with which
#    baton-store/tests/sqlite_compat.rs checks that a database Baton migrated stays writable by
#    the reference design's code and that its CJK index catches up with rows another program
#    inserted.
#  - time: GNU time (/usr/bin/time -f %M), with which baton-cli/tests/memory_bound.rs measures
#    the peak memory of `tokens` and `compress` on a file of 200,000 tiny messages.
#  - script (bsdutils, essential on Debian): the pseudo-terminal of cli_chat's confirmation test.
#  - strace: baton-cli/tests/cli_output_durability.rs checks which writes are flushed (`fsync`)
#    before their rename.
set -euo pipefail

missing=()
command -v sqlite3 >/dev/null 2>&1 || missing+=(sqlite3)
[ -x /usr/bin/time ] || missing+=(time)
command -v script >/dev/null 2>&1 || missing+=(bsdutils)
command -v strace >/dev/null 2>&1 || missing+=(strace)

if ((${#missing[@]})); then
    echo "installing: ${missing[*]}"
    sudo_cmd=()
    if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then
        sudo_cmd=(sudo)
    fi
    if ! { "${sudo_cmd[@]}" apt-get update -qq &&
        DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"; }; then
        echo "warning: could not install ${missing[*]}; the tests that need it print a note and skip" >&2
    fi
fi
echo "sqlite3: $(sqlite3 --version 2>/dev/null || echo 'not available')"
