#!/usr/bin/env python3
"""Distribution of compaction tail sizes against the tail budget, over a corpus.

Runs `baton compress --force --report json` on every conversation of every *.jsonl file in a
directory, at several context windows, and prints per window: how many conversations were
compacted, min / p10 / median / max of tail tokens / tail budget and of tail messages, and how
many tails are below their floor (the message floor or the token floor; this must be 0).

Usage (from the repository root, after `cargo build --release -p baton-cli`):
    scripts/tail_distribution.py [DIR] [--baton PATH] [--windows 32000,64000,200000]
DIR defaults to ../shared/data/normalized. Uses the reports' `tail` object (see
crates/baton-core/src/compress/mod.rs, TailStats). Exit status 1 when any tail is below floor.
"""
import argparse
import json
import pathlib
import subprocess
import sys


def quantile(values, q):
    values = sorted(values)
    if not values:
        return float("nan")
    return values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))]


def run(baton, path, window):
    proc = subprocess.run(
        [baton, "compress", str(path), "--force", "--report", "json",
         "--context-length", str(window), "-o", "/dev/null"],
        capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{path} at {window}: exit {proc.returncode}: {proc.stderr.strip()}")
    return [json.loads(line) for line in proc.stderr.splitlines() if line.startswith("{")]


def main():
    root = pathlib.Path(__file__).resolve().parent.parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", default=str(root / "../shared/data/normalized"))
    parser.add_argument("--baton", default=str(root / "target/release/baton"))
    parser.add_argument("--windows", default="32000,64000,200000")
    args = parser.parse_args()
    files = sorted(pathlib.Path(args.dir).glob("*.jsonl"))
    if not files:
        raise SystemExit(f"no *.jsonl in {args.dir}")
    below_total = 0
    print("window  convs compacted | tail_tokens/budget min   p10   median max   | "
          "tail msgs min p10 median max | below floor")
    for window in (int(w) for w in args.windows.split(",")):
        reports = [r for f in files for r in run(args.baton, f, window)]
        tails = [r["tail"] for r in reports if r.get("tail")]
        ratios = [t["tokens"] / t["budget_tokens"] for t in tails if t["budget_tokens"]]
        counts = [t["messages"] for t in tails]
        below = [t for t in tails if t["below_floor"]]
        below_total += len(below)
        budget = tails[0]["budget_tokens"] if tails else 0
        print(f"{window:>6} {len(reports):>6} {len(tails):>9} | budget {budget:>6}: "
              f"{quantile(ratios, 0):.2f} {quantile(ratios, .1):.2f} {quantile(ratios, .5):.2f} "
              f"{quantile(ratios, 1):.2f} | {quantile(counts, 0):>4} {quantile(counts, .1):>4} "
              f"{quantile(counts, .5):>4} {quantile(counts, 1):>4} | {len(below)}")
        for t in below:
            print("   below floor:", t, file=sys.stderr)
    return 1 if below_total else 0


if __name__ == "__main__":
    sys.exit(main())
