"""Reads CSV files with Python's csv module and checks their types (tests/outputs/csv_types.rs runs it).

Every row has the header's width; no cell holds JSON (a list or an object); each column is of one
kind: numbers (int or float), booleans (true/false), or text, with empty cells standing for
undefined values; the columns named on the command line after `--numeric` (like csv-long's
`value`) are numbers only. Prints one line per problem and exits 1 if there is any.
"""

import csv
import math
import sys


def kind(cell):
    if cell == "":
        return None
    if cell in ("true", "false"):
        return "boolean"
    try:
        x = float(cell)
    except ValueError:
        return "text"
    return "number" if not math.isnan(x) else "text"


def check(path, numeric, problems):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows:
        problems.append(f"{path}: empty")
        return 0
    header, body = rows[0], rows[1:]
    if len(set(header)) != len(header):
        problems.append(f"{path}: a column name repeats")
    kinds = [set() for _ in header]
    for n, row in enumerate(body, start=2):
        if len(row) != len(header):
            problems.append(f"{path}:{n}: {len(row)} cells for {len(header)} columns")
            continue
        for i, cell in enumerate(row):
            if cell.lstrip().startswith(("[", "{")):
                problems.append(f"{path}:{n}: `{header[i]}` holds JSON: {cell[:60]}")
            k = kind(cell)
            if k:
                kinds[i].add(k)
    for name, ks in zip(header, kinds):
        if len(ks) > 1:
            problems.append(f"{path}: column `{name}` mixes {sorted(ks)}")
        if name in numeric and ks - {"number"}:
            problems.append(f"{path}: column `{name}` is not numeric: {sorted(ks)}")
    return len(body)


def main(argv):
    files, numeric = [], set()
    it = iter(argv)
    for a in it:
        if a == "--numeric":
            numeric.add(next(it))
        else:
            files.append(a)
    problems = []
    for path in files:
        rows = check(path, numeric, problems)
        print(f"{path}: {rows} rows")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
