#!/usr/bin/env bash
# Builds the binary as shipped (`cargo build-static`: static glibc, fixed address; see
# docs/architecture.md, "The shipped binary is static") and checks it: no program interpreter
# (nothing is loaded at start), and the same bytes as the test build for the README's
# compaction, its report, an import and a search. Called by .ci/run after the tests.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
    echo "note: the static binary is built for x86_64 Linux only; check skipped"
    exit 0
fi

cargo build-static
shipped=target/x86_64-unknown-linux-gnu/release/baton
# The test build (`cargo test` made it already; built here when the script runs alone).
cargo build -q -p baton-cli
tested=target/debug/baton

if readelf -lW "$shipped" | grep -q 'INTERP'; then
    echo "error: $shipped asks for a program interpreter: it is not statically linked" >&2
    exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for build in shipped tested; do
    bin=${!build}
    "$bin" compress data/samples/claude-code-session.jsonl --context-length 64000 \
        -o "$work/$build.jsonl" 2>"$work/$build.report"
    "$bin" sessions --db "$work/$build.db" import data/samples/*.json data/samples/*.jsonl \
        >"$work/$build.import"
    "$bin" sessions --db "$work/$build.db" search "cargo test" >"$work/$build.search"
    "$bin" sessions --db "$work/$build.db" search "数据库" >>"$work/$build.search"
done
for part in jsonl report import search; do
    if ! cmp -s "$work/shipped.$part" "$work/tested.$part"; then
        echo "error: the static binary's $part differs from the test build's:" >&2
        diff "$work/shipped.$part" "$work/tested.$part" | head -20 >&2
        exit 1
    fi
done
if ! [ -s "$work/shipped.search" ]; then
    echo "error: the searches found nothing to compare" >&2
    exit 1
fi
echo "static binary: no interpreter; compaction, report, import and search identical to the test build"
