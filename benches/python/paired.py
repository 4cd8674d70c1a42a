#!/usr/bin/env python3
"""Paired whole-process timing of loadsim against the plain-Python model (benches/python/article.py).

Every figure in evidence/perf.md that sets loadsim against plain Python comes from this script:
whole process against whole process (startup, YAML, simulation, output), A and B alternated in
each pair so that both see the same load, and the ratio taken per pair. It prints, per
comparison, the median and the min–max of each side's wall time and CPU time (user + sys of the
child) and of the per-pair ratios.

    python3 benches/python/paired.py [--pairs N] [--loadsim target/release/loadsim] [--only NAME]

Run it from the repository root. Standard library only.
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ARTICLE = os.path.join(HERE, "article.py")
POLICIES = ["naive", "deadline", "deadline_budget", "protected"]


def run(cmd):
    """Wall seconds and child CPU seconds (user + sys) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def spread(xs, unit=""):
    return f"{statistics.median(xs):.4g}{unit} ({min(xs):.4g}–{max(xs):.4g})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=9)
    ap.add_argument("--loadsim", default="target/release/loadsim")
    ap.add_argument("--seed", default="7")
    ap.add_argument("--only", action="append", metavar="NAME",
                    help="run only this comparison (protected, naive, four policies); repeatable")
    args = ap.parse_args()
    py = sys.executable
    comparisons = [
        (p, [args.loadsim, "run", f"scenarios/{p}.yaml", "--seed", args.seed], [py, ARTICLE, p])
        for p in ("protected", "naive")
    ]
    comparisons.append(
        (
            "four policies",
            [args.loadsim, "run", *[f"scenarios/{p}.yaml" for p in POLICIES], "--seed", args.seed],
            [py, ARTICLE, "all"],
        )
    )
    print(f"{args.pairs} pairs each, loadsim first then python in every pair; "
          f"python: {py} {sys.version.split()[0]}")
    print("| comparison | loadsim wall ms | python wall ms | wall ratio | "
          "loadsim CPU ms | python CPU ms | CPU ratio |")
    print("|---|---|---|---|---|---|---|")
    for name, a, b in comparisons:
        if args.only and name not in args.only:
            continue
        run(a)  # warm the page cache
        rows = []
        for _ in range(args.pairs):
            rows.append((run(a), run(b)))
        aw = [r[0][0] * 1e3 for r in rows]
        bw = [r[1][0] * 1e3 for r in rows]
        ac = [r[0][1] * 1e3 for r in rows]
        bc = [r[1][1] * 1e3 for r in rows]
        wr = [b_ / a_ for a_, b_ in zip(aw, bw)]
        cr = [b_ / a_ for a_, b_ in zip(ac, bc) if a_ > 0]
        print(f"| {name} | {spread(aw)} | {spread(bw)} | {spread(wr, '×')} | "
              f"{spread(ac)} | {spread(bc)} | {spread(cr, '×') if cr else 'n/a'} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
