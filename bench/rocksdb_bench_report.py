#!/usr/bin/env python3
# Ratios of sstfilter's blocked Bloom to RocksDB's Bloom from one or more
# rocksdb_bench JSON files (--benchmark_out=FILE --benchmark_out_format=json,
# with --benchmark_report_aggregates_only=true). Each ratio is taken within
# one run (one process, interleaved repetitions, medians), then the median
# and range over runs are printed as a Markdown table.
#
#   bench/rocksdb_bench_report.py run1.json run2.json ...
#   bench/rocksdb_bench_report.py --all-kinds run1.json ...   (every filter)
import json
import re
import statistics
import sys

OURS, THEIRS = "sstfilter.blocked_bloom:10", "rocksdb.bloom:10"
MEASURES = [("Build", "build, ns/key"),
            ("QueryPositive", "query, present key, ns"),
            ("QueryNegative", "query, absent key, ns"),
            ("QueryPositiveBatched", "batched query, present, ns"),
            ("QueryNegativeBatched", "batched query, absent, ns")]


def load(path):
    rows = {}
    for b in json.load(open(path))["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        kind, filt, n = re.match(r"(\w+)/([^/]+)/(\d+)", b["run_name"]).groups()
        rows[(kind, filt, int(n))] = b
    return rows


def ns(run, kind, filt, n):
    return run[(kind, filt, n)]["t_per_key"] * 1e9


def all_kinds(runs):
    """Every filter against THEIRS: ns per key, and the median over runs
    of the ratio taken within each run, with its range."""
    filters = sorted({k[1] for k in runs[0]}, key=lambda f: (f.startswith("rocksdb"), f))
    print("| keys | filter | " + " | ".join(label for _, label in MEASURES) + " |")
    print("|---|---|" + "---|" * len(MEASURES))
    for n in sorted({k[2] for k in runs[0]}):
        for f in filters:
            cells = []
            for kind, _ in MEASURES:
                if (kind, f, n) not in runs[0]:
                    cells.append("")
                    continue
                a = statistics.median(ns(r, kind, f, n) for r in runs)
                q = [ns(r, kind, f, n) / ns(r, kind, THEIRS, n) for r in runs]
                rng = f" ({min(q):.2f}-{max(q):.2f})" if len(q) > 1 else ""
                cells.append(f"{a:.1f} = {statistics.median(q):.2f}x{rng}")
            print(f"| {n:,} | `{f}` | " + " | ".join(cells) + " |")


def main():
    if sys.argv[1] == "--all-kinds":
        all_kinds([load(p) for p in sys.argv[2:]])
        return
    runs = [load(p) for p in sys.argv[1:]]
    print(f"| keys | measure | {OURS} | {THEIRS} | ratio | range over runs |")
    print("|---|---|---|---|---|---|")
    for n in sorted({k[2] for k in runs[0]}):
        for kind, label in MEASURES:
            a = [ns(r, kind, OURS, n) for r in runs]
            b = [ns(r, kind, THEIRS, n) for r in runs]
            q = [x / y for x, y in zip(a, b)]
            print(f"| {n:,} | {label} | {statistics.median(a):.1f} | "
                  f"{statistics.median(b):.1f} | {statistics.median(q):.2f}x | "
                  f"{min(q):.2f}-{max(q):.2f} |")
        fp = [runs[0][("QueryNegative", f, n)]["fp_pct"] for f in (OURS, THEIRS)]
        print(f"| {n:,} | FP % | {fp[0]:.3f} | {fp[1]:.3f} | {fp[0] / fp[1]:.3f}x | |")
        for f in (OURS, THEIRS):
            s = [ns(r, "QueryNegative", f, n) / ns(r, "QueryNegativeBatched", f, n) for r in runs]
            p = [ns(r, "QueryPositive", f, n) / ns(r, "QueryPositiveBatched", f, n) for r in runs]
            print(f"| {n:,} | single / batched time, {f} (absent; present) | | | "
                  f"{statistics.median(s):.2f}x; {statistics.median(p):.2f}x | "
                  f"{min(s):.2f}-{max(s):.2f}; {min(p):.2f}-{max(p):.2f} |")


if __name__ == "__main__":
    main()
