#!/usr/bin/env python3
"""Self cost per compiled function of a callgrind profile.

`callgrind_annotate` splits a function's own instructions by the source file they were inlined
from, so a function that inlines half the model shows up as dozens of small rows. This script
adds them back up per compiled function (the `fn=` blocks of the profile, calls excluded), which
is how evidence/perf.md states "what dominates".

    valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out \
        target/release/loadsim run scenarios/protected.yaml --seed 7 >/dev/null
    python3 benches/callgrind_self.py /tmp/cg.out [ROWS]
"""

import collections
import re
import sys

NAME = re.compile(r"\((\d+)\)(?: (.*))?")


def self_costs(path):
    """Instructions per compiled function, from a callgrind output file."""
    names = {}
    cost = collections.Counter()
    current = None
    after_calls = False

    def name(text):
        m = NAME.match(text)
        if not m:
            return text
        if m.group(2):
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), m.group(1))

    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("fn="):
                current = name(line[3:])
            elif line.startswith("cfn="):
                name(line[4:])
            elif line.startswith("calls="):
                after_calls = True  # the next cost line is the callee's inclusive cost
            elif line[:1].isdigit() or line[:1] in "+-*":
                if after_calls:
                    after_calls = False
                    continue
                parts = line.split()
                if len(parts) >= 2 and current:
                    cost[current] += int(parts[1])
    return cost


def main():
    cost = self_costs(sys.argv[1])
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    total = sum(cost.values())
    for fn, c in cost.most_common(rows):
        print(f"{c:>14,} {100 * c / total:5.1f}%  {fn}")
    print(f"{total:>14,} total")


if __name__ == "__main__":
    main()
