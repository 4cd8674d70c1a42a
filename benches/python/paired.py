#!/usr/bin/env python3
"""Paired whole-process timing of loadsim against the Python models of the article's chain.

Every figure in evidence/perf.md that sets loadsim against Python comes from this script. The
Python models are benches/python/article.py (plain Python: a heapq and closures, standard library
only) and, with `--simpy`, benches/python/simpy_article.py (the same model written with SimPy,
the library a user would pick; pinned to SIMPY_VERSION below). `--simpy` creates the virtual
environment target/simpy-venv from this interpreter (so both models run on the same Python) and
installs SimPy into it with pip on first use; nothing is written outside target/.

Timing (default): whole process against whole process (startup, YAML, simulation, output), the
processes of one round run back to back so that they see the same load, their order rotated from
round to round (loadsim first in round 1, article.py first in round 2, …; before issue 28 loadsim
always went first), and the ratios taken per round. It prints, per comparison, the median and the
min–max of each side's wall time and CPU time (user + sys of the child) and of the per-round ratios.

`--callgrind`: instead of timing, runs each process once under `valgrind --tool=callgrind`
(whole process, the total `Ir`) and prints the instructions and the instructions per user
request (loadsim's `metrics.requests`; the Python models print their `users`). Deterministic, so
it is the figure to quote on a shared machine; it takes minutes (the Python models run about
50× slower under valgrind).

    python3 benches/python/paired.py [--pairs N] [--loadsim target/release/loadsim] [--only NAME]
    python3 benches/python/paired.py --simpy --pairs 5 --only protected --only naive
    python3 benches/python/paired.py --simpy --callgrind --only protected --only naive

Run it from the repository root. Standard library only (SimPy goes into the venv).
"""

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ARTICLE = os.path.join(HERE, "article.py")
SIMPY_ARTICLE = os.path.join(HERE, "simpy_article.py")
POLICIES = ["naive", "deadline", "deadline_budget", "protected"]
SIMPY_VERSION = "4.1.2"
VENV = os.path.join(ROOT, "target", "simpy-venv")


def simpy_python():
    """The venv's interpreter, with SimPy SIMPY_VERSION installed (created on first use)."""
    py = os.path.join(VENV, "bin", "python")
    check = [py, "-c", "import simpy, sys; print(simpy.__version__, sys.version.split()[0])"]
    want = f"{SIMPY_VERSION} {sys.version.split()[0]}"
    try:
        have = subprocess.run(check, capture_output=True, text=True).stdout.strip()
    except OSError:
        have = ""
    if have != want:
        print(f"setting up {VENV} with simpy=={SIMPY_VERSION} (had: {have or 'nothing'})",
              file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", "--clear", VENV], check=True)
        subprocess.run([py, "-m", "pip", "install", "--quiet", f"simpy=={SIMPY_VERSION}"],
                       check=True)
        have = subprocess.run(check, capture_output=True, text=True, check=True).stdout.strip()
        if have != want:
            sys.exit(f"{VENV}: expected simpy and python {want}, found {have}")
    return py


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


def user_requests(name, cmd):
    """User requests the process simulates: loadsim's metrics.requests, the Python models' users."""
    if name == "loadsim":
        out = subprocess.run([*cmd, "--format", "json"], check=True, capture_output=True,
                             text=True).stdout
        return sum(int(doc["metrics"]["requests"]) for doc in json.loads(out))
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return sum(int(n) for n in re.findall(r"\busers (\d+)", out))


def instructions(cmd):
    """Total Ir of the whole process under callgrind."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *cmd],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        with open(out) as f:
            for line in f:
                if line.startswith(("summary:", "totals:")):
                    return int(line.split()[1])
    raise RuntimeError(f"no total in callgrind output of {cmd}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=9, help="rounds per comparison")
    ap.add_argument("--loadsim", default="target/release/loadsim")
    ap.add_argument("--seed", default="7")
    ap.add_argument("--only", action="append", metavar="NAME",
                    help="run only this comparison (protected, naive, four policies); repeatable")
    ap.add_argument("--simpy", action="store_true",
                    help=f"also the SimPy model (simpy=={SIMPY_VERSION} in target/simpy-venv)")
    ap.add_argument("--callgrind", action="store_true",
                    help="count instructions under callgrind instead of timing")
    args = ap.parse_args()
    py = sys.executable
    spy = simpy_python() if args.simpy else None
    comparisons = []
    for name, files, policy in [(p, [p], p) for p in ("protected", "naive")] + [
            ("four policies", POLICIES, "all")]:
        sides = [
            ("loadsim", [args.loadsim, "run", *[f"scenarios/{p}.yaml" for p in files],
                         "--seed", args.seed]),
            ("article.py", [py, ARTICLE, policy, args.seed]),
        ]
        if spy:
            sides.append(("SimPy", [spy, SIMPY_ARTICLE, policy, args.seed]))
        comparisons.append((name, sides))
    names = [s[0] for s in comparisons[0][1]]
    ratios = [(b, "loadsim") for b in names[1:]] + ([("SimPy", "article.py")] if spy else [])
    print(f"python: {py} {sys.version.split()[0]}" + (f"; SimPy {SIMPY_VERSION}" if spy else ""))

    if args.callgrind:
        print("| comparison | " + " | ".join(f"{n} instructions (M) | {n} / user request"
                                          for n in names)
              + " | " + " | ".join(f"{a} / {b}" for a, b in ratios) + " |")
        print("|---|" + "---|---|" * len(names) + "---|" * len(ratios))
        for name, sides in comparisons:
            if args.only and name not in args.only:
                continue
            per = {}
            cells = []
            for side, cmd in sides:
                ir = instructions(cmd)
                per[side] = ir / user_requests(side, cmd)
                cells.append(f"{ir / 1e6:,.1f} | {per[side]:,.0f}")
            print(f"| {name} | " + " | ".join(cells) + " | "
                  + " | ".join(f"{per[a] / per[b]:.2f}×" for a, b in ratios) + " |")
            sys.stdout.flush()
        return

    print(f"{args.pairs} rounds each, the order of the {len(names)} processes rotated by round")
    print("| comparison | " + " | ".join(f"{n} wall ms" for n in names) + " | "
          + " | ".join(f"{a} / {b} wall" for a, b in ratios) + " | "
          + " | ".join(f"{n} CPU ms" for n in names) + " | "
          + " | ".join(f"{a} / {b} CPU" for a, b in ratios) + " |")
    print("|---|" + "---|" * (2 * len(names) + 2 * len(ratios)))
    for name, sides in comparisons:
        if args.only and name not in args.only:
            continue
        run(sides[0][1])  # warm the page cache
        rounds = []
        for i in range(args.pairs):
            k = i % len(sides)
            timed = {}
            for side, cmd in sides[k:] + sides[:k]:
                timed[side] = run(cmd)
            rounds.append(timed)
        wall = {n: [r[n][0] * 1e3 for r in rounds] for n in names}
        cpu = {n: [r[n][1] * 1e3 for r in rounds] for n in names}

        def ratio(series, a, b):
            rs = [x / y for x, y in zip(series[a], series[b]) if y > 0]
            return spread(rs, "×") if rs else "n/a"

        print(f"| {name} | " + " | ".join(spread(wall[n]) for n in names) + " | "
              + " | ".join(ratio(wall, a, b) for a, b in ratios) + " | "
              + " | ".join(spread(cpu[n]) for n in names) + " | "
              + " | ".join(ratio(cpu, a, b) for a, b in ratios) + " |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
