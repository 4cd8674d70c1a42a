#!/usr/bin/env python3
"""Do the SimPy model, the plain-Python model and loadsim simulate the same thing? Seeds side by side.

Runs loadsim (`run scenarios/<policy>.yaml --seeds … --format json`), benches/python/article.py and
benches/python/simpy_article.py on the same seeds and prints, per policy and headline metric, each
one's mean, standard deviation and min–max over the seeds, and for SimPy against loadsim (and
article.py against loadsim) the difference of the means in units of its standard error
(`z = (mean_a − mean_b) / √(sd_a²/n + sd_b²/n)`). The three draw from different random streams
(loadsim's ChaCha8 per purpose, Python's `random` in the other two), so they agree in distribution
only: |z| of about 2 or less on a metric is agreement within the seeds' spread. article.py and
simpy_article.py share their streams' seeds, so their runs are close but not equal (their events
interleave differently at the same instant, which shifts the draws).

    target/simpy-venv/bin/python benches/python/agree.py [--seeds 1..10] [--loadsim target/release/loadsim]

Needs SimPy (run it with the interpreter benches/python/paired.py --simpy sets up). Run from the
repository root.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import article  # noqa: E402
import simpy_article  # noqa: E402

POLICIES = ["naive", "deadline", "deadline_budget", "protected"]
# (label, loadsim's metric in `run --seeds --format json`, key in the Python models' results)
METRICS = [
    ("success before window", "metrics.success_rate_before", "success_before"),
    ("success in window", "metrics.success_rate_during", "success_during"),
    ("success after window", "metrics.success_rate_after", "success_after"),
    ("gateway attempts / user request", "services.gateway.attempts_per_request",
     "gateway_attempts_per_request"),
    ("svc_b arrivals in window / request in window",
     "services.svc_b.arrivals_during_fault_per_request",
     "svc_b_arrivals_in_window_per_request"),
    ("recovery time (s; never = 30)", "metrics.recovery_s", "recovery_s"),
    ("svc_b max queue", "services.svc_b.max_queue", "svc_b_max_queue"),
    ("svc_a max queue", "services.svc_a.max_queue", "svc_a_max_queue"),
]
NEVER = 30.0  # a run that never recovers, counted as the 30 s left after the window


def seeds_of(text):
    if ".." in text:
        lo, hi = text.split("..")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def value(v):
    return NEVER if v is None else float(v)


def summary(xs):
    m = statistics.fmean(xs)
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return m, sd


def cell(xs):
    if xs is None:
        return "—"
    m, sd = summary(xs)
    return f"{m:.4g} ± {sd:.2g} ({min(xs):.4g}–{max(xs):.4g})"


def z(a, b):
    if a is None or b is None:
        return "—"
    (ma, sa), (mb, sb) = summary(a), summary(b)
    se = math.sqrt(sa * sa / len(a) + sb * sb / len(b))
    if se == 0:
        return "0" if ma == mb else "∞"
    return f"{(ma - mb) / se:+.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1..10")
    ap.add_argument("--loadsim", default="target/release/loadsim")
    ap.add_argument("--policy", action="append", choices=POLICIES,
                    help="only this policy (repeatable; default all four)")
    args = ap.parse_args()
    seeds = seeds_of(args.seeds)
    if len(seeds) < 2:
        sys.exit("--seeds: give at least two seeds")
    policies = args.policy or POLICIES
    out = subprocess.run(
        [args.loadsim, "run", *[f"scenarios/{p}.yaml" for p in policies],
         "--seeds", ",".join(map(str, seeds)), "--format", "json"],
        check=True, capture_output=True, text=True).stdout
    loadsim = {}
    for p, doc in zip(policies, json.loads(out)):
        assert doc["seeds"] == seeds, (doc["seeds"], seeds)
        loadsim[p] = {name: doc["metrics"][name]["values"] for _, name, _ in METRICS}
    print(f"seeds {args.seeds} ({len(seeds)}); mean ± sd (min–max) over the seeds; "
          f"z = difference of means / its standard error")
    print("| policy | metric | loadsim | article.py | SimPy | z SimPy−loadsim | z article.py−loadsim |")
    print("|---|---|---|---|---|---|---|")
    for p in policies:
        plain = [article.run(p, s) for s in seeds]
        simpy = [simpy_article.run(p, s) for s in seeds]
        for label, name, key in METRICS:
            ls = [value(v) for v in loadsim[p][name]]
            pl = [value(r[key]) for r in plain] if key in plain[0] else None
            sp = [value(r[key]) for r in simpy]
            print(f"| {p} | {label} | {cell(ls)} | {cell(pl)} | {cell(sp)} | {z(sp, ls)} | "
                  f"{z(pl, ls)} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
